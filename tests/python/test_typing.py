"""The package is typed: `mypy --strict` (Debian's python3-mypy) passes on a user script written
against the README's Python API (typing/user_script.py), and fails on one with five typical
mistakes (typing/wrong_script.py), each caught by the stub that the option tables generate.
pyflakes finds nothing in the package's Python."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.environ["SHARDKIT_BIN"], "python")


def mypy(script):
    env = dict(os.environ, MYPYPATH=PACKAGE)
    # The cache keeps torch's analysis between the two runs (and later runs of the test).
    cache = os.path.join(os.environ["SHARDKIT_BIN"], "test-tmp", "mypy-cache")
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache,
                           os.path.join(HERE, "typing", script)],
                          capture_output=True, text=True, env=env)


def main():
    assert os.path.exists(os.path.join(PACKAGE, "shardkit", "py.typed"))
    assert os.path.exists(os.path.join(PACKAGE, "shardkit", "__init__.pyi"))
    good = mypy("user_script.py")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy("wrong_script.py")
    errors = [line for line in bad.stdout.splitlines() if ": error:" in line]
    lines = sorted({int(line.split(":")[1]) for line in errors})
    assert lines == [4, 5, 6, 7, 8], bad.stdout
    print(f"  mypy --strict: the user script passes; {len(errors)} errors on the five wrong lines")
    source = os.path.join(os.environ["SHARDKIT_SOURCE"], "python", "shardkit")
    flakes = subprocess.run([sys.executable, "-m", "pyflakes", source], capture_output=True,
                            text=True)
    assert flakes.returncode == 0, flakes.stdout + flakes.stderr
    print("typing: all passed")


if __name__ == "__main__":
    main()
