#!/bin/sh
# on_full_tmpfs.sh DIR COMMAND...: runs COMMAND with SHARDKIT_TEST_FULL_DIR=DIR, DIR being a real
# 96 KiB tmpfs mounted in a mount namespace of the command's own (unshare -m): nothing outside
# sees it, and it goes when the command ends. Mounting needs root (CI runs as root); where it
# cannot be done this exits 77, which CTest reports as skipped (SKIP_RETURN_CODE). TMPFS_OPTIONS
# adds mount options (ro: a read-only file system).
dir=$1
shift
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
  echo "not run: mounting a tmpfs needs root and unshare -m"
  exit 77
fi
mkdir -p "$dir" || exit 1
exec unshare -m sh -c '
  dir=$1
  shift
  mount -t tmpfs -o "size=96k${TMPFS_OPTIONS:+,$TMPFS_OPTIONS}" tmpfs "$dir" || { echo "not run: cannot mount a tmpfs"; exit 77; }
  SHARDKIT_TEST_FULL_DIR=$dir exec "$@"' sh "$dir" "$@"
