#!/usr/bin/env bash
# Checks that the tokenizer oracle (HF tokenizers' Rust core via npm) loads and can write the
# tokenizer files the parity tests use. The tests themselves write them into the build tree.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node make_tokenizers.js "$tmp"
echo "tests/oracle: HF tokenizers oracle ready"
