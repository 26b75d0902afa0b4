"""Mixtures and budgets from Python: one source with weight 1 is the single-dataset stream; the
mix holds its shares at every prefix and equals `shard-inspect order --mixture`; state_dict
resumes with other threads and world sizes; max_tokens ends the epoch on the same step for every
rank; a cls + lm mixture is refused naming both datasets."""
import json
import os
import random
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402


def stream(loader):
    """Every row as (source, record), with each batch's tensors checked on the way."""
    rows = []
    while True:
        item = loader.next_with_sources()
        if item is None:
            return rows
        batch, pairs = item
        if "source" in batch:
            assert batch["source"].dtype == torch.int64
            assert batch["source"].tolist() == [s for s, _ in pairs]
        rows.extend(pairs)


def test_single_source_is_the_dataset(a):
    want = [r for _, r in stream(shardkit.Loader(a, batch_size=16, seed=3, epoch=1, threads=2))]
    for source in [shardkit.Source(a, weight=1), {"path": a, "repeat": 1}, a]:
        got = stream(shardkit.Loader([source], batch_size=16, seed=3, epoch=1, threads=1))
        assert got == [(0, r) for r in want]


def test_shares_labels_and_order_cli(a, b, labels_a, labels_b, work):
    spec = os.path.join(work, "mix.json")
    with open(spec, "w") as f:
        json.dump({"seed": 9, "sources": [{"path": os.path.relpath(a, work), "weight": 0.75},
                                          {"path": os.path.relpath(b, work), "weight": 0.25}]}, f)
    sources, options = shardkit.read_mixture(spec)
    assert options == {"seed": 9}
    loader = shardkit.Loader(sources, batch_size=32, threads=2, source_field=True, **options)
    assert loader.epoch_samples == 1000 + 400
    rows = []
    counts = [0, 0]
    while True:
        item = loader.next_with_sources()
        if item is None:
            break
        batch, pairs = item
        for i, (s, r) in enumerate(pairs):
            # The label of each row comes from the corpus generator of its own dataset.
            assert int(batch["labels"][i]) == (labels_b if s else labels_a)[r]
            counts[s] += 1
            k = counts[0] + counts[1]
            assert abs(counts[0] - 0.75 * k) < 1 and abs(counts[1] - 0.25 * k) < 1, (k, counts)
        rows.extend(pairs)
    assert counts == [1050, 350]
    out = subprocess.run([pyutil.INSPECT, "order", "--mixture", spec, "--batch-size", "32"],
                         check=True, capture_output=True, text=True).stdout.split("\n")
    assert [tuple(map(int, line.split())) for line in out if line] == rows


def test_resume_other_threads_and_world(a, b):
    sources = [shardkit.Source(a, repeat=0.5), shardkit.Source(b, repeat=2)]

    def steps(world, batch, state=None, limit=10 ** 9, threads=2):
        ranks = [shardkit.Loader(sources, batch_size=batch, rank=r, world_size=world, seed=4, epoch=2,
                                 threads=threads, drop_last=True) for r in range(world)]
        if state:
            for loader in ranks:
                loader.load_state_dict(state)
        out = []
        while len(out) < limit:
            step = [loader.next_with_sources() for loader in ranks]
            if step[0] is None:
                assert all(s is None for s in step)
                break
            out.append([pair for _, pairs in step for pair in pairs])
        return out, ranks[0].state_dict()

    whole, _ = steps(2, 12)
    assert len(whole) == (500 + 800) // 24
    rng = random.Random(5)
    for trial in range(3):
        cut = rng.randrange(1, len(whole))
        head, state = steps(2, 12, limit=cut, threads=1 + trial)
        assert state["samples_consumed"] == cut * 24
        tail, _ = steps(3 if trial % 2 else 4, 8 if trial % 2 else 6, state, threads=3 - trial)
        assert head + tail == whole


def test_max_tokens(a, b):
    budget = 3000
    per_rank = []
    for rank in range(2):
        loader = shardkit.Loader([shardkit.Source(a, weight=1), shardkit.Source(b, weight=1)],
                                 batch_size=8, rank=rank, world_size=2, max_tokens=budget,
                                 include_metadata=True, seed=1)
        lengths = [batch["length"].tolist() for batch in loader]
        per_rank.append(lengths)
        state = loader.state_dict()
        assert state["tokens_consumed"] >= budget
    assert len(per_rank[0]) == len(per_rank[1]) < len(loader)
    step_tokens = [sum(x) + sum(y) for x, y in zip(*per_rank)]
    assert sum(step_tokens[:-1]) < budget <= sum(step_tokens) == state["tokens_consumed"]


def test_cls_and_lm_are_refused(a, work):
    corpus = os.path.join(work, "lm.jsonl")
    with open(corpus, "w") as f:
        for i in range(50):
            f.write(json.dumps({"text": f"document {i} is about the weather"}) + "\n")
    lm = os.path.join(work, "lm")
    subprocess.run([pyutil.SHARDIFY, "--input", corpus, "--task", "lm", "--tokenizer", pyutil.VOCAB,
                    "--text-field", "text", "--max-len", "64", "--out", lm, "--force"],
                   check=True, capture_output=True)
    try:
        shardkit.Loader([shardkit.Source(a, weight=1), shardkit.Source(lm, weight=1)])
    except shardkit.ShardkitError as e:
        message = str(e)
        assert a in message and lm in message and "'cls'" in message and "'lm'" in message, message
    else:
        raise AssertionError("a cls + lm mixture was accepted")


def main():
    a, labels_a = pyutil.dataset(1000, seed=1)
    b, labels_b = pyutil.dataset(400, seed=2)
    work = pyutil.scratch("shardkit-mix-")
    tests = [lambda: test_single_source_is_the_dataset(a),
             lambda: test_shares_labels_and_order_cli(a, b, labels_a, labels_b, work),
             lambda: test_resume_other_threads_and_world(a, b),
             lambda: test_max_tokens(a, b),
             lambda: test_cls_and_lm_are_refused(a, work)]
    for t in tests:
        t()
    print(f"{len(tests)} passed, 0 failed")


if __name__ == "__main__":
    main()
