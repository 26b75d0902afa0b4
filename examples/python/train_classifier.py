#!/usr/bin/python3
"""Trains a small text classifier from shardkit datasets with a plain PyTorch loop.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_classifier.py \
        --train demo-out/train --valid demo-out/valid --epochs 2

The training split is read shuffled by shardkit.Loader (C++ threads decode and collate ahead,
batches arrive as dicts of torch.Tensor with HF field names); the held-out split is read in
sequential order. --checkpoint saves model, optimizer and loader state after every
--checkpoint-every steps; --resume continues from such a file with exactly the batches an
uninterrupted run would have seen. --stop-after N stops after N steps (to test resuming).
"""
import argparse
import json
import sys
import time

import torch

import shardkit


class MeanPoolClassifier(torch.nn.Module):
    """Masked mean of token embeddings, then an MLP: small enough to train on a CPU."""

    def __init__(self, vocab_size, dim, labels):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab_size, dim)
        self.hidden = torch.nn.Linear(dim, dim)
        self.out = torch.nn.Linear(dim, labels)

    def forward(self, input_ids, attention_mask, **_):
        mask = attention_mask.unsqueeze(-1).float()
        pooled = (self.tokens(input_ids) * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        return self.out(torch.relu(self.hidden(pooled)))


def evaluate(model, path, batch_size):
    loader = shardkit.Loader(path, batch_size=batch_size, shuffle=False)
    model.eval()
    loss_sum, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for batch in loader:
            logits = model(**batch)
            loss_sum += torch.nn.functional.cross_entropy(logits, batch["labels"], reduction="sum").item()
            correct += (logits.argmax(-1) == batch["labels"]).sum().item()
            seen += len(batch["labels"])
    model.train()
    return loss_sum / max(seen, 1), correct / max(seen, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", required=True)
    p.add_argument("--valid", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--checkpoint")
    p.add_argument("--checkpoint-every", type=int, default=0)
    p.add_argument("--resume")
    p.add_argument("--stop-after", type=int, default=0)
    p.add_argument("--log-batches", help="write the record indices of every batch here (JSON lines)")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    train = shardkit.Dataset(args.train)
    meta = train.info
    vocab = meta["tokenizer"]["vocab_size"]
    labels = len(meta["labels"]["names"])
    print(f"train: {len(train)} records, {train.shards} shards, vocab {vocab}, labels {meta['labels']['names']}")

    model = MeanPoolClassifier(vocab, args.dim, labels)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = shardkit.Loader(args.train, batch_size=args.batch_size, shuffle=True, seed=args.seed, drop_last=True)
    step, start_epoch = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        loader.load_state_dict(ckpt["loader"])
        step, start_epoch = ckpt["step"], ckpt["loader"]["epoch"]
        print(f"resumed at step {step}: loader state {ckpt['loader']}")
    log = open(args.log_batches, "a") if args.log_batches else None

    loss, acc = evaluate(model, args.valid, 256)
    print(f"before training: valid_loss {loss:.4f} valid_accuracy {acc:.4f}")
    for epoch in range(start_epoch, args.epochs):
        if not (args.resume and epoch == start_epoch):
            loader.set_epoch(epoch)
        t0, losses = time.time(), []
        while True:
            item = loader.next_with_records()
            if item is None:
                break
            batch, records = item
            logits = model(**batch)
            loss = torch.nn.functional.cross_entropy(logits, batch["labels"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            step += 1
            if log:
                log.write(json.dumps({"step": step, "records": records}) + "\n")
            if step % 50 == 0:
                print(f"  step {step} loss {sum(losses[-50:]) / len(losses[-50:]):.4f}", flush=True)
            if args.checkpoint and args.checkpoint_every and step % args.checkpoint_every == 0:
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "loader": loader.state_dict(), "step": step}, args.checkpoint)
            if args.stop_after and step >= args.stop_after:
                print(f"stopping after step {step} as asked")
                return 0
        vloss, vacc = evaluate(model, args.valid, 256)
        mean = sum(losses) / max(len(losses), 1)
        print(f"epoch {epoch + 1}/{args.epochs} steps {len(losses)} train_loss {mean:.4f} "
              f"valid_loss {vloss:.4f} valid_accuracy {vacc:.4f} ({time.time() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
