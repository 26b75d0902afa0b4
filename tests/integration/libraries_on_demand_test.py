#!/usr/bin/python3
"""libduckdb.so and libcurl are opened when Parquet or a remote dataset is first read, not at start
(core/library_on_demand.h):

- `shardify --version` and `shard-inspect --version` load neither, `import shardkit` no libduckdb;
- a remote read loads libcurl and reports the server's refusal naming the URL;
- Parquet converts through the loaded libduckdb, shard for shard as the same rows in JSONL;
- $SHARDKIT_DUCKDB_LIBRARY chooses the library; one that cannot be loaded, or that is not
  DuckDB, stops the conversion with a message naming it and leaves no dataset behind.

The Parquet file is written by DuckDB itself, through ctypes (tests/python/duckdb_parquet.py).

    libraries_on_demand_test.py SOURCE_DIR BUILD_DIR LIBDUCKDB NO_LIBCURL_SHIM
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from duckdb_parquet import write_parquet  # noqa: E402


def loaded_libraries(cmd, env=None):
    """The shared objects the dynamic linker loaded while `cmd` ran (LD_DEBUG=libs)."""
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env={**(env or os.environ), "LD_DEBUG": "libs"})
    assert r.returncode == 0, r.stderr[-2000:]
    return [line.split("calling init:")[1].strip() for line in r.stderr.splitlines()
            if "calling init:" in line]


def main():
    source, build, libduckdb, no_libcurl = sys.argv[1:5]
    shardify = os.path.join(build, "tools", "shardify", "shardify")
    work = os.path.join(build, "test-tmp", "libraries-on-demand")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    subprocess.run(["node", os.path.join(source, "tests", "oracle", "make_tokenizers.js"), work],
                   check=True, capture_output=True)

    # Neither library at start; `present` shows that the list is the real one.
    inspect = os.path.join(build, "tools", "shard-inspect")
    env = {**os.environ, "PYTHONPATH": os.path.join(build, "python")}
    # (Debian's torch, which `import shardkit` imports, loads libcurl itself.)
    for cmd, cmd_env, present, absent in (
            ([shardify, "--version"], None, "libzstd", ("libduckdb", "libcurl")),
            ([inspect, "--version"], None, "libzstd", ("libduckdb", "libcurl")),
            ([sys.executable, "-c", "import shardkit"], env, "_shardkit", ("libduckdb",))):
        at_start = loaded_libraries(cmd, cmd_env)
        assert any(present in path for path in at_start), (cmd, at_start)
        for library in absent:
            assert not any(library in path for path in at_start), (cmd, library, at_start)
    at_start = loaded_libraries([shardify, "--version"])

    # A remote read opens libcurl, whose refusal to connect reaches the message.
    url = "http://127.0.0.1:9/nothing-listens-here"
    r = subprocess.run([inspect, "info", url], capture_output=True, text=True,
                       env={**os.environ, "LD_DEBUG": "libs"})
    assert r.returncode != 0
    assert any("calling init:" in line and "libcurl" in line for line in r.stderr.splitlines())
    assert f"{url}/manifest.json: Couldn't connect to server" in r.stderr, r.stderr[-2000:]

    # Without libcurl (no_libcurl_shim.c refuses it): a remote read stops at once, naming the URL
    # and each place tried, in the tool and in the Python module, which looks again each time it
    # is asked (only an opened library is kept).
    without = {**os.environ, "LD_PRELOAD": no_libcurl}
    r = subprocess.run([inspect, "info", url], capture_output=True, text=True, env=without,
                       timeout=30)
    assert r.returncode != 0
    assert "remote datasets need libcurl (Debian's libcurl4), and it could not be loaded" in \
        r.stderr and "libcurl.so.4" in r.stderr and url in r.stderr, r.stderr
    code = ("import shardkit\n"
            "for attempt in range(3):\n"
            "    try:\n"
            f"        shardkit.Loader({url!r}, batch_size=2)\n"
            "        raise SystemExit('a remote dataset opened without libcurl')\n"
            "    except shardkit.ShardkitError as e:\n"
            "        assert 'need libcurl' in str(e), e\n"
            "print('refused three times')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**env, **without}, timeout=60)
    assert r.returncode == 0 and "refused three times" in r.stdout, r.stdout + r.stderr

    jsonl = os.path.join(work, "rows.jsonl")
    with open(jsonl, "w") as f:
        for i in range(300):
            f.write(json.dumps({"text": f"row {i} of the table, {'word ' * (i % 7)}end"}) + "\n")
    parquet = os.path.join(work, "rows.parquet")
    write_parquet(libduckdb, jsonl, parquet)
    common = ["--task", "lm", "--max-len", "32", "--tokenizer",
              os.path.join(work, "bert-base-uncased-vocab.txt")]

    def convert(inp, out, env=None):
        return subprocess.run([shardify, "--input", inp, *common, "--out", os.path.join(work, out)],
                              capture_output=True, text=True, env=env)

    assert convert(jsonl, "from-jsonl").returncode == 0
    r = convert(parquet, "from-parquet")
    assert r.returncode == 0, r.stderr
    shards = sorted(n for n in os.listdir(os.path.join(work, "from-jsonl")) if n != "manifest.json")
    assert shards
    for name in shards:
        with open(os.path.join(work, "from-jsonl", name), "rb") as a, \
                open(os.path.join(work, "from-parquet", name), "rb") as b:
            assert a.read() == b.read(), name

    # The library named by $SHARDKIT_DUCKDB_LIBRARY is the one loaded, and the only one tried.
    chosen = os.path.join(work, "chosen", "libduckdb.so")
    os.makedirs(os.path.dirname(chosen))
    shutil.copy2(libduckdb, chosen)
    cmd = [shardify, "--input", parquet, *common, "--out", os.path.join(work, "from-chosen")]
    loaded = loaded_libraries(cmd, {**os.environ, "SHARDKIT_DUCKDB_LIBRARY": chosen})
    assert [p for p in loaded if "libduckdb" in p] == [chosen], loaded

    not_there = os.path.join(work, "nowhere", "libduckdb.so")
    not_duckdb = next(p for p in at_start if "libz.so" in p)
    for library, said in ((not_there, not_there), (not_duckdb, "has no duckdb_")):
        before = sorted(os.listdir(work))
        r = convert(parquet, "refused", {**os.environ, "SHARDKIT_DUCKDB_LIBRARY": library})
        assert r.returncode != 0, r.stderr
        assert "Parquet input needs DuckDB's C library" in r.stderr, r.stderr
        assert said in r.stderr and parquet in r.stderr, r.stderr
        assert sorted(os.listdir(work)) == before, "a refused conversion left files behind"
    print("libduckdb and libcurl: not loaded at start, loaded when used; libduckdb chosen or refused "
          "clearly")


if __name__ == "__main__":
    main()
