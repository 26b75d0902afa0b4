"""bench_shardify's Python row: shardkit.write_dataset from a generator over documents already in
memory (read from the benchmark's JSONL before timing), --task lm, best of RUNS at 1 and 2
threads. Prints "seconds_1_thread seconds_2_threads cpu_seconds_1_thread" (CPU: the whole
process, all threads, as the C++ rows measure it).

    PYTHONPATH=build/python python3 write_dataset_bench.py TOKENIZER CORPUS.jsonl MAX_LEN RUNS OUT
"""
import json
import sys
import time

import shardkit


def main():
    tokenizer, jsonl, max_len, runs, out = sys.argv[1:6]
    with open(jsonl, encoding="utf-8") as f:
        docs = [json.loads(line)["text"] for line in f]
    best = {1: float("inf"), 2: float("inf")}
    cpu_best = float("inf")
    for _ in range(int(runs)):
        for threads in (1, 2):
            t0, c0 = time.perf_counter(), time.process_time()
            shardkit.write_dataset(({"text": d} for d in docs), out, task="lm", tokenizer=tokenizer,
                                   max_len=int(max_len), threads=threads, force=True,
                                   progress=False)
            best[threads] = min(best[threads], time.perf_counter() - t0)
            if threads == 1:
                cpu_best = min(cpu_best, time.process_time() - c0)
    print(f"{best[1]:.6f} {best[2]:.6f} {cpu_best:.6f}")


if __name__ == "__main__":
    main()
