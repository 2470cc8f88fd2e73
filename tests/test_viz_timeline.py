"""winviz.viz.timeline: layers, encodings and the exact data each mark gets, for a small job
run on the real engine; fates derived from the trace; Trace and DataFrame input agree."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from jobs import count_pipeline

import winviz as wv
from tests.browser.gallery import running_example
from winviz import viz
from winviz.viz import palette
from winviz.viz.bands import MIN_BAND_PX, _visible_span
from winviz.viz.fates import element_fates
from winviz.viz.firings import firings
from winviz.viz.trace_view import open_trace


def job() -> wv.JobExecutionResult:
    """Tumbling 5 s windows, bounded out-of-orderness 1500 ms, allowed lateness 1000 ms; the
    same keyed stream is windowed twice: "window" sends late data to a side output,
    "window_2" drops it.

    Periodic watermarks: 200 ms → 7000 - 1500 - 1 = 5499 (fires [0, 5000) on time);
    a@4500 at 300 ms is late but within lateness (late firing); 600 ms → 9000 - 1501 = 7499
    passes the cleanup time 5999; a@2000 at 700 ms finds its window gone."""
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    keyed = (
        env.from_collection(
            [("a", 1000), ("a", 7000), ("a", 4500), ("a", 9000), ("a", 2000)],
            arrival_times=[0, 100, 300, 400, 700],
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(1500).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
    )
    (
        keyed.window(wv.TumblingEventTimeWindows.of(5000))
        .allowed_lateness(1000)
        .side_output_late_data(late)
        .aggregate(wv.CountAggregate())
        .sink_to("counted")
    )
    (
        keyed.window(wv.TumblingEventTimeWindows.of(5000))
        .allowed_lateness(1000)
        .aggregate(wv.CountAggregate())
        .sink_to("dropping")
    )
    return env.execute()


@pytest.fixture(scope="module")
def result() -> wv.JobExecutionResult:
    return job()


def layers(spec: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(mark type, data rows) per layer."""
    return [(lay["mark"]["type"], spec["datasets"][lay["data"]["name"]]) for lay in spec["layer"]]


def layer(spec: dict[str, Any], kind: str) -> dict[str, Any]:
    """The layer whose rows have this ``kind`` (first match)."""
    for lay in spec["layer"]:
        rows = spec["datasets"][lay["data"]["name"]]
        if rows and rows[0].get("kind") == kind:
            return lay
    raise AssertionError(f"no layer of kind {kind}")


def seqs(trace: wv.Trace, kind: str, operator: str = "window") -> list[int]:
    """The ``seq`` of each ``kind`` record of ``operator``, in trace order: tests name records
    by their place among their kind, not by absolute numbers."""
    return [r.seq for r in trace.records(kind) if r.operator == operator]


def rows(spec: dict[str, Any], kind: str, *fields: str) -> list[tuple]:
    data = spec["datasets"][layer(spec, kind)["data"]["name"]]
    return [tuple(r[f] for f in fields) for r in data]


def test_layers_in_order(result) -> None:
    spec = viz.timeline(result.trace).to_dict()
    assert [m for m, _ in layers(spec)] == [
        "rect",  # window bands
        "rule",  # allowed-lateness horizons
        "line",  # watermark steps, each operator's in its shade and dash (the legend's)
        # where two lie on each other (the source's end-of-input MAX held to the top edge, on
        # the shared line's), each in one dash of two, in turn: the shared line's, the source's
        "line",
        "line",
        "point",  # firings
        "point",  # cleanups
        "rule",  # a leader line: the label a line above its mark joined to it (issue 26)
        "point",  # elements: over the larger window marks, never under one (issue 26)
        "point",  # watermark records (tooltips), the smallest dots, over the elements
        # "watermark MAX (end of input)": a line higher, off the firing mark at MAX and off
        # the allowed-lateness horizon a line lower would cross (issue 26)
        "text",
        "text",  # firing labels above-left of their mark (near the right edge)
        "text",  # firing labels further above-left (every text over the marks)
    ]
    assert spec["usermeta"]["winviz"]["status"] == "ok"
    assert spec["title"]["subtitle"] == [
        "operator 'window': 5 elements, 2 (key, window) pairs, 3 firings",
        "elements: 3 on time, 1 late, accepted, 1 side output",
    ]
    # each reference line has its own dash legend; fates and window events share one
    # (the watermark's shades too: with its dashes, one "watermark of" legend)
    assert spec["resolve"] == {
        "scale": {
            "color": "shared",
            "shape": "shared",
            "strokeDash": "independent",
            "stroke": "independent",
        },
        "legend": {"strokeDash": "independent", "stroke": "independent"},
    }


def test_elements_exact(result) -> None:
    spec = viz.timeline(result.trace).to_dict()
    e = seqs(result.trace, "element")
    assert rows(spec, "element", "x", "y", "what", "seq", "watermark", "source_index") == [
        (1000, 0, "on time", e[0], "MIN (Long.MIN_VALUE)", 0),
        (7000, 100, "on time", e[1], "MIN (Long.MIN_VALUE)", 1),
        (4500, 300, "late, accepted", e[2], "5,499 ms", 2),
        (9000, 400, "on time", e[3], "5,499 ms", 3),
        (2000, 700, "side output", e[4], "7,499 ms", 4),
    ]
    enc = layer(spec, "element")["encoding"]
    assert enc["x"]["field"] == "x" and enc["x"]["type"] == "quantitative"
    # event time from the first window's start (0) to the last cleanup time (10999), padded
    # by 3 % each side (palette.time_axis)
    pad = round((10999 - 0) * 0.03)
    assert enc["x"]["scale"] == {"domain": [0 - pad, 10999 + pad], "nice": False, "zero": False}
    assert enc["x"]["axis"]["format"] == ",d"
    # 0 .. 700 padded by 3 % (21 ms), and 56 ms (28 px) more on top for the labels of the
    # last firings: ceil(742 * 28 / 372)
    assert enc["y"]["scale"]["domain"] == [-21, 777]
    # one legend for fates and window events (firings by cause), only the categories
    # present, fixed colours: no fate shares a colour with a firing cause (issue 26: "late,
    # accepted" and "fired: element" were both #E69F00)
    assert enc["color"]["scale"] == {
        "domain": ["on time", "late, accepted", "side output", "fired: element",
                   "fired: event-time timer", "fired: end of input", "cleanup"],
        "range": ["#0072B2", "#E69F00", "#CC79A7", "#F0E442", "#009E73", "#000000", "#7F7F7F"],
    }  # fmt: skip
    assert enc["shape"]["scale"]["range"] == [
        "circle", "diamond", "triangle-up", "square", "square", "square", "triangle-down",
    ]  # fmt: skip
    tips = [t["field"] for t in enc["tooltip"]]
    assert tips == [
        "what", "kind", "seq", "operator", "key", "value", "ts", "proc_time", "watermark",
        "windows", "source_index",
    ]  # fmt: skip


def test_dropped_element_on_the_operator_without_side_output(result) -> None:
    spec = viz.timeline(result.trace, operator="window_2").to_dict()
    assert rows(spec, "element", "x", "y", "what") == [
        (1000, 0, "on time"),
        (7000, 100, "on time"),
        (4500, 300, "late, accepted"),
        (9000, 400, "on time"),
        (2000, 700, "dropped"),
    ]


def test_firings_cleanups_bands_exact(result) -> None:
    spec = viz.timeline(result.trace).to_dict()
    # at the timer that fired it (the window's max timestamp), or at the window's end when
    # an element fired it (the late a@4500 within the allowed lateness); labelled by cause:
    # [5000, 10000) fires when the input ends (watermark MAX) — "end of input", not "late"
    f = [str(seq) for seq in seqs(result.trace, "fired")]
    assert rows(spec, "fired", "x", "y", "what", "label", "pane", "seq", "cause") == [
        (4999, 200, "fired: event-time timer", "1 · event-time timer at 4999", "0", f[0],
         "event-time timer at 4999"),
        (5000, 300, "fired: element", "2 · element, late firing", "1", f[1], "element"),
        (9999, 700, "fired: end of input", "2 · end of input", "0", f[2],
         "event-time timer at 9999"),
    ]  # fmt: skip
    # each firing in the one vocabulary (issue 26): first firing / re-firing, late firing
    # (the watermark had passed the max timestamp 4999 before the late element came)
    assert rows(spec, "fired", "firing", "watermark") == [
        ("first firing", "5,499 ms"),
        ("re-firing, late firing", "5,499 ms"),
        ("first firing", "MAX (Long.MAX_VALUE)"),
    ]
    labels = [lay for lay in spec["layer"] if lay["mark"].get("dx") in (7, -7)]
    assert [
        (lay["mark"]["align"], lay["mark"]["dx"], lay["mark"]["dy"], lay["encoding"]["text"])
        for lay in labels
    ] == [
        ("right", -7, -9, {"field": "label", "type": "nominal"}),
        ("right", -7, -21, {"field": "label", "type": "nominal"}),
    ]
    # the label of the firing at 9999 would run past the right edge into the legend: it goes
    # left of its mark; no label crosses the watermark line or a dot (issue 26): the late
    # firing's label right above its mark would cross the watermark's step at 5499, the one
    # at 4999 right above it would cross the late a@4500, right below it the allowed-lateness
    # horizon at 5999 — they go a line up and above-left
    assert [
        [(r["x"], r["y"], r["label"]) for r in spec["datasets"][lay["data"]["name"]]]
        for lay in labels
    ] == [
        [(9999, 700, "2 · end of input"), (4999, 200, "1 · event-time timer at 4999")],
        [(5000, 300, "2 · element, late firing")],
    ]
    c = [str(seq) for seq in seqs(result.trace, "cleanup")]
    assert rows(spec, "cleanup", "x", "y", "cleanup_time", "seq") == [
        (5999, 600, "5,999 ms", c[0]),
        (10999, 700, "10,999 ms", c[1]),
    ]
    assert rows(spec, "window", "x", "x2", "y", "y2", "elements", "firings", "closed") == [
        (0, 5000, 0, 600, 2, 2, "600 ms"),
        (5000, 10000, 100, 700, 2, 1, "700 ms"),
    ]
    assert rows(spec, "window", "accepts late elements until") == [("5,999 ms",), ("10,999 ms",)]


def test_allowed_lateness_horizons(result) -> None:
    """Allowed lateness 1000 ms: each window's horizon, max timestamp + 1000, a dashed line
    over the band's life; the watermark passing it cleans the window up (the cleanup mark
    at its foot)."""
    spec = viz.timeline(result.trace).to_dict()
    assert rows(spec, "allowed-lateness horizon", "x", "y", "y2", "window", "allowed lateness") == [
        (5999, 0, 600, "[0 ms, 5,000 ms)", "1,000 ms"),
        (10999, 100, 700, "[5,000 ms, 10,000 ms)", "1,000 ms"),
    ]
    enc = layer(spec, "allowed-lateness horizon")["encoding"]
    assert enc["strokeDash"]["scale"] == {
        "domain": ["allowed-lateness horizon (max timestamp + lateness)"],
        "range": [[3, 2]],
    }
    assert enc["y2"] == {"field": "y2"}


def test_no_horizon_without_allowed_lateness() -> None:
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("a", 7000)],
        5000,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        arrival_times=[0, 100],
    )
    spec = viz.timeline(env.execute().trace).to_dict()
    assert "rule" not in [m for m, _ in layers(spec)]
    assert (
        "accepts late elements until"
        not in spec["datasets"][layer(spec, "window")["data"]["name"]][0]
    )


def watermark_lines(spec: dict[str, Any]) -> list[tuple[dict[str, Any], list[tuple]]]:
    """The watermark's line layers: (mark, [(operator, run, i, x, y), ...]) each."""
    return [
        (lay["mark"], [(r["operator"], r["run"], r["i"], r["x"], r["y"]) for r in data])
        for lay in spec["layer"]
        if lay["mark"]["type"] == "line" and "stroke" in lay["encoding"]
        for data in [spec["datasets"][lay["data"]["name"]]]
    ]


def test_watermark_steps_and_max_clipped(result) -> None:
    spec = viz.timeline(result.trace).to_dict()
    # "watermarks", "window" and "window_2" step at the same processing times to the same
    # watermarks: one line, one legend entry that says so; "source" (only MAX) is its own,
    # and lies on the shared line's last step (MAX clipped to the right edge, held to the
    # top): that run is drawn by both, one dash of two each, in turn (coinciding.dash)
    shared = "watermarks, window, window_2 (same)"
    alone, first, second = watermark_lines(spec)
    assert alone == (
        {"type": "line", "strokeWidth": 2},
        [
            (shared, "0.0", 0, 5499, 200), (shared, "0.0", 1, 5499, 600),  # 5499 to 600 ms
            (shared, "0.0", 2, 7499, 600), (shared, "0.0", 3, 7499, 700),  # then 7499 to 700
            (shared, "0.0", 4, 11329, 700),  # MAX at the end of input (700 ms): the edge
        ],
    )  # fmt: skip
    assert first == (
        {"type": "line", "strokeWidth": 2, "strokeDash": [5, 5], "strokeDashOffset": 0},
        [(shared, "0.1", 0, 11329, 700), (shared, "0.1", 1, 11329, 777)],
    )
    assert second == (
        {"type": "line", "strokeWidth": 2, "strokeDash": [5, 5], "strokeDashOffset": 5},
        [("source", "0.0", 0, 11329, 700), ("source", "0.0", 1, 11329, 777)],
    )
    line = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "line")
    assert line["encoding"]["order"] == {"field": "i", "type": "quantitative"}
    assert line["encoding"]["detail"] == {"field": "run", "type": "nominal"}
    # each operator's line in its own shade of the watermark colour and its own dash: one
    # "watermark of" legend names both (the runs in turn: no legend of their own)
    shades = {"domain": [shared, "source"], "range": ["#000000", "#68909C"]}
    dashes = {"domain": [shared, "source"], "range": [[1, 0], [6, 3]]}
    assert line["encoding"]["stroke"] == {
        "field": "operator", "type": "nominal", "title": "watermark of", "scale": shades
    }  # fmt: skip
    assert line["encoding"]["strokeDash"] == {
        "field": "operator", "type": "nominal", "title": "watermark of", "scale": dashes
    }  # fmt: skip
    in_turn = [lay["encoding"] for lay in spec["layer"] if "strokeDash" in lay["mark"]]
    assert [(e["stroke"]["scale"], e["stroke"]["legend"], "strokeDash" in e) for e in in_turn] == [
        (shades, None, False),
        (shades, None, False),
    ]
    assert shades["range"] == list(palette.WATERMARK_SHADES[:2])
    dots = spec["datasets"][layer(spec, "watermark")["data"]["name"]]
    # the shared line's points carry the first sharing operator's records (the watermarks
    # operator, upstream of the windows)
    w, src = (
        seqs(result.trace, "watermark", "watermarks"),
        seqs(result.trace, "watermark", "source"),
    )
    assert [(d["operator"], d["shade"], d["seq"], d["watermark"]) for d in dots] == [
        (shared, shared, w[0], "5,499 ms"),
        (shared, shared, w[1], "7,499 ms"),
        # the source's MAX is at the same point: one dot names both (issue 26: no dot under
        # another), in the shade of the first
        (f"{shared}; source", shared, w[2], "MAX (Long.MAX_VALUE)"),
    ]
    dot_layer = layer(spec, "watermark")
    assert dot_layer["mark"] == {"type": "point", "size": 14, "filled": True, "opacity": 0.6}
    assert dot_layer["encoding"]["fill"] == {
        "field": "shade", "type": "nominal", "title": "watermark of", "scale": shades,
        "legend": None,
    }  # fmt: skip
    assert "shade" not in [t["field"] for t in dot_layer["encoding"]["tooltip"]]
    assert src
    edge = next(lay for lay in spec["layer"] if lay["mark"].get("align") == "right")
    assert spec["datasets"][edge["data"]["name"]] == [
        {"x": 11329, "y": 700, "text": "watermark = MAX (end of input) →"}
    ]


def test_element_fates_frame(result) -> None:
    view = open_trace(result.trace)
    fates = element_fates(view, "window")
    assert fates["seq"].tolist() == seqs(result.trace, "element")
    assert fates[["ts", "proc_time", "fate", "windows"]].values.tolist() == [
        [1000.0, 0.0, "on time", 1],
        [7000.0, 100.0, "on time", 1],
        [4500.0, 300.0, "late, accepted", 1],
        [9000.0, 400.0, "on time", 1],
        [2000.0, 700.0, "side output", 0],
    ]


def test_dataframe_input_gives_the_same_chart(result) -> None:
    from_trace = viz.timeline(result.trace).to_dict()
    from_frame = viz.timeline(result.trace.to_pandas()).to_dict()
    from_result = viz.timeline(result).to_dict()
    assert from_frame == from_trace == from_result


def test_epoch_times_get_a_utc_date_axis() -> None:
    env = wv.StreamExecutionEnvironment()
    base = 1_566_640_304_152  # 2019-08-24 09:51:44.152 UTC
    count_pipeline(
        env,
        [("k", base), ("k", base + 30_000)],
        wv.TumblingEventTimeWindows.of(wv.minutes(1)),
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        arrival_times=[base, base + 1],
    )
    spec = viz.timeline(env.execute().trace).to_dict()
    enc = layer(spec, "element")["encoding"]
    # epoch ms on a number scale (a temporal scale with a fixed domain makes Vega-Lite warn
    # once per layer), ticks on UTC clock boundaries, labelled in UTC
    assert enc["x"] == {
        "field": "x",
        "type": "quantitative",
        "scale": {"domain": [1566640256400, 1566640383600], "nice": False, "zero": False},
        "axis": {
            "title": "event time (UTC)",
            "values": [1566640260000 + 15_000 * i for i in range(9)],  # 09:51:00, :15, ...
            "labelExpr": "utcFormat(datum.value, '%H:%M:%S')",
            "labelOverlap": True,
        },
    }
    assert enc["y"]["axis"]["labelExpr"] == "utcFormat(datum.value, '%H:%M:%S.%L')"
    assert enc["y"]["axis"]["values"] == [1566640304151 + i for i in range(5)]
    # a timer's time in a label as the axis shows it
    assert rows(spec, "fired", "label") == [
        ("1 · event-time timer at 09:51:59.999",),
        ("1 · end of input",),
    ]
    assert rows(spec, "element", "ts") == [
        ("2019-08-24 09:51:44.152 UTC",),
        ("2019-08-24 09:52:14.152 UTC",),
    ]


# -- Flink's vocabulary: late is timestamp <= watermark; firings say what caused them ----------


def continuous_job() -> wv.JobExecutionResult:
    """One 10 s window, ContinuousEventTimeTrigger.of(2000), monotonous watermarks
    (timestamp - 1): a@2500 at 1000 ms raises the watermark to 2499, which fires the timer at
    2000 (at 1200 ms, the next periodic watermark); a@4500 → 4499 fires the timer at 4000;
    a@1000 arrives at 3000 ms with the watermark at 4499: late (1000 <= 4499) but its window
    is within lateness, so accepted. The input ends at 3000 ms: the MAX watermark fires the
    timers at 6000, 8000 and the window's max timestamp 9999 — the end of input, not late
    data (Beam's timing calls two of them "late")."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 500), ("a", 2500), ("a", 4500), ("a", 1000)],
            arrival_times=[0, 1000, 2000, 3000],
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(10000))
        .trigger(wv.ContinuousEventTimeTrigger.of(2000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute()


def test_firings_are_labelled_by_cause() -> None:
    result = continuous_job()
    assert [r.value for r in result.outputs["out"]] == [2, 3, 4, 4, 4]
    view = open_trace(result.trace)
    fired = firings(view, "window")
    # (Beam would call the last three on time, late, late; Flink knows first firing /
    # re-firing and late firing — none is: each timer fired as the watermark passed it)
    assert fired[["at", "cause", "fired_by", "firing", "late_firing"]].values.tolist() == [
        [2000, "event-time timer at 2000", "event-time timer", "first firing", False],
        [4000, "event-time timer at 4000", "event-time timer", "re-firing", False],
        [6000, "event-time timer at 6000", "end of input", "re-firing", False],
        [8000, "event-time timer at 8000", "end of input", "re-firing", False],
        [9999, "event-time timer at 9999", "end of input", "re-firing", False],
    ]
    spec = viz.timeline(result.trace).to_dict()
    assert rows(spec, "fired", "x", "y", "what", "label") == [
        (2000, 1200, "fired: event-time timer", "2 · event-time timer at 2000"),
        (4000, 2200, "fired: event-time timer", "3 · event-time timer at 4000"),
        (6000, 3000, "fired: end of input", "4 · end of input"),
        (8000, 3000, "fired: end of input", "4 · end of input"),
        (9999, 3000, "fired: end of input", "4 · end of input"),
    ]
    assert rows(spec, "element", "x", "y", "what", "watermark") == [
        (500, 0, "on time", "MIN (Long.MIN_VALUE)"),
        (2500, 1000, "on time", "499 ms"),
        (4500, 2000, "on time", "2,499 ms"),
        (1000, 3000, "late, accepted", "4,499 ms"),
    ]
    # the last window's band is drawn whole and the firing at its max timestamp inside the
    # axis: 0 .. 10,000 padded by 3 % (300 ms)
    assert rows(spec, "window", "x", "x2") == [(0, 10000)]
    assert layer(spec, "fired")["encoding"]["x"]["scale"]["domain"] == [-300, 10300]


def test_labels_overlap_neither_each_other_nor_the_edges() -> None:
    tl = importlib.import_module("winviz.viz.labels")  # the label placement's pixel boxes
    boxes_mod = importlib.import_module("winviz.viz.boxes")
    spec = viz.timeline(continuous_job().trace).to_dict()
    x = layer(spec, "fired")["encoding"]["x"]["scale"]["domain"]
    y = layer(spec, "fired")["encoding"]["y"]["scale"]["domain"]
    plot = tl.Plot(
        palette.TimeAxis("x", "ms", *x),
        palette.TimeAxis("y", "ms", *y),
        spec["width"],
        spec["height"],
    )
    boxes = []
    for lay in spec["layer"]:
        if lay["mark"]["type"] == "text" and "label" in lay["encoding"]["text"]["field"]:
            for r in spec["datasets"][lay["data"]["name"]]:
                boxes.append(
                    tl._text_box(
                        plot.px(r["x"]), plot.py(r["y"]), r["label"],
                        lay["mark"]["align"], lay["mark"]["dx"], lay["mark"]["dy"],
                    )
                )  # fmt: skip
    assert len(boxes) == 5  # every label placed
    for i, a in enumerate(boxes):
        assert a[0] >= 0 and a[2] <= spec["width"]
        assert a[1] >= 0 and a[3] <= spec["height"]
        assert not any(boxes_mod.overlaps(a, b) for b in boxes[i + 1 :])


def test_late_element_of_a_window_not_yet_fired_is_late_accepted() -> None:
    """Flink's rule, not "its window had fired": a@6000 arrives at 2000 ms with the watermark
    at 6999 (a@7000): 6000 <= 6999, late; [0, 10000) has not fired (its end is far ahead), so
    it is assigned: "late, accepted"."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 5000), ("a", 7000), ("a", 6000)],
        10000,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        arrival_times=[0, 1000, 2000],
    )
    result = env.execute()
    view = open_trace(result.trace)
    fates = element_fates(view, "window")
    assert fates[["ts", "proc_time", "fate", "windows"]].values.tolist() == [
        [5000.0, 0.0, "on time", 1],
        [7000.0, 1000.0, "on time", 1],
        [6000.0, 2000.0, "late, accepted", 1],
    ]
    assert firings(view, "window")[["proc_time", "fired_by"]].values.tolist() == [
        [2000, "end of input"]
    ]


def test_ideal_diagonal_is_explained_in_a_legend() -> None:
    """Arrivals just after their timestamps: the diagonal event time = processing time is
    drawn across the overlap of both axes, with its own legend entry saying what it is."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("a", 2500)],
        3000,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        arrival_times=[1100, 2600],
    )
    spec = viz.timeline(env.execute().trace).to_dict()
    diagonal = layer(spec, "event time = processing time (ideal)")
    assert diagonal["mark"] == {"type": "line", "color": "#A6A6A6", "strokeWidth": 1}  # a guide
    assert diagonal["encoding"]["strokeDash"] == {
        "field": "line",
        "type": "nominal",
        "title": None,
        "scale": {"domain": ["event time = processing time (ideal)"], "range": [[4, 4]]},
        "legend": {"orient": "bottom", "labelLimit": 0},  # under the chart, never cut
    }
    x = diagonal["encoding"]["x"]["scale"]["domain"]
    y = diagonal["encoding"]["y"]["scale"]["domain"]
    data = spec["datasets"][diagonal["data"]["name"]]
    assert [(r["x"], r["y"]) for r in data] == [(max(x[0], y[0]),) * 2, (min(x[1], y[1]),) * 2]


def test_two_lines_clipped_to_one_edge_point_print_one_text() -> None:
    tl = importlib.import_module("winviz.viz.timeline")
    beyond = {"x": 6180, "y": 1300, "text": "watermark beyond the axis"}
    at_max = {"x": 6180, "y": 1300, "text": "watermark = MAX (end of input) →"}
    other = {"x": 6180, "y": 900, "text": "watermark beyond the axis"}
    assert tl._edge_sides([beyond, at_max, other]) == [("right", [at_max, other])]
    assert tl._edge_sides([at_max, beyond]) == [("right", [at_max])]
    at_min = {"x": -40, "y": 900, "text": "← watermark = MIN"}
    assert tl._edge_sides([at_min, other]) == [("right", [other]), ("left", [at_min])]


def test_date_axis_ticks_fall_on_utc_boundaries() -> None:
    day = 86_400_000
    start = 1_566_640_304_152  # 2019-08-24 09:51:44.152 UTC
    midnight = start - start % day
    # 3 days: every 12 hours (6 ticks); 8 days: every day, labelled as dates
    assert palette.epoch_ticks(start, start + 3 * day) == (
        [midnight + h * 3_600_000 for h in range(12, 84, 12)],
        "%b %d %H:%M",
    )
    assert palette.epoch_ticks(start, start + 8 * day) == (
        [midnight + d * day for d in range(1, 9)],
        "%Y-%m-%d",
    )
    assert palette.epoch_ticks(start, start + 7 * 3_600_000) == (
        [midnight + h * 3_600_000 for h in range(10, 17)],
        "%b %d %H:%M",
    )
    assert palette.epoch_ticks(start, start + 3) == (
        [start, start + 1, start + 2, start + 3],
        "%H:%M:%S.%L",
    )


def test_legends_name_only_the_users_operators() -> None:
    """Issue 26: get_side_output adds a node "side:late" that forwards the window's
    watermark; no legend names it ("watermarks, window, side:late (same)" was shown)."""
    import json

    late = wv.OutputTag("late")
    env = wv.StreamExecutionEnvironment()
    out = (
        env.from_collection([("a", 1000), ("a", 6000), ("a", 2000)], arrival_times=[0, 100, 300])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .side_output_late_data(late)
        .aggregate(wv.CountAggregate())
    )
    out.sink_to("out")
    out.get_side_output(late).sink_to("late")
    trace = env.execute().trace
    timeline = viz.timeline(trace).to_dict()
    dash = next(
        lay["encoding"]["strokeDash"]["scale"]["domain"]
        for lay in timeline["layer"]
        if "strokeDash" in lay.get("encoding", {})
    )
    assert dash == ["watermarks, window (same)", "source"]
    propagation = json.dumps(viz.propagation_chart(trace).to_dict())
    assert "side:" not in propagation and "side:" not in json.dumps(timeline)


def test_the_timeline_and_the_scrubber_count_windows_alike() -> None:
    """Issue 26: one count rule and one wording — the scrubber said "3 windows" where the
    timeline of the same run said "4 (key, window) pairs"; both now count (key, window)
    pairs, and the scrubber (one band per window, all keys) adds the windows."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 100), ("b", 200), ("a", 1_200), ("a", 2_500)],
        1_000,
        arrival_times=[0, 10, 20, 30],
    )
    trace = env.execute().trace
    timeline = viz.timeline(trace).to_dict()["usermeta"]["winviz"]["notes"][0]
    scrubber = viz.scrubber(trace).to_dict()["usermeta"]["winviz"]["notes"][0]
    assert timeline == "operator 'window': 4 elements, 4 (key, window) pairs, 4 firings"
    assert scrubber.startswith("operator 'window': 4 elements, 4 (key, window) pairs in 3 windows")


def test_a_window_opened_and_closed_at_one_time_is_drawn_min_band_px_high() -> None:
    """Issue 26: the running example's window [20000, 30000) opens (h arrives) and closes (the
    end-of-input firing and its cleanup) at 25,100 ms. A band of no height drew nothing (its
    4 px outline lay under the watermark line along it): it is drawn ``MIN_BAND_PX`` (8 px)
    high, centred on 25,100 ms, its tooltip the true times; the other bands are unchanged."""
    spec = viz.timeline(running_example(), view="timeline").to_dict()
    band = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "rect")
    assert band["encoding"]["y"]["scale"]["domain"] == [483, 27724]
    assert (spec["height"], MIN_BAND_PX) == (400, 8)
    # 8 px of 400 px over 27,241 ms: 544.82 ms, 272.41 ms either side of 25,100
    assert [
        (r["window"], r["x"], r["x2"], r["y"], r["y2"], r["opened"], r["closed"])
        for r in spec["datasets"][band["data"]["name"]]
    ] == [
        ("[0 ms, 10,000 ms)", 0, 10000, 1200, 12200, "1,200 ms", "12,200 ms"),
        ("[10,000 ms, 20,000 ms)", 10000, 20000, 12100, 25100, "12,100 ms", "25,100 ms"),
        ("[20,000 ms, 30,000 ms)", 20000, 30000, 24827.59, 25372.41, "25,100 ms", "25,100 ms"),
    ]
    # one outline for every band (no thick outline of a flat band any more)
    assert band["mark"]["strokeWidth"] == 1
    assert "strokeWidth" not in band["encoding"]
    # twice as tall a chart: half the time, still 8 px
    spec = viz.timeline(running_example(), view="timeline", height=800).to_dict()
    band = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "rect")
    assert band["encoding"]["y"]["scale"]["domain"] == [483, 26736]
    assert [(r["y"], r["y2"]) for r in spec["datasets"][band["data"]["name"]]][2] == (
        24968.735,
        25231.265,
    )


def test_visible_span_pads_a_short_band_and_keeps_it_inside_the_axis() -> None:
    """``_visible_span`` on an axis 0..1000 ms 100 px high (8 px: 80 ms): a band at least
    80 ms high is itself; a shorter one is 80 ms centred on its middle, moved inside the axis
    at its ends; a missing end stays missing."""
    y = palette.TimeAxis("processing time", "ms", 0, 1000)
    assert _visible_span(100, 300, y, 100) == (100, 300)
    assert _visible_span(100, 180, y, 100) == (100, 180)
    assert _visible_span(500, 500, y, 100) == (460.0, 540.0)
    assert _visible_span(100, 150, y, 100) == (85.0, 165.0)
    assert _visible_span(0, 0, y, 100) == (0, 80)
    assert _visible_span(1000, 1000, y, 100) == (920, 1000)
    assert _visible_span(None, 5, y, 100) == (None, 5)


def _idle_rows(spec: dict[str, Any]) -> list[tuple[str, Any, Any, str]]:
    """The idle strips' (input, y, y2, "idle until") rows, in drawing order."""
    stack, out = list(spec.get("layer", [])), []
    while stack:
        lay = stack.pop(0)
        stack[:0] = lay.get("layer", [])
        rows = spec.get("datasets", {}).get(lay.get("data", {}).get("name"), [])
        if rows and rows[0].get("kind") == "idle":
            out += [(r["idle"], r["y"], r["y2"], r["idle until"]) for r in rows]
    return out


def test_a_restore_ends_the_idle_strips() -> None:
    """``restored_after_idle``: source[1] is idle from 800; the job fails at 1100 (the failed
    attempt's last record: ``Restart.failed_at``) and the restore (clock back to 900) starts
    it again active at MIN, so its strip ends at the failure, and it is idle again from the
    idleness timeout at 1500 to the end of the trace (drawn to the axis' top, 2775) — on the
    timeline and the scrubber alike. A job without restores keeps its spans."""
    from jobs import restored_after_idle, union_all_idle

    from winviz.viz.idle import IdleSpan, idle_spans

    job = restored_after_idle()
    expected = [
        ("source[0]", 800, 1000, "1,000 ms"),
        ("source[0]", 1900, 2500, "2,500 ms"),
        ("source[1]", 800, 1100, "1,100 ms"),
        ("source[1]", 1500, 2775, "end of trace"),
        ("watermarks (all inputs)", 800, 1000, "1,000 ms"),
        ("watermarks (all inputs)", 1900, 2500, "2,500 ms"),
    ]
    assert _idle_rows(viz.timeline(job, view="timeline").to_dict()) == expected
    assert _idle_rows(viz.scrubber(job).to_dict()) == expected
    assert idle_spans(open_trace(union_all_idle())) == [
        IdleSpan("watermarks (all inputs)", 800, 3000),
        IdleSpan("watermarks", 800, 3000),
        IdleSpan("watermarks_2 (all inputs)", 1000, 3000),
        IdleSpan("watermarks_2", 1000, 3000),
        IdleSpan("m (all inputs)", 1000, 3000),
    ]
