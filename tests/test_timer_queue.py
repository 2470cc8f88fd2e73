"""``TimerQueue.pop_due``: the live timers at or before a time, in firing order."""

from __future__ import annotations

from winviz.timers import TimerQueue


def test_pop_due_pops_live_timers_in_order_and_skips_deleted_ones() -> None:
    q = TimerQueue()
    assert q.add("a", "w1", 10) and q.add("b", "w1", 5) and q.add("c", "w2", 10)
    assert not q.add("a", "w1", 10)  # de-duplicated
    assert q.add("d", "w3", 30)
    assert q.remove("b", "w1", 5)
    assert list(q.pop_due(10)) == [(10, "a", "w1"), (10, "c", "w2")]  # registration order
    assert len(q) == 1 and q.timers() == [(30, "d", "w3")]
    assert list(q.pop_due(29)) == []
    q.add("b", "w1", 5)  # registered again after being deleted: fires once, at 5
    assert list(q.pop_due(100)) == [(5, "b", "w1"), (30, "d", "w3")]
    assert len(q) == 0 and q.heap == []
