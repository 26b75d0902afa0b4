"""Documented behaviour of the Python module that had no test (issue 28, items 2 and 20):

- chat templates in write_dataset: an exception a template raises is a row error named by its
  row (skippable), max_render_bytes and render_timeout bound a rendering, and Ctrl-C during a
  template that loops forever raises KeyboardInterrupt within a second, leaves no dataset or
  staging directory, and ends the renderer (a real SIGINT to a child Python);
- the GIL is released while write_dataset tokenizes (a Python thread beside it gets its share of
  the CPU) and while Python waits on the loader for blocks from a slow server (the server runs
  on Python threads of the same process);
- sft_labels=False: no derived labels, and MLM on an sft dataset;
- datasets.Dataset rows. The `datasets` library is not in Debian, so unless it is installed the
  test uses a stand-in with the interface write_dataset relies on (iteration that starts over,
  yielding dicts; with_format("numpy") yielding NumPy values), and says so.
"""
import http.server
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy
import shardkit

import pyutil

VOCAB = pyutil.VOCAB
WORDS = "the of and to in data shard model token block train record file loader hello world".split()


def sentence(rng, lo, hi):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(lo, hi)))


def config(tmp, template):
    path = os.path.join(tmp, f"config-{abs(hash(template))}.json")
    with open(path, "w") as f:
        json.dump({"chat_template": template, "eos_token": "[SEP]"}, f)
    return path


def chat(content):
    return {"messages": [{"role": "user", "content": content},
                         {"role": "assistant", "content": "the data"}]}


LOOP = ("{% if messages[0].content == 'loop' %}{% for i in range(100000) %}"
        "{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}"
        "{% for m in messages %}[CLS] {{ m.content }} [SEP] {% endfor %}")
RAISES = ("{% if messages[0].content == 'zero' %}{{ 1 / 0 }}{% endif %}"
          "{% for m in messages %}[CLS] {{ m.content }} [SEP] {% endfor %}")


def test_template_errors_and_limits(tmp):
    sft = dict(task="sft", tokenizer=VOCAB, messages_field="messages", progress=False,
               max_len=64)
    rows = [chat("hello"), chat("zero"), chat("world")]
    template = config(tmp, RAISES)
    try:
        shardkit.write_dataset(rows, os.path.join(tmp, "raises"), chat_template=template, **sft)
        raise AssertionError("a ZeroDivisionError in the template was not an error")
    except shardkit.ShardkitError as e:
        assert "rows: row 1: chat template: ZeroDivisionError: division by zero" in str(e), str(e)
    summary = shardkit.write_dataset(rows, os.path.join(tmp, "raises-skip"), chat_template=template,
                                     on_error="skip", **sft)
    assert summary["records"] == 2 and summary["skipped"] == 1, summary
    # max_render_bytes: the 200-byte rendering of a long message is refused below 200, not above.
    long_rows = [chat("hello " * 30)]
    plain = config(tmp, "{% for m in messages %}[CLS] {{ m.content }} [SEP] {% endfor %}")
    try:
        shardkit.write_dataset(long_rows, os.path.join(tmp, "bytes"), chat_template=plain,
                               max_render_bytes=100, **sft)
        raise AssertionError("max_render_bytes=100 let a longer rendering through")
    except shardkit.ShardkitError as e:
        assert "exceeds 100 bytes (max_render_bytes)" in str(e), str(e)
    summary = shardkit.write_dataset(long_rows, os.path.join(tmp, "bytes-ok"), chat_template=plain,
                                     max_render_bytes=1000, **sft)
    assert summary["records"] == 1, summary
    # render_timeout: a template that never ends is that row's error after 1 s.
    start = time.monotonic()
    summary = shardkit.write_dataset([chat("hello"), chat("loop")], os.path.join(tmp, "loop"),
                                     chat_template=config(tmp, LOOP), render_timeout=1,
                                     on_error="skip", **sft)
    took = time.monotonic() - start
    assert summary["records"] == 1 and summary["skipped"] == 1, summary
    assert "took longer than 1 s (render_timeout)" in summary["errors"][0], summary["errors"]
    print(f"  templates: a ZeroDivisionError is row 1's error; max_render_bytes and "
          f"render_timeout bound a rendering (the endless one stopped, run in {took:.1f} s)")


# The child: write_dataset over a template that loops forever, until SIGINT.
_INTERRUPTED_CHILD = r"""
import os, sys, time, shardkit
tmp, vocab, template = sys.argv[1:4]
try:
    shardkit.write_dataset([{"messages": [{"role": "user", "content": "loop"}]}],
                           os.path.join(tmp, "out", "ds"), task="sft", tokenizer=vocab,
                           messages_field="messages", chat_template=template, progress=False,
                           render_timeout=3600)
    print("finished")
except KeyboardInterrupt:
    print("KeyboardInterrupt", time.monotonic())  # the clock is the system's: the parent reads it
"""


def children_of(pid):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] not in "ZX":
            found.append(int(name))
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def test_ctrl_c_during_an_endless_template(tmp):
    work = os.path.join(tmp, "ctrl-c")
    os.makedirs(os.path.join(work, "out"))
    child = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_CHILD, work, VOCAB,
                              config(tmp, LOOP)], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    renderers = []
    while not renderers and time.monotonic() < deadline:
        time.sleep(0.1)
        renderers = [p for p in children_of(child.pid) if alive(p)]
    assert len(renderers) == 1, renderers
    time.sleep(0.5)  # the renderer is in the loops
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    took = float(out.split()[-1]) - sent if out.startswith("KeyboardInterrupt") else None
    gone = not alive(renderers[0])
    if not gone:
        os.kill(renderers[0], signal.SIGKILL)
    assert out.startswith("KeyboardInterrupt"), out
    assert took < 1.0, f"KeyboardInterrupt came {took:.2f} s after SIGINT"
    assert gone, "the renderer outlived the interrupted conversion"
    assert os.listdir(os.path.join(work, "out")) == [], os.listdir(os.path.join(work, "out"))
    print(f"  SIGINT in an endless template: KeyboardInterrupt in {took:.2f} s, renderer ended, "
          "nothing left")


class _Spinner:
    """A Python thread that computes as fast as it can. It runs only while it holds the GIL, so
    its CPU time during a call, as a share of the whole process's, says whether the call let
    Python run: a call that held the GIL throughout would leave it none. CPU time, unlike wall
    time, does not count the time the machine's other work takes the cores away."""

    def __init__(self):
        self._go, self._stop = threading.Event(), threading.Event()
        self.cpu = 0.0
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        started = time.thread_time()
        while not self._stop.is_set():
            sum(range(100))
        self.cpu = time.thread_time() - started

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.cpu


def test_gil_released_while_write_dataset_tokenizes(tmp):
    rng = random.Random(3)
    rows = [{"text": sentence(rng, 200, 400)} for _ in range(6000)]
    # A conversion long enough to show anything: the rows are repeated until it takes 0.3 s of
    # CPU (the tokenizer's speed differs from machine to machine).
    for _ in range(5):
        cpu = time.process_time()
        spinner = _Spinner()
        shardkit.write_dataset(rows, os.path.join(tmp, "gil"), tokenizer=VOCAB, threads=1,
                               progress=False, force=True)
        spun = spinner.stop()
        cpu = time.process_time() - cpu
        if cpu - spun > 0.3:
            break
        rows = rows * 4
    # The spinner and the converter's thread each want a core; with the GIL held while it
    # tokenizes, the spinner would get none of it (a share near 0 instead of near a half).
    share = spun / cpu
    assert share > 0.15, f"a Python thread had {share:.0%} of the CPU time of write_dataset"
    print(f"  write_dataset used {cpu - spun:.2f} s of CPU; a Python thread beside it "
          f"{spun:.2f} s ({share:.0%} of the process)")


class _SlowRangeHandler(pyutil.RangeHandler):
    """0.05 s before each answer, so that the loader waits on its blocks."""

    def about_to_answer(self, body):
        time.sleep(0.05)


def test_gil_released_while_python_waits_on_the_loader(tmp):
    # The server runs on Python threads of this process: it answers only while the loader, and
    # the Python thread waiting on it, leave the GIL free. Held anywhere along the way, the GIL
    # would stall the first request until its timeout, and the loader would raise.
    local, _ = pyutil.dataset(n=3000, seed=4)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0),
        lambda *a, **k: _SlowRangeHandler(*a, directory=os.path.dirname(local), **k))
    serving = threading.Thread(target=server.serve_forever)
    serving.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{os.path.basename(local)}"
        options = dict(batch_size=64, shuffle=True, seed=5, threads=2)
        loader = shardkit.Loader(url, remote_timeout_ms=20000, remote_retries=0, **options)
        remote = [b["input_ids"].tolist() for b in loader]
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
    want = [b["input_ids"].tolist() for b in shardkit.Loader(local, **options)]
    assert remote == want, "the batches over HTTP differ from the local ones"
    print(f"  {len(remote)} batches from a server on this process's own Python threads")


def test_sft_labels_false(tmp):
    rng = random.Random(9)
    rows = [{"prompt": sentence(rng, 3, 12), "response": sentence(rng, 3, 12)} for _ in range(200)]
    out = os.path.join(tmp, "sft")
    shardkit.write_dataset(rows, out, task="sft", tokenizer=VOCAB, max_len=48, progress=False)
    batch = next(iter(shardkit.Loader(out, batch_size=16, shuffle=False)))
    ids, labels = batch["input_ids"], batch["labels"]
    assert ((labels == -100) | (labels == ids)).all() and (labels != -100).any()
    bare = next(iter(shardkit.Loader(out, batch_size=16, shuffle=False, sft_labels=False)))
    assert "labels" not in bare and bare["input_ids"].equal(ids), sorted(bare)
    try:
        shardkit.Loader(out, batch_size=16, mlm_probability=0.15)
        raise AssertionError("MLM over sft labels was accepted")
    except shardkit.ShardkitError as e:
        assert "sft_labels=false" in str(e), str(e)
    mlm = next(iter(shardkit.Loader(out, batch_size=16, shuffle=False, sft_labels=False,
                                    mlm_probability=0.15, seed=1)))
    masked = mlm["labels"] != -100
    assert masked.any() and mlm["labels"][masked].equal(ids[masked]), "MLM labels are not the ids"
    print("  sft_labels=False: no labels; MLM on an sft dataset labels its masked ids")


class _StandInDataset:
    """What write_dataset uses of a datasets.Dataset: a fresh iterator of dicts each time, and
    with_format("numpy") giving NumPy scalars and arrays."""

    def __init__(self, columns, numpy_format=False):
        self._columns, self._numpy = columns, numpy_format

    def __len__(self):
        return len(next(iter(self._columns.values())))

    def __iter__(self):
        for i in range(len(self)):
            row = {k: v[i] for k, v in self._columns.items()}
            if self._numpy:
                row = {k: numpy.asarray(v) for k, v in row.items()}
            yield row

    def with_format(self, kind):
        return _StandInDataset(self._columns, numpy_format=kind == "numpy")


def test_datasets_rows(tmp):
    rng = random.Random(12)
    texts = [sentence(rng, 3, 30) for _ in range(500)]
    labels = [rng.randrange(3) for _ in range(500)]
    try:
        import datasets
        source = datasets.Dataset.from_dict({"text": texts, "label": labels})
        kind = "datasets.Dataset"
    except ImportError:
        source = _StandInDataset({"text": texts, "label": labels})
        kind = "a stand-in (the datasets library is not installed; it is not in Debian)"
    jsonl = os.path.join(tmp, "rows.jsonl")
    with open(jsonl, "w") as f:
        for t, lab in zip(texts, labels):
            f.write(json.dumps({"text": t, "label": lab}) + "\n")
    cli = os.path.join(tmp, "rows-cli")
    done = subprocess.run([pyutil.SHARDIFY, "--input", jsonl, "--task", "cls", "--tokenizer", VOCAB,
                           "--max-len", "32", "--out", cli], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name, rows in (("rows", source), ("numpy", source.with_format("numpy"))):
        # cls without labels= reads the rows twice: the Dataset must start over.
        out = os.path.join(tmp, "rows-" + name)
        shardkit.write_dataset(rows, out, task="cls", tokenizer=VOCAB, max_len=32, progress=False)
        for shard in sorted(os.listdir(cli)):
            if shard != "manifest.json":
                with open(os.path.join(cli, shard), "rb") as a, open(os.path.join(out, shard), "rb") as b:
                    assert a.read() == b.read(), (name, shard)
    print(f"  {kind}: rows and with_format('numpy') convert as the same rows as JSONL")


def main():
    tmp = tempfile.mkdtemp(prefix="shardkit-documented-")
    try:
        test_template_errors_and_limits(tmp)
        test_ctrl_c_during_an_endless_template(tmp)
        test_gil_released_while_write_dataset_tokenizes(tmp)
        test_gil_released_while_python_waits_on_the_loader(tmp)
        test_sft_labels_false(tmp)
        test_datasets_rows(tmp)
        print("documented behaviour: ok")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
