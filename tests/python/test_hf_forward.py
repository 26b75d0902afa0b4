"""model(**batch) with HuggingFace's forward signatures, for every shardify task.

The classes below copy the parameter lists of transformers' (4.x) forward methods verbatim:
BertForSequenceClassification, BertForQuestionAnswering, BertForMaskedLM and GPT2LMHeadModel.
They accept no **kwargs, so any key a batch carries beyond HF's argument names is a TypeError, as
it is with the real models. Each computes a loss from what it is given, so the test also fails
when an argument the task needs (labels, token_type_ids, start/end positions) does not arrive.
"""
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402

DATA = os.path.join(os.environ["SHARDKIT_SOURCE"], "tests", "data", "shardify")


class Tiny(torch.nn.Module):
    def __init__(self, outputs=2):
        super().__init__()
        self.emb = torch.nn.Embedding(30522, 8)
        self.types = torch.nn.Embedding(2, 8)
        self.head = torch.nn.Linear(8, outputs)

    def hidden(self, input_ids, attention_mask, token_type_ids=None):
        assert attention_mask.shape == input_ids.shape
        x = self.emb(input_ids)
        if token_type_ids is not None:
            x = x + self.types(token_type_ids)
        return x * attention_mask.unsqueeze(-1)


class BertForSequenceClassification(Tiny):
    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                head_mask=None, inputs_embeds=None, labels=None, output_attentions=None,
                output_hidden_states=None, return_dict=None):
        self.seen = dict(token_type_ids=token_type_ids, labels=labels)
        logits = self.head(self.hidden(input_ids, attention_mask, token_type_ids).mean(1))
        return torch.nn.functional.cross_entropy(logits, labels)


class BertForQuestionAnswering(Tiny):
    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                head_mask=None, inputs_embeds=None, start_positions=None, end_positions=None,
                output_attentions=None, output_hidden_states=None, return_dict=None):
        self.seen = dict(token_type_ids=token_type_ids, start_positions=start_positions)
        start, end = self.head(self.hidden(input_ids, attention_mask, token_type_ids)).unbind(-1)
        return (torch.nn.functional.cross_entropy(start, start_positions) +
                torch.nn.functional.cross_entropy(end, end_positions)) / 2


class BertForMaskedLM(Tiny):
    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                head_mask=None, inputs_embeds=None, encoder_hidden_states=None,
                encoder_attention_mask=None, labels=None, output_attentions=None,
                output_hidden_states=None, return_dict=None):
        self.seen = dict(labels=labels)
        logits = torch.nn.functional.linear(self.hidden(input_ids, attention_mask), self.emb.weight)
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)


class GPT2LMHeadModel(Tiny):
    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, head_mask=None, inputs_embeds=None, encoder_hidden_states=None,
                encoder_attention_mask=None, labels=None, use_cache=None, output_attentions=None,
                output_hidden_states=None, return_dict=None):
        self.seen = dict(position_ids=position_ids)
        logits = torch.nn.functional.linear(self.hidden(input_ids, attention_mask), self.emb.weight)
        return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), input_ids[:, 1:].flatten())


def shardify(tmp, name, *args):
    out = os.path.join(tmp, name)
    r = subprocess.run([pyutil.SHARDIFY, *args, "--tokenizer", pyutil.VOCAB, "--out", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def check(model, path, expect_keys, **options):
    """Every batch goes through model(**batch); the batch holds exactly expect_keys."""
    batches = 0
    for batch in shardkit.Loader(path, batch_size=4, shuffle=True, seed=1, **options):
        assert sorted(batch) == sorted(expect_keys), sorted(batch)
        loss = model(**batch)
        assert torch.isfinite(loss), loss
        loss.backward()
        batches += 1
    assert batches > 0
    # With the bookkeeping asked for, the same call fails the way the issue reported it.
    batch = next(iter(shardkit.Loader(path, batch_size=4, include_metadata=True, **options)))
    assert "length" in batch
    try:
        model(**batch)
    except TypeError as e:
        assert "unexpected keyword argument" in str(e), e
    else:
        raise AssertionError("HF's forward() takes no 'length'")
    return model.seen


def main():
    tmp = pyutil.scratch("shardkit-hf-")
    cls = shardify(tmp, "cls", "--input", os.path.join(DATA, "nli.jsonl"), "--task", "cls",
                   "--text-field", "premise", "--max-len", "32")
    seen = check(BertForSequenceClassification(3), cls, ["input_ids", "attention_mask", "labels"])
    assert seen["labels"].dtype == torch.int64

    pair = shardify(tmp, "pair", "--input", os.path.join(DATA, "nli.jsonl"), "--task", "pair",
                    "--text-field", "premise", "--pair-field", "hypothesis", "--max-len", "48")
    seen = check(BertForSequenceClassification(3), pair,
                 ["input_ids", "attention_mask", "token_type_ids", "labels"])
    assert int(seen["token_type_ids"].max()) == 1, "the hypothesis is segment 1"

    qa = shardify(tmp, "qa", "--input", os.path.join(DATA, "squad_v1.json"), "--task", "qa",
                  "--max-len", "64", "--doc-stride", "16", "--max-query-len", "16")
    seen = check(BertForQuestionAnswering(2), qa,
                 ["input_ids", "attention_mask", "token_type_ids", "start_positions", "end_positions"])
    meta = next(iter(shardkit.Loader(qa, batch_size=4, include_metadata=True)))
    assert {"example_index", "source_index", "length"} <= set(meta), "opt-in keeps QA's bookkeeping"

    lm = shardify(tmp, "lm", "--input", os.path.join(DATA, "docs.txt"), "--task", "lm",
                  "--max-len", "32", "--position-ids")
    seen = check(GPT2LMHeadModel(), lm, ["input_ids", "attention_mask", "position_ids"])
    assert seen["position_ids"] is not None

    mlm = {"mlm_probability": 0.15, "mask_token_id": 103, "vocab_size": 30522, "special_ids": [0, 101, 102]}
    seen = check(BertForMaskedLM(), lm, ["input_ids", "attention_mask", "position_ids", "labels"], **mlm)
    assert (seen["labels"] != -100).any()
    print("5 passed, 0 failed")


if __name__ == "__main__":
    main()
