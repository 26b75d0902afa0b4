#!/usr/bin/env bash
# DuckDB's C library for Parquet input (shardify --format parquet), from npm, pinned by version and
# sha256, into the project-local prefix .deps/duckdb/{include,lib} that CMake finds on its own.
# Debian 12 has no Arrow/Parquet C++ library; the node bindings ship a complete libduckdb.so with
# the Parquet reader built in, and the duckdb package holds the matching duckdb.h. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.4.4
LIB_PACKAGE=@duckdb/node-bindings-linux-x64@1.4.4-r.4
LIB_SHA256=732fac4dc6b8f198870b9c4bb6ddf13544466daca00ad28ba2f1d80de5d7aa4b
HEADER_PACKAGE=duckdb@1.4.4
HEADER_SHA256=5bb967dcbcd517670ba5f169f238fb9d6787e53752c60ebe24386169d76941ed

PREFIX=.deps/duckdb
if [ "$(cat "$PREFIX/VERSION" 2>/dev/null)" = "$VERSION" ] &&
  [ -f "$PREFIX/lib/libduckdb.so" ] && [ -f "$PREFIX/include/duckdb.h" ]; then
  exit 0
fi
[ "$(uname -m)" = x86_64 ] || {
  echo "install-duckdb: only linux-x64 is pinned; install DuckDB yourself and pass CMAKE_PREFIX_PATH" >&2
  exit 0
}
echo "install-duckdb: $LIB_PACKAGE, duckdb.h from $HEADER_PACKAGE (npm pack, --ignore-scripts)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# npm pack fetches the tarballs alone: no install scripts run, no dependencies are resolved.
(cd "$tmp" && npm pack --silent --ignore-scripts "$LIB_PACKAGE" "$HEADER_PACKAGE" >/dev/null 2>&1)
check() { echo "$2  $tmp/$1" | sha256sum --check --quiet - ||
  { echo "install-duckdb: $1 does not have the pinned sha256" >&2; exit 1; }; }
check duckdb-node-bindings-linux-x64-1.4.4-r.4.tgz "$LIB_SHA256"
check duckdb-1.4.4.tgz "$HEADER_SHA256"
tar -xzf "$tmp/duckdb-node-bindings-linux-x64-1.4.4-r.4.tgz" -C "$tmp" package/libduckdb.so package/LICENSE
tar -xzf "$tmp/duckdb-1.4.4.tgz" -C "$tmp" package/src/duckdb/src/include/duckdb.h
rm -rf "$PREFIX"
mkdir -p "$PREFIX/lib" "$PREFIX/include"
mv "$tmp/package/libduckdb.so" "$PREFIX/lib/"
mv "$tmp/package/LICENSE" "$PREFIX/LICENSE"
mv "$tmp/package/src/duckdb/src/include/duckdb.h" "$PREFIX/include/"
echo "$VERSION" >"$PREFIX/VERSION"
