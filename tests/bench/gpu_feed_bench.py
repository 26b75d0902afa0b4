#!/usr/bin/env python3
"""Does the loader keep a GPU fed? Training steps per second fed by shardkit against the same
model fed from batches already resident on the GPU (the ceiling: no input pipeline at all), and
against nanoGPT's `np.memmap` get_batch (the common single-GPU baseline), in one run.

    python3 tests/bench/gpu_feed_bench.py DATASET [--steps 200] [--device cuda]

DATASET is an lm dataset (`shardify --task lm`). Also printed: the loader alone on this host
(samples/s and MB/s of int64 batches per core) and host-to-device copies of a batch from
pageable and from pinned memory. `--device cpu` runs the same code on a machine without a GPU, to
check the script; its ratios say nothing about GPUs.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

import shardkit


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0: fused kernels
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    future = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(-1) @ v


class Block(torch.nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.ln2 = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                       torch.nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(c, 2))
        y = causal_attention(q, k, v)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(torch.nn.Module):
    """GPT-2's shape (pre-norm blocks, tied embeddings), enough to time a real training step."""

    def __init__(self, vocab: int, context: int, width: int, layers: int, heads: int) -> None:
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, width)
        self.wpe = torch.nn.Embedding(context, width)
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(width)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.T
        return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())


def loader_batches(path, batch, device, pin, **options):
    """Endless input_ids from a shardkit Loader, one epoch after another."""
    with shardkit.Loader(path, batch_size=batch, seed=1, drop_last=True, **options) as loader:
        while True:
            for b in loader:
                ids = b["input_ids"]
                yield ids.pin_memory().to(device, non_blocking=True) if pin else ids.to(device)


def dataloader_batches(path, batch, device):
    """The README's torch integration: DataLoader(IterableDataset, batch_size=None) pinning."""
    ds = shardkit.IterableDataset(path, batch_size=batch, seed=1, drop_last=True)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0,
                                     pin_memory=device.type == "cuda")
    while True:
        for b in dl:
            yield b["input_ids"].to(device, non_blocking=True)


def memmap_batches(tokens_path, batch, context, device):
    """nanoGPT's get_batch: random windows of a flat uint16 token file, pinned, copied async."""
    data = np.memmap(tokens_path, dtype=np.uint16, mode="r")
    gen = torch.Generator().manual_seed(1)
    while True:
        ix = torch.randint(len(data) - context, (batch,), generator=gen)
        x = torch.stack([torch.from_numpy(data[i:i + context].astype(np.int64)) for i in ix])
        yield x.pin_memory().to(device, non_blocking=True) if device.type == "cuda" else x


def resident_batches(vocab, batch, context, device, count=16):
    """The ceiling: batches made on the device before timing starts."""
    gen = torch.Generator(device=device).manual_seed(1)
    kept = [torch.randint(vocab, (batch, context), device=device, generator=gen)
            for _ in range(count)]
    while True:
        yield from kept


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_training(model, optimizer, batches, steps, warmup, device):
    """Steps per second and the process's busy cores while training from `batches`."""
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")
    for i in range(warmup + steps):
        if i == warmup:
            sync(device)
            wall, cpu = time.perf_counter(), time.process_time()
        ids = next(batches)
        with autocast:
            loss = model(ids)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    sync(device)
    wall = time.perf_counter() - wall
    return steps / wall, (time.process_time() - cpu) / wall


def bench_loader_alone(path, batch, batches, threads_list):
    print("\n## The loader alone on this host (int64 [%d, T] batches)" % batch)
    print("| threads | samples/s | MB/s of int64 ids | MB/s per thread |")
    print("|---:|---:|---:|---:|")
    for threads in threads_list:
        feed = loader_batches(path, batch, torch.device("cpu"), False, threads=threads)
        next(feed)
        start, got, nbytes = time.perf_counter(), 0, 0
        while got < batches:
            ids = next(feed)
            got, nbytes = got + 1, nbytes + ids.numel() * 8
        seconds = time.perf_counter() - start
        feed.close()
        mb = nbytes / seconds / 1e6
        cores = threads or os.cpu_count()
        print(f"| {cores} | {got * batch / seconds:,.0f} | {mb:,.0f} | {mb / cores:,.0f} |")


def bench_copies(path, batch, device, copies=300):
    print("\n## Host-to-device copies of one [%d, T] int64 batch" % batch)
    ids = next(loader_batches(path, batch, torch.device("cpu"), False))
    pinned = ids.pin_memory()
    for name, src, blocking in (("pageable (the loader's tensor), .to(device)", ids, True),
                                ("pinned, .to(device, non_blocking=True)", pinned, False)):
        for _ in range(10):
            src.to(device, non_blocking=not blocking)
        sync(device)
        start = time.perf_counter()
        for _ in range(copies):
            src.to(device, non_blocking=not blocking)
        sync(device)
        seconds = (time.perf_counter() - start) / copies
        print(f"- {name}: {seconds * 1e6:,.0f} us a batch, "
              f"{ids.numel() * 8 / seconds / 1e9:.1f} GB/s")
    start = time.perf_counter()
    for _ in range(copies):
        ids.pin_memory()
    print(f"- pinning a batch (.pin_memory(), a copy into page-locked memory): "
          f"{(time.perf_counter() - start) / copies * 1e6:,.0f} us")


def write_token_file(path, out, batch):
    """The dataset's tokens as one flat uint16 file, for the memmap baseline."""
    with shardkit.Loader(path, batch_size=batch, shuffle=False) as loader, open(out, "wb") as f:
        for b in loader:
            ids, mask = b["input_ids"], b["attention_mask"].bool()
            f.write(ids[mask].to(torch.int32).numpy().astype(np.uint16).tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--models", default="small,gpt2")
    parser.add_argument("--threads", default="1,2,4,8,0")
    parser.add_argument("--work", default="/tmp/gpu_feed_bench")
    args = parser.parse_args()
    device = torch.device(args.device)
    info = shardkit.Dataset(args.dataset).info
    vocab = info["tokenizer"]["vocab_size"]
    with shardkit.Loader(args.dataset, batch_size=1, dynamic_padding=False) as loader:
        context = next(iter(loader))["input_ids"].shape[1]
    print(f"# gpu_feed_bench: {args.dataset}, vocab {vocab}, context {context}, "
          f"{os.cpu_count()} cores, device {device}"
          + (f" ({torch.cuda.get_device_name()})" if device.type == "cuda" else ""))
    print(f"torch {torch.__version__}, shardkit {shardkit.__version__}")

    bench_loader_alone(args.dataset, 32, 400, [int(t) for t in args.threads.split(",")])
    if device.type == "cuda":
        bench_copies(args.dataset, 32, device)

    os.makedirs(args.work, exist_ok=True)
    tokens_path = os.path.join(args.work, "tokens.u16")
    write_token_file(args.dataset, tokens_path, 64)

    shapes = {"tiny": (64, 1, 1, 32), "small": (256, 4, 4, 32), "gpt2": (768, 12, 12, 16)}
    for name in args.models.split(","):
        width, layers, heads, batch = shapes[name]
        torch.manual_seed(0)
        model = GPT(vocab, context, width, layers, heads).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4,
                                      **({"fused": True} if device.type == "cuda" else {}))
        params = sum(p.numel() for p in model.parameters()) / 1e6
        print(f"\n## Training {name}: {params:.0f}M parameters, batch [{batch}, {context}], "
              f"bf16 autocast, AdamW")
        print("| feed | steps/s | ratio to resident | tokens/s | busy cores |")
        print("|---|---:|---:|---:|---:|")
        feeds = [
            ("resident on the device (ceiling)",
             lambda: resident_batches(vocab, batch, context, device)),
            ("shardkit Loader, .to(device)",
             lambda: loader_batches(args.dataset, batch, device, False)),
            ("shardkit Loader, .pin_memory().to(non_blocking)",
             lambda: loader_batches(args.dataset, batch, device, device.type == "cuda")),
            ("DataLoader(shardkit.IterableDataset, pin_memory)",
             lambda: dataloader_batches(args.dataset, batch, device)),
            ("nanoGPT np.memmap get_batch, pinned",
             lambda: memmap_batches(tokens_path, batch, context, device)),
        ]
        ceiling = None
        for feed_name, make in feeds:
            batches = make()
            rate, busy = time_training(model, optimizer, batches, args.steps, args.warmup, device)
            batches.close()
            ceiling = ceiling or rate
            print(f"| {feed_name} | {rate:.1f} | {rate / ceiling:.3f} | "
                  f"{rate * batch * context:,.0f} | {busy:.2f} |")


if __name__ == "__main__":
    main()
