"""Fingerprints of chart specs, to check that a speed-up keeps every byte:
``PYTHONPATH=.:tests python bench/explore_specs.py > before.txt`` on two checkouts, then
``diff``. Each line: a job, a chart kind and the SHA-256 of
``json.dumps(chart.to_dict(), sort_keys=True)`` — every chart kind of
tests/chart_jobs.py's ``CHARTS`` (plus the skew chart) over its ``JOBS`` and over the
explorer bench's job (bench/explore_bench.py) at 2,000 and 20,000 events and several bounds
and lesson 01's clickstream job — and of the specs an explorer sets on its widgets
(``Explorer.specs()``, the ``spec.chart_dict`` path) after slider changes, for the bench's
job."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import altair as alt  # noqa: E402
import explore_bench  # noqa: E402
from chart_jobs import CHARTS, JOBS  # noqa: E402

import winviz as wv  # noqa: E402
from winviz import datasets, viz  # noqa: E402
from winviz.viz.explore import explore  # noqa: E402
from winviz.viz.explorer_chart import ExplorerChart  # noqa: E402

KINDS = {**CHARTS, "timeline_auto": viz.timeline, "skew_chart": viz.skew_chart}


def clickstream_run(bound: int) -> wv.JobExecutionResult:
    """Lesson 01's clickstream job (dataclass records: ``datasets.Click``), as its explorer
    runs it."""
    clicks = datasets.clickstream()
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200)
    (
        env.from_collection(clicks, arrival_times=[c.arrival_time for c in clicks])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(
                lambda c, _: c.event_time
            )
        )
        .key_by(lambda c: c.page)
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(10)))
        .side_output_late_data(wv.OutputTag("late"))
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    return env.execute()


def digest(spec: dict) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:20]


def main() -> None:
    runs = {name: job() for name, job in JOBS.items()}
    for n, bounds in ((2_000, (100, 1000, 2500)), (20_000, (300, 1000))):
        events = explore_bench.make_events(n)
        for bound in bounds:
            runs[f"bench{n}_b{bound}"] = explore_bench.pipeline(events, bound=bound)
    for bound in (0, 1000, 30_000):
        runs[f"clickstream_b{bound}"] = clickstream_run(bound)
    for name, result in runs.items():
        for kind, chart in KINDS.items():
            try:
                spec = chart(result.trace).to_dict()
            except Exception as exc:  # a chart that cannot draw this job: the error's text
                print(f"{name:<22} {kind:<18} raised {type(exc).__name__}: {exc}")
                continue
            print(f"{name:<22} {kind:<18} {digest(spec)}")
    alt.JupyterChart.enable_offline = classmethod(lambda cls, **_: None)  # no widget bundle
    ExplorerChart.bundle = classmethod(lambda cls: None)  # (the explorer's own widget's)
    charts = ("timeline", "scrubber", "window_lanes", "timers_chart", "skew_chart")
    ex = explore(
        explore_bench.pipeline,
        explore_bench.make_events(2_000),
        bound=(0, 3000, 100),
        size=[2000, 5000, 10000],
        charts=charts,
    )
    for bound, size in ((1000, 5000), (300, 5000), (2500, 5000), (2500, 2000), (100, 10000)):
        ex.set(bound=bound, size=size)
        for kind, spec in zip(charts, ex.specs(), strict=True):
            print(f"explorer b{bound} s{size:<6} {kind:<18} {digest(spec)}")


if __name__ == "__main__":
    main()
