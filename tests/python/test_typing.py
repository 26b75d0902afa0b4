"""The package is typed: `mypy --strict` (Debian's python3-mypy) passes on a user script written
against the README's Python API (typing/user_script.py), and fails on one with six typical
mistakes (typing/wrong_script.py), each caught by the stub that the option tables generate.
The stub and the module agree: every name the stub declares is there at run time (stubtest
finds no difference), and typing.get_type_hints() resolves every public signature. pyflakes
finds nothing in the package's Python."""
import ast
import inspect
import os
import subprocess
import sys
import typing

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.environ["SHARDKIT_BIN"], "python")


def mypy(script):
    env = dict(os.environ, MYPYPATH=PACKAGE)
    # The cache keeps torch's analysis between the two runs (and later runs of the test).
    cache = os.path.join(os.environ["SHARDKIT_BIN"], "test-tmp", "mypy-cache")
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache,
                           os.path.join(HERE, "typing", script)],
                          capture_output=True, text=True, env=env)


def stub_names():
    """The module-level names the stub declares public."""
    with open(os.path.join(PACKAGE, "shardkit", "__init__.pyi"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_") or n == "__version__"}


def check_runtime_matches_stub():
    sys.path.insert(0, PACKAGE)
    import shardkit
    missing = sorted(n for n in stub_names() if not hasattr(shardkit, n))
    assert not missing, f"the stub declares names the module lacks: {missing}"
    from shardkit import Batch, PathLike, SourceLike, State  # noqa: F401 (what a user writes)
    # Every public signature's annotations resolve at run time (they are strings, PEP 563).
    checked = 0
    for name in shardkit.__all__:
        obj = getattr(shardkit, name)
        if inspect.isfunction(obj):
            typing.get_type_hints(obj)
            checked += 1
        elif inspect.isclass(obj) and obj.__module__ == "shardkit":
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                function = member.fget if isinstance(member, property) else member
                if inspect.isfunction(function):
                    try:
                        typing.get_type_hints(function)
                    except Exception as e:
                        raise AssertionError(f"{name}.{attr}: {e!r}") from e
                    checked += 1
    assert checked > 20, checked
    print(f"  the stub's {len(stub_names())} names are there at run time; "
          f"get_type_hints resolves {checked} public signatures")


def stubtest():
    """mypy's stubtest imports the module and compares it with the stub, name by name and
    signature by signature; it refuses to start while mypy finds errors in the package."""
    work = os.path.join(os.environ["SHARDKIT_BIN"], "test-tmp")
    # stubtest compares names and signatures, for which torch's types may as well be Any: not
    # following torch spares it a fresh analysis of all of torch (stubtest keeps no cache), which
    # the mypy runs above have made with torch followed.
    config = os.path.join(work, "stubtest.ini")
    with open(config, "w", encoding="utf-8") as f:
        f.write("[mypy]\n[mypy-torch.*]\nfollow_imports = skip\n")
    env = dict(os.environ, PYTHONPATH=PACKAGE, MYPYPATH=PACKAGE)
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", config,
                        "shardkit"], capture_output=True, text=True, env=env, cwd=work)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    print("  stubtest: the stub and the module agree")


def main():
    assert os.path.exists(os.path.join(PACKAGE, "shardkit", "py.typed"))
    assert os.path.exists(os.path.join(PACKAGE, "shardkit", "__init__.pyi"))
    good = mypy("user_script.py")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy("wrong_script.py")
    errors = [line for line in bad.stdout.splitlines() if ": error:" in line]
    lines = sorted({int(line.split(":")[1]) for line in errors})
    assert lines == [4, 5, 6, 7, 8, 9], bad.stdout
    print(f"  mypy --strict: the user script passes; {len(errors)} errors on the six wrong lines")
    check_runtime_matches_stub()
    stubtest()
    source = os.path.join(os.environ["SHARDKIT_SOURCE"], "python", "shardkit")
    flakes = subprocess.run([sys.executable, "-m", "pyflakes", source], capture_output=True,
                            text=True)
    assert flakes.returncode == 0, flakes.stdout + flakes.stderr
    print("typing: all passed")


if __name__ == "__main__":
    main()
