"""Box-and-arrow diagrams as Vega-Lite marks: the drawing under ``operator_flow`` and
``stage_watermarks``.

A diagram is a list of ``Box`` (a rectangle at data coordinates, a bold title and lines of
text under it) and a list of ``Arrow`` (from one box's border to another's, an optional
label, an arrowhead). Each box and arrow is either **on** the path the chart claims (drawn
dark, filled) or **off** it (light grey): which, is decided by the chart from the trace; this
module only draws: a chart dict of layers over inline rows (``spec.layer``), finished by the
chart that draws it (``palette.finish``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from winviz.viz import palette, spec

ON = "on the path"
OFF = "not on the path"
ON_FILL = palette.PATH_FILL
ON_STROKE = palette.INK
OFF_FILL = palette.PAPER
OFF_STROKE = palette.FADED_COLOR
OFF_TEXT = palette.FADED_INK
TITLE_SIZE = 11
LINE_SIZE = 10
LINE_PX = 13  # px between lines of text in a box


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


def _border(box: Box, tx: float, ty: float) -> tuple[float, float]:
    """Where the segment from the box's centre towards (tx, ty) leaves the box."""
    dx, dy = tx - box.x, ty - box.y
    if dx == 0 and dy == 0:
        return box.x, box.y
    sx = (box.w / 2) / abs(dx) if dx else math.inf
    sy = (box.h / 2) / abs(dy) if dy else math.inf
    s = min(sx, sy)
    return box.x + dx * s, box.y + dy * s


def arrow_rows(boxes: dict[str, Box], arrows: list[Arrow], frame: Frame) -> list[dict[str, Any]]:
    """One row per straight segment of each arrow: from the source box's border (through the
    arrow's ``via`` points) to the target box's border. The last segment carries the angle of
    the head (degrees clockwise from up, on screen); the longest one the label's place."""
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
                    "path": ON if a.on else OFF,
                    "dashed": a.dashed,
                    "arrow": f"{s.title} → {d.title}",
                    "edge": f"{a.src} → {a.dst}",
                }
            )
    return rows


def box_rows(boxes: list[Box]) -> list[dict[str, Any]]:
    """One row per box: its rectangle, title, text lines (joined by newlines), on / off."""
    return [
        {
            "id": b.id,
            "x": b.x - b.w / 2,
            "x2": b.x + b.w / 2,
            "y": b.y - b.h / 2,
            "y2": b.y + b.h / 2,
            "cx": b.x,
            "title": b.title,
            "text": "\n".join(b.lines),
            "path": ON if b.on else OFF,
            "kind": "decision" if b.decision else "step",
            "tip": b.tip or "\n".join(b.lines),
        }
        for b in boxes
    ]


def _arrow_layers(
    arows: list[dict[str, Any]],
    x: dict[str, Any],
    y: dict[str, Any],
    colors: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
) -> list[spec.ChartDict]:
    """The arrows (``arrow_rows``): their lines (solid, then dashed), their heads and their
    labels (left, then right of the line); none without arrows. ``colors``: as
    ``_box_layers``'s (the arrows use the stroke and text colours)."""
    if not arows:
        return []
    _, stroke, text_color = colors
    q = "quantitative"
    layers = []
    for dashed in (False, True):
        part = [r for r in arows if r["dashed"] is dashed]
        if not part:
            continue
        layers.append(
            spec.layer(
                part,
                {
                    "type": "rule",
                    "strokeWidth": 1.6,
                    **({"strokeDash": [5, 3]} if dashed else {}),
                },
                {
                    "x": {"field": "x", "type": q, **x},
                    "y": {"field": "y", "type": q, **y},
                    "x2": {"field": "x2"},
                    "y2": {"field": "y2"},
                    "color": stroke,
                    "tooltip": [{"field": "arrow", "type": "nominal"}],
                },
            )
        )
    layers.append(
        spec.layer(
            [r for r in arows if r["head"]],
            {"type": "point", "shape": "triangle-up", "filled": True, "size": 60, "opacity": 1},
            {
                "x": {"field": "x2", "type": q, **x},
                "y": {"field": "y2", "type": q, **y},
                "angle": {"field": "angle", "type": q, "scale": None},
                "color": stroke,
            },
        )
    )
    for right in (False, True):
        labelled = [r for r in arows if r["label"] and r["right"] is right]
        if not labelled:
            continue
        mark = {"fontSize": 9, "dx": -4 if right else 4, "dy": -2, "baseline": "bottom"}
        mark |= {"align": "right" if right else "left", "fontStyle": "italic"}
        layers.append(_text_layer(labelled, ("mx", "my", "label"), x, y, text_color, mark))
    return layers


def _text_layer(
    rows: list[dict[str, Any]],
    fields: tuple[str, str, str],
    x: dict[str, Any],
    y: dict[str, Any],
    color: dict[str, Any],
    mark: dict[str, Any],
) -> spec.ChartDict:
    """A text layer of the diagram: the rows' ``fields`` (x, y, text) in the text colour
    channel ``color``, with the text ``mark``'s other properties (the diagram's own sizes)."""
    fx, fy, text = fields
    return spec.layer(
        rows,
        {"type": "text", **mark},
        {
            "x": {"field": fx, "type": "quantitative", **x},
            "y": {"field": fy, "type": "quantitative", **y},
            "text": {"field": text, "type": "nominal"},
            "color": color,
        },
    )


def _box_layers(
    brows: list[dict[str, Any]],
    x: dict[str, Any],
    y: dict[str, Any],
    colors: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
) -> list[spec.ChartDict]:
    """The boxes (``box_rows``): the steps' and the decisions' rectangles, their titles and
    their lines of text. ``colors``: the fill, stroke and text colour channels."""
    fill, stroke, text_color = colors
    q = "quantitative"
    layers = []
    for kind, mark in (
        ("step", {"type": "rect", "cornerRadius": 4, "strokeWidth": 1.5}),
        ("decision", {"type": "rect", "strokeWidth": 1.5, "strokeDash": [4, 2]}),
    ):
        part = [r for r in brows if r["kind"] == kind]
        if not part:
            continue
        layers.append(
            spec.layer(
                part,
                mark,
                {
                    "x": {"field": "x", "type": q, **x},
                    "x2": {"field": "x2"},
                    "y": {"field": "y", "type": q, **y},
                    "y2": {"field": "y2"},
                    "fill": fill,
                    "stroke": stroke,
                    "tooltip": [
                        {"field": "title", "type": "nominal", "title": "step"},
                        {"field": "tip", "type": "nominal", "title": "from the trace"},
                    ],
                },
            )
        )
    title = {"fontSize": TITLE_SIZE, "fontWeight": "bold", "baseline": "top", "dy": 3}
    layers.append(_text_layer(brows, ("cx", "y", "title"), x, y, text_color, title))
    texts = [r for r in brows if r["text"]]
    if texts:
        lines = {"fontSize": LINE_SIZE, "baseline": "top", "dy": 5 + LINE_PX}
        lines |= {"lineBreak": "\n", "lineHeight": LINE_PX}
        layers.append(_text_layer(texts, ("cx", "y", "text"), x, y, text_color, lines))
    return layers


def diagram(
    boxes: list[Box],
    arrows: list[Arrow],
    frame: Frame,
    *,
    legend: tuple[str, str] | None = (ON, OFF),
) -> spec.ChartDict:
    """The boxes and arrows as one layered chart (axes hidden, y downwards). ``legend``: the
    words for on / off the path in the legend (None: no legend)."""
    shown = legend is not None
    legend = legend or (ON, OFF)
    by_id = {b.id: b for b in boxes}
    brows, arows = box_rows(boxes), arrow_rows(by_id, arrows, frame)
    words = {ON: legend[0], OFF: legend[1]}
    for r in brows + arows:
        r["path"] = words[r["path"]]
    x = {"scale": {"domain": [frame.x0, frame.x1]}, "axis": None}
    y = {"scale": {"domain": [frame.y0, frame.y1], "reverse": True}, "axis": None}
    path_domain = [legend[0], legend[1]]
    fill = {
        "field": "path",
        "type": "nominal",
        "title": "step",
        "scale": {"domain": path_domain, "range": [ON_FILL, OFF_FILL]},
        "legend": {"symbolStrokeColor": palette.INK, "symbolType": "square"} if shown else None,
    }
    stroke = {
        "field": "path",
        "type": "nominal",
        "scale": {"domain": path_domain, "range": [ON_STROKE, OFF_STROKE]},
        "legend": None,
    }
    text_color = {
        "field": "path",
        "type": "nominal",
        "scale": {"domain": path_domain, "range": [palette.INK, OFF_TEXT]},
        "legend": None,
    }
    colors = (fill, stroke, text_color)
    layers = [*_arrow_layers(arows, x, y, colors), *_box_layers(brows, x, y, colors)]
    return {"layer": layers, "width": frame.width, "height": frame.height}
