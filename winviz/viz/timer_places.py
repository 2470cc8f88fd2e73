"""Where the timers chart's marks and labels sit, in pixels (``winviz.viz.timers``).

Timer events at one point are drawn side by side (``side_by_side``: a mark that would cover
one drawn before it moves right until it covers none); the vertical timestamp labels and the
staircase's "watermark" label are kept only where they cross no timer event (and, for the
timestamps, no label kept before them) — the others are left to the tooltip, and the subtitle
says how many (issue 26). Positions are computed as Vega-Lite draws the panel (``Pixels``:
x across, y up), from the layers' rows.
"""

from __future__ import annotations

from typing import Any

import altair as alt

from winviz.viz.palette import TimeAxis


class Pixels:
    """Data → pixel positions in the timers panel (x across, y up, as Vega-Lite draws them)."""

    def __init__(self, x: TimeAxis, y: TimeAxis, width: int, height: int) -> None:
        self.x, self.y, self.width, self.height = x, y, width, height

    def px(self, v: float) -> float:
        return (v - self.x.lo) / max(1, self.x.hi - self.x.lo) * self.width

    def py(self, v: float) -> float:
        return (1 - (v - self.y.lo) / max(1, self.y.hi - self.y.lo)) * self.height


EVENT_PX = 8  # the side of a timer event's box (size 45 px²), and the step between marks
Box = tuple[float, float, float, float]


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _event_box(row: dict[str, Any], px: Pixels) -> Box:
    cx, cy, h = px.px(row["x"]) + row.get("dx", 0.0), px.py(row["y"]), EVENT_PX / 2
    return (cx - h, cy - h, cx + h, cy + h)


def side_by_side(points: list[dict[str, Any]], px: Pixels, notes: list[str]) -> None:
    """Timer events at one point (a de-duplicated registration at its timer's registration, a
    timer registered and fired at one time) drawn side by side: each mark whose box would
    cover one drawn before it moves ``EVENT_PX`` right until it covers none (its ``dx``, the
    pixel offset the layer draws; its x / y stay the trace's times). The subtitle says how
    many moved."""
    cells: dict[tuple[int, int], list[Box]] = {}
    moved = 0
    steps = max(1, int(px.width // EVENT_PX))  # at most across the panel's width
    for row in points:
        row.setdefault("dx", 0.0)
        for step in range(steps + 1):
            box = _event_box(row, px)
            cell = (int(box[0] // EVENT_PX), int(box[1] // EVENT_PX))
            near = [
                b
                for i in (-1, 0, 1)
                for j in (-1, 0, 1)
                for b in cells.get((cell[0] + i, cell[1] + j), ())
            ]
            if step == steps or not any(
                _inside(box, b) or _inside(b, box) or _close(box, b) for b in near
            ):
                break  # (the box kept is the one drawn)
            row["dx"] = round(row["dx"] + EVENT_PX, 2)
            moved += 1 if row["dx"] == EVENT_PX else 0
        cells.setdefault(cell, []).append(box)
    if moved:
        notes.append(
            f"{moved:,} timer event(s) at the point of another drawn beside it, {EVENT_PX} px "
            "right (hover for its times)"
        )


def _inside(a: Box, b: Box) -> bool:
    return a[0] >= b[0] and a[1] >= b[1] and a[2] <= b[2] and a[3] <= b[3]


def _close(a: Box, b: Box) -> bool:
    """Two event marks covering most of each other (centres nearer than half a mark)."""
    return abs(a[0] - b[0]) < EVENT_PX / 2 and abs(a[1] - b[1]) < EVENT_PX / 2


def boxes_of(points: list[dict[str, Any]], px: Pixels) -> list[Box]:
    return [_event_box(r, px) for r in points]


def labels_off_marks(
    layers: list[alt.Chart], px: Pixels, marks: list[Box], notes: list[str]
) -> list[alt.Chart]:
    """The timestamp labels (vertical, left of their rule) that cross no timer event and no
    label kept before them; the others are left to the tooltip (the subtitle says how many)."""
    kept, boxes, left_out = [], [], 0
    for row in layers[0].data.values:
        box = _vertical_text_box(row, px, 9, 3)
        if any(_overlaps(box, b) for b in marks) or any(_overlaps(box, b) for b in boxes):
            left_out += 1
            continue
        boxes.append(box)
        kept.append(row)
    if left_out:
        notes.append(f"{left_out} timestamp label(s) left out where they would cross a mark")
    layers[0].data.values[:] = kept
    return layers if kept else []


def _vertical_text_box(row: dict[str, Any], px: Pixels, font: int, gap: int) -> Box:
    """The box of a text turned 270°, centred on its point, its baseline ``gap`` px left (the
    glyphs' extent across: the font size less a pixel of leading)."""
    cx, cy = px.px(row["x"]) + row.get("dx", 0.0), px.py(row["y"])
    half = 0.3 * font * len(row["text"])
    return (cx - gap - font, cy - half, cx - gap - 1, cy + half)


def watermark_label_off_marks(
    layers: list[alt.Chart], px: Pixels, marks: list[Box]
) -> list[alt.Chart]:
    """The staircase's "watermark" label (vertical, right of its first step) where it crosses
    no timer event; else left out (the subtitle names the black staircase)."""
    if not layers:
        return []
    row = layers[0].data.values[0]
    cx, cy, half = px.px(row["x"]), px.py(row["y"]), 0.3 * 11 * len(row["text"])
    box = (cx + 2, cy - half, cx + 3 + 11 + 1, cy + half)
    return [] if any(_overlaps(box, b) for b in marks) else layers
