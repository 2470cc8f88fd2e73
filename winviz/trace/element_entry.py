"""Packed trace entries, the store's compact encoding of a run of similar records (winviz's
own): a marker (``Packed``) whose ``width`` values after it in the write buffer stand for
``count`` records. ``ElementEntry`` (``TraceWriter.open_window_elements``) stands for the
records ``WindowOperator.processElement`` writes for an element into an open window with an
``EventTimeTrigger``, byte for byte the general path's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, repeat
from typing import Any

import numpy as np

from winviz.operators import window_rules
from winviz.trace.coded import CodedColumn, encode, encode_runs, ints_column, object_array
from winviz.trace.pieces import Deferred, Tuples
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


class _Run:
    """What one run's entries share: the watermarks and the kernel's columns."""

    __slots__ = (
        "first_index", "n", "proc_times", "source_stamps", "source_wm", "stamps", "values", "wm",
    )  # fmt: skip

    def __init__(self, wm: int, source_wm: int, n: int, columns: tuple[Any, ...]) -> None:
        self.wm, self.source_wm, self.n = wm, source_wm, n
        self.proc_times, self.source_stamps, self.first_index, self.values, self.stamps = columns

    def positions(self) -> range:
        """The run's source offsets."""
        return range(self.first_index, self.first_index + self.n)


def _whole_runs(runs: list[_Run]) -> list[_Run] | None:
    """The distinct runs of the entries, when the entries are all of each; else None."""
    distinct = list(dict.fromkeys(runs))
    return distinct if sum(run.n for run in distinct) == len(runs) else None


class ElementEntry(Packed):
    """A source record going into an open window: ``arrival``, ``element``, ``assigned``,
    ``timer_registered`` (max_timestamp), ``trigger`` (on_element CONTINUE) and, with a
    cleanup timer of its own, ``timer_registered`` (cleanup time). Values: its ``_Run``, its
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
        watermark: int,
        source_watermark: int,
        proc_times: Sequence[int],
        source_stamps: Sequence[int | None],
        first_index: int,
        values: Sequence[Any],
        stamps: Sequence[int],
        keys: Sequence[Any],
        windows: Sequence[Any],
        deduplicated: Sequence[int],
    ) -> list[Any]:
        """The write buffer's slots of ``len(keys)`` entries given column by column."""
        n = len(keys)
        run = _Run(
            watermark, source_watermark, n, (proc_times, source_stamps, first_index, values, stamps)
        )
        slots = [self, run, None, None, None, None] * n
        slots[2::6] = range(n)
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
        runs = Deferred(lambda: _whole_runs(slots[0]))

        def joined(column: Callable[[_Run], Sequence[Any]]) -> list[Any]:
            """Each entry's value of a run's ``column``."""
            whole = runs.get()
            if whole is not None:
                return list(chain.from_iterable(map(column, whole)))
            return [column(run)[i] for run, i in zip(slots[0], slots[1], strict=True)]

        def shared(of_run: Callable[[_Run], int]) -> list[int]:
            """Each entry's run's ``of_run``."""
            whole = runs.get()
            if whole is not None:
                return list(chain.from_iterable(repeat(of_run(run), run.n) for run in whole))
            return [of_run(run) for run in slots[0]]

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
            return Tuples((value.get(), ints_column(joined(_Run.positions)).values))

        name, source = self.name, self.source
        # (the engine's times: ints, checked where they enter the job)
        now = Deferred(lambda: ints_column(joined(lambda run: run.proc_times)))
        wm = Deferred(lambda: ints_column(shared(lambda run: run.wm)))
        ts = Deferred(lambda: ints_column(joined(lambda run: run.stamps)))
        value = Deferred(lambda: object_array(joined(lambda run: run.values)))
        # one tuple per field: the values of the entry's records, in order
        fields = [
            ("arrival", "element", "assigned", "timer_registered", "trigger", "timer_registered"),
            (now, now, now, now, now, now),
            (Deferred(lambda: ints_column(shared(lambda run: run.source_wm))), wm, wm, wm, wm, wm),
            (source, name, name, name, name, name),
            (None, *[Deferred(lambda: encode(slots[2]))] * 5),
            (None, None, windows, windows, windows, windows),
            (
                Deferred(lambda: joined(lambda run: run.source_stamps)), ts, ts,
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
