#!/usr/bin/env bash
# run_fuzzer.sh FUZZER SECONDS WORKDIR CORPUS...: a bounded libFuzzer run from a fresh working
# corpus (new inputs go to WORKDIR, never into the checked-in seeds); fails on any finding.
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3
shift 3
rm -rf "$work" && mkdir -p "$work/corpus"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/corpus" "$@" 2>"$work/log" || { tail -n 60 "$work/log"; exit 1; }
grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/log" | tail -n 2
