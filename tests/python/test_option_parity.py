"""Every option that both the command line and Python offer behaves the same in both: the same
name (the flag is the keyword with '-' for '_'), the same default, the same value once set, and
the same reason for refusing a bad value. The options, their kinds, ranges and choices are read
from the option tables themselves (_shardkit.convert_options(), loader_options()), so an option
added to a table is covered here without editing this test.

The CLI side is `shardify --print-options` and `shard-inspect order --print-options`, which
print the options as the table serializes them after parsing; the Python side is the same
serialization after the keywords are applied (write_dataset's and Loader's own parsing)."""
import functools
import json
import os
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402
from shardkit import _shardkit  # noqa: E402

# The base each value is set on: an sft conversion, so that sft's options are allowed too.
CONVERT_BASE_CLI = [pyutil.SHARDIFY, "--input", "rows.jsonl", "--task", "sft"]
CONVERT_BASE_PY = {"task": "sft"}
# Options of another task than the base's, which the converter refuses for it.
# Where each option that applies to some tasks only is tried: (task, more CLI args, more keywords).
TEMPLATE = (["--chat-template", "some/tokenizer_config.json"],
            {"chat_template": "some/tokenizer_config.json"})
CONVERT_TASK_OF = {"labels": ("cls",), "position_ids": ("lm",), "doc_stride": ("qa",),
                   "max_query_len": ("qa",), "pair_field": ("pair",), "label_field": ("cls",),
                   "context_field": ("qa",), "question_field": ("qa",),
                   "answers_field": ("qa",), "max_render_bytes": ("sft", *TEMPLATE),
                   "render_timeout": ("sft", *TEMPLATE)}
ORDER_BASE_CLI = [pyutil.INSPECT, "order", "dataset-dir"]


def write_to_nowhere(**options):
    """write_dataset of one row into a directory that is removed after."""
    with tempfile.TemporaryDirectory() as tmp:
        shardkit.write_dataset([{"text": "a b", "label": "x"}], os.path.join(tmp, "ds"),
                               tokenizer=pyutil.VOCAB, progress=False, **options)


def run_cli(base, args):
    p = subprocess.run(base + args + ["--print-options"], capture_output=True, text=True)
    if p.returncode == 0:
        return json.loads(p.stdout), None
    return None, p.stderr


def samples(spec, default):
    """(CLI arguments, Python value) of a valid value other than the default, or None."""
    flag, kind = "--" + spec["name"].replace("_", "-"), spec["kind"]
    if kind == "bool":
        return ([flag] if default is not True else ["--no-" + flag[2:]]), default is not True
    if kind in ("int", "uint"):
        value = int(spec["min"] or 0) + 3
        if spec["max"] is not None:
            value = min(value, int(spec["max"]))
        return [f"{flag}={value}"], value
    if kind == "real":
        lo, hi = spec["min"] or 0.0, spec["max"] if spec["max"] is not None else 1.0
        value = (lo + hi) / 4
        return [f"{flag}={value!r}"], value
    if kind in ("text", "path"):
        return [flag, "some/value"], "some/value"
    if kind == "choice":
        other = next(c for c in spec["choices"] if c != default)
        return [flag, other], other
    if kind == "text list":
        return [flag, "a,b"], ["a", "b"]
    if kind == "int list":
        return [flag, "3,4"], [3, 4]
    raise AssertionError(f"no sample for kind {kind}")


def bad_values(spec):
    """(CLI arguments, Python value) of values the table refuses."""
    flag, kind = "--" + spec["name"].replace("_", "-"), spec["kind"]
    out = []
    if kind in ("int", "uint", "real"):
        if spec["min"] is not None and spec["min"] > -1e18:
            low = spec["min"] - 1 if kind != "real" else spec["min"] - 0.5
            out.append(low if kind == "real" else int(low))
        if spec["max"] is not None and spec["max"] < 1e15:
            high = spec["max"] + 1 if kind != "real" else spec["max"] + 0.5
            out.append(high if kind == "real" else int(high))
        if kind == "real":
            out.append(float("nan"))
        return [([f"{flag}={v!r}" if kind == "real" else f"{flag}={v}"], v) for v in out]
    if kind == "choice":
        return [([flag, "bogus"], "bogus")]
    return []


def why_cli(stderr, flag):
    at = stderr.find(flag + " ")
    assert at >= 0, f"{flag}: the CLI's error does not name the flag: {stderr!r}"
    return stderr[at + len(flag) + 1:].strip().splitlines()[0]


def for_task(base_cli, base_py, where):
    """The base arguments with --task and the other arguments of `where`, when given."""
    if where is None or "task" not in base_py:
        return base_cli, base_py
    task, more_cli, more_py = (*where, [], {})[:3]
    at = base_cli.index("--task") + 1
    return (base_cli[:at] + [task] + base_cli[at + 1:] + more_cli,
            {**base_py, "task": task, **more_py})


def check_table(specs, base_cli, base_py, resolve_py, caller, skip_default=(), task_of=None):
    defaults_cli, err = run_cli(base_cli, [])
    assert err is None, err
    defaults_py = json.loads(resolve_py(**base_py))
    help_text = subprocess.run(base_cli[:2] + ["--help"] if base_cli[1] == "order"
                               else base_cli[:1] + ["--help"],
                               capture_output=True, text=True).stdout
    checked = refused = 0
    for spec in specs:
        name = spec["name"]
        flag = "--" + name.replace("_", "-")
        assert flag in help_text, f"{flag} is not in --help"
        if name not in skip_default:
            assert defaults_cli[name] == defaults_py[name], (
                f"{name}: default {defaults_cli[name]!r} on the CLI, {defaults_py[name]!r} in Python")
        args, value = samples(spec, defaults_py[name])
        cli, py = for_task(base_cli, base_py, (task_of or {}).get(name))
        got_cli, err = run_cli(cli, args)
        assert err is None, f"{flag} {args}: {err}"
        got_py = json.loads(resolve_py(**{**py, name: value}))
        assert got_cli[name] == got_py[name], f"{name}: {got_cli[name]!r} vs {got_py[name]!r}"
        assert got_py[name] != defaults_py[name], f"{name}: setting it changed nothing"
        checked += 1
        for args, value in bad_values(spec):
            _, err = run_cli(cli, args)
            assert err is not None, f"{flag} {args} was accepted"
            try:
                resolve_py(**{**py, name: value})
            except shardkit.OptionError as e:
                why_py = str(e).split(f"{caller}: {name} ", 1)[1]
            else:
                raise AssertionError(f"{name}={value!r} was accepted")
            assert why_cli(err, flag) == why_py, f"{name}: {why_cli(err, flag)!r} vs {why_py!r}"
            refused += 1
    return checked, refused


def test_converter_options():
    specs = [s for s in _shardkit.convert_options() if s["cli"]]
    assert {"max_len", "task", "pack", "labels", "threads"} <= {s["name"] for s in specs}
    checked, refused = check_table(specs, CONVERT_BASE_CLI, CONVERT_BASE_PY,
                                   _shardkit.resolved_convert_options, "write_dataset",
                                   task_of=CONVERT_TASK_OF)
    # ... and refused, even at their default values, for a task they do not apply to, on both
    # sides, saying where they apply.
    task_only = [s for s in specs if s["applies"]]
    assert {"labels", "label_field", "doc_stride", "chat_template", "pack"} <= {
        s["name"] for s in task_only}
    for spec in task_only:
        name, where = spec["name"], CONVERT_TASK_OF.get(spec["name"], ("sft",))
        args, value = samples(spec, None)
        other = "lm" if where[0] == "qa" else "qa"
        cli, py = for_task(CONVERT_BASE_CLI, CONVERT_BASE_PY, (other,))
        _, err = run_cli(cli, args)
        flag = "--" + name.replace("_", "-")
        assert err is not None and f"{flag} {spec['applies']}" in err, f"{args}, {other}: {err}"
        try:
            _shardkit.resolved_convert_options(**{**py, name: value})
        except shardkit.ShardkitError as e:
            # write_dataset names keywords (label_field), the conversion flags (--label-field).
            said = str(e).replace("--", "").replace("-", "_")
            assert f"{name} {spec['applies']}".replace("--", "").replace("-", "_") in said, str(e)
        else:
            raise AssertionError(f"{name} for task {other} was accepted")
        refused += 1
    # A switch set false is named as given: --no-pack, pack=False.
    cli, py = for_task(CONVERT_BASE_CLI, CONVERT_BASE_PY, ("cls",))
    _, err = run_cli(cli, ["--no-pack"])
    assert err is not None and "--no-pack is for --task lm and sft" in err, err
    # The options' resolver names the flag (--no-pack), write_dataset the keyword (pack=False).
    for call, said in ((_shardkit.resolved_convert_options, "--no-pack is for --task lm and sft"),
                       (write_to_nowhere, "pack=False is for task lm and sft")):
        try:
            call(**{**py, "pack": False})
        except shardkit.ShardkitError as e:
            assert said in str(e), str(e)
        else:
            raise AssertionError("pack=False for task cls was accepted")
    print(f"  converter: {checked} options alike on the CLI and in Python, {refused} bad values "
          "refused with the same reason")


def test_loader_order_options():
    specs = [s for s in _shardkit.loader_options() if s["order"]]
    assert {"batch_size", "seed", "max_tokens", "world_size"} <= {s["name"] for s in specs}
    # The order command shows one rank's view: rank, world_size and ranks_per_node unset mean
    # 0, 1 and one node there, where a Loader reads RANK, WORLD_SIZE and LOCAL_WORLD_SIZE.
    checked, refused = check_table(specs, ORDER_BASE_CLI, {},
                                   functools.partial(_shardkit.resolved_loader_options, "Loader"),
                                   "Loader", skip_default=("rank", "world_size", "ranks_per_node"))
    print(f"  loader order options: {checked} alike in shard-inspect order and Loader, {refused} "
          "bad values refused with the same reason")


def test_deprecated_alias_and_types():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = json.loads(_shardkit.resolved_convert_options(task="lm", no_pack=True))
    assert old["pack"] is False
    assert any(issubclass(w.category, FutureWarning) and "no_pack" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    new, _ = run_cli([pyutil.SHARDIFY, "--input", "x"], ["--no-pack"])
    assert new["pack"] is False
    for bad, message in ((dict(max_len="512"), "max_len must be an int, not str"),
                         (dict(pack=1), "pack must be a bool, not int"),
                         (dict(labels=[1.5]), "labels must be a list of str, not float"),
                         (dict(max_lenght=5), "did you mean 'max_len'"),
                         (dict(no_pack=True, pack=True), "set the same option; give only 'pack'")):
        try:
            _shardkit.resolved_convert_options(**bad)
        except TypeError as e:
            assert message in str(e), str(e)
        else:
            raise AssertionError(f"{bad} was accepted")
    p = subprocess.run([pyutil.SHARDIFY, "--input", "x", "--max-length", "256", "--print-options"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "did you mean --max-len" in p.stderr, p.stderr
    p = subprocess.run([pyutil.INSPECT, "inf", "x"], capture_output=True, text=True)
    assert p.returncode == 2 and "did you mean info" in p.stderr, p.stderr
    for tool in (pyutil.SHARDIFY, pyutil.INSPECT):
        p = subprocess.run([tool, "--version"], capture_output=True, text=True)
        assert p.returncode == 0 and p.stdout.split()[-1] == shardkit.__version__, p.stdout
    print("  no_pack=True warns and means pack=False; wrong types and misspellings named; "
          f"--version {shardkit.__version__} on both tools")


def main():
    test_converter_options()
    test_loader_order_options()
    test_deprecated_alias_and_types()
    print("option parity: all passed")


if __name__ == "__main__":
    main()
