"""winviz.viz.coinciding (issue 26: no mark hides another): step lines that lie exactly on
each other are cut into runs, exact to the vertex, and each run shared by n lines is drawn
by each in one dash of n, in turn — on hand-made paths and on the propagation chart of a job
whose two window subtasks forward the same watermark."""

from __future__ import annotations

from jobs import kafka_readers

from winviz.viz.coinciding import DASH_PX, dash, runs
from winviz.viz.propagation import propagation_chart


def vertices(rows: list[dict]) -> list[tuple]:
    return [(r["path"], r["run"], r["x"], r["y"]) for r in rows]


def test_runs_cut_where_the_lines_part() -> None:
    """a: 0 from 0 to 10, then 5 to 20; b: 0 from 5 to 10, 5 to 15, then 9: they share
    (5, 0)–(10, 0)–(10, 5)–(15, 5), the horizontal steps cut where the other line's start
    or end (b starts at x 5, leaves y 5 at x 15)."""
    cut = runs(
        {
            "a": [(0, 0), (10, 0), (10, 5), (20, 5)],
            "b": [(5, 0), (10, 0), (10, 5), (15, 5), (15, 9), (20, 9)],
        }
    )
    assert cut is not None
    assert {k: vertices(v) for k, v in cut.rows.items()} == {
        (1, 0): [
            ("a", 0, 0, 0), ("a", 0, 5, 0),  # a alone before b starts
            ("a", 2, 15, 5), ("a", 2, 20, 5),  # and after b steps up
            ("b", 1, 15, 5), ("b", 1, 15, 9), ("b", 1, 20, 9),
        ],
        (2, 0): [("a", 1, 5, 0), ("a", 1, 10, 0), ("a", 1, 10, 5), ("a", 1, 15, 5)],
        (2, 1): [("b", 0, 5, 0), ("b", 0, 10, 0), ("b", 0, 10, 5), ("b", 0, 15, 5)],
    }  # fmt: skip
    assert cut.shared == {("a", "b"): 10.0}  # 5 at 0 and 5 at 5


def test_no_runs_where_lines_only_cross_and_a_shared_part_of_a_step_up() -> None:
    assert runs({"a": [(0, 0), (1, 0)], "b": [(0, 1), (1, 1)]}) is None
    assert runs({"a": [(0, 0), (2, 0), (2, 3)], "b": [(0, 3), (4, 3)]}) is None  # (a touch)
    # both step up at x 6, over [2, 6] together: that part of the step is shared
    cut = runs({"a": [(0, 1), (6, 1), (6, 6), (9, 6)], "b": [(0, 2), (6, 2), (6, 7)]})
    assert cut is not None and cut.shared == {("a", "b"): 0.0}
    assert {k: vertices(v) for k, v in cut.rows.items()} == {
        (1, 0): [
            ("a", 0, 0, 1), ("a", 0, 6, 1), ("a", 0, 6, 2), ("a", 2, 6, 6), ("a", 2, 9, 6),
            ("b", 0, 0, 2), ("b", 0, 6, 2), ("b", 2, 6, 6), ("b", 2, 6, 7),
        ],
        (2, 0): [("a", 1, 6, 2), ("a", 1, 6, 6)],
        (2, 1): [("b", 1, 6, 2), ("b", 1, 6, 6)],
    }  # fmt: skip


def test_three_lines_take_turns() -> None:
    cut = runs({p: [(0, 3), (4, 3)] for p in "abc"})
    assert cut is not None and sorted(cut.rows) == [(3, 0), (3, 1), (3, 2)]
    assert [dash(3, k) for k in range(3)] == [
        {"strokeDash": [DASH_PX, 2 * DASH_PX], "strokeDashOffset": 0},
        {"strokeDash": [DASH_PX, 2 * DASH_PX], "strokeDashOffset": 2 * DASH_PX},
        {"strokeDash": [DASH_PX, 2 * DASH_PX], "strokeDashOffset": DASH_PX},
    ]  # the k-th shows its dash k·DASH_PX along: offset −k·DASH_PX (mod the period)


def test_two_window_subtasks_with_one_watermark() -> None:
    """kafka_readers(1): one reader feeds both window subtasks, so window#0 and window#1 —
    the sink's two input channels — write the same watermarks at the same times: before,
    window#1's line hid window#0's; now each is drawn in every other dash."""
    chart = propagation_chart(kafka_readers(1), operator="counts").to_dict()
    first, second, _ = chart["layer"]  # (a sink writes no watermark of its own: no line)
    shared = [
        (200, 99), (600, 99), (600, 599), (1200, 599), (1200, 1199), (1600, 1199),
        (1600, 1299), (1600, 1799), (1600, 1850),  # 1850: MAX, on the top edge
    ]  # fmt: skip
    for lay, line, offset in ((first, "window#0", 0), (second, "window#1", DASH_PX)):
        rows = chart["datasets"][lay["data"]["name"]]
        assert [(r["x"], r["y"]) for r in rows] == shared
        assert {(r["line"], r["run"]) for r in rows} == {(line, "0.0")}
        assert lay["mark"] == {
            "type": "line",
            "interpolate": "linear",
            "strokeWidth": 1.8,
            "strokeDash": [DASH_PX, DASH_PX],
            "strokeDashOffset": offset,
        }
        assert lay["encoding"]["color"]["scale"]["domain"][-2:] == ["window#0", "window#1"]
    assert chart["usermeta"]["winviz"]["notes"][-1] == (
        "operator 'counts': lines that lie on each other are drawn in alternating dashes of "
        "their colours, one dash each (window#0 and window#1: the same for 1,400 ms of "
        "processing time)"
    )
