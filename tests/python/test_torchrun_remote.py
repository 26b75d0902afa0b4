"""torchrun --nproc_per_node 2 (gloo, CPU) reading a dataset over HTTP from a real nginx on
127.0.0.1 with one cache directory shared by both ranks. The ranks take rank and world size from
torchrun's RANK/WORLD_SIZE; they see disjoint samples and run equal step counts, and step by
step the two ranks' batches together are the global batch a single process reads from the local
copy, for two epochs.

Run by CTest without arguments (the driver: dataset, nginx, torchrun); torchrun runs this file
again as each rank (RANK set)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BATCH = 16
EPOCHS = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(url, local, cache_dir, result_dir):
    import torch.distributed as dist
    import shardkit

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    # No rank/world_size given: the loader reads RANK/WORLD_SIZE as torchrun set them.
    loader = shardkit.Loader(url, batch_size=BATCH, shuffle=True, seed=11, drop_last=True,
                             cache_dir=cache_dir, threads=1)
    epochs = []
    for epoch in range(EPOCHS):
        loader.set_epoch(epoch)
        batches = []
        while (item := loader.next_with_records()) is not None:
            batch, rows = item
            batches.append([int(r) for r in rows])
            # The tensors are the records' bytes: the sum pins the content, not just the ids.
            batches[-1].append(int(batch["input_ids"].sum()))
        epochs.append(batches)
    gathered = [None, None]
    dist.all_gather_object(gathered, epochs)
    if rank == 0:
        with open(os.path.join(result_dir, "ranks.json"), "w") as f:
            json.dump(gathered, f)
    dist.barrier()
    dist.destroy_process_group()


def single_process_epochs(local):
    import shardkit

    loader = shardkit.Loader(local, batch_size=2 * BATCH, shuffle=True, seed=11, drop_last=True,
                             rank=0, world_size=1, threads=1)
    epochs = []
    for epoch in range(EPOCHS):
        loader.set_epoch(epoch)
        batches = []
        while (item := loader.next_with_records()) is not None:
            batch, rows = item
            ids = batch["input_ids"]
            batches.append(([int(r) for r in rows], int(ids[:BATCH].sum()), int(ids[BATCH:].sum())))
        epochs.append(batches)
    return epochs


def start_nginx(root, work):
    """nginx serving `root` on a free port, state under `work` (as tests/remote/servers.h)."""
    port = free_port()
    os.makedirs(work)
    conf = os.path.join(work, "nginx.conf")
    temp = " ".join(f"{k}_temp_path {work}/{k};" for k in
                    ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    with open(conf, "w") as f:
        f.write(f"""worker_processes 1; user root; pid {work}/nginx.pid; error_log {work}/error.log;
events {{ worker_connections 256; }}
http {{ access_log {work}/access.log; {temp} keepalive_requests 100000;
  server {{ listen 127.0.0.1:{port}; root {root}; }} }}
""")
    proc = subprocess.Popen(["/usr/sbin/nginx", "-c", conf, "-e", f"{work}/error.log",
                             "-g", "daemon off;"])
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        if proc.poll() is not None:
            raise RuntimeError("nginx exited: " + open(f"{work}/error.log").read())
        time.sleep(0.025)
    raise RuntimeError("nginx did not listen")


def driver():
    sys.path.insert(0, os.path.dirname(__file__))
    import pyutil

    tmp = tempfile.mkdtemp(prefix="shardkit-torchrun-")
    nginx = None
    try:
        n = 1000
        local, _ = pyutil.dataset(n, seed=5)
        os.makedirs(os.path.join(tmp, "www"))
        shutil.copytree(local, os.path.join(tmp, "www", "ds"))
        nginx, port = start_nginx(os.path.join(tmp, "www"), os.path.join(tmp, "nginx"))
        url = f"http://127.0.0.1:{port}/ds"
        cache = os.path.join(tmp, "cache")
        torchrun = shutil.which("torchrun")
        cmd = ([torchrun] if torchrun else [sys.executable, "-m", "torch.distributed.run"]) + [
            "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
            "--master_port", str(free_port()),
            # Debian's torch 1.13 under Python 3.11 parses only "1" and "2" for --redirects and
            # --tee (IntFlag no longer iterates its zero or composite members; the default "0"
            # fails): stderr to a log file and the console.
            "--redirects", "2", "--tee", "2", "--log_dir", os.path.join(tmp, "logs"),
            __file__, url, local, cache, tmp]
        env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        if run.returncode != 0:
            raise AssertionError(f"torchrun failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
        with open(os.path.join(tmp, "ranks.json")) as f:
            ranks = json.load(f)
        expected = single_process_epochs(local)
        for epoch in range(EPOCHS):
            r0, r1 = ranks[0][epoch], ranks[1][epoch]
            assert len(r0) == len(r1) == n // (2 * BATCH), f"step counts {len(r0)}, {len(r1)}"
            seen0 = {r for b in r0 for r in b[:-1]}
            seen1 = {r for b in r1 for r in b[:-1]}
            assert not seen0 & seen1, "the ranks' samples overlap"
            assert len(expected[epoch]) == len(r0)
            for step, (rows, sum0, sum1) in enumerate(expected[epoch]):
                assert r0[step][:-1] + r1[step][:-1] == rows, f"epoch {epoch} step {step} differs"
                assert (r0[step][-1], r1[step][-1]) == (sum0, sum1), "batch contents differ"
        assert ranks[0][0] != ranks[0][1], "the epochs have the same order"
        cached = os.listdir(cache)
        assert cached and not [c for c in cached if c.startswith(".tmp-")], cached[:5]
        print(f"2 ranks x {EPOCHS} epochs x {len(ranks[0][0])} steps over HTTP equal the local "
              f"single-process epochs; shared cache holds {len(cached)} files")
    finally:
        if nginx:
            nginx.send_signal(signal.SIGTERM)
            nginx.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if "RANK" in os.environ:
        rank_main(*sys.argv[1:5])
    else:
        driver()
