"""Where the timers chart puts its de-duplicated registrations ▼ and its labels (issue 26: "no
mark hides another, no label crosses a mark"): clear of every timer rule, beside their
timestamp's rules, binned into one "×n" where one ▼ would cover another, crowded timers' ▼ in
a row above the plot — and every registration drawn or counted."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
from chart_jobs import kernel_job, late_union_job

from tests.browser.gallery import running_example
from tests.test_viz_restore_at_t import lesson_05_restore
from winviz import viz
from winviz.trace.coded import first_of_each
from winviz.viz import timer_places as tp
from winviz.viz.boxes import Box, Taken, crosses, first_clear
from winviz.viz.palette import TimeAxis
from winviz.viz.skew import _across

DEDUP = "registration of a timer that already existed (de-duplicated)"


def plot() -> tp.Plot:
    """A 100 × 100 px plot of 0..100 ms either way (1 px a ms; y up)."""
    return tp.Plot(TimeAxis("x", "ms", 0, 100), TimeAxis("y", "ms", 0, 100), 100, 100)


def free(taken: Taken, box: Box, tags: Any = None) -> bool:
    """Whether ``box`` has a place (``boxes.first_clear``): it overlaps no box ``taken`` and
    no segment (tagged one of ``tags``; None: any) crosses it."""
    return first_clear([(0, [box])], taken, lines=(tags,), add=False) is not None


def rows(spec: dict[str, Any], pick: Any) -> list[dict[str, Any]]:
    return [r for data in spec["datasets"].values() for r in data if pick(r)]


def test_a_segment_crosses_a_box_it_runs_through_or_touches() -> None:
    box = (10.0, 10.0, 20.0, 20.0)
    assert crosses((15, 0, 15, 30), box)  # down through it
    assert crosses((10, 0, 10, 30), box)  # along its left edge
    assert not crosses((21, 0, 21, 30), box)  # a pixel right of it
    assert not crosses((15, 21, 15, 30), box)  # a rule that starts below it
    assert crosses((0, 0, 30, 30), box)  # its diagonal


def test_a_mark_may_lie_on_the_watermark_but_not_on_a_rule_and_a_text_on_neither() -> None:
    taken = Taken()
    taken.add_segment((0, 50, 100, 50), False)  # a watermark step
    taken.add_segment((80, 0, 80, 100))  # a timer's rule
    assert free(taken, (40, 46, 48, 54), tp.RULES)  # a ▼ on the 1.5 px line is seen
    assert not free(taken, (40, 46, 48, 54))  # a text crossed by it is not read
    assert not free(taken, (76, 10, 84, 18), tp.RULES)
    taken.add((40, 10, 48, 18))
    assert not free(taken, (44, 14, 52, 22), tp.RULES)


def test_the_places_a_dedup_tries_nearest_first_right_before_left() -> None:
    tries = tp._tries(-4.0, 4.0, 0.0)
    assert tries[:6] == [12.0, -12.0, 13.0, -13.0, 14.0, -14.0]
    assert len(tries) == 2 * tp.EVENT_STEPS * tp.EVENT_PX  # a px apart, 4 × 8 px each way
    assert tp._tries(-4.0, 4.0, 15.0)[:2] == [12.0, -27.0]  # its "×n" right of it, left too


def test_a_dedup_goes_left_of_its_rule_when_a_neighbours_rule_runs_right_of_it() -> None:
    px = plot()
    taken = Taken()
    for seg in tp.rule_segments(
        [{"x": 50, "dx": 0.0, "y": 0, "y2": 100}, {"x": 62, "dx": 0.0, "y": 0, "y2": 100}], px
    ):
        taken.add_segment(seg)
    dedups = [{"group": "a", "x": 50, "y": 50, "n": 1}]
    # 8 px right (centre 58, box 54..62) the rule at 62 runs through it: 8 px left is clear
    assert tp.dedup_places(dedups, {"a": (0.0, 0.0)}, taken, px) == []
    assert dedups[0]["dx"] == -8.0
    # and its box is now taken: a second one at the same point goes a pixel farther left
    second = [{"group": "a", "x": 50, "y": 50, "n": 1}]
    assert tp.dedup_places(second, {"a": (0.0, 0.0)}, taken, px) == []
    assert second[0]["dx"] == -16.0


def test_dedups_with_no_place_are_counted_near_or_drawn_in_the_row_above() -> None:
    px = plot()

    def crowded() -> Taken:  # rules every 6 px: no 8 px ▼ fits between two
        taken = Taken()
        for x in range(0, 101, 6):
            for seg in tp.rule_segments([{"x": x, "dx": 0.0, "y": 0, "y2": 100}], px):
                taken.add_segment(seg)
        return taken

    bins = [
        {"group": "a", "x": 48, "y": 50, "n": 2, "first": 50, "last": 50, "keys": ["k"],
         "reg_seq": 1},
        {"group": "a", "x": 48, "y": 55, "n": 1, "first": 55, "last": 55, "keys": ["j"],
         "reg_seq": 2},
        {"group": "b", "x": 50, "y": 20, "n": 1, "first": 20, "last": 20, "keys": ["k"],
         "reg_seq": 3},
    ]  # fmt: skip
    beside, above = tp.dedups_beside(bins, {}, crowded(), px)
    assert beside == []
    # "a"'s two (5 px apart) counted as one ▼ ×3 (the first on the second); "b"'s alone; in
    # the row above at their timestamps (x 48 and 50: 2 px apart), "b" a line (14 px) higher
    # than "a" and its "×3"
    got = [
        (r["group"], r["n"], r["first"], r["last"], r["keys"], r["dx"], r["above"]) for r in above
    ]
    assert got == [
        ("a", 3, 50, 55, ["j", "k"], 0.0, 9.0),
        ("b", 1, 20, 20, ["k"], 0.0, 23.0),
    ]


def test_the_running_examples_dedups_are_beside_their_rules_with_their_counts() -> None:
    spec = viz.timers_chart(running_example()).to_dict()
    dedup = rows(spec, lambda r: r.get("event") == DEDUP)
    # each element's trigger and cleanup timer (one timer: allowed lateness 0) registered
    # again: a's one, b's and c's two each (3,100 and 3,500 ms: 6 px apart, one ▼ "×4"),
    # d's two, e's one, g's two, h's one — 11; h's at the plot's right edge goes left
    assert [(r["x"], r["y"], r["dx"], r["registered"], r["registrations"]) for r in dedup] == [
        (9999, 1200, 8.0, "1,200 ms", 1),
        (9999, 3100, 8.0, "3,100 ms – 3,500 ms", 4),
        (9999, 7300, 8.0, "7,300 ms", 2),
        (19999, 12100, 8.0, "12,100 ms", 1),
        (19999, 16200, 8.0, "16,200 ms", 2),
        (29999, 25100, -8.0, "25,100 ms", 1),
    ]
    counts = rows(spec, lambda r: r.get("kind") == "dedup count")
    assert [(r["x"], r["y"], r["dx"], r["text"]) for r in counts] == [
        (9999, 3100, 13.0, "×4"),
        (9999, 7300, 13.0, "×2"),
        (19999, 16200, 13.0, "×2"),
    ]
    # the timestamps left of their rule, the watermark's label on its second step (its first
    # is too short: the next step ran through it)
    labels = rows(spec, lambda r: r.get("kind") in ("timestamp", "label"))
    assert [(r["x"], r["y"], r.get("dx"), r["text"]) for r in labels] == [
        (9999, 6700.0, 0.0, "@ 9,999 ms"),
        (19999, 18600.0, 0.0, "@ 19,999 ms"),
        (1999, 5300.0, None, "watermark"),
    ]
    assert spec["usermeta"]["winviz"]["notes"][-2] == (
        "de-duplicated registrations ▼: 11 drawn as 6 ▼ at their processing time beside their "
        "timestamp's rules (a ▼ with ×n: n of one timestamp at or near its processing time; "
        "hover for their times)"
    )


def test_no_dedup_lies_on_a_rule_and_every_one_is_drawn_or_counted() -> None:
    """On the crowded late-union job (155 de-duplicated registrations, 60 timers): no ▼'s box
    is crossed by a timer's rule (``on line`` of the browser check, computed from the spec),
    and the ▼' counts sum to the subtitle's 155."""
    spec = viz.timers_chart(late_union_job()).to_dict()
    main = spec["hconcat"][0]
    px = tp.Plot(*_axes(main), main["width"], main["height"])
    rules = rows(spec, lambda r: r.get("kind") == "timer")
    dedup = rows(spec, lambda r: r.get("event") == DEDUP)
    assert sum(r["registrations"] for r in dedup) == 155
    assert "155 de-duplicated registrations" in spec["usermeta"]["winviz"]["notes"][0]
    taken = Taken()
    for seg in tp.rule_segments(rules, px):
        taken.add_segment(seg)
    on = [r for r in dedup if "above" not in r and not free(taken, _box(r, px), tp.RULES)]
    assert on == []


def test_a_dedup_and_its_count_keep_off_the_watermarks_dots() -> None:
    """Lesson 05's restore job: the ▼ "×2" of 9,999 ms at 12,500 ms went 12 px right of
    its timestamp's rule (its "×2" at 17 px), on the dot of the first attempt's last
    watermark (10,999 ms at 12,200 ms; drawn over the ▼, its "×2" under it). The dots are
    taken (``place_marks``): the ▼ goes 23 px right, its "×2" at 28 px, clear of every dot."""
    spec = viz.timers_chart(lesson_05_restore().trace).to_dict()
    main = spec["hconcat"][0]
    px = tp.Plot(*_axes(main), main["width"], main["height"])
    counts = rows(spec, lambda r: r.get("kind") == "dedup count")
    assert [(r["x"], r["y"], r["dx"], r["text"]) for r in counts] == [
        (9999, 3100, 13.0, "×4"),
        (9999, 7300, 13.0, "×2"),
        (9999, 12500, 28.0, "×2"),
        (19999, 16200, 13.0, "×2"),
    ]
    dedup = rows(spec, lambda r: r.get("event") == DEDUP and r["y"] == 12500)
    assert [(r["x"], r["dx"], r["registrations"]) for r in dedup] == [(9999, 23.0, 2)]
    dots = rows(spec, lambda r: r.get("kind") == "watermark")
    assert (10999, 12200) in [(r["x"], r["y"]) for r in dots]
    taken = Taken()
    for r in dots:  # (a dot of size 14 px²: a circle of radius √(14/π) px)
        cx, cy, h = px.px(r["x"]), px.py(r["y"]), (14 / np.pi) ** 0.5
        taken.add((cx - h, cy - h, cx + h, cy + h))
    placed = [tp.dedup_boxes(px.px(r["x"]) + r["dx"], px.py(r["y"]), r["registrations"])
              for r in rows(spec, lambda r: r.get("event") == DEDUP)]  # fmt: skip
    assert [b for boxes in placed for b in boxes if not free(taken, b)] == []


def _axes(main: dict[str, Any]) -> tuple[TimeAxis, TimeAxis]:
    enc = main["layer"][1]["encoding"]  # the staircase's line: the x and y scales
    (x0, x1), (y0, y1) = enc["x"]["scale"]["domain"], enc["y"]["scale"]["domain"]
    return TimeAxis("x", "ms", x0, x1), TimeAxis("y", "ms", y0, y1)


def _box(r: dict[str, Any], px: tp.Plot) -> tp.Box:
    cx, cy, h = px.px(r["x"]) + r["dx"], px.py(r["y"]), tp.EVENT_PX / 2
    return (cx - h, cy - h, cx + h, cy + h)


def test_the_lag_labels_test_counts_the_line_segments_through_a_box() -> None:
    segments = np.array([(10, 0, 10, 100), (0, 50, 100, 50), (30, 0, 40, 10)], dtype=float)
    assert _across(segments, (5, 40, 15, 60)) == 2  # the vertical and the level one
    assert _across(segments, (20, 0, 25, 40)) == 0
    assert _across(segments, (32, 0, 38, 5)) == 1  # the diagonal's middle
    assert _across(segments, (36, 0, 40, 3)) == 0  # beside the diagonal
    # a rule along its edge crosses a box (``crosses``) but not the lag label's: only one
    # whose bounding box overlaps the label's counts
    assert crosses((10, 0, 10, 100), (10, 40, 15, 60))
    assert _across(segments, (10, 40, 15, 60)) == 1  # (the level one only)


def test_lines_across_a_box_are_counted_by_crosses_of_each() -> None:
    """``skew._across`` counts ``crosses`` of each segment whose bounding box overlaps the
    box: random segments (level, upright, slanted, points) against random boxes, edges
    touching included."""
    import random

    rnd = random.Random(3)
    for _ in range(200):
        segments = [
            tuple(float(rnd.randrange(0, 40)) for _ in range(4))
            for _ in range(rnd.randrange(0, 30))
        ]
        segments += [(s[0], s[1], s[0], s[3]) for s in segments[:5]]  # upright
        segments += [(s[0], s[1], s[2], s[1]) for s in segments[:5]]  # level
        left, top = rnd.randrange(0, 35), rnd.randrange(0, 35)
        box = (left, top, left + rnd.randrange(0, 10), top + rnd.randrange(0, 10))
        near = [
            s
            for s in segments
            if min(s[0], s[2]) < box[2]
            and max(s[0], s[2]) > box[0]
            and min(s[1], s[3]) < box[3]
            and max(s[1], s[3]) > box[1]
        ]
        got = _across(np.array(segments, dtype=float).reshape(-1, 4), box)
        assert got == sum(crosses(s, box) for s in near)


def test_taken_finds_the_segments_near_a_box_in_the_order_added_and_their_tags() -> None:
    taken = Taken()
    taken.add_segment((0.0, 0.0, 2000.0, 1000.0), "ideal")  # across 125 cells: tested always
    taken.add_segment((40.0, 0.0, 40.0, 100.0), "rule")
    taken.add_segment((30.0, 20.0, 50.0, 20.0), "level")
    assert taken.segments_near((35.0, 15.0, 45.0, 25.0)) == [
        ((0.0, 0.0, 2000.0, 1000.0), "ideal"),
        ((40.0, 0.0, 40.0, 100.0), "rule"),
        ((30.0, 20.0, 50.0, 20.0), "level"),
    ]
    assert taken.segments_near((60.0, 90.0, 70.0, 95.0)) == [((0.0, 0.0, 2000.0, 1000.0), "ideal")]
    assert taken.crossing((35.0, 15.0, 45.0, 25.0)) == "ideal"  # the first crossing it
    assert taken.crossing((35.0, 15.0, 45.0, 25.0), ("level",)) == "level"
    assert taken.crossing((35.0, 60.0, 45.0, 70.0)) == "rule"
    assert taken.crossing((35.0, 60.0, 45.0, 70.0), ("level",)) is None
    assert not free(taken, (35.0, 60.0, 45.0, 70.0))
    assert free(taken, (35.0, 60.0, 45.0, 70.0), ("level", "ideal"))
    assert taken.crossing((60.0, 90.0, 70.0, 95.0)) is None
    # not finite: every segment is near, and crossing is what ``crosses`` says of each
    nan = (float("nan"), 0.0, 1.0, 1.0)
    assert len(taken.segments_near(nan)) == 3
    assert crosses((0.0, 0.0, 2000.0, 1000.0), nan) and taken.crossing(nan) == "ideal"


def _in_view(rows: list[dict[str, Any]], view: str) -> list[dict[str, Any]]:
    """The rows the key dropdown shows for ``view`` ("": every key): ``timers.VIEW_FILTER``."""
    return [r for r in rows if (r["view"] == view if "view" in r else view in ("", r["key"]))]


def _events(key: str, n: int, first: int) -> list[dict[str, Any]]:
    return [
        {"x": 50, "y": 50, "dx": 0.0, "key": key, "reg_seq": first + i, "event": "registered"}
        for i in range(n)
    ]


def test_a_picked_key_shows_every_event_of_its_own_drawn_or_counted_on_its_own_mark() -> None:
    """Two events of key b, then twelve of key a, all at one point of a 100 px plot: every
    key's view draws nine side by side (its point, 4 steps right, 4 left) and counts a's
    last five on b's mark at the point (a ring of key b). Picking a (issue 26: its five were
    gone with b's mark and ring) shows a's seven where every key's view draws them, its five
    others placed again among its own — two drawn at b's places, three counted on its own
    mark at the point; picking b shows b's two and no ring (the five are not b's)."""
    points = _events("b", 2, 0) + _events("a", 12, 2)
    notes: list[str] = []
    drawn, rings, boxes = tp.side_by_side(points, plot(), notes, ["a", "b"])
    counts = {}
    for view in ("", "a", "b"):
        shown = _in_view(drawn, view)
        counts[view] = (
            [(r["key"], r["dx"], r["also here"]) for r in shown],
            [(r["key"], r["dx"], r["also here"]) for r in _in_view(rings, view)],
        )
        assert len(boxes[view]) == len(shown) + len(_in_view(rings, view))
    assert counts[""] == (
        [("b", 0.0, 5), ("b", 8.0, 0), ("a", 16.0, 0), ("a", 24.0, 0), ("a", 32.0, 0),
         ("a", -8.0, 0), ("a", -16.0, 0), ("a", -24.0, 0), ("a", -32.0, 0)],
        [("b", 0.0, 5)],
    )  # fmt: skip
    assert counts["a"] == (
        [("a", 16.0, 0), ("a", 24.0, 0), ("a", 32.0, 0), ("a", -8.0, 0), ("a", -16.0, 0),
         ("a", -24.0, 0), ("a", -32.0, 0), ("a", 0.0, 3), ("a", 8.0, 0)],
        [("a", 0.0, 3)],
    )  # fmt: skip
    assert counts["b"] == ([("b", 8.0, 0), ("b", 0.0, 0)], [])  # (its own row for 0.0: last)
    # rows alike in a key's view and every key's are written once: 9 + a's 2 + b's 1 of its
    # own; b's ring (of a's events) is every key's view's alone
    assert [r.get("view") for r in drawn] == [""] + [None] * 8 + ["a", "a", "b"]
    assert [r.get("view") for r in rings] == ["", "a"]
    # each key's events, drawn or counted in its view: all of them
    for view, n in (("", 14), ("a", 12), ("b", 2)):
        marks, piled = counts[view]
        assert len(marks) + sum(c for _, _, c in piled) == n
    assert notes == [
        "8 timer event(s) at the point of another drawn beside it, 8 px right or left (hover "
        "for its times)",
        "5 timer event(s) where others pile up counted on the mark there, not drawn: a ring "
        "marks it (hover it: 'also here')",
    ]


def test_every_key_of_the_dense_job_shows_each_of_its_timer_events() -> None:
    """The dense job (kernel_job(3000): 20 keys, 4 timers each, registered and fired): every
    key's view draws 126 of the 160 timer events and counts 34 on the marks where they pile
    up; each key picked draws its 8 (before issue 26's fix, most keys lost some: counted on
    another key's mark)."""
    spec = viz.timers_chart(kernel_job(3000)).to_dict()
    events = rows(spec, lambda r: r.get("kind") == "timer event" and r["event"] != DEDUP)
    piles = rows(spec, lambda r: r.get("kind") == "pile")
    keys = next(p for p in spec["params"] if p["name"] == "timer_key")["bind"]["options"]
    got = {
        view: (len(_in_view(events, view)), sum(r["also here"] for r in _in_view(piles, view)))
        for view in keys
    }
    assert got == {"": (126, 34)} | {f"k{i:02d}": (8, 0) for i in range(20)}


def test_first_of_each_numbers_values_in_order_of_first_appearance() -> None:
    codes, firsts = first_of_each(np.array([7, 3, 7, 9, 3, 9, 1], dtype=np.int64))
    assert codes.tolist() == [0, 1, 0, 2, 1, 2, 3]
    assert firsts.tolist() == [0, 1, 3, 6]
    codes, firsts = first_of_each(np.zeros(0, dtype=np.int64))
    assert (codes.tolist(), firsts.tolist()) == ([], [])


def test_the_dedup_rows_pixel_rows_are_px_py_of_each_clipped_time() -> None:
    p = plot()  # y: 0..100 ms on 100 px, up
    inside = np.array([0, 3, 50, 100], dtype=np.int64)  # (on the whole array at once)
    assert tp._rows_px(inside, p.y, p).tolist() == [100.0, 97.0, 50.0, 0.0]
    assert tp._rows_px(inside, p.y, p).tolist() == [p.py(v) for v in inside.tolist()]
    outside = np.array([-5, 3, 150], dtype=np.int64)  # (clipped to the axis, one by one)
    assert tp._rows_px(outside, p.y, p).tolist() == [100.0, 97.0, 0.0]
    absent = np.array([3, None], dtype=object)  # (no time: row 0)
    assert tp._rows_px(absent, p.y, p).tolist() == [97.0, 0.0]


def test_the_placement_rule_takes_the_first_clear_try_and_says_none_when_there_is_none() -> None:
    """``boxes.first_clear``, the one rule every placement calls: tries in order; a try is
    clear when every box lies inside the area, overlaps nothing taken and is crossed by no
    segment of the tags its position names (``lines``: None every segment, () none, the last
    entry for the boxes after); the place taken is added (``add``), so the next keeps off it."""
    taken = Taken()
    taken.add((10.0, 10.0, 20.0, 20.0))
    taken.add_segment((50.0, 0.0, 50.0, 100.0), "rule")
    tries = [
        ("on the box", [(12.0, 12.0, 18.0, 18.0)]),
        ("off the plot", [(-5.0, 30.0, 5.0, 40.0)]),
        ("across the rule", [(45.0, 30.0, 55.0, 40.0)]),
        ("its text on the box", [(30.0, 30.0, 40.0, 40.0), (15.0, 15.0, 25.0, 25.0)]),
        ("clear", [(30.0, 30.0, 40.0, 40.0), (45.0, 45.0, 55.0, 55.0)]),
    ]
    area = (0.0, 0.0, 100.0, 100.0)
    # the text (the second box) crosses the rule: only where its lines are () is it clear
    assert first_clear(tries, taken, inside=area, add=False) is None
    got = first_clear(tries, taken, inside=area, lines=(None, ()), add=False)
    assert got == ("clear", [(30.0, 30.0, 40.0, 40.0), (45.0, 45.0, 55.0, 55.0)])
    # no area: off the plot is a place; no lines at all: across the rule is one
    assert first_clear(tries, taken, add=False)[0] == "off the plot"
    assert first_clear(tries[2:], taken, inside=area, lines=((),), add=False)[0] == (
        "across the rule"
    )
    # a segment of another tag does not count; placed, its box is taken
    assert first_clear(tries[2:], taken, inside=area, lines=(("line",),))[0] == "across the rule"
    assert not free(taken, (50.0, 35.0, 51.0, 36.0), ())
    # many tries in one area: what met a try passes over those it still meets (``passed``)
    asked = []

    def passed(box, boxes, segments) -> int:
        asked.append(box)
        return 3

    row = [(k, [(k * 2.0, 60.0, k * 2.0 + 4.0, 64.0)]) for k in range(10)]
    taken.add((0.0, 60.0, 5.0, 64.0))  # meets tries 0, 1 and 2 (their left edge below 5)
    got = first_clear(row, taken, inside=area, near=(0.0, 60.0, 23.0, 64.0), passed=passed)
    assert (got[0], asked) == (3, [(0.0, 60.0, 4.0, 64.0)])


def test_the_placement_rule_reads_its_tries_only_as_far_as_the_first_clear_one() -> None:
    """``first_clear`` takes the tries as they come (a caller may offer endless ones, as the
    row above the plot does): the first clear is the last read (here of 100)."""
    taken = Taken()
    taken.add((0.0, 0.0, 10.0, 30.0))  # meets the tries at y 0, 10 and 20
    read = []

    def tries():
        for k in range(100):
            read.append(k)
            yield k, [(2.0, 10.0 * k, 8.0, 10.0 * k + 8.0)]

    assert first_clear(tries(), taken, add=False)[0] == 3
    assert read == [0, 1, 2, 3]


def test_the_row_above_stacks_marks_of_one_x_in_lines_each_mark_built_once(monkeypatch) -> None:
    """▼ in the row above the plot at one x go one line (14 px) higher each; one 40 px right
    goes in the first line again; each ▼'s boxes are built once (not once per line tried)."""
    built = []
    dedup_boxes = tp.dedup_boxes

    def counted(cx: float, cy: float, n: int) -> list[Box]:
        built.append(n)
        return dedup_boxes(cx, cy, n)

    monkeypatch.setattr(tp, "dedup_boxes", counted)
    marks = [
        {"group": k, "x": 50 if k < 6 else 90, "y": 50, "n": 1 + k % 2, "first": 5, "last": 5,
         "keys": ["k"], "reg_seq": k}
        for k in range(8)
    ]  # fmt: skip
    above = tp.in_row_above(marks, {}, plot())
    assert [(r["group"], r["above"]) for r in above] == [
        (0, 9.0), (1, 23.0), (2, 37.0), (3, 51.0), (4, 65.0), (5, 79.0), (6, 9.0), (7, 23.0)
    ]  # fmt: skip
    assert built == [1, 2, 1, 2, 1, 2, 1, 2]


def test_dedup_bins_grow_as_tall_as_the_plot_then_as_wide_as_needed(monkeypatch) -> None:
    """More (domain, timestamp)s than a layer holds: the rows of the ▼ bins double in height
    until one holds the whole plot (8, 16, 32, 64, 128 px: five tries; taller ones would hold
    as many bins for ever), then the bins take columns of 8, 16 … px instead of one timestamp
    each (a bin of several written as their range) until they fit."""
    frames = []
    frame = pd.DataFrame

    def counted(*args: Any, **kwargs: Any) -> pd.DataFrame:
        frames.append(1)
        assert len(frames) < 64, "the ▼ rows grow taller for ever"
        return frame(*args, **kwargs)

    records = pd.DataFrame(
        {"timer": [0, 0, 1, 2], "key": ["k"] * 4, "domain": ["event"] * 4,
         "ts": [10, 10, 20, 30], "proc_time": [5, 95, 50, 95], "seq": [0, 1, 2, 3]}
    )  # fmt: skip
    p = plot()
    monkeypatch.setattr(tp.pd, "DataFrame", counted)
    got = []
    for limit in (6, 4):  # (three bins a layer, then two)
        monkeypatch.setattr(tp.scale, "ROW_LIMIT", limit)
        bins = tp.dedup_bins(records, np.arange(4), p.x, p.y, p)
        got.append([(b["x"], b["y"], b["n"], b["first"], b["last"], b["timestamp"]) for b in bins])
        got.append(len(frames))
        frames.clear()
    assert got == [
        # 10's two (90 px apart) in one row of 128 px
        [(10, 5, 2, 5, 95, "10 ms"), (20, 50, 1, 50, 50, "20 ms"), (30, 95, 1, 95, 95, "30 ms")],
        5,
        # columns of 8 px: 10, 20 and 30 apart; of 16 px: 20 and 30 in one (x of the first)
        [(10, 5, 2, 5, 95, "10 ms"), (20, 50, 2, 50, 95, "20 ms .. 30 ms")],
        7,
    ]


def _dedup_notes(monkeypatch, job: Any, limit: int) -> tuple[list[tuple], list[str]]:
    """The ▼ (x, timestamp text, registrations, in the row above) and the subtitle's ▼ notes of
    ``job``'s timers chart with ``limit`` rows a layer (two bins a layer for 4)."""
    monkeypatch.setattr(tp, "scale", SimpleNamespace(ROW_LIMIT=limit))
    spec = viz.timers_chart(job()).to_dict()
    dedup = rows(spec, lambda r: r.get("event") == DEDUP)
    got = [(r["x"], r["timestamp"], r["registrations"], "above" in r) for r in dedup]
    return got, [n for n in spec["usermeta"]["winviz"]["notes"] if "▼" in n]


def test_a_note_says_a_dedup_of_a_column_stands_for_several_timestamps(monkeypatch) -> None:
    """The running example's 11 ▼ registrations of 3 timestamps, two bins a layer: rows as
    tall as the plot hold three, so the bins take columns (256 px: 9,999 ms alone, 19,999 and
    29,999 ms in one) and the note says so — not "n of one timestamp"."""
    got, notes = _dedup_notes(monkeypatch, running_example, 4)
    assert got == [(9999, "9,999 ms", 7, False), (19999, "19,999 ms .. 29,999 ms", 4, False)]
    assert notes == [
        "de-duplicated registrations ▼: 11 drawn as 2 ▼, one per timer domain and 256 px "
        "column of timestamps (whatever their processing time), at the timestamp and "
        "processing time of the column's first registration, beside its timestamp's rules "
        "(×n: n registrations at timestamps within the column; hover for their timestamps' "
        "range and their times)"
    ]


def test_a_note_says_rows_of_dedups_taller_than_a_mark(monkeypatch) -> None:
    """Three bins a layer: the running example's ▼ rows grow to 256 px (one timestamp each,
    9,999 ms's 7 from 1,200 to 7,300 ms in one ▼) and the note says how tall."""
    got, notes = _dedup_notes(monkeypatch, running_example, 6)
    assert got == [
        (9999, "9,999 ms", 7, False), (19999, "19,999 ms", 3, False), (29999, "29,999 ms", 1, False)
    ]  # fmt: skip
    assert notes == [
        "de-duplicated registrations ▼: 11 drawn as 3 ▼ at their processing time beside their "
        "timestamp's rules (a ▼ with ×n: n of one timestamp registered within one 256 px row "
        "of processing time (or a near ▼'s), drawn at the first's; hover for their times)"
    ]


def test_dedups_all_in_the_row_above_get_no_note_of_none_beside(monkeypatch) -> None:
    """The late-union job's 155 ▼ registrations, two bins a layer: both column bins go to the
    row above; its note says what they stand for and no note says "0 drawn as 0 ▼"."""
    got, notes = _dedup_notes(monkeypatch, late_union_job, 4)
    assert got == [(199, "199 ms .. 1,149 ms", 68, True), (1199, "1,199 ms .. 1,949 ms", 87, True)]
    assert notes == [
        "155 de-duplicated registrations too crowded for a ▼ beside their timer's rule: 2 ▼ in "
        "a row above the plot, one per timer domain and 256 px column of timestamps (whatever "
        "their processing time), at the timestamp of the column's first registration (×n: n "
        "registrations at timestamps within the column; hover for their timestamps' range and "
        "their times)"
    ]
