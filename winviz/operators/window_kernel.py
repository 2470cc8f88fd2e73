"""The window kernel: Flink's ``WindowOperator`` (``winviz.operators.window_operator``) for
the configuration of ``WindowKernel.takes`` — non-merging event-time windows, Flink's
``EventTimeTrigger``, no evictor, reduce or aggregate contents — fused into loops that call the
operator's rules (``winviz.operators.window_rules``, ``winviz.state.add_to_contents``).

The watermark only changes between records, so whether a window is late or fires at once is
known for a whole batch, and only a key's first element in a window registers its timers. The
last tumbling windows are cached; an **open** one (neither late nor due) takes the *short way*:
add to the contents. ``process_batch`` runs a batch untraced, ``process_element`` one record
traced, ``process_source_batch`` a traced source batch (short-way runs written at once:
``TraceWriter.open_window_elements``); ``fire_event_timers`` fires event time. Results,
errors, counters and trace are Flink's path's byte for byte (``WindowKernel.enabled = False``
turns the kernel off).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import length_hint
from typing import TYPE_CHECKING, Any, NoReturn

from winviz.copies import copy_record
from winviz.errors import WinvizError
from winviz.keygroups import JavaKey, user_key
from winviz.operators.batch import Batch, SourceArrival
from winviz.operators.simple import SinkOperator
from winviz.operators.window_functions import AggregateWindowFunction, ReduceWindowFunction
from winviz.operators.window_rules import is_element_late, next_pane, window_times
from winviz.state import ListStateDescriptor, add_to_contents, contents_step, first_contents
from winviz.time import MAX, MIN
from winviz.timers import EVENT
from winviz.trace.element_entry import BOTH_TIMERS_EXISTED, CLEANUP_TIMER_EXISTED, ElementRun
from winviz.windows.assigners import TumblingEventTimeWindows
from winviz.windows.triggers import EventTimeTrigger

if TYPE_CHECKING:
    from winviz.operators.window_operator import WindowOperator

_UNSET: Any = object()

# How far a record of ``process_source_batch`` got when it failed:
_NOT_ON_THE_SHORT_WAY = 0  # between records
_SELECTING_KEY = 1  # the key selector (or the key rule) failed: the record has no key
_KEYED = 2  # it has a key: its element record is written before the error
_GENERAL = 3  # on ``one_by_one``, which sets the current key and trigger context itself


_EMPTY = (0, 0, (), 0, 0)  # no cached window: (start, end, windows, max_ts, cleanup time)
_CLOSED = (0, 0, None, {}, 0, 0, False, None)  # no open window (``WindowKernel.open_window``)
_NOT_CACHED = (0, 0, None, None, 0, 0, False, False, {})  # (``WindowKernel.batch_window``)


class WindowKernel:
    """The fused loops of one ``WindowOperator``, given to it when the job is built."""

    enabled = True
    """Whether operators in the kernel's configuration take it (tests compare both paths)."""
    straight_sink: SinkOperator | None = None  # the output's one target, a sink (chaining)
    kept: list[tuple[Any, int]] | None = None  # (the traced firing's results for that sink)
    sink_record: tuple[str | None, int | None] = (None, None)  # (its name and watermark)

    @staticmethod
    def takes(op: WindowOperator) -> bool:
        """True when ``op`` is in the kernel's configuration (see the module docstring)."""
        return (
            WindowKernel.enabled
            and not op.assigner.is_merging
            and op.evictor is None
            and op.is_event_time
            and type(op.trigger) is EventTimeTrigger
            and not isinstance(op.contents, ListStateDescriptor)
        )

    def __init__(self, op: WindowOperator, traced: bool) -> None:
        self.op = op
        self.traced = traced  # the element loop takes over with a trace, the batch loop without
        self.tumbling = type(op.assigner) is TumblingEventTimeWindows
        # the traced loops' last tumbling window (``_EMPTY``'s fields), the one before it,
        # and the last ones taken the firing and the late way into
        self.window_cache: tuple[int, int, Sequence[Any], int, int] = _EMPTY
        self.other_window_cache: tuple[int, int, Sequence[Any], int, int] = _EMPTY
        self.firing_cache: tuple[int, int, Sequence[Any], int, int] = _EMPTY
        self.late_cache: tuple[int, int, Sequence[Any], int, int] = _EMPTY
        self.immutable_batch = False  # set: ``process_element`` makes no copies
        # reduce / aggregate contents are the result (with ``get_result``) without a
        # ProcessWindowFunction: ``fire_traced`` emits them
        fn = op.function
        self.contents_as_they_are = (
            type(fn) in (ReduceWindowFunction, AggregateWindowFunction)
            and fn.process_function is None
        )

    def fire_traced(
        self,
        key: Any,
        window: Any,
        max_ts: int,
        contents: Any,
        timer: bool = False,
        existed: bool | None = None,
        cleanup: int = 0,
    ) -> None:
        """``WindowOperator.emit_window_contents`` traced, for ``contents_as_they_are``
        (``key``: the internal key); ``timer``: fired by the timer at ``max_ts``;
        ``existed`` not None: that timer is the cleanup timer too (at ``cleanup``)."""
        op = self.op
        op.collector.timestamp = max_ts
        op.window_ctx.current_window = window
        fn = op.function
        shown = key.value if key.__class__ is JavaKey else key  # the user's key
        job, timers, name, trace = op.job, op.timers, op.name, op.trace
        now, wm = job.now, timers.current_watermark  # (job: the timers' clock)
        try:
            value = (
                contents
                if fn.__class__ is ReduceWindowFunction
                else fn.function.get_result(contents)
            )
        except Exception:
            if timer:  # (the timer's records come before the failure)
                trace.event_timer_fired(now, wm, name, shown, window, max_ts, True)  # type: ignore[union-attr]
            raise
        op.metrics["num_records_out"] += 1
        if timer:  # (kept for a sink straight after, whose record goes with these)
            trace.event_timer_emitted(  # type: ignore[union-attr]
                now, wm, name, shown, window, max_ts, now, op._watermark, value, *self.sink_record
            )
        else:
            trace.emitted(now, op._watermark, name, shown, None, max_ts, value)  # type: ignore[union-attr]
        if timer and self.kept is not None:
            self.kept.append((value, max_ts))
        else:
            op.output.collect(value, max_ts)
        # (WindowOperator._trace_fire: event time, the pane's timing is the watermark's)
        pane, timing = next_pane(op.panes, key, window, wm, max_ts)
        count = len(contents) if isinstance(contents, list) else None
        if existed is None:
            trace.fired(now, wm, name, shown, window, max_ts, value, pane, timing, count)  # type: ignore[union-attr]
        else:
            trace.fired_and_cleared(  # type: ignore[union-attr]
                now, wm, name, shown, window, max_ts, value, pane, timing, count, existed, cleanup
            )

    # -- elements ---------------------------------------------------------------------------

    def batch_window(self, windows: Sequence[Any], wm: int) -> tuple[Any, ...]:
        """For ``process_batch``: the tumbling window to cache, as (start, end, window,
        windows, max_timestamp, cleanup time, whether the cleanup timer is its own, whether
        it is open at ``wm``, its contents when open)."""
        op, window = self.op, windows[0]
        max_ts, cleanup = window_times(window, op.allowed_lateness)
        is_open = cleanup > wm and max_ts > wm
        return (
            window[0], window[1], window, (window,), max_ts, cleanup, cleanup not in (max_ts, MAX),
            is_open, op.state.slot(op.contents.name, window) if is_open else {},
        )  # fmt: skip

    def process_batch(self, batch: Batch) -> None:
        """``process_element`` for each record, untraced: the short way in the open cached
        window, else ``add_to_windows``; the clock is set only where a record leaves."""
        op = self.op
        job, key_selector, assign = op.job, op.key_selector, op.assigner.assign_windows
        internal_key = op.key_rule.internal_key
        copies = not batch.immutable
        desc, add_timer, wm = op.contents, op.timers.event_queue.add, op.timers.current_watermark
        first, (step, swap) = first_contents, contents_step(desc)  # (add_to_contents' two cases)
        # the cached tumbling window [c_start, c_end) (``batch_window``) and the one before
        # it, [other_start, other_end): records around a window's end alternate
        cached = other = _NOT_CACHED  # (unpacked at the first record: it is not in [0, 0))
        c_start = c_end = other_start = other_end = 0
        c_window = value = None
        key: Any = _UNSET  # the last key computed (Flink's path's current key)
        keyed = True  # False when the failing record's key selector failed: it has no key
        ctx = op.ctx
        ctx_key, ctx_window = ctx.key, ctx.window  # set on the way out, as Flink's path
        added: Any = _UNSET  # the key last added to the open cached window (with c_window,
        # the trigger context: taken into ctx_key and ctx_window when the cache changes)
        # a record's arrival time and source index are looked up only where it leaves
        # (``at_current``), at its position in ``remaining``
        arrivals, indices, n = batch.arrivals, batch.indices, len(batch)
        remaining = iter(batch.values)

        def position() -> int:
            return n - length_hint(remaining) - 1

        def at_current() -> None:
            at = position()
            job.now, job.record_index = arrivals[at], indices[at]

        try:
            for value, ts in zip(remaining, batch.stamps, strict=True):
                try:  # (a copy for the key selector, another for the window's function)
                    key = key_selector(copy_record(value) if copies else value)
                except Exception:
                    keyed = False
                    raise
                record = copy_record(value) if copies else value
                if key.__class__ is not str:  # (winviz.keygroups: Java's rule for keys)
                    key = internal_key(key)
                if ts is None or not c_start <= ts < c_end:
                    if added is not _UNSET:
                        ctx_key, ctx_window, added = added, c_window, _UNSET
                    if ts is not None and other_start <= ts < other_end:  # the two swap
                        cached, other = other, cached
                    else:
                        windows: Any = assign(value, ts, arrivals[position()])
                        # (cached only above MIN, which the assigner refuses)
                        if self.tumbling and windows[0][0] > MIN:
                            cached, other = self.batch_window(windows, wm), cached
                        else:
                            cached = (*cached[:7], False, cached[8])  # (not open)
                    (c_start, c_end, c_window, c_windows, c_max_ts, c_cleanup, c_own, c_open,
                     c_slot) = cached  # fmt: skip
                    other_start, other_end = other[0], other[1]
                if c_open:  # ts is in the cached window: the loop below for one window
                    current = c_slot.get(key)
                    if current is None:
                        c_slot[key] = new = first(desc, record)
                    else:
                        c_slot[key] = new = step(record, current) if swap else step(current, record)
                    if new is None:
                        raise op.none_result_error(key, c_window, value)
                    added = key
                    if current is None:  # the window's first element: its two timers
                        add_timer(key, c_window, c_max_ts)
                        if c_own:
                            add_timer(key, c_window, c_cleanup)
                    continue
                if ts is not None and c_start <= ts < c_end:
                    windows, times = c_windows, (c_max_ts, c_cleanup)
                else:
                    times = None
                ctx.key, ctx.window = ctx_key, ctx_window
                try:  # (the trigger context as it leaves it, also on a failure)
                    self.add_to_windows(
                        key, key, value, record, ts, windows, copies, at_current, times
                    )
                finally:
                    ctx_key, ctx_window = ctx.key, ctx.window
        except Exception as exc:
            at_current()
            if added is not _UNSET:
                ctx_key, ctx_window, added = added, c_window, _UNSET
            ctx.key, ctx.window = ctx_key, ctx_window
            shown = key if keyed and key is not _UNSET else None
            if isinstance(exc, WinvizError):
                op.annotate(exc, shown)
                raise
            raise op.user_error(exc, shown, value) from exc
        finally:  # every record taken, the one that failed included
            op.metrics["num_records_in"] += n - length_hint(remaining)
            if added is not _UNSET:
                ctx_key, ctx_window = added, c_window
            ctx.key, ctx.window = ctx_key, ctx_window
            if key is not _UNSET:
                op.current_key = key
        if batch:
            job.now = batch.arrivals[-1]

    def add_to_windows(
        self,
        key: Any,
        internal: Any,
        value: Any,
        record: Any,
        ts: int | None,
        windows: Sequence[Any],
        copies: bool,
        at_current: Callable[[], None] | None = None,
        times: tuple[int, int] | None = None,
    ) -> None:
        """``process_element``'s steps per window, then a late element in no window to the
        side output or dropped. ``key``: the user's, ``internal``: the engine's;
        ``at_current`` (untraced) sets the clock; ``times``: a cached window's."""
        op = self.op
        timers, trace, lateness = op.timers, op.trace, op.allowed_lateness
        wm, queue, desc = timers.current_watermark, timers.event_queue, op.contents
        now, name = op.job.now, op.name  # (the job is the timers' clock)
        skipped = True
        for window in windows:
            max_ts, cleanup = window_times(window, lateness) if times is None else times
            if cleanup <= wm:  # the window is late: Flink skips it
                if trace is not None:
                    trace.skipped_late_window(now, wm, name, key, window, ts, value)
                continue
            skipped = False
            add_timer, ctx = queue.add, op.ctx
            slot = op.state.slot(desc.name, window)
            current = slot.get(internal)
            slot[internal] = new = add_to_contents(desc, current, record)
            if new is None:
                raise op.none_result_error(internal, window, value)
            if copies:  # the next window's function gets a copy of its own
                record = copy_record(value)
            ctx.key, ctx.window = internal, window
            if trace is None:
                if max_ts <= wm:  # EventTimeTrigger.on_element: FIRE at once
                    at_current()  # type: ignore[misc]
                    op.current_key = internal
                    op.emit_window_contents(internal, window, window, new)
                    if cleanup != MAX:
                        add_timer(internal, window, cleanup)
                elif current is None:  # the window's first element: its two timers
                    add_timer(internal, window, max_ts)
                    if cleanup not in (max_ts, MAX):
                        add_timer(internal, window, cleanup)
                continue
            trace.assigned(now, wm, name, key, window, ts, value)
            if max_ts <= wm:  # EventTimeTrigger.on_element: FIRE at once
                trace.trigger(now, wm, name, key, window, "on_element", "FIRE")
                if self.contents_as_they_are:
                    self.fire_traced(internal, window, max_ts, new)
                else:
                    op.emit_window_contents(internal, window, window, new)
                if cleanup != MAX:
                    existed = not add_timer(internal, window, cleanup)
                    trace.timer_registered(
                        now, wm, name, key, window, cleanup, "event", window, existed
                    )
                continue
            existed = (internal, window, max_ts) in queue.live or not add_timer(
                internal, window, max_ts
            )
            trace.timer_registered(now, wm, name, key, window, max_ts, "event", window, existed)
            trace.trigger(now, wm, name, key, window, "on_element", "CONTINUE")
            if cleanup != MAX:  # (without lateness the trigger's timer: de-duplicated)
                existed = cleanup == max_ts or not add_timer(internal, window, cleanup)
                trace.timer_registered(
                    now, wm, name, key, window, cleanup, "event", window, existed
                )
        if skipped and is_element_late(ts, lateness, wm):  # (event-time windows)
            if at_current is not None:
                at_current()
            op.current_key = internal
            op.late_element(internal, value, ts)

    def process_element(self, value: Any, ts: int | None, cache: tuple[Any, ...] = ()) -> None:
        """``process_element`` traced (``cache``: the element's cached window, if known)."""
        op = self.op
        op.metrics["num_records_in"] += 1
        key = None
        copies = not self.immutable_batch
        try:
            key = op.key_selector(copy_record(value) if copies else value)
            # (winviz.keygroups: state and timers by the internal key, the trace the user's)
            internal = key if key.__class__ is str else op.key_rule.internal_key(key)
            op.current_key = internal
            now = op.job.now  # (the timers' clock)
            op.trace.element(now, op.timers.current_watermark, op.name, key, ts, value)  # type: ignore[union-attr]
            record = copy_record(value) if copies else value
            if cache:
                windows, times = cache[2], cache[3:]
            else:
                windows, times = self.windows_of(value, ts, now)
            self.add_to_windows(key, internal, value, record, ts, windows, copies, None, times)
        except WinvizError as exc:
            op.annotate(exc, key)
            raise
        except Exception as exc:
            raise op.user_error(exc, key, value) from exc

    def windows_of(
        self, value: Any, ts: int | None, now: int
    ) -> tuple[Sequence[Any], tuple[int, int] | None]:
        """An element's windows: the cached tumbling window or the one cached before (the
        two swap), else the assigner's (cached); with a cached window's times."""
        start, end, cached, max_ts, cleanup = self.window_cache
        if ts is not None and start <= ts < end:
            return cached, (max_ts, cleanup)
        other = self.other_window_cache
        if ts is not None and other[0] <= ts < other[1]:  # the window cached before: swap
            self.window_cache, self.other_window_cache = other, self.window_cache
            return other[2], other[3:]
        op = self.op
        windows = op.assigner.assign_windows(value, ts, now)
        if self.tumbling and windows[0][0] > MIN:  # MIN (refused) never hits
            window = windows[0]
            self.other_window_cache = self.window_cache
            times = window_times(window, op.allowed_lateness)
            self.window_cache = (window[0], window[1], windows, *times)
            return windows, times
        return windows, None

    def open_window(
        self, cache: tuple[int, int, Sequence[Any], int, int], wm: int
    ) -> tuple[Any, ...]:
        """``cache``'s window if open at ``wm``, as (start, end, window, contents,
        max_timestamp, cleanup time, whether the cleanup timer is its own, whether it has
        one); else ``_CLOSED``."""
        start, end, cached, max_ts, cleanup = cache
        if not cached or cleanup <= wm or max_ts <= wm:
            return _CLOSED
        window = cached[0]
        cleanup_timer = cleanup != MAX
        op = self.op
        return (
            start, end, window, op.state.slot(op.contents.name, window), max_ts, cleanup,
            cleanup_timer and cleanup != max_ts, cleanup_timer,
        )  # fmt: skip

    def cached_way(self, wm: int, caches: Sequence[Any], firing: bool) -> tuple[Any, ...]:
        """The first of ``caches`` whose window fires at once at ``wm`` (``firing``) or is
        past the allowed lateness, kept in ``firing_cache`` / ``late_cache``; else empty."""
        for cache in caches:
            _, _, cached, max_ts, cleanup = cache
            if cached and (max_ts <= wm < cleanup if firing else cleanup <= wm):
                if firing:
                    self.firing_cache = cache
                else:
                    self.late_cache = cache
                return cache
        return _EMPTY

    def ways(self, wm: int) -> tuple[tuple[Any, ...], ...]:
        """The open window and the one before it, the firing and the late way's windows."""
        caches = (self.window_cache, self.other_window_cache)
        return (
            self.open_window(caches[0], wm),
            self.open_window(caches[1], wm),
            self.cached_way(wm, (*caches, self.firing_cache), True),
            self.cached_way(wm, (*caches, self.late_cache), False),
        )

    def process_source_batch(self, batch: Batch, stamps: list[int], arrival: SourceArrival) -> None:
        """The first ``len(stamps)`` records of a traced source batch, each as its
        ``arrival`` record then ``process_element``: the short way (``write_run``) or
        ``one_by_one``."""
        op = self.op
        job, timers, trace, ctx, desc = op.job, op.timers, op.trace, op.ctx, op.contents
        wm = timers.current_watermark
        key_selector, internal_key = op.key_selector, op.key_rule.internal_key
        add_timer, copies = timers.event_queue.add, not batch.immutable
        before = arrival.position - 1  # (the source offset of record ``done`` is before + done)
        first, (step, swap) = first_contents, contents_step(desc)  # (add_to_contents' two cases)
        entries = 0  # short-way records written
        # the run of short-way records (``write_run``): their keys, windows and timer bits
        keys: list[Any] = []
        windows: list[Any] = []
        bits: list[int] = []
        add_key, add_window, add_bits = keys.append, windows.append, bits.append
        run = (keys, windows, bits)
        taken = batch if len(batch) == len(stamps) else batch[: len(stamps)]
        columns = ElementRun(  # (the columns of the records taken, shared by their entries)
            wm, arrival.watermark, taken.arrivals, taken.stamps, arrival.position,
            taken.values, stamps,
        )  # fmt: skip
        # the open cached window [start, end) (``open_window``), the one before it
        # [other_start, other_end), the firing and the late way's windows
        opened, other, firing, late = self.ways(wm)
        start, end, window, slot, max_ts, cleanup, own, has_cleanup = opened
        other_start, other_end = other[0], other[1]
        last_key, ctx_key, ctx_window = op.current_key, ctx.key, ctx.window
        done, progress = 0, _NOT_ON_THE_SHORT_WAY
        now = index = value = key = internal = source_ts = None
        self.immutable_batch = not copies
        try:
            for now, index, value, source_ts, ts in zip(
                batch.arrivals, batch.indices, batch.values, batch.stamps, stamps, strict=False
            ):  # (the first len(stamps) records)
                done += 1
                if not start <= ts < end:
                    if not other_start <= ts < other_end:
                        if keys:  # the run ends here
                            entries += self.write_run(done - 1, run, has_cleanup, columns, arrival)
                        job.now, job.record_index = now, index
                        arrival.write(trace, now, value, source_ts, before + done)
                        progress = _GENERAL  # each way reports its errors, as one by one
                        op.current_key, ctx.key, ctx.window = last_key, ctx_key, ctx_window
                        opened, other, firing, late = self.one_by_one(
                            value, ts, copies, wm, (opened, other, firing, late)
                        )
                        last_key, ctx_key, ctx_window = op.current_key, ctx.key, ctx.window
                        start, end, window, slot, max_ts, cleanup, own, has_cleanup = opened
                        other_start, other_end = other[0], other[1]
                        progress = _NOT_ON_THE_SHORT_WAY
                        continue
                    # the open window before: the two swap (a run ends if its cleanup timers differ)
                    if keys and other[7] != has_cleanup:
                        entries += self.write_run(done - 1, run, has_cleanup, columns, arrival)
                    opened, other = other, opened
                    start, end, window, slot, max_ts, cleanup, own, has_cleanup = opened
                    other_start, other_end = other[0], other[1]
                # the short way: into the run
                progress = _SELECTING_KEY  # (a copy for the key selector, one for the function)
                key = key_selector(copy_record(value) if copies else value)
                record = copy_record(value) if copies else value
                # (winviz.keygroups: Java's rule for keys; the trace shows the user's key)
                internal = key if key.__class__ is str else internal_key(key)
                progress = _KEYED
                current = slot.get(internal)
                if current is None:
                    slot[internal] = new = first(desc, record)
                else:
                    slot[internal] = new = step(record, current) if swap else step(current, record)
                if new is None:
                    raise op.none_result_error(internal, window, value)
                existed = BOTH_TIMERS_EXISTED  # (both exist since the key's first element in it)
                if current is None:  # the window's first element for this key
                    existed = 0 if add_timer(internal, window, max_ts) else 1
                    if not own or not add_timer(internal, window, cleanup):
                        existed |= CLEANUP_TIMER_EXISTED
                add_key(key)
                add_window(window)
                add_bits(existed)
                progress = _NOT_ON_THE_SHORT_WAY
                last_key, ctx_key, ctx_window = internal, internal, window
        except Exception as exc:
            job.now, job.record_index = now, index
            if keys:  # the run ends before the failing record's records
                entries += self.write_run(done - 1, run, has_cleanup, columns, arrival)
            if progress == _GENERAL:  # the way reported it, with its context
                last_key, ctx_key, ctx_window = op.current_key, ctx.key, ctx.window
                raise
            if progress == _NOT_ON_THE_SHORT_WAY:
                raise  # (the engine's own, between records)
            ctx.key, ctx.window = ctx_key, ctx_window
            if progress == _KEYED:
                last_key = internal
            shown = key if progress == _KEYED else _UNSET
            self.short_way_failed(exc, arrival, now, value, source_ts, before + done, ts, shown)
        finally:
            self.immutable_batch = False
            if keys:  # (the batch's last record ends the run)
                entries += self.write_run(done, run, has_cleanup, columns, arrival)
            op.metrics["num_records_in"] += entries
            op.current_key, ctx.key, ctx.window = last_key, ctx_key, ctx_window
            arrival.taken = done
        if done:
            job.now, job.record_index = now, index

    def write_run(
        self,
        end: int,
        run: tuple[list[Any], list[Any], list[int]],
        has_cleanup: bool,
        columns: ElementRun,
        arrival: SourceArrival,
    ) -> int:
        """Write and clear the ``run`` of short-way records ending before record ``end`` of
        the batch (``columns``: its ``ElementRun``): keys, windows, timer bits; returns how
        many."""
        keys, windows, bits = run
        n, op = len(keys), self.op
        op.trace.open_window_elements(  # type: ignore[union-attr]
            arrival.source, op.name, op.allowed_lateness if has_cleanup else None, columns,
            end - n, keys, windows, bits,
        )  # fmt: skip
        del keys[:], windows[:], bits[:]
        return n

    def short_way_failed(
        self,
        exc: Exception,
        arrival: SourceArrival,
        now: int,
        value: Any,
        source_ts: int | None,
        position: int,
        ts: int,
        key: Any,
    ) -> NoReturn:
        """Raise ``exc`` of a short-way record as ``process_element`` would."""
        op = self.op
        op.metrics["num_records_in"] += 1
        trace: Any = op.trace
        arrival.write(trace, now, value, source_ts, position)
        if key is _UNSET:
            key = None
        else:
            trace.element(now, op.timers.current_watermark, op.name, key, ts, value)
        if isinstance(exc, WinvizError):
            op.annotate(exc, key)
            raise exc
        raise op.user_error(exc, key, value) from exc

    def one_by_one(
        self, value: Any, ts: int, copies: bool, wm: int, ways: tuple[Any, Any, Any, Any]
    ) -> tuple[Any, Any, Any, Any]:
        """``process_element`` for a record outside the open windows; returns the ``ways``,
        found again when it cached a new window."""
        opened, other, firing, late = ways
        for way in (firing, late):
            if way[0] <= ts < way[1]:
                self.process_element(value, ts, way)
                return ways
        cache = self.window_cache
        self.process_element(value, ts)
        if self.window_cache is not cache:  # a new cached window: the ways into it
            new = (cache := self.window_cache,)
            if (found := self.cached_way(wm, new, True))[0] < found[1]:
                firing = found
            if (found := self.cached_way(wm, new, False))[0] < found[1]:
                late = found
            if opened[0] < opened[1]:
                other = opened
            opened = self.open_window(cache, wm)
        return opened, other, firing, late

    # -- event time ---------------------------------------------------------------------

    def fire_event_timers(self, watermark: int) -> None:
        """``advance_watermark`` with ``on_event_time`` in one loop: the timer at
        ``max_timestamp`` FIREs, the cleanup timer clears the contents and deletes it. A
        ``ProcessWindowFunction``, or panes kept untraced, take the timer service's loop."""
        op = self.op
        timers, trace = op.timers, op.trace
        queue = timers.event_queue
        if not queue.heap or queue.heap[0][0] > watermark:
            return  # no timer due: the earliest (live or deleted) is after the watermark
        if not self.contents_as_they_are or (trace is None and op.panes):
            timers.fire_due(queue, EVENT, watermark, queue._counter, {}, watermark)
            return
        if trace is None:
            self._fire_untraced(watermark, self.straight_sink)
            return
        live, state, cname, lateness = queue.live, op.state, op.contents.name, op.allowed_lateness
        name, ctx, window_ctx = op.name, op.ctx, op.window_ctx
        cleaned: list[Any] = []  # windows cleaned up here: their shared details go at the end
        now = timers.current_processing_time  # (it stands still while a watermark advances)
        sink = self.straight_sink  # (fire_traced keeps for it)
        self.kept = [] if sink is not None else None
        self.sink_record = (None, None) if sink is None else (sink.name, sink._watermark)
        key = window = None
        last_window: Any = None  # the window whose max_timestamp and cleanup time these are
        max_ts = cleanup = 0
        try:
            for ts, key, window in queue.pop_due(watermark):
                op.current_key = key
                ctx.key, ctx.window = key, window
                if window is not last_window:  # (timers come window by window)
                    last_window, (max_ts, cleanup) = window, window_times(window, lateness)
                clears = ts == cleanup
                contents = state.get(cname, key, window) if ts == max_ts else None
                if contents is not None:  # (with its timer's records, and the cleanup's)
                    existed = (key, window, max_ts) in live if clears else None
                    self.fire_traced(key, window, max_ts, contents, True, existed, cleanup)
                else:
                    shown = user_key(key)
                    trace.event_timer_fired(now, watermark, name, shown, window, ts, ts == max_ts)
                if clears:  # clear_all_state (the function's clear does nothing)
                    state.clear(cname, key, window)
                    existed = live.pop((key, window, max_ts), None) is not None
                    if contents is None:
                        trace.event_window_cleared(
                            now, watermark, name, shown, window, max_ts, existed, cleanup
                        )
                    window_ctx.current_window = window
                    if op.panes:
                        op.panes.pop((key, window), None)
                    cleaned.append(window)
        except WinvizError:
            raise
        except Exception as exc:
            raise op.user_error(exc, key, None, window) from exc
        finally:
            if cleaned:
                trace.forget(cleaned)
            if self.kept:
                sink.keep(self.kept)  # type: ignore[union-attr]
            self.kept, self.sink_record = None, (None, None)

    def _fire_untraced(self, watermark: int, sink: SinkOperator | None) -> None:
        """``fire_event_timers`` without a trace (results kept for ``sink``, if any); the
        contexts' keys and windows are left as Flink's path leaves them."""
        op = self.op
        queue = op.timers.event_queue
        live = queue.live
        slots, cname = op.state.slots, op.contents.name
        lateness = op.allowed_lateness
        fn = op.function
        get_result = fn.function.get_result if type(fn) is AggregateWindowFunction else None
        metrics, collect = op.metrics, op.output.collect
        key = window = last = last_key = None
        # the window of ``slot``, its max_timestamp and cleanup time (timers come by window)
        slot_window: Any = None
        slot: dict[Any, Any] | None = None
        max_ts = cleanup = 0
        emitted = 0
        kept: list[tuple[Any, int]] | None = [] if sink is not None else None
        try:
            for ts, key, window in queue.pop_due(watermark):
                last, last_key = window, key
                if window is not slot_window:
                    slot_window, slot = window, slots.get((cname, window))
                    max_ts, cleanup = window_times(window, lateness)
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
                        result = contents if get_result is None else get_result(contents)
                        if kept is None:
                            collect(result, max_ts)
                        else:
                            kept.append((result, max_ts))
                elif ts == cleanup:  # the cleanup timer also deletes the trigger's timer
                    live.pop((key, window, max_ts), None)
        except WinvizError:
            raise
        except Exception as exc:
            raise op.user_error(exc, key, None, window) from exc
        finally:
            metrics["num_records_out"] += emitted
            if kept:
                sink.keep(kept)  # type: ignore[union-attr]
            if last is not None:  # the last timer taken
                op.current_key = last_key
                op.ctx.key, op.ctx.window = last_key, last
                op.window_ctx.current_window = last
                op.collector.timestamp = last.max_timestamp()
