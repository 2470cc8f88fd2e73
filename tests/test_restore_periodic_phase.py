"""After a restore the periodic watermark emission restarts one interval after the restore's
clock, so its phase may differ from the first attempt's and a replayed window may fire earlier
or later than it did, with the same arrival times.

Flink's ``TimestampsAndWatermarksOperator.open()`` registers its first periodic emission at
``getProcessingTimeService().getCurrentProcessingTime() + watermarkInterval`` and each
``onProcessingTime`` the next one at ``now + watermarkInterval``; that processing-time timer is no
state, so a restored task's new operator starts a new series from its own ``open()``. winviz opens
the first attempt at the first arrival and a restored one at the checkpoint's clock
(docs/checkpoints.md): the series are ``first arrival + k·interval`` and
``checkpoint time + k·interval``."""

from __future__ import annotations

from jobs import two_keys_restored

import winviz as wv
from winviz.time import MAX


def first_window_firings(run: wv.JobExecutionResult) -> list[tuple[int, int, str]]:
    """(seq, processing time, key) of each firing of [0, 1000), both attempts."""
    return [
        (r.seq, r.proc_time, r.key)
        for r in run.trace.records("fired")
        if (r.window.start, r.window.end) == (0, 1_000)
    ]


def test_the_replay_emits_from_the_restores_clock_at_200_ms() -> None:
    """Interval 200: the first attempt opens at 100 ms (ticks 300, 500, …, 1,500, 1,700), the
    restore at 200 ms (ticks 400, …, 1,600). At 1,500 (first attempt) the tick comes before a's
    arrival and repeats 199 (nothing emitted); at 1,700 it emits 1,599 (max 1,600 − 1). In the
    replay the tick at 1,600 comes before b's arrival at 1,600 and emits 1,499 (a at 1,500 − 1):
    [0, 1000) fires 100 ms earlier, with the same arrivals (1,500 and 1,600 in both)."""
    run = two_keys_restored()
    trace = run.trace
    assert [(r.seq, r.proc_time) for r in trace.records("checkpoint")] == [(12, 200)]
    assert [(r.seq, r.proc_time, r.detail[3]) for r in trace.records("restore")] == [(51, 200, 5)]
    assert [(r.seq, r.proc_time, r.detail[1]) for r in trace.records("arrival")] == [
        (0, 100, 0), (6, 200, 1), (16, 1_500, 2), (22, 1_600, 3), (45, 3_000, 4),  # first
        (54, 1_500, 2), (77, 1_600, 3), (86, 3_000, 4), (92, 3_100, 5),  # replay
    ]  # fmt: skip
    assert [(r.seq, r.proc_time, r.ts) for r in trace.records("watermark_generated")] == [
        (13, 300, 199), (28, 1_700, 1_599),  # first attempt
        (60, 1_600, 1_499), (83, 1_800, 1_599), (99, 3_100, 3_099), (116, 3_100, MAX),  # replay
    ]  # fmt: skip
    assert first_window_firings(run) == [
        (35, 1_700, "a"), (42, 1_700, "b"), (67, 1_600, "a"), (74, 1_600, "b")
    ]  # fmt: skip


def test_only_the_phase_differs() -> None:
    """Interval 100: 100 and 200 ms are both on the series, every tick the first attempt has
    from 200 ms on the replay has too: [0, 1000) fires at 1,600 ms in both. Interval 300: the
    first attempt ticks at 400, …, 1,600 and fires at 1,600, the replay (500, …, 1,700) at 1,700
    — later, the other way round."""
    assert first_window_firings(two_keys_restored(100)) == [
        (32, 1_600, "a"), (39, 1_600, "b"), (73, 1_600, "a"), (80, 1_600, "b")
    ]  # fmt: skip
    late = two_keys_restored(300)
    assert [(r.seq, r.proc_time, r.ts) for r in late.trace.records("watermark_generated")][:4] == [
        (13, 400, 199), (22, 1_600, 1_499), (45, 1_900, 1_599), (69, 1_700, 1_599)
    ]  # fmt: skip
    assert first_window_firings(late) == [
        (29, 1_600, "a"), (36, 1_600, "b"), (76, 1_700, "a"), (83, 1_700, "b")
    ]  # fmt: skip
