"""The window kernel: Flink's WindowOperator path for one configuration, fused into tight loops.

**Which Flink path it equals.** ``WindowOperator.processElement`` and ``onEventTime``
(``winviz.operators.window_operator``, read that first) for exactly this configuration
(``WindowKernel.takes``):

- a non-merging event-time assigner (``TumblingEventTimeWindows``,
  ``SlidingEventTimeWindows``, with or without offset);
- Flink's ``EventTimeTrigger`` itself (not wrapped, not a subclass);
- no evictor;
- incremental contents: ``reduce`` or ``aggregate``, with or without a
  ``ProcessWindowFunction`` (ReducingState / AggregatingState, never ListState);
- any allowed lateness, with or without a late-data side output.

For it, Flink's steps come down to these (each one a consequence of the configuration):

- ``processElement``: for each assigned window that is not late (``cleanupTime(window) >
  watermark``), add the element to the window's state, then ``EventTimeTrigger.onElement``:
  FIRE if ``window.maxTimestamp() <= watermark`` (``emitWindowContents``), else register an
  event-time timer at ``maxTimestamp`` and CONTINUE; then ``registerCleanupTimer`` (none when
  the cleanup time is MAX; without lateness it is the trigger's own timer, de-duplicated).
  An element in no window that is late itself goes to the side output or is counted dropped.
- ``onEventTime``: ``EventTimeTrigger.onEventTime`` FIREs when the timer is the window's
  ``maxTimestamp`` and never registers a timer (so no timer loop can form:
  ``winviz.timers``); at the cleanup time ``clearAllState`` clears the contents and
  ``EventTimeTrigger.clear`` deletes the ``maxTimestamp`` timer.

**What the loops use to go fast.** The watermark cannot change while records go through
(it changes only between them, in ``process_watermark``), so a window's lateness and
whether it fires at once are known for a whole batch. A window that already holds contents
for a key already has both its timers (registered with its first element; neither can have
fired nor been deleted while its time is after the watermark), so only a key's first element
in a window registers them. A tumbling assigner gives one window per element, so the last
window is kept (the *cached* window) while elements keep falling into it; an **open** window
is one the watermark has not reached (neither late nor due), where an element only adds to
the contents and, the first time for its key, registers the two timers.

The loops:

- ``process_batch``, trace off: a batch of records (``winviz.operators.batch``);
- ``process_element``, trace on: one record, each window's records written at once (a
  source batch of one record takes it: ``one_record``);
- ``process_source_batch``, trace on: a source batch chained through the timestamps
  operator straight into this window (``winviz.operators.chaining``), the elements in the
  open cached windows written a run at a time (``TraceWriter.open_window_elements``);
- ``fire_event_timers`` (``winviz.operators.window_kernel_timers``, ``EventTimeFiring``):
  the timer service's event-time firing (``InternalTimerService.fire_due_event_timers``),
  with or without a trace; without a trace and without a ProcessWindowFunction or
  per-window state it takes ``_fire_untraced``, which emits the contents as they are.

**The rules they share.** The loops call the operator's rules where they decide per window
or per firing (``winviz.operators.window_rules``: ``cleanup_time`` through
``WindowOperator.cleanup_time``, ``is_element_late``, ``next_pane``) and the state's add
(``winviz.state.add_to_contents``, as ``KeyedStateBackend.add`` does); the two short ways'
per-record add to the open window's contents calls that rule's two cases
(``first_contents``, and ``contents_step``'s step, looked up once per batch: the user's
reduce function itself, with no frame in between — a call per record there costs
measurably).

They give the same results, errors, counters and trace, byte for byte, as Flink's path:
``tests/test_perf_paths.py`` and ``tests/test_batching.py`` generate jobs of every
configuration that takes the kernel (reduce and aggregate, each with and without a
ProcessWindowFunction, with lateness and side outputs, one or several subtasks) and compare
both paths; the conformance transcripts (and with them the real-Flink differential tier,
``tests/flink``) run window operators the way a job does, with the kernel where it applies.
``WindowKernel.enabled = False`` makes every window operator take Flink's path.

User functions get copies of records that could change in place (``winviz.copies``): the key
selector, the reduce function's second argument and ``AggregateFunction.add``'s record. A
batch whose values are all immutable (``Batch.immutable``) skips the copies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from operator import length_hint
from typing import TYPE_CHECKING, Any, NoReturn

from winviz.copies import copy_record
from winviz.errors import WinvizError
from winviz.keygroups import JavaKey
from winviz.operators.batch import Batch, SourceArrival
from winviz.operators.window_functions import ReduceWindowFunction
from winviz.operators.window_kernel_timers import CONTENTS_AS_THEY_ARE, EventTimeFiring
from winviz.operators.window_rules import is_element_late, next_pane
from winviz.state import ListStateDescriptor, add_to_contents, contents_step, first_contents
from winviz.time import MAX, MIN
from winviz.trace.element_entry import BOTH_TIMERS_EXISTED, CLEANUP_TIMER_EXISTED
from winviz.windows.assigners import TumblingEventTimeWindows
from winviz.windows.triggers import EventTimeTrigger

if TYPE_CHECKING:
    from winviz.operators.window_operator import WindowOperator

_UNSET: Any = object()

# How far a record taken the short way by ``process_source_batch`` got when it failed.
_NOT_ON_THE_SHORT_WAY = 0  # between records (it is in the run of short-way records, or done)
_SELECTING_KEY = 1  # the key selector (or the key rule) failed: the record has no key
_KEYED = 2  # it has a key: its element record is written before the error
# ... and on the other ways (``one_by_one``), which set the current key and the trigger
# context themselves, as one by one: the operator's are the ones to keep
_GENERAL = 3


class _FiringWindow:
    """The cached window an element fires at once (``WindowKernel.firing_way``): [start,
    end), the window, its max_timestamp and cleanup time; its contents, looked up at its
    first element of a batch."""

    __slots__ = ("cleanup", "contents", "end", "max_ts", "start", "window")

    def __init__(self, start: int, end: int, window: Any, max_ts: int, cleanup: int) -> None:
        self.start, self.end, self.window = start, end, window
        self.max_ts, self.cleanup = max_ts, cleanup
        self.contents: dict[Any, Any] | None = None


_NOT_FIRING = _FiringWindow(0, 0, None, 0, 0)  # no window fires at once (an empty range)
_CLOSED = (0, 0, None, {}, 0, 0, False, None)  # no open window (``WindowKernel.open_window``)
_NOT_CACHED = (0, 0, None, None, 0, 0, False, False, {})  # (``WindowKernel.batch_window``)


class WindowKernel(EventTimeFiring):
    """The fused loops of one ``WindowOperator`` in the kernel's configuration (see the
    module docstring). Chosen when the job is built (``winviz.operators.chaining``): the
    operator hands its element path over to it (``WindowOperator.process_element`` with a
    trace, ``process_batch`` without one) and its timer service its event-time firing
    (``InternalTimerService.fire_due_event_timers``)."""

    enabled = True
    """Whether operators in the kernel's configuration take it (``winviz.operators.chaining``
    installs it); tests turn it off to compare the kernel with Flink's path."""

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
        self.traced = traced
        """Which element path the operator hands over (``WindowOperator.process_element`` /
        ``process_batch``): the element loop with a trace, the batch loop without one."""
        self.tumbling = type(op.assigner) is TumblingEventTimeWindows
        # the traced loops' last tumbling window: (start, end, [window] as the assigner gave
        # it, its max_timestamp, its cleanup time); empty at first
        self.window_cache: tuple[int, int, Sequence[Any], int, int] = (0, 0, (), 0, 0)
        # the one cached before it (late records around two windows' ends alternate)
        self.other_window_cache: tuple[int, int, Sequence[Any], int, int] = (0, 0, (), 0, 0)
        # the last cached window that ``process_source_batch`` took the firing way into
        # (found again in the next batch while the watermark keeps it within the lateness)
        self.firing_cache: tuple[int, int, Sequence[Any], int, int] = (0, 0, (), 0, 0)
        # the last cached window that ``process_source_batch`` took the late way into (past
        # the lateness: it stays so, the watermark never goes back)
        self.late_cache: tuple[int, int, Sequence[Any], int, int] = (0, 0, (), 0, 0)
        self.immutable_batch = False
        """True while ``process_source_batch`` hands records of an immutable batch
        (``Batch.immutable``) to ``process_element``, which then makes no copies of them."""
        # a reduce / aggregate without a ProcessWindowFunction emits its contents as they are
        # (the traced loops fire it with ``fire_traced``)
        fn = op.function
        self.contents_as_they_are = type(fn) in CONTENTS_AS_THEY_ARE and fn.process_function is None

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
        """``WindowOperator.emit_window_contents`` with a trace, for a reduce / aggregate
        without a ProcessWindowFunction (``contents_as_they_are``): the one result (the
        contents, or ``AggregateFunction.get_result`` of them) is emitted stamped
        ``max_ts`` — its ``emitted`` record, then downstream — and the ``fired`` record
        follows with its pane index and timing (``_trace_fire``). The same records, counters
        and state as Flink's path; ``key`` is the internal key (the operator's current
        key). ``timer``: fired by the window's event-time timer at ``max_ts``, whose
        ``timer_fired`` and ``trigger`` (FIRE) records go in the write of ``emitted``
        (``TraceWriter.event_timer_emitted``). ``existed`` not None: that timer is also the
        window's cleanup timer (at ``cleanup``), which the caller clears next: ``fired`` goes
        with ``EventTimeTrigger.clear``'s ``timer_deleted`` (the max_timestamp timer
        ``existed``) and ``cleanup`` (``TraceWriter.fired_and_cleared``)."""
        op = self.op
        op.collector.timestamp = max_ts
        op.window_ctx.current_window = window
        fn = op.function
        shown = key.value if key.__class__ is JavaKey else key  # the user's key
        job, timers, name, trace = op.job, op.timers, op.name, op.trace
        try:
            value = (
                contents
                if fn.__class__ is ReduceWindowFunction
                else fn.function.get_result(contents)
            )
        except Exception:
            if timer:  # (the timer's records come before the failure)
                trace.event_timer_fired(  # type: ignore[union-attr]
                    timers.current_processing_time, timers.current_watermark, name, shown,
                    window, max_ts, True,
                )  # fmt: skip
            raise
        op.metrics["num_records_out"] += 1
        if timer:  # (kept for a sink straight after, whose record goes with these)
            trace.event_timer_emitted(  # type: ignore[union-attr]
                timers.current_processing_time, timers.current_watermark, name, shown, window,
                max_ts, job.now, op._watermark, value, *self.sink_record,
            )  # fmt: skip
        else:
            trace.emitted(job.now, op._watermark, name, shown, None, max_ts, value)  # type: ignore[union-attr]
        if timer and self.kept is not None:
            self.kept.append((value, max_ts))
        else:
            op.output.collect(value, max_ts)
        # _trace_fire: event time, so the pane's timing is the watermark's
        wm = timers.current_watermark
        pane, timing = next_pane(op.panes, key, window, wm, max_ts)
        count = len(contents) if isinstance(contents, list) else None
        now = timers.current_processing_time
        if existed is None:
            trace.fired(now, wm, name, shown, window, max_ts, value, pane, timing, count)  # type: ignore[union-attr]
        else:
            trace.fired_and_cleared(  # type: ignore[union-attr]
                now, wm, name, shown, window, max_ts, value, pane, timing, count, existed, cleanup
            )

    # -- elements ---------------------------------------------------------------------------

    def batch_window(self, windows: Sequence[Any], wm: int) -> tuple[Any, ...]:
        """For ``process_batch``: the tumbling window the assigner gave (``windows``), to
        cache, as (start, end, window, windows, its max_timestamp, its cleanup time, whether
        its cleanup timer is a timer of its own — neither the max_timestamp timer nor MAX —,
        whether it is open at watermark ``wm``, its contents when open)."""
        op, window = self.op, windows[0]
        max_ts = window.max_timestamp()
        cleanup = op.cleanup_time(window) if op.allowed_lateness else max_ts
        is_open = cleanup > wm and max_ts > wm
        return (
            window[0], window[1], window, (window,), max_ts, cleanup, cleanup not in (max_ts, MAX),
            is_open, op.state.slot(op.contents.name, window) if is_open else {},
        )  # fmt: skip

    def process_batch(self, batch: Batch) -> None:
        """``process_element`` for each record of ``batch``, without a trace: skip late
        windows, add to state, fire at once if the watermark is already past the window's
        end (else an event-time timer at ``max_timestamp``), register the cleanup timer,
        side-output or count a late element. The processing clock (``job.now``) is read only
        where a record leaves (a firing, a late element, an error), so it is set there and
        at the end. An element in the open cached window takes the short way: the same
        steps without the per-window checks."""
        op = self.op
        job, key_selector, assign = op.job, op.key_selector, op.assigner.assign_windows
        internal_key = op.key_rule.internal_key
        copies = not batch.immutable
        desc, add_timer, wm = op.contents, op.timers.event_queue.add, op.timers.current_watermark
        first, (step, swap) = first_contents, contents_step(desc)  # (add_to_contents' two cases)
        # the cached tumbling window (``batch_window``; [c_start, c_end), empty until one is
        # cached) and the one cached before it, [other_start, other_end): records out of
        # order around a window's end alternate between the two
        cached = other = _NOT_CACHED  # (unpacked at the first record: it is not in [0, 0))
        c_start = c_end = other_start = other_end = 0
        c_window = value = None
        key: Any = _UNSET  # the last key computed (Flink's path's current key)
        keyed = True  # False when the failing record's key selector failed: it has no key
        ctx = op.ctx
        ctx_key, ctx_window = ctx.key, ctx.window  # set on the way out, as Flink's path
        added: Any = _UNSET  # the key last added to the open cached window (with c_window,
        # the trigger context: taken into ctx_key and ctx_window when the cache changes)
        # The loop reads two columns; the current record's arrival time and source index are
        # looked up only where a record leaves (``at_current``): its position (``position``)
        # is the number of values taken from ``remaining`` less one.
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
                        # cached only above MIN, so that MIN (refused by the assigner) never
                        # hits; windows not cached take the loop below
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
                    windows = c_windows
                ctx.key, ctx.window = ctx_key, ctx_window
                try:  # (the trigger context as it leaves it, also on a failure)
                    self.add_to_windows(key, value, record, ts, windows, copies, at_current)
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
        value: Any,
        record: Any,
        ts: int | None,
        windows: Sequence[Any],
        copies: bool,
        at_current: Callable[[], None],
    ) -> None:
        """``process_batch``'s way for an element outside the open cached window:
        ``process_element``'s steps per window without a trace — skip a late window, add to
        state, fire at once if the watermark is already past the window's end (else the
        window's timers, at its first element), register the cleanup timer —, then a late
        element in no window to the side output or counted dropped. The trigger context is
        left as the last window added to sets it; ``at_current`` sets the clock to the
        record's where it leaves (a firing, a late element)."""
        op = self.op
        wm, add_timer, ctx = op.timers.current_watermark, op.timers.event_queue.add, op.ctx
        skipped = True
        for window in windows:
            max_ts = window.max_timestamp()
            cleanup = op.cleanup_time(window) if op.allowed_lateness else max_ts
            if cleanup <= wm:
                continue  # the window is late: Flink skips it
            skipped = False
            slot = op.state.slot(op.contents.name, window)
            current = slot.get(key)
            slot[key] = new = add_to_contents(op.contents, current, record)
            if new is None:
                raise op.none_result_error(key, window, value)
            if copies:  # the next window's function gets a copy of its own
                record = copy_record(value)
            ctx.key, ctx.window = key, window
            if max_ts <= wm:  # EventTimeTrigger.on_element: FIRE at once
                at_current()
                op.current_key = key
                op.emit_window_contents(key, window, window, new)
                if cleanup != MAX:
                    add_timer(key, window, cleanup)
            elif current is None:  # the window's first element: its two timers
                add_timer(key, window, max_ts)
                if cleanup not in (max_ts, MAX):
                    add_timer(key, window, cleanup)
        if skipped and op.is_element_late(ts):
            at_current()
            op.current_key = key
            op.late_element(key, value, ts)

    def process_element(self, value: Any, ts: int | None) -> None:
        """``process_element`` with a trace: the same steps and the same trace records as
        Flink's path, each window's records written with one ``extend`` (the trace's storage
        is flat). No copies while ``immutable_batch`` is set (``copy_record`` would hand the
        value over as it is)."""
        op = self.op
        op.metrics["num_records_in"] += 1
        key = None
        copies = not self.immutable_batch
        try:
            key = op.key_selector(copy_record(value) if copies else value)
            # state and timers are kept by the internal key, the trace shows the user's key
            # (winviz.keygroups: Java's rule for keys)
            internal = key if key.__class__ is str else op.key_rule.internal_key(key)
            op.current_key = internal
            timers = op.timers
            now, wm, name = timers.current_processing_time, timers.current_watermark, op.name
            trace: Any = op.trace
            trace.element(now, wm, name, key, ts, value)
            queue = timers.event_queue
            add_timer, live = queue.add, queue.live
            slot_of, desc = op.state.slot, op.contents
            lateness = op.allowed_lateness
            skipped = True
            windows, cached, cached_max_ts, cached_cleanup = self.windows_of(value, ts, now)
            for window in windows:
                if windows is cached:  # (its times are the cache's)
                    max_ts, cleanup = cached_max_ts, cached_cleanup
                else:
                    max_ts = window.max_timestamp()
                    cleanup = op.cleanup_time(window) if lateness else max_ts
                if cleanup <= wm:
                    trace.skipped_late_window(now, wm, name, key, window, ts, value)
                    continue
                skipped = False
                slot = slot_of(desc.name, window)
                current = slot.get(internal)
                # (winviz.copies: user functions get copies)
                record = copy_record(value) if copies else value
                slot[internal] = new = add_to_contents(desc, current, record)
                if new is None:
                    raise op.none_result_error(internal, window, value)
                ctx = op.ctx
                ctx.key, ctx.window = internal, window
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
                existed = (internal, window, max_ts) in live or not add_timer(
                    internal, window, max_ts
                )
                trace.timer_registered(now, wm, name, key, window, max_ts, "event", window, existed)
                trace.trigger(now, wm, name, key, window, "on_element", "CONTINUE")
                if cleanup == MAX:
                    continue
                # (without lateness the cleanup timer is the trigger's: de-duplicated)
                existed = cleanup == max_ts or not add_timer(internal, window, cleanup)
                trace.timer_registered(
                    now, wm, name, key, window, cleanup, "event", window, existed
                )
            # (is_element_late: the kernel's windows are event-time ones)
            if skipped and is_element_late(ts, lateness, wm):
                self.late_element(key, internal, value, ts)
        except WinvizError as exc:
            op.annotate(exc, key)
            raise
        except Exception as exc:
            raise op.user_error(exc, key, value) from exc

    def windows_of(
        self, value: Any, ts: int | None, now: int
    ) -> tuple[Sequence[Any], Sequence[Any], int, int]:
        """``process_element``'s windows of an element: the cached tumbling window when ``ts``
        is in it (as the assigner would give it again), or in the one cached before (the two
        swap), else the assigner's (a tumbling one is cached, the one before kept); with the
        cached windows, their max_timestamp and cleanup time."""
        start, end, cached, max_ts, cleanup = self.window_cache
        if ts is not None and start <= ts < end:
            return cached, cached, max_ts, cleanup
        other = self.other_window_cache
        if ts is not None and other[0] <= ts < other[1]:  # the window cached before: swap
            self.window_cache, self.other_window_cache = other, self.window_cache
            return other[2], other[2], other[3], other[4]
        op = self.op
        windows = op.assigner.assign_windows(value, ts, now)
        if self.tumbling and windows[0][0] > MIN:  # MIN (refused) never hits
            window = windows[0]
            max_ts = window.max_timestamp()
            cleanup = op.cleanup_time(window) if op.allowed_lateness else max_ts
            self.other_window_cache = self.window_cache
            self.window_cache = (window[0], window[1], windows, max_ts, cleanup)
            return windows, windows, max_ts, cleanup
        return windows, cached, max_ts, cleanup

    def open_window(
        self, cache: tuple[int, int, Sequence[Any], int, int], wm: int
    ) -> tuple[Any, ...]:
        """For ``process_source_batch``: the window of ``cache`` (``window_cache`` or
        ``other_window_cache``) if it is open at watermark ``wm`` (neither late nor firing at
        once), as (start, end, window, its contents, its max_timestamp, its cleanup time,
        whether its cleanup timer is its own, whether it has one); else ``_CLOSED`` (an empty
        range: a record takes the other ways)."""
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

    def firing_way(self, wm: int, caches: Sequence[Any]) -> _FiringWindow:
        """For ``process_source_batch``: the window of the first of ``caches`` that an element
        fires at once at watermark ``wm`` (``max_timestamp <= wm < cleanup time``: within the
        allowed lateness), kept in ``firing_cache``, when the kernel fires it itself
        (``contents_as_they_are``: ``fire_traced``); else ``_NOT_FIRING`` (an empty range)."""
        if self.contents_as_they_are:
            for cache in caches:
                start, end, cached, max_ts, cleanup = cache
                if cached and max_ts <= wm < cleanup:
                    self.firing_cache = cache
                    return _FiringWindow(start, end, cached[0], max_ts, cleanup)
        return _NOT_FIRING

    def late_way(self, wm: int, caches: Sequence[Any]) -> tuple[int, int, Any]:
        """For ``process_source_batch``: the window of the first of ``caches`` past the
        allowed lateness at watermark ``wm`` (``cleanup time <= wm``: Flink skips it), as
        (start, end, window), kept in ``late_cache``; else an empty range."""
        for cache in caches:
            start, end, cached, _, cleanup = cache
            if cached and cleanup <= wm:
                self.late_cache = cache
                return (start, end, cached[0])
        return (0, 0, None)

    def ways(self, wm: int) -> tuple[Any, Any, _FiringWindow, tuple[int, int, Any]]:
        """The ways of ``process_source_batch`` into the cached windows at watermark ``wm``:
        the open window and the one before it (``open_window``), the firing way's window
        (``firing_way``) and the late way's (``late_way``)."""
        caches = (self.window_cache, self.other_window_cache)
        return (
            self.open_window(caches[0], wm),
            self.open_window(caches[1], wm),
            self.firing_way(wm, (*caches, self.firing_cache)),
            self.late_way(wm, (*caches, self.late_cache)),
        )

    def process_source_batch(self, batch: Batch, stamps: list[int], arrival: SourceArrival) -> None:
        """A traced source batch chained straight into this window: the first ``len(stamps)``
        records of ``batch`` (timestamps assigned) as the source hands them over one by one —
        its ``arrival`` record, then ``process_element``. A record into one of the two cached
        tumbling windows while it is open takes the *short way*, its records written with the
        run of short-way records it is in (``write_run``); any other its arrival record, then
        the *firing* or *late way* (``cached_way``) or the general way (``process_element``):
        the same records, state, timers, clock and counters as one by one, a failure's arrival
        record first."""
        op = self.op
        job, timers, trace, ctx, desc = op.job, op.timers, op.trace, op.ctx, op.contents
        wm = timers.current_watermark
        key_selector, internal_key = op.key_selector, op.key_rule.internal_key
        add_timer, copies, position = timers.event_queue.add, not batch.immutable, arrival.position
        first, (step, swap) = first_contents, contents_step(desc)  # (add_to_contents' two cases)
        entries = 0  # short-way records written
        # the run of short-way records (``write_run``): their keys; the window at each change
        # of window (from which record on: ``run_window`` the last); the timer bits that are
        # not BOTH_TIMERS_EXISTED (a key's first record in its window), with their records
        keys: list[Any] = []
        switches: list[tuple[int, Any]] = []
        firsts: list[tuple[int, int]] = []
        add_key, add_switch, add_first = keys.append, switches.append, firsts.append
        run = (keys, switches, firsts)
        run_window: Any = None
        # the open cached window, [start, end) (empty when there is none; its contents ``slot``,
        # whether its cleanup timer is its ``own``, whether it ``has_cleanup`` timer), the one
        # before it, [other_start, other_end); the windows of the firing and the late way
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
                            entries += self.write_run(
                                batch, stamps, done - 1, run, has_cleanup, arrival
                            )
                            run_window = None
                        job.now, job.record_index = now, index
                        arrival.write(trace, now, value, source_ts, position)
                        position += 1
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
                        entries += self.write_run(
                            batch, stamps, done - 1, run, has_cleanup, arrival
                        )
                        run_window = None
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
                if current is None:  # the window's first element for this key
                    existed = 0 if add_timer(internal, window, max_ts) else 1
                    if not own or not add_timer(internal, window, cleanup):
                        existed |= CLEANUP_TIMER_EXISTED
                    if existed != BOTH_TIMERS_EXISTED:
                        add_first((len(keys), existed))
                # (else both timers exist since its first element)
                if window is not run_window:
                    add_switch((len(keys), window))
                    run_window = window
                add_key(key)
                progress = _NOT_ON_THE_SHORT_WAY
                position += 1
                last_key, ctx_key, ctx_window = internal, internal, window
        except Exception as exc:
            job.now, job.record_index = now, index
            if keys:  # the run ends before the failing record's records
                entries += self.write_run(batch, stamps, done - 1, run, has_cleanup, arrival)
            if progress == _GENERAL:  # the way reported it, with its context
                last_key, ctx_key, ctx_window = op.current_key, ctx.key, ctx.window
                raise
            if progress == _NOT_ON_THE_SHORT_WAY:
                raise  # (the engine's own, between records)
            ctx.key, ctx.window = ctx_key, ctx_window
            if progress == _KEYED:
                last_key = internal
            shown = key if progress == _KEYED else _UNSET
            self.short_way_failed(exc, arrival, now, value, source_ts, position, ts, shown)
        finally:
            self.immutable_batch = False
            if keys:  # (the batch's last record ends the run)
                entries += self.write_run(batch, stamps, done, run, has_cleanup, arrival)
            op.metrics["num_records_in"] += entries
            op.current_key, ctx.key, ctx.window = last_key, ctx_key, ctx_window
            arrival.taken = done
        if done:
            job.now, job.record_index = now, index

    def one_record(self, batch: Batch, ts: int, arrival: SourceArrival) -> None:
        """``process_source_batch`` for a batch of one record, as one by one: its clock and
        arrival record, then ``process_element`` (the general way)."""
        now, index, value = batch.arrivals[0], batch.indices[0], batch.values[0]
        job = self.op.job
        job.now, job.record_index = now, index
        arrival.write(self.op.trace, now, value, batch.stamps[0], arrival.position)  # type: ignore[arg-type]
        arrival.taken = 1
        self.immutable_batch = batch.immutable
        try:
            self.process_element(value, ts)
        finally:
            self.immutable_batch = False

    def write_run(
        self,
        batch: Batch,
        stamps: list[int],
        end: int,
        run: tuple[list[Any], list[tuple[int, Any]], list[tuple[int, int]]],
        has_cleanup: bool,
        arrival: SourceArrival,
    ) -> int:
        """Write the run of short-way records of ``batch`` that ends before record ``end``
        (``TraceWriter.open_window_elements``) from the ``run`` collected: their keys, their
        windows from the switches (from which record on, which window), their timer bits
        BOTH_TIMERS_EXISTED but for the firsts (which record, its bits), all three then
        cleared; the rest sliced from the batch's columns. Returns how many."""
        keys, switches, firsts = run
        op, n = self.op, len(keys)
        first = end - n
        windows: list[Any] = [switches[-1][1]] * (n - switches[-1][0])
        for (at, window), (until, _) in pairwise(switches):  # (the rest, before it)
            windows[at:at] = [window] * (until - at)
        bits = [BOTH_TIMERS_EXISTED] * n
        for at, existed in firsts:
            bits[at] = existed
        op.trace.open_window_elements(  # type: ignore[union-attr]
            arrival.source, arrival.watermark, op.name, op.timers.current_watermark,
            op.allowed_lateness if has_cleanup else None, batch.arrivals[first:end],
            batch.stamps[first:end], arrival.position + first, batch.values[first:end],
            stamps[first:end], keys, windows, bits,
        )  # fmt: skip
        keys.clear()
        switches.clear()
        firsts.clear()
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
        """Raise ``exc`` of a record on ``process_source_batch``'s short way as
        ``process_element`` reports it: the record counts in, its arrival (and, once it has a
        ``key``, not ``_UNSET``, its element) record comes before the error; a winviz error is
        annotated with the key (None before there is one) and raised as it is, a user
        function's wrapped."""
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
        """A record of ``process_source_batch`` outside the open cached windows, as one by
        one, after its arrival record: the firing or the late way (``cached_way``) or the
        general way (``process_element``), with the current key and trigger context the
        records before left (the caller sets them) and as the way leaves them. Returns the
        ``ways`` (the open window, the one before it, the firing and the late way's windows),
        found again when the general way cached a new window (the open one becomes the one
        before; a firing or late way stays until another is found)."""
        opened, other, firing, late = ways
        if firing.start <= ts < firing.end:
            self.cached_way(firing, None, value, ts, copies)
        elif late[0] <= ts < late[1]:
            self.cached_way(None, late[2], value, ts, copies)
        else:
            cache = self.window_cache
            self.process_element(value, ts)
            if self.window_cache is not cache:  # a new cached window: the ways into it
                new = (cache := self.window_cache,)
                if (found := self.firing_way(wm, new)).start < found.end:
                    firing = found
                if (found_late := self.late_way(wm, new))[0] < found_late[1]:
                    late = found_late
                if opened[0] < opened[1]:
                    other = opened
                opened = self.open_window(cache, wm)
        return opened, other, firing, late

    def cached_way(
        self, firing: _FiringWindow | None, late_window: Any, value: Any, ts: int, copies: bool
    ) -> None:
        """The firing way (``firing``) or the late way (``firing`` None) of
        ``process_source_batch``: ``process_element``'s steps and records for an element into
        a cached window. The firing way's window fires at once (its max_timestamp <= the
        watermark < its cleanup time): the element is added, then ``fire_traced``'s and the
        cleanup timer's records. The late way's, ``late_window``, is past the lateness: it is
        skipped, and the element, late itself, goes to the side output or is dropped
        (``skip_late``); the trigger context stays as it was. A failure is reported as
        ``process_element`` reports it, with the current key and trigger context it leaves."""
        op = self.op
        job, wm, name, trace = op.job, op.timers.current_watermark, op.name, op.trace
        now = job.now
        window = late_window if firing is None else firing.window
        key = None
        try:
            op.metrics["num_records_in"] += 1
            key = op.key_selector(copy_record(value) if copies else value)
            internal = key if key.__class__ is str else op.key_rule.internal_key(key)
            op.current_key = internal
            if firing is None:
                self.skip_late(window, key, internal, value, ts)
                return
            trace.element(now, wm, name, key, ts, value)  # type: ignore[union-attr]
            if firing.contents is None:
                firing.contents = op.state.slot(op.contents.name, window)
            current = firing.contents.get(internal)
            record = copy_record(value) if copies else value
            firing.contents[internal] = new = add_to_contents(op.contents, current, record)
            if new is None:
                raise op.none_result_error(internal, window, value)
            op.ctx.key, op.ctx.window = internal, window
            trace.assigned(now, wm, name, key, window, ts, value)  # type: ignore[union-attr]
            trace.trigger(now, wm, name, key, window, "on_element", "FIRE")  # type: ignore[union-attr]
            # max_timestamp <= the watermark: the pane is on time the first time, late after
            self.fire_traced(internal, window, firing.max_ts, new)
            if firing.cleanup != MAX:
                existed = not op.timers.event_queue.add(internal, window, firing.cleanup)
                trace.timer_registered(  # type: ignore[union-attr]
                    now, wm, name, key, window, firing.cleanup, "event", window, existed
                )
        except WinvizError as exc:
            op.annotate(exc, key)
            raise
        except Exception as exc:
            raise op.user_error(exc, key, value) from exc

    def skip_late(self, window: Any, key: Any, internal: Any, value: Any, ts: int) -> None:
        """The late way's records (``cached_way``) once the element has its ``key``: its
        ``element`` and ``skipped_late_window`` records, then, late itself, to the side output
        or dropped (``WindowOperator``'s ``isElementLate``: the kernel's windows are event-time
        ones)."""
        op = self.op
        now, wm, name, trace = op.job.now, op.timers.current_watermark, op.name, op.trace
        trace.element(now, wm, name, key, ts, value)  # type: ignore[union-attr]
        trace.skipped_late_window(now, wm, name, key, window, ts, value)  # type: ignore[union-attr]
        if is_element_late(ts, op.allowed_lateness, wm):
            self.late_element(key, internal, value, ts)

    def late_element(self, key: Any, internal: Any, value: Any, ts: int) -> None:
        """A traced element in no window that is late itself: to the late-data side output
        (``WindowOperator.sideOutput``, its ``side_output`` record first) or dropped and
        counted (``WindowOperator.late_element``); ``key`` the user's, ``internal`` the
        engine's."""
        op = self.op
        tag = op.late_data_tag
        if tag is None:
            op.late_element(internal, value, ts)
            return
        timers = op.timers
        op.trace.side_output(  # type: ignore[union-attr]
            timers.current_processing_time,
            timers.current_watermark,
            op.name,
            key,
            ts,
            tag.id,
            value,
        )
        op.output.collect_side(tag, value, ts)
