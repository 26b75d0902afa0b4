"""How passes over a Loader and an IterableDataset behave, as the README says (after MosaicML
Streaming): each pass after a finished one is the next epoch, an interrupted pass continues,
len() is what the next pass yields, an epoch with no batch raises, and state_dict() resumes
exactly, under torch's DataLoader too. The expected order of each epoch comes from
`shard-inspect order` (the same plan, computed without the loader)."""
import os
import random
import signal
import subprocess
import sys
import threading
import time
import warnings

import torch
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402

BATCH = 32


def planned_epoch(path, epoch, seed=3):
    """The records of an epoch in loader order, from shard-inspect (not from the loader)."""
    out = subprocess.run([pyutil.INSPECT, "order", path, "--seed", str(seed), "--epoch",
                          str(epoch), "--batch-size", str(BATCH)],
                         check=True, capture_output=True, text=True).stdout.split()
    return [int(r) for r in out]


def batch_records(batch, ds_ids):
    """The record index of each row, found by its ids (each record's ids are unique here)."""
    return [ds_ids[tuple(row[:n].tolist())] for row, n in zip(batch["input_ids"], batch["length"])]


def records_of_first_batches(passes, ids, count):
    """The records of a pass's first ``count`` batches, the pass left there (a break)."""
    records = []
    for k, batch in enumerate(passes):
        records += batch_records(batch, ids)
        if k + 1 == count:
            break
    return records


def ids_index(path):
    ds = shardkit.Dataset(path)
    index = {}
    for i in range(len(ds)):
        r = ds[i]
        n = int(r["length"])
        index[tuple(r["input_ids"][:n].tolist())] = i
    assert len(index) == len(ds), "the fixture's records must be distinct"
    return index


def test_three_epochs_in_a_plain_loop(path, ids):
    loader = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True)
    expected_len = len(loader)
    epochs = []
    for epoch in range(3):
        assert len(loader) == expected_len, "len() is the next pass's batches"
        seen = []
        for batch in loader:
            seen += batch_records(batch, ids)
        assert loader.epoch == epoch
        assert seen == planned_epoch(path, epoch), f"pass {epoch} is epoch {epoch}, whole"
        epochs.append(seen)
    assert epochs[0] != epochs[1] != epochs[2], "three different epochs"
    # set_epoch() chooses the next pass's epoch instead.
    loader.set_epoch(1)
    assert [r for b in loader for r in batch_records(b, ids)] == epochs[1]
    # Called inside a running pass, it leaves that pass its epoch: DistributedSampler's rule.
    seen = []
    for k, batch in enumerate(loader):
        seen += batch_records(batch, ids)
        if k == 2:
            loader.set_epoch(0)
            assert len(loader) == expected_len, "len() is the next pass's: all of epoch 0"
    assert seen == epochs[2], "set_epoch() inside a pass switched the running pass"
    assert [r for b in loader for r in batch_records(b, ids)] == epochs[0]
    print(f"  three passes = epochs 0, 1, 2 ({len(epochs[0])} records each); set_epoch(1) again; "
          "set_epoch(0) inside a pass of epoch 2 takes effect at the next pass")


def test_interrupted_pass_continues(path, ids):
    loader = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True)
    first = records_of_first_batches(loader, ids, 5)
    left = len(loader)
    rest = [r for b in loader for r in batch_records(b, ids)]
    assert first + rest == planned_epoch(path, 0), "a pass after a break continues the epoch"
    assert left == -(-len(rest) // BATCH), "len() after a break counts what is left"
    assert [r for b in loader for r in batch_records(b, ids)] == planned_epoch(path, 1)
    print(f"  break after 5 batches: the next pass yields the other {left}, then epoch 1")


def assert_pass_raises_no_batch(loader, what):
    try:
        for _ in loader:
            raise AssertionError(f"{what}: a batch")
    except shardkit.ShardkitError as e:
        assert "no batch" in str(e), str(e)
    else:
        raise AssertionError(f"{what}: a pass without a batch passed without a word")


def test_a_pass_never_yields_nothing_silently(path):
    n = len(shardkit.Dataset(path))
    loader = shardkit.Loader(path, batch_size=n, world_size=2, rank=0, drop_last=True)
    assert_pass_raises_no_batch(loader, "an epoch smaller than a global batch, drop_last")
    # A state saved at the very end of an epoch resumes with the next epoch, not with nothing.
    loader = shardkit.Loader(path, batch_size=BATCH, seed=3)
    for _ in loader:
        pass
    state = loader.state_dict()
    resumed = shardkit.Loader(path, batch_size=BATCH, seed=3)
    resumed.load_state_dict(state)
    assert sum(1 for _ in resumed) == len(shardkit.Loader(path, batch_size=BATCH, seed=3))
    assert resumed.epoch == 1
    # max_tokens below one row with drop_last leaves no batch, though len() is an upper bound.
    loader = shardkit.Loader(path, batch_size=BATCH, max_tokens=5, drop_last=True)
    assert len(loader) > 0
    for _ in range(2):
        assert_pass_raises_no_batch(loader, "max_tokens=5 with drop_last")
    # A state saved where max_tokens ended its epoch resumes with the next epoch, although the
    # loader's count of batches left is an upper bound above zero there.
    budget = dict(batch_size=BATCH, seed=3, max_tokens=3000)
    loader = shardkit.Loader(path, **budget)
    for _ in loader:
        pass
    resumed = shardkit.Loader(path, **budget)
    resumed.load_state_dict(loader.state_dict())
    next_epoch = [b["input_ids"].tolist() for b in loader]
    assert next_epoch and [b["input_ids"].tolist() for b in resumed] == next_epoch
    assert resumed.epoch == loader.epoch == 1


def test_a_signal_as_a_pass_starts_skips_no_epoch(path, ids):
    """Real SIGALRMs at random moments of a second pass, its start included: the pass after the
    interrupted one continues where state_dict() says, never an epoch further."""
    class Alarm(Exception):
        pass

    def raise_alarm(*_):
        raise Alarm()

    epoch_1 = planned_epoch(path, 1)
    previous = signal.signal(signal.SIGALRM, raise_alarm)
    rng, interrupted = random.Random(1), 0
    try:
        for _ in range(150):
            loader = shardkit.Loader(path, batch_size=BATCH, seed=3, threads=1,
                                     include_metadata=True)
            for _ in loader:
                pass
            read = []
            try:
                signal.setitimer(signal.ITIMER_REAL, rng.uniform(1e-6, 3e-4))
                for batch in loader:
                    read += batch_records(batch, ids)
                signal.setitimer(signal.ITIMER_REAL, 0)
                continue
            except Alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
            interrupted += 1
            state = loader.state_dict()
            assert state["epoch"] == 1 or state["samples_consumed"] == len(epoch_1), state
            read += [r for b in loader for r in batch_records(b, ids)]
            assert loader.epoch == 1 and read == epoch_1, (
                f"after a signal at {state}, the next pass read epoch {loader.epoch}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert interrupted > 20, f"only {interrupted} of 150 second passes were interrupted"
    print(f"  {interrupted} SIGALRMs in second passes: each next pass read the rest of epoch 1")

def test_dataloader_over_iterable_dataset(path, ids):
    ds = shardkit.IterableDataset(path, batch_size=BATCH, seed=3, include_metadata=True)
    dl = DataLoader(ds, batch_size=None)
    for epoch in range(3):
        seen = [r for b in dl for r in batch_records(b, ids)]
        assert seen == planned_epoch(path, epoch), f"DataLoader pass {epoch}"
    print("  DataLoader(IterableDataset, batch_size=None): three passes = epochs 0, 1, 2")
    # torch's default batch_size=1 would stack whole batches into [1, 32, L]: refused.
    for wrong in ({}, {"batch_size": 8}):
        try:
            next(iter(DataLoader(shardkit.IterableDataset(path, batch_size=BATCH), **wrong)))
        except RuntimeError as e:
            assert "batch_size=None" in str(e), str(e)
        else:
            raise AssertionError(f"DataLoader({wrong}) stacked batches")
    try:
        next(iter(DataLoader(shardkit.IterableDataset(path, batch_size=BATCH), batch_size=None,
                             num_workers=1)))
    except RuntimeError as e:
        assert "num_workers=0" in str(e), str(e)
    else:
        raise AssertionError("num_workers=1 was accepted")


def test_resume_through_state_dict(path, ids):
    whole = [r for b in DataLoader(shardkit.IterableDataset(path, batch_size=BATCH, seed=3,
                                                            include_metadata=True),
                                   batch_size=None) for r in batch_records(b, ids)]
    for stop in (1, 7, 12):
        ds = shardkit.IterableDataset(path, batch_size=BATCH, seed=3, include_metadata=True)
        got = []
        for k, batch in enumerate(DataLoader(ds, batch_size=None)):
            got += batch_records(batch, ids)
            if k + 1 == stop:
                break
        state = ds.state_dict()
        fresh = shardkit.IterableDataset(path, batch_size=BATCH, seed=3, include_metadata=True)
        fresh.load_state_dict(state)
        got += [r for b in DataLoader(fresh, batch_size=None) for r in batch_records(b, ids)]
        assert got == whole, f"resume after {stop} batches"
    print("  IterableDataset.state_dict() after 1, 7, 12 batches: the uninterrupted epoch")


def test_interrupt_in_next_loses_no_batch():
    """Real SIGINTs sent while a loop waits for its next batch: each raises KeyboardInterrupt, the
    batch that was ready as Python raised comes with the next pass, and a state_dict() saved in
    the handler resumes with it. (Before, that batch was dropped, and counted as read.) A batch
    is the loop's once `got.append` has run: the interpreter raises after a call, not inside."""
    path, _ = pyutil.dataset(n=12000, seed=5)
    kw = dict(batch_size=1024, threads=1, seed=1)

    def ids(batches):
        return [b["input_ids"].numpy().tobytes() for b in batches]

    whole = ids(shardkit.Loader(path, **kw))
    loader = shardkit.Loader(path, **kw)
    got, interrupts, epochs, rng = [], 0, 0, random.Random(0)
    while interrupts < 8 or got:  # a signal a round; whole epochs, until 8 raised
        assert epochs < 10, f"only {interrupts} signals raised in {epochs} epochs"
        sender = threading.Thread(target=lambda d=rng.uniform(0, 0.004): (
            time.sleep(d), os.kill(os.getpid(), signal.SIGINT)))
        ended = False
        try:
            sender.start()  # (a signal may come before start() returns)
            for batch in loader:
                got.append(batch)
            ended = True
            sender.join()  # the round's signal comes before this returns
        except KeyboardInterrupt:
            interrupts += 1
            if not ended:  # (a state at the epoch's end resumes with the next epoch)
                fresh = shardkit.Loader(path, **kw)
                fresh.load_state_dict(loader.state_dict())
                assert ids(got) + ids(fresh) == whole, "a state_dict() saved in the handler skips"
        sender.join()
        if ended:
            assert ids(got) == whole, f"{len(whole) - len(got)} batches lost to SIGINTs"
            got, epochs = [], epochs + 1
            loader.set_epoch(0)
    print(f"  {interrupts} SIGINTs over {epochs} epochs: no batch lost, every state_dict() "
          "resumed exactly")


def test_set_epoch_after_load_state_dict(path, ids):
    """set_epoch() right after load_state_dict(): the state's epoch keeps its position (a trainer
    calling set_epoch() as each epoch starts resumes mid-epoch), another epoch starts afresh;
    the same whether or not an IterableDataset built its loader yet. Bad keywords raise at
    construction."""
    loader = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True)
    it = iter(loader)
    seen = batch_records(next(it), ids) + batch_records(next(it), ids)
    state = loader.state_dict()
    rest_of_0 = planned_epoch(path, 0)[len(seen):]
    for make in ("loader", "dataset", "built dataset"):
        for epoch, expected in ((0, rest_of_0), (2, planned_epoch(path, 2))):
            if make == "loader":
                fresh = shardkit.Loader(path, batch_size=BATCH, seed=3, include_metadata=True)
            else:
                fresh = shardkit.IterableDataset(path, batch_size=BATCH, seed=3,
                                                 include_metadata=True)
                if make == "built dataset":
                    len(fresh)
            fresh.load_state_dict(state)
            fresh.set_epoch(epoch)
            got = [r for b in fresh for r in batch_records(b, ids)]
            assert got == expected, f"{make}: set_epoch({epoch}) after load_state_dict"
    for bad, error in (({"bogus": 1}, TypeError), ({"epoch": -3}, shardkit.OptionError),
                       ({"batch_size": 0}, shardkit.OptionError)):
        try:
            shardkit.IterableDataset(path, **bad)
        except error as e:
            # The message names the class the keyword was given to.
            assert str(e).startswith("IterableDataset"), str(e)
        else:
            raise AssertionError(f"IterableDataset(**{bad}) was accepted")
    print("  set_epoch() after load_state_dict(): the state's epoch resumes, another starts; "
          "bad keywords refused at construction")


def test_close_and_context_manager(path):
    with shardkit.Loader(path, batch_size=BATCH, threads=2) as loader:
        batch = next(iter(loader))
    assert batch["input_ids"].shape[0] == BATCH
    assert batch["input_ids"].sum() > 0, "a batch taken before close() stays valid"
    for use in (lambda: len(loader), lambda: next(iter(loader)), loader.state_dict):
        try:
            use()
        except ValueError as e:
            assert "closed" in str(e)
        else:
            raise AssertionError("a closed loader was used")


def test_iterable_dataset_close_keeps_its_position(path, ids):
    """close() frees the threads, not the position: the next pass goes on where the last
    batch taken left it, and state_dict() in between says so."""
    expected = planned_epoch(path, 0) + planned_epoch(path, 1)
    ds = shardkit.IterableDataset(path, batch_size=BATCH, seed=3, include_metadata=True)
    got = records_of_first_batches(ds, ids, 5)
    ds.close()
    assert ds.state_dict()["samples_consumed"] == 5 * BATCH, ds.state_dict()
    got += [r for b in ds for r in batch_records(b, ids)]
    ds.close()
    assert ds.state_dict()["samples_consumed"] == len(planned_epoch(path, 0)), ds.state_dict()
    got += [r for b in ds for r in batch_records(b, ids)]  # the epoch ended: the next one
    assert got == expected
    # As without close(): set_epoch() of the running epoch restarts it, and one made during a
    # pass starts its epoch at the next.
    for close in (False, True):
        ds = shardkit.IterableDataset(path, batch_size=BATCH, seed=3, include_metadata=True)
        records_of_first_batches(ds, ids, 3)
        if close:
            ds.close()
        ds.set_epoch(0)
        assert [r for b in ds for r in batch_records(b, ids)] == planned_epoch(path, 0), close
        it = iter(ds)
        next(it)
        ds.set_epoch(2)
        if close:
            ds.close()
        assert [r for b in ds for r in batch_records(b, ids)] == planned_epoch(path, 2), close
    print("  IterableDataset.close() mid-epoch and at its end: the next pass continues; "
          "set_epoch() around it as without it")


def test_map_style_dataset(path):
    ds = shardkit.Dataset(path)
    assert isinstance(ds, torch.utils.data.Dataset)
    dl = DataLoader(ds, batch_size=16, shuffle=False)
    first = next(iter(dl))
    assert first["input_ids"].shape == (16, ds[0]["input_ids"].shape[0])
    assert first["input_ids"][3].tolist() == ds[3]["input_ids"].tolist()


def main():
    warnings.simplefilter("error")
    path, _ = pyutil.dataset(n=900, seed=11)
    ids = ids_index(path)
    test_three_epochs_in_a_plain_loop(path, ids)
    test_interrupted_pass_continues(path, ids)
    test_a_pass_never_yields_nothing_silently(path)
    test_a_signal_as_a_pass_starts_skips_no_epoch(path, ids)
    test_dataloader_over_iterable_dataset(path, ids)
    test_resume_through_state_dict(path, ids)
    test_set_epoch_after_load_state_dict(path, ids)
    test_close_and_context_manager(path)
    test_iterable_dataset_close_keeps_its_position(path, ids)
    test_map_style_dataset(path)
    test_interrupt_in_next_loses_no_batch()
    print("iteration: all passed")


if __name__ == "__main__":
    main()
