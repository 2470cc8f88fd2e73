"""Charts of a run with a restart: after a restore the simulated clock goes back to the
checkpoint's and every watermark to MIN (``winviz.checkpoints``). The timeline, the
propagation chart and the skew chart end each watermark line where the job failed, start a
new one at MIN at the restore, and mark the restart; none draws a step backwards in
processing time."""

from __future__ import annotations

from typing import Any

import pytest
from test_checkpoints import late_after_a_firing
from test_viz_restore_at_t import lesson_05_restore

import winviz as wv
from winviz import viz
from winviz.viz import palette, propagation, skew, watermark_steps
from winviz.viz.boxes import Taken
from winviz.viz.labels import Plot
from winviz.viz.palette import TimeAxis
from winviz.viz.spec import rows as layer_rows
from winviz.viz.trace_view import TraceView
from winviz.viz.watermark_steps import (
    Restart,
    restart_layers,
    restart_places,
    steps_by_attempt,
)


@pytest.fixture(scope="module")
def restarted() -> wv.JobExecutionResult:
    """Checkpoint after three records (at 500 ms), failure after the fourth (at 700 ms)."""
    return late_after_a_firing().enable_checkpointing(at_records=[3]).execute(fail_at=4)


def rows_of(spec: dict[str, Any], mark: str, field: str) -> list[dict[str, Any]]:
    """The rows of the first layer with this mark type whose rows have ``field``."""
    for lay in spec["layer"]:
        rows = spec["datasets"][lay["data"]["name"]]
        if lay["mark"]["type"] == mark and rows and field in rows[0]:
            return rows
    raise AssertionError(f"no {mark} layer with {field}")


def test_the_restarts_of_a_trace(restarted) -> None:
    restore = restarted.trace.records("restore")[0]
    assert watermark_steps.restarts(TraceView(restarted.trace)) == [
        Restart(seq=restore.seq, proc_time=500, failed_at=700, checkpoint_id=1)
    ]
    snapshot = restarted.checkpoints[0]
    fresh = late_after_a_firing().execute(restore_from=snapshot)
    assert watermark_steps.restarts(TraceView(fresh.trace)) == [
        Restart(seq=0, proc_time=500, failed_at=None, checkpoint_id=1)
    ]
    assert watermark_steps.restarts(TraceView(late_after_a_firing().execute().trace)) == []
    # the skew chart says what the timeline says of a run started from a snapshot: the clock
    # did not go back there (it said "the job restarted from checkpoint 1: the clock went back")
    notes = viz.skew_chart(fresh.trace).to_dict()["usermeta"]["winviz"]["notes"]
    started = "the run started from checkpoint 1: every watermark started at MIN"
    assert notes[-1] == started
    timeline = viz.timeline(fresh.trace, view="timeline").to_dict()
    assert started in timeline["usermeta"]["winviz"]["notes"]


def test_the_timeline_ends_the_line_at_the_failure_and_starts_again_at_min(restarted) -> None:
    spec = viz.timeline(restarted.trace).to_dict()
    line = [v for v in rows_of(spec, "line", "attempt") if v["operator"].startswith("watermarks")]
    before = [(v["x"], v["y"]) for v in line if v["attempt"] == 0]
    after = [(v["x"], v["y"]) for v in line if v["attempt"] == 1]
    # 1199 from 200 ms, 1299 from 600 ms, held until the failure at 700 ms (not back to 500)
    assert before == [(1_199, 200), (1_199, 600), (1_299, 600), (1_299, 700)]
    min_x = after[0][0]  # MIN: the left edge
    assert min_x < 0 and after[:2] == [(min_x, 500), (min_x, 700)]
    # a rule across the chart at the restore (as the propagation chart's: one builder)
    assert rows_of(spec, "rule", "text") == [
        {"y": 500, "text": "restarted from checkpoint 1 at 500 ms: watermarks back to MIN"}
    ]
    notes = spec["usermeta"]["winviz"]["notes"]
    assert (
        "a failure at 700 ms: the job restarted from checkpoint 1 — the clock went back to "
        "500 ms and every watermark to MIN; the replay is drawn over what came before"
    ) in notes


def test_the_propagation_chart_breaks_the_line_at_the_restart(restarted) -> None:
    spec = viz.propagation_chart(restarted.trace).to_dict()
    # (the window's line lies on the watermark operator's: cut into runs, issue 26)
    window = sorted(
        (
            v
            for lay in spec["layer"]
            if lay["mark"]["type"] == "line"
            for v in spec["datasets"][lay["data"]["name"]]
            if v.get("line") == "window"
        ),
        key=lambda v: (v["run"], v["i"]),
    )
    before, after = (
        list(dict.fromkeys((v["x"], v["y"]) for v in window if v["attempt"] == a)) for a in (0, 1)
    )
    assert before == [(200, 1_199), (600, 1_199), (600, 1_299), (700, 1_299)]
    bottom = after[0][1]  # MIN: the bottom edge
    assert bottom < 499 and after[:2] == [(500, bottom), (700, bottom)]
    assert rows_of(spec, "rule", "text") == [
        {"x": 500, "text": "restarted from checkpoint 1 at 500 ms: watermarks back to MIN"}
    ]


def test_the_propagation_chart_says_a_restart_text_left_out(restarted, monkeypatch) -> None:
    # (no place beside the rule clear of the dots and the steps: ``_restart_place`` None)
    monkeypatch.setattr(propagation, "_restart_place", lambda *args: None)
    spec = viz.propagation_chart(restarted.trace).to_dict()
    assert [lay for lay in spec["layer"] if lay["mark"]["type"] == "text"] == []
    assert rows_of(spec, "rule", "text") == [
        {"x": 500, "text": "restarted from checkpoint 1 at 500 ms: watermarks back to MIN"}
    ]
    assert spec["usermeta"]["winviz"]["notes"][-1] == (
        "operators: the restart's text at 500 ms is left out (it would cross marks): hover its rule"
    )


def test_lesson_05s_propagation_chart_leaves_its_restart_text_out() -> None:
    # right of the rule at 12,100 ms (384 px wide: the rule is 291 px in, no room left of it)
    # the text crosses at every height a step of the line after it (at 12,600, 16,300 or
    # 25,100 ms) or the MAX dot: main drew it at the top, on that dot
    spec = viz.propagation_chart(lesson_05_restore().trace).to_dict()
    assert [lay for lay in spec["layer"] if lay["mark"]["type"] == "text"] == []
    assert spec["usermeta"]["winviz"]["notes"][-1] == (
        "operators: the restart's text at 12,100 ms is left out (it would cross marks): hover "
        "its rule"
    )


def test_the_channels_of_a_valve_start_again_at_min() -> None:
    """Two watermark subtasks feed the window: after the restore both of its channels are drawn
    at MIN from the restore on (a new valve), until their next watermark."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 100), ("a", 700), ("a", 1_300), ("a", 1_900)], arrival_times=[0, 300, 600, 900]
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .set_parallelism(2)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1_000))
        .aggregate(wv.CountAggregate())
        .set_parallelism(1)
        .sink_to("out")
    )
    result = env.enable_checkpointing(at_records=[2]).execute(fail_at=4)
    spec = viz.propagation_chart(result.trace, operator="window").to_dict()
    channels = [v for v in rows_of(spec, "line", "attempt") if v["line"].startswith("watermarks")]
    restore = result.trace.records("restore")[0].proc_time
    for name in {v["line"] for v in channels}:
        again = [(v["x"], v["y"]) for v in channels if v["line"] == name and v["attempt"] == 1]
        assert again[0][0] == restore  # from the restore on ...
        assert again[0][1] < min(v["y"] for v in channels if v["attempt"] == 0)  # ... at MIN
        ended = [v["x"] for v in channels if v["line"] == name and v["attempt"] == 0]
        assert max(ended) <= 900  # the old line ends by the failure (900 ms)


def test_the_skew_line_never_steps_back_in_time(restarted) -> None:
    view = TraceView(restarted.trace)
    rows = view.select("watermark", operator="window")
    times, (marks, present) = view.ints("proc_time", rows)[0], view.ints("watermark", rows)
    vertices = [tuple(v) for v in skew.lag_vertices(times, marks, present, 700).tolist()]
    # 1199 at 200 ms, 1299 at 600 ms (its step ends there: the next record, MIN at the restore,
    # is at 500 ms), then 499 at 700 ms in the replay (a new part after MIN)
    assert vertices == [
        (0, 200, 200 - 1_199),
        (0, 600, 600 - 1_199),
        (0, 600, 600 - 1_299),
        (0, 600, 600 - 1_299),
        (1, 700, 700 - 499),
        (1, 700, 700 - 499),
    ]
    spec = viz.skew_chart(restarted.trace).to_dict()
    assert (
        "at 500 ms the job restarted from checkpoint 1: the clock went back and the watermark "
        "to MIN (the lag line breaks there)"
    ) in spec["usermeta"]["winviz"]["notes"]


def test_steps_by_attempt() -> None:
    """One rule for every step line: a step ends at the next record of its attempt, where the
    job failed before a restart, at its own time when that is unknown, or at the edge."""
    restarts = [
        Restart(seq=10, proc_time=500, failed_at=700, checkpoint_id=1),
        Restart(seq=20, proc_time=300, failed_at=None, checkpoint_id=None),
    ]
    # 1 and 5 before the failure at 700, 11 and 15 replayed from 500 (15: a second restart,
    # from a snapshot with no failure time, follows it), 21 the last
    attempts, ends = steps_by_attempt([1, 5, 11, 15, 21], [200, 600, 500, 650, 300], restarts)
    assert attempts == [0, 0, 1, 1, 2]
    assert ends == [600, 700, 650, 650, None]
    # a row at a restore's own seq (a channel back at MIN) starts the new attempt
    assert steps_by_attempt([10, 12], [500, 600], restarts[:1]) == ([1, 1], [600, None])


def test_the_timers_chart_ends_the_staircase_at_the_failure(restarted) -> None:
    spec = viz.timers_chart(restarted.trace).to_dict()
    panel = spec["hconcat"][0]
    (line,) = [
        rows
        for lay in panel["layer"]
        if (rows := spec["datasets"][lay["data"]["name"]]) and "attempt" in rows[0]
    ]
    before = [(v["x"], v["y"]) for v in line if v["attempt"] == 0]
    after = [(v["x"], v["y"]) for v in line if v["attempt"] == 1]
    assert before == [(1_199, 200), (1_199, 600), (1_299, 600), (1_299, 700)]
    assert after[0][1] == 500 and after[0][0] < 499  # MIN (the left edge) from the restore


def test_the_failure_time_passes_over_the_restarts_own_idleness_records() -> None:
    """``restored_after_idle`` fails at 1100 (its last records before the restore, seq 48–53);
    the restart then writes its sources' ``idleness`` records (at 0 and 900) before the
    ``restore`` record: the failure time is 1100, not the 900 of the record just before it."""
    from jobs import restored_after_idle

    from winviz.viz.trace_view import open_trace
    from winviz.viz.watermark_steps import Restart, restarts

    job = restored_after_idle()
    assert restarts(open_trace(job)) == [
        Restart(seq=56, proc_time=900, failed_at=1100, checkpoint_id=1)
    ]
    notes = viz.timeline(job, view="timeline").to_dict()["usermeta"]["winviz"]["notes"]
    assert [n for n in notes if n.startswith("a failure")] == [
        "a failure at 1,100 ms: the job restarted from checkpoint 1 — the clock went back to "
        "900 ms and every watermark to MIN; the replay is drawn over what came before"
    ]


# -- the restart's text: where it crosses nothing, else left out --------------------------------


def _restart_plot() -> Plot:
    """1 px per ms both ways, 1000 × 1000 px: processing time t is drawn at y = 1000 − t."""
    x = TimeAxis("event time", "ms", 0, 1000)
    y = TimeAxis("processing time", "ms", 0, 1000)
    return Plot(x, y, 1000, 1000)


def test_the_restart_text_takes_the_first_place_crossing_nothing() -> None:
    plot, restart = _restart_plot(), Restart(seq=10, proc_time=500, failed_at=700, checkpoint_id=1)
    # "restarted from checkpoint 1 at 500 ms: watermarks back to MIN": 61 characters, 366 px;
    # its rule at y = 500: above it (2 px off, 13 px high) at the left edge (4 px in) first
    assert len(restart.text(plot.y)) == 61
    taken = Taken()
    assert restart_places([restart], plot, taken) == [("left", "bottom")]
    assert taken.hits((0, 0, 1000, 1000)) == (4.0, 485.0, 370.0, 498.0)  # (added: labels keep off)
    # a dot above the rule at x = 100: below it; a line below it too: at the right edge
    dot, line = (95.0, 490.0, 105.0, 500.0), (50.0, 509.0, 150.0, 511.0)
    for boxes, place in (([dot], ("left", "top")), ([dot, line], ("right", "bottom"))):
        taken = Taken()
        taken.add_array(boxes)
        assert restart_places([restart], plot, taken) == [place]
    # a guide (the ideal diagonal, a segment) across the left places: right, above
    taken = Taken()
    taken.add_segment((0.0, 700.0, 400.0, 300.0), palette.IDEAL)  # (through (200, 500))
    assert restart_places([restart], plot, taken) == [("right", "bottom")]
    assert taken.hits((0, 0, 1000, 1000)) == (630.0, 485.0, 996.0, 498.0)
    # marks on the rule under the left places (4 .. 370 px) and under the right (630 .. 996):
    # left out
    taken = Taken()
    taken.add_array([(200.0, 490.0, 210.0, 510.0), (800.0, 490.0, 810.0, 510.0)])
    assert restart_places([restart], plot, taken) == [None]
    # at the top edge there is no room above: below; another restart's rule 8 px above: below
    top = Restart(seq=10, proc_time=995, failed_at=None, checkpoint_id=None)
    assert restart_places([top], plot, Taken()) == [("left", "top")]
    early = Restart(seq=4, proc_time=492, failed_at=600, checkpoint_id=None)
    # (492 ms: y = 508, above it 493 .. 506 crosses the rule at 500: below, 510 .. 523; the
    # text of the restart at 500 ms above its rule, 485 .. 498, crosses neither)
    assert restart_places([early, restart], plot, Taken()) == [("left", "top"), ("left", "bottom")]


def test_the_restart_text_is_drawn_where_placed_and_said_left_out() -> None:
    y = TimeAxis("processing time", "ms", 0, 1000)
    first, second = Restart(5, 300, 400, 1), Restart(9, 600, 700, 2)
    notes: list[str] = []
    layers = restart_layers([first, second], y, [None, ("right", "top")], notes=notes)
    rule, text = layers  # (no text layer for the one left out)
    assert layer_rows(rule) == [
        {"y": 300, "text": "restarted from checkpoint 1 at 300 ms: watermarks back to MIN"},
        {"y": 600, "text": "restarted from checkpoint 2 at 600 ms: watermarks back to MIN"},
    ]
    assert layer_rows(text) == layer_rows(rule)[1:]
    mark = text["mark"]
    assert (mark["align"], mark["baseline"], mark["dx"], mark["dy"]) == ("right", "top", -4, 2)
    assert text["encoding"]["x"] == {"value": "width"}
    assert notes[1:3] == [
        "the restart's text at 300 ms is left out (it would cross marks): hover its rule",
        "a failure at 700 ms: the job restarted from checkpoint 2 — the clock went back to "
        "600 ms and every watermark to MIN; the replay is drawn over what came before",
    ]


def test_lesson_05s_restart_text_is_left_out_off_the_marks_it_crossed() -> None:
    """Lesson 05's restored job (a new-user trial): the text sat at the left edge above the rule
    at 12,100 ms, crossed by the watermark line and on f's replay ring and side-output
    triangle at x = 4,000; each place beside the rule crosses a mark (e's dot, read at
    12,100 ms, lies on the rule under both the left and the right places): left out."""
    chart = viz.timeline(lesson_05_restore().trace).to_dict()
    texts = [
        row["text"]
        for lay in chart["layer"]
        if lay["mark"]["type"] == "text"
        for row in chart["datasets"][lay["data"]["name"]]
        if "text" in row
    ]
    assert not [t for t in texts if t.startswith("restarted")], texts
    assert rows_of(chart, "rule", "text") == [
        {"y": 12_100, "text": "restarted from checkpoint 1 at 12,100 ms: watermarks back to MIN"}
    ]
    assert chart["usermeta"]["winviz"]["notes"][-2:] == [
        "a failure at 12,500 ms: the job restarted from checkpoint 1 — the clock went back to "
        "12,100 ms and every watermark to MIN; the replay is drawn over what came before",
        "the restart's text at 12,100 ms is left out (it would cross marks): hover its rule",
    ]


def test_a_restart_text_keeps_off_the_diagonal_and_the_edge_text(restarted) -> None:
    """A run started from checkpoint 1 (at 500 ms): above its rule at the left edge the text
    crossed the ideal diagonal (main drew it there) and so it does below the rule; at the right
    edge above it lies the MAX text (placed 18 px below its point, before the restart's text);
    at the right edge below the rule it crosses nothing, and the MAX text keeps its place."""
    fresh = late_after_a_firing().execute(restore_from=restarted.checkpoints[0])
    chart = viz.timeline(fresh.trace, view="timeline").to_dict()
    texts = {
        row["text"]: (mark["align"], mark["baseline"], mark["dx"], mark["dy"], x)
        for lay in chart["layer"]
        if lay["mark"]["type"] == "text"
        for mark, x in [(lay["mark"], lay["encoding"]["x"].get("value", "field"))]
        for row in chart["datasets"][lay["data"]["name"]]
        if "text" in row
    }
    assert texts == {
        "watermark = MAX (end of input) →": ("right", "top", -4, 18, "field"),
        "started from checkpoint 1 at 500 ms: watermarks back to MIN": (
            "right",
            "top",
            -4,
            2,
            "width",
        ),
    }
    assert chart["usermeta"]["winviz"]["notes"][-1] == (
        "the run started from checkpoint 1: every watermark started at MIN"
    )
