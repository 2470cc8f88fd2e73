"""Timing of winviz.viz (``python bench/viz_bench.py``).

Measures, from a finished run's Trace (the engine's own time is not counted):

* the timeline spec for a 2,000-event trace (``timeline(trace).to_dict()``; target ≤ 100 ms);
* the timeline of a 1M-event trace through to rendered SVG text (target ≤ 3 s);
* the same for ``window_lanes``;
* ``timers_chart(trace).to_dict()`` at ``--timers`` sizes of the job below and for a session
  trace of ``--session`` events (``make_session_trace``: many merges, timers registered and
  deleted); the chart should grow about linearly with the trace.

Job: 20 keys, one event per 10 ms of processing time with up to 3 s of disorder, bounded
out-of-orderness 1 s, 5 s tumbling windows, allowed lateness 1 s, late data to a side output.

    python bench/viz_bench.py [--small 2000] [--large 1000000] [--repeat 5] [--large-repeat 3]
                              [--timers 100000,200000,400000,1000000] [--session 60000]

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


def make_session_trace(n: int) -> wv.Trace:
    """Event-time sessions (gap 60 ms, lateness 30 ms) of 4 keys over ``n`` events: each event
    merges into its key's session, its timers deleted and registered anew."""
    events = [(f"s{i % 4}", (i * 41) % 500 + i * 7, i) for i in range(n)]
    env = wv.StreamExecutionEnvironment(trace=True)
    (
        env.from_collection(events, arrival_interval=5)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(40).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(60))
        .allowed_lateness(30)
        .process(lambda k, ctx, els, o: o.collect((k, len(list(els)))))
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
    parser.add_argument("--timers", default="100000,200000,400000,1000000")
    parser.add_argument("--session", type=int, default=60_000)
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
    del large

    traces = [
        (f"{n:,} events", lambda n=n: make_trace(n)) for n in map(int, args.timers.split(","))
    ]
    traces.append((f"{args.session:,} session events", lambda: make_session_trace(args.session)))
    for name, make in traces:
        trace = make()
        wall, cpu = best_of(lambda t=trace: viz.timers_chart(t).to_dict(), args.large_repeat)
        print(f"timers_chart spec, {name} ({len(trace):,} records): {wall:.2f} s (cpu {cpu:.2f} s)")


if __name__ == "__main__":
    main()
