"""Spark's ``window()``: the time windows an event time falls in (``TimeWindowing``)."""

from __future__ import annotations


def spark_windows(ts: int, size: int, slide: int) -> list[tuple[int, int]]:
    """The windows ``[start, end)`` Spark's ``window()`` puts event time ``ts`` in, earliest
    first (``TimeWindowing`` with ``startTime`` 0: the last start is ``ts - floorMod(ts,
    slide)``, and every window of the ``ceil(size / slide)`` candidates that contains ``ts``)."""
    last_start = ts - ts % slide  # Python's % is floorMod
    overlapping = -(-size // slide)
    starts = [last_start - i * slide for i in range(overlapping)]
    return [(s, s + size) for s in reversed(starts) if s <= ts < s + size]
