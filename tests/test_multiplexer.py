"""Flink's WatermarkOutputMultiplexer: how split watermarks combine into a source's."""

from winviz.combined_watermark import WatermarkOutputMultiplexer
from winviz.time import MIN


def test_minimum_over_active_splits_emitted_only_when_it_increases() -> None:
    m = WatermarkOutputMultiplexer.of(2)
    m.partials[0].set_watermark(10)
    m.update_combined()
    assert m.drain() == []  # split 1 is still at MIN
    m.partials[1].set_watermark(5)
    m.update_combined()
    assert m.drain() == [("watermark", 5)]
    m.partials[1].set_watermark(3)  # lower: kept at 5
    m.update_combined()
    assert (m.partials[1].watermark, m.drain()) == (5, [])


def test_idle_splits_leave_the_minimum_and_all_idle_flushes_the_maximum_then_idle() -> None:
    m = WatermarkOutputMultiplexer.of(2)
    m.partials[0].set_watermark(10)
    m.partials[1].set_watermark(4)
    m.update_combined()
    m.partials[1].idle = True
    m.update_combined()
    assert m.drain() == [("watermark", 4), ("watermark", 10)]
    m.partials[0].idle = True
    m.update_combined()
    assert m.drain() == [("idle", None)]  # the maximum, 10, was already out
    assert m.combined == 10


def test_all_splits_idle_flush_the_largest_watermark_before_idle() -> None:
    """Flink 2.3's CombinedWatermarkStatus: all idle -> the maximum over all partials; the
    multiplexer emits it if it rose, then marks the output idle (checked against the jar)."""
    m = WatermarkOutputMultiplexer.of(2)
    m.partials[0].set_watermark(100)
    m.partials[1].set_watermark(700)
    m.update_combined()
    assert m.drain() == [("watermark", 100)]
    m.partials[0].idle = True
    m.partials[1].idle = True
    m.update_combined()
    assert m.drain() == [("watermark", 700), ("idle", None)]
    assert m.combined == 700


def test_a_returning_split_holds_the_watermark_but_never_moves_it_back() -> None:
    m = WatermarkOutputMultiplexer.of(2)
    m.partials[0].set_watermark(20)
    m.partials[1].idle = True
    m.update_combined()
    assert m.drain() == [("watermark", 20)]
    assert m.partials[1].set_watermark(7) is True and not m.partials[1].idle
    m.partials[0].set_watermark(30)
    m.update_combined()
    assert (m.combined, m.drain()) == (20, [])  # min(30, 7) = 7 < 20: nothing
    assert m.partials[1].watermark == 7 and m.partials[0].watermark == 30
    assert WatermarkOutputMultiplexer.of(1).combined == MIN
