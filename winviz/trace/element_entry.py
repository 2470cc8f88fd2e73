"""Packed trace entries, the store's compact encoding of a run of similar records (winviz's
own): a marker (``Packed``) whose ``width`` values after it in the write buffer stand for
``count`` records. ``ElementEntry`` (``TraceWriter.open_window_elements``) stands for the
records ``WindowOperator.processElement`` writes for an element into an open window with an
``EventTimeTrigger``, byte for byte the general path's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from winviz.operators import window_rules
from winviz.trace.coded import (
    CodedColumn,
    TimeColumn,
    encode,
    encode_runs,
    ints_column,
    object_array,
    time_column,
)
from winviz.trace.pieces import Deferred, Tuples, spans
from winviz.trace.schema import BASE_FIELDS


class Packed:
    """A marker for packed entries: ``unpack`` defines the ``count`` records of an entry's
    ``width`` values; ``fields`` builds them field by field for many entries (a read's way)."""

    width: int = 0
    count: int = 0

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        """Append the records of the entry whose values start at ``values[at]`` to ``out``."""
        raise NotImplementedError

    def fields(self, slots: Sequence[list[Any]]) -> list[tuple[Any, ...]]:
        """The records of the entries given slot by slot (``slots[f][e]``), per ``BASE_FIELDS``
        field a tuple with one item per record of an entry: one value for all entries, or
        their values (a list, coded column or ``Deferred``). By default: entry by entry."""
        rows: list[Any] = []
        for values in zip(*slots, strict=True):
            self.unpack(list(values), 0, rows)
        width, count = len(BASE_FIELDS), self.count
        return [
            tuple(rows[f + width * r :: width * count] for r in range(count)) for f in range(width)
        ]


# ``open_window_elements``' per-element bits: the window's max_timestamp / cleanup timer existed
MAX_TIMESTAMP_TIMER_EXISTED = 1
CLEANUP_TIMER_EXISTED = 2
BOTH_TIMERS_EXISTED = MAX_TIMESTAMP_TIMER_EXISTED | CLEANUP_TIMER_EXISTED

ON_ELEMENT_CONTINUE = ("on_element", "CONTINUE")  # trigger records' details (shared)


def shared_timer_details(namespace: Any, domain: str = "event") -> tuple[tuple[Any, ...], ...]:
    """A timer namespace's details: ``(domain, namespace, flag)`` with flag False and True
    (deduplicated / existed), then ``(domain, namespace)`` (timer_fired's)."""
    return ((domain, namespace, False), (domain, namespace, True), (domain, namespace))


@dataclass(eq=False, slots=True)
class ElementRun:
    """A source batch's columns, shared by the entries of its records (``first_index``: its
    first record's source offset; ``stamps``: the operator's timestamps, one per record)."""

    wm: int
    source_wm: int
    proc_times: Sequence[int]
    source_stamps: Sequence[int | None]
    first_index: int
    values: Sequence[Any]
    stamps: Sequence[int]


def _located(runs: list[ElementRun], places: list[int]) -> tuple[Any, ...]:
    """The entries' distinct runs, each entry's (a code into them), where each run starts
    and each entry's record is in the distinct runs' columns joined (None: the entries are
    all of them, in order)."""
    distinct = list(dict.fromkeys(runs))
    counts = np.array([len(run.stamps) for run in distinct], dtype=np.int64)
    starts = np.cumsum(counts) - counts
    if counts.sum() == len(runs):  # (each record once: all of each run)
        return distinct, np.repeat(np.arange(len(distinct)), counts), starts, None
    codes = encode_runs(runs, fast=True).codes  # (in the order of ``distinct``)
    return distinct, codes, starts, starts[codes] + np.array(places, dtype=np.int64)


def _ints(columns: list[Sequence[int]]) -> TimeColumn:
    """Runs' columns of ints end to end (``ints_column``), not empty: ranges of one step (a
    source's arrival times at an interval) computed from their bounds."""
    n = len(columns)
    if set(map(type, columns)) == {range}:
        steps = set(map(attrgetter("step"), columns))
        try:  # (each range's first and last value a long: all of them are)
            starts = np.fromiter(map(attrgetter("start"), columns), np.int64, n)
            np.fromiter(map(itemgetter(-1), columns), np.int64, n)
        except OverflowError:
            steps = set()
        if len(steps) == 1:
            values = spans(starts, np.fromiter(map(len, columns), np.int64, n), steps.pop())
            return TimeColumn(values, np.ones(len(values), dtype=bool))
    return ints_column(list(chain.from_iterable(columns)))


class ElementEntry(Packed):
    """A source record going into an open window: ``arrival``, ``element``, ``assigned``,
    ``timer_registered`` (max_timestamp), ``trigger`` (on_element CONTINUE) and, with a
    cleanup timer of its own, ``timer_registered`` (cleanup time). Values: its ``ElementRun``, its
    place in it, key, window, the timers' bits. One marker per operator, source, cleanup."""

    width = 5

    def __init__(self, operator: str, source: str, allowed_lateness: int | None) -> None:
        self.source = source
        self.name = operator
        self.allowed_lateness = allowed_lateness  # None: no cleanup timer of its own
        self.cleanup_timer = allowed_lateness is not None
        self.count = 6 if self.cleanup_timer else 5
        self._details: dict[Any, tuple[tuple[Any, ...], ...]] = {}  # shared per window

    def cleanup_time(self, window: Any) -> int:
        """The window's cleanup time (``window_rules.cleanup_time``)."""
        return window_rules.cleanup_time(window.max_timestamp(), self.allowed_lateness or 0)

    def _timer_details(self, window: Any) -> tuple[tuple[Any, ...], ...]:
        """The window's timer details (``shared_timer_details``), made once per window."""
        details = self._details.get(window)
        if details is None:
            details = self._details[window] = shared_timer_details(window)
        return details

    def entries(
        self,
        run: ElementRun,
        first: int,
        keys: Sequence[Any],
        windows: Sequence[Any],
        deduplicated: Sequence[int],
    ) -> list[Any]:
        """The write buffer's slots of the entries of ``run``'s records ``first, first + 1,
        ...``, given column by column."""
        n = len(keys)
        slots = [self, run, None, None, None, None] * n
        slots[2::6] = range(first, first + n)
        slots[3::6] = keys
        slots[4::6] = windows
        slots[5::6] = deduplicated
        return slots

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        run, i, key, window, existed = values[at : at + 5]
        now, wm, ts, value = run.proc_times[i], run.wm, run.stamps[i], run.values[i]
        source_ts, source_wm, position = run.source_stamps[i], run.source_wm, run.first_index + i
        name, details = self.name, self._timer_details(window)
        out.extend(
            (
                "arrival", now, source_wm, self.source, None, None, source_ts,
                (value, position),
                "element", now, wm, name, key, None, ts, value,
                "assigned", now, wm, name, key, window, ts, value,
                "timer_registered", now, wm, name, key, window, window.max_timestamp(),
                details[existed & MAX_TIMESTAMP_TIMER_EXISTED],
                "trigger", now, wm, name, key, window, None, ON_ELEMENT_CONTINUE,
            )
        )  # fmt: skip
        if self.cleanup_timer:
            out.extend(
                (
                    "timer_registered", now, wm, name, key, window, self.cleanup_time(window),
                    details[existed >> 1],
                )
            )  # fmt: skip

    def fields(self, slots: Sequence[list[Any]]) -> list[tuple[Any, ...]]:
        """``unpack`` for many entries, field by field, each item made when its field is
        decoded (``Deferred``); timer times and details looked up per distinct window."""
        windows = Deferred(lambda: encode_runs(slots[3], fast=True))
        bits = Deferred(lambda: np.fromiter(slots[4], dtype=np.int8))
        runs = Deferred(lambda: _located(slots[0], slots[1]))

        def joined(column: Callable[[ElementRun], Sequence[Any]], make: Callable[..., Any]) -> Any:
            """Each entry's value of a run's ``column``, as ``make`` makes a column."""
            distinct, _, _, at = runs.get()
            columns = list(map(column, distinct))
            made = _ints(columns) if make is _ints else make(list(chain.from_iterable(columns)))
            if at is None:
                return made
            return made[at] if isinstance(made, np.ndarray) else made.take(at)

        def shared(of_run: Callable[[ElementRun], int]) -> TimeColumn:
            """Each entry's run's ``of_run``."""
            distinct, codes, _, _ = runs.get()
            return ints_column([of_run(run) for run in distinct]).take(codes)

        def per_window(of_window: Callable[[Any], Any], dtype: Any) -> Any:
            """``of_window(w)`` for each entry's window, looked up per distinct window."""
            coded = windows.get()
            return np.array([of_window(w) for w in coded.values], dtype=dtype)[coded.codes]

        def times(of_window: Callable[[Any], int]) -> Any:
            try:
                return per_window(of_window, np.int64)
            except OverflowError:  # (not a long: the general path's object columns)
                return [of_window(w) for w in slots[3]]

        def registered(bit: Callable[[np.ndarray], np.ndarray]) -> CodedColumn:
            """timer_registered's detail, coded: each window's two tuples, picked by ``bit``."""
            coded = windows.get()
            table: list[Any] = []
            for w in coded.values:
                table.extend(self._timer_details(w)[:2])
            codes = coded.codes * 2 + bit(bits.get())
            return CodedColumn(codes.astype(np.int32, copy=False), table)

        def arrivals() -> Tuples:
            """arrival's detail: (value, source offset), said field by field."""
            distinct, codes, starts, at = runs.get()
            firsts = np.array([run.first_index for run in distinct], dtype=np.int64) - starts
            joined_at = np.arange(len(codes)) if at is None else at  # (in the runs' columns)
            return Tuples((value.get(), firsts[codes] + joined_at))

        name, source = self.name, self.source
        # (the engine's times: ints, checked where they enter the job)
        now = Deferred(lambda: joined(lambda run: run.proc_times, _ints))
        wm = Deferred(lambda: shared(lambda run: run.wm))
        ts = Deferred(lambda: joined(lambda run: run.stamps, _ints))
        value = Deferred(lambda: joined(lambda run: run.values, object_array))
        # one tuple per field: the values of the entry's records, in order
        fields = [
            ("arrival", "element", "assigned", "timer_registered", "trigger", "timer_registered"),
            (now, now, now, now, now, now),
            (Deferred(lambda: shared(lambda run: run.source_wm)), wm, wm, wm, wm, wm),
            (source, name, name, name, name, name),
            (None, *[Deferred(lambda: encode(slots[2]))] * 5),
            (None, None, windows, windows, windows, windows),
            (
                Deferred(lambda: joined(lambda run: run.source_stamps, time_column)), ts, ts,
                Deferred(lambda: times(lambda w: w.max_timestamp())), None,
                Deferred(lambda: times(self.cleanup_time)),
            ),
            (
                Deferred(arrivals),
                value, value, Deferred(lambda: registered(lambda b: b & 1)),
                ON_ELEMENT_CONTINUE, Deferred(lambda: registered(lambda b: b >> 1)),
            ),
        ]  # fmt: skip
        return [per_record[: self.count] for per_record in fields]
