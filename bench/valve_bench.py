"""The cost of parallelism itself (``make bench``): four records through a job at a high
parallelism, where nearly all the work is building the subtasks and passing watermarks.

Job: four records (keys A..D) from a non-parallel collection, watermarks (bounded
out-of-orderness 0) at parallelism ``p``, ``key_by`` into 1 s tumbling windows at ``p``,
a sink at ``p``. Every watermark of the ``p`` watermark subtasks crosses ``p`` channels, so
the end-of-input watermark alone makes ``p * p`` channel watermarks; each window subtask's
``StatusWatermarkValve`` must take them at O(1) (``winviz.valve``). Goal: ``p = 1000`` in at
most 1 s (the issue-14 goal; the valve used to rebuild its list of channels on every channel
watermark, ~47 s). The four window results are checked.

    python bench/valve_bench.py [--parallelisms 100,250,500,1000] [--repeat 3]
                                [--clock cpu|wall] [--goal 1.0]
"""

from __future__ import annotations

import argparse
import gc
import time

import winviz as wv

RECORDS = [("A", 500), ("B", 1500), ("C", 2500), ("D", 3500)]


def job(parallelism: int) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment(trace=False).set_parallelism(parallelism)
    (
        env.from_collection(RECORDS, arrival_times=[0, 100, 200, 300])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .reduce(lambda a, b: a)
        .sink_to("out")
    )
    return env


def measure(parallelism: int, repeat: int, clock) -> float:
    best = float("inf")
    for _ in range(repeat):
        env = job(parallelism)
        gc.collect()
        start = clock()
        result = env.execute()
        best = min(best, clock() - start)
        got = sorted((r.value, r.timestamp) for r in result.outputs["out"])
        want = [(r, r[1] // 1000 * 1000 + 999) for r in RECORDS]
        assert got == want, f"wrong results at parallelism {parallelism}: {got}"
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parallelisms", default="100,250,500,1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--goal", type=float, default=1.0, help="seconds allowed at p = 1000")
    args = parser.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    sizes = [int(p) for p in args.parallelisms.split(",")]
    print(f"4 records through watermarks, key_by and windows at parallelism p ({args.clock})")
    print(f"{'p':>6} {'seconds':>9} {'channel watermarks/s':>21}")
    figures = {}
    for p in sizes:
        seconds = figures[p] = measure(p, args.repeat, clock)
        print(f"{p:>6} {seconds:>9.3f} {p * p / seconds:>21,.0f}")
    if 1000 in figures:
        verdict = "met" if figures[1000] <= args.goal else "MISSED"
        print(f"goal p = 1000 in <= {args.goal} s: {verdict} ({figures[1000]:.3f} s)")
        if figures[1000] > args.goal:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
