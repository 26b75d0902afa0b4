#!/usr/bin/env bash
# Installs dependencies, builds everything (library, tools, tests, examples, benchmarks, Python
# module) and runs every test once, in three builds:
#   1. the torch-free tests under AddressSanitizer and UBSan (gcc, -O1, asserts on);
#   2. a Release build with torch and Python: the tests that need torch or Python (the pip install
#      test shares its compiler cache), and the benchmarks and examples kept compiling;
#   3. a bounded run of every libFuzzer target (clang; SHARDKIT_FUZZ_SECONDS each).
# SHARDKIT_SANITIZERS=0 runs only a Release build with every test. About 17 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
# The Release build and `pip install .` compile the same sources with the same flags: ccache
# compiles them once.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake_build() {  # DIR CMAKE-ARGS...: configure, build and run the tests of one build
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  ctest --test-dir "$dir" -j"$(nproc)" --output-on-failure --timeout 600
}
RELEASE=(-DCMAKE_BUILD_TYPE=Release -DSHARDKIT_WITH_TORCH=ON -DSHARDKIT_WITH_PYTHON=ON "${launcher[@]}")

if [ "${SHARDKIT_SANITIZERS:-1}" = 0 ]; then
  echo "test.sh: a Release build with torch and Python, and every test ($BUILD)"
  cmake_build "$BUILD" "${RELEASE[@]}" -DSHARDKIT_TORCH_FREE_TESTS=ON
  exit 0
fi

# Reliability (RELIABILITY.md). The benchmarks are kept compiling by the Release build.
NOTORCH=(-DSHARDKIT_WITH_TORCH=OFF -DSHARDKIT_WITH_PYTHON=OFF -DSHARDKIT_BUILD_BENCHMARKS=OFF
         -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1)
echo "test.sh: 1/3 the torch-free tests under ASan and UBSan ($BUILD-asan)"
cmake_build "$BUILD-asan" -DSHARDKIT_SANITIZE=ON "${NOTORCH[@]}"

echo "test.sh: 2/3 Release with torch and Python: the tests that need them ($BUILD)"
cmake_build "$BUILD" "${RELEASE[@]}" -DSHARDKIT_TORCH_FREE_TESTS=OFF

echo "test.sh: 3/3 every libFuzzer target for a few seconds each ($BUILD-fuzz)"
cmake -S . -B "$BUILD-fuzz" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DSHARDKIT_FUZZ=ON "${NOTORCH[@]}" >/dev/null
cmake --build "$BUILD-fuzz" -j"$(nproc)" --target fuzzers
ctest --test-dir "$BUILD-fuzz" -L '^fuzz$' -j"$(nproc)" --output-on-failure
