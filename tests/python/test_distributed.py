"""Two processes, torch.distributed with the gloo backend on this machine: per epoch the ranks
see disjoint samples covering the dataset (DistributedSampler's policy: the last partial global
batch is padded by wrapping around unless drop_last), the same number of steps, and DDP's
all-reduce keeps the two model replicas identical."""
import gc
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402

WORLD = 2
BATCH = 16


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, path, port, drop_last, result_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)  # identical initial replicas
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.EmbeddingBag(30522, 8, mode="mean"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    loader = shardkit.Loader(path, batch_size=BATCH, shuffle=True, seed=3, rank=rank,
                             world_size=WORLD, drop_last=drop_last, threads=1)
    per_epoch = []
    for epoch in range(2):
        loader.set_epoch(epoch)
        records, steps = [], 0
        while (item := loader.next_with_records()) is not None:
            batch, rows = item
            records.extend(rows)
            loss = model(batch["input_ids"]).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()  # DDP all-reduces gradients here
            optimizer.step()
            steps += 1
        per_epoch.append((steps, records))
    gathered = [None] * WORLD
    dist.all_gather_object(gathered, per_epoch)
    weights = [torch.zeros_like(model.module.weight) for _ in range(WORLD)]
    dist.all_gather(weights, model.module.weight.detach())
    if rank == 0:
        torch.save({"per_rank": gathered, "same_weights": torch.equal(weights[0], weights[1])},
                   os.path.join(result_dir, f"result-{int(drop_last)}.pt"))
    # Tear down in order: torch 1.13's gloo group can deadlock at exit when the DDP reducer is
    # destroyed after the group (a gloo thread waits for the GIL the destructor holds).
    dist.barrier()
    del model, optimizer
    gc.collect()
    dist.destroy_process_group()


def check(result, n, drop_last):
    assert result["same_weights"], "DDP replicas diverged"
    for epoch in range(2):
        steps = [result["per_rank"][r][epoch][0] for r in range(WORLD)]
        records = [result["per_rank"][r][epoch][1] for r in range(WORLD)]
        assert steps[0] == steps[1], f"ranks ran different step counts: {steps}"
        global_batch = BATCH * WORLD
        if drop_last:
            expected = n // global_batch * global_batch
            assert steps[0] == n // global_batch
            assert not set(records[0]) & set(records[1]), "ranks overlap"
            assert len(records[0]) + len(records[1]) == expected
        else:
            per_rank = -(-n // WORLD)  # ceil, padded like DistributedSampler
            assert len(records[0]) == len(records[1]) == per_rank
            assert set(records[0]) | set(records[1]) == set(range(n)), "not every record was seen"
            # Only the padding repeats: exactly WORLD * per_rank - n samples.
            assert len(records[0]) + len(records[1]) - n == WORLD * per_rank - n
    # Epochs differ in order.
    assert result["per_rank"][0][0][1] != result["per_rank"][0][1][1]


def main():
    n = 999  # not a multiple of the global batch
    path, _ = pyutil.dataset(n, seed=4)
    out = pyutil.scratch("shardkit-dist-")
    for drop_last in (False, True):
        mp.spawn(worker, args=(path, free_port(), drop_last, out), nprocs=WORLD, join=True)
        check(torch.load(os.path.join(out, f"result-{int(drop_last)}.pt")), n, drop_last)
    print("2 passed, 0 failed")


if __name__ == "__main__":
    main()
