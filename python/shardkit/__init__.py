"""shardkit: stream compressed token shards into PyTorch.

    import shardkit
    ds = shardkit.Dataset("data/train")          # schema, len(), metadata, records
    loader = shardkit.Loader("data/train", batch_size=32, shuffle=True, seed=0)
    for epoch in range(3):
        loader.set_epoch(epoch)
        for batch in loader:                      # dict of torch.Tensor, HF field names
            loss = model(**batch).loss

Batches are built ahead by C++ threads (the GIL is released while Python waits for one), and
arrive as tensors that share the loader's buffers. ``state_dict()``/``load_state_dict()`` resume
mid-epoch exactly.

A weighted mixture of datasets is the same Loader over a list of sources:

    loader = shardkit.Loader([shardkit.Source("data/web", weight=0.7),
                              shardkit.Source("data/code", weight=0.3)], batch_size=32)

    shardkit.write_dataset(rows, "data/train", task="lm", tokenizer="tokenizer.json")

converts rows held in Python (a generator of dicts, a pandas DataFrame, a datasets.Dataset) with
shardify's converter and threads, as ``shardify`` would convert the same rows written as JSONL.
"""
import json as _json
import os as _os

import numpy as _np
import torch as _torch

from . import _rows
from . import _shardkit
from ._shardkit import ShardkitError

__all__ = ["Dataset", "Loader", "Source", "read_mixture", "IterableDataset", "ShardkitError",
           "write_dataset"]

# torch 1.13 has no uint16/uint32 tensors: such fields widen to the next signed type.
_WIDEN = {_np.dtype(_np.uint16): _np.int32, _np.dtype(_np.uint32): _np.int64}


def _to_tensor(array, name=None):
    widened = _WIDEN.get(array.dtype)
    if widened is not None:
        array = array.astype(widened)
    tensor = _torch.from_numpy(array)
    # document_mask=True: the [B, 1, T, T] mask is SDPA's boolean attn_mask (same bytes).
    if name == "attention_mask" and tensor.dim() == 4 and tensor.dtype == _torch.uint8:
        tensor = tensor.view(_torch.bool)
    return tensor


class Dataset:
    """A shardkit dataset (a directory, or an http(s):// or s3:// URL): schema, record count,
    metadata and records by index. Options: read_mode, remote_concurrency, cache_dir,
    cache_limit, remote_retries, remote_timeout_ms (as for Loader)."""

    def __init__(self, path, **options):
        self._ds = _shardkit.Dataset(str(path), **options)
        self.path = str(path)

    def __len__(self):
        return len(self._ds)

    @property
    def schema(self):
        """List of {"name", "dtype", "shape"} in record order."""
        return self._ds.schema

    @property
    def shards(self):
        return self._ds.shards

    @property
    def bytes_on_disk(self):
        return self._ds.bytes_on_disk

    @property
    def info(self):
        """What the records mean (format/SPEC.md, "Dataset info"): task, field roles, tokenizer
        with its special ids, label names, source and conversion statistics."""
        return _json.loads(self._ds.info_json)

    @property
    def metadata(self):
        """The writing program's own metadata keys, parsed from JSON."""
        return {k: _json.loads(v) for k, v in self._ds.metadata_json.items()}

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return {k: _to_tensor(v) for k, v in self._ds.record(index).items()}


class Source:
    """One dataset of a mixture and how much of it an epoch takes (at most one of):
    ``weight``: its share of the epoch's samples (relative; give it for every source or none);
    ``repeat``: how many times its samples are used per epoch (fractional allowed);
    ``choose``: its samples per epoch. None of them: repeat=1.

    With weights an epoch has ``max_samples`` samples, or the sources' total records when
    unset; otherwise the sum of the sources' samples (cut to ``max_samples``). At every prefix
    of the stream each source's count is within one sample of its share. A source's samples
    follow its own shuffled order, wrapping into a fresh permutation when used more than once.
    """

    __slots__ = ("path", "weight", "repeat", "choose")

    def __init__(self, path, weight=None, repeat=None, choose=None):
        self.path = _os.fspath(path)
        self.weight = weight
        self.repeat = repeat
        self.choose = choose

    def __repr__(self):
        given = ", ".join(f"{k}={getattr(self, k)!r}" for k in ("weight", "repeat", "choose")
                          if getattr(self, k) is not None)
        return f"Source({self.path!r}{', ' + given if given else ''})"


def _source_tuple(item):
    if isinstance(item, Source):
        src = item
    elif isinstance(item, dict):
        src = Source(**item)
    else:
        src = Source(item)
    return (src.path,
            None if src.weight is None else float(src.weight),
            None if src.repeat is None else float(src.repeat),
            None if src.choose is None else int(src.choose))


def read_mixture(spec):
    """A mixture spec file (JSON, as ``shard-inspect order --mixture`` reads it) as
    ``(sources, options)``: ``Loader(sources, **options)`` yields what that command prints."""
    sources, seed, max_samples = _shardkit.read_mixture_spec(_os.fspath(spec))
    options = {}
    if seed is not None:
        options["seed"] = seed
    if max_samples is not None:
        options["max_samples"] = max_samples
    return [Source(*s) for s in sources], options


class Loader:
    """Batches of a dataset, or of a weighted mixture of datasets, as dicts of torch.Tensor.

    ``path`` is a dataset directory or a URL: ``http(s)://host/path`` or ``s3://bucket/prefix``
    (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN or
    ~/.aws/credentials, endpoint from AWS_ENDPOINT_URL); or a list of sources (``Source``, a
    dict with the same keys, or a path), mixed as ``Source`` describes. The first source's
    fields define the batch; every other must hold the fields read, for the same task and
    tokenizer, else ShardkitError names both datasets and the difference.

    Options (all keyword): batch_size=32, shuffle=True, seed=0, epoch=0, rank and world_size
    (default: RANK and WORLD_SIZE from the environment, as torchrun sets them, else 0 and 1),
    drop_last=False, window_blocks=0 (derived from memory_budget), threads=0 (all cores),
    memory_budget=512 MiB, prefetch_batches=0 (auto), timeout_ms=0 (wait forever), fields=None
    (every model input and target: model(**batch) works), include_metadata=False (True adds
    length, a first_segment_length field, and for QA example_index and source_index), int32=False (int64 like HF),
    dynamic_padding=True, pad_to_multiple_of=1, attention_mask=True, mlm_probability=None (turns
    on MLM masking; labels become -100 where not masked; mask_token_id, vocab_size and
    special_ids default to the dataset's tokenizer); packed lm document boundaries (derived from
    the separator id ending each document): document_positions=False (position_ids restarting
    at each document), cu_seqlens=False (int32 cu_seqlens over the unpadded tokens plus
    max_seqlen, for flash_attn_varlen_func), document_mask=False (attention_mask [B, 1, T, T]
    bool, causal within each document, for scaled_dot_product_attention), max_mask_length=4096,
    separator_id=None (the dataset's); how bytes are read: read_mode="pread"
    ("mmap" maps local files), remote_concurrency=8, cache_dir=None (an on-disk cache shared by
    processes), cache_limit=4 GiB, remote_retries=5, remote_timeout_ms=30000; budgets per
    epoch: max_samples=None (the epoch ends after that many samples; a weighted mixture's
    length), max_tokens=None (the epoch ends after the first global step whose tokens, the
    ``length`` of every rank's rows so far, reach it; that step is delivered whole on every
    rank); source_field=False (adds ``source``: each row's source index).
    """

    def __init__(self, path, epoch=0, **options):
        if isinstance(path, (list, tuple)):
            sources = [_source_tuple(s) for s in path]
            self.path = sources[0][0] if sources else ""
            self._loader = _shardkit.Loader(sources, **options)
        else:
            self.path = _os.fspath(path)
            self._loader = _shardkit.Loader(self.path, **options)
        self._loader.set_epoch(epoch)
        self._fresh = True

    def set_epoch(self, epoch):
        self._loader.set_epoch(epoch)
        self._fresh = True

    @property
    def epoch(self):
        return self._loader.epoch

    @property
    def threads(self):
        return self._loader.threads

    @property
    def epoch_samples(self):
        """Samples (all ranks) in an epoch."""
        return self._loader.epoch_samples

    def __len__(self):
        """Batches this rank gets in the current epoch."""
        return self._loader.batches()

    def __iter__(self):
        # Iterating again without set_epoch() continues where the last iteration stopped,
        # which is what a resumed loader needs.
        self._fresh = False
        while True:
            item = self._loader.next()
            if item is None:
                return
            arrays = item[0]
            yield {k: _to_tensor(v, k) for k, v in arrays.items()}

    def next_with_records(self):
        """The next batch and the global record indices of its rows, or None at epoch end."""
        item = self._loader.next()
        if item is None:
            return None
        arrays, records = item[0], item[1]
        return {k: _to_tensor(v, k) for k, v in arrays.items()}, list(records)

    def next_with_sources(self):
        """The next batch with each row's (source, record), or None at epoch end."""
        item = self._loader.next()
        if item is None:
            return None
        arrays, records, _, sources = item
        return {k: _to_tensor(v, k) for k, v in arrays.items()}, list(zip(sources, records))

    def state_dict(self):
        seed, epoch, consumed, tokens = self._loader.state()
        return {"seed": seed, "epoch": epoch, "samples_consumed": consumed, "tokens_consumed": tokens}

    def load_state_dict(self, state):
        # Values are checked in C++: a negative or out-of-range one raises ShardkitError naming
        # the field and its valid range.
        # tokens_consumed is absent from states saved before budgets existed.
        self._loader.restore(state["seed"], state["epoch"], state["samples_consumed"],
                             state.get("tokens_consumed", 0))

    def planned_records(self, batch):
        return list(self._loader.planned_records(batch))


class IterableDataset(_torch.utils.data.IterableDataset):
    """For code written around torch.utils.data.DataLoader: yields whole batches, so use
    ``DataLoader(shardkit.IterableDataset(path, batch_size=32), batch_size=None)`` and leave
    num_workers at 0 (shardkit prefetches on its own threads)."""

    def __init__(self, path, **options):
        super().__init__()
        self.path = path if isinstance(path, (list, tuple)) else _os.fspath(path)
        self.options = options
        self.epoch = options.pop("epoch", 0)

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        info = _torch.utils.data.get_worker_info()
        if info is not None and info.num_workers > 1:
            raise RuntimeError("shardkit.IterableDataset prefetches on its own threads; use num_workers=0")
        return iter(Loader(self.path, epoch=self.epoch, **self.options))


_LABELLED_TASKS = ("cls", "pair")


def write_dataset(rows, out, task="lm", tokenizer=None, progress=True, progress_interval=30,
                  **options):
    """Converts rows into a dataset at ``out`` with shardify's converter and its threads.

    ``rows`` is any iterable of dicts: a generator, a list, ``DataFrame.to_dict("records")`` or
    ``DataFrame.itertuples()``, a pandas ``DataFrame`` itself, a ``datasets.Dataset``. Each row is
    read as ``shardify`` reads a line of a JSONL file (fields by ``text_field``, ``pair_field``,
    ``label_field``, dotted paths into nested dicts; for ``task="qa"`` ``context_field``,
    ``question_field``, ``answers_field``), and the dataset is byte-identical to ``shardify``'s on
    the same rows written as JSONL. Every shardify option is a keyword, named as its flag with
    ``_`` for ``-``: max_len, no_pack, position_ids, doc_stride, max_query_len, labels (a list of
    names in index order, or "a,b,c"), threads (default: all cores), on_error ("fail" or "skip"),
    force, allow_empty, zstd_level, block_size, shard_size, filter. cls and pair without
    ``labels`` read the rows twice (labels first), which a generator cannot: pass ``labels``.

    A bad row raises ShardkitError naming it as "row N", counting from 0 in the order the rows
    were given (as Parquet rows are counted; the same row is line N + 1 of a JSONL file); with
    ``on_error="skip"`` it is skipped and counted. An exception from the rows (a generator
    raising, KeyboardInterrupt) stops the conversion and leaves no dataset behind. The GIL is
    held only while the next chunk of rows is pulled and its fields taken out (an exact dict of
    plain values directly, any other row through JSON). ``progress`` is shardify's
    ``--progress``: True or "auto" shows a tqdm bar on a terminal when tqdm is installed, else a
    line redrawn in place on a terminal, and anywhere else (a Slurm log, a redirected stderr) a
    line every ``progress_interval`` seconds with rows done of the total, rate and ETA; "always"
    prints those lines and a last one, terminal or not; False or "never" shows nothing.

    Returns the conversion summary as a dict (documents, records, tokens, truncated, skipped,
    bytes, seconds, the first errors) with the dataset's info under "info".
    """
    if tokenizer is None:
        raise TypeError("write_dataset: tokenizer= is required (tokenizer.json, vocab.txt or encoder.json)")
    passes = 2 if task in _LABELLED_TASKS and options.get("labels") is None else 1
    if passes == 2 and not _rows.can_read_twice(rows):
        raise ShardkitError(
            f"task={task!r} without labels= reads the rows twice (labels first, to number them as "
            "shardify does), and these rows can be read only once: pass labels=[...] in index "
            "order, or rows that can be read again (a list, a DataFrame, a datasets.Dataset)")
    bar = _progress(rows, progress, progress_interval)
    opened = []

    def open_rows():
        opened.append(None)
        last = len(opened) == passes
        return _rows.records(rows), bar.add if bar is not None and last else None

    try:
        summary = _json.loads(_shardkit.write_dataset(
            open_rows, _rows.encode_rows, _os.fspath(out), task=task, tokenizer=_os.fspath(tokenizer), **options))
    finally:
        if bar is not None:
            bar.close()
    summary["info"] = Dataset(out).info
    return summary


def _progress(rows, progress, interval):
    """What reports write_dataset's progress: an object with add(rows) and close(), or None."""
    mode = {True: "auto", False: "never", None: "never"}.get(progress, progress)
    if mode not in ("auto", "always", "never"):
        raise ValueError(f"write_dataset: progress is True, False, 'auto', 'always' or 'never', not {progress!r}")
    if mode == "never":
        return None
    try:
        total = len(rows)
    except TypeError:
        total = 0
    if mode == "auto" and _on_terminal():
        try:
            from tqdm.auto import tqdm
        except ImportError:
            pass
        else:
            bar = tqdm(total=total or None, unit=" rows", desc="write_dataset")
            bar.add = bar.update
            return bar
    return _shardkit._RowProgress(mode, float(interval), total)


def _on_terminal():
    """Whether a tqdm bar suits stderr: a terminal, or a notebook (which draws it as a widget)."""
    import sys
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
