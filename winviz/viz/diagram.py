"""Box-and-arrow diagrams as Vega-Lite layers: the drawing under ``operator_flow`` and
``stage_watermarks``. Each ``Box`` and ``Arrow`` is **on** the path the chart claims (dark,
filled) or **off** it (light grey); the chart decides which from the trace and finishes the
chart dict (``palette.finish``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from winviz.viz import palette, spec

ON = "on the path"
OFF = "not on the path"
LINE_PX = 13  # px between lines of text in a box (a title's lines too)
TITLE_TOP_PX = 4  # px from a box's top to its title's first line
TEXT_GAP_PX = 2  # px between a box's title and its lines of text
BOTTOM_PX = 6  # px under a box's last line
SIDE_PX = 7  # px each side of a box's text (an arrow's head reaches 5 px into the box)
FIT_PLOT = palette.FIT_WIDTH - 45
"""A diagram's default plot width (px): with Vega's padding and vega-embed's actions menu
(38 px) it fits ``palette.FIT_WIDTH``."""
TITLE_CHAR_PX = 7.0
"""A generous average advance of a bold 11-px sans-serif character (a box's title)."""
TEXT_CHAR_PX = 5.6
"""A generous average advance of a 10-px sans-serif character (a box's lines of text)."""


@dataclass(frozen=True)
class Box:
    """One box at centre (``x``, ``y``) in data units, ``w`` × ``h`` wide and high; y grows
    downwards. ``decision``: a question (drawn dashed)."""

    id: str
    x: float
    y: float
    w: float
    h: float
    title: str
    lines: tuple[str, ...] = ()
    on: bool = False
    decision: bool = False
    tip: str = ""


@dataclass(frozen=True)
class Arrow:
    """An arrow from box ``src`` to box ``dst`` with an optional ``label``; ``dashed``: a
    later step (a timer that fires afterwards)."""

    src: str
    dst: str
    label: str = ""
    on: bool = False
    dashed: bool = False
    at: float = 0.5  # where along the arrow's longest segment its label sits (0: its start)
    via: tuple[tuple[float, float], ...] = ()  # points the arrow bends at
    right: bool = False  # the label left of that point (else right of it)


@dataclass(frozen=True)
class Frame:
    """The visible data extent and the plot's size in pixels."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: int
    height: int

    def px(self, dx: float, dy: float) -> tuple[float, float]:
        """A data-unit offset in pixels."""
        return dx * self.width / (self.x1 - self.x0), dy * self.height / (self.y1 - self.y0)

    def units(self, px: float) -> float:
        """A vertical offset of ``px`` pixels in data units."""
        return px * (self.y1 - self.y0) / self.height


def wrapped(text: str, width_px: float, char_px: float) -> list[str]:
    """``text`` in lines of at most ``width_px`` (``char_px`` a character), broken at spaces
    and, in a word wider than a line, after dots and slashes or before "("; nothing is cut."""
    most = max(1, int(width_px // char_px))
    parts: list[tuple[str, str]] = []  # (what joins it to the part before, the part)
    for word in text.split(" "):
        if len(word) <= most:
            parts.append((" ", word))
            continue
        piece, glue = "", " "
        for ch in word:
            if ch == "(" and piece:
                parts.append((glue, piece))
                piece, glue = "", ""
            piece += ch
            if ch in "./" and len(piece) > 1:
                parts.append((glue, piece))
                piece, glue = "", ""
        if piece:
            parts.append((glue, piece))
    lines: list[str] = []
    for glue, part in parts:
        if lines and len(lines[-1]) + len(glue) + len(part) <= most:
            lines[-1] += glue + part
        else:
            lines.append(part)
    return lines


def box_px(title: str, lines: list[str], width_px: float) -> tuple[str, tuple[str, ...], float]:
    """A box ``width_px`` wide: its title and lines wrapped to fit it, and its height (px)."""
    inner = width_px - 2 * SIDE_PX
    heading = wrapped(title, inner, TITLE_CHAR_PX)
    text = [line for raw in lines for line in wrapped(raw, inner, TEXT_CHAR_PX)]
    height = TITLE_TOP_PX + LINE_PX * len(heading) + BOTTOM_PX
    if text:
        height += TEXT_GAP_PX + LINE_PX * len(text)
    return "\n".join(heading), tuple(text), height


def _border(box: Box, tx: float, ty: float) -> tuple[float, float]:
    """Where the segment from the box's centre towards (tx, ty) leaves the box."""
    dx, dy = tx - box.x, ty - box.y
    if dx == 0 and dy == 0:
        return box.x, box.y
    sx = (box.w / 2) / abs(dx) if dx else math.inf
    sy = (box.h / 2) / abs(dy) if dy else math.inf
    s = min(sx, sy)
    return box.x + dx * s, box.y + dy * s


def arrow_rows(
    boxes: dict[str, Box], arrows: list[Arrow], frame: Frame, words: tuple[str, str]
) -> list[dict[str, Any]]:
    """One row per straight segment of each arrow, box border to box border through its
    ``via`` points; the last carries the head's angle (clockwise from up), the longest the
    label; ``path``: ``words``' first on the path, else its second."""
    rows = []
    for a in arrows:
        s, d = boxes[a.src], boxes[a.dst]
        first = a.via[0] if a.via else (d.x, d.y)
        last = a.via[-1] if a.via else (s.x, s.y)
        points = [_border(s, *first), *a.via, _border(d, *last)]
        segments = list(itertools.pairwise(points))
        longest = max(range(len(segments)), key=lambda i: math.dist(*segments[i]))
        for i, ((x, y), (x2, y2)) in enumerate(segments):
            px, py = frame.px(x2 - x, y2 - y)
            rows.append(
                {
                    "x": x,
                    "y": y,
                    "x2": x2,
                    "y2": y2,
                    "head": i == len(segments) - 1,
                    "angle": round(math.degrees(math.atan2(px, -py)) % 360, 1),
                    "mx": x + (x2 - x) * a.at,
                    "my": y + (y2 - y) * a.at,
                    "label": a.label if i == longest else "",
                    "right": a.right,
                    "above": abs(py) < 0.5,  # a level segment: its label centred above it
                    "path": words[0] if a.on else words[1],
                    "dashed": a.dashed,
                    "arrow": f"{s.title} → {d.title}",
                    "edge": f"{a.src} → {a.dst}",
                }
            )
    return rows


def box_rows(boxes: list[Box], frame: Frame, words: tuple[str, str]) -> list[dict[str, Any]]:
    """One row per box: its rectangle, title and text (lines joined by newlines), where they
    start (``ty``, ``ly``), on / off the path (``words``)."""
    return [
        {
            "id": b.id,
            "x": b.x - b.w / 2,
            "x2": b.x + b.w / 2,
            "y": b.y - b.h / 2,
            "y2": b.y + b.h / 2,
            "cx": b.x,
            "ty": b.y - b.h / 2 + frame.units(TITLE_TOP_PX),
            "ly": b.y
            - b.h / 2
            + frame.units(TITLE_TOP_PX + LINE_PX * (b.title.count("\n") + 1) + TEXT_GAP_PX),
            "title": b.title,
            "text": "\n".join(b.lines),
            "path": words[0] if b.on else words[1],
            "kind": "decision" if b.decision else "step",
            "tip": b.tip or "\n".join(b.lines),
        }
        for b in boxes
    ]


def diagram(
    boxes: list[Box], arrows: list[Arrow], frame: Frame, legend: tuple[str, str] | None
) -> spec.ChartDict:
    """The boxes and arrows as one layered chart (axes hidden, y downwards). ``legend``: the
    words for on / off the path in the legend (None: no legend)."""
    shown = legend is not None
    legend = legend or (ON, OFF)
    brows = box_rows(boxes, frame, legend)
    arows = arrow_rows({b.id: b for b in boxes}, arrows, frame, legend)
    x = {"scale": {"domain": [frame.x0, frame.x1]}, "axis": None}
    y = {"scale": {"domain": [frame.y0, frame.y1], "reverse": True}, "axis": None}
    q = "quantitative"

    def at(fx: str, fy: str) -> dict[str, Any]:
        return {"x": {"field": fx, "type": q, **x}, "y": {"field": fy, "type": q, **y}}

    def by_path(colors: list[str], **more: Any) -> dict[str, Any]:
        scale = {"domain": list(legend), "range": colors}
        return {"field": "path", "type": "nominal", **more, "scale": scale}

    key = {"symbolStrokeColor": palette.INK, "symbolType": "square"} if shown else None
    fill = by_path([palette.PATH_FILL, palette.PAPER], title="step", legend=key)
    stroke = by_path([palette.INK, palette.FADED_COLOR], legend=None)
    ink = by_path([palette.INK, palette.FADED_INK], legend=None)

    def text(rows: list[dict[str, Any]], fx: str, fy: str, field: str, **mark: Any) -> Any:
        channels = {**at(fx, fy), "text": {"field": field, "type": "nominal"}, "color": ink}
        return spec.layer(rows, {"type": "text", **mark}, channels)

    layers = []
    for dashed in (False, True):  # the arrows' lines, heads and labels
        part = [r for r in arows if r["dashed"] is dashed]
        if part:
            line = {
                "type": "rule",
                "strokeWidth": 1.6,
                **({"strokeDash": [5, 3]} if dashed else {}),
            }
            tip = [{"field": "arrow", "type": "nominal"}]
            ends = {"x2": {"field": "x2"}, "y2": {"field": "y2"}}
            layers.append(
                spec.layer(part, line, {**at("x", "y"), **ends, "color": stroke, "tooltip": tip})
            )
    if arows:
        head = {"type": "point", "shape": "triangle-up", "filled": True, "size": 60, "opacity": 1}
        angle = {"field": "angle", "type": q, "scale": None}
        heads = [r for r in arows if r["head"]]
        layers.append(spec.layer(heads, head, {**at("x2", "y2"), "angle": angle, "color": stroke}))
    for align, dx, dy in (("left", 4, -2), ("right", -4, -2), ("center", 0, -6)):
        centre = align == "center"
        labelled = [
            r
            for r in arows
            if r["label"] and r["above"] is centre and (centre or r["right"] is (align == "right"))
        ]
        if labelled:
            style = {"baseline": "bottom", "align": align, "fontStyle": "italic"}
            layers.append(text(labelled, "mx", "my", "label", fontSize=9, dx=dx, dy=dy, **style))
    # the boxes' outline in the fill's legend (Vega-Lite merges the two into one)
    outline = stroke | {"title": "step", "legend": key}
    tip = [
        {"field": "title", "type": "nominal", "title": "step"},
        {"field": "tip", "type": "nominal", "title": "from the trace"},
    ]
    for kind, mark in (
        ("step", {"type": "rect", "cornerRadius": 4, "strokeWidth": 1.5}),
        ("decision", {"type": "rect", "strokeWidth": 1.5, "strokeDash": [4, 2]}),
    ):
        part = [r for r in brows if r["kind"] == kind]
        if part:
            ends = {"x2": {"field": "x2"}, "y2": {"field": "y2"}}
            channels = {**at("x", "y"), **ends, "fill": fill, "stroke": outline, "tooltip": tip}
            layers.append(spec.layer(part, mark, channels))
    lines = {"baseline": "top", "lineBreak": "\n", "lineHeight": LINE_PX}
    layers.append(text(brows, "cx", "ty", "title", fontSize=11, fontWeight="bold", **lines))
    texts = [r for r in brows if r["text"]]
    if texts:
        layers.append(text(texts, "cx", "ly", "text", fontSize=10, **lines))
    # the arrows' colour and the texts' are two scales of one field (merged, Vega-Lite warns)
    resolve = {"scale": {"color": "independent"}}
    return {"layer": layers, "width": frame.width, "height": frame.height, "resolve": resolve}
