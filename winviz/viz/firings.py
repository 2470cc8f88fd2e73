"""A window operator's firings and cleanups as tables, read off its ``fired`` and ``cleanup``
records (Flink's ``WindowOperator``: ``onEventTime`` / ``onProcessingTime`` fire a window and
clear it at its cleanup time). A firing's ``cause`` names the trigger call or timer that made
the window fire ("event-time timer at 4999"); ``fired_by`` is its category
(``winviz.trace.causes.fired_by``).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pandas as pd

from winviz.trace import vocabulary
from winviz.trace.causes import fired_by as cause_category
from winviz.trace.causes import firing_causes as trace_firing_causes
from winviz.trace.causes import timer_domains
from winviz.trace.coded import object_array
from winviz.trace.restores import firing_orders, undone
from winviz.viz.trace_view import LONG_MIN, Columns, TraceView, memoized
from winviz.viz.value_texts import key_texts


def window_records(view: TraceView, operator: str, *kinds: str) -> pd.DataFrame:
    """Records of these kinds at ``operator`` with window bounds: seq, kind, key, proc_time,
    watermark, ts, window_start, window_end (None for the global window)."""
    return pd.DataFrame(_window_record_columns(view, operator, *kinds))


def _window_record_columns(view: TraceView, operator: str, *kinds: str) -> dict[str, Any]:
    rows = view.select(*kinds, operator=operator)
    columns: dict[str, Any] = {"seq": rows, "kind": view.kinds_of(rows)}
    for name in ("key", "proc_time", "watermark", "ts"):
        columns[name] = view.column(name, rows)
    start, end, present = view.bounds(rows)
    if present.all():
        columns["window_start"], columns["window_end"] = start, end
    else:
        for name, values in (("window_start", start), ("window_end", end)):
            columns[name] = [int(v) if p else None for v, p in zip(values, present, strict=True)]
    return columns


def firings(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``fired`` records: ``window_records`` columns plus result, pane, count, cause, timer
    (its timestamp, None without one), firing and late_firing (``vocabulary``'s words),
    fired_by and at (the event-time timer's timestamp, else the window's end)."""
    return _table(view, "fired", operator, "frame")


def firing_columns(view: TraceView, operator: str) -> Columns:
    """``firings`` of time windows as ``Columns`` (object arrays; seq, window_start,
    window_end int64; timer ints and None)."""
    return _table(view, "fired", operator, "columns")


def cleanups(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``cleanup`` records: ``window_records`` columns plus cleanup_time."""
    return _table(view, "cleanup", operator, "frame")


def cleanup_columns(view: TraceView, operator: str) -> Columns:
    """``cleanups`` of time windows as ``Columns``, as ``firing_columns``."""
    return _table(view, "cleanup", operator, "columns")


def _table(view: TraceView, kind: str, operator: str, form: str) -> Any:
    """The firings' or cleanups' table (``kind``) as a DataFrame or as ``Columns`` of time
    windows (``form``), each derived once per view (``memoized``) from one set of columns."""
    build = _firing_records if kind == "fired" else _cleanup_records
    raw = memoized(view, f"{kind} records", operator, lambda: build(view, operator))
    make = pd.DataFrame if form == "frame" else _of_time_windows
    return memoized(view, f"{kind} {form}", operator, lambda: make(raw))


def _of_time_windows(raw: dict[str, Any]) -> Columns:
    """The rows of these columns that have a time window, as ``Columns``: object arrays of
    the values, window_start and window_end int64."""
    keep = np.array([end is not None for end in raw["window_end"]], dtype=bool)
    columns = {
        name: (values if isinstance(values, np.ndarray) else object_array(list(values)))[keep]
        for name, values in raw.items()
    }
    for name in ("window_start", "window_end"):
        columns[name] = np.array(columns[name].tolist(), dtype=np.int64)
    return Columns(columns)


def _cleanup_records(view: TraceView, operator: str) -> dict[str, Any]:
    columns = _window_record_columns(view, operator, "cleanup")
    columns["cleanup_time"] = view.detail("cleanup", "cleanup_time", columns["seq"])
    return columns


def _firing_records(view: TraceView, operator: str) -> dict[str, Any]:
    frame = _window_record_columns(view, operator, "fired")
    rows = frame["seq"]
    for name in ("result", "pane", "count"):  # (raw values: short() them to show)
        frame[name] = view.detail("fired", name, rows)
    frame["cause"], frame["timer"], domains = firing_causes(view, rows)
    # each firing in vocabulary's words: first firing / re-firing (the window of that key
    # fired before, and no restore rolled that back: ``restores.firing_orders``) and late
    # firing (the operator's watermark before its cause had reached the window's max timestamp)
    ends = list(frame["window_end"])
    keys = key_texts(object_array(list(frame["key"])))
    idents = list(zip(keys, frame["window_start"], ends, strict=True))
    frame["firing"] = firing_orders(view.trace, rows, idents)
    event = np.array([d == "event" for d in domains], dtype=bool)
    before = _watermark_before(view, operator, np.asarray(rows), event).tolist()
    frame["late_firing"] = [
        end is not None and vocabulary.is_late_firing(int(b), int(end) - 1)
        for b, end in zip(before, ends, strict=True)
    ]
    frame["fired_by"] = fired_by(view, rows)
    timer_rows = _causes_of(view, rows)["timers"]
    _, end, present = view.bounds(rows)
    frame["at"] = object_array(firing_at(view, timer_rows, event, end, present).tolist())
    return frame


def _watermark_before(
    view: TraceView, operator: str, rows: np.ndarray, event: np.ndarray
) -> np.ndarray:
    """The operator's watermark before each firing's cause: before the advance that fired an
    event-time timer (``event``), else the one the ``fired`` record carries."""
    marks = view.select("watermark", operator=operator)
    mark_ts, present = view.ints("ts", marks)
    mark_ts = np.where(present, mark_ts, LONG_MIN)
    own, has = view.ints("watermark", rows)
    own = np.where(has, own, LONG_MIN)
    k = np.searchsorted(marks, rows) - 2  # the watermark before the last advance
    prev = np.where(k >= 0, mark_ts[np.maximum(k, 0)], LONG_MIN) if len(marks) else own
    return np.where(event, prev, own)


def _timed_firings(view: TraceView, operator: str) -> tuple[Any, ...]:
    """``operator``'s ``fired`` records of a time window: rows, window starts and ends, and
    their causes (``_causes_of``)."""
    rows = view.select("fired", operator=operator)
    start, end, present = view.bounds(rows)
    rows = rows[present]
    return rows, start[present], end[present], _causes_of(view, rows)


def late_firing_count(view: TraceView, operator: str) -> int:
    """How many of ``operator``'s firings of a time window the run keeps are late firings
    (``firings``' rule, as array operations), leaving out those whose cause is not traced and
    those a restore rolled back (``restores.undone``)."""
    rows, _, end, causes = _timed_firings(view, operator)
    if not len(rows):
        return 0
    traced = causes["fired_by"] != vocabulary.CAUSE_NOT_TRACED
    before = _watermark_before(view, operator, rows, causes["event"])
    # is_late_firing(before, end - 1), as arrays (end - 1 never overflows: end > MIN)
    return int((traced & (before >= end - 1) & ~undone(view.trace, rows)).sum())


def firing_marks(view: TraceView, operator: str) -> Columns:
    """Where ``firings`` puts each firing of a time window, without its texts: seq,
    window_start, window_end, proc_time, at and fired_by with ``firings``' values (times int64
    where every value is an exact int, else objects) — to draw many firings aggregated."""
    rows, start, end, causes = _timed_firings(view, operator)
    present = np.ones(len(rows), dtype=bool)
    return Columns(
        {
            "seq": rows,
            "window_start": start,
            "window_end": end,
            "proc_time": _time_values(view, "proc_time", rows),
            "at": firing_at(view, causes["timers"], causes["event"], end, present),
            "fired_by": causes["fired_by"],
        }
    )


def firing_at(
    view: TraceView, timer_rows: np.ndarray, event: np.ndarray, end: np.ndarray, present: np.ndarray
) -> np.ndarray:
    """The event time a firing mark sits at: the timestamp of the event-time timer that fired
    it (``event``; ``timer_rows``: its ``timer_fired`` record), else its window's end (``end``
    where ``present``, else None) — int64 when every value is an exact int, else objects."""
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
    """A time column at ``rows``: int64 when every record has an exact value, else objects."""
    column = view.part(name, rows).take(rows)
    if column.exact and column.present.all():
        return column.values
    return view.column(name, rows)


def firing_causes(
    view: TraceView, fired_rows: np.ndarray
) -> tuple[list[str], list[int | None], list[str | None]]:
    """What made each of these ``fired`` records happen: (cause text, timer timestamp, timer
    domain) per record — "event-time timer at t" / "processing-time timer at t", "element",
    "session merge", or "" (unknown, never guessed)."""
    causes = _causes_of(view, fired_rows)
    timer_rows = causes["timers"]
    by = causes["fired_by"].tolist()  # (element and session merge say it all)
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


def fired_by(view: TraceView, fired_rows: np.ndarray) -> np.ndarray:
    """The category of each of these ``fired`` records' cause (an object array):
    ``winviz.trace.causes.fired_by`` of their causes."""
    return _causes_of(view, fired_rows)["fired_by"]


def _causes_of(view: TraceView, fired_rows: np.ndarray) -> dict[str, np.ndarray]:
    """``_causes`` of these ``fired`` records, picked from those of every one (derived once
    per view) where they are all ``fired`` records."""
    rows, fired = np.asarray(fired_rows, dtype=np.int64), view.select("fired")
    at = np.minimum(np.searchsorted(fired, rows), max(0, len(fired) - 1))
    if len(rows) and not (len(fired) and np.array_equal(fired[at], rows)):
        return _causes(view, rows)  # (not ``fired`` records only)
    every = memoized(view, "every_firing", "", lambda: _causes(view, fired))
    return {name: values[at] for name, values in every.items()}


def _causes(view: TraceView, rows: np.ndarray) -> dict[str, np.ndarray]:
    """The cause of each of these ``fired`` records (``winviz.trace.causes``): trigger call and
    timer position (``calls``, ``timers``), whether of event time (``event``), ``fired_by``."""
    calls, timers = trace_firing_causes(view.c, rows)
    _, named, event = timer_domains(view.c, timers)
    by = cause_category(calls, named, event, view.ints("watermark", rows)[0])
    return {"calls": calls, "timers": timers, "event": event, "fired_by": by}


def cleanup_marks(view: TraceView, operator: str) -> Columns:
    """The ``cleanup`` records of time windows without their texts: seq, window_start,
    window_end, proc_time and cleanup_time as ``cleanups`` has them (times int64 where every
    value is an int in the long range, else objects) — to draw many cleanups aggregated."""
    rows = view.select("cleanup", operator=operator)
    start, end, present = view.bounds(rows)
    rows = rows[present]
    cleanup_time = view.detail("cleanup", "cleanup_time", rows)
    items = cleanup_time.tolist()
    if set(map(type, items)) == {int}:
        with contextlib.suppress(OverflowError):
            cleanup_time = np.array(items, dtype=np.int64)
    return Columns(
        {
            "seq": rows,
            "window_start": start[present],
            "window_end": end[present],
            "proc_time": _time_values(view, "proc_time", rows),
            "cleanup_time": cleanup_time,
        }
    )
