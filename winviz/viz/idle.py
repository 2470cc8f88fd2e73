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
    """Every chart's strips of ``kind`` as one rect layer (None without any): each from its
    span's start to its end (still open: to ``open_end``, else the axis' end) along the
    processing-time axis (``y``; ``time_on_x``: ``x``), at its place across it (``places``
    and their channels ``across``; default: the timeline's, a column per input, idle from the
    left edge, paused from the right); its times and (paused) watermarks as words the
    tooltip. ``style``: colour and opacity (default ``_STRIPS``'); ``transform`` / ``y2``:
    the scrubber's, showing what happened by its ``t``."""
    if not spans:
        return None
    time, event, t = (x, y, "x") if time_on_x else (y, x, "y")
    if places is None:
        column = {name: i for i, name in enumerate(dict.fromkeys(s.input for s in spans))}
        width, sign = (x.hi - x.lo) * STRIP_SHARE, 1 if kind == "idle" else -1
        edges = [
            (x.lo if sign > 0 else x.hi) + sign * column[s.input] * width * 1.25 for s in spans
        ]
        ends = [sorted((a, a + sign * width)) for a in edges]
        places = [{"x": round(a, 3), "x2": round(b, 3)} for a, b in ends]
        across = {"x": x.channel("x"), "x2": {"field": "x2"}}
    rows = []
    for s, place in zip(spans, places, strict=True):
        end = s.end if s.end is not None else open_end
        row = {**place, "kind": kind, kind: s.input, t: time.clip(s.start)[0]}
        row[t + "2"] = time.hi if end is None else time.clip(end)[0]
        row[f"{kind} from"] = time.fmt(s.start)
        row[f"{kind} until"] = "end of trace" if s.end is None else time.fmt(s.end)
        if isinstance(s, PausedSpan):
            row["its watermark"], row["max allowed"] = event.fmt_all([s.watermark, s.max_allowed])
            row["group"] = s.group
        rows.append(row)
    color, opacity, _, _ = _STRIPS[kind]
    return spec.layer(
        rows,
        {"type": "rect", **(style or {"color": color, "opacity": opacity})},
        {
            t: time.channel(t),
            t + "2": {"field": y2 if t == "y" else "x2"},
            **(across or {}),
            "tooltip": spec.tooltips(rows, ["x", "x2", "y", "y2", "line"]),
        },
        transform,
    )
