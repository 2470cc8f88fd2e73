"""Spark twin timings (not run by ``make bench`` unless added there): cold start of the local
session, then the warm time per micro-batch of each twin kind, in one process.

Cold start: ``get_spark()`` plus a first ``range(1).collect()`` (JVM launch, SparkContext).
Warm: each twin runs once to warm up (Python workers, RocksDB for transformWithState), then
``--repeat`` times; the figure is the median wall time of a run divided by the micro-batches
Spark executed. Input: ``--batches`` trigger intervals of 1 s, 5 rows each, 3 keys.

    python bench/spark_bench.py [--batches 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from winviz.spark import StateSpec, TwinSpec, get_spark, run_state_twin, run_twin


def make_input(batches: int, seed: int = 5) -> tuple[list[dict], list[int]]:
    rng = random.Random(seed)
    records, arrivals = [], []
    for b in range(batches):
        for j in range(5):
            arrivals.append(b * 1000 + j * 100)
            ts = b * 1000 + rng.randrange(-1500, 500)
            records.append({"key": rng.choice("abc"), "ts": max(ts, 1), "value": 1})
    return records, arrivals


CASES = {
    "tumbling append, per_batch": (run_twin, TwinSpec(size=2000, watermark_delay=500)),
    "tumbling append, available_now": (
        run_twin,
        TwinSpec(size=2000, watermark_delay=500, drive="available_now"),
    ),
    "session append, per_batch": (run_twin, TwinSpec(session_gap=700, watermark_delay=500)),
    "transformWithState, per_batch": (
        run_state_twin,
        StateSpec(timeout=1000, watermark_delay=500),
    ),
    "applyInPandasWithState, per_batch": (
        run_state_twin,
        StateSpec(timeout=1000, watermark_delay=500, api="apply_in_pandas_with_state"),
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    get_spark().range(1).collect()
    print(f"cold start: {time.perf_counter() - started:.1f} s")
    records, arrivals = make_input(args.batches)
    for name, (run, spec) in CASES.items():
        run(records, arrivals, spec)  # warm-up
        times, n = [], 0
        for _ in range(args.repeat):
            t = time.perf_counter()
            n = len(run(records, arrivals, spec).batches)
            times.append(time.perf_counter() - t)
        run_s = statistics.median(times)
        print(f"{name:36s} {n:3d} batches  {run_s:6.2f} s/run  {1000 * run_s / n:6.0f} ms/batch")


if __name__ == "__main__":
    main()
