"""Chart truth (issue 12): what the charts draw agrees with the engine's trace — session
merges close the absorbed window at the merge and the surviving pane counts the inherited
elements; firing marks sit at the time of the timer that fired them; the timers chart shows
each timer at its timestamp. Each test runs the issue's reproducer on the real engine."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import winviz as wv
from winviz import viz
from winviz.viz import frames


def layer_rows(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The data rows of the first layer whose rows are of this ``kind``."""
    for lay in spec["layer"]:
        rows = spec["datasets"].get(lay.get("data", {}).get("name"), [])
        if rows and rows[0].get("kind") == kind:
            return rows
    raise AssertionError(f"no layer of kind {kind!r}")


def session_job(lateness: int) -> wv.JobExecutionResult:
    """Sessions with a 1500 ms gap: a@1000 opens [1000, 2500) at 0 ms; a@2000 at 10 ms
    opens [2000, 3500), which merges with it into [1000, 3500) — the pane then holds both
    elements and the job emits 2; a@9000 at 20 ms is a session of its own."""
    env = wv.StreamExecutionEnvironment()
    windowed = (
        env.from_collection([("a", 1000), ("a", 2000), ("a", 9000)], arrival_times=[0, 10, 20])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(1500))
    )
    if lateness:
        windowed = windowed.allowed_lateness(lateness)
    windowed.aggregate(wv.CountAggregate()).sink_to("out")
    return env.execute()


@pytest.mark.parametrize("lateness", [0, 1000])
def test_session_merge_closes_the_absorbed_window(lateness: int) -> None:
    result = session_job(lateness)
    assert [r.value for r in result.outputs["out"]] == [2, 1]
    view = frames.open_trace(result.trace)
    lives = frames.window_lives(view, "window")
    assert [
        (r.window_start, r.window_end, r.opened, r.closed, r.elements, r.firings, r.merged_into)
        for r in lives.itertuples()
    ] == [
        (1000, 2500, 0, 10, 1, 0, "[1000, 3500)"),
        (1000, 3500, 10, 20, 2, 1, None),  # 2 = what the job emitted
        (9000, 10500, 20, 20, 1, 1, None),
    ]

    spec = viz.timeline(result.trace).to_dict()
    assert [
        (b["x"], b["x2"], b["y"], b["y2"], b["elements"], b["firings"], b["closed"])
        for b in layer_rows(spec, "window")
    ] == [
        (1000, 2500, 0, 10, 1, 0, "merged into [1000, 3500) at 10 ms"),
        (1000, 3500, 10, 20, 2, 1, "20 ms"),
        (9000, 10500, 20, 20, 1, 1, "20 ms"),
    ]

    spec = viz.scrubber(result.trace).to_dict()
    windows = layer_rows(spec, "window")
    assert [(w["x"], w["x2"], w["opened"], w["closed"], w["merged_into"]) for w in windows] == [
        (1000, 2500, 0, 10, "[1000, 3500)"),
        (1000, 3500, 10, 20, ""),
        (9000, 10500, 20, 20, ""),
    ]
    state = spec["layer"][0]["transform"][0]["calculate"]
    assert "(datum.merged_into != '' ? 'merged away' : 'gone')" in state
    color = spec["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert color == ["open", "fired", "merged away", "gone"]


def test_merge_chain_carries_inherited_elements() -> None:
    """[1000, 2500) and [3000, 4500) are bridged by a@2200 ([2200, 3700)) into [1000, 4500)
    at 20 ms, which a@4000 at 30 ms extends to [1000, 5500): that pane holds all four."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 1000), ("a", 3000), ("a", 2200), ("a", 4000)], arrival_times=[0, 10, 20, 30]
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(5000).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(1500))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    result = env.execute()
    assert [r.value for r in result.outputs["out"]] == [4]
    lives = frames.window_lives(frames.open_trace(result.trace), "window")
    assert [
        (r.window_start, r.window_end, r.closed, r.elements, r.merged_into)
        for r in lives.itertuples()
    ] == [
        (1000, 2500, 20, 1, "[1000, 4500)"),
        (3000, 4500, 20, 1, "[1000, 4500)"),
        (1000, 4500, 30, 3, "[1000, 5500)"),
        (1000, 5500, 30, 4, None),
    ]


def continuous_job() -> wv.JobExecutionResult:
    """A 5 s tumbling window with ContinuousEventTimeTrigger.of(2000): a@500, a@1500 and
    a@4500 register timers at 2000 (then 4000) and the window's max timestamp 4999; a@9000
    moves the watermark to 8999 at 30 ms, so timers 2000, 4000 and 4999 all fire then."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 500), ("a", 1500), ("a", 4500), ("a", 9000)], arrival_times=[0, 10, 20, 30]
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5000))
        .trigger(wv.ContinuousEventTimeTrigger.of(2000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute()


def test_firings_sit_at_the_timer_that_fired_them() -> None:
    result = continuous_job()
    assert [r.value for r in result.outputs["out"]] == [3, 3, 3, 1]
    view = frames.open_trace(result.trace)
    fired = frames.firings(view, "window")
    assert list(zip(fired["timer"], fired["at"], fired["cause"], strict=True)) == [
        (2000, 2000, "event-time timer at 2000"),
        (4000, 4000, "event-time timer at 4000"),
        (4999, 4999, "event-time timer at 4999"),
        (9999, 9999, "event-time timer at 9999"),
    ]
    # the timer_fired record right before each firing's trigger call names that timer
    trace = result.trace.to_pandas()
    timer_ts = [
        int(trace.loc[trace["seq"] < seq].query("kind == 'timer_fired'")["ts"].iloc[-1])
        for seq in fired["seq"]
    ]
    assert timer_ts == [2000, 4000, 4999, 9999]

    spec = viz.timeline(result.trace).to_dict()
    assert [(f["x"], f["y"], f["label"], f["cause"]) for f in layer_rows(spec, "fired")] == [
        (2000, 30, "3 · event-time timer at 2000", "event-time timer at 2000"),
        (4000, 30, "3 · event-time timer at 4000", "event-time timer at 4000"),
        (4999, 30, "3 · event-time timer at 4999", "event-time timer at 4999"),
        (9999, 30, "1 · end of input", "event-time timer at 9999"),
    ]

    spec = viz.window_lanes(result.trace).to_dict()
    fired_marks = [
        (e["x"], e["n"], e["label"], e["cause"])
        for lay in spec["layer"]
        if lay["mark"]["type"] == "point"
        for e in spec["datasets"][lay["data"]["name"]]
        if e["what"].startswith("fired")
    ]
    assert sorted(fired_marks) == [
        (2000.0, 1, "", "event-time timer at 2000"),
        (4000.0, 1, "", "event-time timer at 4000"),
        (4999.0, 1, "", "event-time timer at 4999"),
        (9999.0, 1, "", "event-time timer at 9999"),
    ]  # no "×2" stacked at the window's end


def test_element_and_processing_time_firings_say_so() -> None:
    """A CountTrigger.of(2) fires on the second element (cause "element", at the window's
    end); the processing-time window [0, 1000) of a@1 fires at its processing-time timer 999
    when a@2 arrives at 1500 (drawn at the window's end: a processing time is not on the
    event-time axis)."""
    env = wv.StreamExecutionEnvironment()
    source = env.from_collection([("a", 1), ("a", 2)], arrival_times=[0, 1500])
    (
        source.assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(10))
        .trigger(wv.CountTrigger.of(2))
        .aggregate(wv.CountAggregate())
        .sink_to("counted")
    )
    (
        source.key_by(lambda e: e[0])
        .window(wv.TumblingProcessingTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .sink_to("timed")
    )
    result = env.execute()
    view = frames.open_trace(result.trace)
    ops = frames.window_operators(view)
    causes = {
        op: list(zip(f["cause"], f["timer"], f["at"], strict=True))
        for op in ops
        for f in [frames.firings(view, op)]
    }
    assert causes == {
        ops[0]: [("element", None, 10)],
        ops[1]: [("processing-time timer at 999", 999, 1000)],
    }


# -- property: window_lives agrees with the engine on random small jobs ------------------------

ASSIGNERS = {
    "tumbling": lambda: wv.TumblingEventTimeWindows.of(4000),
    "sliding": lambda: wv.SlidingEventTimeWindows.of(4000, 2000),
    "session": lambda: wv.EventTimeSessionWindows.with_gap(1500),
}


def random_job(
    assigner: str, events: list[tuple[str, int]], delay: int, lateness: int, side: bool
) -> wv.JobExecutionResult:
    env = wv.StreamExecutionEnvironment()
    windowed = (
        env.from_collection(events, arrival_times=[100 * i for i in range(len(events))])
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(delay).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(ASSIGNERS[assigner]())
        .allowed_lateness(lateness)
    )
    if side:
        windowed = windowed.side_output_late_data(wv.OutputTag("late"))
    windowed.aggregate(wv.CountAggregate()).sink_to("out")
    return env.execute()


def engine_facts(trace: wv.Trace) -> dict[str, Any]:
    """What the engine's own records say, read record by record (no viz code): per (key,
    window) the proc_time of the first assigned record, the fired records (proc_time,
    result), the last cleanup's proc_time; per absorbed window its merge (proc_time, into);
    per fired record the timestamp of the event-time timer whose trigger call fired it."""
    assigned: dict[tuple, int] = {}
    fired: dict[tuple, list[tuple[int, Any]]] = {}
    cleaned: dict[tuple, int] = {}
    merges: dict[tuple, tuple[int, str]] = {}
    fired_at: list[int] = []  # per fired record: the event-time timer's ts, else window end
    timer_ts, call = None, None
    for r in trace.records():
        if r.operator != "window" or not hasattr(r.window, "start"):
            continue
        ident = (r.key, r.window.start, r.window.end)
        if r.kind == "timer_fired":
            timer_ts = r.ts if r.details()["domain"] == "event" else None
        elif r.kind == "trigger":
            call = r.details()["call"]
        elif r.kind == "assigned":
            assigned.setdefault(ident, r.proc_time)
        elif r.kind == "fired":
            fired.setdefault(ident, []).append((r.proc_time, r.details()["result"]))
            timed = call == "on_event_time" and timer_ts is not None
            fired_at.append(timer_ts if timed else r.window.end)
        elif r.kind == "cleanup":
            cleaned[ident] = r.proc_time
        elif r.kind == "merged":
            for w in r.details()["merged_windows"]:
                s, e = (w.start, w.end) if hasattr(w, "start") else w
                if (s, e) != (r.window.start, r.window.end):
                    merges[(r.key, s, e)] = (r.proc_time, f"[{r.window.start}, {r.window.end})")
    return {
        "assigned": assigned,
        "fired": fired,
        "cleaned": cleaned,
        "merges": merges,
        "fired_at": fired_at,
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    assigner=st.sampled_from(sorted(ASSIGNERS)),
    events=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 40).map(lambda t: t * 250)),
        min_size=1,
        max_size=12,
    ),
    delay=st.sampled_from([0, 1000, 3000]),
    lateness=st.sampled_from([0, 1500, 5000]),
    side=st.booleans(),
)
def test_window_lives_agree_with_the_engine(
    assigner: str, events: list[tuple[str, int]], delay: int, lateness: int, side: bool
) -> None:
    result = random_job(assigner, events, delay, lateness, side)
    facts = engine_facts(result.trace)
    view = frames.open_trace(result.trace)
    lives = frames.window_lives(view, "window")
    # each firing mark sits at the event-time timer that fired it (else the window end)
    assert frames.firings(view, "window")["at"].tolist() == facts["fired_at"]
    got = {(r.key, r.window_start, r.window_end): r for r in lives.itertuples()}
    assert len(got) == len(lives)  # one row per (key, window)
    # every window that got an element is opened, at its first element
    for ident, proc in facts["assigned"].items():
        assert ident in got and got[ident].opened == proc
    # merged away -> closed at the merge, "merged into [s, e)"; else closed at its cleanup
    for ident, life in got.items():
        if ident in facts["merges"]:
            assert (life.closed, life.merged_into) == facts["merges"][ident]
        else:
            assert life.merged_into is None
            assert life.closed == facts["cleaned"].get(ident)
    # the number of firings is the number of fired records
    for ident, life in got.items():
        assert life.firings == len(facts["fired"].get(ident, []))
    assert int(lives["firings"].sum()) == sum(len(f) for f in facts["fired"].values())
    # with a count aggregate and the default trigger a pane's last firing emits every element
    # it received, directly or from the windows it absorbed
    for ident, fired in facts["fired"].items():
        assert got[ident].elements == fired[-1][1]


def test_aggregated_firings_keep_their_timer_times() -> None:
    """Above DETAIL_LIMIT firings the timeline draws one mark per (window, cause, firing
    time): the early firings at 2000 and 4000 stay apart there too."""
    from winviz.viz import palette
    from winviz.viz.timeline import _firings_aggregated

    result = continuous_job()
    view = frames.open_trace(result.trace)
    fired = frames.firings(view, "window")
    x = palette.time_axis("event time", [0, 10000])
    y = palette.time_axis("processing time", [0, 30])
    notes: list[str] = []
    layer = _firings_aggregated(fired, x, y, notes).to_dict()
    rows = next(iter(layer["datasets"].values()))
    assert [(r["x"], r["fired by"], r["firings"]) for r in rows] == [
        (2000, "event-time timer", 1),
        (4000, "event-time timer", 1),
        (4999, "event-time timer", 1),
        (9999, "end of input", 1),
    ]
