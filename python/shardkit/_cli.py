"""Console entry points of a pip-installed shardkit: `shardify` and `shard-inspect` run the C++
programs that `pip install .` placed inside the package (shardkit/_native/bin)."""
import os as _os
import sys as _sys


def _exec(name):
    exe = _os.path.join(_os.path.dirname(__file__), "_native", "bin", name)
    if not _os.access(exe, _os.X_OK):
        _sys.exit(f"{name}: {exe} is missing; this shardkit was not installed with `pip install .`")
    _os.execv(exe, [name] + _sys.argv[1:])


def shardify():
    _exec("shardify")


def shard_inspect():
    _exec("shard-inspect")
