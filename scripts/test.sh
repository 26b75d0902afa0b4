#!/usr/bin/env bash
# Installs dependencies, builds everything (library, tools, tests, examples, Python module)
# and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDKIT_WITH_TORCH=ON -DSHARDKIT_WITH_PYTHON=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" -j"$(nproc)" --output-on-failure --timeout 600
