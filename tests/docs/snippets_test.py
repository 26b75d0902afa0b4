#!/usr/bin/python3
"""Every code block of README.md and lib/*/README.md, run as it is written there.

    snippets_test.py SOURCE_DIR BUILD_DIR

Blocks are read from the Markdown files on every run, so an edited snippet is tested as edited.
How a block is classified, by its fence's language and an HTML comment on the line above it:

  ```sh       a command sequence: `bash -euo pipefail` runs it from a scratch directory laid out
              as the repository root after scripts/demo.sh (build/, tests/, examples/, and
              demo-out/ made by scripts/demo_data.sh), with build/tools and build/tools/shardify
              on PATH, as the README's tour puts them;
  ```python   saved as a file and run there as `PYTHONPATH=build/python /usr/bin/python3 FILE`;
  ```cmake    a consumer project's CMakeLists.txt; each ```cpp block is saved as the source its
  ```cpp      add_executable names (with the cmake block of its own file, else README.md's),
              built against a prefix that `cmake --install BUILD_DIR` filled
              (CMAKE_PREFIX_PATH, nothing else set), and run there;
  ```text     output, diagrams and file formats: not run;
  ```json
  <!-- not run: REASON -->   above a block of a runnable language: not run, REASON says what it
              needs that a test does not have (a cluster, a bucket, the whole test suite).
Anything else fails the test: a fence without a language, another language, an indented code
block, a cpp block with no cmake block to build it.

Blocks run in the files' order (README.md first: its tour makes data/ for what follows) and each
file's own order. Then what they made and printed is checked against figures computed here from
the inputs (line counts, the loader's arithmetic) and against a second conversion by shardify.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

RUN_LANGUAGES = {"sh", "python", "cmake", "cpp"}
QUIET_LANGUAGES = {"text", "json"}
NOT_RUN = re.compile(r"^<!-- not run: (.+\S) -->$")


class Block:
    def __init__(self, path, line, language, code, not_run):
        self.path, self.line, self.language, self.code, self.not_run = (
            path, line, language, code, not_run)

    def __str__(self):
        return f"{self.path}:{self.line} ({self.language})"


def read_blocks(path, rel):
    """The fenced blocks of a Markdown file; fails on indented blocks and untagged fences."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, problems, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            language = line[3:].strip()
            start = i
            i += 1
            while i < len(lines) and lines[i].rstrip() != "```":
                i += 1
            if i == len(lines):
                problems.append(f"{rel}:{start + 1}: unclosed fence")
            marker = NOT_RUN.match(lines[start - 1]) if start else None
            block = Block(rel, start + 1, language, "\n".join(lines[start + 1:i]) + "\n",
                          marker.group(1) if marker else None)
            if language not in RUN_LANGUAGES | QUIET_LANGUAGES:
                problems.append(f"{block}: a fence needs one of the languages "
                                f"{sorted(RUN_LANGUAGES | QUIET_LANGUAGES)}")
            blocks.append(block)
        elif (line.startswith("    ") and line.strip() and i and not lines[i - 1].strip()
              and not in_list(lines, i)):
            problems.append(f"{rel}:{i + 1}: an indented code block: fence it with a language")
        i += 1
    return blocks, problems


def in_list(lines, i):
    """Whether line i continues a list item (its text is indented under the item)."""
    for j in range(i - 1, -1, -1):
        if lines[j].strip():
            return bool(re.match(r"\s*([-*]|\d+\.)\s", lines[j])) or lines[j].startswith("  ")
    return False


class Runner:
    def __init__(self, source, build):
        self.source, self.build = source, os.path.abspath(build)
        self.work = os.path.join(self.build, "test-tmp", "docs-snippets")
        self.root = os.path.join(self.work, "root")
        self.outputs = {}  # str(block) -> what it printed
        self.cmake = {}    # markdown file -> its latest cmake block
        self.prefix = None
        self.code_of = {}  # str(block) -> its code

    def lay_out(self):
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.root)
        os.symlink(self.build, os.path.join(self.root, "build"))
        for name in ("tests", "examples"):
            os.symlink(os.path.join(self.source, name), os.path.join(self.root, name))
        self.check_call(["bash", os.path.join(self.source, "scripts", "demo_data.sh"),
                         os.path.join(self.root, "demo-out")], "scripts/demo_data.sh")

    def env(self):
        env = dict(os.environ)
        tools = os.path.join(self.root, "build", "tools")
        env["PATH"] = f"{tools}:{tools}/shardify:{env['PATH']}"
        env.pop("PYTHONPATH", None)
        return env

    def check_call(self, cmd, what, env=None, stdout_only=False):
        """What the command printed (stdout and stderr, or stdout alone); fails on an error."""
        r = subprocess.run(cmd, cwd=self.root, env=env or self.env(), capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise AssertionError(f"{what} exited {r.returncode}:\n{(r.stdout + r.stderr)[-6000:]}")
        return r.stdout if stdout_only else r.stdout + r.stderr

    def run(self, block):
        started = time.monotonic()
        name = re.sub(r"\W", "_", f"{block.path}_{block.line}")
        if block.language == "sh":
            out = self.check_call(["bash", "-euo", "pipefail", "-c", block.code], str(block))
        elif block.language == "python":
            script = os.path.join(self.work, f"{name}.py")
            with open(script, "w") as f:
                f.write(block.code)
            env = self.env()
            env["PYTHONPATH"] = "build/python"
            out = self.check_call(["/usr/bin/python3", script], str(block), env=env,
                                  stdout_only=True)
        elif block.language == "cmake":
            return  # built with the cpp blocks
        else:
            out = self.run_cpp(block, name)
        self.outputs[str(block)] = out
        print(f"ran {block} in {time.monotonic() - started:.1f} s")

    def run_cpp(self, block, name):
        cmake = self.cmake.get(block.path) or self.cmake.get("README.md")
        assert cmake, f"{block}: no cmake block (in its file or in README.md) builds it"
        m = re.search(r"add_executable\((\S+)\s+(\S+)\)", cmake.code)
        assert m, f"{cmake}: no add_executable(NAME SOURCE)"
        if self.prefix is None:
            self.prefix = os.path.join(self.work, "prefix")
            self.check_call(["cmake", "--install", self.build, "--prefix", self.prefix],
                            "cmake --install")
        project = os.path.join(self.work, name)
        os.makedirs(project)
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write(cmake.code)
        with open(os.path.join(project, m.group(2)), "w") as f:
            f.write(block.code)
        configure = ["cmake", "-S", project, "-B", os.path.join(project, "build"), "-G", "Ninja",
                     f"-DCMAKE_PREFIX_PATH={self.prefix}"]
        if shutil.which("ccache"):  # speeds a re-run; the README's project is unchanged
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        self.check_call(configure, f"{block}: configuring {cmake}")
        self.check_call(["cmake", "--build", os.path.join(project, "build")], f"{block}: build")
        return self.check_call([os.path.join(project, "build", m.group(1))], str(block),
                               stdout_only=True)

    def output(self, path, containing):
        """What the block of `path` whose code contains `containing` printed."""
        for key, out in self.outputs.items():
            if key.startswith(path + ":") and containing in self.code_of[key]:
                return out
        raise AssertionError(f"no block of {path} containing {containing!r} ran")


def lines_of(path):
    with open(path, encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def inspect_json(r, *args):
    return json.loads(r.check_call([os.path.join(r.build, "tools", "shard-inspect"), *args],
                                   "shard-inspect"))


def shard_bytes(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d) if n.endswith(".shard")}


def check_tour(r, out):
    """The README's tour: train.jsonl alone, the mixture of a second corpus, the report."""
    root = r.root
    corpus = os.path.join(root, "demo-out", "corpus")
    for ds in ("train", "qa", "nli", "lm", "sft", "hard-ham"):
        r.check_call([os.path.join(r.build, "tools", "shard-inspect"), "verify",
                      os.path.join(root, "data", ds)], f"verify data/{ds}")
    train = inspect_json(r, "info", "--json", os.path.join(root, "data", "train"))
    # One record per mail of train.jsonl: the held-out and hard-ham mails are not in it.
    assert train["records"] == lines_of(os.path.join(corpus, "train.jsonl")), train["records"]
    assert train["dataset"]["source"]["files"] and len(train["dataset"]["source"]["files"]) == 1
    books = len(glob.glob(os.path.join(r.source, "tests", "data", "tokenizer", "en_*.txt")))
    lm = inspect_json(r, "info", "--json", os.path.join(root, "data", "lm"))
    assert lm["dataset"]["stats"]["examples"] == books, lm["dataset"]["stats"]
    sft = inspect_json(r, "info", "--json", os.path.join(root, "data", "sft"))["dataset"]
    assert sft["stats"]["examples"] == 5 and sft["task"]["packed"] and "loss_mask" in sft["fields"]
    assert "input text / output" in out and "records / on disk" in out
    # The mixture's first 8 samples, weights 3:1: 6 from data/train (source 0), 2 from hard-ham.
    mix = [line.split()[0] for line in out.splitlines() if re.fullmatch(r"[01] \d+", line)]
    assert sorted(mix) == ["0"] * 6 + ["1"] * 2, mix
    page = open(os.path.join(root, "data", "report.html"), encoding="utf-8").read()
    for chart in ("stored-lengths", "labels", "top-tokens", "mixture-steps"):
        assert f'id="{chart}"' in page, chart
    assert ">the  #1996<" in page and "Every checksum verified" in page  # decoded top tokens


def check_write_dataset(r, out):
    """data/mails is what shardify makes of the same JSONL: byte for byte."""
    root = r.root
    reference = os.path.join(r.work, "mails-by-shardify")
    r.check_call([os.path.join(r.build, "tools", "shardify", "shardify"), "--input",
                  os.path.join(root, "demo-out", "corpus", "train.jsonl"), "--task", "cls",
                  "--tokenizer", os.path.join(root, "demo-out", "tokenizers",
                                              "bert-base-uncased-vocab.txt"),
                  "--max-len", "256", "--out", reference], "shardify (reference)")
    assert shard_bytes(reference) == shard_bytes(os.path.join(root, "data", "mails"))
    records, skipped, kind = out.split()[-3:]
    books = inspect_json(r, "info", "--json", os.path.join(root, "data", "books"))
    assert int(records) == books["records"] and skipped == "0", out
    assert kind == books["dataset"]["tokenizer"]["type"], (kind, books["dataset"]["tokenizer"])


def check_training(r, python_out, cpp_out):
    """Both trainers: full batches only (mails // 32 steps an epoch), 3 epochs, and the loader's
    state after them: epoch 2 read to its end (the dropped rows count as consumed)."""
    root = r.root
    mails = lines_of(os.path.join(root, "demo-out", "corpus", "train.jsonl"))
    steps = mails // 32
    assert python_out.startswith(f"{mails} "), python_out[:200]
    assert "['ham', 'spam']" in python_out, python_out[:400]
    losses = [float(x) for x in re.findall(r"epoch \d: loss ([\d.]+)", python_out)]
    assert len(losses) == 3 and losses[-1] < 0.69, losses  # below chance: ln 2
    import torch
    state = torch.load(os.path.join(root, "ckpt.pt"))["loader"]
    position = {k: state[k] for k in ("seed", "epoch", "samples_consumed", "tokens_consumed")}
    assert position == {"seed": 1, "epoch": 2, "samples_consumed": mails, "tokens_consumed": 0}, state
    assert state["blocks_skipped"] == 0 and len(state["fingerprint"]) > 16, state
    assert re.findall(r"epoch \d: (\d+) steps", cpp_out) == [str(steps)] * 3, cpp_out
    assert f"state: epoch 2, {mails} samples" in cpp_out, cpp_out


def check_mixture(out):
    """Full batches' sources, 3:1 of 32, and the tokens: the budget plus less than one sample's
    (the epoch ends at the sample that reaches it, a row of at most 256 tokens)."""
    m = re.fullmatch(r"\[24, 8\] \[24, 8\] (\d+)\n", out)
    assert m, out
    assert 100_000 <= int(m.group(1)) < 100_000 + 256, out


def check_device_feed(r, out):
    """One epoch of 32-row batches, the last one short (no drop_last), on the CPU here, and the
    spam classifier learning: the epoch's mean loss below chance (ln 2)."""
    mails = lines_of(os.path.join(r.root, "demo-out", "corpus", "train.jsonl"))
    m = re.fullmatch(r"(\d+) batches on cpu, mean loss ([\d.]+)\n", out)
    assert m and int(m.group(1)) == -(-mails // 32), (out, mails)
    assert float(m.group(2)) < 0.69, out


def check_loader_readme(r, out):
    mails = lines_of(os.path.join(r.root, "demo-out", "corpus", "train.jsonl"))
    assert out == f"epoch 0: {mails - 10 * 32} rows\nepoch 1: {mails} rows\n", out


def check_shardify_readme(r):
    """The merged parts are the single conversion, byte for byte."""
    d = os.path.join(r.root, "data", "shardify-readme")
    single = os.path.join(r.work, "lm-single")
    r.check_call(["bash", "-c", "shardify --input tests/data/tokenizer/en_*.txt --task lm "
                  f"--tokenizer demo-out/tokenizers/gpt2.json --out {single}"], "single run")
    assert shard_bytes(single) == shard_bytes(os.path.join(d, "lm-merged"))
    for ds in ("lm", "cls", "pair", "qa"):
        assert inspect_json(r, "info", "--json", os.path.join(d, ds))["records"] > 0, ds


def main():
    source, build = os.path.abspath(sys.argv[1]), sys.argv[2]
    files = ["README.md"] + sorted(os.path.relpath(p, source)
                                   for p in glob.glob(os.path.join(source, "lib", "*", "README.md")))
    blocks, problems = [], []
    for rel in files:
        found, wrong = read_blocks(os.path.join(source, rel), rel)
        blocks += found
        problems += wrong
    assert not problems, "\n".join(problems)
    r = Runner(source, build)
    r.code_of.update((str(b), b.code) for b in blocks)
    r.cmake.update((b.path, b) for b in blocks if b.language == "cmake" and not b.not_run)
    r.lay_out()
    for b in blocks:
        if b.language in RUN_LANGUAGES and not b.not_run:
            r.run(b)
    ran = len(r.outputs) + len(r.cmake)
    skipped = [b for b in blocks if b.not_run or b.language in QUIET_LANGUAGES]
    check_tour(r, r.output("README.md", "shard-inspect report data/train"))
    check_write_dataset(r, r.output("README.md", "write_dataset(books()"))
    check_training(r, r.output("README.md", "class Classifier(torch.nn.Module)"),
                   r.output("README.md", "struct Classifier : torch::nn::Module"))
    check_mixture(r.output("README.md", 'Source("data/hard-ham", weight=1)'))
    check_device_feed(r, r.output("README.md", "non_blocking=True"))
    check_loader_readme(r, r.output("lib/loader/README.md", "loader.restore(saved)"))
    check_shardify_readme(r)
    for b in skipped:
        print(f"not run: {b}: {b.not_run or b.language}")
    print(f"{ran} blocks run, {len(skipped)} not run, of {len(blocks)} in {', '.join(files)}")
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
