"""A window operator's firings and cleanups as tables (``firings``, ``firing_marks``,
``cleanups``), read off its ``fired`` and ``cleanup`` records (Flink's ``WindowOperator``:
``onEventTime`` / ``onProcessingTime`` fire a window and clear it at its cleanup time).

How a firing's cause is worded (``firings``): ``cause`` names the trigger call or the timer
that made the window fire ("element", "event-time timer at 4999", "processing-time timer at
999"); ``fired_by`` is its category for legends and labels — "element", "event-time timer",
"processing-time timer", "end of input" (an event-time timer fired by the end-of-input
watermark MAX: the source finished, not a late element), "session merge" or "cause not
traced".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from winviz.trace import vocabulary
from winviz.trace.causes import fired_by as cause_category
from winviz.trace.causes import firing_causes as trace_firing_causes
from winviz.trace.causes import timer_domains
from winviz.trace.coded import object_array
from winviz.viz.trace_view import LONG_MIN, Columns, TraceView, memoized
from winviz.viz.value_texts import key_texts


def window_records(
    view: TraceView,
    operator: str,
    *kinds: str,
    fields: tuple[str, ...] = ("key", "proc_time", "watermark", "ts"),
) -> pd.DataFrame:
    """Records of these kinds at ``operator`` with window bounds: seq, kind, the ``fields``
    asked for (key, proc_time, watermark, ts), window_start, window_end (None for the global
    window)."""
    return pd.DataFrame(_window_record_columns(view, operator, kinds, fields))


def _window_record_columns(
    view: TraceView, operator: str, kinds: tuple[str, ...], fields: tuple[str, ...]
) -> dict[str, Any]:
    """The columns of ``window_records``, before they become a DataFrame."""
    rows = view.select(*kinds, operator=operator)
    columns: dict[str, Any] = {"seq": rows, "kind": view.kinds_of(rows)}
    for name in fields:
        columns[name] = view.column(name, rows)
    start, end, present = view.bounds(rows)
    if present.all():
        columns["window_start"], columns["window_end"] = start, end
    else:
        for name, values in (("window_start", start), ("window_end", end)):
            columns[name] = [int(v) if p else None for v, p in zip(values, present, strict=True)]
    return columns


def firings(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``fired`` records: window_records columns plus result (the value), pane, count,
    and what caused the firing (see ``firing_causes``): cause, timer (the firing timer's
    timestamp, None when no timer fired it), firing ("first firing" / "re-firing") and
    late_firing (``firing_words``: ``winviz.trace.vocabulary``'s words; Flink has no pane
    timing, so the trace's ``timing`` field is not read), fired_by (the cause's category,
    ``fired_by``) and at (the event time a firing mark sits at: the event-time timer's
    timestamp, else the window's end)."""
    return memoized(
        view, "firings", operator, lambda: pd.DataFrame(_firing_records(view, operator))
    )


def _firing_records(view: TraceView, operator: str) -> dict[str, Any]:
    """The columns of ``firings`` before they become a DataFrame (made once per view)."""
    return memoized(view, "firing_record_columns", operator, lambda: _firings(view, operator))


def firing_columns(view: TraceView, operator: str) -> Columns:
    """``firings`` of time windows as ``Columns``: the same values as ``firings(...)[c]
    .tolist()`` gives for those records, as object arrays (seq, window_start, window_end:
    int64), except ``timer``: ints and None (the frame's column is float64 where a firing has
    no timer). The firings of the global window (no start or end) are left out."""
    return memoized(
        view,
        "firing_columns",
        operator,
        lambda: _of_time_windows(_firing_records(view, operator)),
    )


def _of_time_windows(raw: dict[str, Any]) -> Columns:
    """The rows of a table's columns (``_window_record_columns`` and more) that have a time
    window, as ``Columns``: object arrays of the values, window_start and window_end int64."""
    columns = {
        name: values if isinstance(values, np.ndarray) else object_array(list(values))
        for name, values in raw.items()
    }
    if isinstance(raw["window_end"], np.ndarray):  # (every record has a time window)
        return Columns(columns)
    keep = np.array([end is not None for end in raw["window_end"]], dtype=bool)
    for name in ("window_start", "window_end"):
        columns[name] = np.array(columns[name][keep].tolist(), dtype=np.int64)
    return Columns(
        {
            name: v if name in ("window_start", "window_end") else v[keep]
            for name, v in columns.items()
        }
    )


def _firings(view: TraceView, operator: str) -> dict[str, Any]:
    # the columns first, one DataFrame at the end (adding columns one by one costs more)
    frame = _window_record_columns(
        view, operator, ("fired",), ("key", "proc_time", "watermark", "ts")
    )
    rows = frame["seq"]
    frame["result"] = view.detail("fired", "result", rows)  # raw values: short() them to show
    frame["pane"] = view.detail("fired", "pane", rows)
    frame["count"] = view.detail("fired", "count", rows)
    cause, timer, domain = firing_causes(view, rows)
    frame["cause"] = cause
    frame["timer"] = timer
    frame["firing"], frame["late_firing"] = firing_words(view, operator, frame, domain)
    frame["fired_by"] = fired_by(view, rows)
    _, timer_rows = fired_causes(view, rows)
    event = np.array([d == "event" for d in domain], dtype=bool)
    _, end, present = view.bounds(rows)
    frame["at"] = object_array(firing_at(view, timer_rows, event, end, present).tolist())
    return frame


def firing_words(
    view: TraceView, operator: str, frame: dict[str, Any], domains: list[str | None]
) -> tuple[list[str], list[bool]]:
    """Each firing in ``vocabulary``'s words: "first firing" or "re-firing" (the window of
    that key fired before at the operator) and whether it is a late firing (the operator's
    watermark before its cause — before the advance that fired an event-time timer — had
    reached the window's max timestamp)."""
    rows = frame["seq"]
    keys = key_texts(object_array(list(frame["key"])))
    seen: dict[tuple[Any, Any, Any], int] = {}
    order = []
    for ident in zip(keys, list(frame["window_start"]), list(frame["window_end"]), strict=True):
        order.append(vocabulary.firing_order(seen.get(ident, 0)))
        seen[ident] = seen.get(ident, 0) + 1
    event = np.array([d == "event" for d in domains], dtype=bool)
    before = _watermark_before(view, operator, np.asarray(rows), event)
    late = [
        end is not None and vocabulary.is_late_firing(int(b), int(end) - 1)
        for b, end in zip(before.tolist(), list(frame["window_end"]), strict=True)
    ]
    return order, late


def _watermark_before(
    view: TraceView, operator: str, rows: np.ndarray, event: np.ndarray
) -> np.ndarray:
    """The operator's watermark before each firing's cause (``rows``: its ``fired``
    records): before the advance that fired it for an event-time timer (``event``), else the
    watermark the record carries (``vocabulary.is_late_firing`` compares it)."""
    marks = view.select("watermark", operator=operator)
    mark_ts, present = view.ints("ts", marks)
    mark_ts = np.where(present, mark_ts, LONG_MIN)
    own, has = view.ints("watermark", rows)
    own = np.where(has, own, LONG_MIN)
    k = np.searchsorted(marks, rows) - 2  # the watermark before the last advance
    prev = np.where(k >= 0, mark_ts[np.maximum(k, 0)], LONG_MIN) if len(marks) else own
    return np.where(event, prev, own)


def late_firing_count(view: TraceView, operator: str) -> int:
    """How many of ``operator``'s firings of a time window are late firings (the rule of
    ``firing_words``, counted with array operations: no texts), leaving out firings whose
    cause is not traced (no trigger call or timer: nothing to be late before)."""
    rows = view.select("fired", operator=operator)
    _, end, present = view.bounds(rows)
    rows, end = rows[present], end[present]
    if not len(rows):
        return 0
    every = _every_firing(view)
    at = _positions(view, rows)
    event = every["event"][at]
    traced = every["fired_by"][at] != vocabulary.CAUSE_NOT_TRACED
    before = _watermark_before(view, operator, rows, event)
    # is_late_firing(before, end - 1), as arrays (end - 1 never overflows: end > MIN)
    return int((traced & (before >= end - 1)).sum())


def firing_marks(view: TraceView, operator: str) -> Columns:
    """Where ``firings`` puts each firing of a time window, without its texts (key, result,
    cause wording): seq, window_start, window_end, proc_time, at and fired_by with the values
    ``firings`` has (times as int64 columns where every value is an exact int, else objects;
    fired_by objects) — what a chart needs to draw many firings aggregated, as ``Columns``
    (no DataFrame)."""
    rows = view.select("fired", operator=operator)
    start, end, present = view.bounds(rows)
    rows, start, end = rows[present], start[present], end[present]
    every = _every_firing(view)
    at = _positions(view, rows)
    return Columns(
        {
            "seq": rows,
            "window_start": start,
            "window_end": end,
            "proc_time": _time_values(view, "proc_time", rows),
            "at": firing_at(view, every["timers"][at], every["event"][at], end, present[present]),
            "fired_by": every["fired_by"][at],
        }
    )


def firing_at(
    view: TraceView, timer_rows: np.ndarray, event: np.ndarray, end: np.ndarray, present: np.ndarray
) -> np.ndarray:
    """The event time a firing mark sits at: the timestamp of the event-time timer that fired
    it (``event``; ``timer_rows``: the ``timer_fired`` records, ``fired_causes``), else its
    window's end (``end`` where ``present``, else None: no time window) — int64 when every
    value is an exact int, else objects (ints, None)."""
    event_rows = timer_rows[event]
    timer_ts = view.part("ts", event_rows).take(event_rows)
    if timer_ts.exact and timer_ts.present.all() and present.all():
        at = end.copy()
        at[event] = timer_ts.values
        return at
    has_timer = timer_rows >= 0
    stamps = np.full(len(timer_rows), None, dtype=object)
    stamps[has_timer] = view.column("ts", timer_rows[has_timer])
    ends = [e if p else None for e, p in zip(end.tolist(), present.tolist(), strict=True)]
    return object_array(
        [t if ev else e for t, ev, e in zip(stamps.tolist(), event.tolist(), ends, strict=True)]
    )


def _time_values(view: TraceView, name: str, rows: np.ndarray) -> np.ndarray:
    """``_times`` as an array: int64 when every record has an exact value, else the values
    as objects (ints, None where absent)."""
    column = view.part(name, rows).take(rows)
    if column.exact and column.present.all():
        return column.values
    return view.column(name, rows)


def firing_causes(
    view: TraceView, fired_rows: np.ndarray
) -> tuple[list[str], list[int | None], list[str | None]]:
    """What made each of these ``fired`` records happen (``winviz.trace.causes``):
    (cause text, timer timestamp, timer domain) per record — "event-time timer at t" /
    "processing-time timer at t", "element", "session merge", or "" (unknown, never
    guessed)."""
    _, timer_rows = fired_causes(view, fired_rows)
    by = fired_by(view, fired_rows).tolist()  # (element and session merge say it all)
    texts = [b if b in (vocabulary.ELEMENT, vocabulary.SESSION_MERGE) else "" for b in by]
    timers: list[int | None] = [None] * len(fired_rows)
    domains: list[str | None] = [None] * len(fired_rows)
    which = np.flatnonzero(timer_rows >= 0)
    if len(which):
        rows = timer_rows[which]
        stamps = view.column("ts", rows).tolist()
        details = view.part("detail", rows)[rows].tolist()
        for i, ts, detail in zip(which.tolist(), stamps, details, strict=True):
            domain = detail[0]
            word = "event-time" if domain == "event" else "processing-time"
            texts[i], timers[i], domains[i] = f"{word} timer at {ts}", ts, domain
    return texts, timers, domains


def fired_causes(view: TraceView, fired_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``winviz.trace.causes.firing_causes`` of these ``fired`` records (trigger calls, timer
    positions), found once per view for every ``fired`` record of the trace — each record's
    cause is its own, whichever others are asked with it — and picked for these."""
    rows = np.asarray(fired_rows, dtype=np.int64)
    if not _all_fired(view, rows):
        return trace_firing_causes(view.c, rows)  # (not ``fired`` records only)
    every = _every_firing(view)
    at = _positions(view, rows)
    return every["calls"][at], every["timers"][at]


def fired_by(view: TraceView, fired_rows: np.ndarray) -> np.ndarray:
    """The category of each of these ``fired`` records' cause (one of ``palette.FIRED_BY``;
    an object array): ``winviz.trace.causes.fired_by`` (the one rule) of their causes."""
    rows = np.asarray(fired_rows, dtype=np.int64)
    if not _all_fired(view, rows):
        calls, timer_rows = trace_firing_causes(view.c, rows)
        _, named, event = timer_domains(view.c, timer_rows)
        return cause_category(calls, named, event, view.ints("watermark", rows)[0])
    return _every_firing(view)["fired_by"][_positions(view, rows)]


def _every_firing(view: TraceView) -> dict[str, np.ndarray]:
    """The cause of every ``fired`` record of the trace (``view.select("fired")``), derived
    once per view: its trigger call and timer position (``calls``, ``timers``: ``winviz.trace
    .causes.firing_causes``), whether that timer is of a named domain and of event time
    (``named``, ``event``: ``timer_domains``) and the cause's category (``fired_by``)."""

    def build() -> dict[str, np.ndarray]:
        every = view.select("fired")
        calls, timers = trace_firing_causes(view.c, every)
        _, named, event = timer_domains(view.c, timers)
        by = cause_category(calls, named, event, view.ints("watermark", every)[0])
        return {"calls": calls, "timers": timers, "named": named, "event": event, "fired_by": by}

    return memoized(view, "every_firing", "", build)


def _positions(view: TraceView, fired_rows: np.ndarray) -> np.ndarray:
    """Where each of these ``fired`` records is among every ``fired`` record of the trace."""
    every = view.select("fired")
    return np.minimum(np.searchsorted(every, fired_rows), max(0, len(every) - 1))


def _all_fired(view: TraceView, rows: np.ndarray) -> bool:
    """Whether every one of these positions is a ``fired`` record's."""
    every = view.select("fired")
    return not len(rows) or bool(len(every) and np.array_equal(every[_positions(view, rows)], rows))


def cleanups(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``cleanup`` records: window_records columns plus cleanup_time (shared, see
    ``memoized``)."""
    return memoized(view, "cleanups", operator, lambda: _cleanups(view, operator))


def cleanup_marks(view: TraceView, operator: str) -> Columns:
    """The ``cleanup`` records of time windows without their key, watermark and ts: seq,
    window_start, window_end, proc_time and cleanup_time as ``cleanups`` has them (times
    int64 where every value is an int in the long range, else objects) — what a chart needs
    to draw many cleanups aggregated, as ``Columns``."""
    rows = view.select("cleanup", operator=operator)
    start, end, present = view.bounds(rows)
    rows = rows[present]
    return Columns(
        {
            "seq": rows,
            "window_start": start[present],
            "window_end": end[present],
            "proc_time": _time_values(view, "proc_time", rows),
            "cleanup_time": _int64_if_ints(view.detail("cleanup", "cleanup_time", rows)),
        }
    )


def _int64_if_ints(values: np.ndarray) -> np.ndarray:
    """An object array of values as int64 when every one is an ``int`` (not a bool) in the
    long range, else as it is."""
    items = values.tolist()
    if set(map(type, items)) != {int}:
        return values
    try:
        return np.array(items, dtype=np.int64)
    except OverflowError:
        return values


def cleanup_columns(view: TraceView, operator: str) -> Columns:
    """``cleanups`` of time windows as ``Columns`` (as ``firing_columns``: object arrays of
    the values the frame's columns give, seq, window_start, window_end int64)."""
    return memoized(
        view,
        "cleanup_columns",
        operator,
        lambda: _of_time_windows(_cleanup_record_columns(view, operator)),
    )


def _cleanup_record_columns(view: TraceView, operator: str) -> dict[str, Any]:
    """The columns of ``cleanups`` before they become a DataFrame (made once per view)."""
    return memoized(
        view, "cleanup_record_columns", operator, lambda: _cleanup_records(view, operator)
    )


def _cleanup_records(view: TraceView, operator: str) -> dict[str, Any]:
    columns = _window_record_columns(
        view, operator, ("cleanup",), ("key", "proc_time", "watermark", "ts")
    )
    columns["cleanup_time"] = view.detail("cleanup", "cleanup_time", columns["seq"])
    return columns


def _cleanups(view: TraceView, operator: str) -> pd.DataFrame:
    return pd.DataFrame(_cleanup_record_columns(view, operator))
