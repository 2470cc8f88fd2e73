"""The timeline's session-merge layer over Altair's 5,000-row limit: binned like the
elements (``window_marks._merges_binned``), every layer under the limit, the subtitle saying so."""

from __future__ import annotations

import pytest
from jobs import bounded, count_pipeline

import winviz as wv
from winviz import viz
from winviz.viz import trace_view, window_marks
from winviz.viz.palette import TimeAxis
from winviz.viz.timeline import TIMELINE_PARTS

KEYS = 2501  # two windows merged away per key: 5,002 "merged" marks, just over 5,000


@pytest.fixture(scope="module")
def merging() -> wv.JobExecutionResult:
    """Per key: sessions [0, 50) and [100, 150), then an element at 50 merging both into
    [0, 150) — the merges arrive one per ms at processing times 5002 .. 7502 (gap 50, bound
    1000: nothing fires before the end of input)."""
    events = [(f"k{i}", 0) for i in range(KEYS)] + [(f"k{i}", 100) for i in range(KEYS)]
    events += [(f"k{i}", 50) for i in range(KEYS)]
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env, events, wv.EventTimeSessionWindows.with_gap(50), bounded(1000), arrival_interval=1
    )
    return env.execute()


def test_merges_over_the_row_limit_are_counted_per_cell(merging: wv.JobExecutionResult) -> None:
    view = trace_view.open_trace(merging)
    view.read_parts(TIMELINE_PARTS)
    notes: list[str] = []
    x = TimeAxis("event time", "ms", 0, 119)  # 120 columns of 1 ms: starts 0 and 100
    y = TimeAxis("processing time", "ms", 0, 7999)  # 80 rows of 100 ms
    rows = window_marks._merges(view, "window", x, y, notes)["data"]["values"]
    # per start (0, then 100) and 100-ms row of processing times 5002 .. 7502: the merges in it
    expected = []
    for start in (0, 100):
        for lo in range(5000, 7600, 100):
            procs = [p for p in range(5002, 7503) if lo <= p < lo + 100]
            expected.append(
                {
                    "x": start,
                    "y": round(sum(procs) / len(procs)),
                    "what": "merged",
                    "kind": "merged (binned)",
                    "windows merged away": len(procs),
                    "start": f"{start} ms .. {start} ms",
                    "proc_time": f"{min(procs):,} ms .. {max(procs):,} ms",
                }
            )
    assert rows == expected
    assert [r["windows merged away"] for r in rows[:2]] == [98, 100]
    assert rows[25]["windows merged away"] == 3 and rows[25]["y"] == 7501
    assert notes == [
        '2,501 session merges ("merged": at the start of each window merged away, when it merged)',
        "5,002 merged marks (5,002 windows merged away) binned on a 120 × 80 grid: a mark is a "
        "cell's windows merged away, at their mean position, their count in its tooltip",
    ]


def test_timeline_of_many_merges_draws(merging: wv.JobExecutionResult) -> None:
    spec = viz.timeline(merging).to_dict()  # was Altair's MaxRowsError (5,002 rows)
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "5,002 merged marks (5,002 windows merged away) binned on a" in subtitle
    sizes = [len(d) for d in spec["datasets"].values()]
    assert max(sizes) <= 5000
