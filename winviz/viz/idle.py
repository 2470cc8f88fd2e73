"""Idle periods, as the timeline and the scrubber draw them: when an input stopped counting

Flink's ``WatermarkStatus`` (``IDLE`` / ``ACTIVE``): a split marked idle by
``WatermarkStrategy.withIdleness`` no longer holds back the combined watermark
(``StatusWatermarkValve`` takes the minimum over the active channels only); when every input
of an operator is idle, the operator is idle itself. The trace records ``channel_idle`` /
``channel_active`` of one input (detail ``input``: e.g. ``kafka[1]``) and ``idle`` / ``active``
of an operator. A span runs from an idle record to the next active record of the same input
(or to the end of the trace).

On a processing-time axis each input's spans are a narrow grey strip along the left edge, one
column per input, so spans of several inputs never overlap; watermark alignment's **paused**
spans (``winviz.trace.paused``) are drawn the same way along the right edge, darker
(``paused_layer``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from winviz.trace.paused import PausedSpan
from winviz.viz import palette, spec
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import TraceView

IDLE_KINDS = ("idle", "active", "channel_idle", "channel_active")
STRIP_SHARE = 0.006
"""The width of one input's strip, as a share of the event-time axis (about 4 px at 640 px:
three strips fit in the axis' 3 % padding)."""
STRIP_COLOR = palette.IDLE_COLOR
STRIP_OPACITY = 0.55


@dataclass(frozen=True, slots=True)
class IdleSpan:
    """One idle period of one input: ``line`` names it (the channel's input, or "<operator>
    (all inputs)"), ``start`` / ``end`` are processing times, ``end`` None while still idle at
    the end of the trace."""

    line: str
    start: int
    end: int | None


def idle_spans(view: TraceView) -> list[IdleSpan]:
    """Every idle span of the trace, per input in order of its first idle record, then by
    start (from ``idle`` / ``channel_idle`` to the next ``active`` / ``channel_active`` of
    the same input)."""
    rows = view.select(*IDLE_KINDS)
    if not len(rows):
        return []
    kinds = view.kinds_of(rows).tolist()
    procs = view.column("proc_time", rows).tolist()
    operators = view.column("operator", rows).tolist()
    names: list[str] = [""] * len(rows)
    for kind in IDLE_KINDS:
        mask = np.asarray([k == kind for k in kinds], dtype=bool)
        if not mask.any():
            continue
        at = np.flatnonzero(mask)
        if kind.startswith("channel_"):
            inputs = view.detail(kind, "input", rows[at]).tolist()
            for i, name in zip(at.tolist(), inputs, strict=True):
                names[i] = str(name)
        else:
            for i in at.tolist():
                names[i] = f"{operators[i]} (all inputs)"
    since: dict[str, int] = {}
    spans: dict[str, list[IdleSpan]] = {}
    for kind, proc, line in zip(kinds, procs, names, strict=True):
        if proc is None:
            continue
        if kind in ("idle", "channel_idle"):
            spans.setdefault(line, [])
            since.setdefault(line, int(proc))
        elif line in since:
            spans[line].append(IdleSpan(line, since.pop(line), int(proc)))
    for line, start in since.items():
        spans[line].append(IdleSpan(line, start, None))
    return [s for line in spans for s in sorted(spans[line], key=lambda s: s.start)]


def lines_text(spans: list[IdleSpan]) -> str:
    """The subtitle's words for the strips: how many periods, and the inputs left to right."""
    where = "grey strips along the left edge, left to right"
    return _strips_text([s.line for s in spans], "idle period", where)


def _strips_text(inputs: list[str], what: str, where: str) -> str:
    """How many strips (``what``, one per input of ``inputs``), ``where`` they are drawn and
    the inputs in column order."""
    n = len(inputs)
    return f"{n:,} {what}{'' if n == 1 else 's'} ({where}: {', '.join(dict.fromkeys(inputs))})"


def strip_layer(
    spans: list[IdleSpan],
    x: TimeAxis,
    y: TimeAxis,
    transform: list[dict[str, Any]] | None = None,
    y2: str = "y2",
) -> Any:
    """The spans as strips along the left edge, one column per input (None without any): y /
    y2 their processing times (a span still idle at the end reaches the axis' edge), with
    tooltips; ``transform`` / ``y2``: the scrubber shows only what happened by its ``t``."""
    if not spans:
        return None
    column = {line: i for i, line in enumerate(dict.fromkeys(s.line for s in spans))}
    width = (x.hi - x.lo) * STRIP_SHARE
    rows = []
    for s in spans:
        i = column[s.line]
        rows.append(
            {
                "x": round(x.lo + i * width * 1.25, 3),
                "x2": round(x.lo + i * width * 1.25 + width, 3),
                "y": y.clip(s.start)[0],
                "y2": y.hi if s.end is None else y.clip(s.end)[0],
                "kind": "idle",
                "idle": s.line,
                "idle from": y.fmt(s.start),
                "idle until": "end of trace" if s.end is None else y.fmt(s.end),
            }
        )
    return _strips(rows, STRIP_COLOR, STRIP_OPACITY, x, y, transform, y2)


PAUSED_COLOR = palette.PAUSED_COLOR
PAUSED_OPACITY = 0.4


def paused_text(spans: list[PausedSpan]) -> str:
    """The subtitle's words for the paused strips."""
    where = "watermark alignment: dark strips along the right edge, right to left"
    return _strips_text([s.input for s in spans], "paused span", where)


def paused_layer(
    spans: list[PausedSpan],
    x: TimeAxis,
    y: TimeAxis,
    transform: list[dict[str, Any]] | None = None,
    y2: str = "y2",
) -> Any:
    """The paused spans as strips along the right edge, one column per input (None without
    any); ``transform`` / ``y2`` as ``strip_layer``'s."""
    if not spans:
        return None
    column = {line: i for i, line in enumerate(dict.fromkeys(s.input for s in spans))}
    width = (x.hi - x.lo) * STRIP_SHARE
    rows = []
    for s in spans:
        right = x.hi - column[s.input] * width * 1.25
        rows.append(
            {
                "x": round(right - width, 3),
                "x2": round(right, 3),
                "y": y.clip(s.start)[0],
                "y2": y.hi if s.end is None else y.clip(s.end)[0],
                "kind": "paused",
                "paused": s.input,
                "paused from": y.fmt(s.start),
                "paused until": "end of trace" if s.end is None else y.fmt(s.end),
                "its watermark": x.fmt(s.watermark),
                "max allowed": x.fmt(s.max_allowed),
                "group": s.group,
            }
        )
    return _strips(rows, PAUSED_COLOR, PAUSED_OPACITY, x, y, transform, y2)


def _strips(
    rows: list[dict[str, Any]],
    color: str,
    opacity: float,
    x: TimeAxis,
    y: TimeAxis,
    transform: list[dict[str, Any]] | None,
    y2: str,
) -> Any:
    """Rows of x / x2 / y / y2 strips as one rect layer, their other fields as its tooltip."""
    return spec.layer(
        rows,
        {"type": "rect", "color": color, "opacity": opacity},
        {
            "x": x.channel("x"),
            "x2": {"field": "x2"},
            "y": y.channel("y"),
            "y2": {"field": y2},
            "tooltip": spec.tooltips(rows, ["x", "x2", "y", "y2"]),
        },
        transform,
    )
