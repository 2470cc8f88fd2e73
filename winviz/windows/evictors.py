"""Evictors remove elements (``TimestampedValue``s in arrival order, in place) from a window before
(``do_evict_after=False``, the default) or after the window function (Flink's ``Evictor``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from winviz.time import MIN, count_arg, duration_at_least, wrap_long
from winviz.windows.triggers import Factory, value_delta


@dataclass(slots=True)
class TimestampedValue:
    """An element with its timestamp (None when it has none)."""

    value: Any
    timestamp: int | None


class Evictor(Factory):
    """Base class: ``evict_before`` / ``evict_after`` receive the list and its size; a subclass
    implements ``evict`` and names its parameter in ``shown`` (its ``repr``)."""

    do_evict_after: bool = False
    shown = ""

    def evict_before(
        self, elements: list[TimestampedValue], size: int, window: Any, ctx: Any
    ) -> None:
        if not self.do_evict_after:
            self.evict(elements, size, ctx)

    def evict_after(
        self, elements: list[TimestampedValue], size: int, window: Any, ctx: Any
    ) -> None:
        if self.do_evict_after:
            self.evict(elements, size, ctx)

    def evict(self, elements: list[TimestampedValue], size: int, ctx: Any) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        if not self.shown:  # (an evictor of the user's)
            return super().__repr__()
        return f"{type(self).__name__}({getattr(self, self.shown)}, after={self.do_evict_after})"


class CountEvictor(Evictor):
    """Keeps at most ``max_count`` elements: removes the oldest ``size - max_count``."""

    shown = "max_count"

    def __init__(self, max_count: int, do_evict_after: bool = False) -> None:
        self.max_count = count_arg(max_count, what="CountEvictor max_count", minimum=0)
        self.do_evict_after = do_evict_after

    def evict(self, elements, size, ctx):
        if size > self.max_count:
            del elements[: size - self.max_count]


class TimeEvictor(Evictor):
    """Keeps elements newer than ``max timestamp in the window - window_size``."""

    shown = "window_size"

    def __init__(self, window_size: Any, do_evict_after: bool = False) -> None:
        self.window_size = duration_at_least(  # (Flink takes it unchecked)
            window_size,
            0,
            "evictor window size",
            "TimeEvictor window size must be at least 0: a negative size evicts every element",
            expected="an int >= 0 (ms) or a timedelta that is not negative",
        )
        self.do_evict_after = do_evict_after

    def evict(self, elements, size, ctx):
        if not elements or elements[0].timestamp is None:
            return  # Flink: only elements with timestamps can be evicted by time
        current = max((e.timestamp for e in elements if e.timestamp is not None), default=MIN)
        cutoff = wrap_long(current - self.window_size)  # Java overflow included
        elements[:] = [
            e for e in elements if not (e.timestamp is not None and e.timestamp <= cutoff)
        ]


class DeltaEvictor(Evictor):
    """Removes elements whose ``delta(element, last element) >= threshold``."""

    shown = "threshold"

    def __init__(
        self,
        threshold: float,
        delta_function: Callable[[Any, Any], float] = value_delta,
        do_evict_after: bool = False,
    ) -> None:
        self.threshold = threshold
        self.delta_function = delta_function
        self.do_evict_after = do_evict_after

    def evict(self, elements, size, ctx):
        if elements:
            last = elements[-1].value
            elements[:] = [
                e for e in elements if self.delta_function(e.value, last) < self.threshold
            ]
