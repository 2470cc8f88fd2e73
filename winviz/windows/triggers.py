"""Triggers decide when a window's contents are emitted (Flink's ``Trigger``): called for every
element, timer, merge and cleanup of a window, each returning a ``TriggerResult``. A trigger keeps
per-window state through ``ctx.get_partitioned_state`` and must delete in ``clear`` what it
registered."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Self

from winviz.state import ReducingStateDescriptor, ValueStateDescriptor
from winviz.time import count_arg, duration_at_least, java_rem, wrap_long


class TriggerResult(enum.Enum):
    """What the WindowOperator does after a trigger call (Flink's ``TriggerResult``)."""

    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    @property
    def is_fire(self) -> bool:
        return self.value[0]

    @property
    def is_purge(self) -> bool:
        return self.value[1]


CONTINUE = TriggerResult.CONTINUE
FIRE = TriggerResult.FIRE
PURGE = TriggerResult.PURGE
FIRE_AND_PURGE = TriggerResult.FIRE_AND_PURGE


class Factory:
    """Flink's static factory methods of triggers, evictors and assigners: ``X.of(...)`` and
    ``X.create()`` are the constructor."""

    @classmethod
    def of(cls, *args: Any, **kwargs: Any) -> Self:
        return cls(*args, **kwargs)

    create = of


class Trigger(Factory):
    """Base class. Subclasses override the calls they care about."""

    uses_processing_time = True
    """May it register processing-time timers (False lets the runtime batch records)."""

    def on_element(
        self, element: Any, timestamp: int | None, window: Any, ctx: Any
    ) -> TriggerResult:
        return CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return CONTINUE

    def can_merge(self) -> bool:
        return False

    def on_merge(self, window: Any, ctx: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support merging")

    def clear(self, window: Any, ctx: Any) -> None:
        pass

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class EventTimeTrigger(Trigger):
    """Fires once the watermark passes the window's end (the default for event time); ``on_element``
    fires at once when the watermark is already past ``max_timestamp`` (a late element within the
    allowed lateness), else registers an event-time timer there."""

    uses_processing_time = False

    def on_element(self, element, timestamp, window, ctx):
        if window.max_timestamp() <= ctx.get_current_watermark():
            return FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return CONTINUE

    def on_event_time(self, time, window, ctx):
        return FIRE if time == window.max_timestamp() else CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window, ctx):
        # a watermark already past the merged window's end: on_element fires it (a timer: twice)
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())

    def clear(self, window, ctx):
        ctx.delete_event_time_timer(window.max_timestamp())


class ProcessingTimeTrigger(Trigger):
    """Fires when processing time reaches the window's end (default for processing time)."""

    def on_element(self, element, timestamp, window, ctx):
        ctx.register_processing_time_timer(window.max_timestamp())
        return CONTINUE

    def on_processing_time(self, time, window, ctx):
        return FIRE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window, ctx):
        if window.max_timestamp() > ctx.get_current_processing_time():
            ctx.register_processing_time_timer(window.max_timestamp())

    def clear(self, window, ctx):
        ctx.delete_processing_time_timer(window.max_timestamp())


def _sum(a: int, b: int) -> int:
    return a + b


class CountTrigger(Trigger):
    """Fires every ``max_count`` elements of a window (keeps a ``count`` state)."""

    uses_processing_time = False

    def __init__(self, max_count: int) -> None:
        self.max_count = count_arg(max_count, what="CountTrigger max_count")
        self.state_desc = ReducingStateDescriptor("count", _sum)

    def on_element(self, element, timestamp, window, ctx):
        count = ctx.get_partitioned_state(self.state_desc)
        count.add(1)
        if count.get() >= self.max_count:
            count.clear()
            return FIRE
        return CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window, ctx):
        ctx.merge_partitioned_state(self.state_desc)

    def clear(self, window, ctx):
        ctx.get_partitioned_state(self.state_desc).clear()

    def __repr__(self) -> str:
        return f"CountTrigger({self.max_count})"


def next_fire_time(time: int, interval: int, window: Any) -> int:
    """Flink 2.3's ``registerNextFireTimestamp``: ``Math.min(time + interval, maxTimestamp)`` in
    Java's long arithmetic, so near MAX the sum wraps negative and fires at once (the timer-loop
    guard stops that chain: ``winviz.timers``)."""
    return min(wrap_long(time + interval), window.max_timestamp())


class _ContinuousTrigger(Trigger):
    """What Flink's ``ContinuousEventTimeTrigger`` and ``ContinuousProcessingTimeTrigger`` share:
    the next fire time in a ``fire-time`` state (minimum on merge); a timer at it fires and
    registers the next. ``domain`` names the timer calls' clock (``event`` / ``processing``)."""

    domain: str

    def __init__(self, interval: Any) -> None:
        self.interval = duration_at_least(
            interval, 1, "interval", f"{type(self).__name__} needs interval > 0"
        )
        self.state_desc = ReducingStateDescriptor("fire-time", min)

    def _timer(self, ctx: Any, verb: str, time: int) -> None:
        """``ctx.register_…_timer(time)`` / ``ctx.delete_…_timer(time)`` of this domain."""
        getattr(ctx, f"{verb}_{self.domain}_time_timer")(time)

    def _fire_if_next(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        """FIRE and register the next timer when ``time`` is the kept fire time, else CONTINUE."""
        fire_time = ctx.get_partitioned_state(self.state_desc)
        if fire_time.get() == time:
            fire_time.clear()
            self._register_next(time, window, ctx, fire_time)
            return FIRE
        return CONTINUE

    def _register_next(self, time, window, ctx, fire_time) -> None:
        next_fire = next_fire_time(time, self.interval, window)
        fire_time.add(next_fire)
        self._timer(ctx, "register", next_fire)

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window, ctx):
        ctx.merge_partitioned_state(self.state_desc)
        next_fire = ctx.get_partitioned_state(self.state_desc).get()
        if next_fire is not None:
            self._timer(ctx, "register", next_fire)

    def clear(self, window, ctx):
        fire_time = ctx.get_partitioned_state(self.state_desc)
        ts = fire_time.get()
        if ts is not None:
            self._timer(ctx, "delete", ts)
            fire_time.clear()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.interval})"


class ContinuousEventTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` of event time, and at the window's end."""

    uses_processing_time = False
    domain = "event"

    def on_element(self, element, timestamp, window, ctx):
        if window.max_timestamp() <= ctx.get_current_watermark():
            return FIRE  # the watermark is already past the window: fire immediately
        ctx.register_event_time_timer(window.max_timestamp())
        fire_time = ctx.get_partitioned_state(self.state_desc)
        if fire_time.get() is None:
            start = timestamp - java_rem(timestamp, self.interval)
            self._register_next(start, window, ctx, fire_time)
        return CONTINUE

    def on_event_time(self, time, window, ctx):
        if time == window.max_timestamp():
            return FIRE
        return self._fire_if_next(time, window, ctx)


class ContinuousProcessingTimeTrigger(_ContinuousTrigger):
    """Fires every ``interval`` of processing time (next fire time kept in ``fire-time``)."""

    domain = "processing"

    def on_element(self, element, timestamp, window, ctx):
        fire_time = ctx.get_partitioned_state(self.state_desc)
        now = ctx.get_current_processing_time()
        if fire_time.get() is None:
            self._register_next(now - java_rem(now, self.interval), window, ctx, fire_time)
        return CONTINUE

    def on_processing_time(self, time, window, ctx):
        return self._fire_if_next(time, window, ctx)


def value_delta(old: Any, new: Any) -> float:
    """The default delta function: ``abs(new - old)`` of numeric values."""
    return abs(new - old)


class DeltaTrigger(Trigger):
    """Fires when ``delta(last fired element, element) > threshold`` (keeps ``last-element``)."""

    uses_processing_time = False

    def __init__(
        self, threshold: float, delta_function: Callable[[Any, Any], float] = value_delta
    ) -> None:
        self.threshold = threshold
        self.delta_function = delta_function
        self.state_desc = ValueStateDescriptor("last-element")

    def on_element(self, element, timestamp, window, ctx):
        last = ctx.get_partitioned_state(self.state_desc)
        if last.value() is None:
            last.update(element)
            return CONTINUE
        if self.delta_function(last.value(), element) > self.threshold:
            last.update(element)
            return FIRE
        return CONTINUE

    def clear(self, window, ctx):
        ctx.get_partitioned_state(self.state_desc).clear()

    def __repr__(self) -> str:
        return f"DeltaTrigger({self.threshold})"


class NeverTrigger(Trigger):
    """Never fires (the default trigger of GlobalWindows)."""

    uses_processing_time = False

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window, ctx):
        pass


class EndOfStreamTrigger(Trigger):
    """Fires once, at the end of a bounded input
    (``GlobalWindows.createWithEndOfStreamTrigger``)."""

    uses_processing_time = False

    def on_element(self, element, timestamp, window, ctx):
        ctx.register_event_time_timer(window.max_timestamp())
        return CONTINUE

    def on_event_time(self, time, window, ctx):
        return FIRE if time == window.max_timestamp() else CONTINUE


class PurgingTrigger(Trigger):
    """Turns every FIRE of the nested trigger into FIRE_AND_PURGE."""

    def __init__(self, nested: Trigger) -> None:
        self.nested = nested
        self.uses_processing_time = nested.uses_processing_time

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return FIRE_AND_PURGE if result.is_fire else result

    def on_element(self, element, timestamp, window, ctx):
        return self._purging(self.nested.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time, window, ctx):
        return self._purging(self.nested.on_event_time(time, window, ctx))

    def on_processing_time(self, time, window, ctx):
        return self._purging(self.nested.on_processing_time(time, window, ctx))

    def can_merge(self) -> bool:
        return self.nested.can_merge()

    def on_merge(self, window, ctx):
        self.nested.on_merge(window, ctx)

    def clear(self, window, ctx):
        self.nested.clear(window, ctx)

    def __repr__(self) -> str:
        return f"PurgingTrigger({self.nested!r})"


_BUILT_IN = (
    EventTimeTrigger,
    ProcessingTimeTrigger,
    CountTrigger,
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    DeltaTrigger,
    NeverTrigger,
    EndOfStreamTrigger,
)


def decides_from_state_only(trigger: Trigger) -> bool:
    """True for the built-in triggers above (and ``PurgingTrigger`` around one): their decisions
    depend only on the call, the clocks and partitioned state, as Flink's contract asks (the
    timer-loop guard relies on it, ``winviz.timers``)."""
    if type(trigger) is PurgingTrigger:
        return decides_from_state_only(trigger.nested)
    return type(trigger) in _BUILT_IN


def involves(trigger: Trigger, cls: type[Trigger]) -> bool:
    """Whether ``trigger`` is a ``cls`` or a ``PurgingTrigger`` around one."""
    if isinstance(trigger, PurgingTrigger):
        return involves(trigger.nested, cls)
    return isinstance(trigger, cls)
