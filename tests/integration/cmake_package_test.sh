#!/usr/bin/env bash
# usage: cmake_package_test.sh BUILD_DIR CONSUMER_SOURCE MAKE_TOKENIZERS_JS
set -euo pipefail
build=$1 consumer=$2 make_tokenizers=$3
work="$build/test-tmp/cmake-package"
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/shardkit/shardkitConfig.cmake"
test -x "$work/prefix/bin/shardify"
test -f "$work/prefix/include/shardkit/format/SPEC.md"

cmake -S "$consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null

# A dataset made with the installed shardify and a vocabulary that HF tokenizers writes.
node "$make_tokenizers" "$work/tok"
for i in $(seq 1 50); do echo "{\"text\": \"line $i of a small corpus\", \"label\": \"$((i % 3))\"}"; done >"$work/c.jsonl"
"$work/prefix/bin/shardify" --input "$work/c.jsonl" --task cls --max-len 16 \
  --tokenizer "$work/tok/bert-base-uncased-vocab.txt" --out "$work/ds" >/dev/null
out=$("$work/consumer/consumer" "$work/ds")
echo "$out"
# 50 records in batches of 8 -> 7 batches; labels 1..50 % 3 as integers, summed independently.
expected_sum=0
for i in $(seq 1 50); do expected_sum=$((expected_sum + i % 3)); done
[ "$out" = "records 50 batches 7 label_sum $expected_sum" ] || { echo "unexpected: $out"; exit 1; }
echo "1 passed, 0 failed"
