"""torch.save baselines for bench_shardify: the pickle-everything-up-front approach.

usage: /usr/bin/python3 torch_save_baseline.py IDS.u32 LENS.u32 MAX_LEN OUTDIR
IDS.u32 is every document's token ids (separator included) as little-endian uint32, LENS.u32
each document's length. Prints two sizes in bytes: torch.save of a list of int64 tensors, one
per document, and of one packed int64 tensor [N, MAX_LEN] (the last row zero-padded).
"""
import os
import sys

import numpy as np
import torch


def main():
    ids_path, lens_path, max_len, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    ids = np.fromfile(ids_path, dtype="<u4").astype(np.int64)
    lens = np.fromfile(lens_path, dtype="<u4").astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(lens)])
    docs = [torch.from_numpy(ids[bounds[i]:bounds[i + 1]].copy()) for i in range(len(lens))]
    list_path = os.path.join(out, "docs.pt")
    torch.save(docs, list_path)
    rows = (len(ids) + max_len - 1) // max_len
    packed = np.zeros(rows * max_len, dtype=np.int64)
    packed[: len(ids)] = ids
    packed_path = os.path.join(out, "packed.pt")
    torch.save(torch.from_numpy(packed.reshape(rows, max_len)), packed_path)
    print(os.path.getsize(list_path), os.path.getsize(packed_path))


if __name__ == "__main__":
    main()
