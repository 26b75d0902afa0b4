"""shardkit: stream compressed token shards into PyTorch.

    import shardkit
    ds = shardkit.Dataset("data/train")          # schema, len(), metadata, records
    with shardkit.Loader("data/train", batch_size=32, seed=0) as loader:
        for epoch in range(3):                    # each pass is the next epoch
            for batch in loader:                  # dict of torch.Tensor, HF field names
                loss = model(**batch).loss

Batches are built ahead by C++ threads (the GIL is released while Python waits for one), and
arrive as tensors that share the loader's buffers. ``state_dict()``/``load_state_dict()`` resume
mid-epoch exactly.

Iteration follows MosaicML Streaming: a new pass over a loader whose last pass finished starts
the next epoch (unless ``set_epoch()`` chose one); a pass that was interrupted (``break``)
continues where it stopped; ``len()`` is the number of batches the next pass yields; and a
pass never ends without a batch silently: an epoch with no batch for this rank raises.

A weighted mixture of datasets is the same Loader over a list of sources:

    loader = shardkit.Loader([shardkit.Source("data/web", weight=0.7),
                              shardkit.Source("data/code", weight=0.3)], batch_size=32)

    shardkit.write_dataset(rows, "data/train", task="lm", tokenizer="tokenizer.json")

converts rows held in Python (a generator of dicts, a pandas DataFrame, a datasets.Dataset) with
shardify's converter and threads, as ``shardify`` would convert the same rows written as JSONL.

Every option of Loader, IterableDataset, Dataset and write_dataset is declared once, in C++
(the option tables), from which the keywords, their checks, the docstrings below and the type
stub (``__init__.pyi``) are made.
"""
from __future__ import annotations

import collections.abc as _abc
import functools as _functools
import json as _json
import math as _math
import numbers as _numbers
import operator as _operator
import os as _os
import reprlib as _reprlib
import sys as _sys
import warnings as _warnings
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, NoReturn, Optional,
                    Sequence, Tuple, TypeVar, Union)

import numpy as _np
import torch as _torch
import torch.utils.data as _data

from . import _rows
from . import _shardkit
from ._shardkit import OptionError, ShardkitError

__version__: str = _shardkit.__version__

# The type aliases of the public signatures are public too (the stub declares them).
__all__ = ["Dataset", "Loader", "Source", "read_mixture", "IterableDataset", "ShardkitError",
           "OptionError", "write_dataset", "PathLike", "Batch", "State", "SourceLike"]

# The annotations are strings (PEP 563) evaluated in this module by typing.get_type_hints():
# the typing names above and these aliases are bound at run time for it.
PathLike = Union[str, "_os.PathLike[str]"]
_T = TypeVar("_T")
Batch = Dict[str, _torch.Tensor]
State = Dict[str, Any]
SourceLike = Union["Source", Mapping[str, Any], PathLike]
# A source's weight schedule as the C++ module takes it: (axis, linear, tokens_per_sample,
# [(at, weight), ...]).
_ScheduleTuple = Tuple[str, bool, int, List[Tuple[int, float]]]
_SourceTuple = Tuple[str, Optional[float], Optional[float], Optional[int],
                     Optional[_ScheduleTuple]]
# Imported for the annotations above, not part of the package: dir(shardkit) (what an editor
# completes) lists __all__ and the module's own private names.
_ANNOTATION_NAMES = frozenset(["Any", "Callable", "Dict", "Iterable", "Iterator", "List",
                               "Mapping", "NoReturn", "Optional", "Sequence", "Tuple", "TypeVar",
                               "Union"])


def __dir__() -> List[str]:
    return sorted(n for n in globals() if n not in _ANNOTATION_NAMES)


def _tensors(arrays: Mapping[str, Any]) -> Batch:
    # The C++ side has already given each array its tensor's type (loader/tensor_rule.h). Its
    # arrays come through the buffer protocol, which reads alike under NumPy 1 and 2; the tensors
    # share their memory (no copy) and keep it alive.
    return {k: _torch.from_numpy(_np.asarray(v)) for k, v in arrays.items()}


def _options_doc(title: str, specs: List[Dict[str, Any]]) -> str:
    """The options of a table as a docstring section, grouped as the table groups them."""
    lines = ["", title, ""]
    for spec in specs:
        default = spec["default"]
        shown = "" if default in ("none", "''", "[]") else f" (default {default})"
        choices = f" One of: {', '.join(spec['choices'])}." if spec["choices"] else ""
        lines.append(f"    {spec['name']}{shown}: {spec['help']}.{choices}")
    return "\n".join(lines) + "\n"


class Dataset(_data.Dataset):  # type: ignore[type-arg]
    """A shardkit dataset (a directory, or an http(s):// or s3:// URL): schema, record count,
    metadata and records by index. A map-style ``torch.utils.data.Dataset``: ``ds[i]`` is a dict
    of tensors (uint16 widened to int32, uint32 to int64). A remote Dataset works after fork()
    (DataLoader workers): each process opens its own connections."""

    def __init__(self, path: PathLike, **options: Any) -> None:
        self.path: str = _os.fspath(path)
        self._options = dict(options)
        self._ds = _shardkit.Dataset(self.path, **options)
        # Where a copy opens it again: a relative path as it resolves now, not in the cwd of
        # whichever process unpickles it.
        self._opened_at = self.path if "://" in self.path else _os.path.abspath(self.path)

    # Pickled as its location, options and identity (DataLoader workers started by spawn or
    # forkserver): the copy opens the dataset again, and refuses another dataset found there
    # (one replaced since), whose records the parent's indices and len() do not describe.
    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_identity"] = state.pop("_ds").identity
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        identity = state.pop("_identity", None)
        self.__dict__.update(state)
        self.__dict__.setdefault("_opened_at", self.path)
        self._ds = _shardkit.Dataset(self._opened_at, **self._options)
        if identity is not None and self._ds.identity != identity:
            raise ShardkitError(f"{self.path}: the dataset there is not the one this Dataset "
                                f"was pickled from (manifest {self._ds.identity}, pickled "
                                f"{identity}): it was replaced since")

    def __len__(self) -> int:
        return int(len(self._ds))

    @property
    def schema(self) -> List[Dict[str, Any]]:
        """List of {"name", "dtype", "shape"} in record order."""
        return list(self._ds.schema)

    @property
    def shards(self) -> int:
        return int(self._ds.shards)

    @property
    def bytes_on_disk(self) -> int:
        return int(self._ds.bytes_on_disk)

    @property
    def info(self) -> Dict[str, Any]:
        """What the records mean (format/SPEC.md, "Dataset info"): task, field roles, tokenizer
        with its special ids, label names, source and conversion statistics."""
        info: Dict[str, Any] = _json.loads(self._ds.info_json)
        return info

    @property
    def metadata(self) -> Dict[str, Any]:
        """The writing program's own metadata keys, parsed from JSON."""
        return {k: _json.loads(v) for k, v in self._ds.metadata_json.items()}

    def __getitem__(self, index: int) -> Batch:
        index = _operator.index(index)  # TypeError for a float, as a list gives
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return _tensors(self._ds.record(index))


class Source:
    """One dataset of a mixture and how much of it an epoch takes (at most one of):
    ``weight``: its share of the epoch's samples (relative; give it for every source or none);
    ``repeat``: how many times its samples are used per epoch (fractional allowed);
    ``choose``: its samples per epoch. None of them: repeat=1.

    With weights an epoch has ``max_samples`` samples, or the sources' total records when
    unset; otherwise the sum of the sources' samples (cut to ``max_samples``). At every prefix
    of the stream each source's count is within one sample of its share with up to three
    sources, and within 1.3 with more (a one-point schedule keeps one). A source's samples
    follow its own shuffled order, wrapping into a fresh permutation when used more than once.
    """

    __slots__ = ("path", "weight", "repeat", "choose")

    def __init__(self, path: PathLike, weight: Optional[float] = None,
                 repeat: Optional[float] = None, choose: Optional[int] = None) -> None:
        self.path: str = _os.fspath(path)
        self.weight = None if weight is None else _checked_number(weight, "Source: weight")
        self.repeat = None if repeat is None else _checked_number(repeat, "Source: repeat")
        self.choose = (None if choose is None
                       else int(_checked_number(choose, "Source: choose", whole=True)))

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={getattr(self, k)!r}" for k in ("weight", "repeat", "choose")
                          if getattr(self, k) is not None)
        return f"Source({self.path!r}{', ' + given if given else ''})"


def _checked_number(value: Any, what: str, whole: bool = False) -> float:
    """A source's or a schedule's number, checked here so that a bad one is named (the binding
    would only list the argument types it takes)."""
    if isinstance(value, bool) or not isinstance(value, _numbers.Real):
        raise TypeError(f"{what} must be a number, not {type(value).__name__}")
    if not _math.isfinite(value) or value < 0:
        raise OptionError(f"{what} must be a finite number, 0 or more, not {value!r}")
    if whole and (int(value) != value or value >= 2**64):
        raise OptionError(f"{what} must be a whole number below 2^64, not {value!r}")
    return value


def _source_tuple(item: SourceLike, schedule: Optional[_ScheduleTuple] = None) -> _SourceTuple:
    if isinstance(item, Source):
        src = item
    elif isinstance(item, _abc.Mapping):
        src = Source(**item)
    else:
        src = Source(item)
    return (src.path,
            None if src.weight is None else float(src.weight),
            None if src.repeat is None else float(src.repeat),
            None if src.choose is None else int(src.choose),
            schedule)


def _schedules(schedule: Sequence[Mapping[str, Any]], sources: int, interpolation: str = "step",
               tokens_per_sample: Optional[int] = None) -> List[_ScheduleTuple]:
    """A mixture's ``schedule`` (points {"at_samples" or "at_tokens": x, "weights": [...]}, as in
    a mixture spec) as each source's (axis, linear, tokens_per_sample, [(at, weight), ...])."""
    if interpolation not in ("step", "linear"):
        raise ShardkitError(f'interpolation is {interpolation!r}: it must be "step" or "linear"')
    axes: set[str] = set()
    per_source: List[List[Tuple[int, float]]] = [[] for _ in range(sources)]
    for n, point in enumerate(schedule):
        keys = [k for k in ("at_samples", "at_tokens") if k in point]
        unknown = set(point) - {"at_samples", "at_tokens", "weights"}
        if len(keys) != 1 or unknown or len(point.get("weights", ())) != sources:
            raise ShardkitError(f"schedule point {n} needs one of at_samples/at_tokens and "
                                f"{sources} weights (one per source), not {point!r}")
        at = int(_checked_number(point[keys[0]], f"schedule point {n}: {keys[0]}", whole=True))
        axes.add(keys[0])
        for i, weight in enumerate(point["weights"]):
            per_source[i].append(
                (at, float(_checked_number(weight, f"schedule point {n}: weight {i}"))))
    if len(axes) != 1:
        raise ShardkitError("a schedule needs points, all at_samples or all at_tokens")
    axis = "tokens" if axes.pop() == "at_tokens" else "samples"
    if tokens_per_sample is not None:
        _checked_number(tokens_per_sample, "tokens_per_sample", whole=True)
    return [(axis, interpolation == "linear", int(tokens_per_sample or 0), points)
            for points in per_source]


def _schedule_options(sources: List[_SourceTuple]) -> Dict[str, Any]:
    """Sources read from a spec, each with its schedule, as the Loader options that give it."""
    first = sources[0][4] if sources else None
    if first is None:
        return {}
    axis, linear, tokens_per_sample, points = first
    key = "at_tokens" if axis == "tokens" else "at_samples"
    options: Dict[str, Any] = {
        "schedule": [{key: at, "weights": [s[4][3][n][1] for s in sources if s[4] is not None]}
                     for n, (at, _) in enumerate(points)],
        "interpolation": "linear" if linear else "step"}
    if tokens_per_sample:
        options["tokens_per_sample"] = tokens_per_sample
    return options


def read_mixture(spec: PathLike) -> Tuple[List[Source], Dict[str, Any]]:
    """A mixture spec file (JSON, as ``shard-inspect order --mixture`` reads it) as
    ``(sources, options)``: ``Loader(sources, **options)`` yields what that command prints."""
    sources, seed, max_samples = _shardkit.read_mixture_spec(_os.fspath(spec))
    options = _schedule_options(sources)
    if seed is not None:
        options["seed"] = seed
    if max_samples is not None:
        options["max_samples"] = max_samples
    return [Source(*s[:4]) for s in sources], options


def _checked_epoch(epoch: int, caller: str = "Loader") -> int:
    """The epoch as an int: any integer (NumPy's too, as every integer option takes), but not a
    bool. The binding's epoch is a uint64: one out of its range would be refused by pybind11's
    list of overloads rather than by name."""
    if isinstance(epoch, (bool, _np.bool_)) or not hasattr(type(epoch), "__index__"):
        raise TypeError(f"{caller}: epoch must be an int, not {type(epoch).__name__}")
    epoch = _operator.index(epoch)
    if not 0 <= epoch < 2**64:
        raise OptionError(f"{caller}: epoch must be from 0 to {2**64 - 1}, not {epoch}")
    return epoch


# Loader's parameters after the path, in the order they once were positional.
_ONCE_POSITIONAL = ("epoch", "schedule", "interpolation", "tokens_per_sample")


def _positional_warning(values: Tuple[Any, ...]) -> str:
    """What Loader(path, ...) took its positional values as. The first is what a torch user
    most likely meant as DataLoader's batch_size."""
    shown = ", ".join(_reprlib.repr(v) for v in values)
    if len(values) == 1:
        v = _reprlib.repr(values[0])
        how = (f"the second positional argument is the epoch ({v}), not the batch size; pass "
               f"epoch={v} or batch_size={v} by keyword")
    else:
        taken = ", ".join(f"{name}={_reprlib.repr(v)}" for name, v in zip(_ONCE_POSITIONAL, values))
        how = f"the positional arguments after the path are taken as {taken}; pass them by keyword"
    return (f"Loader(path, {shown}): {how}: positional arguments after the path will be "
            "refused in a later version")


def _positional_as_keywords(values: Tuple[Any, ...], keywords: Mapping[str, Any]) -> Dict[str, Any]:
    """Loader's positional values after the path as the keywords they stand for, refused as
    Python refuses them (too many, or one also given by keyword)."""
    if len(values) > len(_ONCE_POSITIONAL):
        raise TypeError(f"Loader.__init__() takes from 2 to {len(_ONCE_POSITIONAL) + 2} "
                        f"positional arguments but {len(values) + 2} were given")
    named = dict(zip(_ONCE_POSITIONAL, values))
    for name in named:
        if name in keywords:
            raise TypeError(f"Loader.__init__() got multiple values for argument '{name}'")
    return named


def _accepting_positional_epoch(init: Callable[..., None]) -> Callable[..., None]:
    """Loader.__init__, whose epoch, schedule, interpolation and tokens_per_sample are
    keyword-only (as help(), inspect and the stub show it, so that a type checker flags
    ``Loader(path, 64)``), still taking them by position as it once did, with a FutureWarning:
    ``Loader(path, 64)`` reads epoch 64, which a torch user means as the batch size."""
    @_functools.wraps(init)
    def init_taking_positions(self: Any, path: Any, *values: Any, **keywords: Any) -> None:
        if values:
            keywords.update(_positional_as_keywords(values, keywords))
            _warnings.warn(_positional_warning(values), FutureWarning, stacklevel=2)
        init(self, path, **keywords)
    return init_taking_positions


def _no_batch_error(loader: Any) -> ShardkitError:
    return ShardkitError(
        f"an epoch of this loader has no batch for this rank ({loader.epoch_samples} samples in "
        "an epoch): the dataset is smaller than one global batch (batch_size x world_size) with "
        "drop_last, or max_samples/max_tokens leave nothing")


class Loader:
    """Batches of a dataset, or of a weighted mixture of datasets, as dicts of torch.Tensor.

    ``path`` is a dataset directory or a URL: ``http(s)://host/path`` or ``s3://bucket/prefix``
    (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN or
    ~/.aws/credentials, endpoint from AWS_ENDPOINT_URL); or a list of sources (``Source``, a
    dict with the same keys, or a path), mixed as ``Source`` describes. The first source's
    fields define the batch; every other must hold the fields read, for the same task and
    tokenizer, else ShardkitError names both datasets and the difference.

    ``epoch`` is the epoch the first pass reads, a keyword (``Loader(path, 64)`` still reads
    epoch 64, as it did when epoch was positional, but warns: ``DataLoader(ds, 64)`` means a
    batch size). Each pass after a finished one reads the next
    epoch; ``set_epoch(e)`` chooses the epoch of the next pass instead (as a DistributedSampler
    does). A pass interrupted by ``break`` continues where it stopped. ``len()`` is the number
    of batches the next pass yields. Passes running at once (threads sharing the loader) share
    out one stream: each batch goes to one of them, and a pass that finds its epoch's batches
    taken by the others ends. ``close()`` (or leaving a ``with`` block) stops the loader's
    threads; a closed loader raises ValueError when used.

    A mixture's weights may follow a schedule instead (no weight/repeat/choose on the
    sources): ``schedule=[{"at_tokens": 0, "weights": [0.9, 0.1]}, {"at_tokens": 2e9,
    "weights": [0.5, 0.5]}]`` (or ``at_samples``), interpolation="step" (each point's weights
    hold until the next) or "linear", tokens_per_sample=None (what a sample counts as on a
    token axis; default: the row length). At every prefix each source's count is within one
    sample of the schedule's integral, and state_dict() resumes it exactly at any world size and
    batch size.

    A bad option value raises shardkit.OptionError (a ValueError) naming the option; an unknown
    keyword or a value of the wrong type, TypeError.
    """

    @_accepting_positional_epoch
    def __init__(self, path: Union[PathLike, Sequence[SourceLike]], *, epoch: int = 0,
                 schedule: Optional[Sequence[Mapping[str, Any]]] = None,
                 interpolation: str = "step", tokens_per_sample: Optional[int] = None,
                 **options: Any) -> None:
        if schedule is None and (interpolation != "step" or tokens_per_sample is not None):
            raise ShardkitError("interpolation= and tokens_per_sample= shape a schedule: give "
                                "schedule= too")
        if isinstance(path, (list, tuple)):
            per_source: List[Optional[_ScheduleTuple]] = (
                list(_schedules(schedule, len(path), interpolation, tokens_per_sample))
                if schedule is not None else [None] * len(path))
            sources = [_source_tuple(s, w) for s, w in zip(path, per_source)]
            self.path: str = sources[0][0] if sources else ""
            self._loader: Any = _shardkit.Loader(sources, **options)
        else:
            if schedule is not None:
                raise ShardkitError("schedule= weighs the sources of a mixture: give a list of "
                                    "sources")
            self.path = _os.fspath(path)  # type: ignore[arg-type]
            self._loader = _shardkit.Loader(self.path, **options)
        self._loader.set_epoch(_checked_epoch(epoch))
        # The epoch set_epoch() chose while a pass was running: the next pass starts it.
        self._next_epoch: Optional[int] = None
        self._running_passes = 0
        # Batches any pass (of any thread) has taken: a pass that finds none left after another
        # took them knows the epoch was shared out, not empty.
        self._batches_taken = 0
        # The epoch of a state just loaded, until a batch is taken: set_epoch() of that epoch
        # keeps the state's position.
        self._restored_epoch: Optional[int] = None

    def _open(self) -> Any:
        if self._loader is None:
            raise ValueError("this shardkit.Loader is closed")
        return self._loader

    def close(self) -> None:
        """Stops the loader's threads and frees its buffers (batches already taken stay valid)."""
        self._loader = None

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # pickle, copy.copy() and copy.deepcopy() all ask for this; the default would be pybind11's
    # "cannot pickle 'shardkit._shardkit.Loader' object", which does not say what to do instead.
    def __getstate__(self) -> NoReturn:
        raise TypeError(
            "a shardkit.Loader cannot be pickled or copied: it holds running threads and their "
            "buffers. Save its position with state_dict() (a dict of plain values) and continue "
            "it with a new Loader(...) and load_state_dict(state); or use "
            "shardkit.IterableDataset, which pickles as its path, options and position")

    def set_epoch(self, epoch: int) -> None:
        """The next pass reads ``epoch`` from its start; but right after load_state_dict() of a
        state in that epoch, from the state's position (as MosaicML Streaming does), so that a
        trainer that calls set_epoch() as each epoch starts resumes mid-epoch."""
        epoch = _checked_epoch(epoch)
        if epoch == self._restored_epoch:
            return
        loader = self._open()
        self._restored_epoch = None
        if self._running_passes:
            self._next_epoch = epoch  # the running pass reads its own epoch to its end
            return
        self._next_epoch = None
        loader.set_epoch(epoch)

    @property
    def epoch(self) -> int:
        return int(self._open().epoch)

    @property
    def threads(self) -> int:
        return int(self._open().threads)

    @property
    def epoch_samples(self) -> int:
        """Samples (all ranks) in an epoch."""
        return int(self._open().epoch_samples)

    def __len__(self) -> int:
        """Batches the next pass yields (with max_tokens, an upper bound)."""
        loader = self._open()
        if self._next_epoch is not None or loader.pass_ended or loader.batches_left() == 0:
            return int(loader.epoch_batches())
        return int(loader.batches_left())

    def _start_pass(self) -> bool:
        """Positions the loader where the pass starts; whether that is an epoch's start."""
        loader = self._open()
        if loader.epoch_batches() == 0:
            raise _no_batch_error(loader)
        if self._next_epoch is not None:
            # Interrupted before the next line, the next pass sets the same start again.
            loader.set_epoch(self._next_epoch)
            self._next_epoch = None
        else:
            # After a finished pass, or at a state restored at its epoch's end: the next epoch.
            loader.start_pass()
        return bool(loader.state()[2] == 0)

    def __iter__(self) -> Iterator[Batch]:
        return self._pass(self._start_pass(), self._batches_taken)

    def _take(self, convert: Callable[[Any], _T]) -> Optional[_T]:
        """The next batch as ``convert`` makes it, or None at the epoch's end. An exception
        before the batch leaves this method (a KeyboardInterrupt as next() returns) hands it
        back to the loader: the next call yields it, and state_dict() is as before it."""
        loader = self._open()
        self._restored_epoch = None
        try:
            item = loader.next()
            if item is None:
                return None
            batch = convert(item)
            self._batches_taken += 1
            return batch
        except BaseException:
            loader.hand_back()
            raise

    def _pass(self, from_epoch_start: bool, taken_before: int) -> Iterator[Batch]:
        """A pass never ends without a batch silently: one whose epoch has none raises, and one
        that continues a position where nothing is left (max_tokens' or drop_last's end) goes on
        into the next epoch. But a pass that finds its epoch's batches taken by other passes
        running beside it (other threads sharing the loader) ends: they had them."""
        self._running_passes += 1
        try:
            yielded = False
            while True:
                try:
                    batch = self._take(lambda item: _tensors(item[0]))
                except BaseException:
                    self._open().hand_back()  # raised as _take returned: not yielded
                    raise
                if batch is None:
                    if yielded or self._batches_taken != taken_before:
                        return
                    if from_epoch_start:
                        raise _no_batch_error(self._open())
                    from_epoch_start = self._start_pass()
                    continue
                yielded = True
                yield batch
        finally:
            self._running_passes -= 1

    def next_with_records(self) -> Optional[Tuple[Batch, List[int]]]:
        """The next batch and the global record indices of its rows, or None at epoch end."""
        return self._take(lambda item: (_tensors(item[0]), list(item[1])))

    def next_with_sources(self) -> Optional[Tuple[Batch, List[Tuple[int, int]]]]:
        """The next batch with each row's (source, record), or None at epoch end."""
        return self._take(lambda item: (_tensors(item[0]), list(zip(item[3], item[1]))))

    def state_dict(self) -> State:
        """Where the run is: seed, epoch, samples_consumed (all ranks), tokens_consumed (the
        tokens counted for ``max_tokens``, all ranks; it stays 0 without ``max_tokens``), the
        fingerprint of the data and order it is a position in, blocks_skipped and which they
        are (skipped_blocks: [source, block] pairs). It resumes at any world size and batch
        size; a state at the end of an epoch resumes with the next one."""
        seed, epoch, consumed, tokens, fingerprint, skipped, blocks = self._open().state()
        return {"seed": seed, "epoch": epoch, "samples_consumed": consumed,
                "tokens_consumed": tokens, "fingerprint": fingerprint, "blocks_skipped": skipped,
                "skipped_blocks": [list(b) for b in blocks]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continues from ``state``: the next pass yields the rest of its epoch. A state of other
        data, another order (shuffle, window_blocks, the mixture's weights) or another seed
        raises ShardkitError naming both; a state saved before fingerprints were recorded is
        taken as before (its seed adopted)."""
        # Values are checked in C++: a negative or out-of-range one raises ShardkitError naming
        # the field and its valid range. tokens_consumed is absent from states saved before
        # budgets existed, skipped_blocks from those saved before it was recorded.
        _check_state_keys(state)
        self._open().restore(state["seed"], state["epoch"], state["samples_consumed"],
                             state.get("tokens_consumed", 0), state.get("fingerprint"),
                             state.get("blocks_skipped", 0), state.get("skipped_blocks"))
        self._next_epoch = None
        self._restored_epoch = int(state["epoch"])

    def planned_records(self, batch: int) -> List[int]:
        return list(self._open().planned_records(batch))

    def io_stats(self) -> Dict[str, int]:
        """What reading has cost so far, summed over the sources (all 0 for local ones):
        requests, bytes_fetched and retries (http(s):// and s3://), cache_hits,
        cache_write_failures (writes a full disk skipped) and cache_evictions (``cache_dir``)."""
        return {k: int(v) for k, v in self._open().io_stats().items()}


# The keys every state_dict() has held; the others were added later and default when absent.
_STATE_REQUIRED = ("seed", "epoch", "samples_consumed")


def _check_state_keys(state: Mapping[str, Any]) -> None:
    """A state that is not one (a dict of something else, a state missing keys) is refused with
    what a state holds, rather than a bare KeyError or TypeError from inside."""
    held = ("a state is what Loader.state_dict() returned: {seed, epoch, samples_consumed, "
            "tokens_consumed, fingerprint, blocks_skipped, skipped_blocks}")
    if not isinstance(state, _abc.Mapping):
        raise ShardkitError(f"load_state_dict takes a dict, not {type(state).__name__}: {held}")
    missing = [k for k in _STATE_REQUIRED if k not in state]
    if missing:
        raise ShardkitError(f"the state has no {', '.join(repr(k) for k in missing)}: {held}")


def _auto_collating_dataloader() -> bool:
    """Whether iter() was called by a torch DataLoader that collates samples into batches
    (batch_size other than None): its fetcher calls iter(dataset) from its constructor."""
    frame = _sys._getframe(2)
    while frame is not None:
        fetcher = frame.f_locals.get("self")
        if type(fetcher).__name__ == "_IterableDatasetFetcher":
            return bool(getattr(fetcher, "auto_collation", False))
        frame = frame.f_back  # type: ignore[assignment]
    return False


# Loader's keywords that Python reads itself (a mixture's schedule) rather than the option table.
_PYTHON_LOADER_KEYWORDS = ("schedule", "interpolation", "tokens_per_sample")


class IterableDataset(_data.IterableDataset):  # type: ignore[type-arg]
    """For code written around torch.utils.data.DataLoader: yields whole batches, so use
    ``DataLoader(shardkit.IterableDataset(path, batch_size=32), batch_size=None)`` and leave
    num_workers at 0 (shardkit prefetches on its own threads). Passes follow Loader's rules (a
    pass after a finished one is the next epoch, an interrupted one continues), and
    ``state_dict()``/``load_state_dict()`` are the protocol torchdata's StatefulDataLoader
    calls."""

    def __init__(self, path: Union[PathLike, Sequence[SourceLike]], **options: Any) -> None:
        super().__init__()
        self.path: Union[str, Sequence[SourceLike]] = (
            path if isinstance(path, (list, tuple)) else _os.fspath(path))  # type: ignore[arg-type]
        self._epoch: int = _checked_epoch(options.pop("epoch", 0), "IterableDataset")
        self.options: Dict[str, Any] = options
        # An unknown keyword or a bad value raises here, not at the first pass.
        _shardkit.resolved_loader_options("IterableDataset", **{
            k: v for k, v in options.items() if k not in _PYTHON_LOADER_KEYWORDS})
        self._loader: Optional[Loader] = None
        self._pending_state: Optional[Mapping[str, Any]] = None
        # Whether set_epoch() of the pending state's epoch keeps its position: yes for a state
        # loaded (as Loader after load_state_dict()), no for one kept by close() mid-run.
        self._pending_restored = False

    def _get_loader(self) -> Loader:
        if self._loader is None:
            self._loader = Loader(self.path, epoch=self._epoch, **self.options)
            if self._pending_state is not None:
                self._loader.load_state_dict(self._pending_state)
                if not self._pending_restored:  # a position, not a state the user loaded
                    self._loader._restored_epoch = None
                self._pending_state = None
        return self._loader

    # Pickled (DataLoader workers started by spawn or forkserver) without its loader, whose
    # threads cannot be: the copy makes its own at the loader's position when iterated, and a
    # DataLoader worker's copy raises the error that says to use num_workers=0.
    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        loader = state.pop("_loader")
        state["_loader"] = None
        if loader is not None:
            state.update(self._position_of(loader))
        return state

    @staticmethod
    def _position_of(loader: Loader) -> Dict[str, Any]:
        """What a new loader needs to go on where ``loader`` is: a set_epoch() made during a
        pass starts its epoch, else the state, kept as restored only if nothing was taken
        since it was loaded."""
        if loader._next_epoch is not None:
            return {"_epoch": loader._next_epoch, "_pending_state": None,
                    "_pending_restored": False}
        return {"_pending_state": loader.state_dict(),
                "_pending_restored": loader._restored_epoch is not None}

    def set_epoch(self, epoch: int) -> None:
        """As Loader.set_epoch(): the epoch of a state just loaded keeps its position."""
        epoch = _checked_epoch(epoch, "IterableDataset")
        if self._loader is not None:
            self._loader.set_epoch(epoch)
            return
        self._epoch = epoch
        pending = self._pending_state
        if pending is not None and (not self._pending_restored or pending["epoch"] != epoch):
            self._pending_state = None

    def __len__(self) -> int:
        return len(self._get_loader())

    def __iter__(self) -> Iterator[Batch]:
        info = _data.get_worker_info()
        if info is not None:
            raise RuntimeError("shardkit.IterableDataset prefetches on its own threads; use "
                               "DataLoader(..., num_workers=0)")
        if _auto_collating_dataloader():
            raise RuntimeError("shardkit.IterableDataset yields whole batches: use "
                               "DataLoader(dataset, batch_size=None), and give the batch size to "
                               "shardkit.IterableDataset(..., batch_size=N)")
        return iter(self._get_loader())

    def state_dict(self) -> State:
        # Made by the loader, before a pass too: a state without the data's fingerprint would not
        # resume a nodes plan, nor be refused over other data.
        return self._get_loader().state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        _check_state_keys(state)  # now, not at the pass that applies it
        if self._loader is None:
            self._pending_state, self._pending_restored = dict(state), True
        else:
            self._loader.load_state_dict(state)

    def close(self) -> None:
        """Stops the loader's threads and frees its buffers. The position is kept: state_dict()
        still returns it, and the next pass opens a new loader there."""
        loader, self._loader = self._loader, None
        if loader is not None:
            self.__dict__.update(self._position_of(loader))
            loader.close()


_LABELLED_TASKS = ("cls", "pair")


def write_dataset(rows: Iterable[Any], out: PathLike, task: str = "lm",
                  tokenizer: Optional[PathLike] = None, progress: Union[bool, str] = True,
                  progress_interval: float = 30, **options: Any) -> Dict[str, Any]:
    """Converts rows into a dataset at ``out`` with shardify's converter and its threads.

    ``rows`` is any iterable of dicts: a generator, a list, ``DataFrame.to_dict("records")`` or
    ``DataFrame.itertuples()``, a pandas ``DataFrame`` itself, a ``datasets.Dataset``; not a dict
    of columns (TypeError: make it a DataFrame or a list of dicts). Each row is
    read as ``shardify`` reads a line of a JSONL file (fields by ``text_field``, ``pair_field``,
    ``label_field``, dotted paths into nested dicts; for ``task="qa"`` ``context_field``,
    ``question_field``, ``answers_field``), and the dataset is byte-identical to ``shardify``'s on
    the same rows written as JSONL. Every shardify option is a keyword, named as its flag with
    ``_`` for ``-`` (listed below); options about input files (input, format, where, quoting,
    doc_sep, part) are refused. cls and pair without ``labels`` read the rows twice (labels
    first), which a generator cannot: pass ``labels``.

    A bad row raises ShardkitError naming it as "row N", counting from 0 in the order the rows
    were given (as Parquet rows are counted; the same row is line N + 1 of a JSONL file); with
    ``on_error="skip"`` it is skipped and counted. An exception from the rows (a generator
    raising, KeyboardInterrupt) stops the conversion and leaves no dataset behind. The GIL is
    held only while the next chunk of rows is pulled and its fields taken out (an exact dict of
    plain values directly, any other row through JSON). ``progress`` is shardify's
    ``--progress``: True or "auto" shows a tqdm bar on a terminal when tqdm is installed, else a
    line redrawn in place on a terminal, and anywhere else (a Slurm log, a redirected stderr) a
    line every ``progress_interval`` seconds (above 0) with rows done of the total, rate and ETA;
    "always" prints those lines and a last one, terminal or not; False or "never" shows nothing.

    Returns the conversion summary as a dict (examples, records, tokens, truncated, skipped,
    bytes, seconds, the first errors; "documents" is examples' former name) with the dataset's
    info under "info".
    """
    if tokenizer is None:
        raise TypeError("write_dataset: tokenizer= is required (tokenizer.json, vocab.txt, "
                        "encoder.json or a SentencePiece .model)")
    _rows.refuse_mapping(rows)
    progress_interval = _checked_interval(progress_interval)
    passes = 2 if task in _LABELLED_TASKS and options.get("labels") is None else 1
    if passes == 2 and not _rows.can_read_twice(rows):
        raise ShardkitError(
            f"task={task!r} without labels= reads the rows twice (labels first, to number them as "
            "shardify does), and these rows can be read only once: pass labels=[...] in index "
            "order, or rows that can be read again (a list, a DataFrame, a datasets.Dataset)")
    bar = _progress(rows, progress, progress_interval)
    opened: List[None] = []

    def open_rows() -> Tuple[Iterator[Any], Any]:
        opened.append(None)
        last = len(opened) == passes
        return _rows.records(rows), bar.add if bar is not None and last else None

    try:
        summary: Dict[str, Any] = _json.loads(_shardkit.write_dataset(
            open_rows, _rows.encode_rows, _os.fspath(out), task=task, tokenizer=_os.fspath(tokenizer),
            **options))
    finally:
        if bar is not None:
            bar.close()
    summary["info"] = Dataset(out).info
    return summary


def _checked_interval(seconds: Any) -> float:
    """progress_interval, refused by --progress-interval's rule: a number of seconds above 0
    (checked whether or not progress is shown, as a flag is)."""
    if isinstance(seconds, bool) or not isinstance(seconds, _numbers.Real):
        raise TypeError("write_dataset: progress_interval must be a number of seconds, not "
                        f"{type(seconds).__name__}")
    # The flag's rule, on the value as the flag would spell it (a Fraction as its float).
    problem = _shardkit._progress_interval_problem(
        str(seconds) if isinstance(seconds, int) else repr(float(seconds)))
    if problem:
        raise OptionError(f"write_dataset: progress_interval {problem}")
    return float(seconds)


def _progress(rows: Iterable[Any], progress: Union[bool, str, None], interval: float) -> Any:
    """What reports write_dataset's progress: an object with add(rows) and close(), or None."""
    mode = {True: "auto", False: "never", None: "never"}.get(progress, progress)  # type: ignore[arg-type]
    if mode not in ("auto", "always", "never"):
        raise ValueError("write_dataset: progress is True, False, 'auto', 'always' or 'never', "
                         f"not {progress!r}")
    if mode == "never":
        return None
    try:
        total: int = len(rows)  # type: ignore[arg-type]
    except TypeError:
        total = 0
    if mode == "auto" and _on_terminal():
        try:
            from tqdm.auto import tqdm  # type: ignore[import]
        except ImportError:
            pass
        else:
            bar = tqdm(total=total or None, unit=" rows", desc="write_dataset")
            bar.add = bar.update
            return bar
    return _shardkit._RowProgress(mode, float(interval), total)


def _on_terminal() -> bool:
    """Whether a tqdm bar suits stderr: a terminal, or a notebook (which draws it as a widget)."""
    if "ipykernel" in _sys.modules:
        return True
    try:
        return _sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


Loader.__doc__ = (Loader.__doc__ or "") + _options_doc("Options (keywords):",
                                                       _shardkit.loader_options())
IterableDataset.__doc__ = (IterableDataset.__doc__ or "") + _options_doc(
    "Options (keywords, as for Loader; and epoch):", _shardkit.loader_options())
Dataset.__doc__ = (Dataset.__doc__ or "") + _options_doc("Options (keywords):",
                                                         _shardkit.source_options())
write_dataset.__doc__ = (write_dataset.__doc__ or "") + _options_doc(
    "Options (keywords):",
    [s for s in _shardkit.convert_options() if s["name"] not in ("task", "tokenizer", "out")])

# The binding `from __future__ import annotations` leaves behind is not part of the package.
del annotations
