"""The timeline's, timers chart's, scrubber's and lanes' cues (issue 26): merges, lateness
horizons of every window (merged-away ones too), idle periods, trigger vs cleanup timers,
firings on the scrubber, paused spans — each checked with exact values on a small job run on
the real engine."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import aligned_job, count_pipeline

import winviz as wv
from winviz import viz
from winviz.viz import window_lives
from winviz.viz.firings import firings, late_firing_count
from winviz.viz.trace_view import open_trace, window_operators


def session_job(idle: int | None = None) -> wv.JobExecutionResult:
    """Session windows (gap 1500 ms), allowed lateness 500 ms, watermark = largest timestamp − 1.

    a@1000 at 0 ms → [1000, 2500); a@3000 at 100 ms → [3000, 4500); at 200 ms the watermark
    2999 fires and cleans [1000, 2500) (cleanup time 2999), then the late a@2000 opens
    [2000, 3500), which merges with [3000, 4500) into [2000, 4500); a@9000 at 300 ms, then
    the watermark 8999 fires and cleans [2000, 4500) (cleanup time 4999)."""
    env = wv.StreamExecutionEnvironment()
    strategy = wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
        lambda e, _: e[1]
    )
    if idle is not None:
        strategy = strategy.with_idleness(idle)
    (
        env.from_collection(
            [("a", 1000), ("a", 3000), ("a", 2000), ("a", 9000)], arrival_times=[0, 100, 200, 300]
        )
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(1500))
        .allowed_lateness(500)
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute()


@pytest.fixture(scope="module")
def sessions() -> wv.JobExecutionResult:
    return session_job()


def rows_of(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The data rows of every layer whose first row has this ``kind``."""
    out = []
    for lay in spec["layer"]:
        rows = spec["datasets"][(lay.get("data") or spec["data"])["name"]]
        if rows and rows[0].get("kind") == kind:
            out.extend(rows)
    return out


def test_merge_marks(sessions) -> None:
    spec = viz.timeline(sessions.trace, view="timeline").to_dict()
    merged = [r for r in sessions.trace.records("merged")]
    assert rows_of(spec, "merged") == [
        {
            "x": 3000,  # the corner where [3000, 4500)'s band ends (not on a@2000)
            "y": 200,
            "what": "merged",
            "kind": "merged",
            "seq": str(merged[0].seq),
            "key": "a",
            "merged away": "[3,000 ms, 4,500 ms)",
            "into": "[2,000 ms, 4,500 ms)",
            "proc_time": "200 ms",
            "watermark": "2,999 ms",
            "note": "",
        }
    ]
    assert (
        '1 session merge ("merged": at the start of each window merged away, when it merged)'
        in (spec["title"]["subtitle"])
    )
    legend = spec["layer"][0]  # the "what happened" scale is set on every coloured layer
    colours = [
        lay["encoding"]["color"]["scale"]
        for lay in spec["layer"]
        if lay["encoding"].get("color", {}).get("field") == "what"
    ]
    assert legend and all("merged" in c["domain"] for c in colours)
    assert all(c["range"][c["domain"].index("merged")] == "#543005" for c in colours)  # merge


HORIZON = "allowed-lateness horizon"
RULE = "max timestamp + the operator's allowed lateness"


def test_horizon_of_a_merged_away_window(sessions) -> None:
    """[3000, 4500) was merged away at 200 ms: it has no cleanup record (its cleanup timer
    4999 was deleted at the merge), yet its horizon, 4499 + 500, is drawn over its life."""
    spec = viz.timeline(sessions.trace, view="timeline").to_dict()
    got = [(r["window"], r["x"], r["y"], r["y2"], r["from"]) for r in rows_of(spec, HORIZON)]
    assert got == [
        ("[1,000 ms, 2,500 ms)", 2999, 0, 200, "its cleanup record"),
        ("[2,000 ms, 4,500 ms)", 4999, 200, 300, "its cleanup record"),
        (
            "[3,000 ms, 4,500 ms)",
            4999,
            100,
            200,
            f"{RULE} (merged into [2000, 4500) at 200 ms: its contents then wait for that "
            "window's horizon)",
        ),
        # opened and closed at 300 ms: drawn over its band as drawn, 8 px (bands.MIN_BAND_PX)
        ("[9,000 ms, 10,500 ms)", 10999, 296.58, 303.42, "its cleanup record"),
    ]
    deleted = [
        r.ts
        for r in sessions.trace.records("timer_deleted")
        if r.window is not None and (r.window.start, r.window.end) == (3000, 4500)
    ]
    assert 4999 in deleted  # the merge deleted its cleanup timer: no cleanup record
    assert not [
        r
        for r in sessions.trace.records("cleanup")
        if (r.window.start, r.window.end) == (3000, 4500)
    ]


def test_horizons_read_once_for_the_lanes_and_the_timeline(sessions) -> None:
    """``window_lives.every_horizon``: each window's cleanup time past its max timestamp, read off
    its ``cleanup`` record (4999 = 4499 + 500 for [2000, 4500); [9000, 10500) cleaned at the
    end of input at 10499 + 500); the merged-away [3000, 4500) has no record, so none there:
    ``every_horizon`` derives its horizon (4499 + 500), the one rule the timeline (above) and
    the lanes (below) both draw, one line per key's bar. A trace cut before a cleanup has only
    the earlier records; with lateness 0, none."""
    view = open_trace(sessions.trace)
    expected = {(1000, 2500): 2999, (2000, 4500): 4999, (9000, 10500): 10999}
    assert window_lives.allowed_lateness(view, "window") == 500
    assert window_lives.every_horizon(view, "window") == (
        {**expected, (3000, 4500): 4999},
        frozenset({(3000, 4500)}),
    )
    lanes = viz.window_lanes(sessions.trace).to_dict()
    drawn = [(r["window"], r["x2"]) for r in rows_of(lanes, HORIZON)]
    assert drawn == [
        ("[1,000 ms, 2,500 ms)", 2999),
        ("[2,000 ms, 4,500 ms)", 4999),
        ("[9,000 ms, 10,500 ms)", 10999),
        ("[3,000 ms, 4,500 ms)", 4999),  # merged away: no record, the rule's horizon
    ]
    timeline = viz.timeline(sessions.trace, view="timeline").to_dict()
    assert sorted(drawn) == sorted((r["window"], r["x"]) for r in rows_of(timeline, HORIZON))
    found, derived = window_lives.every_horizon(open_trace(sessions.trace.until(250)), "window")
    assert {w: t for w, t in found.items() if w not in derived} == {(1000, 2500): 2999}
    # allowed lateness 0: every window is cleaned at its max timestamp, no horizon beyond it
    trace = count_pipeline(wv.StreamExecutionEnvironment(), [("a", 1000)], 5000).execute().trace
    assert window_lives.every_horizon(open_trace(trace), "window") == ({}, frozenset())


MERGED_ENTRY = "merged away: its cleanup timer, deleted at the merge"


def test_lanes_horizon_of_a_merged_away_window(sessions) -> None:
    """The lanes draw the merged-away [3000, 4500) a horizon line too (``every_horizon``, as
    the timeline): on its own bar (key a, sub-lane 2: sub-lane 0 is [1000, 2500)'s up to its
    horizon and marks, [2000, 4500) is on sub-lane 1) from its
    end 4500 to its cleanup time 4999 = 4499 + 500, the cleanup timer Flink registered for it
    and deleted at the merge (a ``timer_deleted`` record, no ``cleanup`` record), with its
    own legend entry and a tooltip naming the window its contents went into."""
    spec = viz.window_lanes(sessions.trace).to_dict()
    bars = {r["window"]: (r["key"], r["slot"], r["status"]) for r in rows_of(spec, "window")}
    assert bars["[3,000 ms, 4,500 ms)"] == ("a", 2, "merged away")
    assert bars["[2,000 ms, 4,500 ms)"] == ("a", 1, "fired")
    merged = [r for r in rows_of(spec, HORIZON) if r["window"] == "[3,000 ms, 4,500 ms)"]
    assert merged == [
        {
            "x": 4500,
            "x2": 4999,
            "key": "a",
            "slot": 2,
            "line": MERGED_ENTRY,
            "kind": HORIZON,
            "window": "[3,000 ms, 4,500 ms)",
            "max timestamp": "4,499 ms",
            "allowed lateness": "500 ms",
            "horizon": "4,999 ms",
            "from": f"{RULE} (merged into [2000, 4500) at 200 ms: its contents then wait for "
            "that window's horizon)",
        }
    ]
    recorded = [r["from"] for r in rows_of(spec, HORIZON) if r is not merged[0]]
    assert recorded == ["its cleanup record"] * 3
    (layer,) = [lay for lay in spec["layer"] if lay["mark"]["type"] == "rule"]
    assert layer["encoding"]["strokeDash"]["scale"] == {
        "domain": ["accepts late elements until max timestamp + lateness", MERGED_ENTRY],
        "range": [[3, 2], [1, 2]],
    }
    assert {"field": "from", "type": "nominal"} in layer["encoding"]["tooltip"]


def test_lanes_horizon_of_a_window_still_open(sessions) -> None:
    """Cut at 250 ms: the lanes draw [2000, 4500)'s horizon (still open: no cleanup record
    yet) from the rule, and the axis reaches it (1000 .. 4999 padded 3 %: 120 ms)."""
    spec = viz.window_lanes(sessions.trace.until(250)).to_dict()
    got = [(r["window"], r["slot"], r["x"], r["x2"], r["from"]) for r in rows_of(spec, HORIZON)]
    assert got == [
        ("[1,000 ms, 2,500 ms)", 0, 2500, 2999, "its cleanup record"),
        ("[2,000 ms, 4,500 ms)", 1, 4500, 4999, f"{RULE} (still open at the end)"),
        (
            "[3,000 ms, 4,500 ms)",
            2,
            4500,
            4999,
            f"{RULE} (merged into [2000, 4500) at 200 ms: its contents then wait for that "
            "window's horizon)",
        ),
    ]
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == [880, 5119]
    # cut at 150 ms: nothing cleaned yet, no lateness known, no horizon guessed
    assert rows_of(viz.window_lanes(sessions.trace.until(150)).to_dict(), HORIZON) == []


def test_horizon_of_a_window_still_open(sessions) -> None:
    """Cut at 250 ms: [2000, 4500) is still open (no cleanup record yet); its horizon comes
    from the rule with the lateness of [1000, 2500)'s cleanup (2999 − 2499 = 500)."""
    spec = viz.timeline(sessions.trace.until(250), view="timeline").to_dict()
    got = {r["window"]: (r["x"], r["from"]) for r in rows_of(spec, HORIZON)}
    assert got["[2,000 ms, 4,500 ms)"] == (4999, f"{RULE} (still open at the end)")
    assert got["[1,000 ms, 2,500 ms)"] == (2999, "its cleanup record")


def test_no_horizon_derived_before_any_cleanup(sessions) -> None:
    """Cut at 150 ms: no cleanup record yet, so the allowed lateness is not known from the
    trace and no horizon is drawn (none guessed)."""
    spec = viz.timeline(sessions.trace.until(150), view="timeline").to_dict()
    assert rows_of(spec, HORIZON) == []


def idle_job() -> wv.JobExecutionResult:
    """Two partitions with ``with_idleness(300)`` (as test_why's): partition 0 reads a@1000,
    a@3000, a@4500 (at 0, 500, 1350 ms) then a@9000 at 2500; partition 1 gets nothing. kafka[1]
    goes idle at 600 for good; kafka[0] is idle 1200–1400 and 2000–2500, and then every input
    of 'watermarks' is idle: the operator is idle over the same spans."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [[("a", 1_000), ("a", 3_000), ("a", 4_500), ("a", 9_000)], []],
        5_000,
        wv.WatermarkStrategy.for_bounded_out_of_orderness(0)
        .with_timestamp_assigner(lambda e, _: e[1])
        .with_idleness(300),
        partitioned=True,
        arrival_times=[[0, 500, 1_350, 2_500], []],
        name="kafka",
    )
    return env.execute()


IDLE_SPANS = [
    ("kafka[1]", 600, "600 ms", "end of trace"),
    ("kafka[0]", 1200, "1,200 ms", "1,400 ms"),
    ("kafka[0]", 2000, "2,000 ms", "2,500 ms"),
    ("watermarks (all inputs)", 1200, "1,200 ms", "1,400 ms"),
    ("watermarks (all inputs)", 2000, "2,000 ms", "2,500 ms"),
]
IDLE_NOTE = (
    "5 idle periods (grey strips along the left edge, left to right: kafka[1], kafka[0], "
    "watermarks (all inputs))"
)


def test_idle_periods_on_the_timeline() -> None:
    spec = viz.timeline(idle_job().trace, view="timeline").to_dict()
    strips = rows_of(spec, "idle")
    assert [(r["idle"], r["y"], r["idle from"], r["idle until"]) for r in strips] == IDLE_SPANS
    y_hi = spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1]
    assert [r["y2"] for r in strips] == [y_hi, 1400, 2500, 1400, 2500]  # still idle: the edge
    # one column per input, left to right, inside the axis' left padding
    lo, hi = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    width = (hi - lo) * 0.006
    assert [r["x"] for r in strips] == [round(lo + i * width * 1.25, 3) for i in (0, 1, 1, 2, 2)]
    assert max(r["x2"] for r in strips) < 1_000  # left of the first element
    assert IDLE_NOTE in spec["title"]["subtitle"]


def test_idle_periods_on_the_scrubber() -> None:
    spec = viz.scrubber(idle_job().trace).to_dict()
    (layer,) = [
        lay
        for lay in spec["layer"]
        if spec["datasets"][lay["data"]["name"]][0].get("kind") == "idle"
    ]
    strips = spec["datasets"][layer["data"]["name"]]
    assert [(r["idle"], r["y"], r["idle from"], r["idle until"]) for r in strips] == IDLE_SPANS
    # as they stand at t: begun by t, drawn up to min(end, t)
    assert layer["transform"] == [
        {"filter": "datum.y <= t"},
        {"calculate": "datum.y2 < t ? datum.y2 : t", "as": "y2_at_t"},
    ]
    assert layer["encoding"]["y2"] == {"field": "y2_at_t"}
    assert IDLE_NOTE + " as they stand at t" in spec["title"]["subtitle"]


def test_no_idle_strips_without_idleness(sessions) -> None:
    assert rows_of(viz.timeline(sessions.trace, view="timeline").to_dict(), "idle") == []
    assert rows_of(viz.scrubber(sessions.trace).to_dict(), "idle") == []


def timer_rules(spec: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The timers chart's rule layer and its rows."""
    for lay in spec["hconcat"][0]["layer"]:
        rows = spec["datasets"][lay["data"]["name"]]
        if rows and rows[0].get("kind") == "timer":
            return lay, rows
    raise AssertionError("no timer layer")


def test_trigger_and_cleanup_timers_told_apart(sessions) -> None:
    spec = viz.timers_chart(sessions.trace).to_dict()
    layer, rules = timer_rules(spec)
    assert [(r["timestamp"], r["namespace"], r["end"], r["set by"]) for r in rules] == [
        ("2,499 ms", "[1000, 2500)", "fired", "trigger timer"),
        ("2,999 ms", "[1000, 2500)", "fired", "cleanup timer"),
        ("4,499 ms", "[3000, 4500)", "deleted", "trigger timer"),
        ("4,999 ms", "[3000, 4500)", "deleted", "cleanup timer"),  # deleted at the merge
        ("4,499 ms", "[2000, 4500)", "fired", "trigger timer"),
        ("4,999 ms", "[2000, 4500)", "fired", "cleanup timer"),
        ("10,499 ms", "[9000, 10500)", "fired", "trigger timer"),
        ("10,999 ms", "[9000, 10500)", "fired", "cleanup timer"),
    ]
    assert layer["encoding"]["strokeWidth"] == {
        "field": "set by",
        "type": "ordinal",
        "sort": ["trigger timer", "cleanup timer"],
        "title": "timer set by",
        "scale": {"domain": ["trigger timer", "cleanup timer"], "range": [2.5, 1.0]},
    }
    assert (
        "set by (derived with WindowOperator.cleanupTime: the trace does not record it): "
        "4 trigger timers, 4 cleanup timers; cleanup timers are thin"
    ) in spec["usermeta"]["winviz"]["notes"]
    # every timer whose firing cleaned its window up is drawn as a cleanup timer
    cleaned = {(r.window.start, r.window.end, r.detail) for r in sessions.trace.records("cleanup")}
    fired_cleanups = {
        (r["namespace"], r["timestamp"]) for r in rules if r["set by"] == "cleanup timer"
    }
    assert {(f"[{s}, {e})", f"{t:,} ms") for s, e, t in cleaned} <= fired_cleanups


def test_one_timer_for_trigger_and_cleanup_without_lateness() -> None:
    """Allowed lateness 0: the EventTimeTrigger's timer at the max timestamp is the cleanup
    timer too (one timer; the second registration is de-duplicated)."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, [("a", 1_000)], 5_000)
    _, rules = timer_rules(viz.timers_chart(env.execute().trace).to_dict())
    assert [(r["timestamp"], r["set by"]) for r in rules] == [
        ("4,999 ms", "cleanup timer at the max timestamp (the trigger's too)")
    ]


def test_timer_role_not_known_before_any_cleanup(sessions) -> None:
    """Cut at 150 ms: no cleanup record yet, so the allowed lateness (and which timer is the
    cleanup timer) is not known from the trace: said so, not guessed."""
    _, rules = timer_rules(viz.timers_chart(sessions.trace.until(150)).to_dict())
    assert {r["set by"] for r in rules} == {"trigger or cleanup (no cleanup record yet)"}


def test_timeline_cleanups_name_their_timer(sessions) -> None:
    spec = viz.timeline(sessions.trace, view="timeline").to_dict()
    assert [(r["window"], r["timer"]) for r in rows_of(spec, "cleanup")] == [
        ("[1,000 ms, 2,500 ms)", "the operator's cleanup timer (not the trigger's)"),
        ("[2,000 ms, 4,500 ms)", "the operator's cleanup timer (not the trigger's)"),
        ("[9,000 ms, 10,500 ms)", "the operator's cleanup timer (not the trigger's)"),
    ]


def test_scrubber_draws_firings(sessions) -> None:
    spec = viz.scrubber(sessions.trace).to_dict()
    (layer,) = [
        lay
        for lay in spec["layer"]
        if spec["datasets"][lay["data"]["name"]][0].get("kind") == "fired"
    ]
    assert spec["datasets"][layer["data"]["name"]] == [
        {
            "x": 2499,  # the timer's event time, as on the timeline
            "y": 200,
            "fired": 200,
            "what": "fired: event-time timer",
            "kind": "fired",
            "firings": 1,
            "window": "[1,000 ms, 2,500 ms)",
            "proc_time": "200 ms",
            "firing": "first firing",  # (the one vocabulary, as the timeline's tooltip)
            "dx": 0,  # no other firing mark near it
        },
        {
            "x": 4499,
            "y": 300,
            "fired": 300,
            "what": "fired: event-time timer",
            "kind": "fired",
            "firings": 1,
            "window": "[2,000 ms, 4,500 ms)",
            "proc_time": "300 ms",
            "firing": "first firing",  # (the one vocabulary, as the timeline's tooltip)
            "dx": 0,  # no other firing mark near it
        },
        {
            "x": 10499,
            "y": 300,
            "fired": 300,
            "what": "fired: end of input",
            "kind": "fired",
            "firings": 1,
            "window": "[9,000 ms, 10,500 ms)",
            "proc_time": "300 ms",
            "firing": "first firing",  # (the one vocabulary, as the timeline's tooltip)
            "dx": 0,  # no other firing mark near it
        },
    ]
    assert layer["transform"] == [{"filter": "datum.fired <= t"}]  # made by t
    # the timeline's colours for the causes
    assert layer["encoding"]["color"]["scale"] == {
        "domain": ["fired: event-time timer", "fired: end of input"],
        "range": ["#009E73", "#000000"],  # the event-time timer's green, the watermark's black
    }
    assert (
        "3 firings (squares, by cause, as on the timeline) shown once made"
        in (spec["title"]["subtitle"])
    )


def test_scrubber_skew_mode(sessions) -> None:
    """view="skew": the skew chart's axes (x processing time, y processing time − event
    time), every timed layer drawn up to t, a firing at (its processing time, processing time
    − its timer's time), and the slider over the run's processing times."""
    spec = viz.scrubber(sessions.trace, view="skew").to_dict()
    assert spec["title"]["text"] == "Scrubber (skew)"
    kinds = {
        spec["datasets"][lay["data"]["name"]][0]["kind"]: lay.get("transform")
        for lay in spec["layer"]
    }
    assert kinds == {
        "watermark lag": [{"filter": "datum.x <= t"}],
        "element": [{"filter": "datum.x <= t"}],
        "label": [{"filter": "datum.x <= t"}],
        "now": [{"calculate": "t", "as": "x"}],
        "fired": [{"filter": "datum.fired <= t"}],
        "end of input (outline)": [{"filter": "datum.fired <= t"}],  # over the elements
    }
    fired = rows_of(spec, "fired")
    assert [(r["x"], r["y"], r["fired"]) for r in fired[:2]] == [
        (200, 200 - 2499, 200),
        (300, 300 - 4499, 300),
    ]
    (t, play) = spec["params"]
    assert (t["bind"]["min"], t["bind"]["max"], t["value"]) == (0, 300, 300)
    assert play["name"] == "play" and spec["usermeta"]["winviz"]["replay"]["max"] == 300
    assert spec["usermeta"]["winviz"]["chart"] == "scrubber"


def test_scrubber_auto_picks_skew_for_a_long_run() -> None:
    from chart_jobs import kernel_job

    trace = kernel_job(12000).trace
    auto = viz.scrubber(trace, view="auto").to_dict()
    assert auto["title"]["text"] == "Scrubber (skew)"
    assert auto["title"]["subtitle"][0].startswith('drawn by scrubber(view="auto")')
    assert viz.scrubber(trace).to_dict()["title"]["text"] == "Scrubber"  # the default
    with pytest.raises(ValueError, match="view must be"):
        viz.scrubber(trace, view="lanes")  # type: ignore[arg-type]


def many_windows_job() -> wv.JobExecutionResult:
    """Key a: one element in each of 30 tumbling 100 ms windows [0, 100) … [2900, 3000); the
    watermark (bound 0) fires every window but the last before the end of input fires it."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, [("a", t) for t in range(0, 3000, 100)], 100, arrival_interval=10)
    return env.execute()


def test_lanes_aggregate_past_a_readable_number_of_windows() -> None:
    """At 40 px a lane shows at most 40 // 4 = 10 windows; 30 are aggregated into 40 // 8 = 5
    cells of 600 ms of window starts, 6 windows each, all fired."""
    trace = many_windows_job().trace
    spec = viz.window_lanes(trace, width=40).to_dict()
    cells = rows_of(spec, "windows (aggregated)")
    assert [(c["starting in"], c["windows"], c["fired"], c["elements"]) for c in cells] == [
        (f"[{b:,} ms, {b + 600:,} ms)", 6, 6, 6) for b in range(0, 3000, 600)
    ]
    assert {c["share fired"] for c in cells} == {1.0}
    assert (
        "aggregated: a lane holds up to 30 windows, more than 10 (4 px each) — one cell per key "
        "and 600 ms of window starts, shaded by the share of its windows that fired; hover for "
        "the counts (timeline / explore draw each window)"
    ) in spec["usermeta"]["winviz"]["notes"]
    # at the default width every window is a bar of its own
    wide = viz.window_lanes(trace).to_dict()
    assert len(rows_of(wide, "window")) == 30 and rows_of(wide, "windows (aggregated)") == []


def test_paused_spans_on_the_timeline() -> None:
    spec = viz.timeline(aligned_job().trace, view="timeline").to_dict()
    (strip,) = rows_of(spec, "paused")
    lo, hi = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    width = (hi - lo) * 0.006
    assert strip == {
        "x": round(hi - width, 3),  # along the right edge
        "x2": hi,
        "y": 1000,
        "y2": 3000,
        "kind": "paused",
        "paused": "fast",
        "paused from": "1,000 ms",
        "paused until": "3,000 ms",
        "its watermark": "8,999 ms",
        "max allowed": "1,899 ms",
        "group": "g",
    }
    assert (
        "1 paused span (watermark alignment: dark strips along the right edge, right to left: fast)"
    ) in spec["title"]["subtitle"]


def test_late_firing_count_is_the_firings_rule() -> None:
    """The explorer's count (array operations) equals the late firings ``firings.firings``
    words one by one, on every chart job (kernel, late union, sliding counts, sessions)."""
    from chart_jobs import JOBS

    checked = 0
    for name, job in JOBS.items():
        view = open_trace(job().trace)
        for op in window_operators(view):
            words = firings(view, op)
            traced = words["fired_by"] != "cause not traced"
            expected = int((words["late_firing"].astype(bool) & traced).sum())
            assert late_firing_count(view, op) == expected, (name, op)
            checked += expected
    assert checked > 0  # some job has late firings
