"""Timing of winviz.viz (``python bench/viz_bench.py``).

Measures, from a finished run's Trace (the engine's own time is not counted):

* the timeline spec for a 2,000-event trace (``timeline(trace).to_dict()``; target ≤ 100 ms);
* the timeline of a 1M-event trace through to rendered SVG text (target ≤ 3 s);
* the same for ``window_lanes``.

Job: 20 keys, one event per 10 ms of processing time with up to 3 s of disorder, bounded
out-of-orderness 1 s, 5 s tumbling windows, allowed lateness 1 s, late data to a side output.

    python bench/viz_bench.py [--small 2000] [--large 1000000] [--repeat 5] [--large-repeat 3]

Each figure is the best of several runs (wall clock, and the process's CPU time: on a shared
machine other processes inflate the wall clock but not the CPU time).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import winviz as wv
from winviz import viz
from winviz.viz.export import svg_text


def make_trace(n: int) -> wv.Trace:
    rnd = random.Random(7)
    events = [(f"k{i % 20}", i * 10 - rnd.randrange(0, 3000)) for i in range(n)]
    env = wv.StreamExecutionEnvironment(trace=True)
    (
        env.from_collection(events, arrival_interval=10)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(1000).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .allowed_lateness(1000)
        .side_output_late_data(wv.OutputTag("late"))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute().trace


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(best wall-clock, best CPU time of this process) over ``repeat`` runs, in seconds. On a
    shared machine the CPU time shows the work itself when other processes inflate the wall
    clock."""
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--large-repeat", type=int, default=3)
    args = parser.parse_args()

    small = make_trace(args.small)
    wall, cpu = best_of(lambda: viz.timeline(small, view="timeline").to_dict(), args.repeat)
    print(
        f"timeline spec, {args.small:,} events ({len(small):,} records): {wall * 1000:.0f} ms "
        f"(cpu {cpu * 1000:.0f} ms; target <= 100 ms)"
    )
    wall, cpu = best_of(lambda: svg_text(viz.timeline(small, view="timeline")), args.repeat)
    print(f"timeline SVG,  {args.small:,} events: {wall * 1000:.0f} ms (cpu {cpu * 1000:.0f} ms)")

    t0 = time.perf_counter()
    large = make_trace(args.large)
    print(
        f"(engine run, {args.large:,} events, {len(large):,} records: "
        f"{time.perf_counter() - t0:.1f} s — not counted)"
    )
    runs = []
    for _ in range(args.large_repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        chart = viz.timeline(large, view="timeline")
        w1 = time.perf_counter()
        svg = svg_text(chart)
        w2, c2 = time.perf_counter(), time.process_time()
        runs.append((w2 - w0, w1 - w0, w2 - w1, c2 - c0))
    total, chart_s, render_s, cpu = min(runs)
    print(
        f"timeline, {args.large:,} events -> SVG: {total:.2f} s (chart {chart_s:.2f} s, "
        f"render {render_s:.2f} s; cpu {cpu:.2f} s; {len(svg) / 1e6:.1f} MB SVG; "
        f"best of {args.large_repeat}; target <= 3 s)"
    )
    t0 = time.perf_counter()
    svg = svg_text(viz.window_lanes(large))
    print(f"window_lanes, {args.large:,} events -> SVG: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
