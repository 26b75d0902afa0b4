#!/usr/bin/env bash
# usage: run_ctest.sh BUILD_DIR [CTEST_ARGS...]
# Runs ctest in BUILD_DIR. Under CI=true a test that did not run (a skip, SKIP_RETURN_CODE, or a
# disabled test) fails the run: CTest counts skips as passes, and CI must prove what it claims.
set -uo pipefail
dir=$1
shift
# Compiled tokenizer forms of the tests' own tokenizer files stay in the build tree, not in the
# user's cache (lib/tokenizer/compiled_cache.h).
export SHARDKIT_TOKENIZER_CACHE=${SHARDKIT_TOKENIZER_CACHE-$(cd "$dir" && pwd)/tokenizer-cache}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest --test-dir "$dir" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "${CI:-}" = true ] && grep -q "The following tests did not run" "$log"; then
  echo "run_ctest.sh: under CI=true a test that did not run fails the run:"
  sed -n '/The following tests did not run/,/^$/p' "$log"
  [ "$rc" = 0 ] && rc=1
fi
exit "$rc"
