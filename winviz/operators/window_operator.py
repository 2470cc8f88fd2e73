"""Flink's ``WindowOperator`` (and ``EvictingWindowOperator``): the methods come in the order
and under the names of ``WindowOperator.java``.

``process_element``: the **assigner** gives the element's windows; a late window is skipped;
the element is added to the window's **state**; the **trigger**'s ``on_element`` decides (FIRE
emits the contents stamped ``window.max_timestamp()``, PURGE clears them); then the cleanup
timer. An element in no window that is late itself goes to the late **side output** or counts
in ``num_late_records_dropped``. Session windows merge through a ``MergingWindowSet`` per key.
``on_event_time`` / ``on_processing_time``: the **timer service** (``winviz.timers``) calls
back, the trigger decides again, and at the cleanup time ``clear_all_state``.

**The fused path.** The rules are functions shared with the window kernel
(``winviz.operators.window_rules``; adding to contents: ``winviz.state.add_to_contents``). In
the kernel's configuration the job builder gives the operator a ``WindowKernel`` (``fuse``):
``process_element`` / ``process_batch`` hand over to its loops, the timer service fires event
time through it.
"""

from __future__ import annotations

import copy
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from winviz.copies import copy_record
from winviz.errors import (
    FunctionResultError,
    IllegalStateError,
    UnsupportedOperationError,
    UserFunctionError,
    WinvizError,
    returned_value_error,
)
from winviz.functions import Collector, OutputTag
from winviz.keygroups import user_key
from winviz.operators.keyed import KeyedStreamOperator
from winviz.operators.window_functions import InternalWindowFunction
from winviz.operators.window_rules import cleanup_time, is_element_late, next_pane
from winviz.state import ListStateDescriptor, ReducingStateDescriptor, state_type
from winviz.time import MAX, format_ms
from winviz.timers import InternalTimer
from winviz.windows.assigners import GlobalWindows, WindowAssigner
from winviz.windows.evictors import Evictor, TimestampedValue
from winviz.windows.merging import MergingWindowSet
from winviz.windows.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
    decides_from_state_only,
    involves,
)

if TYPE_CHECKING:
    from winviz.operators.batch import Batch
    from winviz.operators.window_kernel import WindowKernel

_USER_WINDOW_STATE = ListStateDescriptor("user-window-state")
_USER_GLOBAL_STATE = ListStateDescriptor("user-global-state")


def _about(n: int) -> str:
    """``n`` rounded to two digits, as ``9.2·10^15`` (plainly when below a million)."""
    if n < 1_000_000:
        return str(n)
    mantissa, exponent = f"{n:.1e}".split("e")
    return f"{mantissa}·10^{int(exponent)}"


class WindowOperator(KeyedStreamOperator):
    """Flink's WindowOperator; with an ``evictor`` it is the EvictingWindowOperator."""

    timer_service_name = "window-timers"

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
        self.kernel: WindowKernel | None = None  # (``fuse``)
        self.registers_processing_timers = self.trigger.uses_processing_time or not (
            self.is_event_time or isinstance(assigner, GlobalWindows)
        )
        # A built-in trigger decides from its arguments and state only: the timer-loop guard
        # (winviz.timers) can prove that a timer re-registering itself loops for ever.
        self.timers.loop_guard = decides_from_state_only(self.trigger)
        self.trigger_gets_copies = not self.timers.loop_guard
        # a ContinuousEventTimeTrigger (or one in a PurgingTrigger): its chains of firings
        # in one watermark advance are counted in advance (_check_chain)
        nested = self.trigger.nested if type(self.trigger) is PurgingTrigger else self.trigger
        self._continuous = nested if type(nested) is ContinuousEventTimeTrigger else None

    def fuse(self, kernel: WindowKernel) -> None:
        """Where the fused path plugs in (see the module docstring)."""
        self.kernel = kernel
        self.timers.fire_due_event_timers = kernel.fire_event_timers

    # -- elements ---------------------------------------------------------------------------

    def process_batch(self, batch: Batch) -> None:
        """Records one after another; the kernel's batch loop when untraced (``fuse``)."""
        kernel = self.kernel
        if kernel is not None and not kernel.traced:
            kernel.process_batch(batch)
        else:
            super().process_batch(batch)

    def process_element(self, value: Any, ts: int | None) -> None:
        """Flink's ``processElement``; the kernel's element loop when traced (``fuse``)."""
        kernel = self.kernel
        if kernel is not None and kernel.traced:
            kernel.process_element(value, ts)
            return
        self.metrics["num_records_in"] += 1
        key = None
        try:
            key = self.key_selector(copy_record(value))  # (winviz.copies: a copy)
            # the key state and timers are kept by (winviz.keygroups: Java's rule for keys)
            internal = key if key.__class__ is str else self.key_rule.internal_key(key)
            self.current_key = internal
            if self.trace is not None:
                self.trace_element(key, ts, value)
            windows = self.assigner.assign_windows(value, ts, self.timers.current_processing_time)
            skipped = self._process_windows(internal, value, ts, windows)
            if skipped and self.is_element_late(ts):
                self.late_element(internal, value, ts)
        except WinvizError as exc:
            self.annotate(exc, key)
            raise
        except Exception as exc:
            raise self.user_error(exc, key, value) from exc

    def _process_windows(self, key: Any, value: Any, ts: int | None, windows: list[Any]) -> bool:
        """``processElement``'s loop over the element's windows (through the key's
        ``MergingWindowSet`` when merging): skip a late one, else ``_window_element``. True
        when every window was skipped."""
        skipped = True
        trace = self.trace
        merging = None
        if self.assigner.is_merging:
            merging = self.merging_sets.get(key)
            if merging is None:
                merging = self.merging_sets[key] = MergingWindowSet(self.assigner)
        for window in windows:
            actual = (
                window if merging is None else merging.add_window(window, self._merge_function(key))
            )
            if self.is_window_late(actual):
                if merging is not None:
                    merging.retire_window(actual)
                if trace is not None:
                    trace.skipped_late_window(*self._trace_at(key), actual, ts, value)
                continue
            skipped = False
            state_window = actual if merging is None else merging.get_state_window(actual)
            if state_window is None:
                raise IllegalStateError(f"Window {window} is not in in-flight window set.")
            self._window_element(key, value, ts, actual, state_window)
        if merging is not None:
            self._persist(key, merging)
        return skipped

    def _window_element(
        self, key: Any, value: Any, ts: int | None, window: Any, state_window: Any
    ) -> None:
        """One window's steps of ``processElement``: add, ask the trigger, fire / purge,
        register the cleanup timer."""
        copied = copy_record(value)  # (winviz.copies: user functions get copies)
        evicting = self.evictor is not None
        self.state.add(
            self.contents, key, state_window, TimestampedValue(copied, ts) if evicting else copied
        )
        if not evicting and self.state.get(self.contents.name, key, state_window) is None:
            raise self.none_result_error(key, window, value)
        if self.trace is not None:
            self.trace.assigned(*self._trace_at(key), window, ts, value)
        ctx = self.ctx
        ctx.key, ctx.window = key, window
        result = self._check(
            # (a trigger of the user's own gets a copy: a built-in one never changes it)
            self.trigger.on_element(
                copy_record(value) if self.trigger_gets_copies else value, ts, window, ctx
            ),
            "on_element",
            key,
            window,
        )
        if result.is_fire:
            contents = self.state.get(self.contents.name, key, state_window)
            if contents is None:
                return
            self.emit_window_contents(key, window, state_window, contents)
        if result.is_purge:
            self._purge(key, window, state_window, "trigger")
        self.cleanup_timer(window, "register")

    def _merge_function(self, key: Any) -> Callable[..., None]:
        def merge(merge_result, merged_windows, state_window_result, merged_state_windows):
            if self.is_event_time:
                wm = self.timers.current_watermark
                if is_element_late(merge_result.max_timestamp(), self.allowed_lateness, wm):
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
                self.trace.merged(
                    *self._trace_at(key), merge_result, list(merged_windows), state_window_result
                )
            ctx = self.ctx
            ctx.key, ctx.window, ctx.merged_windows = key, merge_result, merged_windows
            self.trigger.on_merge(merge_result, ctx)
            ctx.merged_windows = None
            for m in merged_windows:
                ctx.window = m
                self.trigger.clear(m, ctx)
                self.cleanup_timer(m, "delete")
                self.panes.pop((key, m), None)
            self.state.merge_namespaces(
                self.contents, key, state_window_result, merged_state_windows
            )

        return merge

    def _persist(self, key: Any, merging: MergingWindowSet) -> None:
        merging.persist()
        if not merging.mapping:
            self.merging_sets.pop(key, None)

    def late_element(self, key: Any, value: Any, ts: int | None) -> None:
        """An element that went into no window and is late: Flink's ``sideOutput`` with the
        late-data tag, or ``numLateRecordsDropped``."""
        if self.late_data_tag is not None:
            self.side_output(self.late_data_tag, value, ts)
        else:
            self.metrics["num_late_records_dropped"] += 1
            if self.trace is not None:
                self.trace.late_dropped(*self._trace_at(key), ts, value)

    # -- timers -----------------------------------------------------------------------------

    def on_event_time(self, timer: InternalTimer) -> None:
        """Flink's ``onEventTime``: the timer service calls back with a due timer."""
        self._on_timer(timer, True)

    def on_processing_time(self, timer: InternalTimer) -> None:
        """Flink's ``onProcessingTime``."""
        self._on_timer(timer, False)

    def _on_timer(self, timer: InternalTimer, event_time: bool) -> None:
        """Both call-backs: ask the trigger; fire / purge; at the cleanup time of the
        window's own time domain ``clear_all_state``."""
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
            call = "on_event_time" if event_time else "on_processing_time"
            result = self._check(getattr(self.trigger, call)(time, window, ctx), call, key, window)
            if result.is_fire:
                contents = self.state.get(self.contents.name, key, state_window)
                if contents is not None:
                    self.emit_window_contents(key, window, state_window, contents)
            if result.is_purge:
                self._purge(key, window, state_window, "trigger")
            if self.is_event_time == event_time and self.is_cleanup_time(window, time):
                self.clear_all_state(key, window, state_window, merging)
            if merging is not None:
                self._persist(key, merging)
            if event_time and self._continuous is not None:
                self._check_chain(key, window, time)
        except WinvizError:
            raise
        except Exception as exc:
            raise self.user_error(exc, key, None, window) from exc

    def clear_all_state(
        self, key: Any, window: Any, state_window: Any, merging: MergingWindowSet | None
    ) -> None:
        """Flink's ``clearAllState``: the contents, the trigger's and the window function's
        ``clear`` and the merging bookkeeping (not the function's ``window_state()``)."""
        self.state.clear(self.contents.name, key, state_window)
        self.ctx.key, self.ctx.window = key, window
        self.trigger.clear(window, self.ctx)
        self.window_ctx.current_window = window
        self.function.clear(self.window_ctx)
        if merging is not None:
            merging.retire_window(window)
        if self.panes:
            self.panes.pop((key, window), None)
        if self.trace is not None:
            self.trace.cleanup(
                *self._trace_at(key), window, window.max_timestamp(), self.cleanup_time(window)
            )

    def _purge(self, key: Any, window: Any, state_window: Any, reason: str) -> None:
        self.state.clear(self.contents.name, key, state_window)
        if self.trace is not None:
            self.trace.purged(*self._trace_at(key), window, reason)

    # -- emitting ---------------------------------------------------------------------------

    def emit_window_contents(self, key: Any, window: Any, state_window: Any, contents: Any) -> None:
        """Run the window function on the contents; results are stamped max_timestamp."""
        self.collector.timestamp = window.max_timestamp()
        self.window_ctx.current_window = window
        tracing = self.trace is not None
        if tracing:
            self._fired_values = []
        if self.evictor is None:
            returned = self.function.process(
                user_key(key), window, self.window_ctx, contents, self.collector
            )
            if returned is not None:
                raise self.returned_error(key, window, returned)
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
        returned = self.function.process(
            user_key(key),
            window,
            self.window_ctx,
            self.function.from_elements(values),
            self.collector,
        )
        if returned is not None:
            raise self.returned_error(key, window, returned)
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
            self.trace.evicted(*self._trace_at(key), window, when, gone)

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
        pane, timing = next_pane(self.panes, key, window, now, window.max_timestamp())
        values = self._fired_values
        self._fired_values = None
        result = values[0] if values is not None and len(values) == 1 else values
        self.trace.fired(  # type: ignore[union-attr]
            *self._trace_at(key), window, window.max_timestamp(), result, pane, timing, count
        )

    # -- Flink's small helpers, verbatim in spirit -----------------------------------------

    def cleanup_time(self, window: Any) -> int:
        """``max_timestamp + allowed_lateness`` for event time (MAX if that overflows);
        ``max_timestamp`` for processing time."""
        if self.is_event_time:
            return cleanup_time(window.max_timestamp(), self.allowed_lateness)
        return window.max_timestamp()

    def is_cleanup_time(self, window: Any, time: int) -> bool:
        """Whether a timer at ``time`` is the window's cleanup timer."""
        return time == self.cleanup_time(window)

    def is_window_late(self, window: Any) -> bool:
        return self.is_event_time and self.cleanup_time(window) <= self.timers.current_watermark

    def is_element_late(self, ts: int | None) -> bool:
        return self.is_event_time and is_element_late(
            ts, self.allowed_lateness, self.timers.current_watermark
        )

    def cleanup_timer(self, window: Any, how: str) -> None:
        """``registerCleanupTimer`` / ``deleteCleanupTimer`` (``how``: "register" or
        "delete") for the trigger context's window; none at MAX (the global window)."""
        t = self.cleanup_time(window)
        if t != MAX:
            domain = "event" if self.is_event_time else "processing"
            getattr(self.ctx, f"{how}_{domain}_time_timer")(t)

    # -- helpers ----------------------------------------------------------------------------

    def annotate(self, exc: WinvizError, key: Any) -> None:
        """Add operator, record and key to an engine error raised while processing."""
        if isinstance(exc, FunctionResultError):  # names them already; the record's index
            if exc.index is None:  # is known here (a batch loop sets it on the way out)
                exc.index = self.job.record_index
            return
        if exc.__cause__ is None and not isinstance(exc, UserFunctionError) and exc.args:
            exc.args = (
                f"{exc.args[0]} [operator {self.name!r}, record "
                f"{self.job.record_index}, key {user_key(key)!r}]",
            )

    def returned_error(self, key: Any, window: Any, value: Any) -> FunctionResultError:
        """The window function returned ``value`` instead of collecting its results."""
        return returned_value_error(
            self.function.user_function_name(),
            self.name,
            value,
            when=f" when window {window} fired",
            key=user_key(key),
        )

    def none_result_error(self, key: Any, window: Any, value: Any) -> FunctionResultError:
        """The window state became None after ``value`` was added: a reduce function or an
        ``AggregateFunction.add`` returned None (or the record itself is None). Flink's state
        cannot hold null; winviz would take None for "no contents" and drop the window's
        contents without a word."""
        reducing = isinstance(self.contents, ReducingStateDescriptor)
        if value is None:
            function = "the key selector's record"
            message = f"is None, and None cannot be the state of key {key!r}, window {window}"
            expected = "records that are not None"
        elif reducing:
            function = "reduce"
            message = f"returned None when adding a record to key {key!r}, window {window}"
            expected = (
                "the combined value: a reduce function returns a new value, e.g. "
                "lambda a, b: {**a, 'n': a['n'] + b['n']} (a.update(b) returns None)"
            )
        else:
            function = "AggregateFunction.add"
            message = f"returned None for key {key!r}, window {window}"
            expected = "the new accumulator (add returns it, even when it changed it in place)"
        return FunctionResultError(
            message,
            function=function,
            operator=self.name,
            value=None,
            expected=expected,
            record=value,
        )

    def _check(self, result: Any, call: str, key: Any, window: Any) -> TriggerResult:
        if result.__class__ is not TriggerResult:
            raise IllegalStateError(
                f"trigger {self.trigger!r}.{call} returned {result!r} for key {key!r}, window "
                f"{window}; expected a TriggerResult (CONTINUE, FIRE, PURGE or FIRE_AND_PURGE)"
            )
        if self.trace is not None:
            self.trace.trigger(*self._trace_at(key), window, call, result.name)
        return result

    def user_error(
        self, exc: Exception, key: Any, value: Any, window: Any = None
    ) -> UserFunctionError:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return UserFunctionError(
            function=f"{frame.name} ({frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})",
            operator=self.name,
            key=user_key(key),
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

    timer_namespace = "window"  # (a timer's namespace is its window: ``loop_error``)

    @property
    def timer_code(self) -> str:
        """What registers this operator's timers, as ``InternalTimerService.loop_error``
        names it."""
        return f"trigger {self.trigger!r}"

    def loop_note(self, timer: InternalTimer, domain: str) -> str:
        """What Flink does when a built-in trigger's timer keeps registering itself
        (``InternalTimerService._check_loop``): the known case cites FLINK-35069."""
        if not (involves(self.trigger, ContinuousProcessingTimeTrigger) and domain == "processing"):
            return "Real Flink keeps firing it the same way: the job would hang there."
        return (
            "Real Flink hangs here too (FLINK-35069): at the window's max timestamp "
            f"({timer.namespace.max_timestamp()}) ContinuousProcessingTimeTrigger registers its "
            "next fire time min(time + interval, max timestamp), the same time again; the window "
            "is cleaned up only when the watermark passes it, which cannot happen while the "
            "timer keeps firing. Use ContinuousEventTimeTrigger on event-time windows, or "
            "processing-time windows (their cleanup timer removes the trigger's timer)."
        )

    def _check_chain(self, key: Any, window: Any, time: int) -> None:
        """After a ContinuousEventTimeTrigger's timer at ``time`` fired: if its next fire
        time is due at the current watermark already, each firing registers the next one
        ``interval`` later, up to ``min(watermark, max_timestamp)``; ``loop_error`` at once
        when that chain is longer than the firing budget (the timer service would raise
        once it went past it: ``winviz.timers``)."""
        trigger = self._continuous
        watermark = self.timers.current_watermark
        next_fire = self.state.get(trigger.state_desc.name, key, window)
        if next_fire is None or next_fire > watermark:
            return
        max_ts = window.max_timestamp()
        to_come = (min(watermark, max_ts) - next_fire) // trigger.interval + 1
        if to_come <= self.timers.firing_budget:
            return
        each = (
            "emitting its contents once and nothing after the purge"
            if type(self.trigger) is PurgingTrigger
            else "emitting its contents"
        )
        raise self.timers.loop_error(
            InternalTimer(next_fire, key, window),
            "event",
            watermark,
            f"would fire at least {to_come} more",
            f"the next one (at {next_fire}) is due already, and each firing registers the next "
            f"one {trigger.interval} ms later, up to min(watermark, the window's max timestamp "
            f"{format_ms(max_ts)}), more than the firing budget",
            "Real Flink does the same: its timer service fires every timer at or before the "
            "watermark, including the ones these firings register, so it would fire this "
            f"window about {_about(to_come)} times ({each} each time) before the watermark "
            "could move on, and the job does not finish in practice. A window whose max "
            "timestamp is MAX (GlobalWindows) never stops re-arming at the end-of-input "
            "watermark MAX; give the window an end (e.g. TumblingEventTimeWindows), or fire "
            "on a count or once at the end of input "
            "(GlobalWindows.create_with_end_of_stream_trigger()).",
        )

    # -- checkpoints ------------------------------------------------------------------------

    def state_descriptors(self) -> dict[str, str]:
        """The window contents (LIST, REDUCING or AGGREGATING) and the timer service, both
        with the window serializer as namespace serializer (``getWindowSerializer``). The
        merging-window set is operator state: not checked (``winviz.checkpoints``)."""
        windows = (
            "GlobalWindow.Serializer"
            if isinstance(self.assigner, GlobalWindows)
            else "TimeWindow.Serializer"
        )
        return {
            f"state {self.contents.name!r}": f"{state_type(self.contents)} state of {windows}",
            f"timer service {self.timer_service_name!r}": f"timers of {windows}",
        }

    def snapshot(self) -> dict[str, Any]:
        snap = super().snapshot()
        snap["merging"] = {k: dict(m.mapping) for k, m in self.merging_sets.items()}
        snap["panes"] = dict(self.panes)
        return snap

    def restore(self, snap: dict[str, Any]) -> None:
        super().restore(snap)
        self.merging_sets = {
            k: MergingWindowSet(self.assigner, list(m.items())) for k, m in snap["merging"].items()
        }
        self.panes = dict(snap["panes"])


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
    """The ``context`` of a ProcessWindowFunction; ``current_window`` is the window being
    emitted or cleared (``window()``)."""

    __slots__ = ("current_window", "op")

    def __init__(self, op: WindowOperator) -> None:
        self.op = op
        self.current_window: Any = None

    def window(self) -> Any:
        return self.current_window

    def current_watermark(self) -> int:
        return self.op.timers.current_watermark

    def current_processing_time(self) -> int:
        return self.op.timers.current_processing_time

    def output(self, tag: OutputTag, value: Any) -> None:
        self.op.side_output(tag, value, self.current_window.max_timestamp())

    def window_state(self) -> PartitionedState:
        """Per-key, per-window state (Flink's ``windowState()``), for the function's ``clear``
        to clear; refused on merging windows, as Flink's ``MergingWindowStateStore`` does."""
        op, window = self.op, self.current_window
        if op.assigner.is_merging:
            raise UnsupportedOperationError(
                "Per-window state is not allowed when using merging windows. "
                f"Operator {op.name!r}, key {user_key(op.current_key)!r}, window {window}: "
                "session windows merge, and Flink does not merge a function's per-window state "
                "with them (its MergingWindowStateStore refuses it). Keep the state in "
                "context.global_state() (per key, shared by the key's windows; clear what "
                "belongs to a window in the function's clear(context)), or use a window "
                "assigner that does not merge."
            )
        return PartitionedState(op, _USER_WINDOW_STATE, op.current_key, window)

    def global_state(self) -> PartitionedState:
        """Per-key state shared by all windows of the key (Flink's ``globalState()``), never
        cleared by the window operator."""
        return PartitionedState(self.op, _USER_GLOBAL_STATE, self.op.current_key, None)
