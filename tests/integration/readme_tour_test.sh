#!/usr/bin/env bash
# usage: readme_tour_test.sh SOURCE_DIR BUILD_DIR
# Runs the README's tour verbatim from a scratch directory laid out as the repository root is
# after scripts/demo.sh (build/, tests/, demo-out/tokenizers/, demo-out/corpus/, and no data/),
# then checks what it made. Also checks the demo's step titles: escape codes on a terminal only.
set -euo pipefail
source=$1 build=$2
work="$build/test-tmp/readme-tour"
rm -rf "$work" && mkdir -p "$work/demo-out/corpus"
ln -s "$(cd "$build" && pwd)" "$work/build"
ln -s "$source/tests" "$work/tests"
node "$source/tests/oracle/make_tokenizers.js" "$work/demo-out/tokenizers"
for split in train valid; do
  for i in $(seq 1 150); do
    label=ham; [ $((i % 4)) = 0 ] && label=spam
    echo "{\"text\": \"Subject: $split mail $i\\nBody of mail $i, which is $label.\", \"label\": \"$label\"}"
  done >"$work/demo-out/corpus/$split.jsonl"
done

tour=$(/usr/bin/python3 "$source/tests/integration/readme_snippet.py" "$source/README.md" indented "A tour")
if ! (cd "$work" && bash -euo pipefail -c "$tour") >"$work/tour.log" 2>&1; then
  cat "$work/tour.log"
  echo "the README's tour fails as written"
  exit 1
fi

# What the tour made, read back with the tools and Python's json, not from the tour's output.
inspect="$build/tools/shard-inspect"
for ds in train valid qa nli lm sft; do "$inspect" verify "$work/data/$ds" >/dev/null; done
records() { "$inspect" info --json "$work/data/$1" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])'; }
[ "$(records train)" = 300 ] || { echo "data/train: $(records train) records, expected 300 mails"; exit 1; }
# --doc-sep file is the default: one document per book.
books=$(ls "$source"/tests/data/tokenizer/en_*.txt | wc -l)
docs=$(/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["dataset"]["stats"]["examples"])' "$work/data/lm/manifest.json")
[ "$docs" = "$books" ] || { echo "data/lm: $docs documents from $books books"; exit 1; }
# sft: the five conversations of the fixture, packed, with a loss mask.
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["dataset"]; assert d["stats"]["examples"] == 5 and d["task"]["packed"] and "loss_mask" in d["fields"], d' "$work/data/sft/manifest.json"
grep -q "input text / output" "$work/tour.log"
grep -q "records / on disk" "$work/tour.log"
# The mixture's first 8 samples, weights 3:1: exactly 6 from data/train (source 0), 2 from valid.
mix=$(grep -E '^[01] [0-9]+$' "$work/tour.log" | cut -d' ' -f1 | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')
[ "$mix" = "6x0 2x1 " ] || { echo "mixture order: '$mix', expected 6 from train and 2 from valid"; exit 1; }

# The demo's step titles: bold on a terminal, plain when piped or under NO_COLOR.
sed -n '/^if \[ -t 1 \]/,/^fi$/p' "$source/scripts/demo.sh" >"$work/step.sh"
echo 'step hello' >>"$work/step.sh"
esc=$'\033'
piped=$(bash "$work/step.sh")
on_tty=$(script -qec "bash $work/step.sh" /dev/null)
no_color=$(NO_COLOR=1 script -qec "bash $work/step.sh" /dev/null)
[[ $piped == *"== hello"* && $piped != *"$esc"* ]] || { echo "piped: escape codes"; exit 1; }
[[ $on_tty == *"$esc[1m== hello"* ]] || { echo "terminal: no bold title"; exit 1; }
[[ $no_color == *"== hello"* && $no_color != *"$esc"* ]] || { echo "NO_COLOR: escape codes"; exit 1; }
echo "1 passed, 0 failed"
