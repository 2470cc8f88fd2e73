"""Marks at one point, drawn side by side — the one rule every chart follows.

Two marks whose centres are nearer than a ``step`` (pixels, across and up) would cover each
other. Each mark, in drawing order, takes the first free place of: its own point, then one,
two … steps right, then one, two … steps left, on the plot, at most ``most`` each way. A mark
that finds none is *counted* on the mark drawn at its point (not drawn; that mark's tooltip
says how many more are there). Nothing here is Flink's: it keeps every mark in sight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from winviz.viz import palette, spec

ALSO_HERE = "also here"  # the tooltip field of a mark others were counted on: how many


@dataclass
class Grid:
    """The centres of the marks placed so far, on cells of ``step`` pixels (``near``: within
    ``reach``, 0: ``step``); ``anchors`` and ``more``: per mark index, where its ring goes and
    the rows counted on it; ``avoid``: what a moved mark keeps off (``hits(box)``); ``tried``:
    per (x, width, most), each place and what was in its way there, by y (``first_free``)."""

    step: float
    reach: float = 0.0
    cells: dict[tuple[int, int], list[tuple[float, float, int]]] = field(default_factory=dict)
    n: int = 0  # the marks added: the next one's index
    anchors: dict[int, dict[str, Any]] = field(default_factory=dict)
    more: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    avoid: Any = None
    tried: dict[tuple[float, float, int], list[list[Any]]] = field(default_factory=dict)

    def near(self, px: float, py: float) -> tuple[float, float, int] | None:
        """The centre (x, y, index) of a placed mark within ``reach`` of (px, py), else None."""
        if not (math.isfinite(px) and math.isfinite(py)):
            return None
        step, reach = self.step, self.reach or self.step
        i, j = int(px // step), int(py // step)
        for di in (0, -1, 1):
            for dj in (0, -1, 1):
                for centre in self.cells.get((i + di, j + dj), ()):
                    if -reach < px - centre[0] < reach and -reach < py - centre[1] < reach:
                        return centre
        return None

    def add(self, px: float, py: float, anchor: dict[str, Any] | None = None) -> None:
        """Add a mark's centre (index ``n``); ``anchor``: where its ring goes (x, y, dx, key)."""
        if math.isfinite(px) and math.isfinite(py):
            i, j = int(px // self.step), int(py // self.step)
            self.cells.setdefault((i, j), []).append((px, py, self.n))
        if anchor is not None:
            self.anchors[self.n] = anchor
        self.n += 1

    def boxes(self) -> list[tuple[float, float, float, float]]:
        """Each centre's square of side ``step``."""
        half = self.step / 2
        return [
            (x - half, y - half, x + half, y + half)
            for centres in self.cells.values()
            for x, y, _ in centres
        ]


def places_tried(px: float, step: float, width: float, most: int) -> list[int]:
    """The offsets (in steps) a mark at ``px`` tries: 0, 1, 2 …, −1, −2 … — at most ``most``
    each way, on the plot (0 … ``width``)."""
    right = [k for k in range(1, most + 1) if px + k * step <= width]
    left = [-k for k in range(1, most + 1) if px - k * step >= 0]
    return [0, *right, *left]


def first_free(
    px: float, py: float, grid: Grid, width: float, most: int
) -> tuple[int | None, int | None]:
    """Where a mark at (px, py) goes: (its offset in steps, None), or (None, the index of the
    mark at its own point) when no place is free."""
    step, reach, avoid = grid.step, grid.reach or grid.step, grid.avoid
    tried = grid.tried.get((px, width, most))
    if tried is None:
        tried = grid.tried[px, width, most] = [
            [k, None] for k in places_tried(px, step, width, most)
        ]
    for place in tried:
        # what took this place before is asked first: it is in the way still at this y
        k, was = place
        if was is not None and (
            -reach < py - was[0] < reach if len(was) == 1 else was[0] < py + 1 and py - 1 < was[1]
        ):
            continue
        cx = px + k * step
        centre = grid.near(cx, py)
        if centre is not None:
            place[1] = (centre[1],)
            continue
        # (a mark is not moved off its point for a mark drawn over it, but not moved under one)
        box = avoid.hits((cx - 1, py - 1, cx + 1, py + 1)) if avoid is not None and k else None
        if not box:
            return k, None
        place[1] = (box[1], box[3])
    on = grid.near(px, py)
    return None, None if on is None else on[2]


@dataclass(frozen=True)
class Placement:
    """Each mark's offset in pixels and the ``Grid`` index of the mark it is counted on (None:
    drawn); ``first``: the grid's index of the first of these marks."""

    dx: list[float]
    counted_on: list[int | None]
    first: int = 0

    @property
    def moved(self) -> int:
        return sum(1 for d in self.dx if d)

    @property
    def counted(self) -> int:
        return sum(1 for c in self.counted_on if c is not None)

    @property
    def left(self) -> bool:  # (some mark went left: the plot's right edge was too near)
        return any(d < 0 for d in self.dx)


def side_by_side(
    places: Sequence[tuple[float, float]],
    step: float,
    width: float,
    *,
    most: int,
    grid: Grid | None = None,
    rows: Sequence[dict[str, Any]] | None = None,
) -> Placement:
    """Place marks at pixel ``places`` by the rule above. ``grid``: the marks placed before
    (another layer's); ``rows``: the marks' rows, anchoring a ring."""
    grid = Grid(step) if grid is None else grid
    first = grid.n
    dx: list[float] = []
    counted_on: list[int | None] = []
    for i, (px, py) in enumerate(places):
        k, on = first_free(px, py, grid, width, most)
        if k is None:
            dx.append(0)
            counted_on.append(on)
            if on is not None:
                grid.more.setdefault(on, []).append(rows[i] if rows is not None else {})
            grid.n += 1  # (its index, in no cell)
            continue
        anchor = None
        if rows is not None:
            row = rows[i]
            anchor = {"x": row["x"], "y": row["y"], "dx": row.get("dx", 0) + k * step}
            if "key" in row:
                anchor["key"] = row["key"]
        grid.add(px + k * step, py, anchor)
        dx.append(k * step)
        counted_on.append(None)
    return Placement(dx, counted_on, first)


def moved_note(placement: Placement, what: str, step: float, cue: str = "a ring") -> list[str]:
    """The subtitle's notes on marks moved beside another and counted on another (``cue``:
    what shows a mark others were counted on)."""
    notes = []
    if placement.moved:
        way = "right or left" if placement.left else "right"
        notes.append(
            f"{placement.moved:,} {what}(s) at the point of another drawn beside it, "
            f"{step:g} px {way} (hover for its times)"
        )
    if placement.counted:
        notes.append(
            f"{placement.counted:,} {what}(s) where others pile up counted on the mark there, "
            f"not drawn: {cue} marks it (hover it: '{ALSO_HERE}')"
        )
    return notes


def count_on(rows: list[dict[str, Any]], placement: Placement) -> list[dict[str, Any]]:
    """The rows drawn, each with ``ALSO_HERE``: how many of these were counted on it."""
    here = [0] * len(rows)
    for on in placement.counted_on:
        if on is not None and 0 <= on - placement.first < len(rows):
            here[on - placement.first] += 1
    drawn = []
    for row, on, n in zip(rows, placement.counted_on, here, strict=True):
        if on is None:
            row[ALSO_HERE] = n
            drawn.append(row)
    return drawn


COUNTED = "counted here"  # the ring's tooltip field: what the marks counted on it are


def rings(grid: Grid) -> list[dict[str, Any]]:
    """A row per mark others were counted on: its anchor, how many, what and their ``seq``s."""
    out = []
    for i, counted in sorted(grid.more.items()):
        if i not in grid.anchors:
            continue
        seqs = [str(r["seq"]) for r in counted if r.get("seq") not in (None, "")]
        whats = [str(r.get("what") or r.get("event") or r.get("kind") or "") for r in counted]
        what = ", ".join(f"{w} ×{whats.count(w)}" for w in dict.fromkeys(whats))
        out.append(
            {"kind": "pile", **grid.anchors[i], ALSO_HERE: len(counted), COUNTED: what,
             "seq": ", ".join(seqs)}
        )  # fmt: skip
    return out


def ring_layer(
    grid: Grid | list[dict[str, Any]], x: dict[str, Any], y: dict[str, Any], size: float
) -> Any:
    """The rings around marks others were counted on (``grid``'s or ``rings``' rows; ``size``:
    the marks' area, px²), else None."""
    rows = rings(grid) if isinstance(grid, Grid) else grid
    if not rows:
        return None
    return spec.layer(
        rows,
        {
            "type": "point",
            "shape": "circle",
            "filled": False,
            "size": size * 3,
            "stroke": palette.INK,
            "strokeWidth": 1.5,
            "xOffset": {"expr": "datum.dx"},
        },
        {
            "x": x,
            "y": y,
            "tooltip": [
                {"field": ALSO_HERE, "type": "quantitative"},
                {"field": COUNTED, "type": "nominal"},
                {"field": "seq", "type": "nominal"},
            ],
        },
    )
