"""Flink's ``IntervalJoinOperator``: ``a.key_by(k).interval_join(b.key_by(k)).between(lo, hi)
.process(ProcessJoinFunction)`` — an inner join of two keyed streams on event time.

A left element ``l`` and a right element ``r`` of the same key are joined when
``r.ts ∈ [l.ts + lo, l.ts + hi]`` (either bound exclusive after ``lower_bound_exclusive()`` /
``upper_bound_exclusive()``; Flink moves an exclusive bound by one, ``lo + 1`` / ``hi - 1``, and
then only tests inclusively). As Flink 2.3's ``IntervalJoinOperator`` (``processElement``,
``isLate``, ``sideOutput``, ``onEventTime``):

* an element whose timestamp is **below** the operator's watermark (``ts < watermark``: at the
  watermark it is still joined) is not joined: it goes to the side output of its side
  (``side_output_left_late_data`` / ``side_output_right_late_data``) or is dropped; nothing else
  happens (no buffer, no timer). Flink counts no metric for it;
* otherwise it goes into its side's buffer (per key, a map timestamp → elements), then every
  element of the *other* buffer within the bounds is joined with it: ``process_element(left,
  right, ctx, out)`` runs once per pair, the output at ``max(left.ts, right.ts)``;
* then it registers an event-time cleanup timer in namespace ``CLEANUP_LEFT`` at
  ``ts + hi`` when ``hi > 0``, else at ``ts`` (a right element: ``CLEANUP_RIGHT`` at ``ts - lo``
  when ``lo < 0``, else ``ts``), in Java's wrapping long arithmetic;
* when the timer fires, the buffer's bucket is removed: left at ``timer - hi`` when ``hi > 0``,
  else ``timer``; right at ``timer + lo`` when ``lo <= 0``, else ``timer``.

The watermark is the minimum of the two inputs' (``_TwoInputs``, as ``connect``). Pairs found
for one element are joined in the order of the other buffer's timestamps (Flink iterates its
heap map state, whose order is the hash map's; the outputs are the same multiset).

Trace: ``element`` per record (either input), then ``buffered`` (side, value) — or, when late,
``side_output`` / ``late_dropped``; per pair ``joined`` (left_ts, right_ts; ts = the output's)
before the function's ``emitted`` records; the cleanup timers as ``timer_registered`` /
``timer_fired`` (namespace ``CLEANUP_LEFT`` / ``CLEANUP_RIGHT``); ``buffer_removed`` (side, count;
ts = the bucket's timestamp) when a timer clears a bucket.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from winviz.copies import copy_record
from winviz.errors import (
    InputError,
)
from winviz.functions import Collector, OutputTag, ProcessJoinFunction
from winviz.keygroups import user_key
from winviz.operators.base import FunctionOperator
from winviz.operators.co_process import IndexedCombinedWatermarkStatus, _TwoInputs
from winviz.operators.keyed import KeyedStreamOperator
from winviz.time import MIN, wrap_long
from winviz.timers import InternalTimer

LEFT, RIGHT = "left", "right"
LEFT_BUFFER, RIGHT_BUFFER = "LEFT_BUFFER", "RIGHT_BUFFER"
CLEANUP_LEFT, CLEANUP_RIGHT = "CLEANUP_LEFT", "CLEANUP_RIGHT"


def effective_bounds(
    lower: int, upper: int, lower_inclusive: bool, upper_inclusive: bool
) -> tuple[int, int]:
    """Flink's constructor: an exclusive bound moves by one (``lower + 1`` / ``upper - 1``,
    wrapping as Java's long), so the join only tests inclusively."""
    return (
        lower if lower_inclusive else wrap_long(lower + 1),
        upper if upper_inclusive else wrap_long(upper - 1),
    )


def cleanup_time(ts: int, relative_upper: int) -> int:
    """When an element's bucket may go: ``ts + relative_upper`` when that bound is positive,
    else ``ts`` (``relative_upper`` is ``upper`` for a left element, ``-lower`` for a right)."""
    return wrap_long(ts + relative_upper) if relative_upper > 0 else ts


def joinable(other_ts: int, ts: int, relative_lower: int, relative_upper: int) -> bool:
    """Flink's bucket test: ``ts + relative_lower <= other_ts <= ts + relative_upper``."""
    return wrap_long(ts + relative_lower) <= other_ts <= wrap_long(ts + relative_upper)


class JoinContext:
    """The ``ctx`` of ``ProcessJoinFunction.process_element`` (Flink's
    ``IntervalJoinOperator.ContextImpl``)."""

    def __init__(self, op: IntervalJoinOperator) -> None:
        self._op = op
        self._left = MIN
        self._right = MIN
        self._result = MIN

    def left_timestamp(self) -> int:
        """The timestamp of the pair's left element."""
        return self._left

    def right_timestamp(self) -> int:
        """The timestamp of the pair's right element."""
        return self._right

    def timestamp(self) -> int:
        """The output's timestamp: the larger of the two."""
        return self._result

    def output(self, tag: OutputTag, value: Any) -> None:
        """Emit ``value`` to the side output ``tag`` at ``timestamp()``."""
        if tag is None:
            raise InputError("OutputTag must not be null", field="tag", value=tag)
        self._op.side_output(tag, value, self._result)


class IntervalJoinOperator(_TwoInputs, FunctionOperator, KeyedStreamOperator):
    """Flink's ``IntervalJoinOperator`` (see the module docstring)."""

    timer_service_name = "CLEANUP_TIMER"

    def __init__(
        self,
        name: str,
        key_selector1: Callable[[Any], Any],
        key_selector2: Callable[[Any], Any],
        lower: int,
        upper: int,
        lower_inclusive: bool,
        upper_inclusive: bool,
        function: ProcessJoinFunction,
        left_late_tag: OutputTag | None = None,
        right_late_tag: OutputTag | None = None,
    ) -> None:
        super().__init__(name, key_selector1)  # (bounds checked by joins.IntervalJoined)
        self.key_selectors = (key_selector1, key_selector2)
        self.lower, self.upper = effective_bounds(lower, upper, lower_inclusive, upper_inclusive)
        self.function = function
        self.late_tags = (left_late_tag, right_late_tag)
        self.combined_status = IndexedCombinedWatermarkStatus()
        self.ctx = JoinContext(self)
        self.collector = Collector(self.emit)

    # -- Flink's processElement ------------------------------------------------------------

    def _process(self, index: int, value: Any, ts: int | None) -> None:
        self.metrics["num_records_in"] += 1
        job = self.job
        selector = self.key_selectors[index]
        key = self.call_user(f"key_selector{index + 1}", selector, copy_record(value), record=value)
        self.current_key = (
            key if key.__class__ is str else self.key_rule.internal_key(key, job.record_index)
        )
        watermark = self.timers.current_watermark
        trace = self.trace
        if trace is not None:
            trace.element(job.now, watermark, self.name, key, ts, value)
        if ts is None or ts == MIN:  # Flink reads a missing timestamp as Long.MIN_VALUE
            raise InputError(
                f"operator {self.name!r}, input {index + 1}: Long.MIN_VALUE timestamp: "
                "Elements used in interval stream joins need to have timestamps meaningful "
                "timestamps.",
                index=job.record_index,
                field="timestamp",
                value=ts,
                expected="an event timestamp (assign_timestamps_and_watermarks before the join)",
            )
        side = LEFT if index == 0 else RIGHT
        if ts < watermark:  # Flink's isLate: below the watermark (at it: still joined)
            tag = self.late_tags[index]
            if tag is not None:
                self.side_output(tag, value, ts)
            elif trace is not None:
                trace.late_dropped(job.now, watermark, self.name, key, ts, value)
            return
        value = copy_record(value)
        ours, theirs = (LEFT_BUFFER, RIGHT_BUFFER) if index == 0 else (RIGHT_BUFFER, LEFT_BUFFER)
        buffer = self.state.get(ours, self.current_key, None)
        if buffer is None:
            buffer = {}
            self.state.put(ours, self.current_key, None, buffer)
        buffer.setdefault(ts, []).append(value)
        if trace is not None:
            trace.buffered(job.now, watermark, self.name, key, ts, side, value)
        if index == 0:
            rel_lower, rel_upper = self.lower, self.upper
        else:
            rel_lower, rel_upper = wrap_long(-self.upper), wrap_long(-self.lower)
        other = self.state.get(theirs, self.current_key, None)
        if other:
            for other_ts in sorted(other):
                if not joinable(other_ts, ts, rel_lower, rel_upper):
                    continue
                for entry in list(other[other_ts]):
                    if index == 0:
                        self._collect(key, value, entry, ts, other_ts)
                    else:
                        self._collect(key, entry, value, other_ts, ts)
        self.timers.register_event_time_timer(
            CLEANUP_LEFT if index == 0 else CLEANUP_RIGHT, cleanup_time(ts, rel_upper)
        )

    def _collect(self, key: Any, left: Any, right: Any, left_ts: int, right_ts: int) -> None:
        """Flink's ``collect``: one pair to the function, its output at the larger timestamp."""
        result = max(left_ts, right_ts)
        ctx = self.ctx
        ctx._left, ctx._right, ctx._result = left_ts, right_ts, result
        self.collector.timestamp = result
        if self.trace is not None:
            self.trace.joined(
                self.job.now,
                self.timers.current_watermark,
                self.name,
                key,
                result,
                left_ts,
                right_ts,
            )
        self.call_function(
            "process_element",
            (copy_record(left), copy_record(right), ctx, self.collector),
            key=key,
            record=(left, right),
            index=self.job.record_index,
            when=f" when joining {left!r} with {right!r}",
        )

    # -- Flink's onEventTime: the cleanup timers -------------------------------------------

    def on_event_time(self, timer: InternalTimer) -> None:
        t = timer.timestamp
        if timer.namespace == CLEANUP_LEFT:
            side, name = LEFT, LEFT_BUFFER
            bucket = wrap_long(t - self.upper) if self.upper > 0 else t
        elif timer.namespace == CLEANUP_RIGHT:
            side, name = RIGHT, RIGHT_BUFFER
            bucket = wrap_long(t + self.lower) if self.lower <= 0 else t
        else:  # pragma: no cover - only this operator registers timers here
            raise RuntimeError(f"Invalid namespace {timer.namespace}")
        buffer = self.state.get(name, timer.key, None)
        removed = buffer.pop(bucket, None) if buffer is not None else None
        if buffer is not None and not buffer:
            self.state.clear(name, timer.key, None)
        if self.trace is not None:
            self.trace.buffer_removed(
                self.job.now,
                self.timers.current_watermark,
                self.name,
                user_key(timer.key),
                bucket,
                side,
                len(removed) if removed else 0,
            )

    def on_processing_time(self, timer: InternalTimer) -> None:  # pragma: no cover
        """Flink's ``onProcessingTime`` does nothing (no processing-time timers here)."""
