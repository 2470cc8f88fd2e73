"""Flink's ``WindowOperator`` (and ``EvictingWindowOperator``), step by step.

For every element: ask the **assigner** for its windows; skip windows that are already
**late** (``cleanup_time(window) <= watermark``); add the element to the window's **state**;
ask the **trigger** (``on_element``); FIRE emits the contents stamped ``window.max_timestamp()``,
PURGE clears them; register a **cleanup timer** at ``cleanup_time``. An element that landed
in no window *and* is itself late (``ts + allowed_lateness <= watermark``) goes to the late
**side output**, or is counted in ``num_late_records_dropped``.

When the **timer service** calls back (``on_event_time`` / ``on_processing_time``), the
trigger decides again, and if the timer is the window's cleanup timer all its state —
contents, trigger state, merging bookkeeping — is cleared.

Session windows go through a ``MergingWindowSet`` per key: the new window is added, merged
windows have their trigger state merged (``on_merge``) and cleared, their cleanup timers
deleted and their contents folded into one state window. Flink refuses a merge whose result
would already be late (``UnsupportedOperationError``).

Speed: the most common configuration (``fast_path``: a non-merging event-time window with
EventTimeTrigger, no evictor, a reduce or aggregate) runs the same steps inlined — a batch
loop without a trace (``process_batch``), an element loop with one (``_process_traced``) and
one timer loop for both (``_fire_event_timers``). They give the same results and the same
trace, byte for byte (``tests/test_batching.py``, ``tests/test_perf_paths.py``).
"""

from __future__ import annotations

import copy
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from winviz.errors import (
    IllegalStateError,
    TimerLoopError,
    UnsupportedOperationError,
    UserFunctionError,
    WinvizError,
)
from winviz.functions import Collector, OutputTag
from winviz.operators.keyed import KeyedStreamOperator
from winviz.operators.window_functions import (
    AggregateWindowFunction,
    InternalWindowFunction,
    ReduceWindowFunction,
)
from winviz.state import ListStateDescriptor, ReducingStateDescriptor
from winviz.time import MAX, MIN, wrap_long
from winviz.timers import InternalTimer
from winviz.trace import Packed
from winviz.windows.assigners import GlobalWindows, TumblingEventTimeWindows, WindowAssigner
from winviz.windows.evictors import Evictor, TimestampedValue
from winviz.windows.merging import MergingWindowSet
from winviz.windows.triggers import (
    ContinuousProcessingTimeTrigger,
    EventTimeTrigger,
    Trigger,
    TriggerResult,
    decides_from_state_only,
    involves,
)


class TriggerContext:
    """What a trigger sees (Flink's ``WindowOperator.Context``): the current key and window,
    the clocks, timers and per-window partitioned state."""

    __slots__ = ("key", "merged_windows", "op", "window")

    def __init__(self, op: WindowOperator) -> None:
        self.op = op
        self.key: Any = None
        self.window: Any = None
        self.merged_windows: list[Any] | None = None

    def get_current_watermark(self) -> int:
        return self.op.timers.current_watermark

    def get_current_processing_time(self) -> int:
        return self.op.timers.current_processing_time

    def register_event_time_timer(self, time: int) -> None:
        self.op.timers.register_event_time_timer(self.window, time)

    def delete_event_time_timer(self, time: int) -> None:
        self.op.timers.delete_event_time_timer(self.window, time)

    def register_processing_time_timer(self, time: int) -> None:
        self.op.timers.register_processing_time_timer(self.window, time)

    def delete_processing_time_timer(self, time: int) -> None:
        self.op.timers.delete_processing_time_timer(self.window, time)

    def get_partitioned_state(self, desc: Any) -> PartitionedState:
        return PartitionedState(self.op, desc, self.key, self.window)

    def merge_partitioned_state(self, desc: Any) -> None:
        if self.merged_windows:
            self.op.state.merge_namespaces(desc, self.key, self.window, self.merged_windows)


class PartitionedState:
    """A (key, window)-scoped state handle: ``get/add/clear`` and ``value/update``."""

    __slots__ = ("desc", "key", "namespace", "op")

    def __init__(self, op: Any, desc: Any, key: Any, namespace: Any) -> None:
        self.op, self.desc, self.key, self.namespace = op, desc, key, namespace

    def get(self) -> Any:
        return self.op.state.get(self.desc.name, self.key, self.namespace)

    value = get

    def add(self, value: Any) -> None:
        self.op.state.add(self.desc, self.key, self.namespace, value)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self.op.state.put(self.desc.name, self.key, self.namespace, value)

    def clear(self) -> None:
        self.op.state.clear(self.desc.name, self.key, self.namespace)


class WindowContext:
    """The ``context`` of a ProcessWindowFunction."""

    __slots__ = ("_window", "op")

    def __init__(self, op: WindowOperator) -> None:
        self.op = op
        self._window: Any = None

    def window(self) -> Any:
        return self._window

    def current_watermark(self) -> int:
        return self.op.timers.current_watermark

    def current_processing_time(self) -> int:
        return self.op.timers.current_processing_time

    def output(self, tag: OutputTag, value: Any) -> None:
        self.op.side_output(tag, value, self._window.max_timestamp())

    def window_state(self) -> PartitionedState:
        """Per-key, per-window state (cleared with the window)."""
        self.op.uses_window_state = True
        return PartitionedState(self.op, _USER_WINDOW_STATE, self.op.current_key, self._window)

    def global_state(self) -> PartitionedState:
        """Per-key state shared by all windows of the key."""
        return PartitionedState(self.op, _USER_GLOBAL_STATE, self.op.current_key, None)


_UNSET: Any = object()
_SIMPLE_FUNCTIONS = (ReduceWindowFunction, AggregateWindowFunction)
_ON_ELEMENT_CONTINUE = ("on_element", "CONTINUE")  # trigger records' details (shared)
_ON_ELEMENT_FIRE = ("on_element", "FIRE")
_ON_EVENT_TIME_FIRE = ("on_event_time", "FIRE")
_ON_EVENT_TIME_CONTINUE = ("on_event_time", "CONTINUE")

_USER_WINDOW_STATE = ListStateDescriptor("user-window-state")
_USER_GLOBAL_STATE = ListStateDescriptor("user-global-state")


def _timer_details(window: Any) -> tuple[tuple[Any, ...], ...]:
    """A window's shared timer details: ``(domain, namespace, flag)`` with flag False and
    True (timer_registered's deduplicated, timer_deleted's existed), then timer_fired's."""
    return (("event", window, False), ("event", window, True), ("event", window))


@dataclass(eq=False)
class SourceArrival:
    """Where the records of a source batch come from, for ``process_source_batch``: the
    source's name and watermark (its ``arrival`` records carry them) and the source offset
    of the batch's first record. ``taken`` is set to how many records the window took,
    including one that failed."""

    source: str
    watermark: int
    position: int
    taken: int = 0

    def record(self, now: int, value: Any, source_ts: int | None, position: int) -> tuple:
        """The source's ``arrival`` trace record (eight values) of one of its records."""
        return ("arrival", now, self.watermark, self.source, None, None, source_ts,
                (value, position))  # fmt: skip


class _ElementEntry(Packed):
    """A packed trace entry (``winviz.trace.Packed``) for a source record that goes into an
    open window the common way: its ``arrival``, then the window's ``element``,
    ``assigned``, ``timer_registered`` (``max_timestamp``), ``trigger`` (on_element
    CONTINUE) and, unless the window has no cleanup timer, ``timer_registered`` (cleanup
    time) — the records ``_process_traced`` writes after the source's. Values: processing
    time, watermark, key, window, timestamp, value, source offset, source timestamp, the
    two timers' de-duplicated flags (bit 0: max_timestamp, bit 1: cleanup) and the source's
    watermark. One marker per operator, source and second timer: the entries of a whole run
    are built together when the trace is read."""

    width = 10

    def __init__(self, op: WindowOperator, source: str, second_timer: bool) -> None:
        self.source = source
        self.name = op.name
        self.cleanup_time = op.cleanup_time
        self.second_timer = second_timer
        self.count = 6 if second_timer else 5
        self._details: dict[Any, tuple[tuple[Any, ...], ...]] = {}  # shared per window

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        now, wm, key, window, ts, value, position, source_ts, flags, source_wm = values[
            at : at + 10
        ]
        name = self.name
        details = self._details.get(window)
        if details is None:
            details = self._details[window] = _timer_details(window)
        end = window[1]
        max_ts = end - 1 if end != MIN else MAX
        out.extend(
            (
                "arrival", now, source_wm, self.source, None, None, source_ts,
                (value, position),
                "element", now, wm, name, key, None, ts, value,
                "assigned", now, wm, name, key, window, ts, value,
                "timer_registered", now, wm, name, key, window, max_ts, details[flags & 1],
                "trigger", now, wm, name, key, window, None, _ON_ELEMENT_CONTINUE,
            )
        )  # fmt: skip
        if self.second_timer:
            out.extend(
                (
                    "timer_registered", now, wm, name, key, window, self.cleanup_time(window),
                    details[flags >> 1],
                )
            )  # fmt: skip

    def fields(self, slots: list[list[Any]]) -> list[tuple[Any, ...]]:
        """``unpack`` for many entries at once, field by field (``Packed.fields``): per field,
        each record's value for all entries, or its values (a list, one per entry)."""
        now, wm, key, window, ts, value, position, source_ts, flags, source_wm = slots
        count = self.count
        windows = set(window)
        for w in windows:
            if w not in self._details:
                self._details[w] = _timer_details(w)
        low = {(w, b): self._details[w][b] for w in windows for b in (0, 1)}
        max_ts = {w: w[1] - 1 if w[1] != MIN else MAX for w in windows}
        bits = map((0, 1, 0, 1).__getitem__, flags)  # bit 0: max_timestamp's flag
        first = list(map(low.__getitem__, zip(window, bits, strict=True)))
        timer_ts = list(map(max_ts.__getitem__, window))
        arrival = list(zip(value, position, strict=True))
        name, source = self.name, self.source
        # one tuple per field: the values of the entry's records, in order
        fields = [
            ("arrival", "element", "assigned", "timer_registered", "trigger", "timer_registered"),
            (now, now, now, now, now, now),
            (source_wm, wm, wm, wm, wm, wm),
            (source, name, name, name, name, name),
            (None, key, key, key, key, key),
            (None, None, window, window, window, window),
            (source_ts, ts, ts, timer_ts, None, None),
            (arrival, value, value, first, _ON_ELEMENT_CONTINUE, None),
        ]
        if self.second_timer:
            cleanup = {w: self.cleanup_time(w) for w in windows}
            fields[6] = (*fields[6][:5], list(map(cleanup.__getitem__, window)))
            bits = map((0, 0, 1, 1).__getitem__, flags)  # bit 1: the cleanup timer's flag
            fields[7] = (*fields[7][:5], list(map(low.__getitem__, zip(window, bits, strict=True))))
        return [per_record[:count] for per_record in fields]


class WindowOperator(KeyedStreamOperator):
    """Flink's WindowOperator; with an ``evictor`` it is the EvictingWindowOperator."""

    timer_service_name = "window-timers"
    use_fast_paths = True
    """Whether the fast-path configuration (see ``fast_path``) takes the inlined loops; tests
    turn it off to check them against the step-by-step path."""

    def __init__(
        self,
        name: str,
        key_selector: Callable[[Any], Any],
        assigner: WindowAssigner,
        function: InternalWindowFunction,
        trigger: Trigger | None = None,
        allowed_lateness: int = 0,
        late_data_tag: OutputTag | None = None,
        evictor: Evictor | None = None,
    ) -> None:
        super().__init__(name, key_selector)
        if allowed_lateness < 0:
            raise ValueError("The allowed lateness cannot be negative.")
        self.assigner = assigner
        self.trigger = trigger if trigger is not None else assigner.default_trigger()
        if assigner.is_merging and not self.trigger.can_merge():
            raise ValueError(
                f"A merging window assigner cannot be used with a trigger that does not support "
                f"merging ({self.trigger!r})"
            )
        self.function = function
        self.allowed_lateness = allowed_lateness
        self.late_data_tag = late_data_tag
        self.evictor = evictor
        self.contents = (
            ListStateDescriptor("window-contents")
            if evictor is not None
            else function.state_descriptor()
        )
        self.is_event_time = assigner.is_event_time
        self.merging_sets: dict[Any, MergingWindowSet] = {}
        self.ctx = TriggerContext(self)
        self.window_ctx = WindowContext(self)
        self.collector = Collector(self._collect_result)
        self._fired_values: list[Any] | None = None
        self.panes: dict[tuple[Any, Any], tuple[int, bool]] = {}
        self.metrics["num_late_records_dropped"] = 0
        self.uses_window_state = False  # set once a function asks for per-window state
        # Records may come in batches when nothing here uses processing time.
        self.batch_safe = not self.trigger.uses_processing_time and (
            self.is_event_time or isinstance(assigner, GlobalWindows)
        )
        # The common case gets a tight loop with the same semantics (see process_batch).
        self.fast_path = (
            self.use_fast_paths
            and not assigner.is_merging
            and evictor is None
            and self.is_event_time
            and type(self.trigger) is EventTimeTrigger
            and not isinstance(self.contents, ListStateDescriptor)
        )
        self._tumbling = type(assigner) is TumblingEventTimeWindows
        # the traced fast path shares each window's timer details: timer_registered /
        # timer_deleted with False and True, and timer_fired (fewer objects for the trace to
        # hold and the garbage collector to visit; a window holds one TimeWindow, which the
        # collector never untracks); dropped once the window is cleaned up
        self._timer_details: dict[Any, tuple[tuple[Any, ...], ...]] = {}
        # the traced fast path's last tumbling window: (start, end, (window,)); empty at first
        self._window_cache: tuple[int, int, tuple[Any, ...]] = (0, 0, ())
        # packed trace entries: one marker per (source, whether a cleanup timer of its own)
        self._entry_markers: dict[tuple[str, bool], _ElementEntry] = {}
        # A built-in trigger decides from its arguments and state only: the timer-loop guard
        # (winviz.timers) can prove that a timer re-registering itself loops for ever.
        self.timers.loop_guard = decides_from_state_only(self.trigger)

    def open(self, job: Any) -> None:
        """``KeyedStreamOperator.open``; in the fast-path configuration with a trace,
        ``process_element`` is ``_process_traced`` itself (one call less per record: the
        runtime binds its outputs to ``process_element`` after opening)."""
        super().open(job)
        if self.fast_path and self.trace is not None:
            self.process_element = self._process_traced  # type: ignore[method-assign]

    # -- Flink's small helpers, verbatim in spirit -----------------------------------------

    def cleanup_time(self, window: Any) -> int:
        """``max_timestamp + allowed_lateness`` for event time (MAX if that overflows);
        ``max_timestamp`` for processing time."""
        if self.is_event_time:
            max_ts = window.max_timestamp()
            t = wrap_long(max_ts + self.allowed_lateness)
            return t if t >= max_ts else MAX
        return window.max_timestamp()

    def is_window_late(self, window: Any) -> bool:
        return self.is_event_time and self.cleanup_time(window) <= self.timers.current_watermark

    def is_element_late(self, ts: int | None) -> bool:
        return (
            self.is_event_time
            and ts is not None
            and wrap_long(ts + self.allowed_lateness) <= self.timers.current_watermark
        )

    def register_cleanup_timer(self, window: Any) -> None:
        t = self.cleanup_time(window)
        if t == MAX:
            return  # no cleanup for the global window (or an overflowing one)
        if self.is_event_time:
            self.ctx.register_event_time_timer(t)
        else:
            self.ctx.register_processing_time_timer(t)

    def delete_cleanup_timer(self, window: Any) -> None:
        t = self.cleanup_time(window)
        if t == MAX:
            return
        if self.is_event_time:
            self.ctx.delete_event_time_timer(t)
        else:
            self.ctx.delete_processing_time_timer(t)

    # -- elements ---------------------------------------------------------------------------

    def process_element(self, value: Any, ts: int | None) -> None:
        if self.fast_path and self.trace is not None:
            self._process_traced(value, ts)
            return
        self.metrics["num_records_in"] += 1
        key = None
        try:
            key = self.key_selector(value)
            self.current_key = key
            trace = self.trace
            if trace is not None:
                trace.emit(
                    "element",
                    self.timers.current_processing_time,
                    self.timers.current_watermark,
                    self.name,
                    key,
                    None,
                    ts,
                    value,
                )
            windows = self.assigner.assign_windows(value, ts, self.timers.current_processing_time)
            if self.assigner.is_merging:
                skipped = self._process_merging(key, value, ts, windows)
            else:
                skipped = self._process_windows(key, value, ts, windows)
            if skipped and self.is_element_late(ts):
                self._late(key, value, ts)
        except WinvizError as exc:
            self._annotate(exc, key)
            raise
        except Exception as exc:
            raise self._user_error(exc, key, value) from exc

    def process_batch(self, batch) -> None:
        """``process_element`` for each record; for a non-merging event-time window with
        Flink's EventTimeTrigger, no evictor, incremental state and no trace, the same steps
        inlined in one loop: skip late windows, add to state, fire at once if the watermark
        is already past the window's end (else an event-time timer at ``max_timestamp``),
        register the cleanup timer, side-output or count a late element. The watermark cannot
        change inside a batch. A window that already has contents already has both timers
        (they were registered with its first element, and neither can have fired or been
        deleted while its time is after the watermark), so only a window's first element
        registers them. The processing clock (``job.now``) is read only where a record leaves
        (a firing, a late element, an error), so it is set there and at the end. A tumbling
        window is cached with its timer times and whether it is open (neither late nor past
        its end): an element in an open cached window takes the short way, the same steps
        without the per-window checks. ``tests/test_batching.py`` and
        ``tests/test_perf_paths.py`` check this loop against the step-by-step path."""
        if self.trace is not None or not self.fast_path:
            super().process_batch(batch)
            return
        job, key_selector, assign = self.job, self.key_selector, self.assigner.assign_windows
        slot_of, name, desc = self.state.slot, self.contents.name, self.contents
        reducing = isinstance(desc, ReducingStateDescriptor)
        reduce = desc.reduce if reducing else None
        agg = None if reducing else desc.function
        add_timer = self.timers.event_queue.add
        wm, lateness = self.timers.current_watermark, self.allowed_lateness
        # a tumbling assigner gives one window per element: reuse the last one while it fits
        tumbling = self._tumbling
        last_start = last_end = 0  # an empty range until a window is cached
        cached: Any = None
        # the cached window's max_timestamp and cleanup time, whether the cleanup timer is a
        # second timer, and whether an element in it takes the short way: the window is not
        # late and does not fire at once (the watermark cannot change inside a batch)
        c_window: Any = None
        c_slot: dict[Any, Any] = {}  # the cached window's state: key -> contents
        c_max_ts = c_cleanup = 0
        c_second = c_open = False
        key = value = index = None
        arrival = job.now
        last_key: Any = _UNSET  # the last key computed (the general path's current key)
        ctx = self.ctx
        ctx_key, ctx_window = ctx.key, ctx.window  # set on the way out, as the general path
        done = 0
        try:
            for arrival, index, value, ts in batch:
                key = None
                key = last_key = key_selector(value)
                if ts is not None and last_start <= ts < last_end:
                    if c_open:  # the loop below for one open window that does not fire
                        current = c_slot.get(key)
                        if reducing:
                            c_slot[key] = value if current is None else reduce(current, value)
                        else:
                            c_slot[key] = agg.add(
                                value, agg.create_accumulator() if current is None else current
                            )
                        ctx_key, ctx_window = key, c_window
                        if current is None:  # the window's first element: its two timers
                            add_timer(key, c_window, c_max_ts)
                            if c_second:
                                add_timer(key, c_window, c_cleanup)
                        done += 1
                        continue
                    windows: Any = cached
                else:
                    windows = assign(value, ts, arrival)
                    # cached only above MIN, so that MIN (refused by the assigner) never hits
                    if tumbling and windows[0][0] > MIN:
                        c_window = windows[0]
                        cached = (c_window,)
                        last_start, last_end = c_window
                        c_max_ts = last_end - 1 if last_end != MIN else MAX
                        c_cleanup = self.cleanup_time(c_window) if lateness else c_max_ts
                        c_second = c_cleanup != c_max_ts and c_cleanup != MAX
                        c_open = c_cleanup > wm and c_max_ts > wm
                        if c_open:  # (it gets this element below)
                            c_slot = slot_of(name, c_window)
                skipped = True
                for window in windows:
                    end = window[1]
                    max_ts = end - 1 if end != MIN else MAX  # TimeWindow.max_timestamp()
                    cleanup = self.cleanup_time(window) if lateness else max_ts
                    if cleanup <= wm:
                        continue  # the window is late: Flink skips it
                    skipped = False
                    slot = slot_of(name, window)
                    current = slot.get(key)
                    if reducing:
                        slot[key] = value if current is None else reduce(current, value)
                    else:
                        acc = agg.create_accumulator() if current is None else current
                        slot[key] = agg.add(value, acc)
                    ctx_key, ctx_window = key, window
                    if max_ts <= wm:  # EventTimeTrigger.on_element: FIRE at once
                        contents = slot[key]
                        if contents is None:
                            continue  # nothing to emit (and, as in Flink, no cleanup timer)
                        job.now, job.record_index, self.current_key = arrival, index, key
                        ctx.key, ctx.window = key, window
                        self._emit_window_contents(key, window, window, contents)
                        if cleanup != MAX:
                            add_timer(key, window, cleanup)
                    elif current is None:  # the window's first element: its two timers
                        add_timer(key, window, max_ts)
                        if cleanup != max_ts and cleanup != MAX:
                            add_timer(key, window, cleanup)
                if skipped and self.is_element_late(ts):
                    job.now, job.record_index, self.current_key = arrival, index, key
                    self._late(key, value, ts)
                done += 1
        except WinvizError as exc:
            job.now, job.record_index = arrival, index
            ctx.key, ctx.window = ctx_key, ctx_window
            self._annotate(exc, key)
            raise
        except Exception as exc:
            job.now, job.record_index = arrival, index
            ctx.key, ctx.window = ctx_key, ctx_window
            raise self._user_error(exc, key, value) from exc
        finally:
            self.metrics["num_records_in"] += done + (done < len(batch))
            ctx.key, ctx.window = ctx_key, ctx_window
            if last_key is not _UNSET:
                self.current_key = last_key
        if batch:
            job.now = batch[-1][0]

    def _process_traced(self, value: Any, ts: int | None) -> None:
        """``process_element`` for the fast-path configuration with a trace: the same steps
        and the same trace records as ``_process_windows`` with EventTimeTrigger, each
        window's records written with one ``extend`` (the trace's storage is flat). A window
        whose watermark is already past its end fires through the general code.
        ``tests/test_perf_paths.py`` checks the trace byte for byte against the general
        path."""
        self.metrics["num_records_in"] += 1
        key = None
        try:
            key = self.key_selector(value)
            self.current_key = key
            timers = self.timers
            now, wm, name = timers.clock.now, timers.current_watermark, self.name
            write = self.trace.extend  # type: ignore[union-attr]
            write(("element", now, wm, name, key, None, ts, value))
            queue = timers.event_queue
            add_timer, live = queue.add, queue.live
            slot_of, cname, desc = self.state.slot, self.contents.name, self.contents
            lateness = self.allowed_lateness
            timer_details = self._timer_details
            skipped = True
            start, end, cached = self._window_cache
            if ts is not None and start <= ts < end:
                windows = cached  # a tumbling window, as the assigner would give it again
            else:
                windows = self.assigner.assign_windows(value, ts, now)
                if self._tumbling and windows[0][0] > MIN:  # MIN (refused) never hits
                    self._window_cache = (windows[0][0], windows[0][1], (windows[0],))
            for window in windows:
                end = window[1]
                max_ts = end - 1 if end != MIN else MAX
                cleanup = self.cleanup_time(window) if lateness else max_ts
                if cleanup <= wm:
                    write(("skipped_late_window", now, wm, name, key, window, ts, value))
                    continue
                skipped = False
                slot = slot_of(cname, window)
                current = slot.get(key)
                if desc.__class__ is ReducingStateDescriptor:
                    slot[key] = value if current is None else desc.reduce(current, value)
                else:
                    agg = desc.function  # type: ignore[union-attr]
                    slot[key] = agg.add(
                        value, agg.create_accumulator() if current is None else current
                    )
                ctx = self.ctx
                ctx.key, ctx.window = key, window
                if max_ts <= wm:  # EventTimeTrigger.on_element: FIRE at once
                    write(
                        (
                            "assigned", now, wm, name, key, window, ts, value,
                            "trigger", now, wm, name, key, window, None, _ON_ELEMENT_FIRE,
                        )
                    )  # fmt: skip
                    contents = slot.get(key)
                    if contents is None:
                        continue
                    self._emit_window_contents(key, window, window, contents)
                    if cleanup != MAX:
                        dedup = not add_timer(key, window, cleanup)
                        write(
                            (
                                "timer_registered", now, wm, name, key, window, cleanup,
                                ("event", window, dedup),
                            )
                        )  # fmt: skip
                    continue
                details = timer_details.get(window)
                if details is None:
                    details = timer_details[window] = _timer_details(window)
                dedup = (key, window, max_ts) in live or not add_timer(key, window, max_ts)
                if cleanup == MAX:
                    write(
                        (
                            "assigned", now, wm, name, key, window, ts, value,
                            "timer_registered", now, wm, name, key, window, max_ts,
                            details[dedup],
                            "trigger", now, wm, name, key, window, None, _ON_ELEMENT_CONTINUE,
                        )
                    )  # fmt: skip
                    continue
                # (without lateness the cleanup timer is the trigger's: de-duplicated)
                dedup_cleanup = cleanup == max_ts or not add_timer(key, window, cleanup)
                write(
                    (
                        "assigned", now, wm, name, key, window, ts, value,
                        "timer_registered", now, wm, name, key, window, max_ts,
                        details[dedup],
                        "trigger", now, wm, name, key, window, None, _ON_ELEMENT_CONTINUE,
                        "timer_registered", now, wm, name, key, window, cleanup,
                        details[dedup_cleanup],
                    )
                )  # fmt: skip
            if skipped and self.is_element_late(ts):
                self._late(key, value, ts)
        except WinvizError as exc:
            self._annotate(exc, key)
            raise
        except Exception as exc:
            raise self._user_error(exc, key, value) from exc

    @property
    def takes_source_batches(self) -> bool:
        """True when a traced source batch may come in whole (``process_source_batch``):
        the fast-path configuration with a trace."""
        return self.fast_path and self.trace is not None

    def process_source_batch(self, batch: Any, stamps: list[int], arrival: SourceArrival) -> None:
        """A traced source batch, record by record in one loop: the first ``len(stamps)``
        records of ``batch`` (their timestamps already assigned) as the source would hand
        them over one by one — its ``arrival`` record, then ``process_element``. A record
        that lands in the open cached tumbling window (not late, not past its end) is written
        as one packed entry (``_ElementEntry``); any other record gets its arrival record and
        goes through ``_process_traced``. Same records, same order, same state, timers, clock
        and counters as one by one; a failing record's arrival (and element) record comes
        before the error, as there. ``tests/test_perf_paths.py`` compares the traces."""
        job, timers, trace = self.job, self.timers, self.trace
        write = trace.extend  # type: ignore[union-attr]
        wm, name = timers.current_watermark, self.name
        key_selector = self.key_selector
        cname, desc = self.contents.name, self.contents
        reducing = desc.__class__ is ReducingStateDescriptor
        reduce = desc.reduce if reducing else None  # type: ignore[union-attr]
        agg = None if reducing else desc.function  # type: ignore[union-attr]
        add_timer = timers.event_queue.add
        ctx = self.ctx
        position = arrival.position
        markers = self._entry_markers
        source_wm = arrival.watermark
        written: dict[_ElementEntry, int] = {}
        # the open cached window: [c_start, c_end), its timers and this batch's marker
        c_start = c_end = c_max_ts = c_cleanup = 0
        c_window: Any = None
        c_slot: dict[Any, Any] = {}  # its state: key -> contents
        c_second = False
        marker: Any = None
        packed = 0  # entries written with ``marker`` since it was chosen

        def open_window() -> None:
            nonlocal c_start, c_end, c_window, c_slot, c_max_ts, c_cleanup, c_second
            nonlocal marker, packed
            start, end, cached = self._window_cache
            c_start = c_end = 0
            if not cached:
                return
            window = cached[0]
            max_ts = end - 1 if end != MIN else MAX
            cleanup = self.cleanup_time(window) if self.allowed_lateness else max_ts
            if cleanup <= wm or max_ts <= wm:
                return  # late or firing at once: the general steps
            if marker is not None:
                written[marker] = written.get(marker, 0) + packed
            second = cleanup != MAX
            marker = markers.get((arrival.source, second))
            if marker is None:
                marker = markers[arrival.source, second] = _ElementEntry(
                    self, arrival.source, second
                )
            packed = 0
            c_start, c_end, c_window, c_max_ts, c_cleanup = start, end, window, max_ts, cleanup
            c_second = second and cleanup != max_ts
            c_slot = self.state.slot(cname, window)

        open_window()
        last_key, ctx_key, ctx_window = self.current_key, ctx.key, ctx.window
        done = 0
        now = index = value = key = source_ts = None
        # how far a record taken the short way got when it failed: 0 (its entry written or
        # not taken that way), 1 (before its key), 2 (after its key)
        step = 0
        try:
            for now, index, value, source_ts, ts in zip(
                batch.arrivals, batch.indices, batch.values, batch.stamps, stamps, strict=False
            ):  # (the first len(stamps) records)
                done += 1
                if c_start <= ts < c_end:
                    step = 1
                    key = key_selector(value)
                    step = 2
                    current = c_slot.get(key)
                    if reducing:
                        c_slot[key] = value if current is None else reduce(current, value)
                    else:
                        c_slot[key] = agg.add(
                            value, agg.create_accumulator() if current is None else current
                        )
                    if current is None:  # the window's first element for this key
                        flags = not add_timer(key, c_window, c_max_ts)
                        if not c_second or not add_timer(key, c_window, c_cleanup):
                            flags += 2
                    else:  # both timers exist since its first element
                        flags = 3
                    write(
                        (
                            marker, now, wm, key, c_window, ts, value, position, source_ts,
                            flags, source_wm,
                        )
                    )  # fmt: skip
                    packed += 1
                    step = 0
                    position += 1
                    last_key, ctx_key, ctx_window = key, key, c_window
                    continue
                job.now, job.record_index = now, index
                write(arrival.record(now, value, source_ts, position))
                position += 1
                self._process_traced(value, ts)
                last_key, ctx_key, ctx_window = self.current_key, ctx.key, ctx.window
                open_window()
        except Exception as exc:
            job.now, job.record_index = now, index
            if not step:
                raise  # _process_traced reported it
            # as _process_traced: the record counts in, its arrival (and, once it has a key,
            # its element) record comes before the error
            ctx.key, ctx.window = ctx_key, ctx_window
            self.metrics["num_records_in"] += 1
            write(arrival.record(now, value, source_ts, position))
            if step == 1:
                key = None
            else:
                last_key = key
                write(("element", now, wm, name, key, None, ts, value))
            if isinstance(exc, WinvizError):
                self._annotate(exc, key)
                raise
            raise self._user_error(exc, key, value) from exc
        finally:
            if marker is not None:
                written[marker] = written.get(marker, 0) + packed
            for m, n in written.items():
                trace.packed(m, n)  # type: ignore[union-attr]
            self.metrics["num_records_in"] += sum(written.values())
            self.current_key, ctx.key, ctx.window = last_key, ctx_key, ctx_window
            arrival.taken = done
        if done:
            job.now, job.record_index = now, index

    def _annotate(self, exc: WinvizError, key: Any) -> None:
        """Add operator, record and key to an engine error raised while processing."""
        if exc.__cause__ is None and not isinstance(exc, UserFunctionError) and exc.args:
            exc.args = (
                f"{exc.args[0]} [operator {self.name!r}, record "
                f"{self.job.record_index}, key {key!r}]",
            )

    def _process_windows(self, key: Any, value: Any, ts: int | None, windows: list[Any]) -> bool:
        skipped = True
        trace = self.trace
        evicting = self.evictor is not None
        for window in windows:
            if self.is_window_late(window):
                if trace is not None:
                    self._emit_trace("skipped_late_window", key, window, ts, value)
                continue
            skipped = False
            self.state.add(
                self.contents, key, window, TimestampedValue(value, ts) if evicting else value
            )
            if trace is not None:
                self._emit_trace("assigned", key, window, ts, value)
            ctx = self.ctx
            ctx.key, ctx.window = key, window
            result = self._check(
                self.trigger.on_element(value, ts, window, ctx), "on_element", key, window
            )
            if result.is_fire:
                contents = self.state.get(self.contents.name, key, window)
                if contents is None:
                    continue
                self._emit_window_contents(key, window, window, contents)
            if result.is_purge:
                self._purge(key, window, window, "trigger")
            self.register_cleanup_timer(window)
        return skipped

    def _process_merging(self, key: Any, value: Any, ts: int | None, windows: list[Any]) -> bool:
        skipped = True
        trace = self.trace
        merging = self.merging_sets.get(key)
        if merging is None:
            merging = self.merging_sets[key] = MergingWindowSet(self.assigner)
        for window in windows:
            actual = merging.add_window(window, self._merge_function(key))
            if self.is_window_late(actual):
                merging.retire_window(actual)
                if trace is not None:
                    self._emit_trace("skipped_late_window", key, actual, ts, value)
                continue
            skipped = False
            state_window = merging.get_state_window(actual)
            if state_window is None:
                raise IllegalStateError(f"Window {window} is not in in-flight window set.")
            self.state.add(
                self.contents,
                key,
                state_window,
                TimestampedValue(value, ts) if self.evictor is not None else value,
            )
            if trace is not None:
                self._emit_trace("assigned", key, actual, ts, value)
            ctx = self.ctx
            ctx.key, ctx.window = key, actual
            result = self._check(
                self.trigger.on_element(value, ts, actual, ctx), "on_element", key, actual
            )
            if result.is_fire:
                contents = self.state.get(self.contents.name, key, state_window)
                if contents is None:
                    continue
                self._emit_window_contents(key, actual, state_window, contents)
            if result.is_purge:
                self._purge(key, actual, state_window, "trigger")
            self.register_cleanup_timer(actual)
        self._persist(key, merging)
        return skipped

    def _merge_function(self, key: Any) -> Callable[..., None]:
        def merge(merge_result, merged_windows, state_window_result, merged_state_windows):
            if self.is_event_time:
                wm = self.timers.current_watermark
                if wrap_long(merge_result.max_timestamp() + self.allowed_lateness) <= wm:
                    raise UnsupportedOperationError(
                        "The end timestamp of an event-time window cannot become earlier than "
                        f"the current watermark by merging. Current watermark: {wm} window: "
                        f"{merge_result}"
                    )
            else:
                now = self.timers.current_processing_time
                if merge_result.max_timestamp() <= now:
                    raise UnsupportedOperationError(
                        "The end timestamp of a processing-time window cannot become earlier "
                        f"than the current processing time by merging. Current processing time: "
                        f"{now} window: {merge_result}"
                    )
            if self.trace is not None:
                self._emit_trace(
                    "merged", key, merge_result, None, (list(merged_windows), state_window_result)
                )
            ctx = self.ctx
            ctx.key, ctx.window, ctx.merged_windows = key, merge_result, merged_windows
            self.trigger.on_merge(merge_result, ctx)
            ctx.merged_windows = None
            for m in merged_windows:
                ctx.window = m
                self.trigger.clear(m, ctx)
                self.delete_cleanup_timer(m)
                self.panes.pop((key, m), None)
            self.state.merge_namespaces(
                self.contents, key, state_window_result, merged_state_windows
            )

        return merge

    def _persist(self, key: Any, merging: MergingWindowSet) -> None:
        merging.persist()
        if not merging.mapping:
            self.merging_sets.pop(key, None)

    def _late(self, key: Any, value: Any, ts: int | None) -> None:
        if self.late_data_tag is not None:
            self.side_output(self.late_data_tag, value, ts)
        else:
            self.metrics["num_late_records_dropped"] += 1
            if self.trace is not None:
                self._emit_trace("late_dropped", key, None, ts, value)

    # -- timers -----------------------------------------------------------------------------

    def process_watermark(self, watermark: int) -> None:
        """``KeyedStreamOperator.process_watermark``; in the fast-path configuration the
        event-time timers fire through ``_fire_event_timers``."""
        if not self.fast_path or len(self.timer_services) != 1:
            super().process_watermark(watermark)
            return
        timers = self.timers
        if watermark <= timers.current_watermark:
            return
        self._watermark = watermark
        if self.trace is not None:
            self.trace.emit(
                "watermark", timers.clock.now, watermark, self.name, None, None, watermark, "input"
            )
        self._fire_event_timers(watermark)
        self.output.emit_watermark(watermark)

    def _fire_event_timers(self, watermark: int) -> None:
        """``InternalTimerService.advance_watermark`` and ``_on_timer`` for the fast-path
        configuration, in one loop: pop every live event-time timer at or before the
        watermark in (time, registration) order; EventTimeTrigger fires when the timer is the
        window's ``max_timestamp``; the cleanup timer clears the window's contents and deletes
        the trigger's timer (``EventTimeTrigger.clear``). With a trace, the same records as
        the general path (timer_fired, trigger, the firing's records, timer_deleted,
        cleanup); ``tests/test_perf_paths.py`` checks them byte for byte. EventTimeTrigger
        never registers a timer here, so no timer loop can form (``winviz.timers``)."""
        timers = self.timers
        timers.current_watermark = watermark
        fn = self.function
        if (
            self.trace is None
            and fn.process_function is None
            and type(fn) in _SIMPLE_FUNCTIONS
            and not self.uses_window_state
            and not self.panes
        ):
            self._fire_untraced(watermark)
            return
        queue = timers.event_queue
        live = queue.live
        state, cname = self.state, self.contents.name
        lateness = self.allowed_lateness
        trace = self.trace
        write = trace.extend if trace is not None else None
        name, ctx, window_ctx = self.name, self.ctx, self.window_ctx
        timer_details = self._timer_details
        details: Any = None
        cleaned: list[Any] = []  # windows cleaned up here: their shared details go at the end
        key = window = None
        try:
            for ts, key, window in queue.pop_due(watermark):
                self.current_key = key
                ctx.key, ctx.window = key, window
                end = window[1]
                max_ts = end - 1 if end != MIN else MAX
                fire = ts == max_ts
                if write is not None:
                    now = timers.clock.now
                    details = timer_details.get(window)
                    if details is None:
                        details = timer_details[window] = _timer_details(window)
                    write(
                        (
                            "timer_fired", now, watermark, name, key, window, ts,
                            details[2],
                            "trigger", now, watermark, name, key, window, None,
                            _ON_EVENT_TIME_FIRE if fire else _ON_EVENT_TIME_CONTINUE,
                        )
                    )  # fmt: skip
                if fire:
                    contents = state.get(cname, key, window)
                    if contents is not None:
                        self._emit_window_contents(key, window, window, contents)
                cleanup = self.cleanup_time(window) if lateness else max_ts
                if ts == cleanup:
                    # _clear_all_state, inlined: EventTimeTrigger.clear deletes the timer at
                    # max_timestamp (traced as timer_deleted), then the function's clear
                    state.clear(cname, key, window)
                    existed = live.pop((key, window, max_ts), None) is not None
                    if write is not None:
                        write(
                            (
                                "timer_deleted", timers.clock.now, watermark, name, key, window,
                                max_ts, details[existed],
                            )
                        )  # fmt: skip
                    window_ctx._window = window
                    if self.uses_window_state:
                        self.state.clear(_USER_WINDOW_STATE.name, key, window)
                    fn.clear(window_ctx)
                    if self.panes:
                        self.panes.pop((key, window), None)
                    if write is not None:
                        write(
                            (
                                "cleanup", timers.clock.now, watermark, name, key, window,
                                max_ts, cleanup,
                            )
                        )  # fmt: skip
                        cleaned.append(window)
        except WinvizError:
            raise
        except Exception as exc:
            raise self._user_error(exc, key, None, window) from exc
        finally:
            for done in cleaned:
                timer_details.pop(done, None)

    def _fire_untraced(self, watermark: int) -> None:
        """``_fire_event_timers`` without a trace for a reduce / aggregate without a
        ProcessWindowFunction (whose ``clear`` does nothing) and no per-window user state:
        the timer at ``max_timestamp`` emits the contents; the cleanup timer (the same one
        without allowed lateness) drops them and the trigger's timer. The current key, the
        trigger context's key and window and the window context's window are left as the
        last timer sets them, as the general loop leaves them."""
        queue = self.timers.event_queue
        live = queue.live
        slots, cname = self.state.slots, self.contents.name
        lateness = self.allowed_lateness
        fn = self.function
        get_result = fn.function.get_result if type(fn) is AggregateWindowFunction else None
        metrics, collect = self.metrics, self.output.collect
        key = window = last = last_key = None
        slot_window: Any = None  # the window whose state ``slot`` is (timers come by window)
        slot: dict[Any, Any] | None = None
        emitted = 0
        try:
            for ts, key, window in queue.pop_due(watermark):
                last, last_key = window, key
                if window is not slot_window:
                    slot_window, slot = window, slots.get((cname, window))
                end = window[1]
                max_ts = end - 1 if end != MIN else MAX
                cleanup = self.cleanup_time(window) if lateness else max_ts
                if ts == cleanup and slot is not None:  # contents go (after firing, below)
                    contents = slot.pop(key, None)
                    if not slot:  # (KeyedStateBackend.clear: no empty slot stays)
                        del slots[(cname, window)]
                        slot_window = slot = None
                else:
                    contents = None if slot is None else slot.get(key)
                if ts == max_ts:  # EventTimeTrigger.on_event_time: FIRE
                    if contents is not None:
                        emitted += 1
                        collect(contents if get_result is None else get_result(contents), max_ts)
                elif ts == cleanup:  # the cleanup timer also deletes the trigger's timer
                    live.pop((key, window, max_ts), None)
        except WinvizError:
            raise
        except Exception as exc:
            raise self._user_error(exc, key, None, window) from exc
        finally:
            metrics["num_records_out"] += emitted
            if last is not None:  # the last timer taken
                self.current_key = last_key
                self.ctx.key, self.ctx.window = last_key, last
                self.window_ctx._window = last
                self.collector.timestamp = last.max_timestamp()

    def on_event_time(self, timer: InternalTimer) -> None:
        self._on_timer(timer, True)

    def on_processing_time(self, timer: InternalTimer) -> None:
        self._on_timer(timer, False)

    def _on_timer(self, timer: InternalTimer, event_time: bool) -> None:
        key, window, time = timer.key, timer.namespace, timer.timestamp
        self.current_key = key
        ctx = self.ctx
        ctx.key, ctx.window = key, window
        merging = None
        try:
            if self.assigner.is_merging:
                merging = self.merging_sets.get(key)
                state_window = merging.get_state_window(window) if merging else None
                if state_window is None:
                    return  # the window is gone (a trigger left a timer behind): nothing to do
            else:
                state_window = window
            if event_time:
                result = self.trigger.on_event_time(time, window, ctx)
            else:
                result = self.trigger.on_processing_time(time, window, ctx)
            result = self._check(
                result, "on_event_time" if event_time else "on_processing_time", key, window
            )
            if result.is_fire:
                contents = self.state.get(self.contents.name, key, state_window)
                if contents is not None:
                    self._emit_window_contents(key, window, state_window, contents)
            if result.is_purge:
                self._purge(key, window, state_window, "trigger")
            if self.is_event_time == event_time and time == self.cleanup_time(window):
                self._clear_all_state(key, window, state_window, merging)
            if merging is not None:
                self._persist(key, merging)
        except WinvizError:
            raise
        except Exception as exc:
            raise self._user_error(exc, key, None, window) from exc

    def _clear_all_state(
        self, key: Any, window: Any, state_window: Any, merging: MergingWindowSet | None
    ) -> None:
        """Flink's ``clearAllState``: contents, trigger state, per-window user state and the
        merging bookkeeping of a window whose cleanup time has come."""
        self.state.clear(self.contents.name, key, state_window)
        self.ctx.key, self.ctx.window = key, window
        self.trigger.clear(window, self.ctx)
        self.window_ctx._window = window
        if self.uses_window_state:
            self.state.clear(_USER_WINDOW_STATE.name, key, window)
        self.function.clear(self.window_ctx)
        if merging is not None:
            merging.retire_window(window)
        if self.panes:
            self.panes.pop((key, window), None)
        if self.trace is not None:
            self._emit_trace(
                "cleanup", key, window, window.max_timestamp(), self.cleanup_time(window)
            )

    def _purge(self, key: Any, window: Any, state_window: Any, reason: str) -> None:
        self.state.clear(self.contents.name, key, state_window)
        if self.trace is not None:
            self._emit_trace("purged", key, window, None, reason)

    # -- emitting ---------------------------------------------------------------------------

    def _emit_window_contents(
        self, key: Any, window: Any, state_window: Any, contents: Any
    ) -> None:
        """Run the window function on the contents; results are stamped max_timestamp."""
        self.collector.timestamp = window.max_timestamp()
        self.window_ctx._window = window
        tracing = self.trace is not None
        if tracing:
            self._fired_values = []
        if self.evictor is None:
            self.function.process(key, window, self.window_ctx, contents, self.collector)
            count = len(contents) if isinstance(contents, list) else None
        else:
            count = self._emit_evicting(key, window, state_window, contents)
        if tracing:
            self._trace_fire(key, window, count)

    def _emit_evicting(
        self, key: Any, window: Any, state_window: Any, records: list[TimestampedValue]
    ) -> int:
        evictor = self.evictor
        before = list(records)
        evictor.evict_before(records, len(records), window, self.window_ctx)
        self._trace_evicted(key, window, before, records, "before")
        values = [r.value for r in records]
        self.function.process(
            key, window, self.window_ctx, self.function.from_elements(values), self.collector
        )
        before = list(records)
        evictor.evict_after(records, len(records), window, self.window_ctx)
        self._trace_evicted(key, window, before, records, "after")
        if records:
            self.state.put(self.contents.name, key, state_window, records)
        else:
            self.state.clear(self.contents.name, key, state_window)
        return len(values)

    def _trace_evicted(
        self,
        key: Any,
        window: Any,
        before: list[TimestampedValue],
        after: list[TimestampedValue],
        when: str,
    ) -> None:
        if self.trace is not None and len(after) != len(before):
            kept = {id(r) for r in after}
            gone = [r.value for r in before if id(r) not in kept]
            self._emit_trace("evicted", key, window, None, (when, gone))

    def _collect_result(self, value: Any, ts: int | None) -> None:
        if self._fired_values is not None:
            self._fired_values.append(value)
        self.emit(value, ts)

    def _trace_fire(self, key: Any, window: Any, count: int | None) -> None:
        """Trace a firing with its pane index and timing (early / on_time / late)."""
        now = (
            self.timers.current_watermark
            if self.is_event_time
            else self.timers.current_processing_time
        )
        pane, had_on_time = self.panes.get((key, window), (0, False))
        if now < window.max_timestamp():
            timing = "early"
        elif not had_on_time:
            timing, had_on_time = "on_time", True
        else:
            timing = "late"
        self.panes[(key, window)] = (pane + 1, had_on_time)
        values = self._fired_values
        self._fired_values = None
        result = values[0] if values is not None and len(values) == 1 else values
        self._emit_trace(
            "fired", key, window, window.max_timestamp(), (result, pane, timing, count)
        )

    def side_output(self, tag: OutputTag, value: Any, ts: int | None) -> None:
        if self.trace is not None:
            self._emit_trace("side_output", self.current_key, None, ts, (tag.id, value))
        self.output.collect_side(tag, value, ts)

    # -- helpers ----------------------------------------------------------------------------

    def _emit_trace(self, kind: str, key: Any, window: Any, ts: int | None, detail: Any) -> None:
        self.trace.emit(
            kind,
            self.timers.current_processing_time,
            self.timers.current_watermark,
            self.name,
            key,
            window,
            ts,
            detail,
        )

    def _check(self, result: Any, call: str, key: Any, window: Any) -> TriggerResult:
        if result.__class__ is not TriggerResult:
            raise IllegalStateError(
                f"trigger {self.trigger!r}.{call} returned {result!r} for key {key!r}, window "
                f"{window}; expected a TriggerResult (CONTINUE, FIRE, PURGE or FIRE_AND_PURGE)"
            )
        if self.trace is not None:
            self._emit_trace("trigger", key, window, None, (call, result.name))
        return result

    def _user_error(
        self, exc: Exception, key: Any, value: Any, window: Any = None
    ) -> UserFunctionError:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return UserFunctionError(
            function=f"{frame.name} ({frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})",
            operator=self.name,
            key=key,
            window=window if window is not None else self.ctx.window,
            record=value,
            index=self.job.record_index,
            cause=exc,
        )

    # -- the timer-loop guard (winviz.timers) ------------------------------------------------

    def key_state(self, key: Any) -> dict[tuple[str, Any], Any]:
        """The key's keyed state (contents, trigger state) and its merging bookkeeping."""
        state = super().key_state(key)
        merging = self.merging_sets.get(key)
        if merging is not None:
            state[("merging-window-set", None)] = copy.deepcopy(merging.mapping)
        return state

    def timer_loop_error(self, timer: InternalTimer, domain: str, now: int) -> TimerLoopError:
        """Name the trigger, key, window and time; cite FLINK-35069 for the known case."""
        window, time = timer.namespace, timer.timestamp
        message = (
            f"timer loop in operator {self.name!r}: trigger {self.trigger!r} registers its "
            f"{domain}-time timer at {time} again each time it fires, for key {timer.key!r}, "
            f"window {window}, at {domain} time {now}, and nothing else changes, so it would "
            "fire for ever and the clock could never move on."
        )
        if involves(self.trigger, ContinuousProcessingTimeTrigger) and domain == "processing":
            message += (
                " Real Flink hangs here too (FLINK-35069): at the window's max timestamp "
                f"({window.max_timestamp()}) ContinuousProcessingTimeTrigger registers its next "
                "fire time min(time + interval, max timestamp), the same time again; the window "
                "is cleaned up only when the watermark passes it, which cannot happen while the "
                "timer keeps firing. Use ContinuousEventTimeTrigger on event-time windows, or "
                "processing-time windows (their cleanup timer removes the trigger's timer)."
            )
        return TimerLoopError(
            message,
            operator=self.name,
            domain=domain,
            key=timer.key,
            namespace=window,
            timestamp=time,
        )

    # -- checkpoints ------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        snap = super().snapshot()
        snap["merging"] = {k: dict(m.mapping) for k, m in self.merging_sets.items()}
        snap["panes"] = dict(self.panes)
        snap["uses_window_state"] = self.uses_window_state
        return snap

    def restore(self, snap: dict[str, Any]) -> None:
        super().restore(snap)
        self.merging_sets = {
            k: MergingWindowSet(self.assigner, list(m.items())) for k, m in snap["merging"].items()
        }
        self.panes = dict(snap["panes"])
        self.uses_window_state = snap["uses_window_state"]
