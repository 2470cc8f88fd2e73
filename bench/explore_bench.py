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
    python bench/explore_bench.py --lesson 01 [--changes 10]

The goal (issues 11, 30): a change → updated spec within 30 ms at 2,000 events, 100 ms at
20,000 and 250 ms at 100,000 (``GOALS_MS``); the figures are printed next to it. ``make
bench`` runs the first two sizes.

``--lesson NN`` (``NN:k`` for a lesson's k-th explorer) times a lesson's own explorer instead,
built exactly as the lesson builds it: the code cells of ``notebooks/NN_*.ipynb`` run in order,
in the notebooks folder, up to the cell that calls ``wv.explore`` (that cell's last expression,
or the explorer it made). Each change moves the explorer's first slider one step (up from its
starting value, wrapping around at the top), as a learner dragging it does. Its job is the
lesson's (lesson 01: the 531-click clickstream, whose trace is mostly watermarks — issue 30:
the bench's own job understates it).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import statistics
import time
from contextlib import chdir
from pathlib import Path
from typing import Any

import ipywidgets as widgets

import winviz as wv
from winviz.collector import paused
from winviz.viz.explore import NO_DATA, Explorer, explore

GOALS_MS = {2_000: 30.0, 20_000: 100.0, 100_000: 250.0}
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
STAGES = {
    "engine": "engine run (the pipeline call)",
    "read": "the trace's first read (Trace.columns)",
    "charts": "chart build (winviz.viz chart functions)",
    "summary": "summary line (explore.summarize)",
    "spec": "Vega-Lite dicts (spec.chart_dict)",
    "widget": "specs set on the JupyterCharts",
    "at_t": "line at the scrubber's t (explore.state_at)",
    "ahead": "the run computed ahead, from the cache",
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


def lesson_explorer(lesson: str) -> Explorer:
    """The explorer of lesson ``NN`` (``NN:k``: its k-th, from 1), built as the lesson builds
    it: the notebook's code cells run in order (in the notebooks folder) up to the k-th cell
    that calls ``wv.explore``; the explorer is that cell's last expression, else the last
    Explorer the cell left in the namespace."""
    number, _, nth = lesson.partition(":")
    paths = sorted(NOTEBOOKS.glob(f"{number}_*.ipynb"))
    if len(paths) != 1:
        raise SystemExit(f"--lesson {lesson}: no single notebook {number}_*.ipynb in {NOTEBOOKS}")
    cells = [
        "".join(cell["source"])
        for cell in json.loads(paths[0].read_text())["cells"]
        if cell["cell_type"] == "code"
    ]
    at = [i for i, source in enumerate(cells) if "wv.explore(" in source]
    k = int(nth or 1)
    if not 1 <= k <= len(at):
        raise SystemExit(f"--lesson {lesson}: {paths[0].name} has {len(at)} explorer cell(s)")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with chdir(NOTEBOOKS):
        for i, source in enumerate(cells[: at[k - 1] + 1]):
            tree = ast.parse(source, filename=f"{paths[0].name} cell {i}")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, f"{paths[0].name} cell {i}", "exec"), namespace)  # the lesson's code
            if last is not None:
                value = eval(  # the lesson's own expression
                    compile(ast.Expression(last.value), f"{paths[0].name} cell {i}", "eval"),
                    namespace,
                )
    if isinstance(value, Explorer):
        return value
    made = [v for v in namespace.values() if isinstance(v, Explorer)]
    if not made:
        raise SystemExit(f"--lesson {lesson}: the cell made no Explorer")
    return made[-1]


def slider_steps(ex: Explorer, changes: int, only: str | None = None) -> tuple[str, list[Any]]:
    """The first slider of ``ex`` (or the one named) and the values of ``changes`` one-step
    moves of it: up from its current value, down from its maximum (a learner's moves: each
    differs from the last by one step)."""
    pool = ex.controls.items() if only is None else [(only, ex.controls[only])]
    for name, widget in pool:
        if isinstance(widget, (widgets.IntSlider, widgets.FloatSlider)):
            lo, hi, step = widget.min, widget.max, widget.step
            count = round((hi - lo) / step) + 1
            if count < 2:
                continue
            j = round((widget.value - lo) / step)
            values, way = [], 1
            for _ in range(changes):
                if not 0 <= j + way < count:
                    way = -way
                j += way
                values.append(type(widget.value)(lo + j * step))
            return name, values
    raise SystemExit("the explorer has no slider with two values or more")


def measure(ex: Explorer, control: str, steps: list[Any], *, warm: bool) -> dict[str, Any]:
    """Time each change of ``control`` to the next of ``steps``: cold (the explorer's cache
    of runs emptied first: the run is made in front of the learner) or warm (the neighbours
    of the shown values computed ahead first, ``Explorer.work_ahead``, untimed in the change)."""
    out: dict[str, Any] = {"seconds": [], "cpu": [], "stages": {}, "stages_cpu": {}}
    out["ahead_cpu"], out["ahead_runs"] = [], []
    for value in steps:
        if warm:
            c0 = time.process_time()
            done = ex.work_ahead()
            if done:
                out["ahead_cpu"].append((time.process_time() - c0) / done)
            out["ahead_runs"].append(done)
        else:
            ex.ahead.clear()
        runs = ex.runs
        t0, c0 = time.perf_counter(), time.process_time()
        ex.controls[control].value = value
        out["seconds"].append(time.perf_counter() - t0)
        out["cpu"].append(time.process_time() - c0)
        assert ex.error is None, ex.error
        assert ex.runs == runs + 1 and ex.last_ahead is warm, (ex.runs, ex.last_ahead)
        for stage, took in ex.last_stages.wall.items():
            out["stages"].setdefault(stage, []).append(took)
            out["stages_cpu"].setdefault(stage, []).append(ex.last_stages.cpu[stage])
    return out


def report(m: dict[str, Any], goal: float | None, events: int) -> None:
    seconds, cpu, stages, stages_cpu = m["seconds"], m["cpu"], m["stages"], m["stages_cpu"]
    print(
        f"    value change → updated spec: median {statistics.median(seconds) * 1000:.1f} ms, "
        f"min {min(seconds) * 1000:.1f} ms, max {max(seconds) * 1000:.1f} ms "
        f"({len(seconds)} changes)"
    )
    print(  # CPU time of this process: what the change costs when the machine is shared
        f"    value change → updated spec, CPU: median {statistics.median(cpu) * 1000:.1f} ms, "
        f"min {min(cpu) * 1000:.1f} ms"
    )
    if goal is not None:
        median = statistics.median(seconds) * 1000
        median_cpu = statistics.median(cpu) * 1000
        print(
            f"    goal <= {goal:g} ms at {events:,} events: median {median:.1f} ms "
            f"{'met' if median <= goal else 'NOT met'}, CPU median {median_cpu:.1f} ms "
            f"{'met' if median_cpu <= goal else 'NOT met'}"
        )
    print(f"    stages of a change (medians, Explorer.last_stages){'wall':>15} {'CPU':>10}")
    for stage, took in stages.items():
        print(
            f"      {STAGES.get(stage, stage):<44} {statistics.median(took) * 1000:8.1f} ms "
            f"{statistics.median(stages_cpu[stage]) * 1000:7.1f} ms"
        )
    rest = statistics.median(seconds) - sum(statistics.median(t) for t in stages.values())
    rest_cpu = statistics.median(cpu) - sum(statistics.median(t) for t in stages_cpu.values())
    print(
        f"      {'rest (median change - sum of stage medians)':<44} {rest * 1000:8.1f} ms "
        f"{rest_cpu * 1000:7.1f} ms"
    )


@paused()
def engine_floor(ex: Explorer, control: str, steps: list[Any]) -> tuple[float, float]:
    """CPU medians of the explorer's pipeline run outside the explorer at the values the cold
    changes below take (``control`` at each of ``steps``): the engine run, and the trace's first
    columnar read (``Trace.columns`` only; the change's read stage also decodes the kind column
    for its ``TraceView``). With the cyclic collector paused, as the explorer runs them; each run
    is freed outside the clock, as the explorer frees a dropped run after the change is shown."""
    engine_cpu, read_cpu = [], []
    for value in steps:
        values = {**ex.values, control: value}
        c0 = time.process_time()
        result = ex.pipeline(**values) if ex.data is NO_DATA else ex.pipeline(ex.data, **values)
        engine_cpu.append(time.process_time() - c0)
        trace = result if isinstance(result, wv.Trace) else result.trace
        c0 = time.process_time()
        trace.columns()
        read_cpu.append(time.process_time() - c0)
        del result, trace
    return statistics.median(engine_cpu), statistics.median(read_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--charts", default="timeline")
    parser.add_argument("--lesson", help="time lesson NN's explorer (NN:k: its k-th) instead")
    args = parser.parse_args()
    if args.lesson:
        t0 = time.perf_counter()
        ex = lesson_explorer(args.lesson)
        build = time.perf_counter() - t0  # the lesson's cells up to the explorer's, incl. it
        control, steps = slider_steps(ex, args.changes)
        trace = ex.result if isinstance(ex.result, wv.Trace) else ex.result.trace
        title = (
            f"lesson {args.lesson}'s explorer {ex!r} ({len(trace):,} trace records), "
            f"moving {control!r}"
        )
        goal = None
        build_text = "the lesson's cells up to the explorer's"
    else:
        events = make_events(args.events)
        charts = tuple(args.charts.split(","))
        t0 = time.perf_counter()
        ex = explore(
            pipeline, events, bound=(0, 3000, 100), size=[2000, 5000, 10000], charts=charts
        )
        build = time.perf_counter() - t0  # includes bundling the widget's JavaScript once
        # never 1000 (the start) right after 1000: always a real change
        control, steps = "bound", [100 * ((i % 29) + 1) for i in range(args.changes)]
        title = f"{args.events:,} events, charts {', '.join(charts)}"
        goal = goal_ms(args.events)
        build_text = "first build (incl. the offline widget bundle)"

    # the floor under a cold change: the engine run and the trace's first columnar read at
    # the cold changes' own values, outside the explorer
    engine, first_read = engine_floor(ex, control, steps)

    cold = measure(ex, control, steps, warm=False)
    # warm: one slider step at a time from where the cold changes left it, each after the
    # explorer computed the neighbours ahead (what the kernel does while the learner looks)
    control, warm_steps = slider_steps(ex, args.changes, control)
    warm = measure(ex, control, warm_steps, warm=True)
    print(f"explore: {title}")
    print(f"  {build_text + ':':<47}{build * 1000:8.1f} ms")
    print(f"  engine run alone at the cold values, CPU median: {engine * 1000:6.1f} ms")
    print(f"  the trace's first read (Trace.columns only):  {first_read * 1000:8.1f} ms")
    for label, m in (
        ("cold: the run made in front of the learner (cache emptied)", cold),
        ("warm: the run computed ahead while the kernel was idle", warm),
    ):
        print(f"  {label}")
        report(m, goal, args.events)
    ahead = warm["ahead_cpu"]
    print(
        f"  idle work ahead: {sum(warm['ahead_runs'])} neighbour runs, CPU median "
        f"{statistics.median(ahead) * 1000:.1f} ms each"
        " (Explorer.work_ahead; off the change's path)"
    )
    print(f"  summary after the last change: {ex.last_summary.text()}")


if __name__ == "__main__":
    main()
