#!/usr/bin/python3
"""`pip install --no-build-isolation .` with an interpreter that lacks the `wheel` package stops
with a sentence naming that interpreter and Debian's /usr/bin/python3, not with setuptools'
"invalid command 'bdist_wheel'". setup.py runs here as pip runs it (dist_info, then
bdist_wheel) with `wheel` made unimportable.

    setup_hint_test.py SOURCE_DIR
"""
import os
import subprocess
import sys

RUN = """
import sys
sys.modules["wheel"] = None  # import wheel raises ImportError
sys.argv = ["setup.py", COMMAND, "--help"]
exec(compile(open("setup.py").read(), "setup.py", "exec"), {"__name__": "__main__", "__file__": "setup.py"})
"""


def main():
    source = sys.argv[1]
    for command in ("dist_info", "bdist_wheel"):
        r = subprocess.run([sys.executable, "-c", RUN.replace("COMMAND", repr(command))],
                           cwd=source, capture_output=True, text=True)
        assert r.returncode != 0, (command, r.stdout[-500:])
        assert "has no 'wheel' package" in r.stderr and "/usr/bin/python3 -m venv" in r.stderr, \
            (command, r.stderr[-1000:])
        assert sys.executable in r.stderr, r.stderr[-1000:]
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
