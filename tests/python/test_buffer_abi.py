"""The extension hands arrays over through the buffer protocol, never through NumPy's C API.

NumPy 2 changed the structs of its C API; an extension built with a pybind11 older than 2.12
(Debian 12's is 2.10) reads them at the wrong offsets under NumPy 2 and makes arrays with wrong
strides: every batch silently wrong. Here the extension is loaded alone, without the shardkit
package (which imports torch and NumPy), and its batches and records are read with memoryview
alone and compared with `shard-inspect dump`. NumPy must never have been imported."""
import importlib.util
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402


def load_extension():
    package = os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0], "shardkit")
    so = next(f for f in os.listdir(package) if f.startswith("_shardkit.") and f.endswith(".so"))
    spec = importlib.util.spec_from_file_location("_shardkit", os.path.join(package, so))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows_of(view):
    """A 2-D memoryview as lists, after checking the layout it declares."""
    assert view.ndim == 2 and view.c_contiguous, (view.ndim, view.strides)
    rows, width = view.shape
    assert view.strides == (width * view.itemsize, view.itemsize), view.strides
    return view.tolist()


def main():
    path, _ = pyutil.dataset(300)
    dump = subprocess.run([pyutil.INSPECT, "dump", path, "--json", "--from", "0", "--count", "300"],
                          check=True, capture_output=True, text=True).stdout.splitlines()
    want = {json.loads(line)["index"]: json.loads(line) for line in dump}
    ext = load_extension()

    # Records: int32 ids (widened from uint16), a 0-d int64 length.
    ds = ext.Dataset(path)
    for index in (0, 1, 299):
        record = ds.record(index)
        ids = memoryview(record["input_ids"])
        assert ids.format == "i" and ids.ndim == 1 and ids.strides == (4,), (ids.format, ids.strides)
        assert list(ids) == want[index]["input_ids"], index
        length = memoryview(record["length"])
        assert length.format in ("l", "q") and length.ndim == 0, (length.format, length.ndim)
        assert length.tolist() == want[index]["length"], index

    # Batches, in order: views of the loader's buffers, int64 and, as int32, a narrower copy.
    for int32, fmt in ((False, ("l", "q")), (True, ("i",))):
        loader = ext.Loader(path, batch_size=7, shuffle=False, int32=int32, dynamic_padding=True)
        seen = 0
        while (item := loader.next()) is not None:
            batch, records = item[0], item[1]
            ids = memoryview(batch["input_ids"])
            assert ids.format in fmt, ids.format
            for row, record in zip(rows_of(ids), records):
                length = want[record]["length"]
                assert row[:length] == want[record]["input_ids"][:length], record
            mask = rows_of(memoryview(batch["attention_mask"]))
            assert [sum(m) for m in mask] == [want[r]["length"] for r in records], records
            seen += len(records)
        assert seen == 300, seen
        del loader
    assert "numpy" not in sys.modules, "the extension imported NumPy"
    print("extension arrays: buffer protocol only, equal to shard-inspect dump; NumPy never imported")
    # The package loads the extension under its own name: in a process of its own.
    dumped = os.path.join(os.path.dirname(path), "dump.json")
    with open(dumped, "w") as f:
        json.dump(want, f)
    subprocess.run([sys.executable, __file__, "--outlive", path, dumped], check=True)


def check_tensors_outlive_their_loader(path, want):
    """The tensors share the loader's buffers: each must keep its batch's alive, so that a
    buffer is not handed to a later batch while a tensor still reads it."""
    import gc
    import shardkit
    want = {int(k): v for k, v in want.items()}
    loader = shardkit.Loader(path, batch_size=7, shuffle=False, memory_budget=1 << 16,
                             include_metadata=True)
    kept = [(b["input_ids"], b["length"]) for b in loader]
    loader.close()
    del loader
    gc.collect()
    row = 0
    for ids, lengths in kept:
        for r in range(ids.shape[0]):
            n = int(lengths[r])
            assert n == want[row]["length"] and ids[r, :n].tolist() == want[row]["input_ids"][:n], row
            row += 1
    assert row == 300, row
    print("tensors kept past their loader: every row as dumped")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--outlive"]:
        with open(sys.argv[3]) as f:
            check_tensors_outlive_their_loader(sys.argv[2], json.load(f))
    else:
        main()
