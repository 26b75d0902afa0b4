"""shardkit.write_dataset against the shardify CLI on the same rows written as JSONL (by Python's
json module or by pandas, not by shardkit): byte-identical shards and the same manifest apart from
the source, at 1 and 2 threads, for cls (given and derived labels), pair with dotted paths,
packed lm and qa, from a generator, a list and a pandas DataFrame. Rows whose fields are taken
out in C++ (exact dicts of plain values) mixed with rows that go through JSON (other mappings,
numpy values, int keys, dotted paths), good and bad, for cls, pair with integer and boolean
labels, and sft prompt/response: the same shards, skips and errors as shardify on their JSONL.
Then bad rows (error naming the row, or skipped and counted), an exception from the rows and a KeyboardInterrupt (a real
SIGINT) in the middle, which leave no dataset behind, progress (a tqdm bar on a terminal,
shardify's lines elsewhere).

    SHARDKIT_SOURCE=. SHARDKIT_BIN=build SHARDKIT_VOCAB=vocab.txt PYTHONPATH=build/python \
        python3 tests/python/test_write_dataset.py
"""
import contextlib
import io
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy
import pandas

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402

VOCAB = pyutil.VOCAB
GPT2 = os.path.join(os.path.dirname(VOCAB), "gpt2.json")
WORDS = ("the a of cat dog sat on mat naïve café Zürich 東京 données \"quoted\" back\\slash "
         "tab\there new\nline emoji🙂 ümlaut ß œuvre").split(" ")


def sentence(rng, lo, hi):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(lo, hi)))


def cls_rows(n, seed):
    rng = random.Random(seed)
    return [{"text": sentence(rng, 1, 40), "label": rng.choice(["neg", "pos", "neutral"]),
             "id": i} for i in range(n)]


def shardify(rows_jsonl, out, task, tokenizer, *flags, threads=1):
    subprocess.run([pyutil.SHARDIFY, "--input", rows_jsonl, "--task", task, "--tokenizer",
                    tokenizer, "--out", out, "--threads", str(threads), "--block-size", "4096",
                    *flags], check=True, capture_output=True)


def write_jsonl(rows, path):
    with open(path, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")  # ensure_ascii: \\u escapes, unlike write_dataset
    return path


def assert_same_dataset(cli, mine):
    names = sorted(os.listdir(cli))
    assert names == sorted(os.listdir(mine)), (names, os.listdir(mine))
    assert any(n.endswith(".shard") for n in names), names
    for name in names:
        if name == "manifest.json":
            continue
        with open(os.path.join(cli, name), "rb") as a, open(os.path.join(mine, name), "rb") as b:
            assert a.read() == b.read(), f"{name} differs between {cli} and {mine}"
    with open(os.path.join(cli, "manifest.json")) as a, open(os.path.join(mine, "manifest.json")) as b:
        ma, mb = json.load(a), json.load(b)
    assert ma["dataset"]["source"]["format"] == "jsonl"
    assert mb["dataset"]["source"]["format"] == "rows"
    assert ma["dataset"]["source"]["columns"] == mb["dataset"]["source"]["columns"]
    # The manifest's own checksum covers the source, which names different inputs.
    for m in (ma, mb):
        del m["dataset"]["source"], m["manifest_xxh3"]
    assert ma == mb, (ma, mb)


def compare(tmp, name, rows_for_cli, make_rows, task, tokenizer, flags, options, jsonl=None):
    """CLI on the JSONL of the rows vs write_dataset on make_rows(), at 1 and 2 threads."""
    jsonl = jsonl or write_jsonl(rows_for_cli, os.path.join(tmp, name + ".jsonl"))
    for threads in (1, 2):
        cli, mine = os.path.join(tmp, f"{name}-cli-{threads}"), os.path.join(tmp, f"{name}-py-{threads}")
        shardify(jsonl, cli, task, tokenizer, *flags, threads=threads)
        summary = shardkit.write_dataset(make_rows(), mine, task=task, tokenizer=tokenizer,
                                         threads=threads, block_size=4096, progress=False, **options)
        assert_same_dataset(cli, mine)
        assert summary["records"] == len(shardkit.Dataset(mine)) > 0, summary
        assert summary["skipped"] == 0 and summary["info"]["source"]["format"] == "rows", summary
    print(f"  {name}: identical to shardify at 1 and 2 threads ({summary['records']} records)")


def test_identical_to_cli(tmp):
    rows = cls_rows(3000, seed=1)
    # A generator with the labels given, as a generator must (it cannot be read twice).
    compare(tmp, "cls-generator", rows, lambda: (dict(r) for r in rows), "cls", VOCAB,
            ["--labels", "pos,neg,neutral", "--max-len", "48"],
            {"labels": ["pos", "neg", "neutral"], "max_len": 48})
    # A list: labels derived from the rows in a first pass, in shardify's order.
    compare(tmp, "cls-list-derived-labels", rows, lambda: rows, "cls", VOCAB, ["--max-len", "48"],
            {"max_len": 48})
    rng = random.Random(2)
    pairs = [{"premise": {"text": sentence(rng, 1, 30)}, "hypothesis": sentence(rng, 1, 30),
              "gold": {"label": rng.randrange(3)}} for _ in range(1500)]
    compare(tmp, "pair-dotted-paths", pairs, lambda: iter(pairs), "pair", VOCAB,
            ["--text-field", "premise.text", "--pair-field", "hypothesis", "--label-field",
             "gold.label", "--max-len", "64", "--labels", "0,1,2"],
            {"text_field": "premise.text", "pair_field": "hypothesis", "label_field": "gold.label",
             "max_len": 64, "labels": "0,1,2"})
    docs = [{"text": sentence(rng, 5, 400)} for _ in range(2000)]
    compare(tmp, "lm-packed-generator", docs, lambda: (d for d in docs), "lm", GPT2,
            ["--max-len", "128", "--position-ids"], {"max_len": 128, "position_ids": True})
    compare(tmp, "lm-no-pack", docs, lambda: (d for d in docs), "lm", VOCAB,
            ["--max-len", "64", "--no-pack"], {"max_len": 64, "no_pack": True})
    qa = []
    for i in range(400):
        context = sentence(rng, 20, 200)
        words = context.split(" ")
        start_word = rng.randrange(len(words))
        answer = words[start_word]
        start = len(" ".join(words[:start_word])) + (1 if start_word else 0)
        answers = ({"text": [answer], "answer_start": [start]} if i % 5
                   else {"text": [], "answer_start": []})
        qa.append({"context": context, "question": sentence(rng, 2, 10) + "?", "answers": answers})
    compare(tmp, "qa", qa, lambda: (q for q in qa), "qa", VOCAB,
            ["--max-len", "96", "--doc-stride", "16", "--max-query-len", "24"],
            {"max_len": 96, "doc_stride": 16, "max_query_len": 24})


class _Str(str):
    pass


def _jsonable(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(type(value).__name__)


def _nan_as_null(value):
    """NaN as None, as pandas' to_json writes NaN (null): the README's rule for rows."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_as_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nan_as_null(v) for v in value]
    if isinstance(value, numpy.ndarray):
        return _nan_as_null([float(v) for v in value])
    return value


def write_rows_jsonl(rows, path):
    """The rows as a JSONL file by Python's json module, keeping lone surrogates as the invalid
    UTF-8 that write_dataset hands its reader (so both report the same bad line)."""
    with open(path, "wb") as f:
        for row in rows:
            f.write(json.dumps(_nan_as_null(dict(row)), ensure_ascii=False, default=_jsonable)
                    .encode("utf-8", "surrogatepass") + b"\n")
    return path


def compare_with_errors(tmp, name, rows, task, tokenizer, flags, options):
    """write_dataset on `rows` against shardify on their JSONL, with on_error fail and skip:
    the same first error (row N is line N + 1), the same skips and errors, identical shards."""
    jsonl = write_rows_jsonl(rows, os.path.join(tmp, name + ".jsonl"))
    cli_fail = subprocess.run([pyutil.SHARDIFY, "--input", jsonl, "--task", task, "--tokenizer",
                               tokenizer, "--out", os.path.join(tmp, name + "-cli-fail"), *flags],
                              capture_output=True, text=True)
    def as_row(error):  # "FILE:N: message" -> "rows: row N - 1: message"
        line, message = error.split(jsonl + ":", 1)[1].split(": ", 1)
        return f"rows: row {int(line) - 1}: {message}"

    line_error = [ln for ln in cli_fail.stderr.splitlines() if jsonl + ":" in ln]
    expected = as_row(line_error[0]) if line_error else None
    # shardify exits 1 exactly when it names a bad line, 0 with a dataset otherwise: a crash or
    # a failure without a line would make the comparison below vacuous.
    assert cli_fail.returncode == (1 if expected else 0), (name, cli_fail.returncode, cli_fail.stderr)
    assert os.path.isdir(os.path.join(tmp, name + "-cli-fail")) == (expected is None), name
    try:
        shardkit.write_dataset(rows, os.path.join(tmp, name + "-py-fail"), task=task,
                               tokenizer=tokenizer, progress=False, **options)
        assert expected is None, f"{name}: accepted what shardify refused: {cli_fail.stderr}"
    except shardkit.ShardkitError as e:
        assert expected is not None and expected in str(e), (name, str(e), cli_fail.stderr)
    for threads in (1, 2):
        cli, mine = os.path.join(tmp, f"{name}-cli-{threads}"), os.path.join(tmp, f"{name}-py-{threads}")
        done = subprocess.run([pyutil.SHARDIFY, "--input", jsonl, "--task", task, "--tokenizer",
                               tokenizer, "--out", cli, "--threads", str(threads), "--block-size",
                               "4096", "--on-error", "skip", "--json", *flags],
                              check=True, capture_output=True, text=True)
        want = json.loads(done.stdout)
        summary = shardkit.write_dataset(rows, mine, task=task, tokenizer=tokenizer,
                                         threads=threads, block_size=4096, progress=False,
                                         on_error="skip", **options)
        assert_same_dataset(cli, mine)
        assert summary["skipped"] == want["skipped"] and summary["records"] == want["records"], \
            (summary, want)
        assert summary["errors"] == [as_row(e) for e in want["errors"]], \
            (summary["errors"], want["errors"])
    print(f"  {name}: as shardify at 1 and 2 threads ({summary['records']} records, "
          f"{summary['skipped']} skipped; first error {expected!r})")
    return summary


def test_direct_and_json_rows(tmp):
    import collections
    rng = random.Random(11)
    rows = []
    for i, row in enumerate(cls_rows(2000, seed=12)):
        kind = i % 10
        if kind == 1:
            row = collections.OrderedDict(row)  # a dict subclass: through JSON
        elif kind == 2:
            row["id"] = numpy.int64(i)  # a numpy value: through JSON
        elif kind == 3:  # nested plain values: taken directly
            row["meta"] = {"tags": ["a", 1, 2.5, None, True, (3, "b")], "n": {"x": -1 << 63}}
        elif kind == 4:
            row["text"] = _Str(row["text"])  # a str subclass is a str to JSON too
        elif kind == 5:
            row[7] = "an int key"  # through JSON (where it becomes "7")
        elif kind == 6:
            row["score"] = rng.random() * 1e300
        elif kind == 7 and i > 1500:
            row["big"] = 1 << 64  # past what simdjson holds: through JSON, not read, a good row
        elif kind == 8:
            row["text"] += " nul\x00 controls\x01\x1f\x7f \u2028 \U0001f600"  # escaped in JSON
        elif kind == 9:
            row["x"] = [float("nan"), {"y": numpy.float64("nan")}]  # NaN is missing: null
            row["v"] = numpy.array([0.5, numpy.nan])  # in a NumPy array too
        rows.append(row)
    deep = [1]
    for _ in range(20):  # deeper than the direct route looks: through JSON, a good row
        deep = [{"k": deep}]
    bad = [({"label": "pos"}), {"text": None, "label": "pos"}, {"text": 5, "label": "neg"},
           {"text": "a float label", "label": 1.5}, {"text": "a list label", "label": ["pos"]},
           {"text": "a lone \ud800 surrogate", "label": "pos"},
           {"text": "fine", "label": "pos", "note": "elsewhere \udfff"},
           {"text": "an unknown label", "label": "maybe"}, {"text": "no label"},
           {"text": "a null label", "label": None}, {"text": "deep", "label": "pos", "d": deep}]
    for j, b in enumerate(bad):
        rows.insert(150 * j + 40, b)
    # The first bad row both ways, then all of them skipped and listed in order.
    labels = ["pos", "neg", "neutral"]
    summary = compare_with_errors(tmp, "mixed-cls", rows, "cls", VOCAB,
                                  ["--labels", ",".join(labels), "--max-len", "48"],
                                  {"labels": labels, "max_len": 48})
    # All but the deep row of `bad`.
    assert summary["skipped"] == len(bad) - 1, summary
    # Without bad rows the labels are derived from the rows (a first pass, labels only).
    good = [r for r in rows if not any(r is b for b in bad)]
    compare_with_errors(tmp, "mixed-cls-derived", good, "cls", VOCAB, ["--max-len", "48"],
                        {"max_len": 48})
    # An infinity has no JSON form: in a field the conversion reads, a bad row naming the field;
    # in one it does not read, left out like any value without a JSON form.
    summary = shardkit.write_dataset([{"text": "a", "label": "pos"}, {"text": "b", "label": "pos", "x": -math.inf},
                                      {"text": "c", "label": math.inf}],
                                     os.path.join(tmp, "infinity"), task="cls", tokenizer=VOCAB,
                                     labels=labels, progress=False, on_error="skip")
    errors = summary["errors"]
    assert summary["skipped"] == 1 and len(errors) == 1 and errors[0].startswith(
        "rows: row 2: cannot be written as JSON: field 'label': Out of range float values"), errors
    # The fields taken directly: bytes_in counts their bytes, not a JSON line's.
    plain = [{"text": "abc"}] * 10
    summary = shardkit.write_dataset(plain, os.path.join(tmp, "plain"), tokenizer=VOCAB,
                                     progress=False, max_len=8)
    assert summary["bytes_in"] == 30, summary

    # pair: integer labels up to 2^64 - 1, booleans, strings.
    values = [0, -3, 1 << 63, (1 << 64) - 1, -(1 << 63), True, False, "str"]
    pairs = []
    for i in range(1200):
        pairs.append({"premise": sentence(rng, 1, 30), "hypothesis": sentence(rng, 1, 30),
                      "gold": values[i % len(values)]})
    pairs[100]["gold"] = 1 << 64  # simdjson's BIGINT: through JSON, a bad row
    pairs[200]["gold"] = -(1 << 63) - 1
    pairs[300]["gold"] = numpy.int64(5)  # through JSON, read as 5: not a label
    pairs[400]["hypothesis"] = None
    del pairs[500]["premise"]
    names = ["0", "-3", str(1 << 63), str((1 << 64) - 1), str(-(1 << 63)), "true", "false", "str"]
    compare_with_errors(tmp, "pair-labels", pairs, "pair", VOCAB,
                        ["--text-field", "premise", "--pair-field", "hypothesis", "--label-field",
                         "gold", "--labels", ",".join(names), "--max-len", "64"],
                        {"text_field": "premise", "pair_field": "hypothesis",
                         "label_field": "gold", "labels": names, "max_len": 64})

    # sft: prompt and response without a template.
    sft = [{"prompt": sentence(rng, 1, 20), "response": sentence(rng, 1, 20), "turn": i}
           for i in range(800)]
    sft[10]["response"] = 3
    sft[20] = collections.OrderedDict(sft[20])
    compare_with_errors(tmp, "sft-prompt-response", sft, "sft", GPT2, ["--max-len", "64"],
                        {"max_len": 64})
    print("  direct and JSON rows mixed: identical shards, skips and errors")


def test_dataframe(tmp):
    rows = cls_rows(2500, seed=3)
    frame = pandas.DataFrame(rows)
    frame["label"] = frame["label"].map({"neg": 0, "pos": 1, "neutral": 2}).astype("int64")
    # Floats and missing values beside the fields read (taken directly, with the fields).
    frame["score"] = [i / 7 for i in range(len(frame))]
    frame["note"] = [None if i % 5 else "a note" for i in range(len(frame))]
    # pandas writes the JSONL here (its own JSON writer), and itertuples/to_dict are accepted too.
    jsonl = os.path.join(tmp, "frame.jsonl")
    frame.to_json(jsonl, orient="records", lines=True, force_ascii=False)
    flags, options = ["--max-len", "40"], {"max_len": 40}
    compare(tmp, "dataframe", None, lambda: frame, "cls", VOCAB, flags, options, jsonl=jsonl)
    compare(tmp, "dataframe-records", None, lambda: frame.to_dict("records"), "cls", VOCAB, flags,
            options, jsonl=jsonl)
    # pandas 3 gives NaN, not None, for a missing string in to_dict("records"): NaN is missing,
    # null in the JSONL that pandas writes.
    nan_records = [dict(r, note=float("nan")) if r["note"] is None else r
                   for r in frame.to_dict("records")]
    compare(tmp, "dataframe-nan-records", None, lambda: nan_records, "cls", VOCAB, flags, options,
            jsonl=jsonl)
    compare(tmp, "dataframe-itertuples", None, lambda: frame.itertuples(index=False), "cls", VOCAB,
            flags + ["--labels", "0,1,2"], dict(options, labels=[0, 1, 2]), jsonl=jsonl)
    # A missing text (NaN in a float column, None in an object one) is a bad row, as null is in
    # JSONL: named by its position in the frame, or skipped and counted.
    holes = pandas.DataFrame({"text": ["fine", float("nan"), "also fine", "x"],
                              "label": ["a", "b", None, "a"]})
    try:
        shardkit.write_dataset(holes, os.path.join(tmp, "holes"), task="cls", tokenizer=VOCAB,
                               progress=False, labels=["a", "b"])
        raise AssertionError("a None text was accepted")
    except shardkit.ShardkitError as e:
        assert "row 1: field 'text' is not a string" in str(e), str(e)
    assert not os.path.exists(os.path.join(tmp, "holes"))
    summary = shardkit.write_dataset(holes, os.path.join(tmp, "holes"), task="cls", tokenizer=VOCAB,
                                     progress=False, labels=["a", "b"], on_error="skip")
    assert summary["skipped"] == 2 and summary["records"] == 2, summary
    assert summary["errors"][1].startswith("rows: row 2: label field 'label' must be"), summary
    print("  DataFrame with missing values: row named, or skipped and counted")


def test_values_without_json_form(tmp):
    """Datetime, Decimal and Timedelta columns that the conversion does not read leave every row
    as it would be without them; one that it reads makes a bad row naming the field."""
    import decimal
    rows = cls_rows(1200, seed=5)
    frame = pandas.DataFrame(rows)
    frame["sent"] = pandas.date_range("2024-01-01", periods=len(frame), freq="h")
    frame.loc[3, "sent"] = pandas.NaT
    frame["price"] = [decimal.Decimal(i) / 4 for i in range(len(frame))]
    frame["age"] = pandas.to_timedelta(range(len(frame)), unit="s")
    # The reference: pandas writes the JSONL of the frame without those columns.
    jsonl = os.path.join(tmp, "dates.jsonl")
    frame[["text", "label", "id"]].to_json(jsonl, orient="records", lines=True, force_ascii=False)
    flags, options = ["--max-len", "40"], {"max_len": 40, "label_field": "label"}
    compare(tmp, "dataframe-dates", None, lambda: frame, "cls", VOCAB, flags, options, jsonl=jsonl)
    compare(tmp, "records-dates", None, lambda: frame.to_dict("records"), "cls", VOCAB, flags,
            options, jsonl=jsonl)
    # A dotted path reads its first key: a datetime beside it stays out of the way.
    nested = [{"m": {"body": r["text"]}, "label": r["label"], "when": frame["sent"][1]}
              for r in rows[:50]]
    nested_jsonl = write_jsonl([{"m": {"body": r["text"]}, "label": r["label"]} for r in rows[:50]],
                               os.path.join(tmp, "nested-dates.jsonl"))
    compare(tmp, "nested-dates", None, lambda: nested, "cls", VOCAB,
            flags + ["--text-field", "m.body"], dict(options, text_field="m.body"),
            jsonl=nested_jsonl)
    # In a field that is read, the value is named, under fail and under skip.
    stamped = pandas.DataFrame({"text": ["fine", "also fine"],
                                "label": pandas.to_datetime(["2024-01-01", "2024-01-02"])})
    out = os.path.join(tmp, "dated-label")
    expected = ("rows: row 0: cannot be written as JSON: field 'label': a value of type "
                "Timestamp has no JSON form")
    for on_error in ("fail", "skip"):
        try:
            shardkit.write_dataset(stamped, out, task="cls", tokenizer=VOCAB, progress=False,
                                   label_field="label", on_error=on_error)
            raise AssertionError("a Timestamp label was accepted")
        except shardkit.ShardkitError as e:
            message = str(e)
            assert expected in message, message
            # Every row failed: the message says so and does not ask for label_field.
            assert "every row failed" in message and "label_field" not in message, message
            assert "pass labels to name the labels" in message, message
    assert not os.path.exists(out)
    print("  datetime, Decimal and Timedelta columns not read: as without them; read: named")


def test_bad_rows(tmp):
    good = {"text": "fine"}
    rows = [good, good, {"txt": "no text"}, good, {"text": 7}, b"not a row", {"text": b"bytes"},
            {"text": "nan", "x": float("nan")}, {"text": "\ud800 lone surrogate"}, good]
    out = os.path.join(tmp, "bad")
    try:
        shardkit.write_dataset(iter(rows), out, task="lm", tokenizer=VOCAB, progress=False)
        raise AssertionError("a bad row was accepted")
    except shardkit.ShardkitError as e:
        # Counted from 0, in the order given: rows[2] is the first bad one.
        assert str(e) == "rows: row 2: missing field 'text'", str(e)
    assert not os.path.exists(out)
    summary = shardkit.write_dataset(iter(rows), out, task="lm", tokenizer=VOCAB, progress=False,
                                     on_error="skip", max_len=16)
    # NaN (pandas' missing value) is null, in a field not read: rows[7] is a good row.
    assert summary["skipped"] == 5 and summary["documents"] == 5, summary
    errors = summary["errors"]
    assert errors[0] == "rows: row 2: missing field 'text'", errors
    assert errors[1] == "rows: row 4: field 'text' is not a string", errors
    assert errors[2] == "rows: row 5: a row must be a dict (or a mapping), not bytes", errors
    assert errors[3].startswith("rows: row 6: cannot be written as JSON"), errors
    assert errors[4] == "rows: row 8: invalid UTF-8 at byte 9 of the line", errors
    assert len(errors) == 5, errors  # the summary lists the first five
    try:
        shardkit.write_dataset([good, {"text": "a lone \ud800 surrogate"}], out, tokenizer=VOCAB,
                               progress=False, force=True)
        raise AssertionError("a lone surrogate was accepted")
    except shardkit.ShardkitError as e:
        assert str(e).startswith("rows: row 1: invalid UTF-8 at byte 16 of the line"), str(e)
    print("  bad rows: the first raises naming row 2; with on_error='skip' 6 of 10 skipped")


def test_messages_name_keywords(tmp):
    """The converter's messages name shardify's flags; write_dataset's name its keywords."""
    out = os.path.join(tmp, "kw")
    shardkit.write_dataset([{"text": "fine"}], out, tokenizer=VOCAB, progress=False)
    cases = [
        (lambda: shardkit.write_dataset([{"text": "fine"}], out, tokenizer=VOCAB, progress=False),
         "already exists; pass force=True to replace it"),
        (lambda: shardkit.write_dataset([], os.path.join(tmp, "none"), tokenizer=VOCAB,
                                        progress=False),
         "check the input and text_field, or pass allow_empty=True"),
    ]
    no_separator = os.path.join(tmp, "no-separator.txt")  # WordPiece without [SEP] or [CLS]
    with open(no_separator, "w") as f:
        f.write("[UNK]\nfine\n")
    cases.append((lambda: shardkit.write_dataset([{"text": "fine"}], os.path.join(tmp, "none"),
                                                 tokenizer=no_separator, progress=False),
                  "to join documents; use pack=False"))
    for call, words in cases:
        try:
            call()
            raise AssertionError(f"accepted: expected {words!r}")
        except shardkit.ShardkitError as e:
            assert words in str(e) and "--" not in str(e), str(e)
    assert not os.path.exists(os.path.join(tmp, "none"))
    print("  messages: force=True, allow_empty=True and pack=False, not --force, --allow-empty "
          "and --no-pack")


def test_one_shot_rows_need_labels(tmp):
    try:
        shardkit.write_dataset((r for r in cls_rows(10, 0)), os.path.join(tmp, "once"), task="cls",
                               tokenizer=VOCAB, progress=False)
        raise AssertionError("a generator was read twice")
    except shardkit.ShardkitError as e:
        assert "labels=" in str(e), str(e)
    for bad in ({"where": "x > 1"}, {"no_such_option": 1}):
        try:
            shardkit.write_dataset([], os.path.join(tmp, "x"), tokenizer=VOCAB, progress=False,
                                   **bad)
            raise AssertionError(f"{bad} accepted")
        except TypeError as e:
            assert list(bad)[0] in str(e), str(e)


def entries(directory):
    return sorted(os.listdir(directory))


def test_exception_from_rows_leaves_nothing(tmp):
    parent = os.path.join(tmp, "raising")
    os.makedirs(parent)

    class Boom(Exception):
        pass

    def rows():
        rng = random.Random(5)
        for i in range(100000):
            if i == 30000:
                raise Boom("the source broke")
            yield {"text": sentence(rng, 5, 50)}

    try:
        shardkit.write_dataset(rows(), os.path.join(parent, "ds"), tokenizer=VOCAB, threads=2,
                               progress=False, shard_size=20000)
        raise AssertionError("the generator's exception was lost")
    except Boom as e:
        assert str(e) == "the source broke"
    assert entries(parent) == [], entries(parent)
    print("  an exception from the generator propagates; no dataset, no staging left")


def test_keyboard_interrupt_leaves_nothing(tmp):
    parent = os.path.join(tmp, "interrupted")
    os.makedirs(parent)
    out = os.path.join(parent, "ds")
    # An existing dataset that the interrupted conversion was to replace (force=True) survives.
    shardkit.write_dataset([{"text": "the old dataset"}], out, tokenizer=VOCAB, progress=False)
    with open(os.path.join(out, "manifest.json"), "rb") as f:
        old_manifest = f.read()
    pulled = []

    def endless():
        rng = random.Random(6)
        while True:
            if len(pulled) == 20000:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, mid-way through the rows
            pulled.append(None)
            yield {"text": sentence(rng, 5, 50)}

    try:
        shardkit.write_dataset(endless(), out, tokenizer=VOCAB, threads=2, progress=False,
                               force=True, shard_size=20000)
        raise AssertionError("SIGINT did not stop write_dataset")
    except KeyboardInterrupt:
        pass
    assert 20000 <= len(pulled) < 40000, len(pulled)
    assert entries(parent) == ["ds"], entries(parent)
    with open(os.path.join(out, "manifest.json"), "rb") as f:
        assert f.read() == old_manifest
    assert len(shardkit.Dataset(out)) == 1
    print(f"  SIGINT after {len(pulled)} rows: KeyboardInterrupt, the old dataset intact, no staging")


class Terminal(io.StringIO):
    """A stderr that says it is a terminal, as tqdm and write_dataset ask."""

    def isatty(self):
        return True


PROGRESS_CHILD = """
import os, sys, shardkit
rows = [{"text": "row %d of the corpus" % i, "label": "a" if i % 2 else "b"} for i in range(3000)]
shardkit.write_dataset(rows, sys.argv[1], tokenizer=os.environ["SHARDKIT_VOCAB"], task="cls",
                       labels=["a", "b"], progress=eval(sys.argv[2]), progress_interval=0.001)
"""


def progress_lines(tmp, name, progress):
    """What write_dataset writes to its process's stderr (a pipe, not a terminal)."""
    r = subprocess.run([sys.executable, "-c", PROGRESS_CHILD, os.path.join(tmp, name), progress],
                       capture_output=True, text=True, check=True)
    return r.stderr


def test_progress(tmp):
    # On a terminal: a tqdm bar (tqdm is installed); progress=False: nothing.
    err = Terminal()
    with contextlib.redirect_stderr(err):
        shardkit.write_dataset(cls_rows(3000, 0), os.path.join(tmp, "bar"), tokenizer=VOCAB)
        shardkit.write_dataset(cls_rows(10, 0), os.path.join(tmp, "quiet"), tokenizer=VOCAB,
                               progress=False)
    shown = err.getvalue()
    assert "3000/3000" in shown and "write_dataset" in shown, shown
    assert shown.count("write_dataset:") >= 1 and "/10 " not in shown and "10/10" not in shown, shown
    # Elsewhere (a log): shardify's lines. "always" ends with the whole count; "auto" at a 0.001 s
    # interval prints lines of rows done; False and "never" print nothing.
    always = progress_lines(tmp, "always", '"always"').splitlines()
    assert always and all(line.startswith("write_dataset: ") for line in always), always
    assert always[-1].startswith("write_dataset: 3,000 of 3,000 rows (100.0%), ") and \
        ", took " in always[-1], always
    assert "\r" not in "".join(always)
    auto = progress_lines(tmp, "auto", '"auto"')
    assert auto.count("write_dataset: ") >= 1 and " of 3,000 rows (" in auto, auto
    assert progress_lines(tmp, "never", '"never"') == progress_lines(tmp, "false", "False") == ""
    try:
        shardkit.write_dataset(cls_rows(10, 0), os.path.join(tmp, "bad"), tokenizer=VOCAB,
                               progress="sometimes")
        raise AssertionError("progress='sometimes' accepted")
    except ValueError as e:
        assert "'auto', 'always' or 'never'" in str(e), e
    print(f"  progress: a tqdm bar on a terminal; {len(always)} lines in a log; none when off")


def test_dict_of_columns(tmp):
    """A dict of columns (what a pandas user holds before making a DataFrame) is refused as what it
    is, not as rows that are its keys; the conversions the message names give shardify's dataset
    of the same rows."""
    rows = [{"text": r["text"], "label": r["label"]} for r in cls_rows(40, 5)]
    columns = {"text": [r["text"] for r in rows], "label": [r["label"] for r in rows]}
    out = os.path.join(tmp, "columns")
    for given, what in ((columns, "rows is a dict of columns ('text', 'label')"),
                        ({k: numpy.array(v) for k, v in columns.items()}, "dict of columns"),
                        (rows[0], "rows is a dict ('text', 'label')")):
        try:
            shardkit.write_dataset(given, out, task="cls", tokenizer=VOCAB, progress=False)
            raise AssertionError(f"a dict was taken as rows: {what}")
        except TypeError as e:
            message = str(e)
            assert what in message and "iterating a dict gives its keys, not rows" in message, message
            assert "a list of dicts" in message and "DataFrame" in message, message
    assert not os.path.exists(out)
    cli = os.path.join(tmp, "columns-cli")
    shardify(write_jsonl(rows, os.path.join(tmp, "columns.jsonl")), cli, "cls", VOCAB)
    as_list = [dict(zip(columns, values)) for values in zip(*columns.values())]
    for name, given in (("list", as_list), ("frame", pandas.DataFrame(columns))):
        mine = os.path.join(tmp, f"columns-{name}")
        shardkit.write_dataset(given, mine, task="cls", tokenizer=VOCAB, threads=1,
                               block_size=4096, progress=False)
        assert_same_dataset(cli, mine)
    print("  a dict of columns (or one row) is named as such, with what to pass instead")


def test_progress_interval_range(tmp):
    """progress_interval is refused as shardify refuses --progress-interval (a number of seconds
    above 0), whether or not progress is shown, before any row is read."""
    out = os.path.join(tmp, "interval")
    for bad in (-1, 0, -0.5, float("nan"), float("inf")):
        for progress in (False, "always"):
            try:
                shardkit.write_dataset(cls_rows(5, 0), out, tokenizer=VOCAB, progress=progress,
                                       progress_interval=bad)
                raise AssertionError(f"progress_interval={bad} accepted")
            except shardkit.OptionError as e:
                assert f"progress_interval must be a number of seconds above 0, not {bad}" in \
                    str(e), str(e)
    for bad in ("5", True, None):
        try:
            shardkit.write_dataset(cls_rows(5, 0), out, tokenizer=VOCAB, progress=False,
                                   progress_interval=bad)
            raise AssertionError(f"progress_interval={bad!r} accepted")
        except TypeError as e:
            assert "progress_interval must be a number of seconds, not" in str(e), str(e)
    assert not os.path.exists(out)
    cli = subprocess.run([pyutil.SHARDIFY, "--input", write_jsonl(cls_rows(5, 0), out + ".jsonl"),
                          "--task", "lm", "--tokenizer", VOCAB, "--out", out,
                          "--progress-interval", "-1"], capture_output=True, text=True)
    assert cli.returncode != 0 and "above 0" in cli.stderr, cli.stderr
    summary = shardkit.write_dataset(cls_rows(5, 0), out, tokenizer=VOCAB, progress=False,
                                     progress_interval=0.5)
    assert summary["examples"] == 5, summary
    print("  progress_interval: -1, 0, NaN and inf refused as shardify refuses them; 0.5 taken")


def main():
    tmp = tempfile.mkdtemp(prefix="shardkit-write-")
    try:
        test_identical_to_cli(tmp)
        test_direct_and_json_rows(tmp)
        test_dataframe(tmp)
        test_values_without_json_form(tmp)
        test_bad_rows(tmp)
        test_messages_name_keywords(tmp)
        test_one_shot_rows_need_labels(tmp)
        test_exception_from_rows_leaves_nothing(tmp)
        test_keyboard_interrupt_leaves_nothing(tmp)
        test_progress(tmp)
        test_dict_of_columns(tmp)
        test_progress_interval_range(tmp)
        print("write_dataset: ok")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
