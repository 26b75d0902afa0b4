"""The README's Python snippet, run verbatim on a dataset at data/train (as the tour makes it).

Only what the README leaves to the reader is supplied: rank, world_size and a model, here one
with HF's BertForSequenceClassification.forward signature, which rejects any key it does not
know, as the real model does.
"""
import contextlib
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
from test_hf_forward import BertForSequenceClassification  # noqa: E402

README = os.path.join(os.environ["SHARDKIT_SOURCE"], "README.md")
SNIPPET = os.path.join(os.environ["SHARDKIT_SOURCE"], "tests", "integration", "readme_snippet.py")


def main():
    code = subprocess.run([sys.executable, SNIPPET, README, "fenced", "python", "shardkit.Loader"],
                          check=True, capture_output=True, text=True).stdout
    work = pyutil.scratch("shardkit-readme-")
    labels = pyutil.make_corpus(os.path.join(work, "corpus.jsonl"), 200)
    pyutil.shardify(os.path.join(work, "corpus.jsonl"), os.path.join(work, "data", "train"))
    os.chdir(work)
    model = BertForSequenceClassification(2)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {"rank": 0, "world_size": 1, "model": model})
    assert printed.getvalue().startswith(f"{len(labels)} "), printed.getvalue()
    assert "['neg', 'pos']" in printed.getvalue(), printed.getvalue()
    assert sorted(model.seen) == ["labels", "token_type_ids"] and model.seen["labels"] is not None
    import torch
    state = torch.load(os.path.join(work, "ckpt.pt"))["loader"]
    assert state == {"seed": 1, "epoch": 2, "samples_consumed": len(labels), "tokens_consumed": 0,
                     "fingerprint": state["fingerprint"], "blocks_skipped": 0}, state  # epoch 2 done
    assert len(state["fingerprint"]) == 33, state
    # The mixture snippet, on data/train and a second dataset at data/valid.
    code = subprocess.run([sys.executable, SNIPPET, README, "fenced", "python", "shardkit.Source"],
                          check=True, capture_output=True, text=True).stdout
    pyutil.make_corpus(os.path.join(work, "valid.jsonl"), 80, seed=3)
    pyutil.shardify(os.path.join(work, "valid.jsonl"), os.path.join(work, "data", "valid"))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {"shardkit": shardkit_module(), "model": model})
    mix, tokens = printed.getvalue().rsplit("]", 1)
    # 280 records, weighted 3:1 over 280 samples: the last batch of 24 holds 18 and 6.
    assert mix + "]" == "[18, 6]", printed.getvalue()
    assert int(tokens) == sum(int(ds["length"]) for ds in all_lengths(work)), printed.getvalue()
    print("2 passed, 0 failed")


def shardkit_module():
    import shardkit
    return shardkit


def all_lengths(work):
    import shardkit
    mix = shardkit.Loader([shardkit.Source(os.path.join(work, "data", "train"), weight=3),
                           shardkit.Source(os.path.join(work, "data", "valid"), weight=1)],
                          batch_size=1000, seed=1, include_metadata=True)
    return [{"length": n} for batch in mix for n in batch["length"].tolist()]


if __name__ == "__main__":
    main()
