#!/usr/bin/python3
"""`shard-inspect report`: one self-contained page whose figures are right and whose charts render.

    report_test.py SOURCE_DIR BUILD_DIR [--screenshot PNG [REPORT_HTML]]

A cls dataset of generated sentences (known labels, lengths spread around --max-len 32) and a
second source for a 3:1 mixture are made with shardify; the tokens' reference counts come from
HuggingFace tokenizers (tests/oracle/hf_encode.js) on the same lines, not from shardkit. Checks:
  - the page fetches nothing and runs nothing (no script, src, href, url() or @import);
  - label counts, the truncation shares (exact below and at --max-len, bounds above it), the most
    frequent tokens and their counts, and the mixture's samples per source equal the reference;
  - headless Chromium loads it with no console error or failed load, and every chart's region of
    the screenshot holds drawing (two colours or more, 1% of it not background); an empty chart
    on a control page is seen as blank, so the check can fail;
  - a flipped byte in a block: exit 1, the page names the fault;
  - an existing file is kept without --force and replaced with it.
With --screenshot, only writes the screenshot of REPORT_HTML (default: this test's report) to PNG.
"""
import html
import json
import os
import random
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import headless_chromium as chromium  # noqa: E402

CHARTS = ["stored-lengths", "source-lengths", "labels", "top-tokens", "source-tokens",
          "mixture-steps"]
BOX_JS = ("[...document.querySelectorAll('svg.chart')].map(s => {const r = "
          "s.getBoundingClientRect(); return {id: s.id, x: r.x + window.scrollX, "
          "y: r.y + window.scrollY, width: r.width, height: r.height}})")
MAX_LEN = 32
WORDS = ("the quick brown fox jumps over a lazy dog while seven merry sailors sing of "
         "distant harbours and the whale that got away").split()


def run(*cmd, ok=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if ok and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def write_corpus(path, n, label_of, seed):
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.choice([3, 8, 12, 20, 26, 40, 60]))]
        lines.append({"text": " ".join(words), "label": label_of(i)})
    with open(path, "w") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
    return lines


def reference_ids(source, tokenizer, lines, work):
    """Token ids with [CLS]/[SEP] of every line, by HuggingFace tokenizers."""
    text, out = os.path.join(work, "texts.txt"), os.path.join(work, "ids.jsonl")
    with open(text, "w") as f:
        f.writelines(line["text"] + "\n" for line in lines)
    run("node", os.path.join(source, "tests", "oracle", "hf_encode.js"), tokenizer, text, out,
        "--special")
    with open(out) as f:
        return [json.loads(line) for line in f]


def page_numbers(page_html):
    """The text of the page with tags and entities removed."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page_html))


def check_self_contained(page):
    for pattern in (r"<script", r"\bsrc\s*=", r"\bhref\s*=", r"url\(", r"@import", r"<link"):
        assert not re.search(pattern, page, re.IGNORECASE), f"the page loads or runs: {pattern}"
    assert set(re.findall(r"https?://[^\"' ]+", page)) <= {"http://www.w3.org/2000/svg"}


def check_figures(page, lines, ids, hard_lines):
    text = page_numbers(page)
    n = len(lines)
    for name in ("neg", "pos"):
        count = sum(1 for line in lines if line["label"] == name)
        assert f"{count:,} ({100 * count / n:.1f}%)" in text, (name, count)
    lengths = [len(i) for i in ids]
    for max_len in (MAX_LEN // 4, MAX_LEN // 2, MAX_LEN):  # exact
        share = sum(1 for x in lengths if x > max_len) / n
        label = f"{max_len}" + (" (this dataset)" if max_len == MAX_LEN else "")
        assert re.search(rf"{re.escape(label)}\s+{100 * share:.1f}%", text), (label, share)
    for max_len in (2 * MAX_LEN, 4 * MAX_LEN):  # bounded by the log2 buckets
        share = 100 * sum(1 for x in lengths if x > max_len) / n
        m = re.search(rf"\b{max_len}\s+([\d.]+)%(?: to ([\d.]+)%)?", text)
        low, high = float(m.group(1)), float(m.group(2) or m.group(1))
        assert low - 0.05 <= share <= high + 0.05, (max_len, low, share, high)
    counts = {}
    for row in ids:  # truncated as BERT's template does: [CLS], the first tokens, [SEP]
        for token in row if len(row) <= MAX_LEN else row[:MAX_LEN - 1] + row[-1:]:
            counts[token] = counts.get(token, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    for token, count in top:
        assert re.search(rf"#{token}\s+{count:,} \(", text), (token, count)
    assert "[CLS]  #101" in text and "the  #1996" in text, "tokens not decoded"
    # Weights 3:1 over both sources' records: within one sample of 3/4 and 1/4.
    total = n + len(hard_lines)
    m = re.search(r"weight 3\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)", text)
    assert m and abs(int(m.group(3).replace(",", "")) - 0.75 * total) <= 1, m and m.groups()
    assert "Every checksum verified" in text


def chart_problems(url, boxes_expected):
    """What is wrong with how the page renders: errors, missing or blank charts."""
    problems = []
    with chromium.Page.open(url, width=1000) as page:
        boxes = page.evaluate(BOX_JS)
        png = page.screenshot()
        problems += page.errors
    _, _, rows = chromium.decode_png(png)
    found = {b["id"]: b for b in boxes}
    for chart in boxes_expected:
        if chart not in found:
            problems.append(f"no chart {chart}")
            continue
        colors = chromium.region_colors(rows, found[chart])
        area = sum(colors.values())
        background = max(colors.values()) if colors else 0
        if len(colors) < 2 or area - background < 0.01 * area:
            problems.append(f"chart {chart} is blank ({len(colors)} colours)")
    return problems, png


def check_control_page(work):
    """The blank-chart check itself: a page with one drawn and one empty chart."""
    control = os.path.join(work, "control.html")
    with open(control, "w") as f:
        f.write('<!DOCTYPE html><html><body><svg class="chart" id="drawn" width="300" height="80">'
                '<rect x="10" y="10" width="200" height="40" fill="#4c78a8"/></svg>'
                '<svg class="chart" id="empty" width="300" height="80"></svg></body></html>')
    problems, _ = chart_problems("file://" + control, ["drawn", "empty"])
    assert problems == ["chart empty is blank (1 colours)"], problems


def check_faults_and_force(inspect, ds, mix, vocab, work):
    out = os.path.join(work, "report.html")
    with open(out) as f:
        before = f.read()
    r = run(inspect, "report", ds, "-o", out, "--progress", "never", ok=False)
    assert r.returncode != 0 and "exists" in r.stderr, r.stderr
    with open(out) as f:
        assert f.read() == before, "an existing report was changed without --force"
    # A directory, or a file in a directory that does not exist, named as such.
    r = run(inspect, "report", ds, "-o", work, "--force", "--progress", "never", ok=False)
    assert r.returncode != 0 and "is a directory: --output names the HTML file" in r.stderr, r.stderr
    missing = os.path.join(work, "no-such-dir")
    r = run(inspect, "report", ds, "-o", os.path.join(missing, "r.html"), "--progress", "never",
            ok=False)
    assert r.returncode != 0 and f"its directory {missing} does not exist" in r.stderr, r.stderr
    # A damaged copy: one byte flipped in the middle of the first shard's blocks.
    bad = os.path.join(work, "bad")
    shutil.copytree(ds, bad)
    shard = sorted(p for p in os.listdir(bad) if p.endswith(".shard"))[0]
    with open(os.path.join(bad, shard), "r+b") as f:
        f.seek(200)
        byte = f.read(1)
        f.seek(200)
        f.write(bytes([byte[0] ^ 0x5A]))
    r = run(inspect, "report", bad, "-o", out, "--force", "--progress", "never", ok=False)
    assert r.returncode == 1, (r.returncode, r.stderr)
    with open(out) as f:
        damaged = f.read()
    assert 'class="fault"' in damaged and shard in damaged, "the fault is not on the page"


def main():
    source, build = sys.argv[1], sys.argv[2]
    work = os.path.join(build, "test-tmp", "docs-report")
    if "--screenshot" in sys.argv:
        rest = sys.argv[sys.argv.index("--screenshot") + 1:]
        page = rest[1] if len(rest) > 1 else os.path.join(work, "report.html")
        with chromium.Page.open("file://" + os.path.abspath(page), width=900) as p:
            png = p.screenshot()
        with open(rest[0], "wb") as f:
            f.write(png)
        return
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shardify = os.path.join(build, "tools", "shardify", "shardify")
    inspect = os.path.join(build, "tools", "shard-inspect")
    tok = os.path.join(work, "tok")
    run("node", os.path.join(source, "tests", "oracle", "make_tokenizers.js"), tok)
    vocab = os.path.join(tok, "bert-base-uncased.json")
    lines = write_corpus(os.path.join(work, "c.jsonl"), 400,
                         lambda i: "neg" if i % 10 < 3 else "pos", 1)
    hard = write_corpus(os.path.join(work, "hard.jsonl"), 60, lambda i: "pos", 2)
    for name in ("c", "hard"):
        run(shardify, "--input", os.path.join(work, name + ".jsonl"), "--task", "cls",
            "--labels", "neg,pos", "--max-len", str(MAX_LEN), "--block-size", "4096",
            "--tokenizer", vocab, "--out", os.path.join(work, name))
    mix = os.path.join(work, "mix.json")
    with open(mix, "w") as f:
        json.dump({"seed": 1, "sources": [{"path": "c", "weight": 3},
                                          {"path": "hard", "weight": 1}]}, f)
    out = os.path.join(work, "report.html")
    run(inspect, "report", os.path.join(work, "c"), "--mixture", mix, "--decode", vocab,
        "-o", out, "--progress", "never")
    with open(out) as f:
        page = f.read()
    check_self_contained(page)
    check_figures(page, lines, reference_ids(source, vocab, lines, work), hard)
    check_control_page(work)
    problems, png = chart_problems("file://" + out, CHARTS)
    with open(os.path.join(work, "report.png"), "wb") as f:
        f.write(png)
    assert not problems, problems
    check_faults_and_force(inspect, os.path.join(work, "c"), mix, vocab, work)
    print(f"{len(CHARTS)} charts rendered; screenshot {os.path.join(work, 'report.png')}")
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
