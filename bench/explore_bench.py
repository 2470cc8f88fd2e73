"""Timing of winviz.viz.explore (``python bench/explore_bench.py``).

Measures the time from a control's value change to the updated chart spec(s) on the existing
``alt.JupyterChart`` — the engine re-run, the charts, the summary, every chart's Vega-Lite dict
(``spec.chart_dict``) and setting it on the widget — for a 2,000-event input (no browser:
rendering in the page is not counted), and prints the median of each stage
(``Explorer.last_stages``, wall and CPU) under the total. Each change moves the
out-of-orderness bound slider to a new value, so every measurement is a real re-run.

Job: 20 keys, one event per 10 ms of processing time with up to 3 s of disorder, bounded
out-of-orderness (the slider), tumbling windows (a dropdown), allowed lateness 1 s, late data
to a side output — the same shape as bench/viz_bench.py.

    python bench/explore_bench.py [--events 2000] [--changes 10] [--charts timeline,scrubber]

The goal (issue 11): a change → updated spec within 30 ms at 2,000 events and 100 ms at
20,000 (``GOALS``); the figures are printed next to it. ``make bench`` runs both sizes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import winviz as wv
from winviz.viz.explore import explore

GOALS_MS = {2_000: 30.0, 20_000: 100.0}
STAGES = {
    "engine": "engine run (the pipeline call)",
    "read": "the trace's first read (Trace.columns)",
    "charts": "chart build (winviz.viz chart functions)",
    "summary": "summary line (explore.summarize)",
    "spec": "Vega-Lite dicts (spec.chart_dict)",
    "widget": "specs set on the JupyterCharts",
    "at_t": "line at the scrubber's t (explore.state_at)",
}


def goal_ms(events: int) -> float | None:
    """The goal for this many events: the one of the smallest size at or above it."""
    sizes = [n for n in sorted(GOALS_MS) if n >= events]
    return GOALS_MS[sizes[0]] if sizes else None


def make_events(n: int) -> list[tuple[str, int]]:
    rnd = random.Random(7)
    return [(f"k{i % 20}", i * 10 - rnd.randrange(0, 3000)) for i in range(n)]


def pipeline(events: list[tuple[str, int]], bound: int = 1000, size: int = 5000):
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(events, arrival_interval=10)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(size))
        .allowed_lateness(1000)
        .side_output_late_data(wv.OutputTag("late"))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--charts", default="timeline")
    args = parser.parse_args()
    events = make_events(args.events)
    charts = tuple(args.charts.split(","))

    t0 = time.perf_counter()
    ex = explore(pipeline, events, bound=(0, 3000, 100), size=[2000, 5000, 10000], charts=charts)
    build = time.perf_counter() - t0  # includes bundling the widget's JavaScript once

    # the floor under a change: the engine run and the trace's first columnar read (the
    # "read" stage below), CPU medians of 5 runs outside the explorer
    engine_cpu, read_cpu = [], []
    for i in range(5):
        c0 = time.process_time()
        result = pipeline(events, bound=100 * (i + 1))
        engine_cpu.append(time.process_time() - c0)
        c0 = time.process_time()
        result.trace.columns()
        read_cpu.append(time.process_time() - c0)
    engine = statistics.median(engine_cpu)
    first_read = statistics.median(read_cpu)

    seconds, cpu = [], []
    stages: dict[str, list[float]] = {}
    stages_cpu: dict[str, list[float]] = {}
    for i in range(args.changes):
        t0, c0 = time.perf_counter(), time.process_time()
        ex.controls["bound"].value = 100 * ((i % 29) + 1)  # never 1000: always a real change
        seconds.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert ex.error is None, ex.error
        for stage, took in ex.last_stages.wall.items():
            stages.setdefault(stage, []).append(took)
            stages_cpu.setdefault(stage, []).append(ex.last_stages.cpu[stage])
    assert ex.runs == args.changes + 1
    print(f"explore: {args.events:,} events, charts {', '.join(charts)}")
    print(f"  first build (incl. the offline widget bundle): {build * 1000:8.1f} ms")
    print(f"  engine run alone, CPU median of 5:             {engine * 1000:8.1f} ms")
    print(f"  the trace's first read (Trace.columns):       {first_read * 1000:8.1f} ms")
    print(
        f"  value change → updated spec: median {statistics.median(seconds) * 1000:.1f} ms, "
        f"min {min(seconds) * 1000:.1f} ms, max {max(seconds) * 1000:.1f} ms "
        f"({args.changes} changes)"
    )
    print(  # CPU time of this process: what the change costs when the machine is shared
        f"  value change → updated spec, CPU: median {statistics.median(cpu) * 1000:.1f} ms, "
        f"min {min(cpu) * 1000:.1f} ms"
    )
    goal = goal_ms(args.events)
    if goal is not None:
        median = statistics.median(seconds) * 1000
        median_cpu = statistics.median(cpu) * 1000
        print(
            f"  goal <= {goal:g} ms at {args.events:,} events: median {median:.1f} ms "
            f"{'met' if median <= goal else 'NOT met'}, CPU median {median_cpu:.1f} ms "
            f"{'met' if median_cpu <= goal else 'NOT met'}"
        )
    print(f"  stages of a change (medians, Explorer.last_stages){'wall':>17} {'CPU':>10}")
    for stage, took in stages.items():
        print(
            f"    {STAGES.get(stage, stage):<46} {statistics.median(took) * 1000:8.1f} ms "
            f"{statistics.median(stages_cpu[stage]) * 1000:7.1f} ms"
        )
    rest = statistics.median(seconds) - sum(statistics.median(t) for t in stages.values())
    rest_cpu = statistics.median(cpu) - sum(statistics.median(t) for t in stages_cpu.values())
    print(
        f"    {'rest (median change - sum of stage medians)':<46} {rest * 1000:8.1f} ms "
        f"{rest_cpu * 1000:7.1f} ms"
    )
    print(f"  summary after the last change: {ex.last_summary.text()}")


if __name__ == "__main__":
    main()
