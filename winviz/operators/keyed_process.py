"""Flink's ``KeyedProcessOperator``: runs a KeyedProcessFunction with a timer service; output
of ``on_timer`` carries an event-time timer's timestamp, none for a processing-time timer
(Flink's ``collector.eraseTimestamp()``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from winviz.copies import copy_record
from winviz.errors import (
    FunctionResultError,
)
from winviz.functions import Collector, KeyedProcessFunction, OutputTag, TimeDomain
from winviz.keygroups import user_key
from winviz.operators.base import FunctionOperator, StreamOperator
from winviz.operators.keyed import KeyedStreamOperator
from winviz.time import format_ms
from winviz.timers import InternalTimer, TimerService


class Context:
    """The ``ctx`` of a process function's ``process_element`` (Flink's
    ``ProcessFunction.Context``): the element's timestamp, a timer service, side outputs."""

    def __init__(self, op: StreamOperator, timer_service: Any) -> None:
        self._op = op
        self._timer_service = timer_service
        self._timestamp: int | None = None

    def timestamp(self) -> int | None:
        """The element's timestamp (in ``on_timer``: the timer's)."""
        return self._timestamp

    def timer_service(self) -> Any:
        return self._timer_service

    def output(self, tag: OutputTag, value: Any) -> None:
        self._op.side_output(tag, value, self._timestamp)


class ProcessContext(Context):
    """The ``ctx`` of a ``KeyedProcessFunction``'s ``process_element`` and (with
    ``time_domain``) of its ``on_timer``: keyed, with timers."""

    _op: KeyedProcessOperator

    def __init__(self, op: KeyedProcessOperator) -> None:
        super().__init__(op, TimerService(op.timers))
        self._domain: str | None = None

    def get_current_key(self) -> Any:
        return user_key(self._op.current_key)

    def time_domain(self) -> str | None:
        """In ``on_timer``: ``TimeDomain.EVENT_TIME`` or ``TimeDomain.PROCESSING_TIME``."""
        return self._domain

    def state(self, name: str) -> Any:
        """The current key's value of a simple named state (None when empty)."""
        return self._op.state.get(name, self._op.current_key, None)

    def update_state(self, name: str, value: Any) -> None:
        if value is None:
            self._op.state.clear(name, self._op.current_key, None)
        else:
            self._op.state.put(name, self._op.current_key, None, value)


class KeyedProcessOperator(FunctionOperator, KeyedStreamOperator):
    """Runs a ``KeyedProcessFunction`` (or anything with its methods)."""

    registers_processing_timers = True  # user code may

    def __init__(
        self, name: str, key_selector: Callable[[Any], Any], function: KeyedProcessFunction
    ) -> None:
        super().__init__(name, key_selector)
        self.function = function
        self.ctx = ProcessContext(self)
        self.collector = Collector(self.emit)

    def process_element(self, value: Any, ts: int | None) -> None:
        self._process_keyed(self.key_selector, "process_element", value, ts)

    def _process_keyed(
        self, key_selector: Callable[[Any], Any], method: str, value: Any, ts: int | None
    ) -> None:
        """Set the current key, trace the element and call the function's ``method``."""
        self.metrics["num_records_in"] += 1
        index = self.job.record_index
        key = self.call_user("key selector", key_selector, copy_record(value), record=value)
        # the key state and timers are kept by (winviz.keygroups: Java's rule for keys)
        self.current_key = key if key.__class__ is str else self.key_rule.internal_key(key, index)
        if self.trace is not None:
            self.trace_element(key, ts, value)
        self.ctx._timestamp = ts
        self.ctx._domain = None
        self.collector.timestamp = ts
        args = (copy_record(value), self.ctx, self.collector)
        self.call_function(method, args, key=user_key(self.current_key), record=value, index=index)

    def _on_timer(self, timer: InternalTimer, domain: str, out_ts: int | None) -> None:
        self.ctx._timestamp = timer.timestamp
        self.ctx._domain = domain
        self.collector.timestamp = out_ts
        self.call_function(
            "on_timer",
            (timer.timestamp, self.ctx, self.collector),
            key=user_key(timer.key),
            record=timer.timestamp,
            index=None,
            when=f" when its {domain.lower().replace('_', '-')} timer at "
            f"{format_ms(timer.timestamp)} fired",
        )

    def on_event_time(self, timer: InternalTimer) -> None:
        self._on_timer(timer, TimeDomain.EVENT_TIME, timer.timestamp)

    def on_processing_time(self, timer: InternalTimer) -> None:
        self._on_timer(timer, TimeDomain.PROCESSING_TIME, None)


class RollingReduceFunction(KeyedProcessFunction):
    """``KeyedStream.reduce(fn)`` (Flink's ``StreamGroupedReduceOperator``): emits the running
    reduction of each key's records, kept in keyed state."""

    def __init__(self, fn: Callable[[Any, Any], Any]) -> None:
        self.fn = fn

    def process_element(self, value, ctx, out):
        current = ctx.state("rolling")
        current = value if current is None else self.fn(current, value)
        if current is None:  # the state would be cleared: the next record would start anew
            raise FunctionResultError(
                f"returned None for key {ctx.get_current_key()!r}",
                function="reduce",
                operator=ctx._op.name,
                value=None,
                expected="the combined value (a reduce function returns it)",
                index=ctx._op.job.record_index,
                record=value,
            )
        ctx.update_state("rolling", current)
        out.collect(current)
