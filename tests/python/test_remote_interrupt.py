"""Ctrl-C while a remote read waits: a real SIGINT sent to a Python child process reading from a
server on 127.0.0.1 that never answers (tests/servers/fault_server.py, started and stopped here
by PID). Each wait must end in KeyboardInterrupt within a second of the signal (it took 179 s in
a constructor and was not honoured after 244 s in next() before), and the reader's threads must
stop promptly when it is then dropped.

Run by CTest without arguments (the driver); the driver runs this file again as each child
("child MODE URL")."""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_torchrun_remote import free_port  # noqa: E402

FAULT_SERVER = os.path.join(os.environ.get("SHARDKIT_SOURCE", ""), "tests", "servers", "fault_server.py")
# Which reader each child opens and where it waits: (mode, dataset prefix on the server).
CASES = [("Loader()", "slow-manifest"), ("Dataset()", "slow-manifest"),
         ("Loader.next()", "slow-blocks"), ("Dataset[i]", "slow-blocks")]
SIGNAL_TO_EXCEPTION_S = 1.0


def child(mode, url):
    import shardkit

    print("ready", flush=True)
    reader = None
    try:
        if mode == "Loader()":
            reader = shardkit.Loader(url)
        elif mode == "Dataset()":
            reader = shardkit.Dataset(url)
        elif mode == "Loader.next()":
            reader = shardkit.Loader(url, batch_size=8)
            reader.next_with_records()
        else:
            reader = shardkit.Dataset(url)
            reader[len(reader) // 2]
        print("no wait", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    start = time.monotonic()
    del reader  # its threads must stop: a transfer in flight is abandoned
    print(f"closed {time.monotonic() - start:.3f}", flush=True)


def start_fault_server(root, log, rules):
    port = free_port()
    cmd = [sys.executable, FAULT_SERVER, "--port", str(port), "--log", log, "--root", root]
    for rule in rules:
        cmd += ["--rule", json.dumps(rule)]
    proc = subprocess.Popen(cmd)
    for _ in range(400):
        if proc.poll() is not None:
            raise RuntimeError("fault_server.py exited at start")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.025)
    raise RuntimeError("fault_server.py did not listen")


def logged(log, prefix):
    if not os.path.exists(log):
        return 0
    with open(log) as f:
        return sum(1 for line in f if line.split("\t")[2].startswith("/" + prefix + "/"))


def read_line(proc, timeout):
    """The child's next stdout line, or None after `timeout` seconds."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else None


def interrupt(mode, prefix, port, log):
    url = f"http://127.0.0.1:{port}/{prefix}/ds"
    before = logged(log, prefix)
    proc = subprocess.Popen([sys.executable, __file__, "child", mode, url], stdout=subprocess.PIPE,
                            text=True, bufsize=1)
    try:
        assert read_line(proc, 60) == "ready", mode
        deadline = time.monotonic() + 30
        while logged(log, prefix) == before:  # the child's request reached the server
            assert time.monotonic() < deadline, f"{mode}: no request reached the server"
            time.sleep(0.02)
        time.sleep(0.3)  # well inside the wait
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = read_line(proc, 10)
        took = time.monotonic() - sent
        assert line == "interrupted", f"{mode}: {line!r} {took:.1f} s after SIGINT"
        assert took < SIGNAL_TO_EXCEPTION_S, f"{mode}: KeyboardInterrupt {took:.3f} s after SIGINT"
        closed = read_line(proc, 10)
        assert closed and closed.startswith("closed "), f"{mode}: {closed!r} after KeyboardInterrupt"
        assert float(closed.split()[1]) < 1.0, f"{mode}: dropping the reader took {closed}"
        assert proc.wait(timeout=20) == 0, f"{mode}: exit {proc.returncode}"
        print(f"{mode}: KeyboardInterrupt {took * 1000:.0f} ms after SIGINT; reader dropped in "
              f"{float(closed.split()[1]) * 1000:.0f} ms")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def driver():
    import pyutil

    local, _ = pyutil.dataset(1000, seed=4)
    root = pyutil.scratch("shardkit-interrupt-")
    for prefix in ("slow-manifest", "slow-blocks"):
        shutil.copytree(local, os.path.join(root, prefix, "ds"))
    log = os.path.join(root, "requests.log")
    server, port = start_fault_server(root, log, [
        {"path": r"^/slow-manifest/.*manifest\.json$", "stall": True},
        {"path": r"^/slow-blocks/.*\.shard$", "stall": True}])
    try:
        for mode, prefix in CASES:
            interrupt(mode, prefix, port, log)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3])
    else:
        driver()
