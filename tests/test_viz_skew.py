"""winviz.viz.skew_chart (issue 12, readable at scale): each element at (processing time,
processing time − event time) coloured by fate, under the watermark lag; exact data for the
course's eight events, the late ⇔ on-or-above-the-lag rule, and the clickstream of lesson 01,
where the bound changes what goes to the side output exactly as the engine says."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import bounded, count_pipeline

import winviz as wv
from winviz import datasets
from winviz.viz import scale
from winviz.viz.skew import skew_chart
from winviz.viz.trace_view import open_trace
from winviz.viz.watermark_steps import watermark_steps

EVENTS = [
    ("a", 1_000),
    ("b", 3_000),
    ("c", 2_000),
    ("d", 7_000),
    ("e", 12_000),
    ("f", 4_000),
    ("g", 16_000),
    ("h", 25_000),
]
ARRIVALS = [1_200, 3_100, 3_500, 7_300, 12_100, 12_500, 16_200, 25_100]


def eight_events(bound: int) -> wv.JobExecutionResult:
    """Lesson 01's job: 10 s tumbling windows, late data to a side output."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200)
    count_pipeline(
        env,
        EVENTS,
        10_000,
        bounded(bound),
        key=lambda e: "all",
        late=wv.OutputTag("late"),
        arrival_times=ARRIVALS,
    )
    return env.execute()


def layer(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    for lay in spec["layer"]:
        rows = spec["datasets"][lay["data"]["name"]]
        if rows and rows[0]["kind"] == kind:
            return rows
    raise AssertionError(f"no layer of kind {kind!r}")


def test_eight_events_exact() -> None:
    spec = skew_chart(eight_events(1_000)).to_dict()
    assert spec["usermeta"]["winviz"]["chart"] == "skew_chart"
    assert spec["usermeta"]["winviz"]["notes"][0] == (
        "operator 'window': 8 elements: 7 on time, 1 side output"
    )
    elements = layer(spec, "element")
    # the common fate first, f (the side output) drawn on top
    assert [(e["value"], e["x"], e["y"], e["fate"], e["watermark"]) for e in elements] == [
        ('["a",1000]', 1200, 200, "on time", "MIN (Long.MIN_VALUE)"),
        ('["b",3000]', 3100, 100, "on time", "-1 ms"),
        ('["c",2000]', 3500, 1500, "on time", "1,999 ms"),
        ('["d",7000]', 7300, 300, "on time", "1,999 ms"),
        ('["e",12000]', 12100, 100, "on time", "5,999 ms"),
        ('["g",16000]', 16200, 200, "on time", "10,999 ms"),
        ('["h",25000]', 25100, 100, "on time", "14,999 ms"),
        ('["f",4000]', 12500, 8500, "side output", "10,999 ms"),
    ]
    # the lag: t − W rising while W stands still, dropping when it advances (-1 at 1,400 ms,
    # 1,999 at 3,200, 5,999 at 7,400, 10,999 at 12,200, 14,999 at 16,400, 23,999 at 25,100,
    # then MAX at 25,100, which ends the line)
    lag = [(v["x"], v["y"]) for v in layer(spec, "watermark lag")]
    assert lag == [
        (1400, 1401),
        (3200, 3201),
        (3200, 1201),
        (7400, 5401),
        (7400, 1401),
        (12200, 6201),
        (12200, 1201),
        (16400, 5401),
        (16400, 1401),
        (25100, 10101),
        (25100, 1101),
        (25100, 1101),
    ]
    enc = spec["layer"][1]["encoding"]
    assert enc["y"]["axis"]["title"] == "processing time − event time (ms)"
    assert enc["x"]["axis"]["title"] == "processing time (ms)"
    assert enc["color"]["field"] == "fate" and enc["shape"]["field"] == "fate"
    assert enc["y"]["scale"]["domain"] == [-200, 10401]  # 100 .. 10,101, padded 3 %


@pytest.mark.parametrize("bound", [0, 1_000, 3_000])
def test_late_is_on_or_above_the_lag(bound: int) -> None:
    """ts <= W  ⇔  t − ts >= t − W: an element is late exactly when its skew reaches the lag
    the watermark it met gives at its processing time."""
    result = eight_events(bound)
    view = open_trace(result.trace)
    rows = view.select("element", operator="window")
    stamps, procs = view.column("ts", rows).tolist(), view.column("proc_time", rows).tolist()
    marks = view.column("watermark", rows).tolist()
    spec = skew_chart(result, max_points=8).to_dict()
    drawn = sorted(layer(spec, "element"), key=lambda r: r["seq"])
    assert [r["seq"] for r in drawn] == rows.tolist()
    assert [r["y"] for r in drawn] == [p - t for p, t in zip(procs, stamps, strict=True)]
    late = [w is not None and t <= w for t, w in zip(stamps, marks, strict=True)]
    above = [
        w is not None and w > -(2**63) and r["y"] >= p - w
        for r, p, w in zip(drawn, procs, marks, strict=True)
    ]
    assert late == above
    expected = {0: ["c", "f"], 1_000: ["f"], 3_000: ["f"]}[bound]
    by_name = dict(zip([r["value"] for r in drawn], late, strict=True))
    assert sorted(n for n in "abcdefgh" if by_name[f'["{n}",{dict(EVENTS)[n]}]']) == expected


def clickstream_run(bound: int) -> wv.JobExecutionResult:
    """Lesson 01's clickstream job (clicks per page in 10 s windows, late to a side output)."""
    clicks = datasets.clickstream()
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=200)
    late = wv.OutputTag("late")
    count_pipeline(
        env,
        clicks,
        10_000,
        wv.WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(
            lambda c, _: c.event_time
        ),
        key=lambda c: c.page,
        late=late,
        sink="counts",
        arrival_times=[c.arrival_time for c in clicks],
    )
    return env.execute()


def test_clickstream_bound_changes_what_is_dropped() -> None:
    """Lesson 01's explorer: with bound 1 s and 30 s the chart's side-output marks are the
    engine's side-output records, element by element (13 and 4 clicks), and the lag line
    rises by the bound."""
    runs = {bound: clickstream_run(bound) for bound in (1_000, 30_000)}
    marks: dict[int, list[str]] = {}
    for bound, result in runs.items():
        spec = skew_chart(result).to_dict()
        elements = layer(spec, "element")
        assert len(elements) == 531
        # epoch times: a quantitative axis with UTC labels, tooltips as dates
        x = spec["layer"][1]["encoding"]["x"]
        assert (x["type"], x["axis"]["labelExpr"]) == (
            "quantitative",
            "utcFormat(datum.value, '%H:%M:%S')",
        )
        assert all(e["timestamp"].endswith(" UTC") for e in elements)
        marks[bound] = sorted(e["seq"] for e in elements if e["fate"] == "side output")
        # the engine: the element record each side_output record follows, at the window op
        trace = result.trace.to_pandas()
        at_window = trace[trace["operator"] == "window"]
        element_seq, owner = None, []
        for seq, kind in zip(at_window["seq"], at_window["kind"], strict=True):
            if kind == "element":
                element_seq = int(seq)
            elif kind == "side_output":
                owner.append(element_seq)
        assert marks[bound] == sorted(owner)
        marks[bound] = sorted(e["value"] for e in elements if e["fate"] == "side output")
        assert len(owner) == len(result.side_outputs["late"])
        assert not [e for e in elements if e["fate"] == "dropped"]  # a side output, not lost
    assert (len(marks[1_000]), len(marks[30_000])) == (13, 4)
    assert set(marks[30_000]) < set(marks[1_000])  # a larger bound only rescues clicks
    lags = {
        bound: sorted(v["y"] for v in layer(skew_chart(r).to_dict(), "watermark lag"))
        for bound, r in runs.items()
    }
    # the smallest lag is the bound + 1 plus the smallest wait for the next tick
    assert lags[30_000][0] - lags[1_000][0] == 29_000


def test_binned_above_max_points() -> None:
    spec = skew_chart(clickstream_run(1_000), max_points=100).to_dict()
    rows = layer(spec, "elements (binned)")
    assert sum(r["count"] for r in rows) == 531
    assert sum(r["count"] for r in rows if r["fate"] == "side output") == 13
    assert all(len(v) <= scale.ROW_LIMIT for v in spec["datasets"].values())
    assert spec["usermeta"]["winviz"]["notes"][-1].startswith("531 elements binned on a ")


def test_message_cards_and_arguments() -> None:
    assert skew_chart(None).to_dict()["usermeta"]["winviz"]["status"] == "message"
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, [("a", 1)], wv.TumblingProcessingTimeWindows.of(10), None, sink="o")
    card = skew_chart(env.execute()).to_dict()["usermeta"]["winviz"]
    assert card["status"] == "message"
    assert card["message"] == "No element with a timestamp reached 'window'."
    with pytest.raises(ValueError):
        skew_chart(wv.Trace(), max_points=0)
    assert wv.skew_chart is skew_chart


def test_a_thinned_lag_line_keeps_its_true_extremes() -> None:
    """Issue 26: 6,000 elements with a jittered lag and a watermark every 7 ms give ~17,000
    lag vertices; the line is thinned under ROW_LIMIT keeping each bin's first, last, lowest
    and highest vertex, so it reaches exactly the true highest and lowest lag, every vertex
    drawn is a true one, and the subtitle says it was thinned."""
    import random

    rnd = random.Random(26)
    n = 6_000
    events = [("k", i * 10 - rnd.randint(0, 400) * (i % 3 == 0)) for i in range(n)]
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=7)
    count_pipeline(
        env,
        events,
        1_000,
        bounded(50),
        arrival_times=[i * 10 for i in range(n)],
    )
    trace = env.execute().trace
    view = open_trace(trace)
    steps = watermark_steps(view)
    steps = steps[steps["operator"] == "window"]
    elements = view.select("element", operator="window")
    t_end = int(max(view.column("proc_time", elements)))
    true = _lag_vertices(steps, t_end)
    assert len(true) > scale.ROW_LIMIT
    spec = skew_chart(trace, max_points=100).to_dict()
    drawn = layer(spec, "watermark lag")
    assert len(drawn) <= scale.ROW_LIMIT
    lags = [v[2] for v in true]
    assert max(r["y"] for r in drawn) == max(lags)
    assert min(r["y"] for r in drawn) == min(lags)
    assert {(r["x"], r["y"]) for r in drawn} <= {(v[1], v[2]) for v in true}
    notes = spec["usermeta"]["winviz"]["notes"]
    assert any(note.startswith("watermark lag line thinned: ") for note in notes)


@pytest.mark.parametrize("far", [0, 2**62, 2**63 - 1])
def test_lag_vertices_follow_the_rule_step_by_step(far: int) -> None:
    """The lag line's vertices (computed over whole columns) against the rule stated one
    step at a time: each finite watermark w at t gives (t, t − w) rising to (t', t' − w),
    t' the next record's time (not before t; the last: t_end); MIN, MAX and None (and any
    watermark beyond ±2**53) start a new part. Processing times up to ``far`` (beyond ±2**62
    the lags are exact Python ints, never wrapped int64)."""
    import random

    import pandas as pd

    rnd = random.Random(far)
    for _ in range(50):
        n = rnd.randrange(0, 12)
        procs = sorted(
            rnd.choice([rnd.randrange(0, 5000), far - rnd.randrange(0, 9)]) for _ in range(n)
        )
        marks = [
            rnd.choice([None, wv.MIN, wv.MAX, 2**53 + 1, rnd.randrange(-3000, 3000)])
            for _ in range(n)
        ]
        t_end = rnd.choice([0, 4000, far])
        expected, part = [], 0
        for i, (t, w) in enumerate(zip(procs, marks, strict=True)):
            if w is None or abs(w) > 2**53:
                part += 1
                continue
            t1 = max(procs[i + 1], t) if i + 1 < n else max(t, t_end)
            expected += [(part, t, t - w), (part, t1, t1 - w)]
        steps = pd.DataFrame({"proc_time": procs, "watermark": marks}, dtype=object)
        got = _lag_vertices(steps, t_end)
        assert got == expected
        assert all(type(v) is int for vertex in got for v in vertex)


def _lag_vertices(steps: Any, t_end: int) -> list[tuple[int, ...]]:
    """``skew.lag_vertices`` of watermark ``steps`` (proc_time, watermark: ints or None)."""
    import numpy as np

    from winviz.viz.skew import lag_vertices

    marks = steps["watermark"].tolist()
    times = np.array(steps["proc_time"].tolist(), dtype=np.int64)
    present = np.array([m is not None for m in marks], dtype=bool)
    values = np.array([0 if m is None else m for m in marks], dtype=np.int64)
    return [tuple(v) for v in lag_vertices(times, values, present, t_end).tolist()]


def _label_place_by_every_score(
    vertices: list[tuple[int, int, int]], procs: Any, skews: Any, x: Any, y: Any, w: int, h: int
) -> tuple[tuple[int, int], tuple[str, str, int]]:
    """The "watermark lag" label's place as its rule states it, with no shortcut: every place
    at every spot scored (line segments crossed, element boxes crossed, each counted in full,
    one by one), the first of the lowest scores kept (the first (0, 0) is one)."""
    import numpy as np

    from winviz.viz.boxes import crosses
    from winviz.viz.skew import LABEL_PLACES, _line_segments

    sx, sy = w / max(1, x.hi - x.lo), h / max(1, y.hi - y.lo)
    ex, ey = (np.asarray(procs) - x.lo) * sx, h - (np.asarray(skews) - y.lo) * sy
    line = _line_segments(vertices, x, y, sx, sy, h).tolist()
    tail = vertices[-40:]
    spots = []
    for i in range(len(tail) - 1, -1, -1):
        spots.append((tail[i][1], tail[i][2]))
        if i and tail[i - 1][0] == tail[i][0]:
            spots.append(((tail[i - 1][1] + tail[i][1]) // 2, (tail[i - 1][2] + tail[i][2]) // 2))
    bw, bh, r = 6.6 * len("watermark lag"), 13.0, 4.0
    scored = []
    for t, lag in spots:
        px, py = (x.clip(t)[0] - x.lo) * sx, h - (lag - y.lo) * sy
        for align, baseline, dy in LABEL_PLACES:
            left = px - bw if align == "right" else px
            top = py + dy - bh if baseline == "bottom" else py + dy
            if left < 0 or top < 0 or left + bw > w or top + bh > h:
                continue
            box = (left, top, left + bw, top + bh)
            segs = sum(
                min(s[0], s[2]) < box[2]
                and max(s[0], s[2]) > box[0]
                and min(s[1], s[3]) < box[3]
                and max(s[1], s[3]) > box[1]
                and crosses(tuple(s), box)
                for s in line
            )
            n = sum(
                ex_ + r > box[0] and ex_ - r < box[2] and ey_ + r > box[1] and ey_ - r < box[3]
                for ex_, ey_ in zip(ex.tolist(), ey.tolist(), strict=True)
            )
            scored.append(((segs, n), (t, lag), (align, baseline, dy)))
    if not scored:
        return (vertices[-1][1], vertices[-1][2]), LABEL_PLACES[0]
    best = min(scored, key=lambda s: s[0])  # (the first of the lowest)
    return best[1], best[2]


@pytest.mark.parametrize("seed", range(8))
def test_the_lag_label_place_is_the_first_lowest_score(seed: int) -> None:
    """The label search skips the line segments and elements it need not count (it stops
    counting a place's crossings once they exceed the best place's); on random sawtooth
    lines, parts and element clouds it picks exactly the place the full scoring picks."""
    import random

    import numpy as np

    from winviz.viz.palette import TimeAxis
    from winviz.viz.skew import _lag_label_place

    rnd = random.Random(seed)
    t, part, vertices = 0, 0, []
    for _ in range(rnd.choice([2, 9, 60, 400])):
        t += rnd.randrange(0, 400)
        part += rnd.random() < 0.05
        vertices.append((part, t, rnd.randrange(-100, 4000)))
    n = rnd.choice([0, 30, 300])
    procs = np.array([rnd.randrange(0, t + 1) for _ in range(n)], dtype=np.float64)
    skews = np.array([rnd.randrange(-200, 4200) for _ in range(n)], dtype=np.float64)
    x, y = TimeAxis("p", "ms", -10, t + 10), TimeAxis("s", "ms", -300, 4300)
    w, h = rnd.choice([(600, 300), (200, 100)])
    assert _lag_label_place(vertices, procs, skews, x, y, w, h) == _label_place_by_every_score(
        vertices, procs, skews, x, y, w, h
    )
