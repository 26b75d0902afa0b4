"""The Python module against the C++ tool and against arithmetic stated here."""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402


def test_dataset_matches_dump(path, labels):
    ds = shardkit.Dataset(path)
    assert len(ds) == len(labels)
    assert [f["name"] for f in ds.schema] == ["input_ids", "length", "labels"]
    assert ds.shards > 1
    assert ds.info["labels"]["names"] == ["neg", "pos"]
    assert ds.info["fields"]["input_ids"] == "token_ids"
    dump = subprocess.run([pyutil.INSPECT, "dump", path, "--json", "--from", "0", "--count", str(len(ds))],
                          check=True, capture_output=True, text=True).stdout.splitlines()
    for line in dump:
        rec = json.loads(line)
        mine = ds[rec["index"]]
        assert mine["input_ids"].tolist() == rec["input_ids"]
        assert int(mine["length"]) == rec["length"]
        # The label of each line is known from the corpus generator, not from shardkit.
        assert int(mine["labels"]) == labels[rec["index"]]


def epoch_batches(path, **options):
    loader = shardkit.Loader(path, **options)
    out = []
    while True:
        item = loader.next_with_records()
        if item is None:
            return out
        out.append(item)


def test_loader_epoch(path, labels):
    ds = shardkit.Dataset(path)
    batches = epoch_batches(path, batch_size=32, shuffle=True, seed=5, threads=2, include_metadata=True)
    seen = [r for _, records in batches for r in records]
    assert sorted(seen) == list(range(len(ds))), "an epoch visits every record once"
    assert seen != sorted(seen), "shuffled"
    for batch, records in batches:
        assert batch["input_ids"].dtype == torch.int64
        longest = int(batch["length"].max())
        assert batch["input_ids"].shape == (len(records), longest), "dynamic padding to the longest row"
        for row, r in enumerate(records):
            n = int(ds[r]["length"])
            assert batch["input_ids"][row, :n].tolist() == ds[r]["input_ids"][:n].tolist()
            assert batch["attention_mask"][row].tolist() == [1] * n + [0] * (longest - n)
            assert int(batch["labels"][row]) == labels[r]
    # Same seed and epoch, other thread count: the same batches.
    again = epoch_batches(path, batch_size=32, shuffle=True, seed=5, threads=1, include_metadata=True)
    assert [r for _, r in again] == [r for _, r in batches]
    assert [r for _, r in epoch_batches(path, batch_size=32, seed=5, shuffle=False)][0] == list(range(32))


def test_resume(path):
    full = epoch_batches(path, batch_size=16, shuffle=True, seed=9, threads=2)
    loader = shardkit.Loader(path, batch_size=16, shuffle=True, seed=9, threads=2)
    for _ in range(7):
        loader.next_with_records()
    state = loader.state_dict()
    assert state["samples_consumed"] == 7 * 16
    resumed = shardkit.Loader(path, batch_size=16, shuffle=True, seed=9, threads=1)
    resumed.load_state_dict(state)
    rest = []
    while (item := resumed.next_with_records()) is not None:
        rest.append(item)
    assert len(rest) == len(full) - 7
    for (a, ra), (b, rb) in zip(rest, full[7:]):
        assert ra == rb
        for k in a:
            assert torch.equal(a[k], b[k]), k


def test_iterable_dataset(path):
    it = shardkit.IterableDataset(path, batch_size=32, shuffle=True, seed=5)
    dl = torch.utils.data.DataLoader(it, batch_size=None)
    direct = epoch_batches(path, batch_size=32, shuffle=True, seed=5)
    got = list(dl)
    assert len(got) == len(direct)
    for a, (b, _) in zip(got, direct):
        assert torch.equal(a["input_ids"], b["input_ids"])


def test_corruption_is_an_exception(path):
    shard = sorted(f for f in os.listdir(path) if f.endswith(".shard"))[1]
    data = bytearray(open(os.path.join(path, shard), "rb").read())
    data[200] ^= 0x40  # inside block 0's stored bytes
    open(os.path.join(path, shard), "wb").write(data)
    loader = shardkit.Loader(path, batch_size=64, shuffle=False)
    try:
        for _ in loader:
            pass
    except shardkit.ShardkitError as e:
        assert shard in str(e) and "block 0" in str(e), str(e)
    else:
        raise AssertionError("a corrupt block must raise")


def test_load_state_dict_checks_its_values(path):
    loader = shardkit.Loader(path, batch_size=16, seed=3)
    n = len(shardkit.Dataset(path))
    loader.load_state_dict({"seed": 3, "epoch": 0, "samples_consumed": n})  # the end: valid
    for field, value in [("samples_consumed", n + 1), ("samples_consumed", -1), ("epoch", -2),
                         ("seed", "x")]:
        state = {"seed": 3, "epoch": 0, "samples_consumed": 0, field: value}
        try:
            loader.load_state_dict(state)
        except shardkit.ShardkitError as e:
            assert field in str(e), str(e)
            assert "valid range is 0.." in str(e), str(e)
            if field == "samples_consumed":
                assert f"0..{n}" in str(e), str(e)
        else:
            raise AssertionError(f"load_state_dict accepted {field}={value!r}")


def test_rank_and_world_size_from_the_environment(path):
    explicit = [r for _, rs in epoch_batches(path, batch_size=8, seed=4, rank=1, world_size=3) for r in rs]
    os.environ.update(RANK="1", WORLD_SIZE="3")
    try:
        from_env = [r for _, rs in epoch_batches(path, batch_size=8, seed=4) for r in rs]
        given = [r for _, rs in epoch_batches(path, batch_size=8, seed=4, rank=0, world_size=1) for r in rs]
    finally:
        del os.environ["RANK"], os.environ["WORLD_SIZE"]
    assert from_env == explicit
    assert len(given) == len(shardkit.Dataset(path)), "explicit options win over the environment"


def test_remote_dataset_over_nginx(path):
    """The same batches from an http:// URL served by a real nginx as from the directory."""
    import shutil
    import socket
    import tempfile
    work = tempfile.mkdtemp(prefix="shardkit-py-nginx-")
    try:
        os.makedirs(os.path.join(work, "www"))
        shutil.copytree(path, os.path.join(work, "www", "ds"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        conf = os.path.join(work, "nginx.conf")
        temp = "".join(f"  {k}_temp_path {work}/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        open(conf, "w").write(
            f"worker_processes 1;\nuser root;\npid {work}/nginx.pid;\nerror_log {work}/error.log;\n"
            f"events {{ worker_connections 64; }}\nhttp {{\n  access_log off;\n{temp}"
            f"  server {{ listen 127.0.0.1:{port}; root {work}/www; }}\n}}\n")
        server = subprocess.Popen(["/usr/sbin/nginx", "-c", conf, "-e", f"{work}/error.log", "-g", "daemon off;"])
        try:
            for _ in range(200):
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                import time
                time.sleep(0.025)
            url = f"http://127.0.0.1:{port}/ds"
            assert len(shardkit.Dataset(url)) == len(shardkit.Dataset(path))
            assert torch.equal(shardkit.Dataset(url)[7]["input_ids"], shardkit.Dataset(path)[7]["input_ids"])
            remote = epoch_batches(url, batch_size=32, seed=6, cache_dir=os.path.join(work, "cache"))
            local = epoch_batches(path, batch_size=32, seed=6)
            assert [r for _, r in remote] == [r for _, r in local]
            for (a, _), (b, _) in zip(remote, local):
                for k in a:
                    assert torch.equal(a[k], b[k]), k
            try:
                shardkit.Dataset(f"http://127.0.0.1:{port}/missing")
            except shardkit.ShardkitError as e:
                assert f"http://127.0.0.1:{port}/missing/manifest.json" in str(e) and "404" in str(e), str(e)
            else:
                raise AssertionError("a missing remote dataset must raise")
        finally:
            server.terminate()
            server.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_default_threads(path):
    """threads=0: the CPUs taskset leaves the process, shared among the ranks of this node;
    shardify --threads 0 resolves to the CPUs too. Counted here from the affinity mask."""
    cpus = len(os.sched_getaffinity(0))
    probe = "import sys, shardkit; print(shardkit.Loader(sys.argv[1], batch_size=4, **eval(sys.argv[2])).threads)"
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK")}
    cases = [  # (CPUs given to taskset, environment, keywords, threads expected)
        (cpus, {}, {}, cpus),
        (1, {}, {}, 1),
        (cpus, {"LOCAL_WORLD_SIZE": "2", "WORLD_SIZE": "2"}, {}, max(1, cpus // 2)),
        (cpus, {"WORLD_SIZE": "64"}, {}, cpus),  # a world size alone may span many machines
        (cpus, {}, {"world_size": 4, "ranks_per_node": 4}, max(1, cpus // 4)),
        (1, {}, {"threads": 3}, 3),
    ]
    for given, extra, keywords, want in cases:
        mask = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:given])
        out = subprocess.run(["taskset", "-c", mask, sys.executable, "-c", probe, path, repr(keywords)],
                             env=dict(env, **extra), check=True, capture_output=True, text=True)
        assert int(out.stdout) == want, (given, extra, keywords, out.stdout, want)
    out = subprocess.run(["taskset", "-c", str(min(os.sched_getaffinity(0))), pyutil.SHARDIFY,
                          "--print-options"], check=True, capture_output=True, text=True)
    assert json.loads(out.stdout)["threads"] == 1, out.stdout
    print(f"  threads=0 on {cpus} CPUs: the affinity mask, divided by the ranks of the node")


def main():
    path, labels = pyutil.dataset(1000)
    tests = [lambda: test_dataset_matches_dump(path, labels), lambda: test_loader_epoch(path, labels),
             lambda: test_resume(path), lambda: test_iterable_dataset(path),
             lambda: test_load_state_dict_checks_its_values(path),
             lambda: test_rank_and_world_size_from_the_environment(path),
             lambda: test_default_threads(path),
             lambda: test_remote_dataset_over_nginx(path),
             lambda: test_corruption_is_an_exception(path)]
    for t in tests:
        t()
    print(f"{len(tests)} passed, 0 failed")


if __name__ == "__main__":
    main()
