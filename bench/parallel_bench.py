"""The cost of parallelism in the simulation (``make bench``): the same job on one subtask per
operator and on four.

Job: N events in 4 source partitions (a Kafka topic), 100 keys, per-partition bounded
out-of-orderness watermarks (500 ms), 10 s tumbling event-time windows summing values, one
event per ms of processing time. Compared, with the trace off (the batched fast path):

* ``1 subtask``  — parallelism 1: one reader with the 4 partitions (its multiplexer combines
  them), the key_by is a plain hand-over, one window operator, one sink;
* ``4 subtasks`` — ``env.set_parallelism(4)``: 4 readers (one partition each), a key_by
  exchange routing every record by key group, 4 window subtasks each combining 4 input
  channels with a ``StatusWatermarkValve``, 4 sink subtasks.

The two runs must give the same window results (the same records, fired at the same simulated
processing times; only their interleaving differs), which the benchmark checks. It prints
events per second of both and the overhead of routing and valves (time ratio).

    python bench/parallel_bench.py [--sizes 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import gc
import random
import time

from sum_job import sum_job

import winviz as wv

SIZE = 10_000
BOUND = 500
PARTITIONS = 4
KEYS = [f"user{i:03d}" for i in range(100)]


def make_partitions(n: int, seed: int = 7) -> tuple[list[list], list[list[int]]]:
    """Records (key, timestamp, value) dealt round-robin to the partitions; record i arrives
    at i ms. Timestamps advance 10 ms per event with up to 400 ms of disorder and, every 50th
    event, one 700 ms behind (late)."""
    rnd = random.Random(seed)
    parts: list[list] = [[] for _ in range(PARTITIONS)]
    arrivals: list[list[int]] = [[] for _ in range(PARTITIONS)]
    for i in range(n):
        ts = i * 10 - rnd.randrange(0, 400) if i % 50 else i * 10 - 700
        parts[i % PARTITIONS].append((KEYS[rnd.randrange(100)], ts, rnd.randrange(1, 10)))
        arrivals[i % PARTITIONS].append(i)
    return parts, arrivals


def job(parts, arrivals, parallelism: int) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment(trace=False).set_parallelism(parallelism)
    return sum_job(env, parts, SIZE, BOUND, partitioned=True, arrival_times=arrivals, name="kafka")


def timed(parts, arrivals, parallelism: int, repeat: int):
    best, result = None, None
    for _ in range(repeat):
        env = job(parts, arrivals, parallelism)
        gc.collect()
        t0 = time.perf_counter()
        result = env.execute()
        elapsed = time.perf_counter() - t0
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000", help="comma-separated event counts")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size (best is kept)")
    args = parser.parse_args()
    print(f"{'events':>10} {'subtasks':>9} {'seconds':>8} {'events/s':>10} {'results':>8}")
    for n in (int(s) for s in args.sizes.split(",")):
        parts, arrivals = make_partitions(n)
        one_t, one = timed(parts, arrivals, 1, args.repeat)
        four_t, four = timed(parts, arrivals, 4, args.repeat)
        a, b = one.outputs["sums"], four.outputs["sums"]
        if sorted(map(repr, a)) != sorted(map(repr, b)):
            raise SystemExit("the 4-subtask run gave other results than the 1-subtask run")
        if one.num_late_records_dropped != four.num_late_records_dropped:
            raise SystemExit("the two runs dropped different numbers of late records")
        for label, t, res in (("1", one_t, one), ("4", four_t, four)):
            print(f"{n:>10} {label:>9} {t:>8.2f} {n / t:>10,.0f} {len(res.outputs['sums']):>8}")
        print(
            f"{'':>10} overhead of routing and valves: x{four_t / one_t:.2f} "
            f"({(four_t - one_t) / n * 1e6:.2f} µs per event); late records dropped: "
            f"{one.num_late_records_dropped}"
        )


if __name__ == "__main__":
    main()
