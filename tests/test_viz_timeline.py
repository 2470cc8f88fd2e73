"""winviz.viz.timeline: layers, encodings and the exact data each mark gets, for a small job
run on the real engine; fates derived from the trace; Trace and DataFrame input agree."""

from __future__ import annotations

from typing import Any

import pytest

import winviz as wv
from winviz import viz
from winviz.viz import frames


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


def rows(spec: dict[str, Any], kind: str, *fields: str) -> list[tuple]:
    data = spec["datasets"][layer(spec, kind)["data"]["name"]]
    return [tuple(r[f] for f in fields) for r in data]


def test_layers_in_order(result) -> None:
    spec = viz.timeline(result.trace).to_dict()
    assert [m for m, _ in layers(spec)] == [
        "rect",  # window bands
        "line",  # watermark steps
        "point",  # watermark records (tooltips)
        "text",  # "watermark MAX (end of input)"
        "point",  # elements
        "point",  # firings
        "text",  # firing labels
        "point",  # cleanups
    ]
    assert spec["usermeta"]["winviz"]["status"] == "ok"
    assert spec["title"]["subtitle"] == [
        "operator 'window': 5 elements, 2 (key, window) pairs, 3 firings",
        "elements: 3 on time, 1 late, accepted, 1 side output",
    ]


def test_elements_exact(result) -> None:
    spec = viz.timeline(result.trace).to_dict()
    assert rows(spec, "element", "x", "y", "what", "seq", "watermark", "source_index") == [
        (1000, 0, "on time", 1, "MIN (Long.MIN_VALUE)", 0),
        (7000, 100, "on time", 12, "MIN (Long.MIN_VALUE)", 1),
        (4500, 300, "late, accepted", 37, "5,499 ms", 2),
        (9000, 400, "on time", 52, "5,499 ms", 3),
        (2000, 700, "side output", 75, "7,499 ms", 4),
    ]
    enc = layer(spec, "element")["encoding"]
    assert enc["x"]["field"] == "x" and enc["x"]["type"] == "quantitative"
    assert enc["x"]["scale"] == {"domain": [-330, 11329], "nice": False, "zero": False}
    assert enc["x"]["axis"]["format"] == ",d"
    assert enc["y"]["scale"]["domain"] == [-21, 721]
    # one legend for fates and window events, only the categories present, fixed colours
    assert enc["color"]["scale"] == {
        "domain": ["on time", "late, accepted", "side output", "fired on time", "fired late",
                   "cleanup"],
        "range": ["#0072B2", "#E69F00", "#CC79A7", "#009E73", "#E69F00", "#7F7F7F"],
    }  # fmt: skip
    assert enc["shape"]["scale"]["range"] == [
        "circle", "diamond", "triangle-up", "square", "square", "triangle-down",
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
    # an element fired it (the late a@4500 within the allowed lateness)
    assert rows(spec, "fired", "x", "y", "what", "label", "pane", "seq", "cause") == [
        (4999, 200, "fired on time", "1 · on time", "0", "29", "event-time timer at 4999"),
        (5000, 300, "fired late", "2 · late", "1", "42", "element"),
        (9999, 700, "fired on time", "2 · on time", "0", "89", "event-time timer at 9999"),
    ]
    labels = [lay for lay in spec["layer"] if lay["mark"].get("dx") == 7]
    assert labels[0]["encoding"]["text"] == {"field": "label", "type": "nominal"}
    assert rows(spec, "cleanup", "x", "y", "cleanup_time", "seq") == [
        (5999, 600, "5,999 ms", "68"),
        (10999, 700, "10,999 ms", "93"),
    ]
    assert rows(spec, "window", "x", "x2", "y", "y2", "elements", "firings", "closed") == [
        (0, 5000, 0, 600, 2, 2, "600 ms"),
        (5000, 10000, 100, 700, 2, 1, "700 ms"),
    ]


def test_watermark_steps_and_max_clipped(result) -> None:
    spec = viz.timeline(result.trace).to_dict()
    line = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "line")
    data = spec["datasets"][line["data"]["name"]]
    assert [(r["x"], r["y"]) for r in data if r["operator"] == "window"] == [
        (5499, 200), (5499, 600),  # 5499 from 200 ms until 600 ms
        (7499, 600), (7499, 700),  # then 7499 until the end of input at 700 ms
        (11329, 700), (11329, 721),  # MAX: clipped to the right edge, held to the top
    ]  # fmt: skip
    assert line["encoding"]["order"] == {"field": "i", "type": "quantitative"}
    assert line["encoding"]["strokeDash"]["scale"]["domain"] == [
        "watermarks",
        "window",
        "window_2",
        "source",
    ]
    edge = next(lay for lay in spec["layer"] if lay["mark"].get("align") == "right")
    assert spec["datasets"][edge["data"]["name"]] == [
        {"x": 11329, "y": 700, "text": "watermark = MAX (end of input) →"}
    ]


def test_element_fates_frame(result) -> None:
    view = frames.open_trace(result.trace)
    fates = frames.element_fates(view, "window")
    assert fates[["seq", "ts", "proc_time", "fate", "windows"]].values.tolist() == [
        [1, 1000.0, 0.0, "on time", 1],
        [12, 7000.0, 100.0, "on time", 1],
        [37, 4500.0, 300.0, "late, accepted", 1],
        [52, 9000.0, 400.0, "on time", 1],
        [75, 2000.0, 700.0, "side output", 0],
    ]


def test_dataframe_input_gives_the_same_chart(result) -> None:
    from_trace = viz.timeline(result.trace).to_dict()
    from_frame = viz.timeline(result.trace.to_pandas()).to_dict()
    from_result = viz.timeline(result).to_dict()
    assert from_frame == from_trace == from_result


def test_epoch_times_get_a_utc_date_axis() -> None:
    env = wv.StreamExecutionEnvironment()
    base = 1_566_640_304_152  # 2019-08-24 09:51:44.152 UTC
    (
        env.from_collection([("k", base), ("k", base + 30_000)], arrival_times=[base, base + 1])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(wv.minutes(1)))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    spec = viz.timeline(env.execute().trace).to_dict()
    enc = layer(spec, "element")["encoding"]
    assert enc["x"]["type"] == "temporal"
    assert enc["x"]["scale"]["type"] == "utc"
    assert rows(spec, "element", "ts") == [
        ("2019-08-24 09:51:44.152 UTC",),
        ("2019-08-24 09:52:14.152 UTC",),
    ]
