#!/usr/bin/env bash
# usage: skip_policy_test.sh SOURCE_DIR
# Under CI=true a skipped test fails (issue 28, item 18): scripts/run_ctest.sh (what test.sh runs)
# fails a CTest run in which a test was skipped, and slurm_array_test.sh exits 1 instead of 77
# where it cannot run (here: as an unprivileged user). Without CI both still skip.
set -euo pipefail
source=$1
tmp=$(mktemp -d /tmp/shardkit-skip-policy.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0
check() {  # check WHAT EXPECTED ACTUAL
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1: expected $2, got $3"
    failures=$((failures + 1))
  else
    echo "ok: $1 ($3)"
  fi
}

# A CTest project with one passing and one skipping test.
mkdir -p "$tmp/project"
cat >"$tmp/project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(skips NONE)
enable_testing()
add_test(NAME passes COMMAND sh -c "exit 0")
add_test(NAME skips COMMAND sh -c "exit 77")
set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)
CMAKE
cmake -S "$tmp/project" -B "$tmp/build" >/dev/null
set +e
env -u CI "$source/scripts/run_ctest.sh" "$tmp/build" >"$tmp/log" 2>&1
check "run_ctest.sh with a skipped test, CI unset" 0 $?
CI=true "$source/scripts/run_ctest.sh" "$tmp/build" >"$tmp/log" 2>&1
check "run_ctest.sh with a skipped test, CI=true" 1 $?
grep -q "skips (Skipped)" "$tmp/log"
check "the CI failure names the skipped test" 0 $?
set -e

# The Slurm test where it cannot run: as nobody when this is root (it then needs root), as
# this user otherwise.
as_user=()
if [ "$(id -u)" = 0 ]; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
set +e
env -u CI "${as_user[@]}" bash "$source/tests/cluster/slurm_array_test.sh" "$source" "$tmp" >"$tmp/log" 2>&1
check "slurm_array_test.sh where it cannot run, CI unset" 77 $?
CI=true "${as_user[@]}" bash "$source/tests/cluster/slurm_array_test.sh" "$source" "$tmp" >"$tmp/log" 2>&1
check "slurm_array_test.sh where it cannot run, CI=true" 1 $?
grep -q "a skip fails under CI=true" "$tmp/log"
check "it says why" 0 $?
set -e
echo "$((checks - failures)) passed, $failures failed"
[ "$failures" = 0 ]
