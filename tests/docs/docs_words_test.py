#!/usr/bin/python3
"""Docs, comments and tests speak of the product, not of how it was made.

    docs_words_test.py SOURCE_DIR

Fails, naming file and line, on:
  - the word "session" (any case; "session token", "session id" and such credentials are
    allowed, and so are identifiers such as session_token or sessionId, which join it to the
    next word);
  - "round" followed by a number from 1 ("round 2", "Round 3", "round-1 build") or as "this
    round" or "that round": the phrases that number the work. "round-trip", "rounded", "around",
    "rounding", a Feistel network's "6-round" and "round 0", a loop's "every round" do not match;
  - absolute paths of the machine a figure was measured on: a path that starts at the file
    system's top in its work, root or home directory (the same names inside a relative path,
    such as "$dir/" followed by one of them, pass).
The tree is every file git tracks or would track (git ls-files), or, outside a git checkout,
every file but build outputs and node_modules; binary files, npm lockfiles (third-party
package names) and this file are not read. The patterns are checked first against examples of both kinds.
"""
import os
import re
import subprocess
import sys

SESSION = re.compile(r"\bsessions?\b(?![ -]?(?:token|id|key|cookie))", re.IGNORECASE)
ROUND = re.compile(r"\brounds?[ -]?[1-9]|\b(?:this|that|next|previous|earlier|later) round\b",
                   re.IGNORECASE)
# A path starts the token: not after a word character, '.', '$', '}', ')', ']', '/', '-' or a
# closing quote; after an opening quote (one that follows a space, '(', '=', '[' or ',').
MACHINE_PATH = re.compile(r"(?:(?<![\w.$})\]/\"'-])|(?<=[\s(=\[,:][\"']))/(?:work|root|home)/")
PATTERNS = [("a work session", SESSION), ("a numbered round of work", ROUND),
            ("a machine path", MACHINE_PATH)]
SKIPPED_NAMES = {"package-lock.json"}
THIS_FILE = "tests/docs/docs_words_test.py"  # the one file that must name them


def findings(text):
    """(line number, what, excerpt) for each banned phrase in text."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in PATTERNS:
            m = pattern.search(line)
            if m:
                out.append((number, what, line.strip()[:160]))
    return out


def check_patterns():
    # Built from pieces so that this file itself holds none of the phrases.
    s, r, w = "ses" + "sion", "rou" + "nd", "/" + "work/"
    banned = [f"{s} 8", f"{r} 2 {s} 6", f"{r.capitalize()} 3", f"the {r}-1 build",
              f"Before this {r}: one", f"{s.capitalize()}s below", f"`{w}shared/data`",
              f"measured in {w}shared", f'path="{w}x"', "/" + "root/.cache", f"cd {w}wt"]
    allowed = ["round-trip", "must round-trip", "rounded to 2 digits", "around 3 s",
               "rounding", "a 6-round Feistel network", "AWS_SESSION_TOKEN",
               "signing_->session_token", f"the {s} token of the credentials", "sessionId",
               f"a DevTools {s} id",
               f"build-fuzz/tests/fuzz{w}", f'"$tmp"{w}*.log', f"${{DIR}}{w}x",
               "round up", "all year round", f"tests/fuzz{w}", "width in round 0",
               "swap widths every round", "Each round times both"]
    missed = [t for t in banned if not findings(t)]
    wrong = [t for t in allowed if findings(t)]
    assert not missed and not wrong, f"patterns miss {missed} or flag {wrong}"


def tree_files(source):
    try:
        listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], capture_output=True, check=True).stdout
        return sorted({f for f in listed.decode().split("\0") if f})
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(source):
            dirs[:] = [d for d in dirs if d not in (".git", "node_modules", ".deps")
                       and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(root, n), source) for n in names]
        return sorted(files)


def main():
    source = sys.argv[1]
    check_patterns()
    problems, read = [], 0
    for rel in tree_files(source):
        path = os.path.join(source, rel)
        if (os.path.basename(rel) in SKIPPED_NAMES or rel == THIS_FILE
                or not os.path.isfile(path)):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue
        read += 1
        for number, what, excerpt in findings(data.decode("utf-8", "replace")):
            problems.append(f"{rel}:{number}: {what}: {excerpt}")
    assert read > 100, f"only {read} text files found under {source}"
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} line(s) speak of the work or of a machine; say what the product "
              "does or measured instead")
        print("0 passed, 1 failed")
        sys.exit(1)
    print(f"{read} files read, no banned words or machine paths")
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
