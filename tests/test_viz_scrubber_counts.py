"""The scrubber's count badges (issue 26: every firing in sight): firings of one cause at one
point are one square, and a badge "×n" beside it says how many — exact rows on small jobs run
on the real engine, the vocabulary in the squares' tooltips, the fallback (a thick outline)
where no badge finds a free place, and the rules behind them."""

from __future__ import annotations

from typing import Any

from chart_jobs import kernel_job
from test_viz_timers_scrubber import event_job

from winviz import viz
from winviz.viz import palette, piles, spec
from winviz.viz.scrubber import (
    COUNT_NOTE,
    END_OUTLINE,
    UNCOUNTED,
    _firings_here,
    counted_words,
)


def layers_of(chart: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [lay for lay in chart["layer"] if spec.rows(lay) and spec.rows(lay)[0]["kind"] == kind]


def test_a_badge_beside_the_square_of_two_keys_fired_by_one_timer() -> None:
    """event_job: the watermark 5499 at 200 ms fires a's and b's [0, 5000) at their timer
    4999: one square, "×2" right of it; a@4500 (late, accepted) re-fires a's window at once:
    a late firing, by the element."""
    chart = viz.scrubber.vega_lite(event_job())
    (squares,) = layers_of(chart, "fired")
    assert [(r["x"], r["y"], r["firings"], r["firing"]) for r in spec.rows(squares)] == [
        (4999, 200, 2, "first firing ×2"),
        (5000, 300, 1, "re-firing, late firing"),
        (9999, 700, 1, "first firing"),
    ]
    (badges,) = layers_of(chart, "firing count")
    assert spec.rows(badges) == [
        {
            "x": 4999,
            "y": 200,
            "label": "×2",
            "firings": 2,
            "fired": 200,
            "window": "[0 ms, 5,000 ms)",
            "kind": "firing count",
            "align": "left",
            "dx": 7,  # right of the square and below it, off the "now" rule (nothing there)
            "dy": 9,
        }
    ]
    assert badges["transform"] == [{"filter": "datum.fired <= t"}]  # shown once made
    assert badges["mark"]["dx"] == {"expr": "datum.dx"}
    assert chart["layer"][-1] is badges  # over every mark
    assert COUNT_NOTE in chart["usermeta"]["winviz"]["notes"]
    # the y axis has the timeline's room above the last firing for its badge
    assert chart["layer"][0]["encoding"]["y"]["scale"]["domain"] == [-21, 777]


def test_badges_of_a_dense_run_and_the_one_with_no_place() -> None:
    """20 keys a window (kernel_job): each firing square stands for 20 firings. In the skew
    mode the end of input's square lies at the top right corner among the elements: no free
    place for its badge, so a thick outline marks it and its tooltip says 20."""
    run = kernel_job(3000)
    chart = viz.scrubber.vega_lite(run)
    (badges,) = layers_of(chart, "firing count")
    assert [
        (r["x"], r["y"], r["label"], r["align"], r["dx"], r["dy"]) for r in spec.rows(badges)
    ] == [
        (2999, 2999, "×20", "right", -7, -15),  # above: elements left and below (t ≤ 2999)
        (1999, 2400, "×20", "right", -7, 9),  # below: off the "now" rule once shown
        (999, 1400, "×20", "right", -7, 9),
        (-1, 400, "×20", "right", -7, 9),
    ]
    skew = viz.scrubber.vega_lite(run, view="skew")
    (squares,) = layers_of(skew, "fired")
    assert [r.get(UNCOUNTED) for r in spec.rows(squares)] == [None, None, None, 20]
    assert squares["encoding"]["strokeWidth"] == {
        "condition": {"test": f"datum[{UNCOUNTED!r}] > 1", "value": 2.5},
        "value": 0.5,
    }
    (badges,) = layers_of(skew, "firing count")
    assert [
        (r["x"], r["y"], r["label"], r["align"], r["dx"], r["dy"]) for r in spec.rows(badges)
    ] == [  # left of the square: the skew mode's "now" rule (x = t) has passed there
        (400, 401, "×20", "right", -7, 0),
        (1400, 401, "×20", "right", -7, 0),
        (2400, 401, "×20", "right", -7, 0),
    ]
    assert (
        "1 count badge(s) left out where they would cross a mark: a thick outline marks their "
        f"square (hover it: '{UNCOUNTED}')"
    ) in skew["title"]["subtitle"]


def test_the_end_of_input_square_outlined_over_the_elements() -> None:
    """A dense run (kernel_job): the end of input fires the last windows where the run ends,
    among its last elements, which hid most of its square — its outline is drawn again over
    them (a layer after the elements', before the badges; hollow: an element there stays in
    sight), in the end of input's colour, with the square's tooltip."""
    run = kernel_job(3000)
    for mode, at in (("timeline", (2999, 2999)), ("skew", (2999, 0))):
        chart = viz.scrubber.vega_lite(run, view=mode)
        kinds = [spec.rows(lay)[0]["kind"] if spec.rows(lay) else None for lay in chart["layer"]]
        (squares,) = layers_of(chart, "fired")
        (outline,) = layers_of(chart, END_OUTLINE)
        end = [r for r in spec.rows(squares) if r["what"] == "fired: end of input"]
        assert [(r["x"], r["y"], r["firings"]) for r in end] == [(*at, 20)]
        assert spec.rows(outline) == [r | {"kind": END_OUTLINE} for r in end]
        assert outline["mark"] == {
            "type": "point",
            "filled": False,
            "shape": "square",
            "size": 63,  # its 1.5 px stroke within the square's edge: (√80 − 1)²
            "color": palette.WATERMARK_COLOR,  # the end of input's (the watermark MAX)
            "strokeWidth": 1.5,
            "xOffset": {"expr": "datum.dx"},
        }
        assert outline["transform"] == squares["transform"]  # shown once made
        elements = [i for i, k in enumerate(kinds) if k == "element"]
        assert kinds.index("fired") < min(elements)
        assert max(elements) < kinds.index(END_OUTLINE) < kinds.index("firing count")


def test_firings_here_adds_the_marks_counted_on_a_square() -> None:
    rows = [{"firings": 2}, {"firings": 1}, {"firings": 3}, {"firings": 4}]
    # the second and fourth found no place beside their point: counted on the first and third
    placed = piles.Placement(dx=[0, 0, 11, 0], counted_on=[None, 5, None, 7], first=5)
    assert _firings_here(rows, placed) == [3, 7]  # (the drawn marks: the first and third)
    assert _firings_here(rows[:1], piles.Placement([0], [None])) == [2]


def test_counted_words_in_the_one_vocabulary() -> None:
    words = ["first firing", "re-firing, late firing", "first firing", "re-firing"]
    assert counted_words(words) == "first firing ×2; re-firing, late firing; re-firing"
    assert counted_words(["first firing"]) == "first firing"
