#!/usr/bin/python3
"""Prints one code block of a Markdown file exactly as a reader would copy it.

    readme_snippet.py README.md fenced LANG TEXT   # the first ```LANG block containing TEXT
    readme_snippet.py README.md indented HEADING    # the first 4-space block under "## HEADING"
"""
import sys


def fenced(lines, lang, needle):
    block = None
    for line in lines:
        if block is None:
            if line.strip() == "```" + lang:
                block = []
        elif line.strip() == "```":
            if needle in "".join(block):
                return block
            block = None
        else:
            block.append(line)
    return None


def indented(lines, heading):
    inside, block = False, []
    for line in lines:
        if line.startswith("#"):
            if block:
                break
            inside = line.lstrip("#").strip() == heading
            continue
        if not inside:
            continue
        if line.startswith("    ") or (block and not line.strip()):
            block.append(line[4:] if line.strip() else "\n")
        elif block:
            break
    return block or None


def main():
    path, kind, *args = sys.argv[1:]
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    block = fenced(lines, *args) if kind == "fenced" else indented(lines, *args)
    if block is None:
        sys.exit(f"readme_snippet: no {kind} block {args} in {path}")
    sys.stdout.write("".join(block))


if __name__ == "__main__":
    main()
