"""Spark's stream-stream join with watermarks and a time-range condition, modelled batch by batch.

The Spark query (``winviz.spark.twins.run_join_twin`` runs it on real local Spark)::

    left  = events.where("side = 0").withWatermark("lt", f"{left_delay} milliseconds")
    right = events.where("side = 1").withWatermark("rt", f"{right_delay} milliseconds")
    left.join(right, expr("lkey = rkey AND rt >= lt + INTERVAL {lower} MILLISECONDS"
                          " AND rt <= lt + INTERVAL {upper} MILLISECONDS"), join_type)

i.e. a left row ``l`` and a right row ``r`` of the same key join when
``l.ts + lower <= r.ts <= l.ts + upper`` — the bounds of Flink's
``interval_join(...).between(lower, upper)``; an exclusive bound (Flink's
``lower_bound_exclusive()`` / ``upper_bound_exclusive()``) is the strict inequality
``rt > lt + lower`` / ``rt < lt + upper``. Spark plans it as ``StreamingSymmetricHashJoinExec``
(``sql/core/.../operators/stateful/join/StreamingSymmetricHashJoinExec.scala``). Its rules,
each checked against Spark's source and against real Spark 4.x (``tests/test_spark_join.py``):

1. **Watermarks**: as for a union of streams (``winviz.spark.model`` rules 1, 2 and 6), one
   ``withWatermark`` per side: a batch runs with the *eviction* watermark ``W`` and filters
   late rows with the *late-events* watermark ``L``, the eviction watermark of the batch before.
2. **State watermarks** (``StreamingSymmetricHashJoinHelper.getStateWatermarkPredicates`` and
   ``StreamingJoinHelper.getStateValueWatermark``): the condition is solved for each side's time
   with the *other* side's time replaced by the watermark ``W``; a ``<=`` / ``>=`` conjunct gives
   ``solution - 1`` because the eviction predicate is inclusive (``ts <= state watermark``,
   ``WatermarkSupport.watermarkExpression``); a strict ``<`` / ``>`` conjunct gives the
   solution itself. ``rt <= lt + upper`` bounds the left side:
   ``left state watermark = W - upper - 1`` (``rt < lt + upper``: ``W - upper``);
   ``rt >= lt + lower`` bounds the right side: ``right state watermark = W + lower - 1``
   (``rt > lt + lower``: ``W + lower``). So an exclusive bound evicts exactly as the inclusive
   bound moved by one (Flink's ``upper - 1`` / ``lower + 1``) would.
3. **Late rows** (``OneSideHashJoiner.storeAndJoinWithOtherSide``): a row with ``ts <= L``
   (``winviz.spark.late_filter``) is dropped before it joins anything and counted in
   ``numRowsDroppedByWatermark``.
4. **Joining** (``processPartitions``): first every left input row joins the right *state*
   (rows of earlier batches) and is stored (always — even if it is evicted at the end of this
   batch); then every right input row joins the left state (which now holds this batch's left
   rows too) and is stored unless its ``ts <= right state watermark`` — except that an
   unmatched right row is stored anyway in a right/full outer join, so that eviction emits its
   NULL row. A stored row keeps a ``matched`` flag (state format 2, SPARK-26154), set when it
   joins. Left semi: a left input row that matches is output once and not stored; a right
   input row outputs the stored left rows it matches that were not matched before.
5. **Eviction and outer rows**: after the joined rows, the state rows with ``ts <= state
   watermark`` are removed; for the outer side(s) (left outer: left; right outer: right; full
   outer: both) each removed row that never matched is output with NULLs for the other side.
   This is the only place a NULL row is produced: it comes when the state watermark passes the
   row, not when the row arrives.
6. **No-data batches** (``StreamingSymmetricHashJoinExec.shouldRunAnotherBatch``): the query
   has state watermark predicates, so a raised watermark runs an extra batch with no input
   (``per_batch`` drive: after every data batch that raised it; ``available_now``: once at the
   end), as for the window twins.

Spark computes the state watermark with doubles in microseconds (``StreamingJoinHelper``);
the model uses exact integer milliseconds, which agree for event times within about
±285 years of 1970 (below 2^53 µs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from winviz.errors import InputError
from winviz.spark.batches import (
    KEY,
    LEFT,
    RIGHT,
    SIDE_NAMES,
    STREAM,
    TS,
    InputBatch,
    form_batches,
)
from winviz.spark.late_filter import is_dropped
from winviz.spark.model import MicroBatchModel, run_micro_batches
from winviz.spark.results import BatchOutcome, JoinRow, TwinResult
from winviz.spark.spec import (
    DRIVES,
    WATERMARK_POLICIES,
    TwinSpec,
    is_ms,
    one_of,
    positive_ms,
)

JOIN_TYPES = ("inner", "left_outer", "right_outer", "full_outer", "left_semi")
OUTER_SIDES = {"left_outer": (LEFT,), "right_outer": (RIGHT,), "full_outer": (LEFT, RIGHT)}

JoinType = Literal["inner", "left_outer", "right_outer", "full_outer", "left_semi"]


@dataclass(frozen=True)
class JoinSpec:
    """A Spark stream-stream join of two timestamped inputs (all times in ms): the condition
    of the module docstring (``lower_inclusive=False`` / ``upper_inclusive=False``: a strict
    bound), ``left_delay`` / ``right_delay`` the ``withWatermark`` delays, ``join_type`` one of
    ``JOIN_TYPES`` (Spark 4 supports all five with a time range); the other fields as in
    ``TwinSpec``."""

    lower: int
    upper: int
    left_delay: int = 0
    right_delay: int = 0
    join_type: JoinType = "inner"
    watermark_policy: Literal["min", "max"] = "min"
    key_field: str | int = "key"
    ts_field: str | int = "ts"
    trigger_interval: int = 1000
    drive: Literal["per_batch", "available_now"] = "per_batch"
    lower_inclusive: bool = True
    upper_inclusive: bool = True

    output_mode = "append"  # a stream-stream join runs in append mode
    value_field = None  # the input files' columns (``twins.input_schema``): key, ts, stream
    stream_field = STREAM

    def __post_init__(self) -> None:
        for name in ("lower", "upper"):
            value = getattr(self, name)
            if not is_ms(value):
                raise InputError("must be an int (milliseconds)", field=name, value=value)
        if self.lower > self.upper:
            raise InputError(
                f"lower bound {self.lower} > upper bound {self.upper}: no row could join",
                field="lower",
                value=self.lower,
                expected=f"<= upper ({self.upper})",
            )
        for name in ("lower_inclusive", "upper_inclusive"):
            if not isinstance(getattr(self, name), bool):
                raise InputError("must be a bool", field=name, value=getattr(self, name))
        for name in ("left_delay", "right_delay"):
            value = getattr(self, name)
            if not is_ms(value) or value < 0:
                raise InputError("must be an int >= 0 (milliseconds)", field=name, value=value)
        one_of(self.join_type, JOIN_TYPES, "join_type")
        one_of(self.watermark_policy, WATERMARK_POLICIES, "watermark_policy")
        one_of(self.drive, DRIVES, "drive")
        positive_ms(self.trigger_interval, "trigger_interval")

    @property
    def delays(self) -> tuple[int, int]:
        return (self.left_delay, self.right_delay)

    def batch_spec(self) -> TwinSpec:
        """The ``TwinSpec`` that cuts the combined input into micro-batches (a union of the two
        sides, ``stream`` 0 = left, 1 = right)."""
        return TwinSpec(
            size=1,
            watermark_delay=self.delays,
            stream_field=STREAM,
            watermark_policy=self.watermark_policy,
            trigger_interval=self.trigger_interval,
            drive=self.drive,
        )


def state_watermarks(spec: JoinSpec, watermark: int) -> tuple[int, int]:
    """Rule 2: (left, right) state watermarks for eviction watermark ``watermark``: state rows
    with ``ts <=`` them are removed. An inclusive bound (``<=`` / ``>=``) subtracts 1, a strict
    one does not (``StreamingJoinHelper.getStateValueWatermark``)."""
    return (
        watermark - spec.upper - (1 if spec.upper_inclusive else 0),
        watermark + spec.lower - (1 if spec.lower_inclusive else 0),
    )


def joins(spec: JoinSpec, left_ts: int, right_ts: int) -> bool:
    """The time-range condition ``left.ts + lower <= right.ts <= left.ts + upper`` (``<`` on
    an exclusive side)."""
    low, high = left_ts + spec.lower, left_ts + spec.upper
    above = right_ts >= low if spec.lower_inclusive else right_ts > low
    below = right_ts <= high if spec.upper_inclusive else right_ts < high
    return above and below


class _Stored:
    """A row in one side's join state: input index, event time, matched flag."""

    __slots__ = ("index", "matched", "ts")

    def __init__(self, index: int, ts: int, matched: bool) -> None:
        self.index, self.ts, self.matched = index, ts, matched


class JoinModel(MicroBatchModel):
    """Rules 1-6 for one query: the watermark tracker and both sides' join state
    (key -> stored rows, in arrival order)."""

    def __init__(self, spec: JoinSpec) -> None:
        super().__init__(spec)
        self.state: tuple[dict[Any, list[_Stored]], dict[Any, list[_Stored]]] = ({}, {})

    def run_batch(
        self,
        batch: InputBatch | None,
        proc_time: int,
        watermark: int | None = None,
    ) -> BatchOutcome:
        """One micro-batch (``None``: no data). ``watermark`` overrides the eviction watermark
        (replaying a real run with the watermarks Spark reported)."""
        spec = self.spec
        evict = self.watermark if watermark is None else watermark
        late_wm = self.previous
        left_wm, right_wm = state_watermarks(spec, evict)
        rows = batch.rows if batch is not None else ()
        indexes = batch.indexes if batch is not None else ()
        out: list[JoinRow] = []
        late: list[tuple[int, int]] = []
        evicted: list[tuple[int, int, bool]] = []
        inputs: tuple[list[tuple[Any, int, int]], list[tuple[Any, int, int]]] = ([], [])
        for r, i in zip(rows, indexes, strict=True):
            side, index = i
            if is_dropped(spec, r[TS], late_wm):  # rule 3
                late.append((side, index))
            else:
                inputs[side].append((r[KEY], index, r[TS]))
        semi = spec.join_type == "left_semi"
        outer_sides = OUTER_SIDES.get(spec.join_type, ())  # whose unmatched rows get NULL rows
        left_state, right_state = self.state
        for key, index, ts in inputs[LEFT]:  # rule 4: left rows against the right state
            matches = [s for s in right_state.get(key, ()) if joins(spec, ts, s.ts)]
            for s in matches:
                s.matched = True
                if not semi:
                    out.append(JoinRow(key, index, ts, s.index, s.ts))
            if semi and matches:
                out.append(JoinRow(key, index, ts, None, None))
                continue
            left_state.setdefault(key, []).append(_Stored(index, ts, bool(matches)))
        for key, index, ts in inputs[RIGHT]:  # right rows against the left state
            matches = [
                s
                for s in left_state.get(key, ())
                if joins(spec, s.ts, ts) and not (semi and s.matched)
            ]
            for s in matches:
                s.matched = True
                if semi:
                    out.append(JoinRow(key, s.index, s.ts, None, None))
                else:
                    out.append(JoinRow(key, s.index, s.ts, index, ts))
            if ts > right_wm or (RIGHT in outer_sides and not matches):
                right_state.setdefault(key, []).append(_Stored(index, ts, bool(matches)))
            else:
                evicted.append((RIGHT, index, bool(matches)))
        for side, wm in ((LEFT, left_wm), (RIGHT, right_wm)):  # rule 5
            for key, stored in list(self.state[side].items()):
                kept = []
                for s in stored:
                    if s.ts > wm:
                        kept.append(s)
                        continue
                    evicted.append((side, s.index, s.matched))
                    if side in outer_sides and not s.matched:
                        if side == LEFT:
                            out.append(JoinRow(key, s.index, s.ts, None, None))
                        else:
                            out.append(JoinRow(key, None, None, s.index, s.ts))
                if kept:
                    self.state[side][key] = kept
                else:
                    del self.state[side][key]
        return self._record(
            batch,
            proc_time,
            len(late),
            tuple(sorted(out, key=JoinRow.order)),
            evict,
            state_watermarks=(left_wm, right_wm),
            late=tuple(sorted(late)),
            evicted=tuple(sorted(evicted)),
            arrived=tuple(sorted(indexes)),
        )


def join_batches(
    left: Sequence[Any],
    left_arrivals: Sequence[int],
    right: Sequence[Any],
    right_arrivals: Sequence[int],
    spec: JoinSpec,
) -> list[InputBatch]:
    """The two inputs cut into micro-batches by arrival time (one file per batch holds both
    sides' rows; rows with ``stream`` 0 = left, 1 = right). Each batch's ``indexes`` are
    ``(side, input index)`` pairs; a bad record raises ``InputError`` naming its side and
    index."""
    records: list[dict[str, Any]] = []
    arrivals: list[int] = []
    origin: list[tuple[int, int]] = []
    for side, (values, times) in enumerate(((left, left_arrivals), (right, right_arrivals))):
        name = SIDE_NAMES[side]
        if len(times) != len(values):
            raise InputError(
                f"{len(times)} arrival times for {len(values)} {name} records",
                field=f"{name}_arrivals",
                expected="one arrival time per record",
            )
        for i, (value, t) in enumerate(zip(values, times, strict=True)):
            row = {STREAM: side}
            for column, field in ((KEY, spec.key_field), (TS, spec.ts_field)):
                try:
                    if isinstance(value, Mapping) or isinstance(field, int):
                        row[column] = value[field]
                    else:
                        raise KeyError(field)
                except (KeyError, IndexError, TypeError):
                    raise InputError(
                        f"{name} record {i}: no field {field!r} in {value!r}",
                        index=i,
                        field=str(field),
                    ) from None
            records.append(row)
            arrivals.append(t)
            origin.append((side, i))
    try:
        batches = form_batches(records, arrivals, spec.batch_spec())
    except InputError as exc:
        if exc.index is None:
            raise
        side, i = origin[exc.index]
        text = str(exc).replace(f"record {exc.index}", f"{SIDE_NAMES[side]} record {i}", 1)
        error = InputError(text)
        error.index, error.field, error.value = i, exc.field, exc.value
        raise error from None
    return [replace(b, indexes=tuple(origin[j] for j in b.indexes)) for b in batches]


def predict_join(
    left: Sequence[Any],
    left_arrivals: Sequence[int],
    right: Sequence[Any],
    right_arrivals: Sequence[int],
    spec: JoinSpec,
) -> TwinResult:
    """The model's answer for what ``winviz.spark.run_join_twin`` gets from Spark: every
    micro-batch it runs under ``spec.drive`` (rule 6)."""
    inputs = join_batches(left, left_arrivals, right, right_arrivals, spec)
    return run_micro_batches(JoinModel(spec), inputs)
