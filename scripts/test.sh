#!/usr/bin/env bash
# Installs dependencies, builds everything (library, tools, tests, examples, benchmarks, Python
# module) and runs every test once:
#   1. the Release build with torch and Python (the one scripts/demo.sh builds: both take it from
#      scripts/configure.sh) and every test (the pip install test shares its compiler cache);
#   2. a bounded run of every libFuzzer target under ASan and UBSan (clang;
#      SHARDKIT_FUZZ_SECONDS each).
# It prints its time at the end, with each phase's. In a fresh clone with an empty compiler cache
# on a 2-core machine: 29 min 47 s (dependencies 43 s, build 765 s, tests 766 s, fuzz build 185 s,
# fuzzing 28 s); 7 min 58 s after scripts/demo.sh on a faster one.
# SHARDKIT_SANITIZERS=full also runs the whole torch-free suite under ASan and UBSan (gcc, -O1,
# asserts on; about 20 minutes more); =0 skips the fuzz run.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# Each phase's time, printed with the total: the phases scale differently with the machine (the
# builds with its cores, the tests partly with waits), so a slow run says where it was slow.
phases=() phase_started=$SECONDS
end_phase() {
  phases+=("$1 $((SECONDS - phase_started)) s")
  phase_started=$SECONDS
}
report_time() {
  local rc=$? elapsed=$((SECONDS - started))
  echo "test.sh: $([ "$rc" = 0 ] && echo passed || echo "failed (exit $rc)") in" \
    "$((elapsed / 60)) min $((elapsed % 60)) s ($(IFS=,; echo "${phases[*]/#/ }" | sed 's/^ //'))"
}
trap report_time EXIT
scripts/install-deps.sh
end_phase dependencies
source scripts/configure.sh
sanitizers=${SHARDKIT_SANITIZERS:-1}

echo "test.sh: Release with torch and Python, every test ($BUILD)"
shardkit_configure
cmake --build "$BUILD" -j"$(nproc)"
end_phase build
# Under CI=true a test that did not run (a skip) fails the run (scripts/run_ctest.sh).
scripts/run_ctest.sh "$BUILD" -j"$(nproc)" --output-on-failure --timeout 600
end_phase tests
[ "$sanitizers" = 0 ] && exit 0

# Reliability (RELIABILITY.md). The benchmarks are kept compiling by the Release build.
NOTORCH=(-DSHARDKIT_WITH_TORCH=OFF -DSHARDKIT_WITH_PYTHON=OFF -DSHARDKIT_BUILD_BENCHMARKS=OFF
         -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1)
echo "test.sh: every libFuzzer target for a few seconds each, under ASan and UBSan ($BUILD-fuzz)"
cmake -S . -B "$BUILD-fuzz" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DSHARDKIT_FUZZ=ON "${NOTORCH[@]}" >/dev/null
cmake --build "$BUILD-fuzz" -j"$(nproc)" --target fuzzers
end_phase "fuzz build"
scripts/run_ctest.sh "$BUILD-fuzz" -L '^fuzz$' -j"$(nproc)" --output-on-failure
end_phase fuzzing

if [ "$sanitizers" = full ]; then
  echo "test.sh: the torch-free suite under ASan and UBSan ($BUILD-asan)"
  cmake -S . -B "$BUILD-asan" -G Ninja -DSHARDKIT_SANITIZE=ON "${NOTORCH[@]}" >/dev/null
  cmake --build "$BUILD-asan" -j"$(nproc)"
  scripts/run_ctest.sh "$BUILD-asan" -j"$(nproc)" --output-on-failure --timeout 600
  end_phase sanitizers
fi
