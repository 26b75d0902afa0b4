#!/bin/bash
# Converts INPUT into the dataset OUT as a Slurm job array of N parts plus a dependent merge.
#   examples/slurm/submit.sh N INPUT OUT PARTS_DIR [shardify flags...]
# PARTS_DIR must be on a file system every node sees. OUT may be a directory or s3://bucket/prefix.
# Prints the two job ids ("ARRAY_ID MERGE_ID"). `shardify` comes from PATH, or set SHARDIFY.
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 N INPUT OUT PARTS_DIR [shardify flags...]" >&2
  exit 2
fi
n=$1 input=$2 out=$3 parts=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --array=0-$((n - 1)) "$here/convert_part.sbatch" "$input" "$parts" "$@")
array=${array%%;*}  # --parsable prints "id" or "id;cluster"
# Without --kill-on-invalid-dep=yes a failed part would leave the merge pending forever.
merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
  "$here/merge_parts.sbatch" "$out" "$parts")
echo "${array} ${merge%%;*}"
