"""Rows for the C++ converter (shardkit.write_dataset): the rows' iterator, and JSON lines.

The converter pulls rows from records(rows) a chunk at a time. A row that is an exact dict of
plain values (str, int, float, bool, None, lists and dicts of them) has its fields taken out in
C++ (python/write_dataset.cc); every other row comes here, to encode_rows(), and becomes a JSON
object on one line, read by the same field rules as a JSONL file (text_field, pair_field,
label_field as dotted paths, QA answers), so that rows convert exactly as the same rows written
as JSONL. A value with no JSON form (a datetime, a Decimal, a Timedelta: what pandas columns of
those types hold) in a field the conversion does not read is left out of the row, as if the
column had been dropped before writing the JSONL; in a field it reads, the row cannot become
JSON and is handed over as a problem (row number and reason, naming the field).
"""
import collections.abc as _abc
import json as _json
import sys as _sys

CHUNK_ROWS = 1024  # DataFrame rows made into dicts at a time


def _plain(value):
    """NumPy scalars and arrays (pandas, HF datasets with a numpy format) as Python values."""
    if getattr(value, "shape", None) == () and hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"a value of type {type(value).__name__} has no JSON form")


# allow_nan=False: NaN is not JSON. A row holding NaN is encoded again with NaN as null (below).
_encoder = _json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False,
                             separators=(",", ":"), default=_plain)
_c_encoder = getattr(_json.encoder, "c_make_encoder", None)
if _c_encoder is not None:
    # The C encoder made once: JSONEncoder.encode() builds it again for every row (a third of
    # the per-row cost on short rows; bench_shardify's Python row).
    # Both private to json.encoder (typeshed declares neither), hence getattr.
    _c_encoder = _c_encoder(None, _plain, getattr(_json.encoder, "c_encode_basestring"), None,
                            ":", ",", False, False, False)

    def _encode(row):
        return "".join(_c_encoder(row, 0))
else:
    _encode = _encoder.encode


def _nan_as_none(value):
    """NaN, pandas' missing value, as None: what pandas' own to_json writes (null). pandas 3 gives
    NaN for a missing string in DataFrame.to_dict("records"), where pandas 1 gave None."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _nan_as_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nan_as_none(v) for v in value]
    if hasattr(value, "tolist"):  # NumPy scalars and arrays, as _plain makes them
        return _nan_as_none(value.tolist())
    return value


def _encode_value(value):
    try:
        return _encode(value)
    except ValueError:  # NaN or an infinity; only an infinity still fails
        return _encode(_nan_as_none(value))


def _is_read(key, keys_read):
    # A key that is not a str becomes one in JSON (7 is "7").
    return key in keys_read or str(key) in keys_read


def _without_unwritable(row, keys_read):
    """The row less the fields not read whose values have no JSON form (an object JSON cannot
    hold, an infinity); such a value in a field that is read is named."""
    kept = {}
    for key, value in row.items():
        try:
            _encode_value(value)
        except TypeError as e:
            if _is_read(key, keys_read):
                raise TypeError(f"field '{key}': {e}; convert it to a str, int or float "
                                "first") from None
            continue
        except ValueError as e:
            if _is_read(key, keys_read):
                raise ValueError(f"field '{key}': {e}") from None
            continue
        kept[key] = value
    return kept


def _encode_row(row, keys_read):
    try:
        return _encode_value(row)
    except (TypeError, ValueError):
        if keys_read is None:
            raise
    return _encode_value(_without_unwritable(row, keys_read))


class _NotARow(TypeError):
    pass


def _as_dict(row):
    if isinstance(row, _abc.Mapping):
        return dict(row)
    if hasattr(row, "_asdict"):  # a namedtuple, e.g. from DataFrame.itertuples()
        return row._asdict()
    if hasattr(row, "to_dict"):  # a pandas Series, e.g. from DataFrame.iterrows()
        return row.to_dict()
    raise _NotARow(f"a row must be a dict (or a mapping), not {type(row).__name__}")


def _frame_records(frame):
    """A pandas DataFrame's rows as dicts, a chunk at a time, with missing values as None."""
    for start in range(0, len(frame), CHUNK_ROWS):
        part = frame.iloc[start:start + CHUNK_ROWS]
        part = part.astype(object).where(part.notna(), None)
        yield from part.to_dict("records")


def is_dataframe(rows):
    pandas = _sys.modules.get("pandas")
    return pandas is not None and isinstance(rows, pandas.DataFrame)


def _is_column(value):
    """A column's values: a list or tuple, or what NumPy and pandas hold them in."""
    return isinstance(value, (list, tuple)) or hasattr(value, "tolist")


def refuse_mapping(rows):
    """A dict given as the rows would be read as its keys (what iterating a dict gives), each
    refused as "not a dict": TypeError saying what was given and what to pass instead."""
    if not isinstance(rows, _abc.Mapping) or is_dataframe(rows):
        return
    keys = ", ".join(repr(k) for k in list(rows)[:4]) + (", ..." if len(rows) > 4 else "")
    if rows and all(_is_column(v) for v in rows.values()):
        raise TypeError(
            f"write_dataset: rows is a dict of columns ({keys}), and iterating a dict gives its "
            "keys, not rows: pass a list of dicts, one per row ([dict(zip(columns, values)) for "
            "values in zip(*columns.values())]), pandas.DataFrame(columns) or "
            "datasets.Dataset.from_dict(columns)")
    raise TypeError(
        f"write_dataset: rows is a dict ({keys}), and iterating a dict gives its keys, not rows: "
        "pass an iterable of rows (a list of dicts, a pandas DataFrame, a datasets.Dataset); "
        "one row is [row]")


def records(rows):
    return _frame_records(rows) if is_dataframe(rows) else iter(rows)


def can_read_twice(rows):
    """Whether iter(rows) starts over (a list, a DataFrame, a datasets.Dataset) rather than
    continuing a one-shot iterator (a generator)."""
    if is_dataframe(rows):
        return True
    try:
        return iter(rows) is not rows
    except TypeError:
        return False


def encode_rows(rows, keys_read=None):
    """(JSON lines of the rows as UTF-8 bytes, [(row in rows, reason)] for those that have none).
    keys_read: the top-level keys the conversion reads (shardify::keys_read), None for all."""
    lines, problems = [], []
    for row in rows:
        try:
            lines.append(_encode_row(row if type(row) is dict else _as_dict(row), keys_read))
        except _NotARow as e:
            problems.append((len(lines), str(e)))
            lines.append("")
        except (TypeError, ValueError, RecursionError) as e:
            problems.append((len(lines), f"cannot be written as JSON: {e}"))
            lines.append("")
    lines.append("")
    # surrogatepass: a lone surrogate becomes invalid UTF-8, which the reader reports for its row
    # alone.
    return "\n".join(lines).encode("utf-8", "surrogatepass"), problems

