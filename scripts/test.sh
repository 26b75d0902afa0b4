#!/usr/bin/env bash
# Installs dependencies, builds everything (library, tools, tests, examples, benchmarks, Python
# module) and runs every test once:
#   1. a Release build with torch and Python, and every test (the pip install test shares its
#      compiler cache);
#   2. a bounded run of every libFuzzer target under ASan and UBSan (clang;
#      SHARDKIT_FUZZ_SECONDS each).
# About 17 minutes on 2 cores. SHARDKIT_SANITIZERS=full also runs the whole torch-free suite
# under ASan and UBSan (gcc, -O1, asserts on; about 20 minutes more); =0 skips the fuzz run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
# The Release build and `pip install .` compile the same sources with the same flags: ccache
# compiles them once. The tests' precompiled header is cacheable with these sloppiness flags.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
cmake_build() {  # DIR CMAKE-ARGS...: configure, build and run the tests of one build
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  scripts/run_ctest.sh "$dir" -j"$(nproc)" --output-on-failure --timeout 600  # CI=true: no skips
}
sanitizers=${SHARDKIT_SANITIZERS:-1}

echo "test.sh: Release with torch and Python, every test ($BUILD)"
cmake_build "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSHARDKIT_WITH_TORCH=ON -DSHARDKIT_WITH_PYTHON=ON \
  "${launcher[@]}"
[ "$sanitizers" = 0 ] && exit 0

# Reliability (RELIABILITY.md). The benchmarks are kept compiling by the Release build.
NOTORCH=(-DSHARDKIT_WITH_TORCH=OFF -DSHARDKIT_WITH_PYTHON=OFF -DSHARDKIT_BUILD_BENCHMARKS=OFF
         -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1)
echo "test.sh: every libFuzzer target for a few seconds each, under ASan and UBSan ($BUILD-fuzz)"
cmake -S . -B "$BUILD-fuzz" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DSHARDKIT_FUZZ=ON "${NOTORCH[@]}" >/dev/null
cmake --build "$BUILD-fuzz" -j"$(nproc)" --target fuzzers
scripts/run_ctest.sh "$BUILD-fuzz" -L '^fuzz$' -j"$(nproc)" --output-on-failure

if [ "$sanitizers" = full ]; then
  echo "test.sh: the torch-free suite under ASan and UBSan ($BUILD-asan)"
  cmake_build "$BUILD-asan" -DSHARDKIT_SANITIZE=ON "${NOTORCH[@]}"
fi
