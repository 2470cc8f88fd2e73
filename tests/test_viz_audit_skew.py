"""Chart audit (skew chart, coincident times): the subtitle says an element on or above the
watermark-lag line is late. a@10 arrives at 0 ms and meets the watermark MIN (on time); the
punctuated watermark 5000 it makes is emitted at the same 0 ms, after it, and the line starts
there at 0 − 5000: a@10 (skew −10) is drawn above it, coloured on time, and nothing said why.
The subtitle now counts such elements and says their colour is the watermark they met."""

from __future__ import annotations

from typing import Any

from jobs import step_at_arrival_job

import winviz as wv
from winviz import viz


def rows_of(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for rows in spec["datasets"].values() for r in rows if r.get("kind") == kind]


def test_an_element_before_a_step_at_its_own_processing_time_is_explained() -> None:
    result = step_at_arrival_job()
    records = [
        (r.kind, r.proc_time, r.watermark)
        for r in result.trace.records()
        if r.operator == "window" and r.kind in ("element", "watermark")
    ]
    assert records == [
        ("element", 0, wv.MIN),
        ("watermark", 0, 5000),
        ("element", 10, 5000),
        ("watermark", 10, wv.MAX),
    ]
    spec = viz.skew_chart(result.trace).to_dict()
    assert [(e["x"], e["y"], e["fate"]) for e in rows_of(spec, "element")] == [
        (0, -10, "on time"),
        (10, -10, "dropped"),
    ]
    assert next((v["x"], v["y"]) for v in rows_of(spec, "watermark lag")) == (0, -5000)
    assert spec["usermeta"]["winviz"]["notes"][2] == (
        "1 element(s) arrived at the processing time of a watermark step, before it: the line "
        "there is the new watermark's lag, their colour the watermark they met"
    )
