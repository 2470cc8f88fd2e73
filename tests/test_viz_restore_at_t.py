"""The run at processing time t after a restore (``restores.kept_at``): the explorer's line under
the scrubber (``state_at``) and the scrubber's window bands counted what the restore undid. On
lesson 05's restore job (a checkpoint after e at 12,100 ms, a failure after f at 12,500 ms: the
clock goes back to 12,100 ms and f is replayed) [0, 10000) fired at 12,200 ms (abcd) — rolled
back — and again at 16,300 ms (abcdf). At 14,000 ms the line said "1 window(s) fired · 7
element(s) arrived" (the rolled-back firing; f read twice) and the band of [0, 10000) was
"fired" from 12,200 ms: the run as it stands then has fired nothing and read 6 elements."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
import vl_convert as vlc
from jobs import bounded, count_pipeline, keyed_window

import winviz as wv
from winviz import viz
from winviz.trace.restores import kept, kept_at, kept_before, rolled_back
from winviz.viz.explore import AtTime, state_at
from winviz.viz.scrubber import STATES_TITLE

EVENTS = [("a", 1_000), ("b", 3_000), ("c", 2_000), ("d", 7_000),
          ("e", 12_000), ("f", 4_000), ("g", 16_000), ("h", 25_000)]  # fmt: skip
ARRIVALS = [1_200, 3_100, 3_500, 7_300, 12_100, 12_500, 16_200, 25_100]


def lesson_05_restore() -> wv.JobExecutionResult:
    """notebooks/05_late_data.ipynb's ``spine_job(TumblingEventTimeWindows.of(seconds(10)),
    checkpoint_after=[5], fail_at=6)``."""
    env = wv.StreamExecutionEnvironment()
    env.enable_checkpointing(at_records=[5])
    late = wv.OutputTag("late")
    bound = bounded(1_000)
    keyed_window(
        env, EVENTS, wv.seconds(10), bound, key=lambda e: "all", late=late, arrival_times=ARRIVALS
    ).process(
        lambda key, ctx, elements, out: out.collect(
            (ctx.window().start, ctx.window().end, "".join(e[0] for e in elements))
        )
    ).sink_to("windows")
    return env.execute(fail_at=6)


@pytest.fixture(scope="module")
def restored() -> wv.JobExecutionResult:
    return lesson_05_restore()


def test_the_job_is_lesson_05s(restored) -> None:
    trace = restored.trace
    assert rolled_back(trace) == [(39, 54)]  # checkpoint 1 (seq 39) .. the restore (seq 54)
    assert [(r.seq, r.proc_time) for r in trace.records("fired", operator="window")] == [
        (47, 12_200), (79, 16_300), (96, 25_100), (106, 25_100)
    ]  # fmt: skip


def test_kept_at_drops_what_the_restore_rolled_back(restored) -> None:
    spans = rolled_back(restored.trace)
    rows = np.array([1, 39, 40, 47, 53, 54, 58, 79], dtype=np.int64)
    procs = np.array([1_200, 12_100, 12_100, 12_200, 12_500, 12_100, 12_500, 16_300])
    assert kept(rows, spans).tolist() == [1, 39, 54, 58, 79]
    assert kept_at(rows, procs, 12_099, spans).tolist() == [1]
    assert kept_at(rows, procs, 12_200, spans).tolist() == [1, 39, 54]
    assert kept_at(rows, procs, 14_000, spans).tolist() == [1, 39, 54, 58]
    assert kept_at(rows, procs, 16_300, spans).tolist() == [1, 39, 54, 58, 79]
    # (before the restore, the firing at seq 47 still stands; after it, not)
    assert [kept_before(rows, seq, spans) for seq in (48, 54, 55)] == [4, 5, 3]


def test_the_line_at_t_is_the_run_as_it_stands(restored) -> None:
    assert state_at(restored, 14_000) == AtTime(
        t=14_000,
        operator="window",
        watermark=2_999,
        fired=0,
        elements=6,
        restarted="restarted from checkpoint 1 at 12,100 ms",
    )
    assert state_at(restored, 14_000).text() == (
        "at t = 14,000 ms: watermark 2,999 ms · 0 window(s) fired · 6 element(s) arrived · "
        "restarted from checkpoint 1 at 12,100 ms"
    )
    assert state_at(restored, 12_099).text() == (
        "at t = 12,099 ms: watermark 5,999 ms · 0 window(s) fired · 4 element(s) arrived"
    )
    assert state_at(restored, 12_200).text() == (
        "at t = 12,200 ms: watermark MIN (Long.MIN_VALUE) · 0 window(s) fired · 5 element(s) "
        "arrived · restarted from checkpoint 1 at 12,100 ms"
    )
    at = [state_at(restored, t) for t in (12_500, 16_300, 25_100)]
    assert [(a.watermark, a.fired, a.elements) for a in at] == [
        (wv.MIN, 0, 6), (14_999, 1, 7), (wv.MAX, 3, 8)
    ]  # fmt: skip


def test_a_restart_from_the_beginning_is_said() -> None:
    """No checkpoint: the failure at the fifth record (40 ms) restarts from the start at 0 ms;
    at 25 ms the replay has read a@10, a@20, a@30 again and fired [0, 1000) for each."""
    env = wv.StreamExecutionEnvironment()
    events = [("a", t) for t in (10, 20, 30, 40, 50)]
    run = count_pipeline(
        env, events, 1000, trigger=wv.CountTrigger.of(1), arrival_times=[0, 10, 20, 30, 40]
    ).execute(fail_at=4)
    assert state_at(run, 25).text() == (
        "at t = 25 ms: watermark none yet · 1 window(s) fired · 3 element(s) arrived · "
        "restarted from the beginning at 0 ms"
    )


def window_band_layer(spec: dict[str, Any]) -> dict[str, Any]:
    return next(
        lay
        for lay in spec["layer"]
        if lay["encoding"].get("color", {}).get("title") == STATES_TITLE
    )


def test_a_band_is_fired_from_its_kept_firing(restored) -> None:
    spec = viz.scrubber(restored).to_dict()
    lay = window_band_layer(spec)
    assert [
        (w["window"], w["opened_at"], w["fired_at"], w["closed_at"])
        for w in spec["datasets"][lay["data"]["name"]]
    ] == [
        ("[0 ms, 10,000 ms)", 1200, 16300, 16300),
        ("[10,000 ms, 20,000 ms)", 12100, 25100, 25100),
        ("[20,000 ms, 30,000 ms)", 25100, 25100, 25100),
    ]
    # what Vega draws: each band's state at t (its rectangle's aria label)
    states = {}
    for t in (14_000, 16_299, 16_300):
        shown = json.loads(json.dumps(spec))
        (param,) = [p for p in shown["params"] if p["name"] == "t"]
        param["value"] = t
        svg = vlc.vegalite_to_svg(shown)
        states[t] = re.findall(r"window: (\[[^)]*\)); state at t: ([a-z ]+);", svg)
    assert states == {
        14_000: [("[0 ms, 10,000 ms)", "open"), ("[10,000 ms, 20,000 ms)", "open")],
        16_299: [("[0 ms, 10,000 ms)", "open"), ("[10,000 ms, 20,000 ms)", "open")],
        16_300: [("[0 ms, 10,000 ms)", "gone"), ("[10,000 ms, 20,000 ms)", "open")],
    }
