"""Chart truth (issue 12): what the charts draw agrees with the engine's trace — session
merges close the absorbed window at the merge and the surviving pane counts the inherited
elements; firing marks sit at the time of the timer that fired them; the timers chart shows
each timer at its timestamp. Each test runs the issue's reproducer on the real engine."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from jobs import ASSIGNERS as JOB_ASSIGNERS
from jobs import TRIGGERS as JOB_TRIGGERS
from jobs import bounded, build, count_pipeline, jobs

import winviz as wv
from winviz import viz
from winviz.viz import palette, piles
from winviz.viz.fates import element_fates
from winviz.viz.firings import firings
from winviz.viz.timer_records import timer_operators
from winviz.viz.timers import DEDUP_EVENT
from winviz.viz.trace_view import open_trace, window_operators
from winviz.viz.window_lives import window_lives


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
    view = open_trace(result.trace)
    lives = window_lives(view, "window")
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
        # opened and closed at 20 ms: drawn 8 px high (bands.MIN_BAND_PX), centred on 20 ms
        (9000, 10500, 19.76, 20.24, 1, 1, "20 ms"),
    ]

    spec = viz.scrubber(result.trace).to_dict()
    windows = layer_rows(spec, "window")
    assert [
        (w["x"], w["x2"], w["opened_at"], w["closed_at"], w["merged_into"]) for w in windows
    ] == [
        (1000, 2500, 0, 10, "[1000, 3500)"),
        (1000, 3500, 10, 20, ""),
        (9000, 10500, 20, 20, ""),
    ]
    state = spec["layer"][0]["transform"][0]["calculate"]
    assert "(datum.merged_into != '' ? 'merged away' : 'gone')" in state
    color = spec["layer"][0]["encoding"]["color"]["scale"]["domain"]
    # the states some band takes at some t: both windows that fire are cleaned up at the same
    # processing time (20 ms), so no band is ever "fired" and still there
    assert color == ["open", "merged away", "gone"]


def test_merge_chain_carries_inherited_elements() -> None:
    """[1000, 2500) and [3000, 4500) are bridged by a@2200 ([2200, 3700)) into [1000, 4500)
    at 20 ms, which a@4000 at 30 ms extends to [1000, 5500): that pane holds all four."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [("a", 1000), ("a", 3000), ("a", 2200), ("a", 4000)],
        wv.EventTimeSessionWindows.with_gap(1500),
        bounded(5000),
        arrival_times=[0, 10, 20, 30],
    )
    result = env.execute()
    assert [r.value for r in result.outputs["out"]] == [4]
    lives = window_lives(open_trace(result.trace), "window")
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
    events = [("a", 500), ("a", 1500), ("a", 4500), ("a", 9000)]
    trigger = wv.ContinuousEventTimeTrigger.of(2000)
    arrivals = [0, 10, 20, 30]
    env = wv.StreamExecutionEnvironment()
    return count_pipeline(env, events, 5000, trigger=trigger, arrival_times=arrivals).execute()


def test_firings_sit_at_the_timer_that_fired_them() -> None:
    result = continuous_job()
    assert [r.value for r in result.outputs["out"]] == [3, 3, 3, 1]
    view = open_trace(result.trace)
    fired = firings(view, "window")
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
    view = open_trace(result.trace)
    ops = window_operators(view)
    causes = {
        op: list(zip(f["cause"], f["timer"], f["at"], strict=True))
        for op in ops
        for f in [firings(view, op)]
    }
    assert causes == {
        ops[0]: [("element", None, 10)],
        ops[1]: [("processing-time timer at 999", 999, 1000)],
    }


def test_a_firings_side_output_is_not_an_elements_fate() -> None:
    """A ProcessWindowFunction's ``ctx.output`` writes ``side_output`` records too, here
    during a firing in onElement: CountTrigger.of(2) fires [0, 100) when a@20 arrives, and the
    function's side output is written while a@20 is processed — it is not a@20's fate. Only
    the last a@10, late and past cleanup (watermark 150) when it arrives, is a late-data side
    output."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=0)

    def annotate(key, ctx, elements, out):
        ctx.output(wv.OutputTag("note"), len(list(elements)))
        out.collect(key)

    (
        env.from_collection(
            [("a", 10), ("a", 20), ("a", 150), ("a", 10)], arrival_times=[0, 10, 20, 30]
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_punctuated(lambda e, ts: ts).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(100))
        .trigger(wv.CountTrigger.of(2))
        .side_output_late_data(wv.OutputTag("late"))
        .process(annotate)
        .sink_to("out")
    )
    result = env.execute()
    assert [r.value for r in result.side_outputs["late"]] == [("a", 10)]
    assert [r.value for r in result.side_outputs["note"]] == [2]
    fates = element_fates(open_trace(result.trace), "window")
    assert fates["fate"].tolist() == ["on time", "on time", "on time", "side output"]


# -- property: every chart's data agrees with the engine on random jobs -----------------------
#
# Random jobs from tests/jobs.py (tumbling with and without offset, sliding, session with merges;
# default / count / continuous / purging triggers; allowed lateness; side outputs; three keys;
# one source, two partitions or a union; idleness), each with a second window branch that has
# an evictor, run with one or two parallel subtasks. The engine's facts are read record by
# record (no viz code); each chart is then checked against them, operator by operator.

EVICTORS = {
    "count": lambda: wv.CountEvictor.of(2),
    "count_after": lambda: wv.CountEvictor.of(2, do_evict_after=True),
    "time": lambda: wv.TimeEvictor.of(20),
}


def evicting_branch(job: dict[str, Any], evictor: str) -> Any:
    """A second window operator on the timestamped stream: the job's assigner and trigger with
    an evictor and a ProcessWindowFunction (Flink's EvictingWindowOperator)."""

    def extra(stream: Any) -> None:
        windowed = stream.key_by(lambda e: e[0]).window(JOB_ASSIGNERS[job["assigner"]]())
        trigger = JOB_TRIGGERS[job["trigger"]]()
        if trigger is not None:
            windowed.trigger(trigger)
        (
            windowed.evictor(EVICTORS[evictor]())
            .allowed_lateness(job["lateness"])
            .process(lambda k, ctx, els, out: out.collect((k, len(list(els)))))
            .sink_to("evicted")
        )

    return extra


def window_text(w: Any) -> str:
    return f"[{w.start}, {w.end})"


def operator_facts(trace: wv.Trace, op: str) -> dict[str, Any]:
    """The engine's own records of one window operator, in seq order: per (key, start, end)
    opened (first assigned), direct element count, firings [(seq, proc, at)] (at: the
    event-time timer that fired it, else the window end), cleanups [(seq, proc, cleanup
    time)], merges (absorbed → (proc, into)); per element seq (ts, proc, watermark, fate);
    the timers (key, namespace, domain, ts, registered, ended, end) and the de-duplicated
    registrations (ts, proc)."""
    f: dict[str, Any] = {
        "opened": {},
        "direct": {},
        "fired": {},
        "cleaned": {},
        "merges": {},
        "merge_order": [],
        "named": [],
        "elements": {},
        "timers": [],
        "dedup": [],
    }
    live: dict[tuple, int] = {}
    element, timer, call = None, None, None
    for r in trace.records():
        if r.operator != op:
            continue
        ident = (str(r.key), r.window.start, r.window.end) if hasattr(r.window, "start") else None
        if (
            ident is not None
            and ident not in f["named"]
            and r.kind
            in (
                "assigned",
                "fired",
                "cleanup",
                "merged",
            )
        ):
            f["named"].append(ident)
        if r.kind == "element":
            element = r.seq
            f["elements"][r.seq] = [r.ts, r.proc_time, r.watermark, None]
        elif r.kind == "late_dropped":
            f["elements"][element][3] = "dropped"
        elif r.kind == "side_output" and r.details()["tag"] == "late":  # the late-data tag
            f["elements"][element][3] = "side output"
        elif r.kind == "assigned":
            f["opened"].setdefault(ident, r.proc_time)
            f["direct"][ident] = f["direct"].get(ident, 0) + 1
        elif r.kind == "trigger":
            call = r.details()["call"]
        elif r.kind == "fired":
            timed = call == "on_event_time" and timer is not None
            at = timer if timed else r.window.end
            f["fired"].setdefault(ident, []).append((r.seq, r.proc_time, at))
        elif r.kind == "cleanup":
            cleanup_time = r.details()["cleanup_time"]
            f["cleaned"].setdefault(ident, []).append((r.seq, r.proc_time, cleanup_time))
        elif r.kind == "merged":
            into = window_text(r.window)
            for w in r.details()["merged_windows"]:
                s, e = (w.start, w.end) if hasattr(w, "start") else w
                if (s, e) != (r.window.start, r.window.end):
                    f["merges"][(str(r.key), s, e)] = (r.proc_time, into)
                    f["merge_order"].append(((str(r.key), s, e), ident))
                    if (str(r.key), s, e) not in f["named"]:
                        f["named"].append((str(r.key), s, e))
        elif r.kind.startswith("timer_"):
            d = r.details()
            t_ident = (str(r.key), window_text(d["namespace"]), d["domain"], r.ts)
            if r.kind == "timer_fired":
                timer = r.ts if d["domain"] == "event" else None
            if r.kind == "timer_registered":
                if d["deduplicated"] or t_ident in live:
                    f["dedup"].append((r.ts, r.proc_time))
                else:
                    live[t_ident] = len(f["timers"])
                    f["timers"].append([*t_ident, r.proc_time, None, "pending"])
            elif t_ident in live:
                i = live.pop(t_ident)
                f["timers"][i][5:7] = [r.proc_time, r.kind.removeprefix("timer_")]
    # a pane holds what was assigned to it and to every window it absorbed (chains carry)
    total = dict(f["direct"])
    for absorbed, into in f["merge_order"]:
        total[into] = total.get(into, 0) + total.get(absorbed, 0)
    f["total"] = total
    return f


def all_rows(spec: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """Every data row of this kind in the chart (any layer, any view)."""
    return [r for rows in spec["datasets"].values() for r in rows if r.get("kind") == kind]


def seqs_of(value: Any) -> list[int]:
    return [int(s) for s in str(value).split(", ") if s]


def check_timeline(spec: dict[str, Any], f: dict[str, Any]) -> None:
    # each firing: one mark holding its seq, at the timer that fired it, at its processing time
    marks = {s: (r["x"], r["y"]) for r in all_rows(spec, "fired") for s in seqs_of(r["seq"])}
    engine = {seq: (at, proc) for fired in f["fired"].values() for seq, proc, at in fired}
    cleaned = {s: (r["x"], r["y"]) for r in all_rows(spec, "cleanup") for s in seqs_of(r["seq"])}
    engine_cleaned = {seq: (t, p) for c in f["cleaned"].values() for seq, p, t in c}
    # where marks pile up too deep, some are counted on the mark there (a ring naming their
    # seqs, piles.rings) instead of drawn: each drawn one where the trace says, none lost
    counted = [s for r in all_rows(spec, "pile") for s in seqs_of(r["seq"])]
    assert marks.items() <= engine.items() and cleaned.items() <= engine_cleaned.items()
    assert sorted([*marks, *cleaned, *counted]) == sorted([*engine, *engine_cleaned])
    # a band per window: every key's elements (inherited ones too) and firings of it
    bands = {(r["x"], r["x2"]): (r["elements"], r["firings"]) for r in all_rows(spec, "window")}
    expected: dict[tuple[int, int], list[int]] = {}
    for key, s, e in f["named"]:
        n = expected.setdefault((s, e), [0, 0])
        n[0] += f["total"].get((key, s, e), 0)
        n[1] += len(f["fired"].get((key, s, e), []))
    assert bands == {w: tuple(n) for w, n in expected.items()}
    check_elements(all_rows(spec, "element"), f, "what")


def check_elements(rows: list[dict[str, Any]], f: dict[str, Any], field: str) -> None:
    """Each element drawn once at its own seq; dropped and side output exactly as the engine's
    records; "late, accepted" only for an element at or below the watermark it met."""
    assert sorted(r["seq"] for r in rows) == sorted(f["elements"])
    for r in rows:
        ts, _, mark, lost = f["elements"][r["seq"]]
        fate = r[field]
        assert (fate in ("dropped", "side output")) == (lost is not None)
        if lost is not None:
            assert fate == lost
        if fate == "late, accepted":
            assert mark is not None and ts <= mark


def check_lanes(spec: dict[str, Any], f: dict[str, Any]) -> None:
    if not f["named"]:  # no (key, window) pair at all (e.g. its only element was late)
        assert spec["usermeta"]["winviz"]["status"] == "message"
        assert "has no time windows" in spec["usermeta"]["winviz"]["message"]
        return
    bars = {
        (r["key"], r["x"], r["x2"]): (r["elements"], r["firings"], r["merged_into"])
        for r in all_rows(spec, "window")
    }
    assert bars == {
        ident: (
            f["total"].get(ident, 0),
            len(f["fired"].get(ident, [])),
            f["merges"].get(ident, (None, ""))[1],
        )
        for ident in f["named"]
    }
    # each firing in one mark of its key, at the time of the timer that fired it (moved aside
    # by at most 12 px when another mark of its bar falls on the same pixel)
    marks = [
        r
        for rows in spec["datasets"].values()
        for r in rows
        if "n" in r and str(r.get("what", "")).startswith("fired")
    ]
    lo, hi = next(
        lay["encoding"]["x"]["scale"]["domain"]
        for lay in spec["layer"]
        if "scale" in lay.get("encoding", {}).get("x", {})
    )
    tolerance = 12.5 * (hi - lo) / palette.WIDTH
    got = {s: (r["key"], r["x"]) for r in marks for s in seqs_of(r["seq"])}
    engine = {seq: (key, at) for (key, _, _), fired in f["fired"].items() for seq, _, at in fired}
    assert set(got) == set(engine)
    assert sum(int(r["n"]) for r in marks) == len(engine)
    for seq, (key, at) in engine.items():
        assert got[seq][0] == key and abs(got[seq][1] - at) <= tolerance


def check_scrubber(spec: dict[str, Any], f: dict[str, Any]) -> None:
    windows = {(r["x"], r["x2"]): r for r in all_rows(spec, "window")}
    assert set(windows) == {(s, e) for _, s, e in f["named"]}
    for (s, e), r in windows.items():
        keys = [k for k, s2, e2 in f["named"] if (s2, e2) == (s, e)]
        assert r["keys"] == len(keys)
        opened = [f["opened"].get((k, s, e)) for k in keys]
        if None not in opened:  # every key's pane got an element: opened at the first
            assert r["opened_at"] == min(opened)
        merged = [f["merges"].get((k, s, e)) for k in keys]
        if all(m is not None for m in merged):  # every key's pane merged away
            assert r["merged_into"] == ", ".join(dict.fromkeys(m[1] for m in merged))
            assert r["closed_at"] == max(m[0] for m in merged)
        else:
            assert r["merged_into"] == ""
    check_elements(all_rows(spec, "element"), f, "what")


def check_timers(spec: dict[str, Any], f: dict[str, Any]) -> None:
    """Each timer a rule at its timestamp from its registration to its firing or deletion
    (the top edge while still queued); each de-duplicated registration at its timestamp."""
    rules = all_rows(spec, "timer")
    top = spec["hconcat"][0]["layer"][0]["encoding"]["y"]["scale"]["domain"][1]
    got = sorted(
        (r["key"], r["namespace"], r["domain"], r["x"], r["y"], r["y2"], r["end"]) for r in rules
    )
    expected = sorted(
        (
            k,
            ns,
            dom,
            ts,
            reg,
            top if end == "pending" else ended,
            "queued at the end" if end == "pending" else end,
        )
        for k, ns, dom, ts, reg, ended, end in f["timers"]
    )
    assert got == expected
    events = all_rows(spec, "timer event")
    # events where too many pile up are counted on the mark there (piles.ALSO_HERE), not drawn:
    # each one drawn is where the trace says, and drawn + counted are all of them
    counted = sum(e.get(piles.ALSO_HERE, 0) for e in events)
    dedup = Counter((e["x"], e["y"]) for e in events if e["event"] == DEDUP_EVENT)
    fired = Counter(
        (e["x"], e["y"]) for e in events if e["event"] in ("fired", "deleted", "queued at the end")
    )
    want_dedup = Counter(map(tuple, f["dedup"]))
    want_fired = Counter((r[3], r[5]) for r in expected)
    assert len(events) + counted == len(f["dedup"]) + 2 * len(expected)
    if counted:
        assert not dedup - want_dedup and not fired - want_fired
    else:
        assert (dedup, fired) == (want_dedup, want_fired)


def check_skew(spec: dict[str, Any], f: dict[str, Any]) -> None:
    rows = all_rows(spec, "element")
    check_elements(rows, f, "fate")
    for r in rows:
        ts, proc, _, _ = f["elements"][r["seq"]]
        assert (r["x"], r["y"]) == (proc, proc - ts)


# no shrinking: a failing job is reported as found (shrinking these jobs takes minutes)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    job=jobs(),
    evictor=st.sampled_from(sorted(EVICTORS)),
    parallelism=st.sampled_from([1, 2]),
    which=st.integers(0, 3),
)
def test_every_chart_agrees_with_the_engine(
    job: dict[str, Any], evictor: str, parallelism: int, which: int
) -> None:
    """One window operator per example (the job's or the evicting branch's, of subtask 0 or
    1: ``which``), every chart of it checked against its records."""
    env = build(job, True, evicting_branch(job, evictor)).set_parallelism(parallelism)
    trace = env.execute().trace
    view = open_trace(trace)
    ops = window_operators(view)
    if not ops:  # no element reached a window
        return
    op = ops[which % len(ops)]
    f = operator_facts(trace, op)
    if f["elements"]:
        check_timeline(viz.timeline(trace, operator=op).to_dict(validate=False), f)
        check_skew(viz.skew_chart(trace, operator=op).to_dict(validate=False), f)
        check_scrubber(viz.scrubber(trace, operator=op).to_dict(validate=False), f)
    check_lanes(viz.window_lanes(trace, operator=op).to_dict(validate=False), f)
    if op in timer_operators(view):
        check_timers(viz.timers_chart(trace, operator=op).to_dict(validate=False), f)


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
    view = open_trace(result.trace)
    lives = window_lives(view, "window")
    # each firing mark sits at the event-time timer that fired it (else the window end)
    assert firings(view, "window")["at"].tolist() == facts["fired_at"]
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
    from winviz.viz.window_marks import _firings_aggregated

    result = continuous_job()
    view = open_trace(result.trace)
    fired = firings(view, "window")
    x = palette.time_axis("event time", [0, 10000])
    y = palette.time_axis("processing time", [0, 30])
    notes: list[str] = []
    rows = _firings_aggregated(fired, x, y, notes)["data"]["values"]
    assert [(r["x"], r["fired by"], r["firings"]) for r in rows] == [
        (2000, "event-time timer", 1),
        (4000, "event-time timer", 1),
        (4999, "event-time timer", 1),
        (9999, "end of input", 1),
    ]
