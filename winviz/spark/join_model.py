"""Spark's stream-stream join (``StreamingSymmetricHashJoinExec``) of two watermarked sides on
key equality and ``lt + lower <= rt <= lt + upper`` (Flink's ``IntervalJoinOperator`` condition;
``twins.build_join_query``), modelled batch by batch. Its rules, checked against Spark's source
and Spark 4.x (``tests/test_spark_join.py``):
1. **Watermarks** as for a union (``winviz.spark.model`` rules 1, 2, 6), one per side: a batch
   evicts with ``W`` and drops late rows with ``L``, the eviction watermark of the batch before.
2. **State watermarks** (``StreamingJoinHelper.getStateValueWatermark``): the condition solved
   for one side's time with the other's replaced by ``W``, minus 1 for an inclusive bound (the
   eviction predicate is ``ts <= state watermark``): left ``W - upper - 1``, right ``W + lower
   - 1``.
3. **Late rows** (``OneSideHashJoiner.storeAndJoinWithOtherSide``): ``ts <= L`` is dropped
   before joining and counted in ``numRowsDroppedByWatermark``.
4. **Joining** (``processPartitions``): left input rows join the right state and are stored;
   then right input rows join the left state (with this batch's left rows) and are stored
   unless ``ts <= right state watermark`` (an unmatched row of a right/full outer join is
   stored anyway). A stored row keeps a ``matched`` flag (state format 2). Left semi: a
   matching left row is output once and not stored; a right row outputs the stored left rows
   it matches that were not matched before.
5. **Eviction**: then state rows with ``ts <= state watermark`` are removed; on an outer side a
   removed row that never matched is output with NULLs (the only NULL rows).
6. **No-data batches** (``shouldRunAnotherBatch``): as for the window twins.
Spark solves the state watermark in double microseconds: the model's integer ms agree within
about ±285 years of 1970.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    field_of,
    form_batches,
)
from winviz.spark.model import MicroBatchModel, run_micro_batches
from winviz.spark.results import BatchOutcome, JoinRow, TwinResult
from winviz.spark.spec import (
    DRIVES,
    WATERMARK_POLICIES,
    TwinSpec,
    check,
    is_dropped,
    is_ms,
    non_negative_ms,
    one_of,
    positive_ms,
)

JOIN_TYPES = ("inner", "left_outer", "right_outer", "full_outer", "left_semi")
OUTER_SIDES = {"left_outer": (LEFT,), "right_outer": (RIGHT,), "full_outer": (LEFT, RIGHT)}

JoinType = Literal["inner", "left_outer", "right_outer", "full_outer", "left_semi"]


@dataclass(frozen=True)
class JoinSpec:
    """A Spark stream-stream join of two timestamped inputs (times in ms): the module's condition
    (``*_inclusive=False``: a strict bound), each side's watermark delay and a ``join_type``."""

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
            check(is_ms(value), "must be an int (milliseconds)", name, value)
        no_row = f"lower bound {self.lower} > upper bound {self.upper}: no row could join"
        check(self.lower <= self.upper, no_row, "lower", self.lower, f"<= upper ({self.upper})")
        for name in ("lower_inclusive", "upper_inclusive"):
            value = getattr(self, name)
            check(isinstance(value, bool), "must be a bool", name, value)
        for name in ("left_delay", "right_delay"):
            non_negative_ms(getattr(self, name), name)
        one_of(self.join_type, JOIN_TYPES, "join_type")
        one_of(self.watermark_policy, WATERMARK_POLICIES, "watermark_policy")
        one_of(self.drive, DRIVES, "drive")
        positive_ms(self.trigger_interval, "trigger_interval")

    @property
    def delays(self) -> tuple[int, int]:
        return (self.left_delay, self.right_delay)

    @property
    def closed_bounds(self) -> tuple[int, int]:
        """``(lo, hi)``: the pair joins when ``lo <= rt - lt <= hi`` (integer ms: a strict
        bound is the inclusive one moved by 1)."""
        return (self.lower + (not self.lower_inclusive), self.upper - (not self.upper_inclusive))

    def batch_spec(self) -> TwinSpec:
        """The ``TwinSpec`` that cuts the combined input (``stream`` 0 = left, 1 = right) into
        micro-batches."""
        return TwinSpec(
            size=1,
            watermark_delay=self.delays,
            stream_field=STREAM,
            watermark_policy=self.watermark_policy,
            trigger_interval=self.trigger_interval,
            drive=self.drive,
        )


def state_watermarks(spec: JoinSpec, watermark: int) -> tuple[int, int]:
    """Rule 2: the (left, right) state watermarks for eviction watermark ``watermark``."""
    lo, hi = spec.closed_bounds
    return (watermark - hi - 1, watermark + lo - 1)


def joins(spec: JoinSpec, left_ts: int, right_ts: int) -> bool:
    """The time-range condition."""
    lo, hi = spec.closed_bounds
    return lo <= right_ts - left_ts <= hi


class _Stored:
    """A row in one side's join state: input index, event time, matched flag."""

    __slots__ = ("index", "matched", "ts")

    def __init__(self, index: int, ts: int, matched: bool) -> None:
        self.index, self.ts, self.matched = index, ts, matched


class JoinModel(MicroBatchModel):
    """Rules 1-6 for one query: the watermarks and both sides' state (key -> stored rows, in
    arrival order)."""

    def __init__(self, spec: JoinSpec) -> None:
        super().__init__(spec)
        self.state: tuple[dict[Any, list[_Stored]], dict[Any, list[_Stored]]] = ({}, {})

    def run_batch(
        self,
        batch: InputBatch,
        proc_time: int,
        watermark: int | None = None,
    ) -> BatchOutcome:
        """One micro-batch (``NO_DATA``: no data); ``watermark`` overrides the eviction watermark
        (replaying a real run with the watermarks Spark reported)."""
        spec = self.spec
        evict = self.watermark if watermark is None else watermark
        left_wm, right_wm = state_watermarks(spec, evict)
        out: list[JoinRow] = []
        late: list[tuple[int, int]] = []
        evicted: list[tuple[int, int, bool]] = []
        inputs: tuple[list[tuple[Any, int, int]], list[tuple[Any, int, int]]] = ([], [])
        for r, (side, index) in zip(batch.rows, batch.indexes, strict=True):
            if is_dropped(spec, r[TS], self.previous):  # rule 3
                late.append((side, index))
            else:
                inputs[side].append((r[KEY], index, r[TS]))
        semi = spec.join_type == "left_semi"
        outer_sides = OUTER_SIDES.get(spec.join_type, ())
        left_state, right_state = self.state
        for key, index, ts in inputs[LEFT]:  # rule 4
            matches = [s for s in right_state.get(key, ()) if joins(spec, ts, s.ts)]
            for s in matches:
                s.matched = True
                if not semi:
                    out.append(JoinRow(key, index, ts, s.index, s.ts))
            if semi and matches:
                out.append(JoinRow(key, index, ts, None, None))
                continue
            left_state.setdefault(key, []).append(_Stored(index, ts, bool(matches)))
        for key, index, ts in inputs[RIGHT]:
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
            arrived=tuple(sorted(batch.indexes)),
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
                    row[column] = field_of(value, field)
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
