"""The one side-by-side rule (winviz.viz.piles): marks at one point are drawn a few steps
right, then left, never off the plot; a pile too deep is counted on the mark at its point."""

from __future__ import annotations

import math

import numpy as np

from winviz.viz import piles


def test_places_tried_go_right_then_left_and_stay_on_the_plot() -> None:
    assert piles.places_tried(50, 10, 100, 3) == [0, 1, 2, 3, -1, -2, -3]
    # at the right edge: only left
    assert piles.places_tried(95, 10, 100, 3) == [0, -1, -2, -3]
    # at the left edge: only right
    assert piles.places_tried(5, 10, 100, 3) == [0, 1, 2, 3]


def test_marks_at_one_point_go_side_by_side_then_left_at_the_edge() -> None:
    placed = piles.side_by_side([(50, 0), (50, 0), (50, 0)], 10, 100, most=3)
    assert placed.dx == [0, 10, 20]
    assert placed.counted_on == [None, None, None] and (placed.moved, placed.left) == (2, False)
    edge = piles.side_by_side([(95, 0), (95, 0), (95, 0)], 10, 100, most=3)
    assert edge.dx == [0, -10, -20] and edge.left


def test_a_pile_too_deep_is_counted_on_the_mark_at_its_point() -> None:
    rows = [{"n": i} for i in range(5)]
    placed = piles.side_by_side([(95, 0)] * 5, 10, 100, most=2)
    assert placed.dx == [0, -10, -20, 0, 0]
    assert placed.counted_on == [None, None, None, 0, 0]
    assert piles.count_on(rows, placed) == [
        {"n": 0, piles.ALSO_HERE: 2},
        {"n": 1, piles.ALSO_HERE: 0},
        {"n": 2, piles.ALSO_HERE: 0},
    ]
    assert piles.moved_note(placed, "timer event", 10) == [
        "2 timer event(s) at the point of another drawn beside it, 10 px right or left "
        "(hover for its times)",
        "2 timer event(s) where others pile up counted on the mark there, not drawn: a ring "
        "marks it (hover it: 'also here')",
    ]


def test_a_grid_shared_by_two_layers_keeps_the_second_off_the_first() -> None:
    grid = piles.Grid(10)
    first = piles.side_by_side([(50, 0)], 10, 100, most=3, grid=grid)
    second = piles.side_by_side([(50, 0), (52, 40)], 10, 100, most=3, grid=grid)
    assert (first.dx, second.dx, second.first) == ([0], [10, 0], 1)
    # a reach below the step: centres 6 px apart do not cover each other
    near = piles.side_by_side([(50, 0), (56, 0)], 10, 100, most=3, grid=piles.Grid(10, reach=5))
    assert near.dx == [0, 0]


def test_rings_are_drawn_round_the_marks_others_were_counted_on() -> None:
    grid = piles.Grid(10)
    rows = [{"x": 7, "y": 3, "key": "k"}, {"x": 7, "y": 3, "key": "k"}, {"x": 7, "y": 3}]
    placed = piles.side_by_side([(95, 0)] * 3, 10, 100, most=1, grid=grid, rows=rows)
    assert (placed.dx, placed.counted_on) == ([0, -10, 0], [None, None, 0])
    assert piles.rings(grid) == [
        {"kind": "pile", "x": 7, "y": 3, "dx": 0, "key": "k", piles.ALSO_HERE: 1,
         piles.COUNTED: " ×1", "seq": ""}
    ]  # fmt: skip
    grid = piles.Grid(10)
    rows = [{"x": 1, "y": 2, "seq": "4", "what": "cleanup"}] * 2
    piles.side_by_side([(95, 0)] * 2, 10, 100, most=0, grid=grid, rows=rows)
    assert piles.rings(grid) == [
        {"kind": "pile", "x": 1, "y": 2, "dx": 0, piles.ALSO_HERE: 1,
         piles.COUNTED: "cleanup ×1", "seq": "4"}
    ]  # fmt: skip


class _Marks:
    def __init__(self, boxes: list[tuple[float, float, float, float]]) -> None:
        self.boxes = boxes

    def hits(self, b: tuple[float, float, float, float]) -> tuple[float, ...] | None:
        crossed = (a for a in self.boxes if a[0] < b[2] and b[0] < a[2] and a[1] < b[3])
        return next((a for a in crossed if b[1] < a[3]), None)


def test_a_moved_mark_keeps_its_centre_off_the_marks_to_avoid() -> None:
    grid = piles.Grid(10, avoid=_Marks([(55, -5, 65, 5)]))  # an element at 60
    placed = piles.side_by_side([(50, 0), (50, 0)], 10, 100, most=3, grid=grid)
    assert placed.dx == [0, 20]  # 10 right would sit under the element
    # a mark at its own point is not moved off the element (elements are drawn over it)
    assert piles.side_by_side([(60, 20)], 10, 100, most=3, grid=grid).dx == [0]


def test_first_free_is_the_first_place_tried_near_no_mark_and_off_the_marks_to_avoid() -> None:
    """piles.first_free (what took a place asked first, ``Grid.tried``): the same place as
    trying each of ``places_tried`` in turn against every mark placed and every box to
    avoid, on random piles with a reach below or at the step — marks at one point, columns
    of marks a fraction of a pixel apart (what took a place falls out of reach), centres and
    boxes exactly a reach apart or touching, places exactly at the plot's edge — the rule
    any faster search must keep."""
    import random

    rnd = random.Random(5)
    for _ in range(400):
        step, most = rnd.choice([10, 11.0, 7.5, 0.1]), rnd.randrange(6)
        width = rnd.choice([rnd.uniform(20, 200), step * rnd.randrange(3, 12)])
        reach = rnd.choice([0.0, step / 2, step * 0.9, step])
        xs = [rnd.uniform(0, width), step * rnd.randrange(12), width - step * rnd.randrange(4)]
        ys = [0.0, reach or step, rnd.uniform(0, 30), 3 * (reach or step)]
        boxes = []
        for _ in range(rnd.randrange(12)):
            x = rnd.choice(xs) + step * rnd.randrange(-3, 4)
            y, r = rnd.choice(ys), rnd.choice([rnd.uniform(0.5, 6), 1.0, 2.0])
            boxes.append((x - r, y - r, x + r, y + r))
        grid = piles.Grid(step, reach=reach, avoid=_Marks(boxes))
        placed: list[tuple[float, float]] = []
        px, py = rnd.choice(xs), rnd.choice(ys)
        for _ in range(rnd.randrange(1, 60)):
            if rnd.random() < 0.3:  # a new point; else the same x, the same or a near y
                px = rnd.choice([*xs, rnd.uniform(0, width), rnd.randrange(5) * step / 2])
                py = rnd.choice(ys)
            else:
                py = rnd.choice([py, py - step * rnd.choice([0.017, 0.05, 0.3]), *ys])
            r = reach or step

            def free(cx: float, py: float = py, r: float = r, placed: list = placed) -> bool:
                return not any(-r < cx - qx < r and -r < py - qy < r for qx, qy in placed)

            want: tuple[int | None, int | None] = (0, None)
            assert (grid.near(px, py) is None) == free(px)
            if not free(px):
                want = (None, grid.near(px, py)[2])  # (the index of the mark in the way)
                for k in piles.places_tried(px, step, width, most)[1:]:
                    cx = px + k * step
                    if free(cx) and not _Marks(boxes).hits((cx - 1, py - 1, cx + 1, py + 1)):
                        want = (k, None)
                        break
            got = piles.first_free(px, py, grid, width, most)
            assert got == want, (px, py)
            if got[0] is not None:
                grid.add(px + got[0] * step, py)
                placed.append((px + got[0] * step, py))
            else:
                grid.n += 1


def test_boxes_answer_as_a_test_over_every_box() -> None:
    """boxes.Taken (a test over every box added in bulk for the first questions, then its
    cells): the same answer as ``overlaps`` against each box, for boxes that touch, share
    edges on the cells, are tall, wide, inverted or far off, and for questions of each kind."""
    import random

    from winviz.viz.boxes import Taken, overlaps

    rnd = random.Random(3)

    def box() -> tuple[float, float, float, float]:
        kind = rnd.random()
        x, y = (
            rnd.choice([rnd.uniform(-50, 650), 16.0 * rnd.randrange(-2, 30)]),
            rnd.uniform(-50, 450),
        )
        w = rnd.choice([0.0, 2.0, 10.4, 16.0, rnd.uniform(0, 40), 300.0])
        h = rnd.choice([0.0, 2.0, 10.4, 16.0, rnd.uniform(0, 40), 300.0])
        if kind < 0.05:
            return (x, y, x - w, y - h)  # inverted
        if kind < 0.08:
            return (x * 1e10, y, x * 1e10 + w, y + h)  # far off
        return (x, y, x + w, y + h)

    boxes = [box() for _ in range(400)]
    every = Taken()
    every.add_array(np.asarray(boxes[:300], dtype=float))
    every.add_array(boxes[300:390])
    for b in boxes[390:]:
        every.add(b)
    for _ in range(2000):  # past boxes.ASKED: the cells answer most
        q = box()
        crossed = every.hits(q)  # (one of the boxes it crosses)
        assert (crossed is not None) == any(overlaps(a, q) for a in boxes), q
        assert crossed is None or (crossed in boxes and overlaps(crossed, q)), q
    # touching edges do not cross; a box one ulp inside does
    touch = Taken()
    touch.add_array(np.asarray([(16.0, 16.0, 26.0, 26.0)] * 40))
    for _ in range(20):
        assert not touch.hits((26.0, 16.0, 30.0, 26.0))
    assert touch.hits((math.nextafter(26.0, 0), 16.0, 30.0, 26.0))
