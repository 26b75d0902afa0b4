"""A remote Dataset used across fork(), over a real nginx on 127.0.0.1: torch's DataLoader with
num_workers=2 over the Dataset itself (the map-style pattern, which hung in 3 runs of 4 with a
worker stuck in pthread_cond_signal, and failed the 4th with "Received HTTP/0.9" because the
workers shared the parent's keep-alive socket), plain os.fork() children reading beside their
parent, and a Loader, whose threads do not survive fork(), refused in the child with an error
that says so. Every record is compared with the local copy's; local datasets keep working.

Each scenario runs in a process of its own with a deadline, so a hang fails the test instead of
stalling it."""
import gc
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_torchrun_remote import start_nginx  # noqa: E402

BATCH = 16
DEADLINE_S = 120


def records(ds, indices):
    """The records as lists, comparable with ==."""
    return [{k: v.tolist() for k, v in ds[i].items()} for i in indices]


def data_loader(url, local, runs):
    import torch
    import shardkit

    expected_ds = shardkit.Dataset(local)
    for run in range(runs):
        ds = shardkit.Dataset(url)
        # The parent reads first: a shard is open, prefetch threads and a keep-alive connection
        # exist when the workers are forked.
        assert records(ds, [len(ds) - 1]) == records(expected_ds, [len(ds) - 1])
        order = list(range(len(ds)))
        random.Random(run).shuffle(order)
        loader = torch.utils.data.DataLoader(ds, batch_size=BATCH, sampler=order, num_workers=2,
                                             multiprocessing_context="fork", timeout=60)
        seen = 0
        for k, batch in enumerate(loader):
            rows = order[k * BATCH:(k + 1) * BATCH]
            want = records(expected_ds, rows)
            got = [{name: batch[name][r].tolist() for name in batch} for r in range(len(rows))]
            assert got == want, f"run {run}, batch {k}"
            seen += len(rows)
        assert seen == len(ds)
        # The parent's own connection and threads still work after its workers came and went.
        assert records(ds, [0, len(ds) // 2]) == records(expected_ds, [0, len(ds) // 2])
    # A local dataset through the same pattern; workers that start afresh get the Dataset
    # pickled (its path and options) and open it again.
    for dataset, context in ((expected_ds, "fork"), (ds, "spawn"), (expected_ds, "forkserver")):
        loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, num_workers=2,
                                             multiprocessing_context=context, timeout=60)
        got = [row for b in loader for row in zip(*(b[name].tolist() for name in b))]
        want = [tuple(r.values()) for r in records(expected_ds, range(len(expected_ds)))]
        assert got == want, context
    print(f"DataLoader(num_workers=2) over the URL ({len(expected_ds)} records in "
          f"{expected_ds.shards} shards): {runs} runs, every batch equal to the local copy's; a "
          "local dataset too; spawn (the URL) and forkserver (local) workers the same")


def wait_children(pids, deadline):
    failed = []
    for pid in pids:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                    failed.append((pid, status))
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                failed.append((pid, "killed at the deadline: it hung"))
                break
            time.sleep(0.02)
    assert not failed, failed


def plain_fork(url, local):
    import shardkit

    expected_ds = shardkit.Dataset(local)
    ds = shardkit.Dataset(url)
    n = len(ds)
    rng = random.Random(7)
    first = rng.sample(range(n), 40)
    assert records(ds, first) == records(expected_ds, first)
    slices = [rng.sample(range(n), 150) for _ in range(3)]
    wanted = [records(expected_ds, s) for s in slices]
    pids = []
    for c, indices in enumerate(slices):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = 0 if records(ds, indices) == wanted[c] else 2
                if c == 2:  # drops the dataset and leaves through the interpreter's exit
                    del ds
                    gc.collect()
                    sys.stdout.flush()
                    sys.exit(code)
            finally:
                os._exit(code)
        pids.append(pid)
    mine = rng.sample(range(n), 150)
    assert records(ds, mine) == records(expected_ds, mine), "the parent, beside its children"
    wait_children(pids, time.monotonic() + 60)
    print("os.fork(): 3 children read 150 records each beside their parent, all equal; one "
          "dropped its Dataset and exited normally")


def loader_after_fork(url, local):
    import shardkit

    loader = shardkit.Loader(url, batch_size=BATCH, seed=3)
    first = loader.next_with_records()
    assert first is not None
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            try:
                loader.next_with_records()
                code = 2  # a loader without its threads must not pretend
            except shardkit.ShardkitError as e:
                code = 0 if "fork()" in str(e) and "threads do not survive" in str(e) else 3
                print("child:", e, flush=True)
            # Nor wait for its lock, which a worker of the parent may have held at the fork.
            for use in (loader.state_dict, lambda: len(loader), lambda: loader.epoch,
                        lambda: next(iter(loader))):
                try:
                    use()
                    code = code or 5
                except shardkit.ShardkitError as e:
                    code = code or (0 if "fork()" in str(e) else 6)
            # A Loader made in the child reads; the inherited one is dropped without a hang.
            fresh = shardkit.Loader(url, batch_size=BATCH, seed=3)
            if fresh.next_with_records()[1] != first[1]:
                code = 4
            del loader, fresh
            gc.collect()
        finally:
            os._exit(code)
    assert loader.next_with_records() is not None, "the parent's loader goes on"
    wait_children([pid], time.monotonic() + 60)
    print("a Loader used after fork() is refused in the child, naming fork(), by each of its "
          "methods; one made there reads")


def scenario(name, url, local):
    {"data_loader": lambda: data_loader(url, local, 4), "plain_fork": lambda: plain_fork(url, local),
     "loader_after_fork": lambda: loader_after_fork(url, local)}[name]()


def driver():
    import pyutil

    tmp = pyutil.scratch("shardkit-fork-")
    # Many small shards: a worker opens dozens after the fork (each open asks the prefetch
    # threads for two ranges).
    corpus, local = os.path.join(tmp, "corpus.jsonl"), os.path.join(tmp, "local")
    pyutil.make_corpus(corpus, 2000, seed=6)
    subprocess.run([pyutil.SHARDIFY, "--input", corpus, "--task", "cls", "--tokenizer", pyutil.VOCAB,
                    "--labels", "neg,pos", "--max-len", "64", "--block-size", "1024",
                    "--shard-size", "4096", "--out", local], check=True, capture_output=True)
    shutil.copytree(local, os.path.join(tmp, "www", "ds"))
    nginx, port = start_nginx(os.path.join(tmp, "www"), os.path.join(tmp, "nginx"))
    url = f"http://127.0.0.1:{port}/ds"
    try:
        for name in ("plain_fork", "loader_after_fork", "data_loader"):
            run = subprocess.run([sys.executable, __file__, name, url, local], timeout=DEADLINE_S,
                                 capture_output=True, text=True)
            print(run.stdout, end="")
            assert run.returncode == 0, f"{name} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
    finally:
        nginx.send_signal(signal.SIGTERM)
        nginx.wait(timeout=10)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        scenario(*sys.argv[1:4])
    else:
        driver()
