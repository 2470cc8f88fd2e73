"""Windows: the namespaces the WindowOperator keeps state and timers in. ``TimeWindow`` is Flink's
``[start, end)`` (``max_timestamp() = end - 1``); ``GlobalWindow`` the single window of
``GlobalWindows`` (``max_timestamp() = Long.MAX_VALUE``)."""

from __future__ import annotations

from typing import NamedTuple

from winviz.time import MAX, MIN, wrap_long


class TimeWindow(NamedTuple):
    """Flink's ``TimeWindow``: ``[start, end)`` in ms. It checks nothing, as Flink's constructor
    (the engine makes windows wrapped past MAX); a window a user hands in is checked by
    ``has_positive_size``."""

    start: int
    end: int

    def max_timestamp(self) -> int:
        """The largest timestamp that belongs to the window: ``end - 1`` (Java arithmetic:
        an end that overflowed to ``Long.MIN_VALUE`` gives ``Long.MAX_VALUE``)."""
        end = self.end
        return end - 1 if end != MIN else MAX

    def intersects(self, other: TimeWindow) -> bool:
        """True when the windows overlap *or touch* (Flink merges touching sessions)."""
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        """The smallest window that contains both."""
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    def __repr__(self) -> str:
        return f"[{self.start}, {self.end})"


def has_positive_size(start: int, end: int) -> bool:
    """Whether ``[start, end)`` can be a window: ``end - start`` wrapped to a long is positive (a
    window wrapped past MAX is one; swapped or equal bounds are not)."""
    return wrap_long(end - start) > 0


class GlobalWindow:
    """Flink's ``GlobalWindow``: the one window of ``GlobalWindows`` (a singleton)."""

    _instance: GlobalWindow | None = None
    start = None
    end = None

    def __new__(cls) -> GlobalWindow:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def max_timestamp(self) -> int:
        return MAX

    def __repr__(self) -> str:
        return "GlobalWindow"

    def __lt__(self, other: object) -> bool:
        return False


GLOBAL_WINDOW = GlobalWindow()


def java_time_window_hash(window: TimeWindow) -> int:
    """``TimeWindow.hashCode()`` (``longToIntWithBitMixing(start + end)``): the iteration order of
    the Java ``HashSet`` in which ``MergingWindowSet`` looks for the state window to keep."""
    m64 = 0xFFFFFFFFFFFFFFFF
    x = (window.start + window.end) & m64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m64
    x ^= x >> 31
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x
