"""The timeline's watermark lines (issue 26: no mark hides another): each operator's line in
its own shade of the watermark colour (``palette.WATERMARK_SHADES``, the n-th operator drawn
in the n-th) and its own dash, one "watermark of" legend naming both; where lines lie on each
other they are cut into runs (``coinciding.runs``) and each draws a run shared by n lines in
one dash of n, in its shade (``coinciding.dash``) — exact runs on a job whose window subtasks'
minimum lies on its watermark subtasks' lines, and shades cycling past five operators."""

from __future__ import annotations

from typing import Any

from jobs import bounded, count_pipeline, kafka_readers

import winviz as wv
from winviz import viz
from winviz.viz import palette
from winviz.viz.watermark_steps import step_lines

W0, W1 = "watermarks#0", "watermarks#1"
WINDOW, KAFKA = "window#0, window#1 (same)", "kafka#0, kafka#1 (same)"
TOP = 1776  # the processing-time axis' top: the last watermark held to it
EDGE = 2060  # the event-time axis' right edge: MAX (end of input) is drawn on it


def line_layers(spec: dict[str, Any]) -> list[tuple[tuple[Any, Any], list[tuple]]]:
    """The watermark's line layers in drawing order: ((strokeDash, strokeDashOffset) of the
    mark — None, None: each operator's own dash, by the legend — and the vertices
    (operator, run, x, y) in order)."""
    out = []
    for lay in spec["layer"]:
        if lay["mark"]["type"] == "line" and "stroke" in lay["encoding"]:
            rows = spec["datasets"][lay["data"]["name"]]
            mark = (lay["mark"].get("strokeDash"), lay["mark"].get("strokeDashOffset"))
            out.append((mark, [(r["operator"], r["run"], r["x"], r["y"]) for r in rows]))
    return out


def test_the_window_subtasks_minimum_on_the_watermark_subtasks_lines_in_turns() -> None:
    """Two partitions read by two subtasks with idleness 300 ms (the gallery's "idle
    partitions"): watermarks#0 (partition 0, behind) and watermarks#1 step at 200, 600, 1200
    and 1600 ms; the window subtasks' minimum is watermarks#0's line all along; the three share
    each step across where all three hold one watermark; at the end of input (1600 ms) every
    line, the readers' too, steps to MAX on the right edge and is held to the top."""
    spec = viz.timeline(kafka_readers(2, idle=300), view="timeline").to_dict()
    (alone, *in_turn) = line_layers(spec)
    assert alone == ((None, None), [
        (W1, "0.0", 199, 200), (W1, "0.0", 199, 600),  # watermarks#1 alone: its steps up
        (W1, "0.2", 599, 600), (W1, "0.2", 699, 600), (W1, "0.2", 699, 1200),
        (W1, "0.4", 1199, 1200), (W1, "0.4", 1299, 1200), (W1, "0.4", 1299, 1600),
    ])  # fmt: skip
    # watermarks#0 and the window's minimum: one line, drawn by both in turn
    zero_and_window = [
        (99, 200), (99, 600), (199, 600), (599, 600), (599, 1200), (699, 1200),
        (1199, 1200), (1199, 1600), (1299, 1600),
    ]  # fmt: skip
    runs = ["0.0"] * 3 + ["0.2"] * 3 + ["0.4"] * 3
    assert in_turn[:2] == [
        (([5, 5], 0), [(W0, r, x, y) for r, (x, y) in zip(runs, zero_and_window, strict=True)]),
        (([5, 5], 5), [(WINDOW, r, x, y) for r, (x, y) in zip(runs, zero_and_window, strict=True)]),
    ]  # fmt: skip
    # all three across the steps where they hold one watermark, each its turn in three
    across = [(199, 600), (599, 600), (699, 1200), (1199, 1200), (1299, 1600), (1799, 1600),
              (1899, 1600), (EDGE, 1600)]  # fmt: skip
    three = ["0.1"] * 2 + ["0.3"] * 2 + ["0.5"] * 4
    assert in_turn[2:5] == [
        (([5, 10], offset), [(op, r, x, y) for r, (x, y) in zip(three, across, strict=True)])
        for op, offset in ((W0, 0), (W1, 10), (WINDOW, 5))
    ]
    # and all four up the right edge from the end of input to the top
    assert in_turn[5:] == [
        (([5, 15], 0), [(W0, "0.6", EDGE, 1600), (W0, "0.6", EDGE, TOP)]),
        (([5, 15], 15), [(W1, "0.6", EDGE, 1600), (W1, "0.6", EDGE, TOP)]),
        (([5, 15], 10), [(WINDOW, "0.6", EDGE, 1600), (WINDOW, "0.6", EDGE, TOP)]),
        (([5, 15], 5), [(KAFKA, "0.0", EDGE, 1600), (KAFKA, "0.0", EDGE, TOP)]),
    ]
    # the legend: each operator, in drawing order, with its shade and its dash
    line = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "line")
    assert line["encoding"]["stroke"]["scale"] == {
        "domain": [W0, W1, WINDOW, KAFKA],
        "range": ["#000000", "#68909C", "#746450", "#504028"],
    }
    assert line["encoding"]["strokeDash"]["scale"]["range"] == [
        [1, 0],
        [6, 3],
        [2, 2],
        [8, 2, 2, 2],
    ]
    # the records' dots in their operator's shade (a dot of several operators: the first's)
    dots = spec["datasets"][
        next(lay for lay in spec["layer"] if "fill" in lay["encoding"])["data"]["name"]
    ]
    # (the window steps twice at 600 ms: to 199, then 599)
    assert [(d["operator"], d["shade"], d["x"], d["y"]) for d in dots] == [
        (f"{W0}; {WINDOW}", W0, 99, 200),
        (f"{W0}; {WINDOW}", W0, 599, 600),
        (f"{W0}; {WINDOW}", W0, 1199, 1200),
        (W0, W0, 1799, 1600),
        (f"{W0}; {W1}; {WINDOW}; {KAFKA}", W0, EDGE, 1600),  # MAX: every line's
        (W1, W1, 199, 200),
        (W1, W1, 699, 600),
        (W1, W1, 1299, 1200),
        (f"{W1}; {WINDOW}", W1, 1899, 1600),
        (WINDOW, WINDOW, 199, 600),
        (WINDOW, WINDOW, 699, 1200),
        (WINDOW, WINDOW, 1299, 1600),
    ]
    # no note: the legend and the dashes in turn say it
    assert not [n for n in spec["usermeta"]["winviz"]["notes"] if "dash" in n]


def six_readers() -> wv.JobExecutionResult:
    """Six partitions, each read by its own subtask (bound 0): six watermark lines of their
    own, the window's minimum and the readers' (their MAX): eight lines."""
    env = wv.StreamExecutionEnvironment()
    parts = [[(f"p{n}", 100 * n + 100), (f"p{n}", 100 * n + 1100)] for n in range(6)]
    arrivals = [[10 * n, 500 + 10 * n] for n in range(6)]
    (
        env.from_partitions(parts, arrival_times=arrivals, name="kafka")
        .assign_timestamps_and_watermarks(bounded(0))
        .set_parallelism(6)
        .key_by(lambda e: 0)
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    return env.execute()


def test_past_five_operators_the_shades_start_again_with_the_next_dash() -> None:
    """Eight watermark lines: the shades cycle past five, the dashes move on one each round, so
    no two operators are drawn alike (a legend entry names one line)."""
    spec = viz.timeline(six_readers(), view="timeline").to_dict()
    line = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "line")
    ops = [f"watermarks#{n}" for n in range(6)] + [
        "window",
        "kafka#0, kafka#1, kafka#2, kafka#3, kafka#4, kafka#5 (same)",
    ]
    shades = list(palette.WATERMARK_SHADES)
    assert line["encoding"]["stroke"]["scale"] == {"domain": ops, "range": shades + shades[:3]}
    dashes = list(palette.WATERMARK_DASHES)
    assert line["encoding"]["strokeDash"]["scale"] == {"domain": ops, "range": dashes + dashes[1:4]}
    looks = zip(shades + shades[:3], map(tuple, dashes + dashes[1:4]), strict=True)
    assert len(set(looks)) == len(ops)


def test_no_runs_for_one_line_or_a_missing_position() -> None:
    def vertex(op: str, i: int, x: Any, y: Any) -> dict[str, Any]:
        return {"operator": op, "attempt": 0, "i": i, "x": x, "y": y}

    def runs(vertices: list[dict[str, Any]], time_on_x: bool = False) -> Any:
        return step_lines(vertices, "operator", {}, {}, time_on_x=time_on_x)[2]

    one = [vertex("a", 0, 5, 0), vertex("a", 1, 5, 10)]
    assert runs(one) is None
    two = [*one, vertex("b", 0, 5, 0), vertex("b", 1, 5, 10)]
    cut = runs(two)
    # the paths as (processing time, watermark): what they share is processing time, 10 ms
    assert cut is not None and cut.shared == {(("a", 0), ("b", 0)): 10.0}
    # processing time on x (propagation): the same lines share no processing time, one step
    flipped = runs(two, time_on_x=True)
    assert flipped is not None and flipped.shared == {(("a", 0), ("b", 0)): 0.0}
    assert runs([*two[:3], vertex("b", 1, None, 10)]) is None
    assert runs([*two[:3], vertex("b", 1, float("nan"), 10)]) is None


def test_lines_that_lie_on_each_other_all_along_keep_their_legend() -> None:
    """An element at MAX: the source's end of input and the watermark operators' MAX step at
    20 ms, both only that step up the right edge — no piece of either alone: the legend's
    layer keeps one vertex (which draws nothing), the step is drawn by both in turn."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200)
    count_pipeline(
        env,
        [("k", wv.MIN + 1), ("k", 5), ("k", wv.MAX)],
        10,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        arrival_times=[0, 10, 20],
    )
    spec = viz.timeline(env.execute().trace).to_dict()
    shared = "watermarks, window (same)"
    assert line_layers(spec) == [
        ((None, None), [("source", "", 11, 20)]),
        (([5, 5], 0), [("source", "0.0", 11, 20), ("source", "0.0", 11, 23)]),
        (([5, 5], 5), [(shared, "0.0", 11, 20), (shared, "0.0", 11, 23)]),
    ]
    line = next(lay for lay in spec["layer"] if "stroke" in lay["encoding"])
    assert line["encoding"]["strokeDash"]["scale"]["domain"] == ["source", shared]
    assert line["encoding"]["stroke"]["scale"]["range"] == ["#000000", "#68909C"]


def test_a_watermark_dot_says_the_same_in_the_timeline_and_the_timers_chart() -> None:
    """One staircase builder (``watermark_steps.staircase``): a dot's tooltip is its kind,
    seq, times as words and where the axis put it, in both charts (the timers chart's once
    left out the note, in another order); the timeline's names its operators first."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200)
    count_pipeline(env, [("k", 500), ("k", 1500)], 1000, bounded(0), arrival_times=[100, 300])
    run = env.execute()

    def dots(spec: dict[str, Any]) -> tuple[list[str], list[tuple]]:
        stack, found = [spec], []
        while stack:
            node = stack.pop()
            if "mark" in node and node["mark"]["type"] == "point":
                rows = spec["datasets"][node["data"]["name"]]
                if rows and rows[0].get("kind") == "watermark":
                    found.append(node)
            stack += [n for key in ("layer", "vconcat", "hconcat") for n in node.get(key, [])]
        ((layer,),) = [found]
        rows = spec["datasets"][layer["data"]["name"]]
        tips = [t["field"] for t in layer["encoding"]["tooltip"]]
        return tips, [(*(r[t] for t in tips if t != "operator"), r["x"]) for r in rows]

    fields = ["kind", "seq", "proc_time", "watermark", "note"]
    assert dots(viz.timeline(run.trace, view="timeline").to_dict()) == (
        ["operator", *fields],
        [
            ("watermark", 7, "300 ms", "499 ms", "", 499),
            ("watermark", 17, "300 ms", "1,499 ms", "", 1499),
            ("watermark", 27, "300 ms", "MAX (Long.MAX_VALUE)", "MAX ▶", 2060),
        ],
    )
    assert dots(viz.timers_chart(run.trace).to_dict()) == (  # (the window's own records)
        fields,
        [
            ("watermark", 8, "300 ms", "499 ms", "", 499),
            ("watermark", 18, "300 ms", "1,499 ms", "", 1499),
            ("watermark", 28, "300 ms", "MAX (Long.MAX_VALUE)", "MAX ▶", 2044),
        ],
    )
