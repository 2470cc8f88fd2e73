"""Issue 26, what the gallery overlap check found around a restore and far-off labels: the
replay's readings again (``winviz.viz.replay``: one rule for the timeline, the skew chart and
the scrubber), the restart texts placed off marks, firing labels kept near their mark or
joined to it by a leader line, and a merge mark one can see."""

from __future__ import annotations

import math
from typing import Any

import pytest

import winviz as wv
from tests.browser.gallery import restored, running_example
from tests.chart_jobs import session_job
from winviz import viz
from winviz.viz import palette, propagation, replay
from winviz.viz.boxes import Taken
from winviz.viz.labels import (
    LABEL_PLACES,
    LABEL_REACH_PX,
    Plot,
    _place_in_order,
    _place_labels,
    _text_box,
    label_leaders,
)
from winviz.viz.palette import TimeAxis
from winviz.viz.watermark_steps import Restart

AGAIN = "after restore from checkpoint 1"


def layers_of(spec: dict[str, Any]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(mark, rows) of each layer of a layer chart's spec."""
    return [(lay["mark"], spec["datasets"][lay["data"]["name"]]) for lay in spec["layer"]]


@pytest.fixture(scope="module")
def restore_run() -> wv.JobExecutionResult:
    return restored()


# -- the replay: one rule, three charts ---------------------------------------------------------


def test_read_again_names_the_restore_a_reading_follows() -> None:
    first, second = Restart(36, 500, 700, 1), Restart(60, 900, 1000, 2)
    seqs = [1, 7, 23, 33, 40, 45, 62, 70]
    sources = [0, 1, 2, 3, 3, 4, None, 4]
    stamps = [100, 1200, 1300, 500, 500, 800, 100, 800]
    values = ["a", "b", "c", "d", "d", "e", "a", "e"]
    assert replay.read_again(seqs, sources, stamps, values, [first, second]) == [
        None,  # read once, before any restart
        None,
        None,
        None,  # d's first reading (seq 33), before the restore at seq 36 ...
        AGAIN,  # ... read again after it
        None,  # e, first read after the first restore
        None,  # no source record (made upstream): never called read again
        "after restore from checkpoint 2",  # e again, after the second restore
    ]
    assert replay.read_again(seqs, sources, stamps, values, []) == [None] * len(seqs)
    # from the beginning (a run restarted with no checkpoint)
    start = Restart(36, 0, 700, None)
    assert replay.read_again([33, 40], [3, 3], [5, 5], ["d", "d"], [start]) == [
        None,
        "after restart from the beginning",
    ]


def test_the_reading_again_is_hollow_around_the_first_on_every_chart(restore_run) -> None:
    r = restore_run
    e = [x.seq for x in r.trace.records("element") if x.operator == "window"]
    # the element ("a", 500) is read at seq e[3] (side output), again at e[4] after the restore
    charts = {
        "timeline": (viz.timeline(r.trace, view="timeline"), 70, (500, 700)),
        "skew": (viz.skew_chart(r.trace), 40, (700, 200)),
        "scrubber": (viz.scrubber(r.trace), 70, (500, 700)),
    }
    for name, (chart, size, at) in charts.items():
        spec = chart.to_dict()
        elements = [(m, rows) for m, rows in layers_of(spec) if rows and "seq" in rows[0]]
        elements = [(m, rows) for m, rows in elements if rows[0].get("kind") == "element"]
        again = [(m, rows) for m, rows in elements if replay.FIELD in rows[0]]
        assert len(again) == 1, name
        mark, rows = again[0]
        assert [(row["seq"], row[replay.FIELD]) for row in rows] == [(e[4], AGAIN)], name
        assert (rows[0]["x"], rows[0]["y"]) == at, name
        assert mark["filled"] is False and mark["size"] == round(size * 2.6), name
        assert mark["strokeWidth"] == 1.5 and mark["opacity"] == 1, name
        # the first reading stays in the filled layer, at the same point
        # (the scrubber's faded layer of elements not arrived yet, one colour, aside)
        firsts = [
            row for m, rows in elements if m.get("filled") and "color" not in m for row in rows
        ]
        assert [(row["x"], row["y"]) for row in firsts if row["seq"] == e[3]] == [at], name
        assert e[4] not in [row["seq"] for row in firsts], name
        note = (
            "1 element read again after restore from checkpoint 1 (the replay): drawn hollow "
            "and larger, around the first reading where it is read at the same place"
        )
        assert note in spec["usermeta"]["winviz"]["notes"], name
        (tips,) = [lay["encoding"]["tooltip"] for lay in spec["layer"] if lay["mark"] is mark]
        assert replay.FIELD in [t["field"] for t in tips], name
    # the scrubber's legends are independent: the readings again have their own, of the fates
    # read again only (here the replay's on-time reading)
    spec = charts["scrubber"][0].to_dict()
    (enc,) = [  # (the other hollow layer: the end of input's square outline, one colour)
        lay["encoding"]
        for lay in spec["layer"]
        if lay["mark"].get("filled") is False and "color" in lay["encoding"]
    ]
    for channel, values in (("color", ["#0072B2"]), ("shape", ["circle"])):
        assert enc[channel]["title"] == "read again (replay)"
        assert enc[channel]["scale"] == {"domain": ["on time"], "range": values}


def test_no_restart_no_reading_again() -> None:
    spec = viz.timeline(running_example().trace).to_dict()
    assert not any(rows and replay.FIELD in rows[0] for _, rows in layers_of(spec))
    assert not any("read again" in n for n in spec["title"]["subtitle"])


# -- the restarts' texts -----------------------------------------------------------------------


def test_the_min_edge_text_is_inside_the_plot_left_aligned(restore_run) -> None:
    spec = viz.timeline(restore_run.trace, view="timeline").to_dict()
    edges = [
        (m, rows)
        for m, rows in layers_of(spec)
        if m["type"] == "text" and rows and rows[0].get("text") == "← watermark = MIN"
    ]
    assert len(edges) == 1
    mark, rows = edges[0]
    # at the left edge (x.lo), starting 4 px right of it: off the processing-time axis
    assert (mark["align"], mark["dx"], mark["baseline"], mark["dy"]) == ("left", 4, "top", 4)
    lo = spec["layer"][0]["encoding"]["x"]["scale"]["domain"][0]
    assert [(r["x"], r["y"]) for r in rows] == [(lo, 500)]


def test_the_restart_text_goes_beside_its_rule_off_the_dots() -> None:
    x = TimeAxis("processing time", "ms", 0, 1000)
    y = TimeAxis("watermark (event time)", "ms", 0, 1000)
    plot = propagation.Plot(x, y, 1000, 1000)
    text = "restart from checkpoint 1: watermarks at MIN"  # 44 characters: 264 px
    assert propagation._restart_place(500, text, plot, [], []) == ("left", 2)
    # a dot right of the rule at the top: left of it
    dot = [(600.0, 0.0, 606.0, 6.0)]
    assert propagation._restart_place(500, text, plot, list(dot), []) == ("right", 2)
    # dots both sides at the top: a line lower; a step line there too: lower still
    both = [(600.0, 0.0, 606.0, 6.0), (300.0, 0.0, 306.0, 6.0)]
    assert propagation._restart_place(500, text, plot, list(both), []) == ("left", 16)
    line = [(0.0, 14.0, 1000.0, 20.0)]
    assert propagation._restart_place(500, text, plot, list(both), line) == ("left", 30)
    # no room right of the rule (near the right edge): left of it
    assert propagation._restart_place(900, text, plot, [], []) == ("right", 2)
    # nothing free of both (a line everywhere): left out, its box not added (it crossed a
    # line, at ("left", 16), before the one placement rule: no text crosses a mark or line)
    everywhere, held = [(0.0, 0.0, 1000.0, 1000.0)], list(both)
    assert propagation._restart_place(500, text, plot, held, everywhere) is None
    assert held == both
    # lines over the top 70 px (the five lines tried before): a line lower each time, down
    # the panel, 72 .. 84 px
    high = [(0.0, 0.0, 1000.0, 70.0)]
    assert propagation._restart_place(500, text, plot, [], high) == ("left", 72)
    # its box is added to the dots: a second restart 100 px right keeps off its text (left
    # of the rule at 2 px: 503 .. 767 × 2 .. 14) — a line lower, no longer over it
    dots: list = []
    assert propagation._restart_place(500, text, plot, dots, []) == ("left", 2)
    assert dots == [(503, 2, 767.0, 14)]
    assert propagation._restart_place(600, text, plot, dots, []) == ("left", 16)


def test_the_gallery_restart_text_sits_left_of_its_rule(restore_run) -> None:
    spec = viz.propagation_chart(restore_run.trace).to_dict()
    texts = [m for m, rows in layers_of(spec) if m["type"] == "text"]
    # the dots right of the rule at the top (the watermark reaching 1,299 at 600 ms): left
    assert [(m["align"], m["dx"], m["baseline"]) for m in texts] == [("right", -3, "top")]


# -- firing labels near their mark --------------------------------------------------------------


def _plot() -> Plot:
    """1 px per ms both ways: a point (x, y) is drawn at (x, 1000 − y)."""
    x = TimeAxis("event time", "ms", 0, 1000)
    y = TimeAxis("processing time", "ms", 0, 1000)
    return Plot(x, y, 1000, 1000)


def test_a_label_with_room_beside_its_mark_has_no_leader() -> None:
    rows = [{"x": 500, "y": 500, "label": "abc"}]
    placed, hidden = _place_labels(rows, _plot(), Taken())
    assert hidden == 0
    assert placed == {("left", 7, -9): [
        {"x": 500, "y": 500, "label": "abc", "kind": "firing label"}
    ]}  # fmt: skip
    # its box (507, 485)–(525, 497): 7.6 px from the mark's centre (500, 500)
    assert _text_box(500, 500, "abc", "left", 7, -9) == (507, 485.0, 525.0, 497.0)
    assert label_leaders(placed) == []


def test_a_label_a_line_away_is_joined_to_its_mark() -> None:
    taken = Taken()
    # blocks the four places beside the mark, not the way up from it to a line above
    taken.add((470, 486, 495, 514))
    taken.add((506, 490, 530, 514))
    rows = [{"x": 500, "y": 500, "label": "abc"}]
    placed, hidden = _place_labels(rows, _plot(), taken)
    assert hidden == 0
    assert list(placed) == [("left", 7, -21)]  # box (507, 473)–(525, 485)
    # nearest point of the box to the mark's centre: 7 px right, 15 px up (16.55 px > 12):
    # a leader from the mark's edge (5.5 px towards it) to that point
    far = math.hypot(7, 15)
    assert far > LABEL_REACH_PX
    assert label_leaders(placed) == [
        {
            "x": 500,
            "y": 500,
            "label": "abc",
            "kind": "leader",
            "xOffset": round(5.5 * 7 / far, 2),
            "yOffset": round(-5.5 * 15 / far, 2),
            "x2Offset": 7.0,
            "y2Offset": -15.0,
        }
    ]
    assert (round(5.5 * 7 / far, 2), round(-5.5 * 15 / far, 2)) == (2.33, -4.98)


def test_no_leader_line_crosses_a_box_taken() -> None:
    # a box all round the mark: every place a line or two away has its leader cross it
    taken = Taken()
    taken.add((470, 486, 530, 514))
    placed, hidden = _place_labels([{"x": 500, "y": 500, "label": "abc"}], _plot(), taken)
    assert (placed, hidden) == ({}, 1)
    # a leader's way kept free: the label goes a line up, its leader's small boxes taken
    taken = Taken()
    taken.add((470, 486, 495, 514))
    taken.add((506, 490, 530, 514))
    placed, _ = _place_labels([{"x": 500, "y": 500, "label": "abc"}], _plot(), taken)
    assert list(placed) == [("left", 7, -21)]
    assert taken.hits((503, 490, 504, 491))  # (on the leader's way)


def test_a_crowd_s_labels_are_retried_right_to_left() -> None:
    # four marks side by side at one height under the top edge: left to right, a label's
    # leader a line below would cross the label of the mark right of it, and one is left
    # out; right to left, all fit
    rows = [{"x": 100 + 11 * i, "y": 985, "label": f"label {i} long text"} for i in range(4)]
    order = [0, 1, 2, 3]
    assert _place_in_order(rows, order, _plot(), Taken(), [0] * 4, "label")[1] == 1
    taken = Taken()
    placed, hidden = _place_labels(rows, _plot(), taken, [0] * 4)
    assert hidden == 0
    assert sorted(r["label"] for v in placed.values() for r in v) == [r["label"] for r in rows]


def test_a_shifted_marks_leader_starts_at_the_shifted_mark() -> None:
    taken = Taken()
    taken.add((470, 486, 506, 514))
    taken.add((517, 490, 545, 514))
    rows = [{"x": 500, "y": 500, "label": "abc"}]
    # the mark drawn 11 px right of its point (side by side): the label's dx includes it
    placed, _ = _place_labels(rows, _plot(), taken, [11])
    assert list(placed) == [("left", 18, -21)]
    (leader,) = label_leaders(placed)
    far = math.hypot(7, 15)
    assert (leader["xOffset"], leader["yOffset"]) == (round(11 + 5.5 * 7 / far, 2), -4.98)
    assert (leader["x2Offset"], leader["y2Offset"]) == (18.0, -15.0)


def test_the_running_examples_far_labels_have_leaders() -> None:
    spec = viz.timeline(running_example().trace).to_dict()
    leaders = [rows for m, rows in layers_of(spec) if m["type"] == "rule"]
    leaders = [r for rows in leaders for r in rows if r.get("kind") == "leader"]
    # "abcd · event-time timer at 9999" sat above element f (4,000 ms) with nothing joining
    # it to its square at 9,999: now a leader line does, as for "h · end of input"
    assert [(r["label"], r["x"], r["y"]) for r in leaders] == [
        ("h · end of input", 29999, 25100),
        ("abcd · event-time timer at 9999", 9999, 12200),
    ]
    assert {(r["xOffset"], r["yOffset"], r["x2Offset"], r["y2Offset"]) for r in leaders} == {
        (-2.33, -4.98, -7.0, -15.0)
    }
    near = [
        rows
        for m, rows in layers_of(spec)
        if m["type"] == "text" and rows and rows[0].get("kind") == "firing label"
        and abs(m["dy"]) == 9
    ]  # fmt: skip
    assert [r["label"] for rows in near for r in rows] == ["eg · event-time timer at 19999"]


# -- the ideal diagonal: a guide, crossed only where a label has no other place -----------------

DIAGONAL = ((0.0, 1000.0, 1000.0, 0.0), palette.IDEAL)  # x + y = 1000 in pixels


def test_a_label_keeps_off_a_guide_where_another_place_is_free() -> None:
    taken = Taken()
    taken.add_segment(*DIAGONAL)  # through its first place, (507, 485)–(525, 497)
    placed, hidden = _place_labels([{"x": 500, "y": 500, "label": "abc"}], _plot(), taken)
    # the next place, right below the mark ((507, 503)–(525, 515)), is off it
    assert (placed, hidden) == (
        {("left", 7, 9): [{"x": 500, "y": 500, "label": "abc", "kind": "firing label"}]},
        0,
    )
    # farther away (a leader to it) rather than across the guide: the places beside the mark
    # taken, the guide through the first place a line up (507, 473)–(525, 485), the next
    # ones a line away have their leaders cross a box taken: two lines below
    taken = Taken()
    taken.add((470, 486, 495, 514))
    taken.add((506, 490, 530, 514))
    taken.add_segment((0.0, 995.0, 995.0, 0.0), palette.IDEAL)
    placed, _ = _place_labels([{"x": 500, "y": 500, "label": "abc"}], _plot(), taken)
    assert list(placed) == [("left", 7, 33)]
    assert "across" not in placed[("left", 7, 33)][0]


def test_a_label_crosses_a_guide_where_no_other_place_is_free() -> None:
    # every place but the first taken, the guide through the first: the label crosses the
    # guide (a faint line, not a mark) rather than being left out, and says so
    taken = Taken()
    for place in LABEL_PLACES[1:]:
        taken.add(_text_box(500, 500, "abc", *place))
    before = taken.copy()
    taken.add_segment(*DIAGONAL)
    placed, hidden = _place_labels([{"x": 500, "y": 500, "label": "abc"}], _plot(), taken)
    assert hidden == 0
    assert placed == {("left", 7, -9): [
        {"x": 500, "y": 500, "label": "abc", "kind": "firing label", "across": palette.IDEAL}
    ]}  # fmt: skip
    # without the guide the same place, unmarked
    placed, _ = _place_labels([{"x": 500, "y": 500, "label": "abc"}], _plot(), before)
    assert "across" not in placed[("left", 7, -9)][0]


def test_the_running_examples_texts_across_the_diagonal_say_so() -> None:
    # at the end of input the diagonal runs through the top-right corner: the MAX text and
    # "h · end of input" have no place off it (no mark, line or label there) and cross it,
    # marked; every other text keeps off it
    spec = viz.timeline(running_example().trace).to_dict()
    texts = [
        (r.get("label") or r["text"], r.get("across"))
        for m, rows in layers_of(spec)
        if m["type"] == "text"
        for r in rows
    ]
    assert sorted(texts) == [
        ("abcd · event-time timer at 9999", None),
        ("eg · event-time timer at 19999", None),
        ("h · end of input", palette.IDEAL),
        ("watermark = MAX (end of input) →", palette.IDEAL),
    ]


# -- the merge mark -----------------------------------------------------------------------------


def test_the_merge_mark_is_a_glyph_as_big_as_a_square() -> None:
    spec = viz.timeline(session_job(), view="timeline").to_dict()
    (merged,) = [
        lay
        for lay in spec["layer"]
        if spec["datasets"][lay["data"]["name"]][0].get("kind") == "merged"
    ]
    assert merged["mark"]["size"] == 160  # its box: √160 ≈ 12.6 px each way
    shapes = merged["encoding"]["shape"]["scale"]
    assert shapes["range"][shapes["domain"].index("merged")] == palette.MERGE_SHAPE
    assert palette.MERGE_SHAPE == "M-1,-1L0,0L-1,1ZM1,-1L0,0L1,1Z"  # ▶◀ in the [-1, 1] square
    assert "wedge" not in palette.WINDOW_EVENT_SHAPES


def test_a_line_s_segment_boxes_join_only_rows_of_one_line() -> None:
    """Issue 30: one segment-box rule (``labels.segment_boxes``) for the label placer (rows
    of one operator and attempt) and the propagation chart's step lines (of one line, role
    and attempt): each two rows in turn alike and both placed make a box 1 px wider on every
    side, exact ints or not."""
    from winviz.viz.labels import segment_boxes

    x = TimeAxis("processing time", "ms", 0, 1000)
    y = TimeAxis("watermark (event time)", "ms", 0, 1000)
    plot = propagation.Plot(x, y, 500, 100)
    rows = [
        {"x": 0, "y": 0, "operator": "a", "line": "a"},
        {"x": 100, "y": 500, "operator": "a", "line": "a"},
        {"x": 200, "y": None, "operator": "a", "line": "a"},
        {"x": 300, "y": 500, "operator": "a", "line": "a"},
        {"x": 400, "y": 600, "operator": "b", "line": "a"},
        {"x": 500, "y": 600, "operator": "b", "line": "a"},
    ]
    assert segment_boxes(rows, plot).tolist() == [
        [-1.0, 49.0, 51.0, 101.0],
        [199.0, 39.0, 251.0, 41.0],
    ]
    by_line = segment_boxes(rows, plot, ("line", "role")).tolist()
    assert by_line == [
        [-1.0, 49.0, 51.0, 101.0],
        [149.0, 39.0, 201.0, 51.0],
        [199.0, 39.0, 251.0, 41.0],
    ]
    rows[4]["role"] = rows[5]["role"] = "in"  # (another role: another line)
    assert segment_boxes(rows, plot, ("line", "role")).tolist() == by_line[:1] + by_line[2:]
    floats = [dict(r, x=float(r["x"])) for r in rows]  # (Plot.px one value at a time)
    assert segment_boxes(floats, plot).tolist() == segment_boxes(rows, plot).tolist()
    assert segment_boxes(rows[:1], plot).shape == (0, 4)


def test_a_point_layer_s_boxes_are_its_placed_marks() -> None:
    """Issue 30: one point-box rule (``labels.point_boxes``) for the label placer and the
    propagation chart's dots (which a restart's text keeps off): a box √size / 2 + 1 px
    each side of a placed mark, moved ``dx`` px where the mark's ``xOffset`` says so."""
    from winviz.viz.labels import point_boxes

    x = TimeAxis("processing time", "ms", 0, 1000)
    y = TimeAxis("watermark (event time)", "ms", 0, 1000)
    plot = propagation.Plot(x, y, 500, 100)
    rows = [{"x": 100, "y": 500, "dx": 11}, {"x": None, "y": 0}, {"x": 1000, "y": 0}]
    layer = {"data": {"values": rows}, "mark": {"type": "point", "size": 16}}
    assert point_boxes(layer, plot).tolist() == [
        [47.0, 47.0, 53.0, 53.0],
        [497.0, 97.0, 503.0, 103.0],
    ]
    layer["mark"] |= {"xOffset": {"field": "dx"}, "size": 64}
    assert point_boxes(layer, plot).tolist() == [
        [56.0, 45.0, 66.0, 55.0],
        [495.0, 95.0, 505.0, 105.0],
    ]
