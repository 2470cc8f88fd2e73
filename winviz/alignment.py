"""Watermark alignment (Flink's FLIP-182 / FLIP-217, as Flink 2.3 implements it).

``WatermarkStrategy.with_watermark_alignment(group, max_drift, update_interval)`` on a source
keeps the sources of one *alignment group* from drifting apart in event time: a source (or a
split of it, e.g. a Kafka partition) whose watermark runs ahead of the group's slowest by more
than ``max_drift`` stops reading — it is **paused** — until the others catch up.

The conversation, every ``update_interval`` ms of processing time (Flink 2.3):

1. every reader subtask **samples** its watermarks (``WatermarkSampler``: a ring of the last
   ``buffer_size`` values, ``pipeline.watermark-alignment.buffer-size``, 3 by default), checks
   alignment against the oldest sample, and **reports** its latest watermark to its source's
   coordinator (``SourceOperator.emitLatestWatermark``): ``MAX`` while the reader is idle, and
   ``MAX`` once it has read all its records; nothing while it has no watermark yet;
2. each source's coordinator keeps the minimum over its subtasks' reports and puts it into the
   group's minimum over sources (``SourceCoordinator.WatermarkAggregator``);
3. the coordinator **announces** ``maxAllowedWatermark = group minimum + max_drift``
   (``Long.MAX_VALUE`` when that overflows; ``announceCombinedWatermark``) to the subtasks that
   have reported; each subtask keeps it as its *max desired watermark*;
4. a reader pauses while ``max desired < its oldest sample`` (``shouldWaitForAlignment``); a
   split pauses while ``its oldest sample > max desired`` (``checkSplitWatermarkAlignment``;
   idle splits are left as they are) and as soon as its watermark rises or it becomes active
   with an oldest sample above it (``maybePauseSplit``). Both resume only when an announcement
   says so: the max desired watermark changes only then.

This module holds the pure state machines (``SourceReaderAlignment`` mirrors the alignment part
of ``SourceOperator``, ``AlignmentCoordinator`` that of ``SourceCoordinator``); the runtime
(``winviz.runtime``) schedules them on the simulated clock and holds back the arrivals of what
is paused.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from winviz.errors import ArgumentTypeError
from winviz.time import MAX, MIN, count_arg, duration_at_least

DEFAULT_UPDATE_INTERVAL = 1000
"""Flink's ``withWatermarkAlignment(group, maxDrift)``: ``Duration.ofMillis(1000)``."""

DEFAULT_BUFFER_SIZE = 3
"""``pipeline.watermark-alignment.buffer-size`` (Flink 2.3; 0 restores the behaviour before
2.3: the latest watermark is checked, not a sample)."""


@dataclass(frozen=True)
class WatermarkAlignmentParams:
    """What ``with_watermark_alignment`` asks for (Flink's ``WatermarkAlignmentParams``)."""

    group: str
    max_drift: int
    update_interval: int = DEFAULT_UPDATE_INTERVAL

    @classmethod
    def of(cls, group: Any, max_drift: Any, update_interval: Any) -> WatermarkAlignmentParams:
        """Checked as ``WatermarkStrategy.withWatermarkAlignment`` checks: a group name, a
        drift ≥ 0 and an update interval > 0."""
        if not isinstance(group, str):
            raise ArgumentTypeError(
                "with_watermark_alignment needs a watermark group name (Flink: "
                "'watermarkGroup cannot be null')",
                field="group",
                value=group,
                expected="a str naming the alignment group",
            )
        drift = duration_at_least(
            max_drift,
            0,
            "max_drift",
            "maxAllowedWatermarkDrift must be greater than or equal to zero",
            expected=">= 0 ms",
        )
        interval = duration_at_least(
            update_interval,
            1,
            "update_interval",
            "updateInterval must be positive",
            expected="> 0 ms",
        )
        return cls(group, drift, interval)

    @property
    def enabled(self) -> bool:
        """Flink's ``isEnabled``: a drift of ``Long.MAX_VALUE`` means no alignment."""
        return self.max_drift < MAX


def check_buffer_size(size: Any) -> int:
    """``pipeline.watermark-alignment.buffer-size``: an int ≥ 0."""
    return count_arg(
        size,
        what="buffer_size",
        minimum=0,
        expected="an int >= 0 (Flink's default 3; 0: check the latest watermark)",
    )


class WatermarkSampler:
    """Flink 2.3's ``WatermarkSampler``: the latest watermark and a ring of ``capacity``
    samples of it, taken every update interval; alignment checks the oldest sample (the
    latest itself with capacity 0). Starts at ``Watermark.UNINITIALIZED`` (MIN)."""

    __slots__ = ("capacity", "latest", "ring")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.latest = MIN
        self.ring: deque[int] = deque([MIN] * capacity)

    def add_latest(self, watermark: int) -> None:
        self.latest = watermark

    def sample(self) -> None:
        self.ring.append(self.latest)
        self.ring.popleft()  # (with capacity 0 this empties what was just added)

    def oldest_sample(self) -> int:
        return self.latest if self.capacity == 0 else self.ring[0]


@dataclass
class WatermarkAggregator:
    """``SourceCoordinator.WatermarkAggregator``: the minimum of the latest watermark per key
    (MIN while there is none)."""

    watermarks: dict[Any, int] = field(default_factory=dict)

    def aggregated(self) -> int:
        return min(self.watermarks.values()) if self.watermarks else MIN

    def aggregate(self, key: Any, watermark: int) -> int | None:
        """Set ``key``'s watermark; the new minimum if it changed, else None."""
        old = self.aggregated()
        self.watermarks[key] = watermark
        new = self.aggregated()
        return None if new == old else new


def max_allowed_watermark(group_minimum: int, max_drift: int) -> int:
    """``announceCombinedWatermark``: ``Math.addExact(minimum, drift)``, ``Long.MAX_VALUE``
    when it overflows (an idle or finished group reports MAX)."""
    return min(group_minimum + max_drift, MAX)


class AlignmentCoordinator:
    """The alignment part of one source's ``SourceCoordinator``: the minimum over its
    subtasks' reports, fed into the group's minimum over sources (``store``, Flink's
    ``CoordinatorStore``, shared by every source of the job)."""

    def __init__(
        self, source: str, params: WatermarkAlignmentParams, store: dict[str, WatermarkAggregator]
    ) -> None:
        self.source = source
        self.params = params
        self.subtasks = WatermarkAggregator()
        self.store = store
        store.setdefault(params.group, WatermarkAggregator())  # (start(): putIfAbsent)

    def report(self, subtask: int, watermark: int) -> None:
        """``handleReportedWatermark``: a change of this source's minimum goes to the group."""
        combined = self.subtasks.aggregate(subtask, watermark)
        if combined is not None:
            self.store[self.params.group].aggregate(self.source, combined)

    def announce(self) -> tuple[int, list[int]]:
        """``announceCombinedWatermark``: (the max allowed watermark, the subtasks it goes
        to — those that have reported, in subtask order)."""
        group_min = self.store[self.params.group].aggregated()
        return (
            max_allowed_watermark(group_min, self.params.max_drift),
            sorted(self.subtasks.watermarks),
        )


# what a reader's alignment decided: ("paused" | "resumed", split or None for the reader,
# the oldest sample that was checked, the max desired watermark it was checked against)
Decision = tuple[str, Any, int, int]


class SourceReaderAlignment:
    """The alignment part of one reader subtask's ``SourceOperator`` (Flink 2.3).

    ``splits``: the reader's splits (partitions), or None for a source without them, which is
    aligned as a whole only. Every method returns the pause / resume decisions it made, in
    order; the runtime acts on them and traces them.
    """

    def __init__(
        self, params: WatermarkAlignmentParams, buffer_size: int, splits: list[int] | None
    ) -> None:
        self.params = params
        self.buffer_size = buffer_size
        self.sampler = WatermarkSampler(buffer_size)
        self.split_samplers = {s: WatermarkSampler(buffer_size) for s in splits or ()}
        self.max_desired = MAX
        self.waiting = False  # OperatingMode.WAITING_FOR_ALIGNMENT
        self.finished = False  # OperatingMode.DATA_FINISHED
        self.idle = False
        self.paused_splits: set[Any] = set()
        self.idle_splits: set[Any] = set()

    # -- SourceOperator's listener methods --------------------------------------------------

    def update_effective_watermark(self, watermark: int) -> list[Decision]:
        """``updateCurrentEffectiveWatermark``: the reader's watermark went downstream."""
        self.sampler.add_latest(watermark)
        return self._check()

    def update_idle(self, idle: bool) -> None:
        """``updateIdle``: the reader's output is idle (it then reports MAX)."""
        self.idle = idle

    def update_split_watermark(self, split: Any, watermark: int) -> list[Decision]:
        """``updateCurrentSplitWatermark``: a split's watermark rose."""
        self.split_samplers[split].add_latest(watermark)
        if split in self.idle_splits:
            return []
        return self._maybe_pause_split(split)

    def update_split_idle(self, split: Any, idle: bool) -> list[Decision]:
        """``updateCurrentSplitIdle``: an active split may be paused at once."""
        if idle == (split in self.idle_splits):
            return []
        if idle:
            self.idle_splits.add(split)
            return []
        self.idle_splits.discard(split)
        return self._maybe_pause_split(split)

    def on_alignment_event(self, max_allowed: int) -> list[Decision]:
        """``handleOperatorEvent(WatermarkAlignmentEvent)``."""
        self.max_desired = max_allowed
        return self._check() + self._check_splits()

    def sample_and_report(self) -> tuple[list[Decision], int | None]:
        """``sampleAndEmitLatestWatermark``, every update interval: sample, check, and the
        watermark reported to the coordinator (None: nothing, no watermark yet)."""
        for sampler in self.split_samplers.values():
            sampler.sample()
        self.sampler.sample()
        decisions = self._check() + self._check_splits()
        latest = self.sampler.latest
        if latest == MIN:  # Watermark.UNINITIALIZED
            return decisions, None
        return decisions, MAX if self.idle else latest

    def finish(self) -> tuple[list[Decision], int | None]:
        """The reader has read everything (``DATA_FINISHED``: it finds the end of its input
        only while reading, so never while it waits for alignment): it reports MAX at once
        and is no longer checked as a whole."""
        assert not self.waiting, "a reader waiting for alignment does not read its end"
        self.finished = True
        self.sampler.add_latest(MAX)
        return self.sample_and_report()

    # -- the checks ---------------------------------------------------------------------------

    def should_wait(self) -> bool:
        """``shouldWaitForAlignment``."""
        return self.max_desired < self.sampler.oldest_sample()

    def _check(self) -> list[Decision]:
        """``checkWatermarkAlignment`` (in READING / WAITING_FOR_ALIGNMENT only)."""
        if self.finished:
            return []
        wait = self.should_wait()
        if wait == self.waiting:
            return []
        self.waiting = wait
        kind = "paused" if wait else "resumed"
        return [(kind, None, self.sampler.oldest_sample(), self.max_desired)]

    def _maybe_pause_split(self, split: Any) -> list[Decision]:
        oldest = self.split_samplers[split].oldest_sample()
        if oldest > self.max_desired and split not in self.paused_splits:
            self.paused_splits.add(split)
            return [("paused", split, oldest, self.max_desired)]
        return []

    def _check_splits(self) -> list[Decision]:
        """``checkSplitWatermarkAlignment``: pause the splits ahead, resume the paused ones
        that are no longer; idle splits are skipped (a paused idle split stays paused)."""
        pause, resume = [], []
        for split, sampler in self.split_samplers.items():
            if split in self.idle_splits:
                continue
            oldest = sampler.oldest_sample()
            if oldest > self.max_desired:
                if split not in self.paused_splits:
                    pause.append(("paused", split, oldest, self.max_desired))
            elif split in self.paused_splits:
                resume.append(("resumed", split, oldest, self.max_desired))
        for _, split, _, _ in pause:
            self.paused_splits.add(split)
        for _, split, _, _ in resume:
            self.paused_splits.discard(split)
        return pause + resume  # type: ignore[return-value]

    def snapshot_state(self) -> dict[str, Any]:
        """Everything that decides the next pause / resume (for tests and the Java check)."""
        return {
            "latest": self.sampler.latest,
            "ring": list(self.sampler.ring),
            "max_desired": self.max_desired,
            "waiting": self.waiting,
            "paused_splits": sorted(self.paused_splits),
            "idle_splits": sorted(self.idle_splits),
        }
