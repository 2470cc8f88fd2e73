"""winviz.viz.window_lanes: bars per (key, window), firings, purges, evictions and session
merges, with the exact data each mark gets."""

from __future__ import annotations

import json
from typing import Any

from jobs import count_pipeline, merge_chain_job

import winviz as wv
from winviz import viz
from winviz.viz import lanes, palette, window_lives
from winviz.viz.trace_view import open_trace


def marks(spec: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(lay["mark"]["type"], spec["datasets"][lay["data"]["name"]]) for lay in spec["layer"]]


def run(assigner, events, arrivals, **window_options) -> wv.Trace:
    env = wv.StreamExecutionEnvironment()
    windowed = (
        env.from_collection(events, arrival_times=arrivals)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(assigner)
    )
    if "trigger" in window_options:
        windowed = windowed.trigger(window_options["trigger"])
    if "evictor" in window_options:
        windowed = windowed.evictor(window_options["evictor"])
    windowed.process(lambda k, ctx, els, out: out.collect(len(list(els)))).sink_to("out")
    return env.execute().trace


def test_session_merges_are_drawn() -> None:
    trace = run(
        wv.EventTimeSessionWindows.with_gap(1500),
        [("a", 1000), ("a", 3500), ("a", 2200), ("b", 1000), ("b", 9000)],
        [0, 10, 20, 30, 40],
    )
    spec = viz.window_lanes(trace).to_dict()
    (bar, bars), (_, fired), (_, at_end), (_, merged), (_, cleaned) = marks(spec)
    assert bar == "bar"
    # each key's label on its lane's first row (sub-lane 0), its tick and grid line at the
    # lane's top: not mid-lane, between a's two rows (issue 26)
    assert spec["layer"][0]["encoding"]["y"]["axis"] == {
        "labelLimit": 160,
        "bandPosition": 0,
        "labelOffset": {
            "expr": "scale('yOffset', 0) + bandwidth('yOffset') / 2 - bandwidth('y') / 2"
        },
    }
    assert [(b["key"], b["x"], b["x2"], b["slot"], b["status"], b["closed"]) for b in bars] == [
        ("a", 1000, 2500, 0, "merged away", "merged into [1000, 5000)"),
        ("a", 1000, 5000, 1, "fired", "40"),
        ("a", 3500, 5000, 0, "merged away", "merged into [1000, 5000)"),
        ("b", 1000, 2500, 0, "fired", "40"),
        ("b", 9000, 10500, 0, "fired", "40"),
    ]
    # the surviving session counts the elements of the windows it absorbed: 3, as emitted
    assert [(b["key"], b["x"], b["elements"]) for b in bars] == [
        ("a", 1000, 1),
        ("a", 1000, 3),
        ("a", 3500, 1),
        ("b", 1000, 1),
        ("b", 9000, 1),
    ]
    # each firing at the event-time timer that fired it (the window's max timestamp), by
    # cause: b@9000 raises the watermark to 8999, which fires b's and a's first sessions;
    # b's last session fires when the input ends (watermark MAX), not "late"
    assert [(f["key"], f["x"], f["what"], f["detail"], f["cause"]) for f in fired] == [
        ("b", 2499.0, "fired: event-time timer", "1", "event-time timer at 2499"),
        ("a", 4999.0, "fired: event-time timer", "3", "event-time timer at 4999"),
    ]
    assert [(f["key"], f["x"], f["what"], f["cause"], f["watermark"]) for f in at_end] == [
        ("b", 10499.0, "fired: end of input", "event-time timer at 10499", "MAX (Long.MAX_VALUE)")
    ]
    # each window's cleanup at its cleanup time (lateness 0: its max timestamp), 8 px right
    # of a firing on the same pixel (2499 + 8 * (10881 - 715) / 640) and one step (11 px)
    # more, beside it (``piles.side_by_side``); the last, b's at 10,499, too: the axis ends
    # at 10,881, not 10,785 (10,499 + 3 %), so it reaches 24 px (8 + 11 + its half, 5) right
    # of 10,499: 715 + (10499 - 715) * 640 / (640 - 24) = 10,880.2 (issue 26: with no room
    # it was moved 22 px left, onto its own window's bar, left of its firing)
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == [715, 10881]
    assert [(c["key"], c["x"], c["dx"], c["detail"], c["proc_time"]) for c in cleaned] == [
        ("b", 2626.075, 11, "cleanup time 2,499 ms", "40"),
        ("a", 5126.075, 11, "cleanup time 4,999 ms", "40"),
        ("b", 10626.075, 11, "cleanup time 10,499 ms", "40"),
    ]
    # on the plot: its right edge (centre 615.9 + 19 px, plus 5) at 639.9 of 640 px
    px = (10626.075 - 715) * 640 / (10881 - 715) + 11 + 5
    assert 639.9 < px <= 640
    # lateness 0: no allowed-lateness horizon
    assert not [m for m, _ in marks(spec) if m == "rule"]
    # merges sit 8 px left of the merged window's start: 8 * (10881 - 715) / 640 ms
    assert [(m["key"], m["x"], m["slot"], m["detail"]) for m in merged] == [
        ("a", 872.925, 1, "merged [3500, 5000), [1000, 2500)")
    ]
    enc = spec["layer"][0]["encoding"]
    assert enc["y"]["field"] == "key" and enc["yOffset"]["field"] == "slot"
    assert enc["fill"]["scale"] == {  # (every window fired or merged away: no "not fired")
        "domain": ["fired", "merged away"],
        "range": ["#6676AE", "#E3CDB5"],  # window fired, merge tint
    }


def test_purges_and_evictions_are_drawn() -> None:
    trace = run(
        wv.TumblingEventTimeWindows.of(10),
        [("a", 1), ("a", 2), ("a", 3), ("a", 4)],
        [0, 10, 20, 30],
        trigger=wv.PurgingTrigger.of(wv.CountTrigger.of(2)),
        evictor=wv.CountEvictor.of(1),
    )
    spec = viz.window_lanes(trace).to_dict()
    layers = marks(spec)
    assert [m for m, _ in layers] == [
        "bar", "point", "text", "point", "text", "point", "text", "point"
    ]  # fmt: skip
    (_, bars), (_, fired), (_, labels), (_, purged), _, (_, evicted), _, (_, cleaned) = layers
    assert [(b["x"], b["x2"], b["elements"], b["firings"]) for b in bars] == [(0, 10, 4, 2)]
    # CountTrigger fires in onElement: cause "element" (Beam would call both panes "early");
    # at the window's end, 12 px right: it shares the pixel of the purges
    assert [(f["what"], f["n"], f["label"], f["seq"], f["cause"], f["x"]) for f in fired] == [
        ("fired: element", 2, "×2", "12, 27", "element", 10.225)
    ]
    assert labels == fired
    # the pane's two purges (two evictions) sit on one spot: one mark "×2" each, as the
    # firings (one mark per record drew the second exactly over the first)
    assert [(p["x"], p["n"], p["label"], p["detail"], p["proc_time"]) for p in purged] == [
        (10.45, 2, "×2", "reason: trigger; reason: trigger", "10, 30"),
    ]
    assert [(e["x"], e["n"], e["label"], e["seq"], e["detail"]) for e in evicted] == [
        (0.15, 2, "×2", "9, 24", 'before: [["a",1]]; before: [["a",3]]'),
    ]
    assert [(c["x"], c["detail"], c["proc_time"]) for c in cleaned] == [
        (9.0, "cleanup time 9 ms", "30")
    ]


def test_allowed_lateness_horizon_on_each_bar() -> None:
    """Allowed lateness 1000 ms: each (key, window) has a line from its end to its horizon,
    max timestamp + lateness = its cleanup time, and its cleanup mark there; the axis holds
    the last horizon (10,999 ms)."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("a", 7000), ("b", 2000)],
        5000,
        wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1]),
        lateness=1000,
        arrival_times=[0, 10, 20],
    )
    spec = viz.window_lanes(env.execute().trace).to_dict()
    rules = [
        (lay, rows)
        for lay, (m, rows) in zip(spec["layer"], marks(spec), strict=True)
        if m == "rule"
    ]
    assert len(rules) == 1
    lay, rows = rules[0]
    assert [(r["key"], r["x"], r["x2"], r["slot"], r["allowed lateness"]) for r in rows] == [
        ("a", 5000, 5999, 0, "1,000 ms"),  # cleaned when a@7000 raises the watermark
        ("b", 5000, 5999, 0, "1,000 ms"),
        # cleaned at the end of input; on a's second sub-lane: [0, 5000)'s horizon line and
        # cleanup mark reach past 5000, over where [5000, 10000) starts (issue 26)
        ("a", 10000, 10999, 1, "1,000 ms"),
    ]
    assert lay["encoding"]["strokeDash"]["scale"]["domain"] == [
        "accepts late elements until max timestamp + lateness"
    ]
    cleaned = [r for m, rows in marks(spec) for r in rows if r.get("what") == "cleanup"]
    assert sorted((c["key"], c["detail"]) for c in cleaned) == [
        ("a", "cleanup time 10,999 ms"),
        ("a", "cleanup time 5,999 ms"),
        ("b", "cleanup time 5,999 ms"),
    ]
    # 0 .. 10,999 padded by 3 % (330 ms) each side
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == [-330, 11329]


def test_global_window_has_no_lanes() -> None:
    trace = run(
        wv.GlobalWindows.create(),
        [("a", 1)],
        [0],
        trigger=wv.CountTrigger.of(1),
    )
    spec = viz.window_lanes(trace).to_dict()
    assert spec["usermeta"]["winviz"] == {
        "chart": "window_lanes",
        "status": "message",
        "message": "Operator 'window' has no time windows.",
    }


def test_lanes_with_more_keys_than_lanes_keep_the_busiest() -> None:
    """Regression: 31 keys (62 records) crashed with "Cannot use method 'nlargest' with dtype
    object"."""
    env = wv.StreamExecutionEnvironment()
    events = [(f"k{i:02d}", 1_000 * (i % 3)) for i in range(31)] + [("k07", 100)] * 5
    count_pipeline(env, events, 5_000, arrival_interval=10)
    spec = viz.window_lanes(env.execute().trace, max_keys=30).to_dict()
    keys = {r["key"] for rows in spec["datasets"].values() for r in rows if "key" in r}
    assert len(keys) == 30 and "k07" in keys


def test_max_bars_when_the_earliest_windows_all_start_together() -> None:
    # sliding windows of one key at 0 with keys a, b, c: the three earliest windows all
    # start at -1000; max_bars=2 keeps two of them instead of none (was: NaN slot, crash)
    trace = run(
        wv.SlidingEventTimeWindows.of(2000, 1000),
        [("a", 500), ("b", 500), ("c", 500)],
        [0, 10, 20],
    )
    spec = viz.window_lanes(trace, max_bars=2).to_dict()
    (_, bars), *_ = marks(spec)
    assert [(b["key"], b["x"], b["x2"]) for b in bars] == [("a", -1000, 1000), ("b", -1000, 1000)]
    assert "bars: 2 of the earliest windows (all starting at -1,000)" in json.dumps(spec)
    spec = viz.window_lanes(trace, max_bars=4).to_dict()  # the usual cut: whole columns
    (_, bars), *_ = marks(spec)
    assert [(b["key"], b["x"]) for b in bars] == [("a", -1000), ("b", -1000), ("c", -1000)]


def rows_of(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for _, rows in marks(spec) for r in rows if r.get("kind") == kind]


CHAIN_3 = "[1000, 3500) at 20 ms → [1000, 5000) at 40 ms → [1000, 6500) at 60 ms"
CHAIN_2 = "[1000, 5000) at 40 ms → [1000, 6500) at 60 ms"
RULE = "max timestamp + the operator's allowed lateness"


def test_a_chain_of_merges_names_each_merge_result() -> None:
    """``merge_chain_job``: [1000, 2000) merged into [1000, 3500) at 20 ms, which merged into
    [1000, 5000) at 40 ms, which merged into [1000, 6500) at 60 ms — each step the merge result
    of one ``merged`` record (Flink's ``MergingWindowSet.addWindow``), the contents ending in
    the window that fired. The bar and its horizon line say so, not only "merged into
    [1000, 3500)"."""
    trace = merge_chain_job().trace
    chains = window_lives.merge_chains(open_trace(trace), "window")
    three = window_lives.MergeChain(
        ((1000, 3500, 20), (1000, 5000, 40), (1000, 6500, 60)), (1000, 6500, 60), 3
    )
    two = window_lives.MergeChain(((1000, 5000, 40), (1000, 6500, 60)), (1000, 6500, 60), 2)
    one = window_lives.MergeChain(((1000, 6500, 60),), (1000, 6500, 60), 1)
    assert chains == {
        ("a", 1000, 2000): three,
        ("a", 2500, 3500): three,
        ("a", 1000, 3500): two,
        ("a", 4000, 5000): two,
        ("a", 1000, 5000): one,
        ("a", 5500, 6500): one,
    }
    spec = viz.window_lanes(trace).to_dict()
    bars = [
        (b["window"], b["status"], b["closed"], b["merge chain"]) for b in rows_of(spec, "window")
    ]
    assert bars == [
        ("[1,000 ms, 2,000 ms)", "merged away", "merged into [1000, 3500)", CHAIN_3),
        ("[1,000 ms, 3,500 ms)", "merged away", "merged into [1000, 5000)", CHAIN_2),
        (
            "[1,000 ms, 5,000 ms)",
            "merged away",
            "merged into [1000, 6500)",
            "[1000, 6500) at 60 ms",
        ),
        ("[1,000 ms, 6,500 ms)", "fired", "60", ""),
        ("[2,500 ms, 3,500 ms)", "merged away", "merged into [1000, 3500)", CHAIN_3),
        ("[4,000 ms, 5,000 ms)", "merged away", "merged into [1000, 5000)", CHAIN_2),
        (
            "[5,500 ms, 6,500 ms)",
            "merged away",
            "merged into [1000, 6500)",
            "[1000, 6500) at 60 ms",
        ),
    ]
    tips = [t["field"] for t in spec["layer"][0]["encoding"]["tooltip"]]
    assert tips[-2:] == ["merged_into", "merge chain"]
    # each merged-away window's own horizon (its cleanup timer until the merge deleted it);
    # its contents then wait for the last merge result's, [1000, 6500)'s 6999
    lines = {
        r["window"]: (r["x"], r["x2"], r["from"]) for r in rows_of(spec, "allowed-lateness horizon")
    }
    assert lines == {
        "[1,000 ms, 6,500 ms)": (6500, 6999, "its cleanup record"),
        "[1,000 ms, 2,000 ms)": (2000, 2499, via("[1000, 3500) at 20 ms", 2)),
        "[1,000 ms, 3,500 ms)": (3500, 3999, via("[1000, 5000) at 40 ms", 1)),
        "[1,000 ms, 5,000 ms)": (5000, 5499, via("[1000, 6500) at 60 ms", 0)),
        "[2,500 ms, 3,500 ms)": (3500, 3999, via("[1000, 3500) at 20 ms", 2)),
        "[4,000 ms, 5,000 ms)": (5000, 5499, via("[1000, 5000) at 40 ms", 1)),
        "[5,500 ms, 6,500 ms)": (6500, 6999, via("[1000, 6500) at 60 ms", 0)),
    }
    # the timeline's horizon lines (``bands``, one per window over all keys) say the same
    timeline = viz.timeline(trace, view="timeline").to_dict()
    drawn = [
        (r["window"], r["from"])
        for lay in timeline["layer"]
        for r in timeline["datasets"][(lay.get("data") or timeline["data"])["name"]]
        if r.get("kind") == "allowed-lateness horizon"
    ]
    assert sorted(drawn) == sorted((w, f) for w, (_, _, f) in lines.items())


def via(first: str, more: int) -> str:
    """The horizon tooltip's "from" of a window of ``merge_chain_job`` merged into ``first``
    ("[s, e) at t ms"), then through ``more`` merges to [1000, 6500) at 60 ms."""
    on = f", then on through {more} more merge(s) to [1000, 6500) at 60 ms" if more else ""
    return f"{RULE} (merged into {first}{on}: its contents then wait for that window's horizon)"


def test_a_long_chain_names_its_first_merges_and_its_last() -> None:
    steps = ((0, 20, 1), (0, 30, 2), (0, 40, 3))
    assert window_lives.chain_text(window_lives.MergeChain(steps, (0, 50, 4), 4)) == (
        "[0, 20) at 1 ms → [0, 30) at 2 ms → [0, 40) at 3 ms → [0, 50) at 4 ms"
    )
    assert window_lives.chain_text(window_lives.MergeChain(steps, (0, 90, 1500), 9)) == (
        "[0, 20) at 1 ms → [0, 30) at 2 ms → [0, 40) at 3 ms → … 5 more … → [0, 90) at 1,500 ms"
    )


AGGREGATED = "allowed-lateness horizons (aggregated)"


def test_aggregated_lanes_draw_the_span_of_horizons_per_cell() -> None:
    """Aggregated lanes (30 windows of 100 ms in a 40 px lane: 5 cells of 600 ms of window
    starts), allowed lateness 250 ms: per cell a line from its earliest horizon (its first
    window's max timestamp + 250) to its latest, every one read off a cleanup record; the axis
    holds the last horizon, 3,249 ms."""
    env = wv.StreamExecutionEnvironment()
    events = [("a", t) for t in range(0, 3000, 100)]
    count_pipeline(env, events, 100, arrival_interval=10, lateness=250)
    spec = viz.window_lanes(env.execute().trace, width=40).to_dict()
    lines = rows_of(spec, AGGREGATED)
    assert [
        (
            r["x"],
            r["x2"],
            r["windows starting in"],
            r["windows with a horizon"],
            r["earliest horizon"],
            r["latest horizon"],
            r["derived (no cleanup record)"],
        )
        for r in lines
    ] == [
        (
            b + 349,
            b + 849,
            f"[{b:,} ms, {b + 600:,} ms)",
            6,
            f"{b + 349:,} ms",
            f"{b + 849:,} ms",
            0,
        )
        for b in range(0, 3000, 600)
    ]
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == [-97, 3346]  # 0 .. 3249, 3 %
    assert spec["title"]["subtitle"][-1] == (
        "allowed lateness 250 ms: per cell a line from the earliest to the latest horizon "
        "(max timestamp + lateness) of its windows"
    )
    # lateness 0: no horizon, no line
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, events, 100, arrival_interval=10)
    spec = viz.window_lanes(env.execute().trace, width=40).to_dict()
    assert rows_of(spec, AGGREGATED) == [] and len(spec["layer"]) == 1


def test_aggregated_lanes_count_the_derived_horizons_of_merged_away_windows() -> None:
    """``merge_chain_job`` at 20 px: 7 windows > 5, two cells of 2,750 ms of starts. The first
    holds [1000, 2000), [1000, 3500), [1000, 5000), [1000, 6500) and [2500, 3500): horizons
    2,499 .. 6,999, four derived (merged away: no cleanup record); the second [4000, 5000) and
    [5500, 6500), both merged away: 5,499 .. 6,999."""
    spec = viz.window_lanes(merge_chain_job().trace, width=20).to_dict()
    assert [
        (r["x"], r["x2"], r["windows with a horizon"], r["derived (no cleanup record)"])
        for r in rows_of(spec, AGGREGATED)
    ] == [(2499, 6999, 5, 4), (5499, 6999, 2, 2)]
    # 7 elements, each counted once: all in the pane of [1000, 6500) that fired (the merged-away
    # windows' elements went into it)
    cells = rows_of(spec, "windows (aggregated)")
    assert [(c["windows"], c["merged away"], c["elements"]) for c in cells] == [
        (5, 4, 7),
        (2, 2, 0),
    ]


def _marks_on_other_bars(spec: dict[str, Any]) -> list[str]:
    """Every event mark (drawn ``dx`` px beside its ``x``, ``MARK_HALF_PX`` either side) and
    every horizon line lying on the bar of another window on its sub-lane, in pixels of the
    chart's x scale (issue 26)."""
    from winviz.viz.lanes import MARK_HALF_PX

    lo, hi = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    px_per_ms = spec["width"] / (hi - lo)
    bars: dict[tuple[Any, Any], list[tuple[float, float, str]]] = {}
    found = []
    for m, rows in marks(spec):
        if m == "bar":
            for r in rows:
                span = ((r["x"] - lo) * px_per_ms, (r["x2"] - lo) * px_per_ms, r["window"])
                bars.setdefault((r["key"], r["slot"]), []).append(span)
    for m, rows in marks(spec):
        for r in rows if m in ("point", "rule") else []:
            c = (r["x"] - lo) * px_per_ms + r.get("dx", 0)
            a, b = (
                (c - MARK_HALF_PX, c + MARK_HALF_PX)
                if m == "point"
                else (c, (r["x2"] - lo) * px_per_ms)
            )
            what = r.get("what", "horizon")
            for s, e, window in bars.get((r["key"], r["slot"]), []):
                if window != r["window"] and a < e and b > s:
                    found.append(f"{what} of {r['key']} {r['window']} on {window}")
    return found


def _lesson_02_runs() -> dict[str, wv.JobExecutionResult]:
    """Lesson 02's explorers' runs as the new-user trial drew them (the clickstream's first
    minute, 5 pages): sliding 10 s every 5 s, and sessions of gap 3 s."""
    from winviz import datasets

    clicks = datasets.clickstream()
    first = clicks[0].event_time - clicks[0].event_time % 60_000
    minute = [c for c in clicks if c.event_time < first + 60_000]

    def run(window: Any) -> wv.JobExecutionResult:
        env = wv.StreamExecutionEnvironment()
        (
            env.from_collection(minute, arrival_times=[c.arrival_time for c in minute])
            .assign_timestamps_and_watermarks(
                wv.WatermarkStrategy.no_watermarks().with_timestamp_assigner(
                    lambda c, _: c.event_time
                )
            )
            .key_by(lambda c: c.page)
            .window(window)
            .aggregate(wv.CountAggregate())
            .sink_to("windows")
        )
        return env.execute()

    return {
        "sliding 10 s / 5 s": run(wv.SlidingEventTimeWindows.of(10_000, 5_000)),
        "sessions gap 3 s": run(wv.EventTimeSessionWindows.with_gap(3_000)),
    }


def test_no_mark_or_horizon_lies_on_another_windows_bar() -> None:
    """Issue 26: a cleanup mark drawn beside its window's end sat on the next window packed
    into the sub-lane, and horizon lines crossed later bars. The sub-lanes reserve each bar's
    marks and horizon: on lesson 02's explorers and the gallery's lane jobs no mark or horizon
    touches another window's bar, with these sub-lane counts (rows over all keys)."""
    from chart_jobs import late_union_job, session_job

    runs = {
        **_lesson_02_runs(),
        "sessions (gallery)": session_job(),
        "late union": late_union_job(),
    }
    rows = {}
    for name, run in runs.items():
        spec = viz.window_lanes(run).to_dict()
        assert _marks_on_other_bars(spec) == [], name
        bars = [r for m, rs in marks(spec) if m == "bar" for r in rs]
        rows[name] = len({(r["key"], r["slot"]) for r in bars})
    # (main before: 10, 14, 30 and 3 rows, with 94, 14, 121 and 84 marks or horizons on
    # another window's bar)
    assert rows == {
        "sliding 10 s / 5 s": 15,  # 3 per page: a window's firing and cleanup reach past
        "sessions gap 3 s": 17,  # its end, where the window after the next one starts
        "sessions (gallery)": 39,
        "late union": 6,
    }


def test_the_axis_gives_the_marks_beside_their_times_room() -> None:
    """``lanes._with_room``: an axis 0..1000 ms on 100 px; a mark at 1000 ms drawn 11 px right
    of it reaches 16 px past its time (its half: 5 px): the axis ends at 1000 * 100 / 84 =
    1190.5 → 1191 ms, where 1000 ms is at 84 px; one at 0 ms drawn 11 px left starts at
    -191 ms; marks on the plot leave the axis as it is (None)."""
    axis = palette.TimeAxis("event time", "ms", 0, 1000)
    right = lanes._with_room(axis, [1000], [{"x": 1000, "dx": 11}], 100)
    assert (right.lo, right.hi, right.kind, right.title) == (0, 1191, "ms", "event time")
    assert 1000 * 100 / 1191 + 16 <= 100 < 1000 * 100 / 1190 + 16
    left = lanes._with_room(axis, [0], [{"x": 0, "dx": -11}], 100)
    assert (left.lo, left.hi) == (-191, 1000)
    # a mark moved 8 px right in event time (its ``x``) and 11 px more (``dx``): 24 px
    moved = lanes._with_room(axis, [1000], [{"x": 1080, "dx": 11}], 100)
    assert (moved.lo, moved.hi) == (0, 1316)  # 1000 * 100 / 76 = 1315.8
    fits = [{"x": 940, "dx": 0}, {"x": 60, "dx": 0}, {"x": 500, "dx": -11}]
    assert lanes._with_room(axis, [940, 60, 500], fits, 100) is None


def test_lane_rows_alike_are_placed_once_as_the_rule_places_them_all(monkeypatch: Any) -> None:
    """``lanes._side_by_side``: five marks at 0 ms in the lanes of keys a and b (sub-lane 0),
    two in a's sub-lane 1, interleaved; an edge 30 px in: a pile takes its point and 11, 22 px
    right, the rest are counted on its first mark. Rows alike (a/0 and b/0) are placed once
    (``piles.side_by_side`` called for two rows of three), and every mark where the rule
    places the whole chart at once (its lane rows 44 px apart: they never meet)."""
    from winviz.viz import labels, piles

    axis = palette.TimeAxis("event time", "ms", 0, 1000)
    order = [("a", 0), ("b", 0), ("a", 1), ("a", 0), ("b", 0), ("a", 1)] + [("a", 0), ("b", 0)] * 3

    def rows() -> list[dict[str, Any]]:
        return [{"x": 0.0, "key": k, "slot": s, "seq": i} for i, (k, s) in enumerate(order)]

    lane = {row: i for i, row in enumerate(dict.fromkeys(order))}
    whole = piles.side_by_side(
        [(0.0, 44.0 * lane[row]) for row in order], 11, 30, most=labels.STACK_STEPS
    )
    calls = []
    rule = piles.side_by_side
    monkeypatch.setattr(piles, "side_by_side", lambda *a, **k: calls.append(a) or rule(*a, **k))
    drawn = lanes._side_by_side(rows(), axis, 100, 30)
    assert [len(c[0]) for c in calls] == [5, 2]
    got = {r["seq"]: (r["dx"], r[piles.ALSO_HERE]) for r in drawn}
    assert got == {
        0: (0, 2), 1: (0, 2), 2: (0, 0), 3: (11, 0), 4: (11, 0), 5: (11, 0), 6: (22, 0),
        7: (22, 0),
    }  # fmt: skip
    assert [got.get(i, (0, 0))[0] for i in range(len(order))] == whole.dx
    assert sum(c is not None for c in whole.counted_on) == len(order) - len(drawn) == 4
