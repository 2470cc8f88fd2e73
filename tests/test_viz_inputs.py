"""Bad input: every chart function returns a message card (never a stack trace, never an
empty plot that looks like a result); extreme times are clipped, not allowed to blow up an
axis."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import count_pipeline

import winviz as wv
from winviz import viz


def message(chart: Any) -> dict[str, Any]:
    spec = chart.to_dict()
    meta = spec["usermeta"]["winviz"]
    assert meta["status"] == "message"
    assert spec["mark"]["type"] == "text"
    rows = spec["datasets"][spec["data"]["name"]]  # (a layer's rows, like every chart's)
    return {"message": meta["message"], "lines": [v["line"] for v in rows]}


def windowed(events, arrivals, *, watermarks: bool = True) -> wv.JobExecutionResult:
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200 if watermarks else 0)
    strategy = (
        wv.WatermarkStrategy.for_monotonous_timestamps()
        if watermarks
        else wv.WatermarkStrategy.no_watermarks()
    )
    count_pipeline(
        env, events, 10, strategy.with_timestamp_assigner(lambda e, _: e[1]), arrival_times=arrivals
    )
    return env.execute()


@pytest.mark.parametrize("chart", [viz.timeline, viz.window_lanes])
def test_empty_trace(chart) -> None:
    assert message(chart(wv.Trace()))["message"] == "The trace is empty."


@pytest.mark.parametrize("chart", [viz.timeline, viz.window_lanes])
def test_no_trace_at_all(chart) -> None:
    assert message(chart(None))["message"] == "The trace given is None."
    env = wv.StreamExecutionEnvironment(trace=False)
    env.from_collection([1]).sink_to("out")
    m = message(chart(env.execute()))
    assert m["message"] == "There is no trace: the job ran with trace=False."


def test_not_a_trace() -> None:
    m = message(viz.timeline([1, 2, 3]))
    assert m["message"] == "Expected a winviz Trace or its to_pandas() DataFrame, got list."


@pytest.mark.parametrize("version", [None, 0, 2])
def test_other_schema_version(version) -> None:
    frame = windowed([("k", 1)], [0]).trace.to_pandas()
    if version is None:
        del frame.attrs["schema_version"]
    else:
        frame.attrs["schema_version"] = version
    m = message(viz.timeline(frame))
    found = "no schema_version" if version is None else f"schema version {version}"
    assert m["message"] == (
        f"This DataFrame has {found} (frame.attrs['schema_version']); winviz.viz reads trace "
        f"schema version {wv.SCHEMA_VERSION}."
    )
    assert message(viz.window_lanes(frame))["message"] == m["message"]


def test_no_window_operator() -> None:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).map(lambda v: v + 1).sink_to("out")
    m = message(viz.timeline(env.execute().trace))
    assert m["message"] == "No element reached a keyed operator."


def test_unknown_operator_names_the_choices() -> None:
    m = message(viz.timeline(windowed([("k", 1)], [0]).trace, operator="nope"))
    assert m["message"] == "No window operator named 'nope'."
    assert m["lines"] == ["No window operator named 'nope'. Choose one of: 'window'."]


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="max_points"):
        viz.timeline(wv.Trace(), max_points=0)
    with pytest.raises(ValueError, match="max_points"):
        viz.timeline(wv.Trace(), max_points=5001)


def test_trace_without_watermarks() -> None:
    frame = windowed([("k", 1), ("k", 12)], [0, 5]).trace.to_pandas()
    no_wm = frame[frame["kind"] != "watermark"]
    assert no_wm.attrs["schema_version"] == wv.SCHEMA_VERSION
    spec = viz.timeline(no_wm).to_dict()
    # bands, the firing and cleanup marks, the elements drawn over them, the firing labels
    assert [lay["mark"]["type"] for lay in spec["layer"]] == [
        "rect", "point", "point", "point", "text",
    ]  # fmt: skip
    # the last window opens and is cleaned up at 5 ms (end of input): a band of zero height,
    # drawn 8 px (MIN_BAND_PX: 0.16 ms of 8 ms in 400 px) high centred on 5 ms
    band = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "rect")
    assert band["encoding"]["y"]["scale"]["domain"] == [-1, 7]
    assert [
        (r["x"], r["x2"], r["y"], r["y2"], r["closed"])
        for r in spec["datasets"][band["data"]["name"]]
    ] == [(0, 10, 0, 5, "5 ms"), (10, 20, 4.92, 5.08, "5 ms")]
    assert (
        "no watermark in this trace: no watermark line, nothing is late"
        in (spec["title"]["subtitle"])
    )


def test_single_event() -> None:
    spec = viz.timeline(windowed([("k", 5)], [0]).trace).to_dict()
    element = next(
        lay
        for lay in spec["layer"]
        if spec["datasets"][lay["data"]["name"]][0].get("kind") == "element"
    )
    assert spec["datasets"][element["data"]["name"]][0]["x"] == 5
    # one processing time (0): the axis gets 1 s either side instead of a zero-width domain,
    # and 28 px more on top for the firing labels: ceil(2000 * 28 / 372) ms
    assert element["encoding"]["y"]["scale"]["domain"] == [-1000, 1151]
    assert element["encoding"]["x"]["scale"]["domain"] == [-1, 11]
    viz.export.svg_text(viz.timeline(windowed([("k", 5)], [0]).trace))  # renders


def test_min_and_max_timestamps_are_clipped_and_annotated() -> None:
    result = windowed([("k", wv.MIN + 1), ("k", 5), ("k", wv.MAX)], [0, 10, 20])
    spec = viz.timeline(result.trace).to_dict()
    element = next(
        lay
        for lay in spec["layer"]
        if spec["datasets"][lay["data"]["name"]][0].get("kind") == "element"
    )
    data = spec["datasets"][element["data"]["name"]]
    assert [(r["x"], r["ts"], r["note"]) for r in data] == [
        (-1, "-9,223,372,036,854,775,807 ms (off the chart)", "◀ MIN"),
        (5, "5 ms", ""),
        (11, "MAX (Long.MAX_VALUE)", "MAX ▶"),
    ]
    assert element["encoding"]["x"]["scale"]["domain"] == [-1, 11]
    assert spec["title"]["subtitle"][1:] == [
        "elements: 3 on time",
        "2 element(s) beyond the event-time axis drawn on its edge",
        "2 window(s) whose end overflowed the long range (start >= end) have no band",
        "1 firing mark(s) at the point of another drawn beside it, 11 px right (hover for its "
        "times)",
        "3 cleanup mark(s) at the point of another drawn beside it, 11 px right (hover for its "
        "times)",
    ]
    lanes = viz.window_lanes(result.trace).to_dict()
    for rows in lanes["datasets"].values():
        assert all(abs(r["x"]) <= 2**53 for r in rows if "x" in r)


def test_dataframe_keeps_max_exact_and_a_float_widened_frame_still_reads_as_max() -> None:
    frame = windowed([("k", 5)], [0]).trace.to_pandas()
    assert frame["watermark"].dtype == "Int64"  # nullable ints: MAX stays exact
    assert frame["watermark"].iloc[-1] == wv.MAX
    widened = frame.astype({"watermark": "float64", "ts": "float64"})  # as older frames were
    widened.attrs["schema_version"] = frame.attrs["schema_version"]
    for source in (frame, widened):
        spec = viz.timeline(source).to_dict()
        points = [
            r for rows in spec["datasets"].values() for r in rows if r.get("kind") == "watermark"
        ]
        assert sorted(r["watermark"] for r in points) == ["4 ms", "MAX (Long.MAX_VALUE)"]
