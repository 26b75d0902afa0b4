"""What a PyTorch user does with a Loader beyond one loop: share it between threads, resume from a
state whose integers a checkpoint library turned into NumPy's or torch's, count epochs with
NumPy, write Loader(path, 64) as DataLoader(ds, 64) is written, pickle or copy a Loader, and ask
a remote one what its reads cost. Expected orders come from `shard-inspect order` (the same plan,
computed without the loader), expected record sets from the dataset itself, and a remote
loader's counts from the HTTP server's own."""
import copy
import http.server
import inspect
import os
import pickle
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402
from test_iteration import BATCH, batch_records, ids_index  # noqa: E402


def planned_epoch(path, epoch, seed=3, batch=BATCH):
    """The records of an epoch in loader order, from shard-inspect (not from the loader)."""
    out = subprocess.run([pyutil.INSPECT, "order", path, "--seed", str(seed), "--epoch",
                          str(epoch), "--batch-size", str(batch)],
                         check=True, capture_output=True, text=True).stdout.split()
    return [int(r) for r in out]


def consume_in_threads(loader, ids, threads):
    """Each thread runs its own pass over one loader (the passes made here, before the threads
    start, so that all are passes of the same epoch); returns the records each got and the
    threads still running after 20 s."""
    passes = [iter(loader) for _ in range(threads)]
    got = [[] for _ in range(threads)]
    errors = []

    def run(k):
        try:
            for batch in passes[k]:
                got[k] += batch_records(batch, ids)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    workers = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(threads)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + 20
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
    assert not errors, errors
    return got, [w for w in workers if w.is_alive()]


def test_threads_sharing_a_loader(path, ids):
    """Four threads reading one loader get each record of the epoch once between them, and all
    end. (Before, two threads waiting at once for the last batch left one waiting forever: with
    one builder thread and one batch ahead, most epochs hung.)"""
    n = len(ids)
    for seed in range(3):
        loader = shardkit.Loader(path, batch_size=8, seed=seed, threads=1, prefetch_batches=1,
                                 include_metadata=True)
        got, running = consume_in_threads(loader, ids, threads=4)
        assert not running, f"seed {seed}: {len(running)} of 4 threads still wait for a batch"
        records = sorted(r for part in got for r in part)
        assert records == list(range(n)), f"seed {seed}: {len(records)} rows, " \
            f"{len(set(records))} distinct records of {n}"
        # The loader is whole afterwards: the next pass is the next epoch.
        assert [r for b in loader for r in batch_records(b, ids)] == planned_epoch(
            path, 1, seed=seed, batch=8)
    print(f"  4 threads over one loader, 3 epochs: each of the {n} records once, no thread left "
          "waiting")


def test_a_pass_whose_batches_another_took(path, ids):
    """Two passes over one loader share its epoch (what threads sharing a loader make): the pass
    that finds the batches gone ends, rather than calling the epoch empty ("no batch for this
    rank", as it did) or reading the next epoch alone (as one made mid-epoch did)."""
    loader = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True)
    first, second = iter(loader), iter(loader)
    assert [r for b in first for r in batch_records(b, ids)] == planned_epoch(path, 0)
    assert list(second) == [], "a pass of epoch 0 found it taken: it ends"
    assert [r for b in loader for r in batch_records(b, ids)] == planned_epoch(path, 1)
    first = iter(loader)  # epoch 2
    taken = [r for _ in range(2) for r in batch_records(next(first), ids)]
    second = iter(loader)  # made mid-epoch: it continues epoch 2
    taken += [r for b in first for r in batch_records(b, ids)]
    assert taken == planned_epoch(path, 2)
    assert list(second) == [], "a pass made in epoch 2 found it taken: it ends"
    assert [r for b in loader for r in batch_records(b, ids)] == planned_epoch(path, 3)
    print("  a pass whose epoch another pass took ends empty; the next pass is the next epoch")


def test_state_integers_of_numpy_and_torch(path, ids):
    """A state whose integers are NumPy's or 0-d tensors (a checkpoint library's round trip)
    resumes exactly; a float is refused as what it is, not as out of range."""
    loader = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True)
    passes = iter(loader)
    first = [r for _ in range(4) for r in batch_records(next(passes), ids)]
    state = loader.state_dict()
    for convert in (np.int64, np.uint64, torch.tensor):
        converted = {k: convert(v) if isinstance(v, int) else v for k, v in state.items()}
        fresh = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True)
        fresh.load_state_dict(converted)
        rest = [r for b in fresh for r in batch_records(b, ids)]
        assert first + rest == planned_epoch(path, 0), f"{convert.__name__}: not the epoch's rest"
    for value, kind in ((float(state["samples_consumed"]), "float"), ("128", "str"),
                        (np.bool_(True), "bool_"), (torch.tensor([1, 2]), "Tensor")):
        try:
            loader.load_state_dict(dict(state, samples_consumed=value))
        except shardkit.ShardkitError as e:
            assert f"a {kind}, not an integer" in str(e), str(e)
        else:
            raise AssertionError(f"load_state_dict took samples_consumed={value!r}")
    print("  a state of NumPy integers or 0-d tensors resumes exactly; a float is named as one")


def test_numpy_epochs(path, ids):
    """epoch= and set_epoch() take NumPy's integers, as every integer option does."""
    loader = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True,
                             epoch=np.int64(2))
    assert [r for b in loader for r in batch_records(b, ids)] == planned_epoch(path, 2)
    for epoch in np.arange(2):  # a loop over NumPy's integers
        loader.set_epoch(epoch)
        assert [r for b in loader for r in batch_records(b, ids)] == planned_epoch(path, epoch)
    dataset = shardkit.IterableDataset(path, batch_size=BATCH, seed=3, include_metadata=True,
                                       epoch=np.uint32(1))
    assert [r for b in dataset for r in batch_records(b, ids)] == planned_epoch(path, 1)
    dataset.set_epoch(np.int16(0))
    assert [r for b in dataset for r in batch_records(b, ids)] == planned_epoch(path, 0)
    for bad in (np.bool_(True), np.float64(1.0)):
        try:
            loader.set_epoch(bad)
        except TypeError as e:
            assert "epoch must be an int" in str(e), str(e)
        else:
            raise AssertionError(f"set_epoch took {bad!r}")
    print("  epoch=np.int64(2), set_epoch() over np.arange and IterableDataset's: those epochs")


def loader_records(loader, ids):
    return [r for b in loader for r in batch_records(b, ids)]


def test_positional_epoch(path, ids):
    """Loader(path, 2), which a DataLoader user means as batch_size=2, still reads epoch 2 (the
    second argument has always been the epoch), and warns, naming both readings; the signature
    shown makes epoch keyword-only, and the errors Python gives for its own signatures stay."""
    options = dict(batch_size=BATCH, seed=3, include_metadata=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = shardkit.Loader(path, 2, **options)
    assert [w.category for w in caught] == [FutureWarning], [str(w.message) for w in caught]
    assert caught[0].filename == __file__, caught[0].filename  # the user's line, not shardkit's
    assert str(caught[0].message) == (
        "Loader(path, 2): the second positional argument is the epoch (2), not the batch size; "
        "pass epoch=2 or batch_size=2 by keyword: positional arguments after the path will be "
        "refused in a later version"), str(caught[0].message)
    assert loader_records(loader, ids) == planned_epoch(path, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = shardkit.Loader(path, 1, None, **options)
    assert "taken as epoch=1, schedule=None; pass them by keyword" in str(caught[0].message)
    assert loader_records(loader, ids) == planned_epoch(path, 1)
    for args, kwargs, words in (((2,), {"epoch": 2}, "got multiple values for argument 'epoch'"),
                                ((0, None, "step", None, 5), {},
                                 "takes from 2 to 6 positional arguments but 7 were given")):
        try:
            shardkit.Loader(path, *args, **kwargs, **options)
            raise AssertionError(f"Loader(path, *{args}, **{kwargs}) accepted")
        except TypeError as e:
            assert str(e) == f"Loader.__init__() {words}", str(e)
    parameters = inspect.signature(shardkit.Loader).parameters
    assert list(parameters)[:2] == ["path", "epoch"], list(parameters)
    for name in ("epoch", "schedule", "interpolation", "tokens_per_sample"):
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, (name, parameters[name])
    print("  Loader(path, 2): epoch 2, with a FutureWarning naming epoch= and batch_size=")


def test_pickling_a_loader(path, ids):
    """A Loader cannot be pickled or copied (its threads cannot): the error says what can, and
    both ways it names go on where the loader was."""
    options = dict(batch_size=BATCH, seed=3, include_metadata=True)
    loader = shardkit.Loader(path, **options)
    passes = iter(loader)
    first = batch_records(next(passes), ids)
    for attempt in (pickle.dumps, copy.deepcopy, copy.copy):
        try:
            attempt(loader)
            raise AssertionError(f"{attempt.__module__}.{attempt.__name__} took a Loader")
        except TypeError as e:
            message = str(e)
            assert message.startswith("a shardkit.Loader cannot be pickled or copied"), message
            for way in ("state_dict()", "load_state_dict(state)", "shardkit.IterableDataset"):
                assert way in message, message
    fresh = shardkit.Loader(path, **options)
    fresh.load_state_dict(pickle.loads(pickle.dumps(loader.state_dict())))
    assert first + loader_records(fresh, ids) == planned_epoch(path, 0)
    dataset = shardkit.IterableDataset(path, **options)
    dataset_passes = iter(dataset)
    first = batch_records(next(dataset_passes), ids)
    for copied in (pickle.loads(pickle.dumps(dataset)), copy.deepcopy(dataset)):
        assert first + loader_records(copied, ids) == planned_epoch(path, 0)
    print("  pickle/copy of a Loader: a TypeError naming state_dict() and IterableDataset, "
          "both of which resume")


class _CountingRangeHandler(pyutil.RangeHandler):
    """Counts requests and body bytes sent."""

    def do_HEAD(self):
        self.server.count(0)
        super().do_HEAD()

    def about_to_answer(self, body):
        self.server.count(len(body))


class _CountingServer(http.server.ThreadingHTTPServer):
    def __init__(self, directory):
        super().__init__(("127.0.0.1", 0), lambda *a, **k: _CountingRangeHandler(
            *a, directory=directory, **k))
        self.lock = threading.Lock()
        self.requests = self.bytes = 0

    def count(self, body_bytes):
        with self.lock:
            self.requests += 1
            self.bytes += body_bytes

    def counts(self):
        with self.lock:
            return self.requests, self.bytes


def settled_io_stats(loader, server):
    """io_stats() once it agrees with the server (blocks fetched ahead may still be on their way
    when a pass ends), or the last one after 10 s."""
    deadline = time.monotonic() + 10
    while True:
        stats = loader.io_stats()
        if (stats["requests"], stats["bytes_fetched"]) == server.counts() or \
                time.monotonic() > deadline:
            return stats
        time.sleep(0.05)


def test_io_stats(path, ids):
    """Loader.io_stats() (the README's cache text names it) counts what the server answered: its
    requests and body bytes; with cache_dir, a second epoch is read from the cache, without a
    request. A local loader's counts are all 0."""
    options = dict(batch_size=BATCH, seed=3, include_metadata=True)
    local = shardkit.Loader(path, **options).io_stats()
    assert local == dict.fromkeys(("requests", "bytes_fetched", "retries", "cache_hits",
                                   "cache_write_failures", "cache_evictions"), 0), local
    server = _CountingServer(os.path.dirname(path))
    serving = threading.Thread(target=server.serve_forever)
    serving.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{os.path.basename(path)}"
        loader = shardkit.Loader(url, cache_dir=pyutil.scratch("shardkit-io-stats-"),
                                 remote_retries=0, **options)
        assert loader_records(loader, ids) == planned_epoch(path, 0)
        stats = settled_io_stats(loader, server)
        requests, body_bytes = server.counts()
        assert (stats["requests"], stats["bytes_fetched"]) == (requests, body_bytes) and \
            requests > 0, (stats, requests, body_bytes)
        assert stats["retries"] == stats["cache_write_failures"] == 0, stats
        assert loader_records(loader, ids) == planned_epoch(path, 1)
        second = settled_io_stats(loader, server)
        assert server.counts() == (requests, body_bytes), "the cached epoch asked the server"
        assert second["cache_hits"] > stats["cache_hits"], (stats, second)
        assert second["requests"] == requests, second
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
    print(f"  io_stats(): {requests} requests and {body_bytes} bytes, as the server counted; "
          f"the cached epoch {second['cache_hits'] - stats['cache_hits']} cache hits")


def main():
    warnings.simplefilter("error")
    path, _ = pyutil.dataset(n=400, seed=17)
    ids = ids_index(path)
    test_threads_sharing_a_loader(path, ids)
    test_a_pass_whose_batches_another_took(path, ids)
    test_state_integers_of_numpy_and_torch(path, ids)
    test_numpy_epochs(path, ids)
    test_positional_epoch(path, ids)
    test_pickling_a_loader(path, ids)
    test_io_stats(path, ids)
    print("user semantics: all passed")


if __name__ == "__main__":
    main()
