"""examples/python/train_classifier.py: a run stopped mid-epoch and resumed from its checkpoint
continues with exactly the batches of an uninterrupted run, and the loss falls."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402

EXAMPLE = os.path.join(os.environ["SHARDKIT_SOURCE"], "examples", "python", "train_classifier.py")


def run(*args):
    out = subprocess.run([sys.executable, EXAMPLE, *args], check=True, capture_output=True, text=True)
    return out.stdout


def batches(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def main():
    tmp = pyutil.scratch("shardkit-resume-")
    pyutil.make_corpus(os.path.join(tmp, "train.jsonl"), 1200, seed=1)
    pyutil.make_corpus(os.path.join(tmp, "valid.jsonl"), 300, seed=2)
    for split in ("train", "valid"):
        pyutil.shardify(os.path.join(tmp, f"{split}.jsonl"), os.path.join(tmp, split))
    common = ["--train", os.path.join(tmp, "train"), "--valid", os.path.join(tmp, "valid"),
              "--epochs", "2", "--batch-size", "32"]

    full_log = os.path.join(tmp, "full.jsonl")
    out = run(*common, "--log-batches", full_log)
    accuracy = float(out.strip().splitlines()[-1].split("valid_accuracy ")[1].split()[0])
    assert accuracy > 0.9, out  # sentiment words decide the label: learnable

    # 1200 records / 32 = 37 steps an epoch: stop at 50 (mid second epoch), resume.
    ckpt = os.path.join(tmp, "ckpt.pt")
    part_log = os.path.join(tmp, "part.jsonl")
    run(*common, "--log-batches", part_log, "--checkpoint", ckpt, "--checkpoint-every", "25",
        "--stop-after", "50")
    run(*common, "--log-batches", part_log, "--resume", ckpt)
    full, part = batches(full_log), batches(part_log)
    assert [b["records"] for b in part[:50]] == [b["records"] for b in full[:50]]
    resumed = part[50:]
    assert [b["step"] for b in resumed] == [b["step"] for b in full[50:]]
    assert [b["records"] for b in resumed] == [b["records"] for b in full[50:]], "resume diverged"
    print("2 passed, 0 failed")


if __name__ == "__main__":
    main()
