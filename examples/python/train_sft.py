#!/usr/bin/python3
"""Supervised fine-tuning of a tiny decoder on a packed `shardify --task sft` dataset, with the
loss on the assistant turns only, printing the loss.

    shardify --input tests/data/shardify/sft_chat.jsonl --task sft --messages-field messages \\
        --chat-template $Q/tokenizer_config.json --tokenizer $Q/tokenizer.json \\
        --pack --max-len 512 --out data/sft
    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_sft.py --data data/sft --steps 20

Batches come from shardkit.Loader with HF names: `labels` is materialised by the loader from the
stored loss mask (the token id where the loss applies, -100 on prompts, padding and the first
token of every packed conversation), and `document_mask`/`document_positions` keep each packed
conversation's attention and positions to itself. The model shifts labels as HF causal LMs do.
"""
import argparse
import math
import time

import torch

import shardkit


def attend(q, k, v, mask):
    """SDPA with a boolean attn_mask (True: query i may attend key j), written out: Debian's torch
    1.13 has no scaled_dot_product_attention. A fully masked (padding) row gets zeros, not NaN."""
    if mask.dim() == 3:
        mask = mask.unsqueeze(1)  # one mask for every head
    scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1).nan_to_num(0.0)
    return weights @ v


class TinyDecoder(torch.nn.Module):
    """Token + position embeddings, pre-norm transformer blocks with attention under an explicit
    boolean mask (the loader's block-diagonal causal mask), and a tied output projection."""

    def __init__(self, vocab_size, dim, layers, heads, max_len):
        super().__init__()
        self.heads = heads
        self.tokens = torch.nn.Embedding(vocab_size, dim)
        self.positions = torch.nn.Embedding(max_len, dim)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(torch.nn.ModuleDict({
                "norm1": torch.nn.LayerNorm(dim), "qkv": torch.nn.Linear(dim, 3 * dim),
                "proj": torch.nn.Linear(dim, dim), "norm2": torch.nn.LayerNorm(dim),
                "mlp": torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                           torch.nn.Linear(4 * dim, dim))}))
        self.norm = torch.nn.LayerNorm(dim)

    def forward(self, input_ids, position_ids, attention_mask, labels=None):
        b, t = input_ids.shape
        x = self.tokens(input_ids) + self.positions(position_ids)
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["norm1"](x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            a = attend(q, k, v, attention_mask)
            x = x + blk["proj"](a.transpose(1, 2).reshape(b, t, -1))
            x = x + blk["mlp"](blk["norm2"](x))
        hidden = self.norm(x)
        if labels is None:
            return hidden @ self.tokens.weight.T
        # Token k predicts token k + 1 (the usual causal shift). Logits are computed only where
        # a label is not -100: with a 150k vocabulary they would otherwise dwarf the model.
        target = labels[:, 1:]
        keep = target != -100
        logits = hidden[:, :-1][keep] @ self.tokens.weight.T
        return torch.nn.functional.cross_entropy(logits, target[keep])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, nargs="+",
                   help="packed shardify --task sft datasets (several: a weighted mixture)")
    p.add_argument("--weights", type=float, nargs="*",
                   help="each dataset's share of the samples (default: equal)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    weights = args.weights or [1.0] * len(args.data)
    if len(weights) != len(args.data):
        raise SystemExit(f"{len(args.data)} datasets but {len(weights)} weights")
    # The loader refuses sources whose task, tokenizer or fields differ; the first speaks for all.
    info = shardkit.Dataset(args.data[0]).info
    if info["task"].get("name") != "sft":
        raise SystemExit(f"{args.data[0]} is not an sft dataset (task {info['task'].get('name')})")
    torch.manual_seed(args.seed)
    vocab = info["tokenizer"]["vocab_size"]
    max_len = info["task"]["max_len"]
    model = TinyDecoder(vocab, args.dim, args.layers, heads=4, max_len=max_len)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    sources = [shardkit.Source(d, weight=w) for d, w in zip(args.data, weights)]
    loader = shardkit.Loader(sources, batch_size=args.batch_size, shuffle=True, seed=args.seed,
                             document_mask=True, document_positions=True, source_field=True)
    rows_from = [0] * len(sources)
    step, epoch, t0 = 0, 0, time.time()
    while step < args.steps:
        loader.set_epoch(epoch)
        for batch in loader:
            loss = model(batch["input_ids"], batch["position_ids"], batch["attention_mask"],
                         batch["labels"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            for k in batch["source"].tolist():
                rows_from[k] += 1
            trained = int((batch["labels"] != -100).sum())
            print(f"step {step:4d}  epoch {epoch}  loss {loss.item():.4f}  "
                  f"trained tokens {trained}  ({time.time() - t0:.1f} s)", flush=True)
            if not math.isfinite(loss.item()):
                raise SystemExit("the loss is not finite")
            if step >= args.steps:
                break
        epoch += 1
    print("rows per source: " + ", ".join(f"{d} {n}" for d, n in zip(args.data, rows_from)))


if __name__ == "__main__":
    main()
