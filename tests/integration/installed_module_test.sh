#!/usr/bin/env bash
# usage: installed_module_test.sh BUILD_DIR SOURCE_DIR DUCKDB_BUNDLED(ON|OFF)
# Installs the build into a scratch prefix, then imports the installed Python module from outside
# the tree, with only the prefix's package directory on PYTHONPATH (its libduckdb.so must be
# found from there), and writes and reads a dataset with it: shard for shard what the installed
# shardify writes from the same rows. A C++ project (cmake_consumer/) is built against the
# installed CMake package. (The README's C++ and CMake blocks are built against an installed
# prefix by tests/docs.)
set -euo pipefail
build=$1 source=$2 bundled=${3:-OFF}
work="$build/test-tmp/installed-module"
rm -rf "$work" && mkdir -p "$work/run/data"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/shardkit/shardkitConfig.cmake"
test -x "$work/prefix/bin/shardify"
test -f "$work/prefix/include/shardkit/format/SPEC.md"

# data/train made with the installed shardify and a vocabulary that HF tokenizers writes.
node "$source/tests/oracle/make_tokenizers.js" "$work/tok"
for i in $(seq 1 50); do echo "{\"text\": \"line $i of a small corpus\", \"label\": \"$((i % 3))\"}"; done >"$work/c.jsonl"
"$work/prefix/bin/shardify" --input "$work/c.jsonl" --task cls --max-len 16 \
  --tokenizer "$work/tok/bert-base-uncased-vocab.txt" --out "$work/run/data/train" >/dev/null

# The installed CMake package, as a C++ project uses it: a program linking shardkit::shardify,
# ::tokenizer, ::loader and ::core runs, and each installed header compiles on its own; without
# libtorch's CMake package the same program still builds (only shardkit::torch needs it).
consumer() {  # BUILD_DIR [CMAKE_ARGS...]
  local dir=$1
  shift
  local launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  { cmake -S "$source/tests/integration/cmake_consumer" -B "$dir" -G Ninja "${launcher[@]}" \
      -DCMAKE_PREFIX_PATH="$work/prefix" "$@" && cmake --build "$dir"; } >"$dir.log" 2>&1 ||
    { tail -40 "$dir.log"; echo "a project using the installed CMake package does not build ($*)"; exit 1; }
  "$dir/consumer" "$work/c.jsonl" "$work/tok/bert-base-uncased-vocab.txt" "$dir/data"
}
consumer "$work/consumer"
consumer "$work/consumer-without-torch" -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON -DHEADERS=OFF

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

# Parquet through the installed shardify: libduckdb.so is loaded when the file is read, and from
# the prefix (its RUNPATH), not from the source or build tree.
libduckdb="$work/prefix/lib/libduckdb.so"
if [ "$bundled" = ON ] && [ ! -f "$libduckdb" ]; then
  echo "the build bundles libduckdb.so, but cmake --install put none in $work/prefix/lib"
  exit 1
fi
if [ -f "$libduckdb" ]; then
  PYTHONPATH="$source/tests/python" /usr/bin/python3 -c \
    'import sys, duckdb_parquet; duckdb_parquet.write_parquet(*sys.argv[1:4])' \
    "$libduckdb" "$work/c.jsonl" "$work/c.parquet"
  env -u LD_LIBRARY_PATH LD_DEBUG=libs "$work/prefix/bin/shardify" --input "$work/c.parquet" \
    --task cls --max-len 16 --tokenizer "$work/tok/bert-base-uncased-vocab.txt" \
    --out "$work/run/from-parquet" >/dev/null 2>"$work/ld.log"
  loaded=$(grep -o 'calling init: .*libduckdb\.so' "$work/ld.log" | sed 's/calling init: //' | xargs -r realpath)
  [ "$loaded" = "$(realpath "$libduckdb")" ] ||
    { echo "the installed shardify loaded libduckdb.so from '$loaded', not from the prefix"; exit 1; }
  for shard in "$work"/run/data/train/*.shard; do
    cmp "$shard" "$work/run/from-parquet/$(basename "$shard")"
  done
  echo "installed shardify: Parquet through $libduckdb"
fi
