"""winviz.viz.operator_flow / flow_steps: the path of one element through the WindowOperator,
read off the trace — the exact steps for each branch of ``processElement`` (on time, late and
accepted with a late firing, late and dropped / side output, FIRE_AND_PURGE on an element,
sliding windows, a session merge) and the timer call-backs of the element's windows; the
chart marks exactly those boxes and arrows, validates, and names MIN / MAX; bad arguments
raise naming them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jobs import count_pipeline, keyed_window

import winviz as wv
from winviz.viz import palette
from winviz.viz import spec as charts
from winviz.viz.diagram import box_px, wrapped
from winviz.viz.fates import element_fates
from winviz.viz.firings import firings
from winviz.viz.flow import EDGES, NODES, flow_steps, operator_flow
from winviz.viz.trace_view import open_trace, window_operators

TAKEN = "taken by this element"


def job(
    data: list[tuple[str, int]],
    arrivals: list[int],
    *,
    assigner: Any = None,
    trigger: Any = None,
    lateness: int = 0,
    tag: bool = False,
) -> wv.JobExecutionResult:
    """One key, 5 s tumbling event-time windows by default, bound 0 (watermark = max ts − 1,
    every 200 ms), a count per window."""
    env = wv.StreamExecutionEnvironment()
    windowed = keyed_window(
        env, data, assigner or wv.TumblingEventTimeWindows.of(wv.seconds(5)), arrival_times=arrivals
    )
    if trigger is not None:
        windowed = windowed.trigger(trigger)
    if lateness:
        windowed = windowed.allowed_lateness(lateness)
    if tag:
        windowed = windowed.side_output_late_data(wv.OutputTag("late"))
    windowed.aggregate(wv.CountAggregate()).sink_to("out")
    return env.execute()


LATE_DATA = [("A", 1000), ("A", 6000), ("A", 2000)]
LATE_ARRIVALS = [0, 1000, 2000]  # 6000 raises the watermark to 5999: [0, 5000) fires


def steps(result: Any, element: int, **kw: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in flow_steps(result, element, **kw).itertuples(index=False)]


def test_an_on_time_element_and_its_windows_timers() -> None:
    run = job(LATE_DATA, LATE_ARRIVALS)
    # each step's seq is the record that shows it
    kinds = {r.seq: r.kind for r in run.trace.records(operator="window")}
    assert [kinds[seq] for seq in (1, 2, 4, 5, 18, 19, 22, 24)] == [
        "element",
        "assigned",
        "trigger",
        "timer_registered",
        "timer_fired",
        "trigger",
        "fired",
        "cleanup",
    ]
    assert steps(run, 0) == [
        (1, "element", None, "ts 1000 > watermark MIN: on time"),
        (1, "assign", None, "[0, 5000)"),
        (2, "window_late", "[0, 5000)", "[0, 5000): no"),
        (2, "add", "[0, 5000)", "added to [0, 5000)"),
        (4, "on_element", "[0, 5000)", "[0, 5000): CONTINUE"),
        (5, "cleanup_timer", "[0, 5000)", "[0, 5000): event-time timer 4999, already there"),
        (18, "timer", "[0, 5000)", "[0, 5000): event-time timer 4999, watermark 5999"),
        (19, "on_timer", "[0, 5000)", "[0, 5000): onEventTime → FIRE"),
        (
            22,
            "timer_emit",
            "[0, 5000)",
            "[0, 5000): first firing; cause: event-time timer at 4999",
        ),
        (24, "is_cleanup", "[0, 5000)", "[0, 5000): yes, cleanup time 4999"),
        (24, "clear", "[0, 5000)", "[0, 5000): state cleared"),
    ]


def test_a_late_element_is_dropped_or_sent_to_the_side_output() -> None:
    head = [
        (26, "element", None, "ts 2000 ≤ watermark 5999: late"),
        (26, "assign", None, "[0, 5000)"),
        (27, "window_late", "[0, 5000)", "[0, 5000): yes, past its cleanup time"),
        (27, "skip", "[0, 5000)", "[0, 5000) skipped"),
        (27, "element_late", None, "yes: ts + allowed lateness ≤ watermark"),
    ]
    assert steps(job(LATE_DATA, LATE_ARRIVALS), 2) == [*head, (28, "dropped", None, "dropped")]
    assert steps(job(LATE_DATA, LATE_ARRIVALS, tag=True), 2) == [
        *head,
        (28, "side_output", None, "side output"),
    ]


def test_a_late_element_within_allowed_lateness_causes_a_late_re_firing() -> None:
    assert steps(job(LATE_DATA, LATE_ARRIVALS, lateness=2000), 2) == [
        (24, "element", None, "ts 2000 ≤ watermark 5999: late"),
        (24, "assign", None, "[0, 5000)"),
        (25, "window_late", "[0, 5000)", "[0, 5000): no"),
        (25, "add", "[0, 5000)", "added to [0, 5000)"),
        (26, "on_element", "[0, 5000)", "[0, 5000): FIRE"),
        (29, "emit", "[0, 5000)", "[0, 5000): re-firing, late firing; cause: element"),
        (30, "cleanup_timer", "[0, 5000)", "[0, 5000): event-time timer 6999, already there"),
        (35, "timer", "[0, 5000)", "[0, 5000): event-time timer 6999, watermark MAX"),
        (36, "on_timer", "[0, 5000)", "[0, 5000): onEventTime → CONTINUE"),
        (38, "is_cleanup", "[0, 5000)", "[0, 5000): yes, cleanup time 6999"),
        (38, "clear", "[0, 5000)", "[0, 5000): state cleared"),
    ]


def test_fire_and_purge_on_an_element() -> None:
    run = job(
        [("A", 1000), ("A", 1200), ("A", 1300)],
        [0, 10, 20],
        trigger=wv.PurgingTrigger.of(wv.CountTrigger.of(2)),
    )
    assert [s[1:] for s in steps(run, 1)] == [
        ("element", None, "ts 1200 > watermark MIN: on time"),
        ("assign", None, "[0, 5000)"),
        ("window_late", "[0, 5000)", "[0, 5000): no"),
        ("add", "[0, 5000)", "added to [0, 5000)"),
        ("on_element", "[0, 5000)", "[0, 5000): FIRE_AND_PURGE"),
        ("emit", "[0, 5000)", "[0, 5000): first firing; cause: element"),
        ("purge", "[0, 5000)", "[0, 5000) purged"),
        ("cleanup_timer", "[0, 5000)", "[0, 5000): event-time timer 4999, already there"),
        ("timer", "[0, 5000)", "[0, 5000): event-time timer 4999, watermark MAX"),
        ("on_timer", "[0, 5000)", "[0, 5000): onEventTime → CONTINUE"),
        ("is_cleanup", "[0, 5000)", "[0, 5000): yes, cleanup time 4999"),
        ("clear", "[0, 5000)", "[0, 5000): state cleared"),
    ]


def test_a_timer_that_is_not_the_cleanup_time_answers_no() -> None:
    run = job([("A", 1000), ("A", 6000)], [0, 1000], lateness=1000)  # fire at 4999, clean 5999
    got = [s[1:] for s in steps(run, 0) if s[1] in ("timer", "on_timer", "is_cleanup", "clear")]
    assert got == [
        ("timer", "[0, 5000)", "[0, 5000): event-time timer 4999, watermark 5999"),
        ("on_timer", "[0, 5000)", "[0, 5000): onEventTime → FIRE"),
        ("is_cleanup", "[0, 5000)", "[0, 5000): no"),
        ("timer", "[0, 5000)", "[0, 5000): event-time timer 5999, watermark 5999"),
        ("on_timer", "[0, 5000)", "[0, 5000): onEventTime → CONTINUE"),
        ("is_cleanup", "[0, 5000)", "[0, 5000): yes, cleanup time 5999"),
        ("clear", "[0, 5000)", "[0, 5000): state cleared"),
    ]


def test_sliding_windows_each_take_the_steps() -> None:
    run = job(LATE_DATA, LATE_ARRIVALS, assigner=wv.SlidingEventTimeWindows.of(4000, 2000))
    got = steps(run, 0)
    assert got[1] == (1, "assign", None, "[0, 4000), [-2000, 2000)")
    assert [(s[1], s[2]) for s in got if s[1] in ("add", "timer_emit", "clear")] == [
        ("add", "[0, 4000)"),
        ("add", "[-2000, 2000)"),
        ("timer_emit", "[-2000, 2000)"),
        ("clear", "[-2000, 2000)"),
        ("timer_emit", "[0, 4000)"),
        ("clear", "[0, 4000)"),
    ]


def session_merge():
    """Three elements of one key whose third merges the first two sessions (gap 1.5 s)."""
    return job(
        [("A", 1000), ("A", 3000), ("A", 2000)],
        [0, 10, 20],
        assigner=wv.EventTimeSessionWindows.with_gap(1500),
    )


def test_a_session_merge_and_an_end_of_input_firing() -> None:
    run = session_merge()
    got = steps(run, 2)
    assert got[1:3] == [
        (13, "assign", None, "[1000, 4500) (after the merge)"),
        (
            14,
            "merge",
            "[1000, 4500)",
            "merged [1000, 2500), [3000, 4500) into [1000, 4500)",
        ),
    ]
    assert (
        35,
        "timer_emit",
        "[1000, 4500)",
        "[1000, 4500): first firing; cause: end of input (event-time timer at 4499)",
    ) in got


def chart_rows(chart: Any) -> list[dict[str, Any]]:
    spec = chart.to_dict()  # validated against the Vega-Lite schema
    return [row for rows in spec["datasets"].values() for row in rows]


def test_the_chart_marks_exactly_the_steps_taken() -> None:
    run = job(LATE_DATA, LATE_ARRIVALS, tag=True)
    chart = operator_flow(run, 2)
    assert isinstance(chart, charts.CHECKED_CHARTS)
    rows = chart_rows(chart)
    boxes = {r["id"]: r for r in rows if "id" in r}
    assert set(boxes) == set(NODES)
    assert {b for b, r in boxes.items() if r["path"] == TAKEN} == {
        "element",
        "assign",
        "window_late",
        "skip",
        "element_late",
        "side_output",
    }
    arrows = {r["edge"]: r["path"] for r in rows if "edge" in r and r["head"]}
    assert set(arrows) == {f"{a} → {b}" for a, b, _ in EDGES}
    assert sorted(a for a, p in arrows.items() if p == TAKEN) == [
        "assign → window_late",
        "element → assign",
        "element_late → side_output",
        "skip → element_late",
        "window_late → skip",
    ]
    assert boxes["side_output"]["text"] == "side\noutput"  # (wrapped to its narrow box)
    meta = chart.to_dict()["usermeta"]["winviz"]
    assert meta["status"] == "ok"
    assert meta["notes"][0] == (
        "element 2 at 'window': key A, value [\"A\",2000], ts 2000, watermark 5999 — side output"
    )


def test_min_and_max_are_named_never_printed_as_numbers() -> None:
    run = job(LATE_DATA, LATE_ARRIVALS, lateness=2000)
    text = json.dumps(operator_flow(run, 0).to_dict()) + json.dumps(operator_flow(run, 2).to_dict())
    assert "watermark MIN" in text and "watermark MAX" in text
    assert "9223372036854775807" not in text and "9223372036854775808" not in text


def test_bad_arguments_name_themselves() -> None:
    run = job(LATE_DATA, LATE_ARRIVALS)
    with pytest.raises(ValueError, match=r"element 3: operator 'window' received 3 element"):
        operator_flow(run, 3)
    with pytest.raises(ValueError, match=r"element must be an int position .* got '1'"):
        operator_flow(run, "1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"operator 'windows' is not a window operator"):
        operator_flow(run, 0, operator="windows")
    with pytest.raises(ValueError, match=r"field 'width', value 0: width must be at least 100 px"):
        operator_flow(run, 0, width=0)
    assert steps(run, -1) == steps(run, 2)  # from the end, as a list


def test_input_that_cannot_be_drawn_gives_a_message_card() -> None:
    card = operator_flow(None)
    assert card.to_dict()["usermeta"]["winviz"]["status"] == "message"
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).map(lambda x: x + 1).sink_to("out")
    card = operator_flow(env.execute())
    meta = card.to_dict()["usermeta"]["winviz"]
    assert (meta["status"], meta["message"]) == ("message", "No window operator in this trace.")


def test_a_branch_past_a_box_is_not_taken_when_the_box_was() -> None:
    run = job(
        [("A", 1000), ("A", 1200), ("A", 1300)],
        [0, 10, 20],
        trigger=wv.PurgingTrigger.of(wv.CountTrigger.of(2)),
    )
    rows = chart_rows(operator_flow(run, 1))
    arrows = {r["edge"]: r["path"] for r in rows if "edge" in r and r["head"]}
    taken = {a for a, p in arrows.items() if p == TAKEN}
    # FIRE_AND_PURGE: onElement -> emit -> purge -> registerCleanupTimer; not the arrows that
    # skip emit (PURGE alone) or both (CONTINUE)
    assert {"on_element → emit", "emit → purge", "purge → cleanup_timer"} <= taken
    assert not {"on_element → purge", "on_element → cleanup_timer", "emit → cleanup_timer"} & taken
    assert {"on_timer → is_cleanup", "is_cleanup → clear", "cleanup_timer → timer"} <= taken
    assert not {"on_timer → timer_emit", "timer_emit → is_cleanup"} & taken


def test_a_global_window_registers_no_cleanup_timer() -> None:
    run = job(
        [("A", 1000), ("A", 1200), ("A", 1300)],
        [0, 10, 20],
        assigner=wv.GlobalWindows.create(),
        trigger=wv.CountTrigger.of(2),
    )
    assert steps(run, 1) == [
        (5, "element", None, "ts 1200 > watermark MIN: on time"),
        (5, "assign", None, "global window"),
        (6, "window_late", "global window", "global window: no"),
        (6, "add", "global window", "added to global window"),
        (7, "on_element", "global window", "global window: FIRE"),
        (10, "emit", "global window", "global window: first firing; cause: element"),
        (10, "cleanup_timer", "global window", "global window: cleanup time MAX, no timer"),
    ]
    assert not run.trace.records("timer_registered")  # (the trace's own word for it)


def test_processing_time_windows() -> None:
    env = wv.StreamExecutionEnvironment()
    processing = wv.TumblingProcessingTimeWindows.of(1000)
    count_pipeline(env, [("A", 1), ("A", 2)], processing, None, arrival_times=[0, 1500])
    got = [s[1:] for s in steps(env.execute(), 0)]
    assert got[0] == ("element", None, "no event timestamp: on time")
    assert got[5:] == [
        ("cleanup_timer", "[0, 1000)", "[0, 1000): processing-time timer 999, already there"),
        ("timer", "[0, 1000)", "[0, 1000): processing-time timer 999, watermark MIN"),
        ("on_timer", "[0, 1000)", "[0, 1000): onProcessingTime → FIRE"),
        ("timer_emit", "[0, 1000)", "[0, 1000): first firing; cause: processing-time timer at 999"),
        ("is_cleanup", "[0, 1000)", "[0, 1000): yes, cleanup time 999"),
        ("clear", "[0, 1000)", "[0, 1000): state cleared"),
    ]


def test_the_late_side_output_and_drop_steps_agree_with_every_elements_fate() -> None:
    import chart_jobs

    trace = chart_jobs.JOBS["late_union"]().trace
    view = open_trace(trace)
    for op in window_operators(view):
        for i, fate in enumerate(element_fates(view, op)["fate"]):
            taken = set(flow_steps(trace, i, operator=op)["step"])
            assert ("side_output" in taken) == (fate == "side output"), (op, i)
            assert ("dropped" in taken) == (fate == "dropped"), (op, i)
            assert ("add" in taken) == (fate in ("on time", "late, accepted")), (op, i)


def test_each_timer_call_marks_its_own_branch() -> None:
    # allowed lateness 1000: the timer 4999 fires the window (FIRE), the cleanup timer 5999
    # only cleans up (CONTINUE): both branches out of the trigger are taken
    run = job([("A", 1000), ("A", 6000)], [0, 1000], lateness=1000)
    rows = chart_rows(operator_flow(run, 0))
    arrows = {r["edge"]: r["path"] for r in rows if "edge" in r and r["head"]}
    taken = {a for a, p in arrows.items() if p == TAKEN}
    assert {
        "on_timer → timer_emit",
        "timer_emit → is_cleanup",
        "on_timer → is_cleanup",
        "is_cleanup → clear",
    } <= taken
    assert "on_element → cleanup_timer" in taken and "on_element → emit" not in taken


def test_the_chart_fits_the_output_width_and_wraps_every_text_whole() -> None:
    # issue 26: the chart was 990 px wide (wider than palette.FIT_WIDTH) and cut its texts
    # with "…"; now the plot is diagram.FIT_PLOT wide (room for the actions menu JupyterLab
    # keeps right of a chart) and the texts wrap inside their boxes
    run = session_merge()
    chart = operator_flow(run, 2)
    spec = chart.to_dict()
    assert (spec["width"], spec["height"]) == (palette.FIT_WIDTH - 45, 802)
    boxes = {r["id"]: r for r in chart_rows(chart) if "id" in r}
    assert (boxes["timer_emit"]["title"], boxes["timer_emit"]["text"].split("\n")) == (
        "emitWindowContents",
        ["[1000, 4500): first", "firing; cause: end", "of input (event-time", "timer at 4499)"],
    )
    assert boxes["on_timer"]["title"] == "Trigger.\nonEventTime /\nonProcessingTime"
    # every line whole: the box's lines are the step's outcomes, wrapped at spaces
    outcomes = {}
    for step, outcome in flow_steps(run, 2)[["step", "outcome"]].itertuples(index=False):
        outcomes.setdefault(step, []).append(outcome)
    for node, box in boxes.items():
        assert "…" not in box["title"] + box["text"]
        assert box["text"].replace("\n", " ") == " ".join(outcomes.get(node, [])), node


def test_more_lines_than_a_box_shows_are_counted_and_in_the_tooltip() -> None:
    # sliding windows of 4 s every 1 s: element 0 (ts 1000) is in four windows
    run = job(LATE_DATA, LATE_ARRIVALS, assigner=wv.SlidingEventTimeWindows.of(4000, 1000))
    add = {r["id"]: r for r in chart_rows(operator_flow(run, 0)) if "id" in r}["add"]
    assert add["text"].split("\n") == ["added to [1000,", "5000)", "and 3 more (tooltip)"]
    assert add["tip"].split("\n") == [
        "added to [1000, 5000)",
        "added to [0, 4000)",
        "added to [-1000, 3000)",
        "added to [-2000, 2000)",
    ]


def test_wrapped_breaks_at_spaces_then_after_dots_and_cuts_nothing() -> None:
    assert wrapped("WindowAssigner.assignWindows", 130, 7.0) == ["WindowAssigner.", "assignWindows"]
    assert wrapped("window late? (isWindowLate)", 130, 7.0) == ["window late?", "(isWindowLate)"]
    assert wrapped("a b c", 130, 7.0) == ["a b c"]
    # a word longer than a line with nowhere to break stays whole on its line
    assert wrapped("x 123456789012345678901 y", 70, 7.0) == ["x", "123456789012345678901", "y"]
    assert box_px("processElement", ["ts 1000 > watermark MIN: on time"], 140) == (
        "processElement",
        ("ts 1000 > watermark", "MIN: on time"),
        4 + 13 + 2 + 2 * 13 + 6,
    )


def test_a_firing_a_restore_rolled_back_is_not_counted_by_the_charts() -> None:
    """No checkpoint: the failure at the fifth record restores to the start (seq 34), rolling
    back the four firings of [0, 1000) before it; the replayed first record's firing (seq 39) is
    the window's first firing again (the engine's pane index 0), as ``why_fired`` says. The
    firings table, ``operator_flow``'s steps and the scrubber's counted words name each alike
    (``winviz.trace.restores``); a rolled-back firing says so."""
    env = wv.StreamExecutionEnvironment()
    events = [("a", t) for t in (10, 20, 30, 40, 50)]
    run = count_pipeline(
        env, events, 1000, trigger=wv.CountTrigger.of(1), arrival_times=[0, 10, 20, 30, 40]
    ).execute(fail_at=4)
    undone = " (rolled back by a restore)"
    said = ["first firing" + undone] + ["re-firing" + undone] * 3 + ["first firing"]
    said += ["re-firing"] * 4
    table = firings(open_trace(run.trace), "window")
    assert table[["seq", "pane"]].values.tolist() == [
        [6, 0], [14, 1], [22, 2], [30, 3], [39, 0], [47, 1], [55, 2], [63, 3], [71, 4]
    ]  # fmt: skip
    assert table["firing"].tolist() == said
    assert wv.why_fired(run.trace, "a", (0, 1000)).table["firing"].tolist() == said
    assert [s[3] for e in range(5) for s in steps(run, e) if s[1] == "emit"] == [
        f"[0, 1000): {words}; cause: element" for words in said[:5]
    ]
    (squares,) = [
        lay
        for lay in wv.viz.scrubber.vega_lite(run)["layer"]
        if charts.rows(lay) and charts.rows(lay)[0]["kind"] == "fired"
    ]
    # a rolled-back firing is its own square (faint from the failure on: see
    # test_viz_scrubber_rolled_back)
    assert [(r["y"], r["firings"], r["firing"]) for r in charts.rows(squares)] == [
        *[(y, 1, words) for y, words in zip((0, 10, 20, 30), said[:4], strict=True)],
        *[(y, 1, words) for y, words in zip((0, 10, 20, 30, 40), said[4:], strict=True)],
    ]


def test_a_run_from_a_snapshot_charts_its_first_traced_firing_as_the_first_in_this_trace() -> None:
    """A second run from the first run's checkpoint after two records (restore_from): the
    window had fired twice before (the engine's pane index 2), firings the trace does not hold;
    the charts say "first firing in this trace", as ``why_fired`` does."""
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[2])
    events = [("a", t) for t in (10, 20, 30, 40, 50)]
    job = count_pipeline(
        env, events, 1000, trigger=wv.CountTrigger.of(1), arrival_times=[0, 10, 20, 30, 40]
    )
    run = job.execute(restore_from=job.execute().checkpoints[-1])
    table = firings(open_trace(run.trace), "window")
    said = ["first firing in this trace", "re-firing", "re-firing"]
    assert table[["pane", "firing"]].values.tolist() == [[2, said[0]], [3, said[1]], [4, said[2]]]
    assert wv.why_fired(run.trace, "a", (0, 1000)).table["firing"].tolist() == said
