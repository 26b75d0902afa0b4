"""`pip install .` of the source tree into a fresh venv by the README's own commands, run as
written (Debian's /usr/bin/python3, system site packages for its torch and numpy,
--no-build-isolation; offline: PIP_NO_INDEX=1) from a directory of links to the repository's
files, so that the venv and pip's build-pip/ land there; then, from a directory outside the tree:
import, the public namespace, the console scripts, a JSONL and a Hub-layout Parquet conversion
with the installed shardify, and a loader pass whose labels match the corpus generator.

    SHARDKIT_SOURCE=. SHARDKIT_VOCAB=vocab.txt python3 tests/python/test_pip_install.py
"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "docs"))
import pyutil  # noqa: E402  (make_corpus only: the tools used are the installed ones)
from duckdb_parquet import write_parquet  # noqa: E402
from snippets_test import read_blocks  # noqa: E402

SOURCE = os.environ["SHARDKIT_SOURCE"]
VOCAB = os.environ["SHARDKIT_VOCAB"]


def run(*cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def readme_pip_block():
    blocks, problems = read_blocks(os.path.join(SOURCE, "README.md"), "README.md")
    found = [b for b in blocks if "pip install --no-build-isolation" in b.code]
    assert len(found) == 1 and not problems, (found, problems)
    return found[0].code


def repository_view(work):
    """`.` for the README's commands: links to the repository's entries (its build trees, venv
    and data left out), so that what pip and venv write stays in `work`."""
    view = os.path.join(work, "repo")
    os.makedirs(view)
    for name in os.listdir(SOURCE):
        if not (name.startswith("build") or name in ("venv", "data", "demo-out", ".git")):
            os.symlink(os.path.join(SOURCE, name), os.path.join(view, name))
    return view


def main():
    # Inside the build tree, beside the Release build: the compiler cache then finds the same
    # source paths it compiled for that build.
    work = os.path.join(os.environ["SHARDKIT_BIN"], "test-tmp", "pip-install")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        repo = repository_view(work)
        venv = os.path.join(repo, "venv")
        python, bindir = os.path.join(venv, "bin", "python"), os.path.join(venv, "bin")
        env = dict(os.environ, SHARDKIT_BUILD_JOBS=os.environ.get("SHARDKIT_BUILD_JOBS", "2"),
                   PIP_NO_INDEX="1")
        env.pop("PYTHONPATH", None)
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_pip_block()], cwd=repo, env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0, f"the README's pip commands failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        assert "--input" in r.stdout, "venv/bin/shardify --help printed no usage"

        # Everything below runs outside the source tree, with nothing on PYTHONPATH.
        outside = os.path.join(work, "outside")
        os.makedirs(outside)
        clean = dict(os.environ)
        clean.pop("PYTHONPATH", None)
        info = json.loads(run(python, "-c", (
            "import json, shardkit; print(json.dumps({'file': shardkit.__file__, "
            "'public': sorted(n for n in dir(shardkit) if not n.startswith('_')), "
            "'all': sorted(shardkit.__all__)}))"), cwd=outside, env=clean))
        assert info["file"].startswith(venv), info["file"]
        # No leaked imports (json, np, torch): the public names are exactly __all__.
        assert info["public"] == info["all"], info

        shardify, inspect = os.path.join(bindir, "shardify"), os.path.join(bindir, "shard-inspect")
        assert "--where" in run(shardify, "--help", cwd=outside, env=clean)
        run(inspect, "--help", cwd=outside, env=clean)
        package = os.path.dirname(info["file"])
        # The package is typed: the generated stub and the marker are installed with it.
        for typing_file in ("__init__.pyi", "py.typed"):
            assert os.path.exists(os.path.join(package, typing_file)), typing_file
        for tool in glob.glob(os.path.join(package, "_native", "bin", "*")):
            # The installed programs must not depend on the source or build tree.
            dynamic = run("readelf", "-d", tool)
            assert os.path.realpath(SOURCE) not in dynamic, dynamic

        jsonl = os.path.join(outside, "corpus.jsonl")
        labels = pyutil.make_corpus(jsonl, 300, seed=3)
        common = ["--task", "cls", "--tokenizer", VOCAB, "--labels", "neg,pos", "--max-len", "64",
                  "--block-size", "2048"]
        run(shardify, "--input", jsonl, *common, "--out", "from-jsonl", cwd=outside, env=clean)
        run(inspect, "verify", "from-jsonl", cwd=outside, env=clean)

        libduckdb = glob.glob(os.path.join(package, "_native", "lib", "libduckdb.so"))
        if os.environ.get("SHARDKIT_EXPECT_LIBDUCKDB") == "ON":
            assert libduckdb, "the build bundles libduckdb.so, but the package carries none"
        if libduckdb:
            data = os.path.join(outside, "hub", "data")
            os.makedirs(data)
            write_parquet(libduckdb[0], jsonl, os.path.join(data, "train-00000-of-00001.parquet"),
                          columns="text, label")
            debug = subprocess.run(
                [shardify, "--input", data, "--format", "parquet", *common, "--out",
                 "from-parquet"], cwd=outside, env=dict(clean, LD_DEBUG="libs"),
                capture_output=True, text=True)
            assert debug.returncode == 0, debug.stderr[-3000:]
            # Loaded when Parquet is read, from the package itself: not from the source tree.
            loaded = {line.split("calling init:")[1].strip()
                      for line in debug.stderr.splitlines() if "calling init:" in line}
            assert [os.path.realpath(p) for p in loaded if "libduckdb" in p] == \
                [os.path.realpath(libduckdb[0])], loaded
            for shard in sorted(glob.glob(os.path.join(outside, "from-jsonl", "*.shard"))):
                with open(shard, "rb") as a, open(shard.replace("from-jsonl", "from-parquet"), "rb") as b:
                    assert a.read() == b.read(), shard
        else:
            print("note: this build has no Parquet input (no .deps/duckdb); Parquet part skipped")

        got = json.loads(run(python, "-c", (
            "import json, shardkit\n"
            "loader = shardkit.Loader('from-jsonl', batch_size=32, shuffle=False, drop_last=False)\n"
            "print(json.dumps([int(x) for b in loader for x in b['labels']]))"),
            cwd=outside, env=clean))
        # The labels come from the corpus generator, not from shardkit.
        assert got == labels, (len(got), len(labels))
        print(f"pip install: ok ({len(labels)} records, Parquet {'yes' if libduckdb else 'no'})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
