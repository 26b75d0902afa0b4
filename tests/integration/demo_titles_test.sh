#!/usr/bin/env bash
# usage: demo_titles_test.sh SOURCE_DIR
# scripts/demo.sh's step titles: bold on a terminal, plain when piped or under NO_COLOR.
set -euo pipefail
source=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -n '/^if \[ -t 1 \]/,/^fi$/p' "$source/scripts/demo.sh" >"$work/step.sh"
grep -q 'step()' "$work/step.sh" || { echo "demo.sh defines no step() under 'if [ -t 1 ]'"; exit 1; }
echo 'step hello' >>"$work/step.sh"
esc=$'\033'
piped=$(bash "$work/step.sh")
on_tty=$(script -qec "bash $work/step.sh" /dev/null)
no_color=$(NO_COLOR=1 script -qec "bash $work/step.sh" /dev/null)
[[ $piped == *"== hello"* && $piped != *"$esc"* ]] || { echo "piped: escape codes"; exit 1; }
[[ $on_tty == *"$esc[1m== hello"* ]] || { echo "terminal: no bold title"; exit 1; }
[[ $no_color == *"== hello"* && $no_color != *"$esc"* ]] || { echo "NO_COLOR: escape codes"; exit 1; }
echo "1 passed, 0 failed"
