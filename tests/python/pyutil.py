"""Shared by the Python tests: a small learnable corpus shardified with the real tool."""
import atexit
import http.server
import json
import os
import random
import shutil
import subprocess
import tempfile

BIN = os.environ["SHARDKIT_BIN"]
VOCAB = os.environ["SHARDKIT_VOCAB"]
SHARDIFY = os.path.join(BIN, "tools", "shardify", "shardify")
INSPECT = os.path.join(BIN, "tools", "shard-inspect")

POSITIVE = "good great fine excellent lovely happy bright warm".split()
NEGATIVE = "bad awful poor terrible sad gloomy cold broken".split()
NEUTRAL = "the a of and to in is it that was for on with as".split()


def make_corpus(path, n, seed=0):
    """Sentences whose label is which sentiment word list they draw from: learnable, and the
    label of every line is known here independently of shardkit."""
    rng = random.Random(seed)
    labels = []
    with open(path, "w") as f:
        for _ in range(n):
            label = rng.randrange(2)
            words = [rng.choice(NEUTRAL) for _ in range(rng.randrange(3, 40))]
            for _ in range(rng.randrange(1, 4)):
                words.insert(rng.randrange(len(words) + 1), rng.choice(POSITIVE if label else NEGATIVE))
            f.write(json.dumps({"text": " ".join(words), "label": "pos" if label else "neg"}) + "\n")
            labels.append(label)
    return labels


def shardify(jsonl, out, *extra):
    subprocess.run([SHARDIFY, "--input", jsonl, "--task", "cls", "--tokenizer", VOCAB,
                    "--labels", "neg,pos", "--max-len", "64", "--block-size", "2048",
                    "--shard-size", "20000", "--out", out, "--force", *extra],
                   check=True, capture_output=True)


def scratch(prefix):
    """A fresh temporary directory, removed when the test process exits."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def dataset(n=1000, seed=0):
    """A fresh temporary dataset of n examples; returns (dir, labels)."""
    tmp = scratch("shardkit-py-")
    labels = make_corpus(os.path.join(tmp, "corpus.jsonl"), n, seed)
    shardify(os.path.join(tmp, "corpus.jsonl"), os.path.join(tmp, "ds"))
    return os.path.join(tmp, "ds"), labels


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with single Range requests (206), which shardkit's reader needs and Python's
    http.server lacks; about_to_answer(body) runs before each GET's answer (a delay, a count)."""

    def log_message(self, *args):
        pass

    def about_to_answer(self, body):
        pass

    def do_GET(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.about_to_answer(b"")
            self.send_error(404)
            return
        with open(path, "rb") as f:
            data = f.read()
        status, body, spec = 200, data, self.headers.get("Range")
        if spec and spec.startswith("bytes="):
            first, _, last = spec[6:].partition("-")
            first, last = int(first), min(int(last), len(data) - 1) if last else len(data) - 1
            status, body = 206, data[first:last + 1]
        self.about_to_answer(body)
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
