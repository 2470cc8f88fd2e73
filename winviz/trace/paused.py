"""Paused spans: when watermark alignment held a source reader or partition back, from a
``paused`` record to the next ``resumed`` of the same operator and input (or the trace's end).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

PAUSE_KINDS = ("paused", "resumed")


@dataclass(frozen=True)
class PausedSpan:
    """``input`` of ``operator`` paused from ``start`` to ``end`` (None: the trace's end), its
    oldest ``watermark`` sample ahead of ``group``'s ``max_allowed``."""

    operator: str
    input: str
    start: int
    end: int | None
    watermark: int
    max_allowed: int
    group: str


def paused_spans(records: Iterable[tuple[Any, ...]]) -> list[PausedSpan]:
    """Spans of ``(kind, proc_time, operator, ts, input, max_allowed, group)`` records."""
    open_: dict[tuple[str, str], tuple[int, int, int, str, int]] = {}
    spans: list[tuple[int, PausedSpan]] = []
    for n, (kind, proc, op, ts, name, max_allowed, group) in enumerate(records):
        key = (str(op), str(name))
        if kind == "paused" and key not in open_:
            open_[key] = (n, int(proc), int(ts), str(group), int(max_allowed))
        elif kind == "resumed" and key in open_:
            first, start, wm, grp, allowed = open_.pop(key)
            spans.append((first, PausedSpan(key[0], key[1], start, int(proc), wm, allowed, grp)))
    for key, (first, start, wm, grp, allowed) in open_.items():
        spans.append((first, PausedSpan(key[0], key[1], start, None, wm, allowed, grp)))
    return [s for _, s in sorted(spans, key=lambda e: e[0])]


def still_paused(trace: Any) -> list[PausedSpan]:
    """The spans of ``trace`` still open when it ends."""
    records = trace.records(*PAUSE_KINDS)
    spans = paused_spans((r.kind, r.proc_time, r.operator, r.ts, *r.detail) for r in records)
    return [s for s in spans if s.end is None]


def paused_note(spans: Iterable[PausedSpan]) -> str:
    """The sentence naming the paused ``spans`` ("" for none)."""
    parts = [
        f"{s.input} is paused for watermark alignment since processing time {s.start} (its "
        f"watermark {s.watermark} is ahead of {s.max_allowed}, the max allowed in group "
        f"{s.group!r}: the slowest source's watermark + max_drift)"
        for s in spans
    ]
    if not parts:
        return ""
    return (
        "; ".join(parts)
        + ": until an announcement lets it resume, none of its records are read (they are "
        "held back), so its watermark cannot rise past what it has read."
    )
