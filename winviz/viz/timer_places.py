"""Where the timers chart's marks and labels sit, in pixels (``winviz.viz.timers``).

Timer events at one point are drawn side by side (``side_by_side``, by the charts' one rule,
``piles``); the vertical timestamp labels and the
staircase's "watermark" label are kept only where they cross no timer event (and, for the
timestamps, no label kept before them) — the others are left to the tooltip, and the subtitle
says how many (issue 26). Positions are computed as Vega-Lite draws the panel
(``labels.Plot``: x across, y up), from the layers' rows.
"""

from __future__ import annotations

from typing import Any

from winviz.viz import piles, spec
from winviz.viz.labels import Box, Plot, overlaps

EVENT_PX = 8  # the side of a timer event's box (size 45 px²), and the step between marks


def _event_box(row: dict[str, Any], px: Plot) -> Box:
    cx, cy, h = px.px(row["x"]) + row.get("dx", 0.0), px.py(row["y"]), EVENT_PX / 2
    return (cx - h, cy - h, cx + h, cy + h)


EVENT_STEPS = 4
"""How many places (``EVENT_PX`` apart) each way a timer event tries beside its point before
it is counted on the mark there (``piles``)."""


def side_by_side(
    points: list[dict[str, Any]], px: Plot, notes: list[str]
) -> tuple[list[dict[str, Any]], piles.Grid]:
    """Timer events at one point (a de-duplicated registration at its timer's registration, a
    timer registered and fired at one time) drawn side by side by the charts' one rule
    (``piles.side_by_side``: a few ``EVENT_PX`` steps right, then left, on the panel; each
    row's ``dx``, its x / y stay the trace's times); events of a pile too deep for that are
    counted on the mark at their point (its ``also here``) and not drawn. Returns the rows
    drawn and the grid (``piles.ring_layer``); the subtitle says how many moved and how many
    were counted."""
    for r in points:  # right of the rightmost rule would leave the plot: left of the leftmost
        d = r.get("dx", 0.0)
        if d > 0 and px.px(r["x"]) + d + EVENT_PX / 2 > px.width:
            r["dx"] = -d
    places = [(px.px(r["x"]) + r.get("dx", 0.0), px.py(r["y"])) for r in points]
    grid = piles.Grid(EVENT_PX, reach=EVENT_PX / 2)  # (centres nearer than half a mark)
    placed = piles.side_by_side(
        places, EVENT_PX, px.width, most=EVENT_STEPS, grid=grid, rows=points
    )
    for row, d in zip(points, placed.dx, strict=True):
        row["dx"] = round(row.get("dx", 0.0) + d, 2)
    notes += piles.moved_note(placed, "timer event", EVENT_PX)
    return (piles.count_on(points, placed) if placed.counted else points), grid


def boxes_of(points: list[dict[str, Any]], px: Plot) -> list[Box]:
    return [_event_box(r, px) for r in points]


def labels_off_marks(
    layers: list[spec.ChartDict], px: Plot, marks: list[Box], notes: list[str]
) -> list[spec.ChartDict]:
    """The timestamp labels (vertical, left of their rule) that cross no timer event and no
    label kept before them; the others are left to the tooltip (the subtitle says how many)."""
    kept, boxes, left_out = [], [], 0
    for row in spec.rows(layers[0]):
        box = _vertical_text_box(row, px, 9, 3)
        if any(overlaps(box, b) for b in marks) or any(overlaps(box, b) for b in boxes):
            left_out += 1
            continue
        boxes.append(box)
        kept.append(row)
    if left_out:
        notes.append(f"{left_out} timestamp label(s) left out where they would cross a mark")
    spec.rows(layers[0])[:] = kept
    return layers if kept else []


def _vertical_text_box(row: dict[str, Any], px: Plot, font: int, gap: int) -> Box:
    """The box of a text turned 270°, centred on its point, its baseline ``gap`` px left (the
    glyphs' extent across: the font size less a pixel of leading)."""
    cx, cy = px.px(row["x"]) + row.get("dx", 0.0), px.py(row["y"])
    half = 0.3 * font * len(row["text"])
    return (cx - gap - font, cy - half, cx - gap - 1, cy + half)


def watermark_label_off_marks(
    layers: list[spec.ChartDict], px: Plot, marks: list[Box]
) -> list[spec.ChartDict]:
    """The staircase's "watermark" label (vertical, right of its first step) where it crosses
    no timer event; else left out (the subtitle names the black staircase)."""
    if not layers:
        return []
    row = spec.rows(layers[0])[0]
    cx, cy, half = px.px(row["x"]), px.py(row["y"]), 0.3 * 11 * len(row["text"])
    box = (cx + 2, cy - half, cx + 3 + 11 + 1, cy + half)
    return [] if any(overlaps(box, b) for b in marks) else layers
