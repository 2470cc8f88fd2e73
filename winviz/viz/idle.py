"""Idle periods (Flink's ``WatermarkStatus.IDLE``: an input that no longer holds back the
combined watermark, ``StatusWatermarkValve``), as the timeline and the scrubber draw them: a
span runs from an ``idle`` / ``channel_idle`` record to the next ``active`` /
``channel_active`` one of the same input (or the end of the trace), drawn as a grey strip
along the left edge; watermark alignment's paused spans as a dark one along the right edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from winviz.trace.paused import PausedSpan
from winviz.viz import palette, spec
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import TraceView

IDLE_KINDS = ("idle", "active", "channel_idle", "channel_active")
STRIP_SHARE = 0.006
"""The width of one input's strip, as a share of the event-time axis (about 4 px at 640 px:
three strips fit in the axis' 3 % padding)."""
_STYLE = {"idle": (palette.IDLE_COLOR, 0.55), "paused": (palette.PAUSED_COLOR, 0.4)}


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
    start."""
    rows = view.select(*IDLE_KINDS)
    if not len(rows):
        return []
    kinds = view.kinds_of(rows).tolist()
    procs = view.column("proc_time", rows).tolist()
    names = [f"{op} (all inputs)" for op in view.column("operator", rows).tolist()]
    for kind in ("channel_idle", "channel_active"):
        at = [i for i, k in enumerate(kinds) if k == kind]
        if at:
            for i, name in zip(at, view.detail(kind, "input", rows[at]).tolist(), strict=True):
                names[i] = str(name)
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
    """The subtitle's words for the idle strips."""
    where = "grey strips along the left edge, left to right"
    return _strips_text([s.line for s in spans], "idle period", where)


def paused_text(spans: list[PausedSpan]) -> str:
    """The subtitle's words for the paused strips."""
    where = "watermark alignment: dark strips along the right edge, right to left"
    return _strips_text([s.input for s in spans], "paused span", where)


def _strips_text(inputs: list[str], what: str, where: str) -> str:
    n = len(inputs)
    return f"{n:,} {what}{'' if n == 1 else 's'} ({where}: {', '.join(dict.fromkeys(inputs))})"


def strip_layer(
    spans: list[IdleSpan],
    x: TimeAxis,
    y: TimeAxis,
    transform: list[dict[str, Any]] | None = None,
    y2: str = "y2",
) -> Any:
    """The idle spans as strips along the left edge, one column per input (None without any);
    a span still idle at the end reaches the axis' edge. ``transform`` / ``y2``: the scrubber
    shows only what happened by its ``t``."""
    return _strips("idle", spans, [s.line for s in spans], x, y, transform, y2)


def paused_layer(
    spans: list[PausedSpan],
    x: TimeAxis,
    y: TimeAxis,
    transform: list[dict[str, Any]] | None = None,
    y2: str = "y2",
) -> Any:
    """The paused spans as strips along the right edge, as ``strip_layer``'s."""
    return _strips("paused", spans, [s.input for s in spans], x, y, transform, y2)


def _strips(
    kind: str,
    spans: list[Any],
    inputs: list[str],
    x: TimeAxis,
    y: TimeAxis,
    transform: list[dict[str, Any]] | None,
    y2: str,
) -> Any:
    """Spans of ``kind`` as one rect layer of strips, a column per input (idle from the left
    edge, paused from the right), their other fields as its tooltip."""
    if not spans:
        return None
    column = {name: i for i, name in enumerate(dict.fromkeys(inputs))}
    width = (x.hi - x.lo) * STRIP_SHARE
    rows = []
    for s, name in zip(spans, inputs, strict=True):
        if kind == "idle":
            left = x.lo + column[name] * width * 1.25
            x0, x1 = round(left, 3), round(left + width, 3)
        else:
            right = x.hi - column[name] * width * 1.25
            x0, x1 = round(right - width, 3), round(right, 3)
        row = {
            "x": x0,
            "x2": x1,
            "y": y.clip(s.start)[0],
            "y2": y.hi if s.end is None else y.clip(s.end)[0],
            "kind": kind,
            kind: name,
            f"{kind} from": y.fmt(s.start),
            f"{kind} until": "end of trace" if s.end is None else y.fmt(s.end),
        }
        if kind == "paused":
            row |= {"its watermark": x.fmt(s.watermark), "max allowed": x.fmt(s.max_allowed)}
            row["group"] = s.group
        rows.append(row)
    color, opacity = _STYLE[kind]
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
