#!/usr/bin/env bash
# Installs dependencies, builds everything (library, tools, tests, examples, Python module)
# and runs the whole test suite. It builds three times (Release, sanitizers, fuzzers): about
# 35 minutes on a loaded 2-core machine; SHARDKIT_SANITIZERS=0 runs only the first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
echo "test.sh: 1/3 Release build with torch and Python, and all tests ($BUILD)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDKIT_WITH_TORCH=ON -DSHARDKIT_WITH_PYTHON=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" -j"$(nproc)" --output-on-failure --timeout 600

# Reliability (RELIABILITY.md): the torch-free suite again under AddressSanitizer and UBSan (gcc,
# -O1, asserts on), then a bounded run of every libFuzzer target (clang; SHARDKIT_FUZZ_SECONDS
# each). SHARDKIT_SANITIZERS=0 skips both.
if [ "${SHARDKIT_SANITIZERS:-1}" != 0 ]; then
  # The benchmarks are built (and kept compiling) by stage 1; the sanitizer builds skip them.
  NOTORCH=(-DSHARDKIT_WITH_TORCH=OFF -DSHARDKIT_WITH_PYTHON=OFF -DSHARDKIT_BUILD_BENCHMARKS=OFF
           -DCMAKE_BUILD_TYPE=Release
           -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1)
  echo "test.sh: 2/3 the torch-free suite under ASan and UBSan ($BUILD-asan; SHARDKIT_SANITIZERS=0 skips 2 and 3)"
  cmake -S . -B "$BUILD-asan" -G Ninja -DSHARDKIT_SANITIZE=ON "${NOTORCH[@]}" >/dev/null
  cmake --build "$BUILD-asan" -j"$(nproc)"
  ctest --test-dir "$BUILD-asan" -j"$(nproc)" --output-on-failure --timeout 600
  echo "test.sh: 3/3 every libFuzzer target for a few seconds each ($BUILD-fuzz)"
  cmake -S . -B "$BUILD-fuzz" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DSHARDKIT_FUZZ=ON "${NOTORCH[@]}" >/dev/null
  cmake --build "$BUILD-fuzz" -j"$(nproc)" --target fuzzers
  ctest --test-dir "$BUILD-fuzz" -L '^fuzz$' -j"$(nproc)" --output-on-failure
fi
