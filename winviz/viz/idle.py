"""Idle periods (Flink's ``WatermarkStatus.IDLE``: an input that no longer holds back the
combined watermark, ``StatusWatermarkValve``), as the timeline and the scrubber draw them: a
span runs from an ``idle`` / ``channel_idle`` record to the next ``active`` /
``channel_active`` one of the same input, or to a restart (statuses are not checkpointed: the
restored job starts every input active, ``trace.channels.channel_states``), or to the end of
the trace; drawn as a grey strip along the left edge; watermark alignment's paused spans
(``PausedSpan``) as a dark one along the right edge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from winviz.trace.paused import PausedSpan
from winviz.viz import palette, spec
from winviz.viz.palette import TimeAxis
from winviz.viz.trace_view import TraceView
from winviz.viz.watermark_steps import Restart, restarts

GOES_IDLE = ("idle", "channel_idle")
IDLE_KINDS = (*GOES_IDLE, "active", "channel_active")
STRIP_SHARE = 0.006
"""The width of one input's strip, as a share of the event-time axis (about 4 px at 640 px:
three strips fit in the axis' 3 % padding)."""
_STRIPS = {  # per kind of span: colour, opacity, what one is, where its strips are
    "idle": (
        palette.IDLE_COLOR,
        0.55,
        "idle period",
        "grey strips along the left edge, left to right",
    ),
    "paused": (
        palette.PAUSED_COLOR,
        0.4,
        "paused span",
        "watermark alignment: dark strips along the right edge, right to left",
    ),
}


@dataclass(frozen=True, slots=True)
class IdleSpan:
    """One idle period of one input (as the chart names it: a channel's input or line, an
    operator's own) from processing time ``start`` to ``end`` (None: still idle at the end)."""

    input: str
    start: int
    end: int | None


def spans_of(
    records: Iterable[tuple[int, str, int | None, str]], restarts: Sequence[Restart] = ()
) -> list[IdleSpan]:
    """The idle rule: an input is idle from an ``idle`` / ``channel_idle`` record to the next
    ``active`` / ``channel_active`` one of the same input, or to the next restart, where the
    job failed (``Restart.failed_at``, as the watermark lines end; its own time when unknown),
    or to the end (``end`` None). ``records``: (seq, kind, proc_time, input) in seq order;
    closed spans in order of their end, then open ones in order of their start."""
    spans: list[IdleSpan] = []
    since: dict[str, int] = {}
    cuts = [(r.seq, r.proc_time if r.failed_at is None else r.failed_at) for r in restarts]

    def restart(end: int) -> None:
        """Every open span ends at ``end``."""
        spans.extend(IdleSpan(name, start, end) for name, start in since.items())
        since.clear()

    k = 0
    for seq, kind, proc, name in records:
        while k < len(cuts) and cuts[k][0] < seq:
            restart(cuts[k][1])
            k += 1
        if proc is None:
            continue
        if kind in GOES_IDLE:
            since.setdefault(name, int(proc))
        elif name in since:
            spans.append(IdleSpan(name, since.pop(name), int(proc)))
    for _, end in cuts[k:]:
        restart(end)
    return spans + [IdleSpan(name, start, None) for name, start in since.items()]


def idle_spans(view: TraceView) -> list[IdleSpan]:
    """Every idle span of the trace (``spans_of``; an operator's own input named
    "<operator> (all inputs)"), per input in order of its first idle record, then by start."""
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
    records = list(zip(rows.tolist(), kinds, procs, names, strict=True))
    first = dict.fromkeys(n for _, k, p, n in records if k in GOES_IDLE and p is not None)
    order = {name: i for i, name in enumerate(first)}
    return sorted(spans_of(records, restarts(view)), key=lambda s: (order[s.input], s.start))


def lines_text(spans: list[IdleSpan] | list[PausedSpan], kind: str = "idle") -> str:
    """The subtitle's words for the strips of these spans of ``kind`` (idle or paused)."""
    n, (_, _, what, where) = len(spans), _STRIPS[kind]
    inputs = ", ".join(dict.fromkeys(s.input for s in spans))
    return f"{n:,} {what}{'' if n == 1 else 's'} ({where}: {inputs})"


def span_row(
    s: IdleSpan | PausedSpan,
    axis: TimeAxis,
    ends: tuple[str, str],
    kind: str = "idle",
    open_end: int | None = None,
) -> dict[str, Any]:
    """Where a span of ``kind`` runs on ``axis`` (its ``ends`` fields; still open: to
    ``open_end``, else the axis' end) and when, as words: both charts' strips."""
    end = s.end if s.end is not None else open_end
    return {
        ends[0]: axis.clip(s.start)[0],
        ends[1]: axis.hi if end is None else axis.clip(end)[0],
        f"{kind} from": axis.fmt(s.start),
        f"{kind} until": "end of trace" if s.end is None else axis.fmt(s.end),
    }


def edge_columns(
    spans: Sequence[IdleSpan | PausedSpan], x: TimeAxis, kind: str = "idle"
) -> list[dict[str, Any]]:
    """The timeline's places of the strips across the event-time axis ``x``: a column per
    input, idle spans' from the left edge, paused spans' from the right."""
    column = {name: i for i, name in enumerate(dict.fromkeys(s.input for s in spans))}
    width = (x.hi - x.lo) * STRIP_SHARE
    places = []
    for s in spans:
        if kind == "idle":
            left = x.lo + column[s.input] * width * 1.25
            places.append({"x": round(left, 3), "x2": round(left + width, 3)})
        else:
            right = x.hi - column[s.input] * width * 1.25
            places.append({"x": round(right - width, 3), "x2": round(right, 3)})
    return places


def strip_layer(
    spans: Sequence[IdleSpan | PausedSpan],
    x: TimeAxis,
    y: TimeAxis,
    transform: list[dict[str, Any]] | None = None,
    y2: str = "y2",
    kind: str = "idle",
    *,
    time_on_x: bool = False,
    places: list[dict[str, Any]] | None = None,
    across: dict[str, Any] | None = None,
    style: dict[str, Any] | None = None,
    open_end: int | None = None,
) -> Any:
    """Spans of ``kind`` as one rect layer of strips (None without any), every chart's: each
    runs along the processing-time axis (``y``; ``time_on_x``: ``x``) from its start to its
    end (still open: to ``open_end``, else the axis' edge), at its place across it
    (``places``: each span's fields, a ``line`` naming its colour; ``across``: their
    channels; default: the timeline's ``edge_columns``); its other fields the tooltip, a
    paused span's watermarks as times on the event-time axis. ``style``: the mark's colour
    and opacity (default ``_STRIPS``'); ``transform`` / ``y2`` (the end's field): the
    scrubber shows only what happened by its ``t``."""
    if not spans:
        return None
    time, event, ends = (x, y, ("x", "x2")) if time_on_x else (y, x, ("y", y2))
    if places is None:
        places, across = edge_columns(spans, x, kind), {"x": x.channel("x"), "x2": {"field": "x2"}}
    rows = []
    for s, place in zip(spans, places, strict=True):
        row = {**place, "kind": kind, kind: s.input}
        row |= span_row(s, time, (ends[0], ends[0] + "2"), kind, open_end)
        if isinstance(s, PausedSpan):
            row |= {
                "its watermark": event.fmt(s.watermark),
                "max allowed": event.fmt(s.max_allowed),
            }
            row["group"] = s.group
        rows.append(row)
    color, opacity, _, _ = _STRIPS[kind]
    return spec.layer(
        rows,
        {"type": "rect", **(style or {"color": color, "opacity": opacity})},
        {
            ends[0]: time.channel(ends[0]),
            ends[0] + "2": {"field": ends[1]},
            **(across or {}),
            "tooltip": spec.tooltips(rows, ["x", "x2", "y", "y2", "line"]),
        },
        transform,
    )
