"""The window kernel's event-time timers: Flink's ``WindowOperator.onEventTime`` for the
kernel's configuration (``winviz.operators.window_kernel``), fused into one loop over the due
timers of ``InternalTimerService.advanceWatermark``: the timer at ``maxTimestamp`` FIREs
(``EventTimeTrigger`` registers no timer), the cleanup timer clears the contents and deletes
the ``maxTimestamp`` timer. The window's times are ``window_rules.window_times``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from winviz.errors import WinvizError
from winviz.keygroups import user_key
from winviz.operators.simple import SinkOperator
from winviz.operators.window_functions import AggregateWindowFunction, ReduceWindowFunction
from winviz.operators.window_rules import window_times
from winviz.timers import EVENT

if TYPE_CHECKING:
    from winviz.operators.window_operator import WindowOperator

CONTENTS_AS_THEY_ARE = (ReduceWindowFunction, AggregateWindowFunction)
"""The window functions whose contents are the result as they are (with
``AggregateFunction.get_result`` for an aggregate) when there is no ProcessWindowFunction."""


class EventTimeFiring:
    """The event-time firing of a ``WindowKernel`` (the timer service's
    ``fire_due_event_timers``)."""

    op: WindowOperator
    contents_as_they_are: bool

    fire_traced: Callable[..., None]  # emit contents as they are, traced
    straight_sink: SinkOperator | None = None
    """The operator's output's one target when it is a sink (``winviz.operators.chaining``):
    a watermark's firings keep their results for it (``SinkOperator.keep``) and, traced,
    write its ``sink`` records with their own."""
    kept: list[tuple[Any, int]] | None = None  # (the traced loop's results for that sink)
    sink_record: tuple[str | None, int | None] = (None, None)  # (its name and watermark)

    def fire_event_timers(self, watermark: int) -> None:
        """The timer service's ``advance_watermark`` with ``on_event_time`` for the kernel's
        configuration, in one loop: pop every live event-time timer at or before the
        watermark in firing order; the timer at ``max_timestamp`` fires; the cleanup timer
        clears the contents and deletes the ``max_timestamp`` timer (``EventTimeTrigger.clear``),
        with the same records as Flink's path. Contents not emitted as they are (a
        ``ProcessWindowFunction``), or panes kept without a trace, take the timer service's
        own loop (Flink's path); no trace: ``_fire_untraced``."""
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
        """``fire_event_timers`` without a trace: the timer at ``max_timestamp`` emits the
        contents (kept for ``sink``, if any); the cleanup timer drops them and the trigger's
        timer. Keys and windows of the contexts are left as Flink's path leaves them."""
        op = self.op
        queue = op.timers.event_queue
        live = queue.live
        slots, cname = op.state.slots, op.contents.name
        lateness = op.allowed_lateness
        fn = op.function
        get_result = fn.function.get_result if type(fn) is AggregateWindowFunction else None
        metrics, collect = op.metrics, op.output.collect
        key = window = last = last_key = None
        # the window whose state ``slot`` is, its max_timestamp and cleanup time (timers come
        # window by window)
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
