"""Label placement on the timeline, in pixels: where a mark's label, an element's label and
the watermark's edge texts go so that they cross no mark, no line and no other label.

The plot's data → pixel mapping (``Plot``), the pixel boxes taken (``boxes.Taken``), the places a
label tries in order (``LABEL_PLACES``, ``EDGE_PLACES``: the first clear one taken,
``boxes.first_clear``), leader lines (``label_leaders``),
marks at one point drawn side by side (``_side_by_side``) and the layers' drawing order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

import numpy as np

from winviz.viz import palette, piles, spec
from winviz.viz.boxes import Box, Taken, first_clear, within
from winviz.viz.palette import TimeAxis

EDGE_DX = {"right": -4, "left": 4}
"""The watermark's edge texts: right-aligned ending 4 px left of their point ("watermark = MAX
(end of input) →"), or left-aligned starting 4 px right of it ("← watermark = MIN")."""


LABEL_FONT = 10
CHAR_PX = 6.0  # a generous average advance of a 10 px sans-serif character
LABEL_PLACES = (
    ("left", 7, -9),
    ("left", 7, 9),
    ("right", -7, -9),
    ("right", -7, 9),
    ("left", 7, -21),
    ("right", -7, -21),
    ("left", 7, 21),
    ("right", -7, 21),
    ("left", 7, 33),
    ("right", -7, 33),
    ("left", 7, -33),
    ("right", -7, -33),
)
"""Where a firing label may go, in order of preference: (align, dx, dy) from its mark —
right above, right below, left above, left below, then a line further away, then two."""


LABEL_ROOM_PX = 28
"""Room kept above the last processing time for the labels of the last firings."""


def _label_room(y: TimeAxis, height: int) -> TimeAxis:
    """``y`` with its top raised by ``LABEL_ROOM_PX`` pixels (of a ``height``-pixel plot)."""
    extra = math.ceil((y.hi - y.lo) * LABEL_ROOM_PX / max(1, height - LABEL_ROOM_PX))
    return TimeAxis(y.title, y.kind, y.lo, y.hi + extra)


class Plot:
    """Data → pixel positions of a timeline (x across, y up, as Vega-Lite draws them), of a
    value or a numpy array of them."""

    def __init__(self, x: TimeAxis, y: TimeAxis, width: int, height: int) -> None:
        self.x, self.y, self.width, self.height = x, y, width, height

    def px(self, vx: float) -> float:
        return (vx - self.x.lo) / max(1, self.x.hi - self.x.lo) * self.width

    def py(self, vy: float) -> float:
        return (1 - (vy - self.y.lo) / max(1, self.y.hi - self.y.lo)) * self.height

    @property
    def area(self) -> Box:
        """The plot's box: what a label or a moved mark must lie inside."""
        return (0, 0, self.width, self.height)

    def holds(self, box: Box) -> bool:
        """Whether ``box`` lies on the plot."""
        return within(box, self.area)


def _text_box(px: float, py: float, text: str, align: str, dx: float, dy: float) -> Box:
    w, h = CHAR_PX * len(text), LABEL_FONT + 2
    left = px + dx if align == "left" else px + dx - w
    return (left, py + dy - h / 2, left + w, py + dy + h / 2)


def _place_labels(
    rows: list[dict[str, Any]],
    plot: Plot,
    taken: Taken,
    offsets: list[int] | None = None,
    field: str = "label",
) -> tuple[dict[tuple[str, int, int], list[dict[str, Any]]], int]:
    """Each label (``row[field]``) at the first of ``LABEL_PLACES`` inside the plot where it
    and its leader line cross nothing ``taken`` (then added to it), top to bottom, left to
    right; ``offsets``: each mark's shift. Returns the rows per place and how many fit
    nowhere."""
    shift = [0] * len(rows) if offsets is None else offsets
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["y"], rows[i]["x"]))
    mine = taken.copy()
    placed, hidden = _place_in_order(rows, order, plot, mine, shift, field)
    if hidden:
        # a crowd of marks at one height: their labels tried right to left instead, kept
        # when fewer are left out
        at = [plot.px(r["x"]) + s for r, s in zip(rows, shift, strict=True)]
        order = sorted(range(len(rows)), key=lambda i: (-rows[i]["y"], -at[i]))
        again = taken.copy()
        placed_again, fewer = _place_in_order(rows, order, plot, again, shift, field)
        if fewer < hidden:
            mine, placed, hidden = again, placed_again, fewer
    vars(taken).update(vars(mine))
    return placed, hidden


def _place_in_order(
    rows: list[dict[str, Any]],
    order: list[int],
    plot: Plot,
    taken: Taken,
    shift: list[int],
    field: str,
) -> tuple[dict[tuple[str, int, int], list[dict[str, Any]]], int]:
    """``_place_labels``, the labels placed in this ``order``."""
    placed: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    hidden = 0
    for i in order:
        r = rows[i]
        px, py = plot.px(r["x"]) + shift[i], plot.py(r["y"])
        # off the guide lines (``taken.segments``) where a place is free of them, else across one
        for lines in ((None, ()), ((),))[: 1 + bool(taken.segments)]:
            tries = [(at, _label_boxes(px, py, shift[i], r[field], *at)) for at in LABEL_PLACES]
            spot = first_clear(tries, taken, inside=plot.area, lines=lines)
            if spot is not None:
                (align, dx, dy), (box, *_) = spot
                kind = "firing label" if field == "label" else "element label"
                row = {"x": r["x"], "y": r["y"], "label": r[field], "kind": kind}
                if shift[i]:
                    row["shift"] = shift[i]
                if lines == ((),):
                    row["across"] = taken.crossing(box)
                placed.setdefault((align, dx + shift[i], dy), []).append(row)
                break
        else:
            hidden += 1
    return placed, hidden


def _label_boxes(
    px: float, py: float, shift: float, text: str, align: str, dx: int, dy: int
) -> Iterator[Box]:
    """A label's box at (align, dx, dy) from its mark at (``px``, ``py``; drawn ``shift`` px
    right of its point), then small boxes every 3 px along its leader line (``_leader``) but
    at its mark: what the label draws there."""
    yield _text_box(px, py, text, align, dx, dy)
    line = _leader(shift, text, align, dx + shift, dy)
    if line is not None:
        x1, y1, x2, y2 = line
        n, mx = max(1, math.ceil(math.hypot(x2 - x1, y2 - y1) / 3)), px - shift
        for k in range(1, n):
            sx, sy = mx + x1 + (x2 - x1) * k / n, py + y1 + (y2 - y1) * k / n
            yield (sx - 1, sy - 1, sx + 1, sy + 1)


LABEL_REACH_PX = 12.0
"""How far (pixels) a firing label may lie from its mark's centre (to its box's nearest
point) without a leader line to it: the first four ``LABEL_PLACES`` are within it."""


def label_leaders(
    placed: dict[tuple[str, int, int], list[dict[str, Any]]], radius: float = 5.5
) -> list[dict[str, Any]]:
    """A leader line for each label ``_place_labels`` placed farther than ``LABEL_REACH_PX``
    from its mark (``_leader``), as pixel offsets from the mark's point (``xOffset``,
    ``yOffset``, ``x2Offset``, ``y2Offset``)."""
    out = []
    for (align, dx, dy), rows in placed.items():
        for r in rows:
            line = _leader(r.get("shift", 0), r["label"], align, dx, dy, radius)
            if line is not None:
                ends = dict(zip(("xOffset", "yOffset", "x2Offset", "y2Offset"), line, strict=True))
                out.append({"x": r["x"], "y": r["y"], "label": r["label"], "kind": "leader"} | ends)
    return out


def _leader(
    cx: float, label: str, align: str, dx: float, dy: float, radius: float = 5.5
) -> tuple[float, float, float, float] | None:
    """The leader line of a label placed at (align, dx, dy) from its point, its mark drawn
    ``cx`` px right of it: from ``radius`` px off the mark's centre to the label box's nearest
    point, as offsets from the point; None within ``LABEL_REACH_PX`` of its mark."""
    left, top, right, bottom = _text_box(0, 0, label, align, dx, dy)
    nx, ny = min(max(cx, left), right), min(max(0.0, top), bottom)
    far = math.hypot(nx - cx, ny)
    if far <= LABEL_REACH_PX:
        return None
    ux, uy = (nx - cx) / far, ny / far
    return round(cx + ux * radius, 2), round(uy * radius, 2), round(nx, 2), round(ny, 2)


def _taken_by_marks(
    taken: Taken, layers: list[Any], plot: Plot, lines: bool = True, points: bool = True
) -> None:
    """Add the boxes of these layers' point marks (each moved ``dx`` px where the mark's
    ``xOffset`` says so: marks side by side, their rings) and of their lines' segments to
    ``taken``."""
    for layer in layers:
        if layer is None:
            continue
        kind, rows = layer["mark"]["type"], spec.rows(layer)
        if kind == "point" and rows and points:
            taken.add_array(point_boxes(layer, plot))
        elif kind == "line" and lines:
            taken.add_array(segment_boxes(rows, plot))


def point_boxes(layer: Any, plot: Plot) -> np.ndarray:
    """The boxes (1 px to spare, n × 4) of a point layer's marks, each moved ``dx`` px where
    the mark's ``xOffset`` says so (marks side by side, their rings); none not placed."""
    rows = spec.rows(layer)
    r = math.sqrt(layer["mark"].get("size", 160)) / 2 + 1  # (binned marks: to 160)
    # positions as floats (None, a missing position: NaN, left out below)
    px = plot.px(np.array([row["x"] for row in rows], dtype=float))
    if "xOffset" in layer["mark"]:
        px = px + np.array([row.get("dx", 0) for row in rows], dtype=float)
    py = plot.py(np.array([row["y"] for row in rows], dtype=float))
    ok = np.isfinite(px) & np.isfinite(py)
    return np.column_stack((px - r, py - r, px + r, py + r))[ok]


def _taken_by_rules(taken: Taken, layer: Any, plot: Plot) -> None:
    """Add the box (1 px wider on every side) of each vertical rule of a rule layer (``x``,
    ``y``, ``y2``) to ``taken``."""
    if layer is None:
        return
    boxes = []
    for r in spec.rows(layer):
        if None not in (r["x"], r["y"], r["y2"]):
            px, top, bottom = plot.px(r["x"]), plot.py(r["y2"]), plot.py(r["y"])
            boxes.append((px - 1, min(top, bottom) - 1, px + 1, max(top, bottom) + 1))
    taken.add_array([b for b in boxes if all(map(math.isfinite, b))])


_HALF_EXACT = 2**52


def segment_boxes(
    rows: list[dict[str, Any]], plot: Plot, same: tuple[str, ...] = ("operator", "attempt")
) -> np.ndarray:
    """The boxes (1 px wider on every side, n × 4) of the segments of a line layer's
    ``rows``: each two rows in turn alike in the ``same`` columns (one line: its operator
    and attempt) and both placed; none with a side not finite. With arrays when every
    position is an int within ±2**52, giving ``Plot.px`` / ``py``'s values."""
    pairs = [
        (a, b)
        for a, b in pairwise(rows)
        if all(a.get(k) == b.get(k) for k in same) and None not in (a["x"], a["y"], b["x"], b["y"])
    ]
    values = [p[n][c] for p in pairs for n in (0, 1) for c in ("x", "y")]
    values += [plot.x.lo, plot.x.hi, plot.y.lo, plot.y.hi]
    if not all(v.__class__ is int and -_HALF_EXACT <= v <= _HALF_EXACT for v in values):
        boxes = np.array(
            [
                (min(ax, bx) - 1, min(ay, by) - 1, max(ax, bx) + 1, max(ay, by) + 1)
                for ax, ay, bx, by in (
                    (plot.px(a["x"]), plot.py(a["y"]), plot.px(b["x"]), plot.py(b["y"]))
                    for a, b in pairs
                )
            ],
            dtype=float,
        ).reshape(-1, 4)
    else:  # (a difference of two of them is below 2**53: exact as a float too, so each
        # operation rounds as Python's does)
        v = np.array(values[:-4], dtype=np.int64).reshape(-1, 4)
        px, py = plot.px(v[:, [0, 2]]), plot.py(v[:, [1, 3]])
        boxes = np.column_stack(
            (px.min(axis=1) - 1, py.min(axis=1) - 1, px.max(axis=1) + 1, py.max(axis=1) + 1)
        )
    return boxes[np.isfinite(boxes).all(axis=1)]


STACK_PX = 11
"""How far apart (pixels) marks at one point are drawn: side by side, left to right."""


STACK_STEPS = 12
"""How many places each way a firing or cleanup mark tries beside its point before it is
counted on the mark there (``piles``)."""


def _side_by_side(
    rows: list[dict[str, Any]],
    plot: Plot,
    occupied: piles.Grid,
    taken: Taken,
    what: str,
    notes: list[str],
) -> tuple[list[dict[str, Any]], list[float]]:
    """Firing and cleanup marks at one point drawn side by side (``piles.side_by_side``), each
    added to ``occupied`` (and its box to ``taken``). Returns the rows drawn (a mark of a
    pile too deep is counted on the mark at its point) and their offsets."""
    half = STACK_PX / 2
    sx, sy = plot.width / max(1, plot.x.hi - plot.x.lo), plot.height / max(1, plot.y.hi - plot.y.lo)
    x0, y0, h = plot.x.lo, plot.y.lo, plot.height
    places = [((row["x"] - x0) * sx, h - (row["y"] - y0) * sy) for row in rows]
    placed = piles.side_by_side(
        places, STACK_PX, plot.width, most=STACK_STEPS, grid=occupied, rows=rows
    )
    notes += piles.moved_note(placed, f"{what} mark", STACK_PX)
    drawn = [i for i, on in enumerate(placed.counted_on) if on is None]
    offsets = [placed.dx[i] for i in drawn]
    cx = np.array([places[i][0] + placed.dx[i] for i in drawn], dtype=float)
    cy = np.array([places[i][1] for i in drawn], dtype=float)
    arr = np.column_stack((cx - half, cy - half, cx + half, cy + half))
    taken.add_array(arr[np.isfinite(arr).all(axis=1)])
    if placed.counted:
        rows = piles.count_on(rows, placed)
    return rows, offsets


def _drawing_order(layers: list[Any]) -> list[Any]:
    """The layers in drawing order: areas, lines and window marks first, then the elements,
    the watermark's dots, and every text last (each group in its order)."""
    ranks = {"watermark": 2, "element": 1, "elements (binned)": 1}

    def rank(layer: Any) -> int:
        kind, rows = layer["mark"]["type"], spec.rows(layer)
        if kind == "text":
            return 3
        return ranks.get(rows[0].get("kind"), 0) if kind == "point" and rows else 0

    return sorted(layers, key=rank)


EDGE_PLACES = (("top", 4), ("bottom", -4), ("top", 18), ("bottom", -18))
"""Where the watermark's edge text may go, in order: right below its point, right above, a
line further below, a line further above."""


def _edge_texts_off_marks(
    layers: list[Any], plot: Plot, points: Taken, taken: Taken, notes: list[str]
) -> list[Any]:
    """The watermark's edge texts moved to the first of ``EDGE_PLACES`` where they cross no
    mark (``points``, given ``taken``'s guide lines; away from their place: nothing
    ``taken``) and, where one is free of them, no guide line (else the row's ``across`` names
    it): ``boxes.first_clear``; left out where none is free. Returns the layers, one per place
    used."""
    out = []
    for seg, tag in taken.segments:
        points.add_segment(seg, tag)
    for layer in layers:
        rows = spec.rows(layer) if layer["mark"]["type"] == "text" else []
        if not rows or "text" not in rows[0] or layer["mark"].get("baseline") != "top":
            out.append(layer)
            continue
        by: dict[tuple[str, int], list[dict[str, Any]]] = {}
        align = layer["mark"]["align"]
        for e in rows:
            boxes = _edge_places(plot.px(e["x"]), plot.py(e["y"]), e["text"], align)
            tries = [(n, [box]) for n, box in enumerate(boxes)]
            for lines in ((None,), ((),)):  # off the guide lines where a place is, else across
                spot = first_clear(tries[:1], points, lines=lines, add=False) or first_clear(
                    tries[1:], taken, lines=lines, add=False
                )
                if spot is not None:
                    taken.add(box := spot[1][0])
                    if lines == ((),):
                        e["across"] = taken.crossing(box)
                    by.setdefault(EDGE_PLACES[spot[0]], []).append(e)
                    break
            else:
                notes.append(f"{e['text']}: its text is left out (it would cross marks)")
        encoding = {
            "x": plot.x.channel("x"),
            "y": plot.y.channel("y"),
            "text": {"field": "text", "type": "nominal"},
        }
        for (baseline, dy), part in by.items():
            if (baseline, dy) == EDGE_PLACES[0]:
                spec.rows(layer)[:] = part
                out.append(layer)
            else:
                mark = dict(layer["mark"]) | {"baseline": baseline, "dy": dy}
                out.append(spec.layer(part, mark, encoding))
    return out


ElementLabel = int | str | Callable[[Any], Any]
"""How ``timeline(element_labels=...)`` labels an element: a field index, a key, a function."""


def element_label(value_text: Any, how: ElementLabel) -> str:
    """The label of an element whose value the trace holds as ``value_text`` (its JSON text):
    ``how`` applied to the value (an index, a key or a function); "" where it names nothing."""
    try:
        value = json.loads(value_text)
    except (TypeError, ValueError):
        value = value_text
    if callable(how):
        out = how(value)
    elif isinstance(how, int) and isinstance(value, list) and -len(value) <= how < len(value):
        out = value[how]
    elif isinstance(value, dict):
        out = value.get(how)
    else:
        out = None
    return "" if out is None else str(out)


def _element_label_layers(
    elements: spec.ChartDict,
    how: ElementLabel,
    plot: Plot,
    taken: Taken,
    notes: list[str],
) -> list[spec.ChartDict]:
    """A label beside each element dot (``element_label``), placed as the firing labels (a
    leader line to each placed farther than ``LABEL_REACH_PX`` from its dot)."""
    rows = [
        {"x": r["x"], "y": r["y"], "element_label": element_label(r.get("value"), how)}
        for r in spec.rows(elements)
        if r.get("kind") == "element"
    ]
    rows = [r for r in rows if r["element_label"]]
    placed, hidden = _place_labels(rows, plot, taken, None, "element_label")
    if hidden:
        notes.append(f"{hidden} element label(s) left out where they would overlap (hover)")
    radius = math.sqrt(elements["mark"].get("size", 160)) / 2  # (as ``_taken_by_marks``)
    return label_layers(placed, plot, LABEL_FONT + 1, radius, fontWeight="bold")


def label_layers(
    placed: dict[tuple[str, int, int], list[dict[str, Any]]],
    plot: Plot,
    size: int = LABEL_FONT,
    radius: float = 5.5,
    **style: Any,
) -> list[spec.ChartDict]:
    """A text layer of the labels ``_place_labels`` placed, per place, after a rule layer of
    their leader lines (``label_leaders``; drawn under the marks, ``_drawing_order``), if any;
    ``radius``: the marks' (pixels)."""
    xy = {"x": plot.x.channel("x"), "y": plot.y.channel("y")}
    layers = []
    leaders = label_leaders(placed, radius)
    if leaders:
        ends = {k: {"expr": f"datum.{k}"} for k in ("xOffset", "yOffset", "x2Offset", "y2Offset")}
        mark = {"type": "rule", "color": palette.GUIDE_COLOR, "strokeWidth": 0.75} | ends
        layers.append(spec.layer(leaders, mark, xy | {"x2": {"field": "x"}, "y2": {"field": "y"}}))
    return layers + [
        spec.text_layer(
            texts, xy, text="label", size=size, color=palette.INK,
            align=align, baseline="middle", dx=dx, dy=dy, **style,
        )
        for (align, dx, dy), texts in placed.items()
    ]  # fmt: skip


def _edge_boxes(layers: list[spec.ChartDict], plot: Plot) -> list[Box]:
    """The pixel boxes of the watermark's edge texts at their place."""
    return [
        _edge_places(plot.px(e["x"]), plot.py(e["y"]), e["text"], layer["mark"]["align"])[0]
        for layer in layers
        if layer["mark"]["type"] == "text"
        for e in spec.rows(layer)
    ]


def _edge_places(px: float, py: float, text: str, align: str) -> list[Box]:
    """The pixel box of an edge text at (``px``, ``py``) with this ``align`` (``EDGE_DX``) at
    each of ``EDGE_PLACES``."""
    w, dx = CHAR_PX * len(text), EDGE_DX[align]
    left, right = (px + dx - w, px + dx) if align == "right" else (px + dx, px + dx + w)
    tops = [py + dy if side == "top" else py + dy - LABEL_FONT - 3 for side, dy in EDGE_PLACES]
    return [(left, top, right, top + LABEL_FONT + 3) for top in tops]
