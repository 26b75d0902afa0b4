"""Packed lm rows train with document-isolated attention: a tiny causal transformer (torch)
gives each document the same loss inside a packed row, fed the loader's restarted position_ids
and block-diagonal causal mask (document_positions, document_mask), as when the document runs
alone; with plain cross-document packing (positions 0..L-1, one causal mask) it does not, which
shows the comparison can fail. cu_seqlens slices the documents out of the unpadded tokens."""
import json
import os
import random
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402

GPT2 = os.path.join(os.path.dirname(pyutil.VOCAB), "gpt2.json")
MAX_LEN = 48
VOCAB = 50257
WORDS = "the cat sat on a mat while rain fell over quiet hills and rivers ran south".split()


class TinyCausalLM(torch.nn.Module):
    """Two pre-norm transformer blocks, one attention head, learned positions."""

    def __init__(self, dim=16):
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, dim)
        self.positions = torch.nn.Embedding(MAX_LEN, dim)
        self.blocks = torch.nn.ModuleList()
        for _ in range(2):
            self.blocks.append(torch.nn.ModuleDict({
                "norm1": torch.nn.LayerNorm(dim), "qkv": torch.nn.Linear(dim, 3 * dim),
                "out": torch.nn.Linear(dim, dim), "norm2": torch.nn.LayerNorm(dim),
                "mlp": torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                           torch.nn.Linear(4 * dim, dim))}))
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, VOCAB)

    def forward(self, input_ids, position_ids, mask):
        """mask [B, T, T] bool: query i attends key j where True (what SDPA's attn_mask means;
        torch 1.13 has no scaled_dot_product_attention, so it is written out)."""
        x = self.tokens(input_ids) + self.positions(position_ids)
        for b in self.blocks:
            q, k, v = b["qkv"](b["norm1"](x)).chunk(3, dim=-1)
            scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
            attn = scores.masked_fill(~mask, float("-inf")).softmax(-1)
            x = x + b["out"](attn @ v)
            x = x + b["mlp"](b["norm2"](x))
        return self.head(self.norm(x))


def next_token_losses(logits, ids):
    """Summed next-token cross entropy of one document: logits [n, V], ids [n]."""
    if ids.numel() < 2:
        return torch.zeros((), dtype=logits.dtype)
    return torch.nn.functional.cross_entropy(logits[:-1], ids[1:], reduction="sum")


def make_dataset(tmp):
    rng = random.Random(7)
    path = os.path.join(tmp, "docs.jsonl")
    with open(path, "w") as f:
        for _ in range(40):
            f.write(json.dumps({"text": " ".join(rng.choice(WORDS)
                                                 for _ in range(rng.randrange(1, 30)))}) + "\n")
    out = os.path.join(tmp, "lm")
    subprocess.run([pyutil.SHARDIFY, "--input", path, "--task", "lm", "--tokenizer", GPT2,
                    "--max-len", str(MAX_LEN), "--out", out], check=True, capture_output=True)
    return out


def main():
    torch.manual_seed(0)
    model = TinyCausalLM().double().eval()
    tmp = pyutil.scratch("shardkit-packed-")
    ds = make_dataset(tmp)
    loader = shardkit.Loader(ds, batch_size=4, shuffle=False, rank=0, world_size=1,
                             document_positions=True, cu_seqlens=True, document_mask=True,
                             include_metadata=True)
    documents = isolated_gap = packed_gap = 0.0
    crossing = 0
    with torch.no_grad():
        for batch in loader:
            ids, pos, mask = batch["input_ids"], batch["position_ids"], batch["attention_mask"]
            assert mask.dtype == torch.bool and mask.shape == (ids.shape[0], 1, ids.shape[1],
                                                               ids.shape[1]), mask.shape
            assert batch["cu_seqlens"].dtype == torch.int32
            t = ids.shape[1]
            isolated = model(ids, pos, mask[:, 0])
            causal = torch.ones(t, t, dtype=torch.bool).tril().expand(ids.shape[0], t, t)
            plain = model(ids, torch.arange(t).expand_as(ids), causal)
            lengths = batch["length"].tolist()
            flat_ids = torch.cat([ids[i, :n] for i, n in enumerate(lengths)])
            flat_iso = torch.cat([isolated[i, :n] for i, n in enumerate(lengths)])
            flat_plain = torch.cat([plain[i, :n] for i, n in enumerate(lengths)])
            row_starts = set(torch.tensor([0] + lengths).cumsum(0).tolist())
            cu = batch["cu_seqlens"].tolist()
            assert cu[-1] == len(flat_ids), (cu, len(flat_ids))
            assert batch["max_seqlen"].item() == max(b - a for a, b in zip(cu, cu[1:]))
            for a, b in zip(cu, cu[1:]):
                doc = flat_ids[a:b]
                alone = model(doc[None], torch.arange(b - a)[None],
                              torch.ones(b - a, b - a, dtype=torch.bool).tril()[None])[0]
                want = next_token_losses(alone, doc)
                isolated_gap = max(isolated_gap, abs(next_token_losses(flat_iso[a:b], doc) - want))
                gap = abs(next_token_losses(flat_plain[a:b], doc) - want)
                if a not in row_starts:  # a document after another one in its row
                    crossing += 1
                    packed_gap = max(packed_gap, gap)
                documents += 1
    print(f"documents {documents:.0f} (after another in their row: {crossing}); max |packed - "
          f"alone| per-document loss: isolated {float(isolated_gap):.3g}, "
          f"cross-document {float(packed_gap):.3g}")
    assert documents >= 40 and crossing >= 10
    assert isolated_gap < 1e-5, isolated_gap
    assert packed_gap > 1e-3, packed_gap


if __name__ == "__main__":
    main()
