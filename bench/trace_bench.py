"""Reading the trace against writing it (``python bench/trace_bench.py``; in ``make bench``).

Job (the trace issue's): a 1 s tumbling sum over 100 keys, bounded out-of-orderness 200 ms,
one event per ms of processing time, trace on. For each size, in one process, each figure the
best of ``--repeat`` runs by CPU time of this process (steady on a shared machine), as a ratio
to the traced run itself:

* ``run`` — ``env.execute()`` with the trace on;
* ``columns`` — the first read: the write buffer (with its packed entries) to columns, each
  column decoded when a reader first asks for it (``winviz.trace.pieces.Pieces``);
* ``columns, all decoded`` — the first read and every column decoded (what a reader of
  every field, ``to_pandas`` say, pays for the first read);
* ``to_pandas`` — the DataFrame, on a fresh run's trace (first read included);
* ``save+load`` — ``trace.save`` to Parquet and ``wv.load_trace`` back (a loaded trace, like
  a run's, decodes each column but ``seq`` and ``kind`` when a reader first asks for it);
  ``save+load, all decoded`` — the same and every column of the loaded trace decoded (no goal
  of its own: what a reader of every field pays);
* the charts' specs (``to_dict()``) from a fresh run's trace: ``timeline`` (``view="timeline"``:
  ``"auto"`` would draw this long, barely disordered run as the skew chart), ``scrubber``,
  ``timers_chart``, ``window_lanes``, ``propagation_chart``, ``skew_chart`` (what
  ``timeline(view="auto")`` draws for this run);
* the same charts' specs from a trace whose columns were already read and decoded (``...
  w/o first read``: what the chart itself costs; the goals above include the first read);
* the traced run's and ``to_pandas``'s CPU time split into user and system time, with their
  page faults, and the frame's size: a run in this loop writes into memory the runs before
  it freed, the frame needs new memory, which the kernel maps and zeroes page by page;
* ``bytes/record`` — what the trace holds after its first read (tracemalloc: the memory a
  traced run keeps beyond the same run untraced, divided by the records).

Each figure is printed next to its goal (issue 11: ``GOALS``) and whether it meets it.

    python bench/trace_bench.py [--sizes 100000,1000000] [--repeat 2] [--charts-max 100000]
                                [--save-max 1000000]
"""

from __future__ import annotations

import argparse
import gc
import resource
import shutil
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pandas  # noqa: F401  (imported once, as in a notebook; not part of any figure)
import pyarrow.parquet  # noqa: F401
from sum_job import sum_job

import winviz as wv
from winviz import viz

KEYS = [f"k{i:03d}" for i in range(100)]
FIELDS = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")

# issue 11's goals, as ratios to the traced run (save+load: "of the 1M-event trace")
GOALS = {
    "columns": 0.35,
    "to_pandas": 1.0,
    "save+load": 2.0,
    "timeline": 1.0,
    "scrubber": 1.0,
    "timers_chart": 2.0,
    "window_lanes": 2.0,
    "propagation_chart": 2.0,
}
BYTES_PER_RECORD_GOAL = 200


def verdict(value: float, goal: float | None) -> str:
    """ "goal <= X: met" / "NOT met" (empty when the figure has no goal)."""
    if goal is None:
        return ""
    return f"  (goal <= {goal:g}: {'met' if value <= goal else 'NOT met'})"


def job(n: int, trace: bool = True) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment(trace=trace)
    events = [(KEYS[i % 100], i - (i * 7919) % 150, 1) for i in range(n)]
    return sum_job(env, events, 1000, 200, sink="out", arrival_interval=1)


def decode_all(columns: object) -> None:
    """Every column of a first read decoded (``Trace.columns()`` decodes each when first read)."""
    for name in FIELDS:
        getattr(columns, name)


def cpu(fn: Callable[[], object]) -> float:
    gc.collect()
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def best(fn: Callable[[], object], repeat: int) -> float:
    return min(cpu(fn) for _ in range(repeat))


def split(fn: Callable[[], object]) -> tuple[float, float, int]:
    """``fn``'s user and system CPU time and its minor page faults (each a new page of memory
    the kernel maps and zeroes: its system time)."""
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF)
    fn()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (
        after.ru_utime - before.ru_utime,
        after.ru_stime - before.ru_stime,
        after.ru_minflt - before.ru_minflt,
    )


def best_split(make: Callable[[], Callable[[], object]], repeat: int) -> tuple[float, float, int]:
    """``split`` of the fastest (user + system) of ``repeat`` runs, each of ``make()``."""
    return min((split(make()) for _ in range(repeat)), key=lambda s: s[0] + s[1])


def fresh(n: int) -> wv.Trace:
    return job(n).execute().trace


def bytes_per_record(n: int) -> tuple[float, int]:
    gc.collect()
    tracemalloc.start()
    base0 = tracemalloc.get_traced_memory()[0]
    off = job(n, trace=False).execute()
    untraced = tracemalloc.get_traced_memory()[0] - base0
    del off
    gc.collect()
    base1 = tracemalloc.get_traced_memory()[0]
    result = job(n).execute()
    result.trace.columns()
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] - base1
    tracemalloc.stop()
    records = len(result.trace)
    return (traced - untraced) / records, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--charts-max", type=int, default=100_000)
    parser.add_argument("--save-max", type=int, default=1_000_000)
    parser.add_argument("--memory-size", type=int, default=100_000)
    args = parser.parse_args()
    # a file of this run's own (two runs at once must not read each other's file)
    path = str(Path(tempfile.mkdtemp(prefix="winviz-trace-bench-")) / "trace.parquet")
    for n in (int(s) for s in args.sizes.split(",")):
        run = best(lambda n=n: job(n).execute(), args.repeat)
        records = len(fresh(n))
        figures: dict[str, float] = {}

        def timed(make: Callable[[wv.Trace], object], n: int = n) -> float:
            trace = fresh(n)
            return cpu(lambda: make(trace))

        def first_read(n: int = n) -> float:
            trace = fresh(n)
            return cpu(trace.columns)

        figures["columns"] = min(first_read() for _ in range(args.repeat))

        figures["columns, all decoded"] = min(
            timed(lambda t: decode_all(t.columns())) for _ in range(args.repeat)
        )

        figures["to_pandas"] = min(timed(lambda t: t.to_pandas()) for _ in range(args.repeat))
        # where their time goes: the run writes into memory earlier runs freed, the frame
        # needs new memory (the kernel's time: system time, a page fault per new page)
        splits = {
            "traced run": best_split(lambda n=n: lambda: job(n).execute(), args.repeat),
            "to_pandas": best_split(lambda n=n: fresh(n).to_pandas, args.repeat),
        }
        frame_bytes = int(fresh(n).to_pandas().memory_usage(deep=False).sum())
        if n <= args.save_max:

            def save_load(n: int = n) -> float:
                trace = fresh(n)
                decode_all(trace.columns())
                return cpu(lambda: wv.load_trace(trace.save(path)))

            figures["save+load"] = min(save_load() for _ in range(args.repeat))

            def save_load_decoded(n: int = n) -> float:
                trace = fresh(n)
                decode_all(trace.columns())
                return cpu(lambda: decode_all(wv.load_trace(trace.save(path)).columns()))

            figures["save+load, all decoded"] = min(save_load_decoded() for _ in range(args.repeat))
        if n <= args.charts_max:
            charts: dict[str, Callable[[wv.Trace], object]] = {
                # the timeline itself: view="auto" would draw this long run as the skew chart
                "timeline": lambda t: viz.timeline(t, view="timeline"),
                "scrubber": viz.scrubber,
                "timers_chart": viz.timers_chart,
                "window_lanes": viz.window_lanes,
                "propagation_chart": viz.propagation_chart,
                # what timeline(view="auto") draws for this run (no goal of its own)
                "skew_chart": viz.skew_chart,
            }
            for name, chart in charts.items():
                figures[name] = min(
                    timed(lambda t, chart=chart: chart(t).to_dict()) for _ in range(args.repeat)
                )

            def read_first(make: Callable[[wv.Trace], object], n: int = n) -> float:
                trace = fresh(n)
                decode_all(trace.columns())  # (every column decoded: the chart's part only)
                return cpu(lambda: make(trace))

            for name, chart in charts.items():  # the chart's own part (no goal of its own)
                figures[f"{name} w/o first read"] = min(
                    read_first(lambda t, chart=chart: chart(t).to_dict())
                    for _ in range(args.repeat)
                )
        print(f"{n:,} events, {records:,} trace records: traced run {run:.3f} s CPU")
        for name, seconds in figures.items():
            ratio = seconds / run
            print(
                f"  {name:<30} {seconds:8.3f} s  = {ratio:6.2f}x the traced run"
                + verdict(ratio, GOALS.get(name))
            )
        for name, (user, system, faults) in splits.items():
            print(
                f"  {name + ':':<30} user {user:.3f} s + system {system:.3f} s, "
                f"{faults:,} page faults"
            )
        print(f"  (the frame: {frame_bytes / 1e6:.0f} MB of arrays)")
    shutil.rmtree(Path(path).parent)
    per, records = bytes_per_record(args.memory_size)
    print(
        f"resident trace after the first read: {per:.0f} bytes/record ({records:,} records)"
        + verdict(per, BYTES_PER_RECORD_GOAL)
    )


if __name__ == "__main__":
    main()
