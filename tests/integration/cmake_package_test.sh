#!/usr/bin/env bash
# usage: cmake_package_test.sh BUILD_DIR SOURCE_DIR [--cxx] [--python]
# Installs the build into a scratch prefix, then
#   --cxx:    builds a project made of the README's CMake snippet and its C++ training loop, both
#             copied verbatim, against it. The project sets no C++ standard: the installed
#             targets must carry C++20 themselves.
#   --python: imports the installed Python module from outside the tree, with only the prefix's
#             package directory on PYTHONPATH (its libduckdb.so must be found from there), and
#             writes and reads a dataset with it.
set -euo pipefail
build=$1 source=$2
shift 2
cxx=0 python=0
for part in "$@"; do
  case $part in --cxx) cxx=1 ;; --python) python=1 ;; *) echo "unknown part $part"; exit 2 ;; esac
done
snippet() { /usr/bin/python3 "$source/tests/integration/readme_snippet.py" "$source/README.md" "$@"; }
work="$build/test-tmp/cmake-package"
rm -rf "$work" && mkdir -p "$work/consumer" "$work/run/data"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/shardkit/shardkitConfig.cmake"
test -x "$work/prefix/bin/shardify"
test -f "$work/prefix/include/shardkit/format/SPEC.md"

# data/train made with the installed shardify and a vocabulary that HF tokenizers writes.
node "$source/tests/oracle/make_tokenizers.js" "$work/tok"
for i in $(seq 1 50); do echo "{\"text\": \"line $i of a small corpus\", \"label\": \"$((i % 3))\"}"; done >"$work/c.jsonl"
"$work/prefix/bin/shardify" --input "$work/c.jsonl" --task cls --max-len 16 \
  --tokenizer "$work/tok/bert-base-uncased-vocab.txt" --out "$work/run/data/train" >/dev/null
passed=0

if [ "$python" = 1 ]; then
  module=$(find "$work/prefix" -path '*-packages/shardkit/__init__.py' | head -1)
  [ -n "$module" ] || { echo "cmake --install put no shardkit package under the prefix"; exit 1; }
  packages=$(dirname "$(dirname "$module")")
  # Nothing of the build tree on any path: the module and its libraries come from the prefix.
  (cd "$work/run" && env -u LD_LIBRARY_PATH PYTHONPATH="$packages" /usr/bin/python3 - "$work" <<'PY'
import os
import sys

import shardkit

work = sys.argv[1]
prefix = os.path.realpath(os.path.join(work, "prefix"))
assert os.path.realpath(shardkit.__file__).startswith(prefix + os.sep), shardkit.__file__
# The same rows as c.jsonl, written by the installed module: the dataset the installed shardify
# wrote from the file, shard for shard.
rows = [{"text": f"line {i} of a small corpus", "label": str(i % 3)} for i in range(1, 51)]
summary = shardkit.write_dataset(rows, "py-train", task="cls", max_len=16, progress=False,
                                 tokenizer=os.path.join(work, "tok", "bert-base-uncased-vocab.txt"))
assert summary["records"] == 50, summary
for name in sorted(os.listdir("data/train")):
    if name != "manifest.json":
        with open(os.path.join("data/train", name), "rb") as a, open(os.path.join("py-train", name), "rb") as b:
            assert a.read() == b.read(), name
ds = shardkit.Dataset("py-train")
assert len(ds) == 50, len(ds)
print(f"installed module {shardkit.__file__}: wrote and read {len(ds)} records")
PY
  ) || { echo "the installed Python module does not import or work"; exit 1; }
  passed=$((passed + 1))
fi

if [ "$cxx" = 1 ]; then
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

out=$(cd "$work/run" && "$work/consumer/build/trainer")
echo "$out"
# 3 epochs of 50 records in batches of 32: 2 batches each. Labels 1..50 % 3, summed here; the
# mask covers "[CLS] line N of a small corpus [SEP]" = 8 tokens a row.
expected_sum=0
for i in $(seq 1 50); do expected_sum=$((expected_sum + i % 3)); done
want="batches 6 rows 150 label_sum $((3 * expected_sum)) mask_sum $((150 * 8)) epoch 2"
[ "$out" = "$want" ] || { echo "unexpected: $out"; echo "expected:   $want"; exit 1; }
passed=$((passed + 1))
fi
echo "$passed passed, 0 failed"
