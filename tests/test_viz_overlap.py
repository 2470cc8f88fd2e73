"""No mark hides another, no label crosses a mark, one palette (issue 26): the spec-level
half (the rendered half is tests/browser/test_chart_overlap.py)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import winviz as wv
from tests.browser.gallery import coinciding_firings, restored, running_example
from tests.chart_jobs import late_union_job, session_job
from winviz.viz import boxes, palette, piles

labels = importlib.import_module("winviz.viz.labels")  # element_label (viz.labels: a module)


def rows_of(spec: dict[str, Any], kind: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(layer mark, row) of every row of this kind, over all layers."""
    return [
        (lay["mark"], r)
        for lay in spec["layer"]
        for r in spec["datasets"][lay["data"]["name"]]
        if r.get("kind") == kind
    ]


def test_the_running_examples_dots_are_labelled_a_to_h() -> None:
    spec = wv.timeline(running_example(), element_labels=0).to_dict()
    labels = rows_of(spec, "element label")
    elements = {(r["x"], r["y"]) for _, r in rows_of(spec, "element")}
    assert sorted(r["label"] for _, r in labels) == list("abcdefgh")
    assert all((r["x"], r["y"]) in elements for _, r in labels)  # each beside its own dot
    assert not any("element label(s) left out" in n for n in spec["title"]["subtitle"])


def test_element_labels_by_key_or_function() -> None:
    assert labels.element_label('{"name": "a", "v": 1}', "name") == "a"
    assert labels.element_label('["a", 1000]', 1) == "1000"
    assert labels.element_label('["a", 1000]', 5) == ""  # names nothing: no label
    assert labels.element_label('["a", 1000]', lambda v: v[0].upper()) == "A"
    with pytest.raises(ValueError, match="element_labels must be"):
        wv.timeline(running_example(), element_labels=1.5)


def far_element_labels(spec: dict[str, Any]) -> list[tuple[str, int, int, int, int]]:
    """(label, x, y, dx, dy) of every element label placed beyond ``labels.LABEL_REACH_PX``
    of its dot (the first four ``LABEL_PLACES``, |dy| 9, are within it)."""
    return [
        (r["label"], r["x"], r["y"], m["dx"], m["dy"])
        for m, r in rows_of(spec, "element label")
        if abs(m["dy"]) > 9
    ]


def test_an_element_label_away_from_its_dot_has_a_leader_line_to_it() -> None:
    """The sessions' crowded dots: 9 labels sit a line further (|dy| 21) from their dot than
    the 9 px of their first places; each has a rule from the dot's edge (sqrt(70) / 2 =
    4.18 px off its centre) to its box's nearest corner (7, 15) — before, none had one and a
    learner could not tell which dot such a label named."""
    spec = wv.timeline(session_job(), element_labels=0).to_dict()
    assert far_element_labels(spec) == [
        ("s3", 1132, 795, -7, -21), ("s3", 600, 375, -7, -21), ("s2", 1432, 670, 7, 21),
        ("s1", 1004, 365, 7, 21), ("s0", 576, 60, 7, 21), ("s3", 528, 55, 7, 21),
        ("s2", 480, 50, 7, 21), ("s1", 432, 45, 7, 21), ("s0", 384, 40, 7, 21),
    ]  # fmt: skip
    ends = [(r["label"], r["x"], r["y"], r["xOffset"], r["yOffset"], r["x2Offset"],
             r["y2Offset"]) for _, r in rows_of(spec, "leader")]  # fmt: skip
    assert ends == [
        ("s3", 1132, 795, -1.77, -3.79, -7, -15), ("s3", 600, 375, -1.77, -3.79, -7, -15),
        ("s2", 1432, 670, 1.77, 3.79, 7, 15),
        ("s1", 1004, 365, 1.77, 3.79, 7, 15), ("s0", 576, 60, 1.77, 3.79, 7, 15),
        ("s3", 528, 55, 1.77, 3.79, 7, 15), ("s2", 480, 50, 1.77, 3.79, 7, 15),
        ("s1", 432, 45, 1.77, 3.79, 7, 15), ("s0", 384, 40, 1.77, 3.79, 7, 15),
    ]  # fmt: skip
    # the late union: 18 of its 105 element labels far, each with one leader of its own
    # (and 3 firing labels with theirs)
    spec = wv.timeline(late_union_job(), element_labels=0).to_dict()
    far = sorted((t, x, y) for t, x, y, _, _ in far_element_labels(spec))
    leaders = sorted((r["label"], r["x"], r["y"]) for _, r in rows_of(spec, "leader"))
    assert (len(rows_of(spec, "element label")), len(far), len(leaders)) == (105, 18, 21)
    assert [e for e in leaders if e in far] == far


def _pixel_boxes(spec: dict[str, Any], kind: str) -> list[tuple[float, ...]]:
    """The pixel box of each row of this kind on a timeline: a label's text box
    (``labels._text_box``), a point mark's square of side sqrt(size) moved by its ``dx``."""
    enc = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "point")["encoding"]
    x, y = (palette.TimeAxis(c, "ms", *enc[c]["scale"]["domain"]) for c in ("x", "y"))
    plot = labels.Plot(x, y, spec["width"], spec["height"])
    out = []
    for m, r in rows_of(spec, kind):
        px, py = plot.px(r["x"]) + r.get("dx", 0), plot.py(r["y"])
        if m["type"] == "text":
            out.append(labels._text_box(px, py, r["label"], m["align"], m["dx"], m["dy"]))
        else:
            half = m["size"] ** 0.5 / 2
            out.append((px - half, py - half, px + half, py + half))
    return out


def test_element_labels_keep_off_the_merged_marks_and_the_rings() -> None:
    """The sessions' element labels: before, 34 of the 84 "merged" marks and 2 of the 16
    rings round piled firings (drawn 11 px aside, ``dx``) lay under a label: neither was among
    the boxes the labels keep off, and a ring's ``dx`` was not counted (the browser check, on
    narrower drawn texts, counted 28 and 2). Now none does; the labels with no free place left
    (130 of 160, was 105) are left to the tooltip."""
    spec = wv.timeline(session_job(), view="timeline", element_labels=0).to_dict()
    texts = _pixel_boxes(spec, "element label")
    merged, rings = _pixel_boxes(spec, "merged"), _pixel_boxes(spec, "pile")
    crossed = [
        sum(any(boxes.overlaps(t, b) for t in texts) for b in marks) for marks in (merged, rings)
    ]
    assert (len(texts), len(merged), len(rings), crossed) == (30, 84, 16, [0, 0])
    notes = spec["title"]["subtitle"]
    assert "130 element label(s) left out where they would overlap (hover)" in notes


def test_a_marks_box_is_moved_by_its_x_offset() -> None:
    """``_taken_by_marks``: a point mark drawn ``dx`` px aside (``xOffset``) takes its box
    there (a ring round a mark beside its point); without ``xOffset`` ``dx`` means nothing."""
    plot = labels.Plot(palette.TimeAxis("x", "ms", 0, 100), palette.TimeAxis("y", "ms", 0, 100),
                       100, 100)  # fmt: skip
    row = {"x": 50, "y": 50, "dx": 11}
    for offset, left in (({"xOffset": {"expr": "datum.dx"}}, 53.0), ({}, 42.0)):
        layer = {"mark": {"type": "point", "size": 196} | offset, "data": {"values": [row]}}
        taken = boxes.Taken()
        labels._taken_by_marks(taken, [layer], plot)
        assert taken.hits((left, 50, left + 1, 51)) and not taken.hits((left - 1, 50, left, 51))


def test_firings_and_cleanups_at_one_point_are_drawn_side_by_side() -> None:
    """At 400 ms the watermark 1499 fires [998, 1000) at its timer 999 and the late a@998
    re-fires [997, 999) at its end 999 and [998, 1000) at 1000 — one point on a 1,000 ms
    axis: before, the marks lay on each other (an olive square no legend names)."""
    spec = wv.timeline(coinciding_firings()).to_dict()
    fired = [(r.get("dx", 0), r["x"], r["y"]) for m, r in rows_of(spec, "fired")]
    # x / y stay the trace's times; the marks of one point move right, 11 px apart
    assert sorted((off, x) for off, x, y in fired if y == 400) == [
        (0, 999), (0, 1500), (11, 1000), (11, 1501), (22, 1000), (44, 999),
    ]  # fmt: skip
    cleaned = [(r.get("dx", 0), r["x"]) for m, r in rows_of(spec, "cleanup")]
    assert {m["xOffset"]["expr"] for m, _ in rows_of(spec, "fired")} == {"datum.dx"}
    assert sorted(cleaned) == [(0, 1998), (0, 2500), (11, 1999), (11, 2501), (22, 2000)]
    assert "4 firing mark(s) at the point of another drawn beside it, 11 px right (hover for " \
        "its times)" in spec["title"]["subtitle"]  # fmt: skip


def test_min_is_named_on_the_propagation_axis_with_no_number_beside_it() -> None:
    """After the restore every watermark is at MIN, drawn on the bottom edge (475): the axis
    labels that edge MIN and prints no number within 6 % of it (it drew MIN on a tick
    labelled with a number)."""
    spec = wv.propagation_chart(restored()).to_dict()
    axis = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "point")["encoding"]["y"]
    assert axis["scale"]["domain"] == [475, 1323]
    assert axis["axis"]["values"] == [475, 600, 800, 1000, 1200, 1323]
    assert axis["axis"]["labelExpr"] == (
        "datum.value === 475 ? 'MIN' : datum.value === 1323 ? 'MAX' : format(datum.value, ',d')"
    )


def test_identities_share_no_colour_with_meanings() -> None:
    from winviz.viz import propagation, timers

    assert not set(palette.IDENTITY_COLORS) & set(palette.MEANING_COLORS)
    assert set(timers.KEY_COLORS) <= set(palette.IDENTITY_COLORS)
    assert set(propagation.CHANNEL_COLORS) <= set(palette.IDENTITY_COLORS)
    assert not set(timers.KEY_COLORS) & set(timers.DOMAIN_COLORS)


JOIN_EVENTS = [
    ("L", "k", 0, "l0"), ("R", "w", 1, None), ("R", "k", -1, "r2"), ("L", "w", 5, None),
    ("L", "k", 9, "l4"), ("L", "k", 11, "l5"), ("R", "k", 10, "r6"), ("L", "k", 16, "l7"),
    ("L", "k", 21, "l8"), ("L", "k", 22, "l9"), ("L", "k", 21, "l10"),
    ("R", "k", 23, "r11"), ("R", "k", 24, "r12"), ("L", "w", 26, None),
]  # fmt: skip


def _join_timeline(events: list[tuple], **how: Any) -> dict[str, Any]:
    from tests.test_joins import interval

    return wv.timeline(
        interval(events, -2, 3), operator="interval_join", view="timeline", width=400,
        height=250, **how,
    ).to_dict()  # fmt: skip


def _join_marks(spec: dict[str, Any]) -> list[tuple[str, Any, Any, float, float, tuple]]:
    """The join's marks: (what, x, y, dx, size, pixel box: a square of side sqrt(size) at
    its point moved by its dx)."""
    enc = next(lay for lay in spec["layer"] if lay["mark"]["type"] == "point")["encoding"]
    x, y = (palette.TimeAxis(c, "ms", *enc[c]["scale"]["domain"]) for c in ("x", "y"))
    plot = labels.Plot(x, y, spec["width"], spec["height"])
    marks = []
    for lay in spec["layer"]:
        for r in spec["datasets"][lay["data"]["name"]]:
            if lay["mark"]["type"] == "point" and r.get("what") in ("joined", "buffer removed"):
                size, dx = lay["mark"]["size"], r.get("dx", 0)
                px, py, h = plot.px(r["x"]) + dx, plot.py(r["y"]), lay["mark"]["size"] ** 0.5 / 2
                marks.append(
                    (r["what"], r["x"], r["y"], dx, size, (px - h, py - h, px + h, py + h))
                )
    return marks


def test_element_labels_keep_off_an_interval_joins_marks() -> None:
    """An interval join's timeline draws its elements' dots (labelled here) and its "joined"
    and "buffer removed" marks: before, the labels did not keep off the join's marks and two
    "joined" marks — (0, 2): r2 (-1) joins l0 on arriving; (11, 6): r6 (10) joins l5 (11) —
    lay under a label. Now none does. (Since the joined pairs are drawn beside each other at
    one point, ``test_no_joined_pair_hides_under_the_element_that_joined_it``, r12's label
    has no free place left: its dot has the plot's edge on its right, the watermark line
    above, three pairs at its point and three at r11's below.)"""
    spec = _join_timeline(JOIN_EVENTS, element_labels=2)
    texts = _pixel_boxes(spec, "element label")
    marks = _join_marks(spec)
    assert sorted(w for w, *_ in marks) == ["buffer removed"] * 10 + ["joined"] * 9
    assert sorted(r["label"] for _, r in rows_of(spec, "element label")) == [
        "l0", "l10", "l4", "l5", "l7", "l8", "l9", "r11", "r2", "r6",
    ]  # fmt: skip
    assert (
        "1 element label(s) left out where they would overlap (hover)"
        in (spec["title"]["subtitle"])
    )
    assert [m[:4] for m in marks if any(boxes.overlaps(t, m[5]) for t in texts)] == []


def test_no_joined_pair_hides_under_the_element_that_joined_it() -> None:
    """A joined pair is drawn at the output's timestamp, max(left, right), when the element
    that joined it arrived: mostly that element's own dot. Before, 7 of the 9 pairs here were
    6.3 px squares under a 9.4 px dot (r6 (10, 6) joins l4; r11 (23, 11) joins l8, l9, l10;
    r12 (24, 12) the same three), so 2 of "9 pairs joined" were seen. Now they are placed
    as firings are (``window_marks._beside``): as large as one (90 px², framing the dot they
    sit under), those at one point side by side 11 px apart (right, then left at the plot's
    edge)."""
    spec = _join_timeline(JOIN_EVENTS)
    joined = [m for m in _join_marks(spec) if m[0] == "joined"]
    assert sorted((x, y, dx) for _, x, y, dx, *_ in joined) == [
        (0, 2, 0), (10, 6, 0), (11, 6, 0),
        (23, 11, 0), (23, 11, 11), (23, 11, 22),
        (24, 12, -11), (24, 12, 0), (24, 12, 11),
    ]  # fmt: skip
    dots = {(r["x"], r["y"]): m["size"] for m, r in rows_of(spec, "element")}
    under = [(x, y) for _, x, y, dx, size, _ in joined if dx == 0 and size <= dots.get((x, y), 0)]
    assert (len(joined), {size for *_, size, _ in joined}, set(dots.values()), under) == (
        9, {90}, {70}, [],
    )  # fmt: skip
    boxes_ = [m[5] for m in joined]
    assert [(a, b) for a in boxes_ for b in boxes_ if a < b and boxes.overlaps(a, b)] == []
    notes = spec["title"]["subtitle"]
    assert "9 pairs joined (at the output's timestamp)" in notes
    assert (
        "4 joined pair mark(s) at the point of another drawn beside it, 11 px right or left "
        "(hover for its times)"
    ) in notes
    assert rows_of(spec, "pile") == []


def test_joined_pairs_past_the_places_at_their_point_are_counted_under_a_ring() -> None:
    """30 lefts at 10 and a right at 10 arriving last: 30 pairs at (10, 30). 25 are drawn
    (their point, 12 places right and 12 left); 5 are counted on the one at its point, with
    the 2 buffer buckets removed there at the end of input: its ring says 7."""
    spec = _join_timeline([("L", "k", 10, f"l{i}") for i in range(30)] + [("R", "k", 10, "r")])
    joined = [m for m in _join_marks(spec) if m[0] == "joined"]
    assert sorted(dx for *_, dx, _, _ in joined) == [11 * k for k in range(-12, 13)]
    assert {(x, y) for _, x, y, *_ in joined} == {(10, 30)}
    assert [m[:4] for m in _join_marks(spec) if m[0] == "buffer removed"] == []
    rings = [r for _, r in rows_of(spec, "pile")]
    assert [(r["x"], r["y"], r["dx"], r[piles.ALSO_HERE], r[piles.COUNTED]) for r in rings] == [
        (10, 30, 0, 7, "joined ×5, buffer removed ×2")
    ]
    notes = spec["title"]["subtitle"]
    assert "30 pairs joined (at the output's timestamp)" in notes
    assert (
        "5 joined pair mark(s) where others pile up counted on the mark there, not drawn: a "
        "ring marks it (hover it: 'also here')"
    ) in notes
