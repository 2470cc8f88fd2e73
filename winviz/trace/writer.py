"""The trace writer: the one way the engine writes trace records.

A ``TraceWriter`` has one method per record kind of the schema (``winviz.trace.schema``'s
``DETAIL_FIELDS``), named as the kind, whose parameters are the base fields that kind uses —
always ``proc_time``, ``watermark`` and ``operator``, then those of ``key``, ``window`` and
``ts`` it has (the others are None) — and its detail fields by name; so no call site spells
out a record's layout (``tests/test_trace_writer.py`` holds the methods to the schema). For
the window kernel's hot loop, ``open_window_elements`` writes a whole run of elements into
open windows from columns, which the store keeps as packed entries (``ElementEntry``): an
encoding the writer chooses, not one the operators build. ``emit`` writes one record given
field by field, for hand-made traces (tests, lessons).

Flink has no such thing: winviz's trace is its own record of what happened inside a run. The
nearest Flink concepts are an operator's ``Output`` (what it emits) and its metric group
(what it counts); the trace writes down, in addition, every decision in between.

Details that repeat are shared, not made anew (fewer objects for the trace to hold; readers
tell values apart by value, ``winviz.trace.coded.value_codes``, never by object): a
namespace's event-time timer details (kept until ``forget`` drops them) and every trigger
call's detail.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from winviz.trace.element_entry import ElementEntry

if TYPE_CHECKING:
    from winviz.trace.store import Trace

Time = int | None


# trigger details, shared: call -> result -> (call, result)
_TRIGGER_DETAILS: dict[str, dict[str, tuple[str, str]]] = {}
_ON_EVENT_TIME = {True: ("on_event_time", "FIRE"), False: ("on_event_time", "CONTINUE")}


class TraceWriter:
    """Writes records into one ``Trace`` (``trace.writer``): one method per kind (see the
    module docstring), each appending one record in ``BASE_FIELDS`` order."""

    __slots__ = ("_entries", "_extend", "_timers", "_trace")

    def __init__(self, trace: Trace) -> None:
        self._trace = weakref.proxy(trace)  # (the trace holds its writer: no cycle)
        self._extend = trace.extend  # (the store's append: ``Trace._take`` renews it)
        # namespace -> its event-time timer details: (domain, namespace, flag) with flag
        # False and True, then (domain, namespace)
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
        """One record given field by field (``BASE_FIELDS``), of any kind."""
        self._extend((kind, proc_time, watermark, operator, key, window, ts, detail))

    # -- shared details ---------------------------------------------------------------------

    def _share(self, domain: str, namespace: Any) -> tuple[tuple[Any, ...], ...]:
        """The namespace's timer details: (domain, namespace, flag) with flag False and True,
        then (domain, namespace); made once per namespace for event time (timer namespaces
        are hashable: the timer service keys its timers by them)."""
        made = ((domain, namespace, False), (domain, namespace, True), (domain, namespace))
        if domain == "event":
            self._timers[namespace] = made
        return made

    def forget(self, namespaces: Sequence[Any]) -> None:
        """Stop sharing these namespaces' timer details (their windows are cleaned up)."""
        for namespace in namespaces:
            self._timers.pop(namespace, None)

    # -- one method per kind (``DETAIL_FIELDS``' order) -------------------------------------

    def element(
        self, proc_time: Time, watermark: Time, operator: str, key: Any, ts: Time, value: Any
    ) -> None:
        self._extend(("element", proc_time, watermark, operator, key, None, ts, value))

    def arrival(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        ts: Time,
        value: Any,
        index: int,
    ) -> None:
        self._extend(("arrival", proc_time, watermark, operator, key, None, ts, (value, index)))

    def watermark(
        self, proc_time: Time, watermark: Time, operator: str, key: Any, ts: Time, input: str
    ) -> None:
        self._extend(("watermark", proc_time, watermark, operator, key, None, ts, input))

    def watermark_generated(
        self, proc_time: Time, watermark: Time, operator: str, ts: Time, generator: str
    ) -> None:
        self._extend(
            ("watermark_generated", proc_time, watermark, operator, None, None, ts, generator)
        )

    def watermark_dropped(
        self, proc_time: Time, watermark: Time, operator: str, ts: Time, reason: str
    ) -> None:
        self._extend(("watermark_dropped", proc_time, watermark, operator, None, None, ts, reason))

    def idle(self, proc_time: Time, watermark: Time, operator: str, input: str) -> None:
        self._extend(("idle", proc_time, watermark, operator, None, None, None, input))

    def idleness(
        self, proc_time: Time, watermark: Time, operator: str, timeout: int, input: str
    ) -> None:
        self._extend(
            ("idleness", proc_time, watermark, operator, None, None, None, (timeout, input))
        )

    def active(self, proc_time: Time, watermark: Time, operator: str, input: str) -> None:
        self._extend(("active", proc_time, watermark, operator, None, None, None, input))

    def channel_watermark(
        self, proc_time: Time, watermark: Time, operator: str, ts: Time, channel: int, input: str
    ) -> None:
        self._extend(
            ("channel_watermark", proc_time, watermark, operator, None, None, ts, (channel, input))
        )

    def channel_idle(
        self, proc_time: Time, watermark: Time, operator: str, channel: int, input: str
    ) -> None:
        self._extend(
            ("channel_idle", proc_time, watermark, operator, None, None, None, (channel, input))
        )

    def channel_active(
        self, proc_time: Time, watermark: Time, operator: str, channel: int, input: str
    ) -> None:
        self._extend(
            ("channel_active", proc_time, watermark, operator, None, None, None, (channel, input))
        )

    def assigned(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        value: Any,
    ) -> None:
        self._extend(("assigned", proc_time, watermark, operator, key, window, ts, value))

    def skipped_late_window(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        value: Any,
    ) -> None:
        self._extend(
            ("skipped_late_window", proc_time, watermark, operator, key, window, ts, value)
        )

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
        detail = _TRIGGER_DETAILS.setdefault(call, {}).get(result)
        if detail is None:
            detail = _TRIGGER_DETAILS[call][result] = (call, result)
        self._extend(("trigger", proc_time, watermark, operator, key, window, None, detail))

    def fired(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        result: Any,
        pane: int,
        timing: str,
        count: int | None,
    ) -> None:
        self._extend(
            (
                "fired", proc_time, watermark, operator, key, window, ts,
                (result, pane, timing, count),
            )
        )  # fmt: skip

    def purged(
        self, proc_time: Time, watermark: Time, operator: str, key: Any, window: Any, reason: str
    ) -> None:
        self._extend(("purged", proc_time, watermark, operator, key, window, None, reason))

    def merged(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        merged_windows: list[Any],
        state_window: Any,
    ) -> None:
        self._extend(
            (
                "merged", proc_time, watermark, operator, key, window, None,
                (merged_windows, state_window),
            )
        )  # fmt: skip

    def cleanup(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        cleanup_time: int,
    ) -> None:
        self._extend(("cleanup", proc_time, watermark, operator, key, window, ts, cleanup_time))

    def late_dropped(
        self, proc_time: Time, watermark: Time, operator: str, key: Any, ts: Time, value: Any
    ) -> None:
        self._extend(("late_dropped", proc_time, watermark, operator, key, None, ts, value))

    def side_output(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        ts: Time,
        tag: str,
        value: Any,
    ) -> None:
        self._extend(("side_output", proc_time, watermark, operator, key, None, ts, (tag, value)))

    def evicted(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        when: str,
        values: list[Any],
    ) -> None:
        self._extend(("evicted", proc_time, watermark, operator, key, window, None, (when, values)))

    def emitted(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        window: Any,
        ts: Time,
        value: Any,
    ) -> None:
        self._extend(("emitted", proc_time, watermark, operator, key, window, ts, value))

    def buffered(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        ts: Time,
        side: str,
        value: Any,
    ) -> None:
        self._extend(("buffered", proc_time, watermark, operator, key, None, ts, (side, value)))

    def joined(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        ts: Time,
        left_ts: int,
        right_ts: int,
    ) -> None:
        self._extend(("joined", proc_time, watermark, operator, key, None, ts, (left_ts, right_ts)))

    def buffer_removed(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        ts: Time,
        side: str,
        count: int,
    ) -> None:
        self._extend(
            ("buffer_removed", proc_time, watermark, operator, key, None, ts, (side, count))
        )

    def exchange(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        key: Any,
        ts: Time,
        partitioner: str,
        target: str,
        channel: int,
        key_group: int | None,
        value: Any,
    ) -> None:
        self._extend(
            (
                "exchange", proc_time, watermark, operator, key, None, ts,
                (partitioner, target, channel, key_group, value),
            )
        )  # fmt: skip

    def sink(
        self, proc_time: Time, watermark: Time, operator: str, ts: Time, sink: str, value: Any
    ) -> None:
        self._extend(("sink", proc_time, watermark, operator, None, None, ts, (sink, value)))

    def clock(self, proc_time: Time, watermark: Time, operator: str, reason: str) -> None:
        self._extend(("clock", proc_time, watermark, operator, None, None, None, reason))

    def batch(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        batch_id: int,
        input_rows: int,
        late_watermark: int,
        max_event_time: Time,
        dropped: int,
    ) -> None:
        self._extend(
            (
                "batch", proc_time, watermark, operator, None, None, None,
                (batch_id, input_rows, late_watermark, max_event_time, dropped),
            )
        )  # fmt: skip

    def checkpoint(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        checkpoint_id: int,
        source_records: int,
        positions: dict[str, int],
    ) -> None:
        self._extend(
            (
                "checkpoint", proc_time, watermark, operator, None, None, None,
                (checkpoint_id, source_records, positions),
            )
        )  # fmt: skip

    def restore(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        checkpoint_id: int | None,
        source_records: int,
        positions: dict[str, int],
        failed_at: Time,
    ) -> None:
        self._extend(
            (
                "restore", proc_time, watermark, operator, None, None, None,
                (checkpoint_id, source_records, positions, failed_at),
            )
        )  # fmt: skip

    def error(self, proc_time: Time, watermark: Time, operator: str, message: str) -> None:
        self._extend(("error", proc_time, watermark, operator, None, None, None, message))

    def paused(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        ts: Time,
        input: str,
        max_allowed: int,
        group: str,
    ) -> None:
        self._extend(
            ("paused", proc_time, watermark, operator, None, None, ts, (input, max_allowed, group))
        )

    def resumed(
        self,
        proc_time: Time,
        watermark: Time,
        operator: str,
        ts: Time,
        input: str,
        max_allowed: int,
        group: str,
    ) -> None:
        self._extend(
            ("resumed", proc_time, watermark, operator, None, None, ts, (input, max_allowed, group))
        )

    # -- bulk: the window kernel's (``winviz.operators.window_kernel``) -----------------------

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
        """``event_timer_fired`` with FIRE (the window's timer at its max_timestamp ``ts``)
        and the ``emitted`` record of the firing's one result ``value`` (stamped ``ts``, at
        ``emitted_time`` and the operator's ``emitted_watermark``), in one write; with the
        ``sink`` record of the sink it goes straight into (at ``emitted_time`` and the sink's
        ``sink_watermark``) unless ``sink`` is None."""
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
        """``fired`` (at ``max_ts``), then ``event_window_cleared``'s two records, in one
        write: a firing by the timer that is also the window's cleanup timer (no allowed
        lateness), for a window function whose ``clear`` does nothing."""
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
        """A window's cleanup timer fired (``WindowOperator.clearAllState``): the
        ``timer_deleted`` of ``EventTimeTrigger.clear`` (event time, namespace ``window``, the
        timer at ``max_ts``; ``existed``), then ``cleanup``, in one write — for a window
        function whose ``clear`` does nothing (nothing can happen between the two)."""
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
        source_watermark: int,
        operator: str,
        watermark: int,
        allowed_lateness: int | None,
        proc_times: Sequence[int],
        source_stamps: Sequence[Time],
        first_index: int,
        values: Sequence[Any],
        stamps: Sequence[int],
        keys: Sequence[Any],
        windows: Sequence[Any],
        deduplicated: Sequence[int],
    ) -> None:
        """A run of source records (``source``'s, at its ``source_watermark``) going into
        open windows of a window ``operator`` with an ``EventTimeTrigger`` (at
        ``watermark``): per element, given as columns, its ``arrival`` (``proc_times``,
        ``source_stamps``, its value and input index, from ``first_index`` on), then its
        ``element`` (``stamps``, ``keys``), ``assigned`` (``windows``), ``timer_registered``
        at the window's max_timestamp, ``trigger`` (on_element CONTINUE) and, unless
        ``allowed_lateness`` is None (no cleanup timer of its own), ``timer_registered`` at
        the cleanup time; ``deduplicated`` the two timers' bits (``MAX_TIMESTAMP_TIMER_EXISTED``,
        ``CLEANUP_TIMER_EXISTED``). Stored as one packed entry per element
        (``ElementEntry.entries``: interleaved column by column, at C speed)."""
        if not keys:
            return
        marker = self._entry(operator, source, allowed_lateness)
        entries = marker.entries(
            watermark, source_watermark, proc_times, source_stamps, first_index, values, stamps,
            keys, windows, deduplicated,
        )  # fmt: skip
        self._trace.append_run(marker, entries, len(keys))

    def _entry(self, operator: str, source: str, allowed_lateness: int | None) -> ElementEntry:
        """The marker of ``open_window_elements``' entries (one per operator, source and
        whether a cleanup timer: the entries of a run are read together)."""
        at = (operator, source, allowed_lateness is not None)
        marker = self._entries.get(at)
        if marker is None:
            marker = self._entries[at] = ElementEntry(operator, source, allowed_lateness)
        return marker
