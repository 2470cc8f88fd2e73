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
LINE_PX = 13  # px between lines of text in a box (a title's lines too)
TITLE_TOP_PX = 4  # px from a box's top to its title's first line
TEXT_GAP_PX = 2  # px between a box's title and its lines of text
BOTTOM_PX = 6  # px under a box's last line
SIDE_PX = 7  # px each side of a box's text (an arrow's head reaches 5 px into the box)
FIT_PLOT = palette.FIT_WIDTH - 45
"""A diagram's plot width (px) by default: with Vega's padding (5 px a side) and the 38 px
vega-embed keeps right of a chart for its actions menu, the chart fits ``palette.FIT_WIDTH``
(a diagram, unlike a chart, fills its width)."""
TITLE_CHAR_PX = 7.0
"""A generous average advance of a bold 11-px sans-serif character (a box's title)."""
TEXT_CHAR_PX = 5.6
"""A generous average advance of a 10-px sans-serif character (a box's lines of text)."""
LABEL_CHAR_PX = 5.2
"""A generous average advance of a 9-px italic sans-serif character (an arrow's label)."""


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
    """``text`` in lines of at most ``width_px`` (at ``char_px`` a character), broken at
    spaces, and a word wider than a line after its dots and slashes or before an opening
    parenthesis (``WindowAssigner.`` / ``assignWindows``); nothing is cut: a part still wider
    than a line stays whole on a line of its own."""
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
    """A box ``width_px`` wide: its title and lines of text wrapped to fit it (``wrapped``),
    and the height (px) they take: title, gap, lines, bottom margin."""
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
                    "above": abs(py) < 0.5,  # a level segment: its label centred above it
                    "path": ON if a.on else OFF,
                    "dashed": a.dashed,
                    "arrow": f"{s.title} → {d.title}",
                    "edge": f"{a.src} → {a.dst}",
                }
            )
    return rows


def box_rows(boxes: list[Box], frame: Frame) -> list[dict[str, Any]]:
    """One row per box: its rectangle, title (its lines joined by newlines), where its title
    and its text start (``ty``, ``ly``: ``TITLE_TOP_PX`` under its top, and under the title's
    last line), its text lines (joined by newlines), on / off."""
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
    for align, dx, dy in (("left", 4, -2), ("right", -4, -2), ("center", 0, -6)):
        centre = align == "center"
        labelled = [
            r
            for r in arows
            if r["label"] and r["above"] is centre and (centre or r["right"] is (align == "right"))
        ]
        if not labelled:
            continue
        mark = {"fontSize": 9, "dx": dx, "dy": dy, "baseline": "bottom"}
        mark |= {"align": align, "fontStyle": "italic"}
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
    title = {"fontSize": TITLE_SIZE, "fontWeight": "bold", "baseline": "top"}
    title |= {"lineBreak": "\n", "lineHeight": LINE_PX}
    layers.append(_text_layer(brows, ("cx", "ty", "title"), x, y, text_color, title))
    texts = [r for r in brows if r["text"]]
    if texts:
        lines = {"fontSize": LINE_SIZE, "baseline": "top"}
        lines |= {"lineBreak": "\n", "lineHeight": LINE_PX}
        layers.append(_text_layer(texts, ("cx", "ly", "text"), x, y, text_color, lines))
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
    brows, arows = box_rows(boxes, frame), arrow_rows(by_id, arrows, frame)
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
    # the boxes' stroke in the fill's legend (one legend of the two: Vega-Lite merges them)
    outline = stroke | {"title": "step", "legend": fill["legend"]}
    layers = [
        *_arrow_layers(arows, x, y, colors),
        *_box_layers(brows, x, y, (fill, outline, text_color)),
    ]
    # the arrows' colour and the texts' are two scales of one field (Vega-Lite would merge
    # them into the first's range, and warn)
    resolve = {"scale": {"color": "independent"}}
    return {"layer": layers, "width": frame.width, "height": frame.height, "resolve": resolve}
