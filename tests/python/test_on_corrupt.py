"""on_corrupt from Python: "fail" (the default) raises ShardkitError naming the shard and block;
"skip" gives the same global stream at world sizes 1 and 2 with none of the damaged block's
records, counts it in state_dict()["blocks_skipped"] (once, however often the run resumes, and
names it in "skipped_blocks"), `shard-inspect verify --json` lists the
block it replaces and `shard-inspect order --on-corrupt skip` prints the same records, also for a
run resumed from a state (--resume-from); a bad value is refused."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402


def damage(path):
    """Flips a byte inside block 0 of the second shard; returns the shard's name, the global
    index range of the block's records and its global block index (from `shard-inspect verify
    --json`)."""
    shard = sorted(f for f in os.listdir(path) if f.endswith(".shard"))[1]
    data = bytearray(open(os.path.join(path, shard), "rb").read())
    data[200] ^= 0x40  # inside block 0's stored bytes
    open(os.path.join(path, shard), "wb").write(data)
    out = subprocess.run([pyutil.INSPECT, "verify", "--json", path], capture_output=True, text=True)
    assert out.returncode == 1, out
    report = json.loads(out.stdout)
    [block] = report["damaged_blocks"]
    assert block["file"].endswith(shard) and block["block"] == 0 and report["skip_replaces_all"]
    return (shard, range(block["first_record"], block["first_record"] + block["records"]),
            block["global_block"])


def steps(path, world, **options):
    ranks = [shardkit.Loader(path, batch_size=24 // world, rank=r, world_size=world, seed=2,
                             threads=2, **options) for r in range(world)]
    out = []
    while True:
        items = [loader.next_with_records() for loader in ranks]
        if items[0] is None:
            return out, [loader.state_dict() for loader in ranks]
        out.append([r for _, records in items for r in records])


def resumed_order(path, cut, options):
    """Saves a state after `cut` steps of 24 rows, checks that `shard-inspect order
    --resume-from` prints what two ranks of 12 resumed from it read (and the samples left in its
    header), and returns the resumed run's rows in global order."""
    options = dict(options, seed=2, threads=2, on_corrupt="skip")
    head = shardkit.Loader(path, batch_size=24, **options)
    for _ in range(cut):
        head.next_with_records()
    state = os.path.join(os.path.dirname(path), "state.json")
    with open(state, "w") as f:
        json.dump(head.state_dict(), f)
    resumed = []
    for rank in range(2):
        loader = shardkit.Loader(path, batch_size=12, rank=rank, world_size=2, **options)
        loader.load_state_dict(head.state_dict())
        batches = iter(loader.next_with_records, None)
        resumed.append([(rank, b, r) for b, (_, records) in enumerate(batches) for r in records])
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in options.items() if k != "threads"]
    printed = subprocess.run([pyutil.INSPECT, "order", path, "--batch-size", "12",
                              "--world-size", "2", "--resume-from", state] + flags,
                             check=True, capture_output=True, text=True).stdout.splitlines()
    rows = [tuple(int(v) for v in line.split()) for line in printed[1:]]
    assert rows == resumed[0] + resumed[1], (options, "order --resume-from --on-corrupt skip")
    # "# epoch 0, seed 2: samples K..E of N left, ...": E - K positions, and fewer than one
    # padding row per rank.
    first, end = (int(v) for v in printed[0].split("samples ")[1].split(" ")[0].split(".."))
    assert first == 24 * cut and end - first <= len(rows) < end - first + 2, (printed[0], options)

    def step_rows(rank, step):
        return [r for _, batch, r in resumed[rank] if batch == step]
    return [r for step in range(resumed[0][-1][1] + 1) for rank in range(2)
            for r in step_rows(rank, step)]


def resumed_after_every_step(path, steps, keep_names=True):
    """The state after `steps` steps of 24 rows, each read by a loader resumed from the state of
    the step before; without keep_names each state is given as one saved before skipped_blocks
    was recorded."""
    state, records = None, []
    for _ in range(steps):
        loader = shardkit.Loader(path, batch_size=24, seed=2, threads=2, on_corrupt="skip")
        if state is not None:
            loader.load_state_dict(state)
        records += loader.next_with_records()[1]
        state = loader.state_dict()
        if not keep_names:
            del state["skipped_blocks"]
    return state, records


def main():
    clean, _ = pyutil.dataset(800, seed=4)
    path = os.path.join(pyutil.scratch("shardkit-corrupt-"), "ds")
    shutil.copytree(clean, path)
    shard, damaged, global_block = damage(path)
    try:
        steps(path, 1)
    except shardkit.ShardkitError as e:
        assert shard in str(e) and "block 0" in str(e), str(e)
    else:
        raise AssertionError("a damaged block was read without on_corrupt")
    whole, _ = steps(clean, 1)
    one, states = steps(path, 1, on_corrupt="skip")
    assert states[0]["blocks_skipped"] == 1, states
    assert [len(s) for s in one] == [len(s) for s in whole]
    flat = [r for s in one for r in s]
    assert not set(flat) & set(damaged)
    assert sum(a != b for a, b in zip(flat, (r for s in whole for r in s))) == len(damaged)
    two, _ = steps(path, 2, on_corrupt="skip")
    assert two == one
    # Resumed after every step, the damaged block, read by several steps, still counts once.
    state, records = resumed_after_every_step(path, len(one))
    assert records == flat
    assert state["blocks_skipped"] == 1 and state["skipped_blocks"] == [[0, global_block]], state
    # States saved before skipped_blocks was recorded still load (their count is added to).
    state, records = resumed_after_every_step(path, len(one), keep_names=False)
    assert records == flat and state["blocks_skipped"] >= 1, state
    fresh = shardkit.Loader(path, on_corrupt="skip")
    for bad in ([[1, 0]], [[0, 10**6]], [[0]], [["0", 1]], "01"):
        try:
            fresh.load_state_dict(dict(fresh.state_dict(), skipped_blocks=bad))
        except shardkit.ShardkitError as e:
            assert "skipped_blocks" in str(e), str(e)
        else:
            raise AssertionError(f"skipped_blocks={bad!r} was accepted")
    # shard-inspect order prints what such a loader yields: it reads the blocks to know.
    order = [pyutil.INSPECT, "order", path, "--seed", "2", "--on-corrupt", "skip"]
    printed = subprocess.run(order + ["--batch-size", "24"], check=True, capture_output=True,
                             text=True).stdout.split()
    assert [int(r) for r in printed] == flat
    rank1 = [r for s in two for r in s[12:]]
    printed = subprocess.run(order + ["--batch-size", "12", "--world-size", "2", "--rank", "1",
                                      "--start", "5", "--count", "30"],
                             check=True, capture_output=True, text=True).stdout.split()
    assert [int(r) for r in printed] == rank1[5:35]
    # --resume-from a state saved before the damaged block's rows: each rank's rows as loaders
    # resumed from it yield them, the rest of the uninterrupted stream, none damaged.
    cut = next(i for i, (a, b) in enumerate(zip(flat, (r for s in whole for r in s))) if a != b)
    cut //= 24
    after = resumed_order(path, cut, {})
    assert after[:len(flat) - 24 * cut] == flat[24 * cut:]
    assert not set(after) & set(damaged)
    # With a token budget, which the substitutes' lengths count towards.
    resumed_order(path, cut, {"max_tokens": 9000})
    try:
        shardkit.Loader(path, on_corrupt="ignore")
    except shardkit.ShardkitError as e:
        assert "on_corrupt" in str(e), str(e)
    else:
        raise AssertionError("on_corrupt='ignore' was accepted")
    print("7 passed, 0 failed")


if __name__ == "__main__":
    main()
