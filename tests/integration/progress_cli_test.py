#!/usr/bin/python3
"""Progress lines of shardify, shardify merge, shard-inspect verify and report when stderr is a
pipe (a log), under each --progress mode. Expected totals come from the input files' sizes and
from the manifests read here with Python's json, not from the tools' own summaries.

    progress_cli_test.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^(?P<what>[a-z: ]+): (?P<done>[\d,.]+) of (?P<total>[\d,.]+) (?P<unit>MB|\w+) "
                  r"\((?P<share>[\d.]+)%\), [\d,.]+ (?:MB|\w+)/s(?:, (?:ETA|took) \w+)?(?:; .*)?$")


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"
    return r.stdout, r.stderr


def parsed(stderr, what):
    lines = [line for line in stderr.splitlines() if line.startswith(what + ": ")]
    for line in lines:
        assert LINE.match(line), line
    return lines


def blocks_of(dataset):
    """(blocks, records) of a dataset, from its manifest: every block full but a shard's last."""
    with open(os.path.join(dataset, "manifest.json")) as f:
        m = json.load(f)
    per_block = m["records_per_block"]
    return sum(-(-s["records"] // per_block) for s in m["shards"]), sum(s["records"] for s in m["shards"])


def main():
    source, build = sys.argv[1], sys.argv[2]
    shardify = os.path.join(build, "tools", "shardify", "shardify")
    inspect = os.path.join(build, "tools", "shard-inspect")
    work = os.path.join(build, "test-tmp", "progress-cli")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run("node", os.path.join(source, "tests", "oracle", "make_tokenizers.js"), work)
    vocab = os.path.join(work, "bert-base-uncased-vocab.txt")
    rng = random.Random(3)
    words = "a the of sea ship whale harbour captain storm sail rope deck".split()
    inputs = []
    for part in range(2):
        path = os.path.join(work, f"in{part}.jsonl")
        with open(path, "w") as f:
            for _ in range(6000):
                f.write(json.dumps({"text": " ".join(rng.choice(words) for _ in range(60))}) + "\n")
        inputs.append(path)
    size_mb = f"{sum(os.path.getsize(p) for p in inputs) / 1e6:.1f}"
    common = ["--task", "lm", "--tokenizer", vocab, "--max-len", "64", "--block-size", "8192"]

    # always: lines on the way (every 0.001 s at most) and a last one with the input's size.
    out, err = run(shardify, "--input", *inputs, *common, "--out", os.path.join(work, "always"),
                   "--progress", "always", "--progress-interval", "0.001")
    lines = parsed(err, "shardify")
    assert len(lines) >= 2, err
    last = LINE.match(lines[-1])
    assert last["done"] == last["total"] == size_mb and last["share"] == "100.0", (lines[-1], size_mb)
    assert " took " in lines[-1] and re.search(r"; [\d,]+ records$", lines[-1]), lines[-1]
    assert "\r" not in err and not any(LINE.match(line) for line in out.splitlines()), out
    # auto, stderr a pipe: a line every 30 s, so none for this short run; never: none.
    for mode in ("auto", "never"):
        _, err = run(shardify, "--input", *inputs, *common, "--out", os.path.join(work, mode),
                     "--progress", mode)
        assert not parsed(err, "shardify"), (mode, err)
    _, err = run(shardify, "--input", *inputs, *common, "--out", os.path.join(work, "auto-fast"),
                 "--progress-interval", "0.001")
    assert parsed(err, "shardify") and " took " not in err, err  # auto: lines, no last one

    # One whole-file document, cut into parts that threads tokenize: its progress rises part by
    # part, not 100% from the first line (the file is read, or mapped, at once). Plain and .gz.
    document = os.path.join(work, "book.txt")
    with open(document, "w") as f:
        for _ in range(40000):
            f.write(" ".join(rng.choice(words) for _ in range(12)) + "\n")
    subprocess.run(["gzip", "-k", "-f", document], check=True)
    for path in (document, document + ".gz"):
        _, err = run(shardify, "--input", path, *common, "--out", path + ".ds", "--threads", "1",
                     "--progress", "always", "--progress-interval", "0.0001")
        shares = [float(LINE.match(line)["share"]) for line in parsed(err, "shardify")]
        assert len(shares) >= 3 and shares == sorted(shares), (path, shares)
        assert shares[0] < 50 and shares[-1] == 100.0, (path, shares)

    # merge: records of the parts, merged.
    parts = []
    for i in range(2):
        parts.append(os.path.join(work, f"part{i}"))
        run(shardify, "--input", *inputs, *common, "--part", f"{i}/2", "--out", parts[-1],
            "--progress", "never")
    records = sum(blocks_of(p)[1] for p in parts)
    _, err = run(shardify, "merge", os.path.join(work, "merged"), *parts, "--progress", "always",
                 "--progress-interval", "0.001")
    last = LINE.match(parsed(err, "shardify merge")[-1])
    assert last["done"] == last["total"] == f"{records:,}" and last["unit"] == "records", err

    # verify and report: blocks of the manifest.
    blocks, _ = blocks_of(os.path.join(work, "merged"))
    for cmd, what in ((["verify"], "verify"),
                      (["report", "-o", os.path.join(work, "r.html")], "report: verify")):
        out, err = run(inspect, *cmd, os.path.join(work, "merged"), "--progress", "always",
                       "--progress-interval", "0.001")
        last = LINE.match(parsed(err, what)[-1])
        assert last["done"] == last["total"] == f"{blocks:,}" and last["unit"] == "blocks", err
    print(f"input {size_mb} MB, {records} records, {blocks} blocks: progress lines as expected")
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
