"""The trace writer (``TraceWriter``): the one way the engine writes trace records, one method
per kind generated from the schema (``KIND_BASE_FIELDS``, ``DETAIL_FIELDS``): ``proc_time``,
``watermark``, ``operator``, the kind's base fields, then its detail fields. Bulk methods
write the window kernel's record groups at once; ``open_window_elements`` stores packed
entries (``ElementEntry``), an encoding the writer chooses. Flink's nearest concept is an
operator's ``Output``. Repeated timer and trigger details are shared objects (readers tell
values apart by value, never by object).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from winviz.trace.element_entry import ElementEntry, ElementRun, shared_timer_details
from winviz.trace.schema import DETAIL_FIELDS, KIND_BASE_FIELDS

if TYPE_CHECKING:
    from winviz.trace.store import Trace

Time = int | None

# trigger details, shared: call -> result -> (call, result)
_TRIGGER_DETAILS: dict[str, dict[str, tuple[str, str]]] = {}
_ON_EVENT_TIME = {True: ("on_event_time", "FIRE"), False: ("on_event_time", "CONTINUE")}
# the kinds whose methods are written out below (their details are shared objects)
_SHARED_DETAILS = ("timer_registered", "timer_deleted", "timer_fired", "trigger")


class TraceWriter:
    """Writes records into one ``Trace`` (``trace.writer``), in ``BASE_FIELDS`` order."""

    __slots__ = ("_entries", "_extend", "_timers", "_trace")

    def __init__(self, trace: Trace) -> None:
        self._trace = weakref.proxy(trace)  # (the trace holds its writer: no cycle)
        self._extend = trace._buffer.extend  # (``Trace._take`` renews it)
        # event-time namespace -> its ``shared_timer_details``, kept until ``forget``
        self._timers: dict[Any, tuple[tuple[Any, ...], ...]] = {}
        # (operator, source, whether a cleanup timer) -> the marker of such packed entries
        self._entries: dict[tuple[str, str, bool], ElementEntry] = {}

    def emit(
        self,
        kind: str,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        detail: Any = None,
    ) -> None:
        """One record of any kind given field by field (hand-made traces)."""
        self._extend((kind, proc_time, watermark, operator, key, window, ts, detail))

    def _share(self, domain: str, namespace: Any) -> tuple[tuple[Any, ...], ...]:
        """The namespace's ``shared_timer_details``, kept for an event-time namespace (the
        callers look them up in ``_timers`` inline: a hot path)."""
        made = shared_timer_details(namespace, domain)
        if domain == "event":
            self._timers[namespace] = made
        return made

    def forget(self, namespaces: Sequence[Any]) -> None:
        """Stop sharing these namespaces' timer details (their windows are cleaned up)."""
        for namespace in namespaces:
            self._timers.pop(namespace, None)

    def timer_registered(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        domain: str,
        namespace: Any,
        deduplicated: bool,
    ) -> None:
        shared = self._timers.get(namespace) if domain == "event" else None
        if shared is None or shared[2][1].__class__ is not namespace.__class__:
            shared = self._share(domain, namespace)
        detail = shared[deduplicated]
        self._extend(("timer_registered", proc_time, watermark, operator, key, window, ts, detail))

    def timer_deleted(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        domain: str,
        namespace: Any,
        existed: bool,
    ) -> None:
        shared = self._timers.get(namespace) if domain == "event" else None
        if shared is None or shared[2][1].__class__ is not namespace.__class__:
            shared = self._share(domain, namespace)
        detail = shared[existed]
        self._extend(("timer_deleted", proc_time, watermark, operator, key, window, ts, detail))

    def timer_fired(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        domain: str,
        namespace: Any,
    ) -> None:
        shared = self._timers.get(namespace) if domain == "event" else None
        if shared is None or shared[2][1].__class__ is not namespace.__class__:
            shared = self._share(domain, namespace)
        detail = shared[2]
        self._extend(("timer_fired", proc_time, watermark, operator, key, window, ts, detail))

    def trigger(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        call: str,
        result: str,
    ) -> None:
        try:
            detail = _TRIGGER_DETAILS[call][result]
        except KeyError:
            detail = _TRIGGER_DETAILS.setdefault(call, {}).setdefault(result, (call, result))
        self._extend(("trigger", proc_time, watermark, operator, key, window, None, detail))

    def event_timer_fired(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: int,
        fire: bool,
    ) -> None:
        """``timer_fired`` (event time, namespace ``window``) and the ``trigger`` record of
        ``EventTimeTrigger.onEventTime``: FIRE (``fire``) or CONTINUE, in one write."""
        shared = self._timers.get(window)
        if shared is None or shared[2][1].__class__ is not window.__class__:
            shared = self._share("event", window)
        self._extend(
            (
                "timer_fired", proc_time, watermark, operator, key, window, ts, shared[2],
                "trigger", proc_time, watermark, operator, key, window, None, _ON_EVENT_TIME[fire],
            )
        )  # fmt: skip

    def event_timer_emitted(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: int,
        emitted_time: Time,
        emitted_watermark: Time,
        value: Any,
        sink: str | None = None,
        sink_watermark: Time = None,
    ) -> None:
        """``event_timer_fired`` with FIRE, the ``emitted`` record of the firing's one result
        and, unless ``sink`` is None, the ``sink`` record of the sink it goes into."""
        shared = self._timers.get(window)
        if shared is None or shared[2][1].__class__ is not window.__class__:
            shared = self._share("event", window)
        self._extend(
            (
                "timer_fired", proc_time, watermark, operator, key, window, ts, shared[2],
                "trigger", proc_time, watermark, operator, key, window, None,
                _ON_EVENT_TIME[True],
                "emitted", emitted_time, emitted_watermark, operator, key, None, ts, value,
            )
        )  # fmt: skip
        if sink is not None:
            detail = (sink, value)
            self._extend(("sink", emitted_time, sink_watermark, sink, None, None, ts, detail))

    def fired_and_cleared(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        max_ts: int,
        result: Any,
        pane: int,
        timing: str,
        count: int | None,
        existed: bool,
        cleanup_time: int,
    ) -> None:
        """``fired`` (at ``max_ts``), then ``event_window_cleared``'s two records (the firing
        timer is also the cleanup timer)."""
        shared = self._timers.get(window)
        if shared is None or shared[2][1].__class__ is not window.__class__:
            shared = self._share("event", window)
        self._extend(
            (
                "fired", proc_time, watermark, operator, key, window, max_ts,
                (result, pane, timing, count),
                "timer_deleted", proc_time, watermark, operator, key, window, max_ts,
                shared[existed],
                "cleanup", proc_time, watermark, operator, key, window, max_ts, cleanup_time,
            )
        )  # fmt: skip

    def event_window_cleared(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        max_ts: int,
        existed: bool,
        cleanup_time: int,
    ) -> None:
        """A window's cleanup (``WindowOperator.clearAllState``): ``EventTimeTrigger.clear``'s
        ``timer_deleted`` (at ``max_ts``), then ``cleanup``."""
        shared = self._timers.get(window)
        if shared is None or shared[2][1].__class__ is not window.__class__:
            shared = self._share("event", window)
        self._extend(
            (
                "timer_deleted", proc_time, watermark, operator, key, window, max_ts,
                shared[existed],
                "cleanup", proc_time, watermark, operator, key, window, max_ts, cleanup_time,
            )
        )  # fmt: skip

    def open_window_elements(
        self,
        source: str,
        operator: str,
        allowed_lateness: int | None,
        run: ElementRun,
        first: int,
        keys: Sequence[Any],
        windows: Sequence[Any],
        deduplicated: Sequence[int],
    ) -> None:
        """The records ``first, first + 1, ...`` of ``run``'s batch going into open windows
        of ``operator`` (an ``EventTimeTrigger``): one packed ``ElementEntry`` per element
        (``allowed_lateness`` None: no cleanup timer of its own)."""
        if not keys:
            return
        at = (operator, source, allowed_lateness is not None)  # (a marker for each)
        marker = self._entries.get(at)
        if marker is None:
            marker = self._entries[at] = ElementEntry(operator, source, allowed_lateness)
        entries = marker.entries(run, first, keys, windows, deduplicated)
        self._trace.append_run(marker, entries, len(keys))


def _method(kind: str, base: tuple[str, ...], details: int) -> Callable[..., None]:
    """The writer's method for a ``kind`` with these base fields and detail count (one: the
    detail itself; several: their tuple): a small function per layout, one call a record."""
    one = details == 1

    def check(values: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(values) != details:
            raise TypeError(f"TraceWriter.{kind}() takes {details} detail values")
        return values

    if base == ("key", "window", "ts"):
        if one:

            def kwt1(
                self: TraceWriter, p: Time, w: Time, o: str, key: Any, window: Any, ts: Time, d: Any
            ) -> None:
                self._extend((kind, p, w, o, key, window, ts, d))

            return kwt1

        def kwt(
            self: TraceWriter, p: Time, w: Time, o: str, key: Any, window: Any, ts: Time, *d: Any
        ) -> None:
            self._extend((kind, p, w, o, key, window, ts, check(d)))

        return kwt
    if base == ("key", "window"):
        if one:

            def kw1(
                self: TraceWriter, p: Time, w: Time, o: str, key: Any, window: Any, d: Any
            ) -> None:
                self._extend((kind, p, w, o, key, window, None, d))

            return kw1

        def kw(self: TraceWriter, p: Time, w: Time, o: str, key: Any, window: Any, *d: Any) -> None:
            self._extend((kind, p, w, o, key, window, None, check(d)))

        return kw
    if base == ("key", "ts"):
        if one:

            def kt1(
                self: TraceWriter, p: Time, w: Time, o: str, key: Any, ts: Time, d: Any
            ) -> None:
                self._extend((kind, p, w, o, key, None, ts, d))

            return kt1

        def kt(self: TraceWriter, p: Time, w: Time, o: str, key: Any, ts: Time, *d: Any) -> None:
            self._extend((kind, p, w, o, key, None, ts, check(d)))

        return kt
    if base == ("ts",):
        if one:

            def t1(self: TraceWriter, p: Time, w: Time, o: str, ts: Time, d: Any) -> None:
                self._extend((kind, p, w, o, None, None, ts, d))

            return t1

        def t(self: TraceWriter, p: Time, w: Time, o: str, ts: Time, *d: Any) -> None:
            self._extend((kind, p, w, o, None, None, ts, check(d)))

        return t
    if one:

        def n1(self: TraceWriter, p: Time, w: Time, o: str, d: Any) -> None:
            self._extend((kind, p, w, o, None, None, None, d))

        return n1

    def n(self: TraceWriter, p: Time, w: Time, o: str, *d: Any) -> None:
        self._extend((kind, p, w, o, None, None, None, check(d)))

    return n


def _kind_method(kind: str) -> Any:
    """The writer's method for ``kind``, its parameters named by the schema's fields."""
    base, details = KIND_BASE_FIELDS[kind], DETAIL_FIELDS[kind]
    method = _method(kind, base, len(details))
    fields = ("self", "proc_time", "watermark", "operator", *base, *details)
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(f, inspect.Parameter.POSITIONAL_OR_KEYWORD) for f in fields]
    )
    method.__name__, method.__qualname__ = kind, f"TraceWriter.{kind}"
    method.__doc__ = f"One ``{kind}`` record: {', '.join((*base, *details))}."
    return method


for _kind in DETAIL_FIELDS:
    if _kind not in _SHARED_DETAILS:
        setattr(TraceWriter, _kind, _kind_method(_kind))
