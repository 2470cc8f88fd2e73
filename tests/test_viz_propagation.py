"""winviz.viz.propagation_chart: layers, encodings and the exact data each mark gets for the
jobs of tests/test_parallel_inputs.py (a partitioned source with and without idleness, a union
whose inputs both go idle), the fallback for a job without several inputs, subtasks, message
cards, the row limit, and an SVG render (vl-convert, no browser)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import vl_convert as vlc
from jobs import aligned_job, count_pipeline, kafka_readers, restored_after_idle, union_all_idle

import winviz as wv
from winviz import viz
from winviz.viz import palette, scale
from winviz.viz.export import spec_json
from winviz.viz.idle import IdleSpan, spans_of, strip_layer
from winviz.viz.propagation import CHANNEL_COLORS, propagation_chart
from winviz.viz.watermark_steps import Restart

P0 = [("p0", 100), ("p0", 600), ("p0", 1200), ("p0", 1800), ("p0", 2500)]
A0 = [0, 500, 1000, 1500, 2000]
P1 = [("p1", 200), ("p1", 700)]
A1 = [100, 400]
OP = "watermark of 'watermarks'"


def strategy(idle: int | None = None) -> wv.WatermarkStrategy:
    s = wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
        lambda e, _: e[1]
    )
    return s if idle is None else s.with_idleness(idle)


def partitioned(idle: int | None = None) -> wv.JobExecutionResult:
    """Partition 1 goes quiet after 400 ms (see test_parallel_inputs.py): without idleness the
    source's watermark stays at partition 1's 699; with idleness 500 partition 1 is idle at
    1400 ms and the watermark follows partition 0."""
    return kafka_count([P0, P1], [A0, A1], idle)


def kafka_count(
    partitions: list[list[Any]], arrivals: list[list[int]], idle: int | None
) -> wv.JobExecutionResult:
    """The partitions read as "kafka" (bound 0, idleness ``idle``), counted in 1 s windows."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        partitions,
        1000,
        strategy(idle),
        partitioned=True,
        key=lambda e: 0,
        arrival_times=arrivals,
        name="kafka",
    )
    return env.execute()


@pytest.fixture(scope="module")
def fixed() -> wv.JobExecutionResult:
    return partitioned(idle=500)


def data(spec: dict[str, Any], lay: dict[str, Any]) -> list[dict[str, Any]]:
    return spec["datasets"][lay["data"]["name"]]


def steps(spec: dict[str, Any], lay: dict[str, Any]) -> dict[str, list[tuple[int, int]]]:
    """Each line's vertices (x, y) in drawing order."""
    out: dict[str, list[tuple[int, int]]] = {}
    for v in sorted(data(spec, lay), key=lambda v: (v["line"], v["i"])):
        out.setdefault(v["line"], []).append((v["x"], v["y"]))
    return out


def channel_steps(spec: dict[str, Any]) -> dict[str, list[tuple[int, int]]]:
    """Each channel line's vertices in drawing order, its runs joined (issue 26: cut where
    lines lie on each other, ``coinciding.runs``), a vertex repeated in a row once."""
    rows = [
        r
        for lay in spec["layer"]
        if lay["mark"]["type"] == "line" and lay["mark"]["strokeWidth"] == 1.8
        for r in data(spec, lay)
    ]
    out: dict[str, list[tuple[int, int]]] = {}
    run = lambda r: [int(n) for n in str(r.get("run", r.get("attempt"))).split(".")]  # noqa: E731
    for r in sorted(rows, key=lambda r: (r["line"], run(r), r["i"])):
        line = out.setdefault(r["line"], [])
        if not line or line[-1] != (r["x"], r["y"]):
            line.append((r["x"], r["y"]))
    return out


STEP_UP = (
    "lines that lie on each other are drawn in alternating dashes of their colours, one dash "
    "each (steps up at one time: kafka[0], kafka[1])"
)
"""At 600 ms partition 0 steps up from 99 to 599 and partition 1 from 199 to 699: the lines
lie on each other from 199 to 599."""


def test_layers_and_encodings(fixed) -> None:
    spec = propagation_chart(fixed).to_dict()
    meta = spec["usermeta"]["winviz"]
    assert meta["status"] == "ok" and meta["chart"] == "propagation_chart"
    assert meta["notes"] == [
        "the operator's watermark (thick black) is the minimum over its active input channels "
        "(coloured); shaded: idle",
        "operator 'watermarks': 2 input channel(s), 1 channel idle period(s)",
        f"operator 'watermarks': {STEP_UP}",
    ]
    idle, op_line, ch_lines, first, second, points = spec["layer"]
    assert [lay["mark"]["type"] for lay in spec["layer"]] == ["rect"] + ["line"] * 4 + ["point"]
    # where they lie on each other, partitions 0 and 1 take turns, a 5 px dash each
    assert steps(spec, first) == {"kafka[0]": [(600, 199), (600, 599)]}
    assert steps(spec, second) == {"kafka[1]": [(600, 199), (600, 599)]}
    assert [
        (lay["mark"]["strokeDash"], lay["mark"]["strokeDashOffset"]) for lay in (first, second)
    ] == [([5, 5], 0), ([5, 5], 5)]
    assert idle["mark"]["opacity"] == 0.15
    assert "y" not in idle["encoding"]  # full height
    assert op_line["mark"]["strokeWidth"] == 3.5 and ch_lines["mark"]["strokeWidth"] == 1.8
    color = op_line["encoding"]["color"]
    assert color["field"] == "line"
    assert color["scale"] == {
        "domain": [OP, "kafka[0]", "kafka[1]"],
        "range": ["#000000", CHANNEL_COLORS[0], CHANNEL_COLORS[1]],
    }
    # no meaning on colour alone: every channel has its own dash
    assert op_line["encoding"]["strokeDash"]["scale"]["range"] == [[1, 0], [6, 3], [2, 2]]
    assert idle["encoding"]["color"] == color  # the shade is the channel's colour
    # the axes span the trace's watermark records, 3 % padding each side (palette.time_axis);
    # the end-of-input MAX is drawn on the top edge
    records = fixed.trace.records("watermark", operator="watermarks")
    procs = [r.proc_time for r in records]
    finite = [r.watermark for r in records if r.watermark != wv.MAX]
    x_pad = round(0.03 * (max(procs) - min(procs)))
    y_pad = round(0.03 * (max(finite) - min(finite)))
    assert op_line["encoding"]["x"]["scale"] == {
        "domain": [min(procs) - x_pad, max(procs) + x_pad],
        "nice": False,
        "zero": False,
    }
    assert op_line["encoding"]["x"]["axis"]["title"] == "processing time (ms)"
    assert op_line["encoding"]["y"]["axis"]["title"] == "watermark (event time) (ms)"
    y_domain = op_line["encoding"]["y"]["scale"]["domain"]
    assert y_domain == [min(finite) - y_pad, max(finite) + y_pad]
    assert max(p["y"] for p in data(spec, points)) == y_domain[1]  # MAX, on the top edge
    assert op_line["encoding"]["order"] == {"field": "i", "type": "quantitative"}
    assert [t["field"] for t in points["encoding"]["tooltip"]] == [
        "line",
        "seq",
        "proc_time",
        "watermark",
        "note",
        "also",
    ]


def test_lines_idle_and_points_data(fixed) -> None:
    spec = propagation_chart(fixed).to_dict()
    idle, op_line, *_, points = spec["layer"]
    # partition 1 is idle from 1400 ms to the end of the trace (2000 ms)
    assert data(spec, idle) == [
        {
            "line": "kafka[1]",
            "kind": "idle",
            "idle": "kafka[1]",
            "x": 1400,
            "x2": 2000,
            "idle from": "1,400 ms",
            "idle until": "end of trace",
        }
    ]
    tips = ["kind", "idle", "idle from", "idle until"]  # (as the timeline's strips)
    assert idle["encoding"]["tooltip"] == [{"field": f, "type": "nominal"} for f in tips]
    assert channel_steps(spec) == {
        "kafka[0]": [
            (200, 99), (600, 99), (600, 199), (600, 599), (1200, 599), (1200, 1199),
            (1600, 1199), (1600, 1799), (2000, 1799), (2000, 2499),
        ],
        # its last watermark held flat to the end of the trace
        "kafka[1]": [(200, 199), (600, 199), (600, 599), (600, 699), (2000, 699)],
    }  # fmt: skip
    # the minimum: 699 (partition 1's) until partition 1 is idle at 1400, then partition 0's;
    # MAX at the end of input is drawn on the top edge (2571)
    assert steps(spec, op_line) == {
        OP: [
            (200, 99), (600, 99), (600, 599), (1200, 599), (1200, 699), (1400, 699),
            (1400, 1199), (1600, 1199), (1600, 1799), (2000, 1799), (2000, 2499),
            (2000, 2499), (2000, 2571), (2000, 2571),
        ]
    }  # fmt: skip
    pts = [(p["line"], p["x"], p["y"], p["watermark"], p["note"]) for p in data(spec, points)]
    assert pts[-1] == (
        OP,
        2000,
        2571,
        "MAX (Long.MAX_VALUE)",
        "end of input (MAX), drawn on the top edge",
    )
    assert [p[1:4] for p in pts if p[0] == "kafka[1]"] == [
        (200, 199, "199 ms"),
        (600, 699, "699 ms"),
    ]
    # where partition 0 holds the minimum its dot would lie exactly under the operator's: one
    # dot, the operator's, whose tooltip names partition 0's record too (5 + 2 + 7 records)
    assert [(p["x"], p["line"], p["also"]) for p in data(spec, points) if p["also"]] == [
        (200, OP, "kafka[0] (seq 13)"),
        (600, OP, "kafka[0] (seq 29)"),
        (1600, OP, "kafka[0] (seq 58)"),
        (2000, OP, "kafka[0] (seq 68)"),
    ]
    assert len(pts) == 5 + 2 + 7 - 4


def test_the_stall_without_idleness() -> None:
    spec = propagation_chart(partitioned()).to_dict()
    assert [lay["mark"]["type"] for lay in spec["layer"]] == ["line"] * 4 + ["point"]
    # the source's watermark stays at partition 1's 699 until the end of input
    assert steps(spec, spec["layer"][0])[OP][4:] == [
        (1200, 699), (2000, 699), (2000, 2571), (2000, 2571)
    ]  # fmt: skip
    assert channel_steps(spec)["kafka[1]"][-1] == (2000, 699)
    assert spec["usermeta"]["winviz"]["notes"][1:] == [
        "operator 'watermarks': 2 input channel(s), 0 channel idle period(s)",
        f"operator 'watermarks': {STEP_UP}",
    ]


def test_union_channels_and_operator_idle() -> None:
    spec = propagation_chart(union_all_idle()).to_dict()
    marks = [lay["mark"]["type"] for lay in spec["layer"]]
    assert marks == ["rect", "rect", "text", "line", "line", "line", "line", "point"]
    chan, strip, label = spec["layer"][:3]
    assert [(d["line"], d["x"], d["x2"], d["idle until"]) for d in data(spec, chan)] == [
        ("watermarks", 800, 3000, "3,000 ms"),
        ("watermarks_2", 1000, 3000, "3,000 ms"),
    ]
    # the operator's own idle span: a grey strip along the top
    assert [(d["line"], d["x"], d["x2"]) for d in data(spec, strip)] == [
        ("watermark of 'm'", 1000, 3000)
    ]
    assert strip["encoding"]["y"] == {"value": 0} and strip["encoding"]["y2"] == {"value": 8}
    assert label["encoding"]["text"] == {"value": "operator idle"}
    lines = steps(spec, spec["layer"][3])
    assert lines["watermark of 'm'"][:4] == [(200, 999), (800, 999), (800, 4999), (3000, 4999)]
    assert (
        spec["usermeta"]["winviz"]["notes"][1]
        == "operator 'm': 2 input channel(s), 2 channel idle period(s), idle itself 1 time(s)"
    )


def test_idle_spans_pairs_idle_with_next_active() -> None:
    records = zip(
        range(6),
        ["idle", "idle", "channel_idle", "active", "channel_active", "idle"],
        [10, 20, 30, 40, 50, 60],
        ["a", "b", "a", "a", "b", "b"],
        strict=True,
    )
    assert spans_of(records) == [
        IdleSpan("a", 10, 40),
        IdleSpan("b", 20, 50),
        IdleSpan("b", 60, None),
    ]


def test_a_restart_ends_every_open_idle_span() -> None:
    """Statuses are not checkpointed: a restart (seq 2, the job failed at 35, clock back to 25)
    ends the spans open then where the job failed; a restart from a snapshot (failed_at None,
    seq 6) at its own time; one after the last record too (seq 9)."""
    records = [(0, "idle", 10, "a"), (1, "channel_idle", 20, "b"), (3, "idle", 30, "b")]
    records += [(4, "active", 40, "b"), (5, "idle", 50, "a"), (7, "channel_idle", 5, "b")]
    restarts = [Restart(2, 25, 35, 1), Restart(6, 0, None, None), Restart(9, 7, 8, None)]
    assert spans_of(records, restarts) == [
        IdleSpan("a", 10, 35),
        IdleSpan("b", 20, 35),
        IdleSpan("b", 30, 40),
        IdleSpan("a", 50, 0),
        IdleSpan("b", 5, 8),
    ]


def test_strip_rows_one_rule_for_both_charts_strips() -> None:
    """A span's ends on its axis and its times as words: an open span runs to ``open_end``
    (propagation: the trace's end) or else to the axis' end (the timeline's strips)."""
    axis = palette.time_axis("t", [0, 1000])  # domain -30 .. 1030
    closed, still = IdleSpan("a", 100, 400), IdleSpan("a", 2000, None)

    def row(span: IdleSpan, *fields: str, **how: Any) -> dict[str, Any]:
        (got,) = strip_layer([span], axis, axis, **how)["data"]["values"]
        return {f: got[f] for f in fields}

    assert row(closed, "y", "y2", "idle from", "idle until") == {
        "y": 100,
        "y2": 400,
        "idle from": "100 ms",
        "idle until": "400 ms",
    }
    along_x = {"kind": "paused", "time_on_x": True, "places": [{}], "open_end": 900}
    assert row(still, "x", "x2", "paused from", "paused until", **along_x) == {
        "x": 1030,
        "x2": 900,
        "paused from": "2,000 ms",
        "paused until": "end of trace",
    }
    assert row(still, "y2") == {"y2": 1030}


def test_paused_strip_along_the_bottom() -> None:
    """Watermark alignment paused "fast" from 1,000 to 3,000 ms: a strip in its line's colour
    along the panel's bottom (7 px), its times and watermarks as the timeline's strips say
    them (the watermarks once written as raw ints, "8999")."""
    spec = propagation_chart(aligned_job().trace).to_dict()
    strip = spec["layer"][0]
    assert strip["mark"] == {"type": "rect", "opacity": 0.75}
    assert data(spec, strip) == [
        {
            "y": 253,
            "y2": 260,
            "line": "watermarks",
            "kind": "paused",
            "paused": "fast",
            "x": 1000,
            "x2": 3000,
            "paused from": "1,000 ms",
            "paused until": "3,000 ms",
            "its watermark": "8,999 ms",
            "max allowed": "1,899 ms",
            "group": "g",
        }
    ]
    timeline = viz.timeline(aligned_job().trace, view="timeline").to_dict()
    (row,) = [r for rows in timeline["datasets"].values() for r in rows if r.get("paused")]
    assert {k: row[k] for k in ("its watermark", "max allowed")} == {
        "its watermark": "8,999 ms",
        "max allowed": "1,899 ms",
    }
    tips = [
        "kind",
        "paused",
        "paused from",
        "paused until",
        "its watermark",
        "max allowed",
        "group",
    ]
    assert strip["encoding"]["tooltip"] == [{"field": f, "type": "nominal"} for f in tips]


def test_restart_words_one_wording_for_both_charts() -> None:
    """Every chart says "restarted from" (the propagation chart once said "restart from ...:
    watermarks at MIN"); a run from a snapshot (no failure) "started from" it."""
    axis = palette.time_axis("processing time", [0, 1000])
    assert Restart(5, 500, 700, 1).words() == "restarted from checkpoint 1"
    assert Restart(5, 500, 700, None).text(axis) == (
        "restarted from the beginning at 500 ms: watermarks back to MIN"
    )
    assert Restart(0, 500, None, 2).words() == "started from checkpoint 2"


def test_frame_input_and_determinism(fixed) -> None:
    from_trace = spec_json(propagation_chart(fixed.trace))
    assert spec_json(propagation_chart(fixed.trace.to_pandas())) == from_trace
    assert spec_json(propagation_chart(partitioned(idle=500))) == from_trace


def test_parallel_subtasks_get_a_panel_each() -> None:
    """Parallelism 2: each source subtask reads one partition; each window subtask has one
    channel per source subtask and takes its own minimum (subtask i is ``op#i``)."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions([P0, P1], arrival_times=[A0, A1], name="kafka")
        .assign_timestamps_and_watermarks(strategy(500))
        .set_parallelism(2)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .set_parallelism(2)
        .sink_to("out")
    )
    result = env.execute()
    spec = propagation_chart(result, operator="window").to_dict()
    assert [p["title"]["text"] for p in spec["vconcat"]] == [
        "subtask 0 of 'window': 2 input channel(s), 1 channel idle period(s)",
        "subtask 1 of 'window': 2 input channel(s), 1 channel idle period(s)",
    ]
    panel = spec["vconcat"][0]
    idle, op_line, *_ = panel["layer"]
    assert [(d["line"], d["x"], d["x2"]) for d in data(spec, idle)] == [
        ("watermarks#1", 1400, 2000)
    ]
    assert channel_steps({**spec, "layer": panel["layer"]})["watermarks#1"][:5] == [
        (200, 199),
        (600, 199),
        (600, 599),  # (from 199 on watermarks#0's step up too: alternating dashes)
        (600, 699),
        (2000, 699),
    ]
    # the subtask's minimum: 699 until source subtask 1 is idle at 1400
    assert steps(spec, op_line)["watermark of 'window#0'"][6:9] == [
        (1200, 699),
        (1400, 699),
        (1400, 1199),
    ]
    # every panel has its own colours and legend: subtask 1's minimum is drawn black too
    assert spec["resolve"] == {"scale": {"color": "independent", "strokeDash": "independent"}}
    default = propagation_chart(result).to_dict()
    assert [p["title"]["text"].split(":")[0] for p in default["vconcat"]] == [
        "subtask 0 of 'watermarks'",
        "subtask 1 of 'watermarks'",
        "subtask 0 of 'window'",
        "subtask 1 of 'window'",
        "operator 'out'",
    ]


def test_chain_fallback_without_several_inputs() -> None:
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, [("a", 1000), ("a", 3000)], 1000, strategy(), arrival_times=[0, 500])
    spec = propagation_chart(env.execute()).to_dict()
    assert spec["usermeta"]["winviz"]["notes"][:2] == [
        "no operator with several inputs: one line per operator's watermark; shaded: idle",
        "2 operator(s), 0 idle period(s)",
    ]
    # one input: the window takes the watermark directly — both lines have the same
    # vertices, so each is drawn in alternating dashes of the two colours (issue 26: the
    # window's line lay exactly on the watermark operator's, which could not be seen)
    first, second, _ = spec["layer"]
    assert [first["mark"], second["mark"]] == [
        {
            "type": "line",
            "interpolate": "linear",
            "strokeWidth": 1.8,
            "strokeDash": [5, 5],
            "strokeDashOffset": offset,
        }
        for offset in (0, 5)  # their dashes take turns
    ]
    assert "strokeDash" not in first["encoding"]
    assert first["encoding"]["detail"] == {"field": "run", "type": "nominal"}
    vertices = [(200, 999), (500, 999), (500, 2999), (500, 3059)]  # 3059: MAX on the top edge
    assert steps(spec, first) == {"watermarks": vertices}
    assert steps(spec, second) == {"window": vertices}
    assert {v["run"] for v in data(spec, first) + data(spec, second)} == {"0.0"}
    assert spec["usermeta"]["winviz"]["notes"][3] == (
        "lines that lie on each other are drawn in alternating dashes of their colours, one "
        "dash each (watermarks and window: the same for 300 ms of processing time)"
    )


def test_operator_choice_and_several_panels() -> None:
    result = union_all_idle()
    spec = propagation_chart(result, operator=["m", "watermarks"]).to_dict()
    assert len(spec["vconcat"]) == 2
    assert [p["title"]["text"] for p in spec["vconcat"]] == [
        "operator 'm': 2 input channel(s), 2 channel idle period(s), idle itself 1 time(s)",
        "operator 'watermarks': 0 input channel(s), 0 channel idle period(s), "
        "idle itself 1 time(s)",
    ]
    card = propagation_chart(result, operator="nope").to_dict()["usermeta"]["winviz"]
    assert card["status"] == "message"
    assert card["message"] == "No operator named 'nope' wrote watermark records."


def test_message_cards() -> None:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).sink_to("s")
    card = propagation_chart(env.execute()).to_dict()["usermeta"]["winviz"]
    assert (card["status"], card["message"]) == (
        "message",
        "No watermark in this trace (at most the end-of-input MAX).",
    )
    assert propagation_chart(wv.Trace()).to_dict()["usermeta"]["winviz"]["message"] == (
        "The trace is empty."
    )
    assert propagation_chart(None).to_dict()["usermeta"]["winviz"]["status"] == "message"
    frame = partitioned().trace.to_pandas()
    frame.attrs["schema_version"] = 99
    assert propagation_chart(frame).to_dict()["usermeta"]["winviz"]["status"] == "message"
    with pytest.raises(ValueError, match="max_points"):
        propagation_chart(wv.Trace(), max_points=0)


def test_large_trace_respects_row_limit() -> None:
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=1)
    n = 4000
    parts = [[("p", 2 * i + p) for i in range(n)] for p in (0, 1)]
    times = [[2 * i + p for i in range(n)] for p in (0, 1)]
    count_pipeline(
        env,
        parts,
        1000,
        strategy(),
        partitioned=True,
        key=lambda e: 0,
        sink="o",
        arrival_times=times,
        name="k",
    )
    spec = propagation_chart(env.execute()).to_dict()
    assert all(len(rows) <= scale.ROW_LIMIT for rows in spec["datasets"].values())
    notes = spec["usermeta"]["winviz"]["notes"]
    assert any(f"watermark records drawn ({scale.KEPT})" in n for n in notes)


def test_svg_render_shows_idle_span_and_minimum(fixed) -> None:
    svg = vlc.vegalite_to_svg(spec_json(propagation_chart(fixed)))
    labels = re.findall(r'aria-label="([^"]*)"', svg)
    idle = [s for s in labels if "idle: kafka[1]" in s]
    assert idle == [
        "x: 1,400; x2: 2000; watermark line: kafka[1]; kind: idle; idle: kafka[1]; "
        "idle from: 1,400 ms; idle until: end of trace"
    ]
    # the shade spans the full panel height (260 px) from 1,400 to 2,000 ms
    rect = re.search(r'aria-label="x: 1,400; x2: 2000[^"]*"[^>]*d="M([\d.]+),0h([\d.]+)v260', svg)
    assert rect is not None
    lo, hi = propagation_chart(fixed).to_dict()["layer"][1]["encoding"]["x"]["scale"]["domain"]
    assert round(float(rect.group(2)), 2) == round(600 / (hi - lo) * 640, 2)
    # the operator's watermark point at 1,400 ms: partition 0's 1,199 once partition 1 is idle
    # (its tooltip names the trace record it draws)
    (seq,) = [
        r.seq
        for r in fixed.trace.records("watermark", operator="watermarks")
        if r.proc_time == 1_400
    ]
    assert [s for s in labels if f"line: {OP}; seq: {seq};" in s] == [
        f"x: 1,400; y: 1,199; watermark line: {OP}; line: {OP}; seq: {seq}; "
        "processing time: 1,400 ms; watermark: 1,199 ms; note: ; also here: "
    ]
    # partition 0's five records: one dot where it is above the minimum, four in the
    # operator's dots' "also here"
    assert len([s for s in labels if "; line: kafka[0]; seq: " in s]) == 1
    assert len([s for s in labels if "also here: kafka[0] (seq " in s]) == 4


# -- a channel held at MIN: a partition without elements, a reader without partitions ---------

MIN_NOTE = (
    "before its first watermark record a channel or operator is at MIN (Long.MIN_VALUE), drawn "
    "on the bottom edge"
)


def empty_partition(idle: int | None = None) -> wv.JobExecutionResult:
    """Partition 1 of "kafka" gets no elements: without idleness its watermark stays at
    Long.MIN_VALUE and holds the source's watermark there until the end of input (it writes no
    record at all); with idleness 500 it is marked idle at 800 ms."""
    return kafka_count([P0, []], [A0, []], idle)


def test_a_partition_without_elements_is_drawn_held_at_min() -> None:
    result = empty_partition()
    assert result.trace.records("channel_watermark", "channel_idle", operator="watermarks")[
        0
    ].detail == (0, "kafka[0]")  # no record names partition 1
    spec = propagation_chart(result).to_dict()
    assert spec["usermeta"]["winviz"]["notes"] == [
        "the operator's watermark (thick black) is the minimum over its active input channels "
        "(coloured); shaded: idle",
        "operator 'watermarks': 2 input channel(s), 0 channel idle period(s)",
        "operator 'watermarks': kafka[1] wrote no record (no element, never idle), so it is at "
        "MIN throughout; from 200 ms on every other channel is above the operator's watermark: "
        "it holds it back",
        MIN_NOTE,
    ]
    op_line, ch_lines, points = spec["layer"]
    assert op_line["encoding"]["color"]["scale"]["domain"] == [OP, "kafka[0]", "kafka[1]"]
    # y: 99 .. 2499 padded by 72 — MIN on the bottom edge (27), MAX on the top edge (2571)
    assert op_line["encoding"]["y"]["scale"]["domain"] == [27, 2571]
    assert steps(spec, ch_lines) == {
        "kafka[1]": [(200, 27), (2000, 27)],
        "kafka[0]": [
            (200, 99), (600, 99), (600, 599), (1200, 599), (1200, 1199),
            (1600, 1199), (1600, 1799), (2000, 1799), (2000, 2499), (2000, 2499),
        ],
    }  # fmt: skip
    # the source's watermark: MIN (held by partition 1) until the end of input's MAX
    assert steps(spec, op_line) == {OP: [(200, 27), (2000, 27), (2000, 2571), (2000, 2571)]}
    held = [p for p in data(spec, points) if p["seq"] is None]
    # both at MIN at 200 ms: one dot, the operator's, naming partition 1 too
    assert held == [
        {
            "x": 200, "y": 27, "line": OP, "seq": None, "proc_time": "200 ms",
            "watermark": "MIN (Long.MIN_VALUE)",
            "note": "no watermark yet: MIN, drawn on the bottom edge",
            "also": "kafka[1] (no record of this input in the trace: MIN throughout, drawn on "
            "the bottom edge)",
        },
    ]  # fmt: skip
    # the same input as why_not_fired names, before the end of input
    stuck = wv.why_not_fired(result.trace.until(1500), 0, (0, 1000))
    assert "The minimum is held by kafka[1] (channel 1 of 'watermarks') at MIN" in stuck.sentence


def test_an_idle_partition_without_elements_is_at_min_and_shaded() -> None:
    spec = propagation_chart(empty_partition(idle=500)).to_dict()
    assert spec["usermeta"]["winviz"]["notes"][1:] == [
        "operator 'watermarks': 2 input channel(s), 1 channel idle period(s)",
        MIN_NOTE,
    ]
    idle, op_line, ch_lines, points = spec["layer"]
    assert [(d["line"], d["x"], d["x2"]) for d in data(spec, idle)] == [("kafka[1]", 800, 2000)]
    assert steps(spec, ch_lines)["kafka[1]"] == [(200, 27), (2000, 27)]
    # MIN until partition 1 is idle at 800 ms, then partition 0's watermark
    assert steps(spec, op_line)[OP][:4] == [(200, 27), (800, 27), (800, 599), (1200, 599)]
    # partition 1 and the operator at MIN at 200 ms share the operator's dot
    assert [p["also"] for p in data(spec, points) if p["x"] == 200 and p["line"] == OP] == [
        "kafka[1] (no watermark from this input yet: MIN, drawn on the bottom edge)"
    ]


def test_a_reader_without_partitions_is_held_at_min_until_the_end_of_input() -> None:
    """Three source subtasks over two partitions: reader 2 reads none, so window#0's channel 2
    writes its first record at the end of input (MAX); before that it is at MIN. The sink
    after the window's subtasks writes no watermark records of its own: nothing is inferred
    from that."""
    result = kafka_readers(3)
    spec = propagation_chart(result, operator="window#0").to_dict()
    assert spec["usermeta"]["winviz"]["notes"][1:] == [
        "subtask 0 of 'window': 3 input channel(s), 0 channel idle period(s)",
        "subtask 0 of 'window': lines that lie on each other are drawn in alternating dashes "
        "of their colours, one dash each (steps up at one time: watermarks#0, watermarks#1, "
        "watermarks#2)",
        MIN_NOTE,
    ]
    op_line, *_ = spec["layer"]
    # colours in channel order: the line held at MIN does not come first
    assert op_line["encoding"]["color"]["scale"]["domain"] == [
        "watermark of 'window#0'", "watermarks#0", "watermarks#1", "watermarks#2"
    ]  # fmt: skip
    # MIN until the end of input, then MAX on the top edge (cut where watermarks#0's and #1's
    # steps up at 1,600 ms start and end: they lie on it there)
    assert channel_steps(spec)["watermarks#2"] == [
        (200, 45),
        (1600, 45),
        (1600, 1199),
        (1600, 1299),
        (1600, 1799),
        (1600, 1899),
        (1600, 1953),
    ]  # fmt: skip
    assert steps(spec, op_line) == {
        "watermark of 'window#0'": [(200, 45), (1600, 45), (1600, 1953), (1600, 1953)]
    }
    sink = propagation_chart(result, operator="counts").to_dict()
    assert sink["usermeta"]["winviz"]["notes"][1:] == [
        "operator 'counts': 2 input channel(s), 0 channel idle period(s)"
    ]
    assert [lay["mark"]["type"] for lay in sink["layer"]] == ["line", "point"]  # no own line


def test_a_restore_resets_the_channels_and_invents_no_silent_one() -> None:
    """``restored_after_idle``: after the restore both partitions start again at MIN (drawn as
    restarts); the watermark records at MIN the restore writes do not make a third, silent
    partition appear (every channel back at MIN cannot be "above the operator's watermark")."""
    spec = propagation_chart(restored_after_idle(), operator="watermarks").to_dict()
    assert spec["usermeta"]["winviz"]["notes"] == [
        "the operator's watermark (thick black) is the minimum over its active input channels "
        "(coloured); shaded: idle",
        "operator 'watermarks': 2 input channel(s), 4 channel idle period(s), idle itself 2 "
        "time(s)",
        "operator 'watermarks': lines that lie on each other are drawn in alternating dashes of "
        "their colours, one dash each (source[0] and source[1]: the same for 400 ms of "
        "processing time)",
    ]
    # the restore ends source[1]'s idle period (800 to the failure at 1100, ``Restart.failed_at``);
    # it is idle again from the idleness timeout at 1500 to the end
    shaded = next(lay for lay in spec["layer"] if lay["mark"] == {"type": "rect", "opacity": 0.15})
    assert [
        (r["line"], r["x"], r["x2"], r["idle until"])
        for r in spec["datasets"][shaded["data"]["name"]]
    ] == [
        ("source[0]", 800, 1000, "1,000 ms"),
        ("source[1]", 800, 1100, "1,100 ms"),
        ("source[0]", 1900, 2500, "2,500 ms"),
        ("source[1]", 1500, 2500, "end of trace"),
    ]
    lines = [lay for lay in spec["layer"] if lay["mark"]["type"] == "line"]
    assert lines[0]["encoding"]["color"]["scale"]["domain"] == [OP, "source[0]", "source[1]"]
