#!/usr/bin/env bash
# usage: cmake_package_test.sh BUILD_DIR SOURCE_DIR
# Installs the build into a scratch prefix, then builds a project made of the README's CMake
# snippet and its C++ training loop, both copied verbatim, against it. The project sets no C++
# standard: the installed targets must carry C++20 themselves.
set -euo pipefail
build=$1 source=$2
snippet() { /usr/bin/python3 "$source/tests/integration/readme_snippet.py" "$source/README.md" "$@"; }
work="$build/test-tmp/cmake-package"
rm -rf "$work" && mkdir -p "$work/consumer" "$work/run/data"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/shardkit/shardkitConfig.cmake"
test -x "$work/prefix/bin/shardify"
test -f "$work/prefix/include/shardkit/format/SPEC.md"

{
  echo 'cmake_minimum_required(VERSION 3.20)'
  echo 'project(readme_consumer CXX)'
  echo 'add_executable(trainer main.cc)'
  snippet fenced cmake find_package
} >"$work/consumer/CMakeLists.txt"
cpp=$(snippet fenced cpp TorchLoader)
{
  echo '#include <torch/torch.h>'
  echo '#include <cstdio>'
  grep '^#include' <<<"$cpp"
  cat <<'HARNESS'
namespace {
// What the README leaves to the reader: the model and its training step. This one counts.
struct Model {
  int64_t batches = 0, rows = 0, label_sum = 0, mask_sum = 0;
};
void step(Model& m, const torch::Tensor& ids, const torch::Tensor& mask, const torch::Tensor& labels) {
  m.batches += 1;
  m.rows += ids.size(0);
  m.label_sum += labels.sum().item<int64_t>();
  m.mask_sum += mask.sum().item<int64_t>();
}
}  // namespace
int main() {
  const unsigned rank = 0, world_size = 1;
  Model model;
HARNESS
  grep -v '^#include' <<<"$cpp"
  cat <<'HARNESS'
  std::printf("batches %lld rows %lld label_sum %lld mask_sum %lld epoch %llu\n",
              static_cast<long long>(model.batches), static_cast<long long>(model.rows),
              static_cast<long long>(model.label_sum), static_cast<long long>(model.mask_sum),
              static_cast<unsigned long long>(state.epoch));
  return 0;
}
HARNESS
} >"$work/consumer/main.cc"

# No CMAKE_CXX_STANDARD, no CMAKE_CXX_FLAGS: what a consumer gets from find_package alone.
cmake -S "$work/consumer" -B "$work/consumer/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer/build" >"$work/consumer/build.log" 2>&1 || {
  cat "$work/consumer/build.log"; echo "the README's consumer does not build"; exit 1; }

# data/train made with the installed shardify and a vocabulary that HF tokenizers writes.
node "$source/tests/oracle/make_tokenizers.js" "$work/tok"
for i in $(seq 1 50); do echo "{\"text\": \"line $i of a small corpus\", \"label\": \"$((i % 3))\"}"; done >"$work/c.jsonl"
"$work/prefix/bin/shardify" --input "$work/c.jsonl" --task cls --max-len 16 \
  --tokenizer "$work/tok/bert-base-uncased-vocab.txt" --out "$work/run/data/train" >/dev/null
out=$(cd "$work/run" && "$work/consumer/build/trainer")
echo "$out"
# 3 epochs of 50 records in batches of 32: 2 batches each. Labels 1..50 % 3, summed here; the
# mask covers "[CLS] line N of a small corpus [SEP]" = 8 tokens a row.
expected_sum=0
for i in $(seq 1 50); do expected_sum=$((expected_sum + i % 3)); done
want="batches 6 rows 150 label_sum $((3 * expected_sum)) mask_sum $((150 * 8)) epoch 2"
[ "$out" = "$want" ] || { echo "unexpected: $out"; echo "expected:   $want"; exit 1; }
echo "1 passed, 0 failed"
