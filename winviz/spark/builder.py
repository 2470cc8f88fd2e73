"""The Spark twin of an engine pipeline: ``build_twin(env, sink)`` reads the job graph
(``winviz.graph``) and returns a ``TwinPlan``: the ``TwinSpec`` (or ``JoinSpec``) and rows to
feed it, or why Spark has no equivalent (``NO_TWIN``). ``map`` / ``filter`` / ``flat_map`` run
here, in Python; ``for_bounded_out_of_orderness(B)`` is ``withWatermark(ts, B)`` (Flink's
``max_ts - B - 1`` reaching ``end - 1`` is Spark's ``max_ts - B`` reaching ``end``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from winviz.batch_execution import RuntimeExecutionMode, runtime_mode
from winviz.datastream import StreamExecutionEnvironment
from winviz.errors import ArgumentTypeError, InputError, WinvizError
from winviz.graph import (
    FilterSpec,
    FlatMapSpec,
    IntervalJoinSpec,
    KeyedProcessSpec,
    MapSpec,
    SinkSpec,
    SourceSpec,
    SplitWatermarksSpec,
    UnionSpec,
    WatermarksSpec,
    WindowSpec,
)
from winviz.joins import UnionKeySelector
from winviz.spark import twins
from winviz.spark.batches import SIDE_NAMES
from winviz.spark.compare import compare
from winviz.spark.join_compare import flink_interval_join
from winviz.spark.join_model import JoinSpec, predict_join
from winviz.spark.model import predict
from winviz.spark.results import TwinResult
from winviz.spark.spec import Drive, TwinSpec

Row = tuple[int, Any, Any]  # (arrival, value, source timestamp)
Stream = tuple[list[Row], int, Any]  # rows, watermark delay, timestamp assigner

# Why a pipeline has no Spark twin: the refusal vocabulary, one sentence per obstacle.
NO_TWIN = {
    "allowed_lateness": (
        "late re-fire (allowed lateness) has no Spark equivalent: Spark emits a window once "
        "in append mode and drops every later row for it (there is no lateness after the "
        "watermark)"
    ),
    "side_output": (
        "side output of late data has no Spark equivalent: Spark drops late rows and only "
        "counts them (numRowsDroppedByWatermark); it cannot route them to another stream"
    ),
    "evictor": (
        "evictors have no Spark equivalent: a Spark window aggregation keeps only the running "
        "aggregate, not the elements to evict from"
    ),
    "trigger": (
        "custom triggers have no Spark equivalent: Spark outputs a window when the watermark "
        "passes its end (append) or at every micro-batch that changed it (update), nothing else"
    ),
    "function": (
        "only CountAggregate and SumAggregate have Spark twins (count(*) and sum(value)); "
        "reduce, process and other aggregate functions are arbitrary Python code"
    ),
    "process": (
        "a KeyedProcessFunction is arbitrary code; the state twin (winviz.spark.state_twins, "
        "StateSpec) covers the count-until-event-time-timeout program only"
    ),
    "assigner": (
        "only event-time tumbling, sliding and (fixed-gap) session windows have Spark twins "
        "(window() / session_window()); processing-time and global windows do not"
    ),
    "offset": "window offsets are not part of the twin (Spark's window() startTime is not used)",
    "watermarks": (
        "only bounded-out-of-orderness and monotonous watermarks have a Spark twin "
        "(withWatermark(ts, delay)); punctuated, custom and no watermarks do not"
    ),
    "idleness": (
        "idleness has no Spark equivalent: a Spark stream without data holds its watermark "
        "(multipleWatermarkPolicy='max' is the nearest thing)"
    ),
    "partitions": (
        "partitioned sources have no twin: Spark has no per-partition watermarks "
        "(one watermark per withWatermark)"
    ),
    "shape": (
        "the twin covers source(s) -> [map/filter/flat_map] -> assign_timestamps_and_watermarks "
        "-> [union] -> key_by -> window -> aggregate -> sink, and two such inputs (no union) "
        "-> key_by -> interval_join -> between -> process(PairJoinFunction()) -> sink"
    ),
    "batch": (
        "BATCH runtime mode has no Spark streaming twin: Flink runs a bounded job key by key "
        "with no late data (the watermark jumps to MAX at the end of each key), while Spark "
        "Structured Streaming drops rows behind its watermark between micro-batches"
    ),
    "join_function": (
        "a ProcessJoinFunction is arbitrary code (it may emit any number of records per pair, "
        "read its context, write side outputs, keep state or have side effects); Spark's "
        "stream-stream join outputs the joined pairs, so the twin exists for "
        "wv.PairJoinFunction(), which collects (left, right) for each pair"
    ),
    "join_side_output": (
        "side outputs of late join input have no Spark equivalent: Spark drops late rows before "
        "they join (numRowsDroppedByWatermark) and cannot route them to another stream"
    ),
    "join_union": (
        "a union on one side of an interval join has no twin: each side of Spark's join has one "
        "withWatermark, while Flink's side keeps one watermark per input stream (the minimum)"
    ),
    "join_key": (
        "the join twin's key must be a str or an int (Spark's key column is a string or a "
        "long): key_by gave {kind} {value!r} for {side} record {index}"
    ),
    "window_join": (
        "a window join / coGroup has no Spark counterpart: Flink outputs a window's pairs (or "
        "calls the coGroup function with both sides' elements) when the window fires, under "
        "its trigger and allowed lateness, and pairs only elements of the same window; Spark's "
        "stream-stream join has no window firing: it outputs a pair in the micro-batch in "
        "which its second row arrives"
    ),
}


class NoTwinError(WinvizError, ValueError):
    """The pipeline has no Spark twin; ``reasons`` says why (one entry per obstacle)."""

    def __init__(self, sink: str, reasons: Sequence[str]) -> None:
        self.reasons = tuple(reasons)
        super().__init__(f"no Spark twin for sink {sink!r}: " + "; ".join(self.reasons))


@dataclass(frozen=True)
class TwinPlan:
    """The Spark twin of one sink: ``spec`` and the rows to feed it with their arrival times,
    or ``spec`` None and ``reasons``. A window twin's rows (``{"key", "ts", "value"[,
    "stream"]}``) are ``records``; a join twin's (``{"key", "ts"}``) are ``left`` and
    ``right``."""

    sink: str
    spec: TwinSpec | JoinSpec | None
    records: tuple[dict[str, Any], ...] = ()
    arrival_times: tuple[int, ...] = ()
    reasons: tuple[str, ...] = field(default=())
    caveats: tuple[str, ...] = field(default=())  # what an approximate twin leaves out
    left: tuple[dict[str, Any], ...] = ()
    left_arrivals: tuple[int, ...] = ()
    right: tuple[dict[str, Any], ...] = ()
    right_arrivals: tuple[int, ...] = ()
    auto_watermark_interval: int = 200  # the engine env's, for a join twin's ``flink()``

    @property
    def possible(self) -> bool:
        return self.spec is not None

    @property
    def inputs(self) -> tuple[list[Any], ...]:
        """The rows and arrival times as ``run_twin`` takes them (``records, arrival_times``),
        or ``run_join_twin`` (``left, left_arrivals, right, right_arrivals``)."""
        if isinstance(self.spec, JoinSpec):
            sides = (self.left, self.left_arrivals, self.right, self.right_arrivals)
        else:
            sides = (self.records, self.arrival_times)
        return tuple(list(s) for s in sides)

    def run(self, **kw: Any) -> TwinResult:
        """Run the twin on real Spark (``run_twin`` / ``run_join_twin``)."""
        spec = self._spec()
        run = twins.run_join_twin if isinstance(spec, JoinSpec) else twins.run_twin
        return run(*self.inputs, spec, **kw)

    def predict(self) -> TwinResult:
        """The model's answer (``winviz.spark.predict`` / ``predict_join``), no JVM."""
        spec = self._spec()
        return (predict_join if isinstance(spec, JoinSpec) else predict)(*self.inputs, spec)

    def flink(self) -> Any:
        """A join twin: the engine's interval join of the twin's rows (``flink_interval_join``:
        the same bounds, delays and watermark interval; output ``(left index, right
        index)``)."""
        spec = self._spec()
        if not isinstance(spec, JoinSpec):
            raise TypeError(
                "flink() replays a join twin's rows; for a window twin compare the job's own "
                "run: compare(env.execute(), plan.run())"
            )
        return flink_interval_join(
            *self.inputs, spec, auto_watermark_interval=self.auto_watermark_interval
        )

    def compare(self, spark_result: TwinResult | None = None) -> Any:
        """A join twin: ``winviz.spark.compare`` of ``flink()`` and ``spark_result`` (default:
        ``predict()``)."""
        result = spark_result if spark_result is not None else self.predict()
        return compare(self.flink(), result)

    def _spec(self) -> TwinSpec | JoinSpec:
        if self.spec is None:
            raise NoTwinError(self.sink, self.reasons)
        return self.spec


def build_twin(
    env: Any,
    sink: str,
    *,
    trigger_interval: int = 1000,
    drive: Drive = "per_batch",
    approximate: bool = False,
) -> TwinPlan:
    """The Spark twin of the pipeline that ends in ``sink_to(sink)`` (``TwinPlan.reasons``
    says why when there is none). ``approximate=True`` builds the nearest twin of a pipeline
    with allowed lateness or a late-data side output anyway — Spark drops those late rows —
    and lists what it leaves out in ``TwinPlan.caveats`` (for ``winviz.spark.compare``).
    A sink fed by an interval join gets the join twin (``build_join_twin``)."""
    if not isinstance(env, StreamExecutionEnvironment):
        raise ArgumentTypeError(
            "build_twin needs the job's StreamExecutionEnvironment",
            field="env",
            value=env,
            expected="the env the pipeline was built on (wv.StreamExecutionEnvironment)",
        )
    sinks = [n for n in env.nodes if isinstance(n.spec, SinkSpec) and n.name == sink]
    if not sinks:
        names = sorted(n.name for n in env.nodes if isinstance(n.spec, SinkSpec))
        raise InputError("no such sink", field="sink", value=sink, expected=f"one of {names}")
    window = sinks[0].inputs[0]
    reasons: list[str] = []
    if runtime_mode(env.runtime_mode) is not RuntimeExecutionMode.STREAMING:
        reasons.append(NO_TWIN["batch"])  # AUTOMATIC is BATCH: every source is bounded
    if isinstance(window.spec, IntervalJoinSpec):
        return build_join_twin(
            env,
            sink,
            window,
            trigger_interval=trigger_interval,
            drive=drive,
            approximate=approximate,
            reasons=reasons,
        )
    w = window.spec
    if isinstance(w, KeyedProcessSpec):
        return TwinPlan(sink, None, reasons=(*reasons, NO_TWIN["process"]))
    if not isinstance(w, WindowSpec):
        return TwinPlan(sink, None, reasons=(*reasons, NO_TWIN["shape"]))
    if isinstance(w.key_selector, UnionKeySelector):
        return TwinPlan(sink, None, reasons=(*reasons, NO_TWIN["window_join"]))
    shape = _window_shape(w.assigner, reasons)
    late = {"allowed_lateness": w.allowed_lateness, "side_output": w.late_data_tag is not None}
    caveats = _caveats(late, approximate, reasons)
    if w.evictor is not None:
        reasons.append(NO_TWIN["evictor"])
    if w.trigger is not None:
        reasons.append(NO_TWIN["trigger"])
    aggregate, value_of = _function(w, reasons)
    streams = streams_of(window.inputs[0], reasons)
    if reasons:
        return TwinPlan(sink, None, reasons=tuple(dict.fromkeys(reasons)))
    records, arrivals = _rows(streams, w.key_selector, value_of)
    delays = tuple(s[1] for s in streams)
    spec = TwinSpec(
        **shape,
        watermark_delay=delays[0] if len(delays) == 1 else delays,
        stream_field="stream" if len(delays) > 1 else None,
        value_field="value" if aggregate == "sum" else None,
        aggregate=aggregate,
        output_mode="append",
        trigger_interval=trigger_interval,
        drive=drive,
    )
    return TwinPlan(sink, spec, tuple(records), tuple(arrivals), caveats=tuple(caveats))


def _window_shape(assigner: Any, reasons: list[str]) -> dict[str, Any]:
    from winviz.windows.assigners import (
        EventTimeSessionWindows,
        SlidingEventTimeWindows,
        TumblingEventTimeWindows,
    )

    event = assigner.is_event_time  # the processing-time assigners subclass these three
    if event and isinstance(assigner, SlidingEventTimeWindows | TumblingEventTimeWindows):
        if assigner.offset:
            reasons.append(NO_TWIN["offset"])
        if isinstance(assigner, SlidingEventTimeWindows):
            return {"size": assigner.size, "slide": assigner.slide}
        return {"size": assigner.size}
    if event and isinstance(assigner, EventTimeSessionWindows) and assigner.gap is not None:
        return {"session_gap": assigner.gap}
    reasons.append(NO_TWIN["assigner"])
    return {}


def _caveats(late: dict[str, bool], approximate: bool, reasons: list[str]) -> list[str]:
    """The ``NO_TWIN`` sentences of the late-data features in use (``late``: name -> in use):
    what an approximate twin leaves out, else reasons to refuse."""
    caveats = [NO_TWIN[name] for name, used in late.items() if used]
    if not approximate:
        reasons.extend(caveats)
    return caveats


def _function(window: WindowSpec, reasons: list[str]) -> tuple[str, Any]:
    from winviz.functions import CountAggregate, SumAggregate

    fn = window.fn
    plain = window.function_kind == "aggregate" and window.process_function is None
    if plain and isinstance(fn, CountAggregate):
        return "count", None
    if plain and isinstance(fn, SumAggregate):
        return "sum", (lambda v: v) if fn.field is None else fn.field
    reasons.append(NO_TWIN["function"])
    return "count", None


def streams_of(node: Any, reasons: list[str]) -> list[Stream]:
    """Each input stream a twin reads from the job graph at ``node`` (feeding a window or a
    join side): its rows after ``map`` / ``filter`` / ``flat_map`` (run here, in Python), its
    watermark delay (``withWatermark(ts, delay)``) and its timestamp assigner; what has no twin
    is added to ``reasons`` (``NO_TWIN``)."""
    if isinstance(node.spec, UnionSpec):
        return [s for n in node.inputs for s in streams_of(n, reasons)]
    if isinstance(node.spec, SplitWatermarksSpec):
        reasons.append(NO_TWIN["partitions"])
        return []
    if not isinstance(node.spec, WatermarksSpec):
        reasons.append(NO_TWIN["shape"])
        return []
    strategy = node.spec.strategy
    delay = _delay(strategy, reasons)
    rows = _source_rows(node.inputs[0], reasons)
    return [(rows, delay, strategy.timestamp_assigner)]


def _delay(strategy: Any, reasons: list[str]) -> int:
    from winviz.watermarks import BoundedOutOfOrdernessWatermarks

    if strategy.idle_timeout is not None:
        reasons.append(NO_TWIN["idleness"])
    generator = strategy.generator_factory()
    if not isinstance(generator, BoundedOutOfOrdernessWatermarks) or (
        strategy.timestamp_assigner is None
    ):
        reasons.append(NO_TWIN["watermarks"])
        return 0
    return generator.bound


def _source_rows(node: Any, reasons: list[str]) -> list[Row]:
    spec = node.spec
    if isinstance(spec, MapSpec | FilterSpec | FlatMapSpec):  # what the operator emits
        rows = _source_rows(node.inputs[0], reasons)
        return [(arrival, v, ts) for arrival, value, ts in rows for v in spec.apply(value)]
    if not isinstance(spec, SourceSpec):
        reasons.append(NO_TWIN["shape"])
        return []
    if spec.partitioned:
        reasons.append(NO_TWIN["partitions"])
        return []
    return [(arrival, value, ts) for arrival, _, value, ts in spec.records]


def _rows(
    streams: list[Stream],
    key_selector: Any,
    value_of: Any = None,
    reasons: list[str] | None = None,
    side: str = "",
) -> tuple[list[dict[str, Any]], list[int]]:
    """The twin's rows in arrival order (stable: stream order, then input order). With
    ``reasons`` (a join side): stop at a key that is not a str or an int, saying why."""
    tagged = []
    for i, (rows, _, assigner) in enumerate(streams):
        for index, (arrival, value, source_ts) in enumerate(rows):
            key = key_selector(value)
            if reasons is not None and (not isinstance(key, str | int) or isinstance(key, bool)):
                kind = type(key).__name__
                reasons.append(
                    NO_TWIN["join_key"].format(side=side, index=index, value=key, kind=kind)
                )
                break
            row: dict[str, Any] = {"key": key, "ts": assigner(value, source_ts)}
            if value_of is not None:
                row["value"] = value_of(value)
            if len(streams) > 1:
                row["stream"] = i
            tagged.append((arrival, row))
    tagged.sort(key=lambda t: t[0])
    return [r for _, r in tagged], [a for a, _ in tagged]


def build_join_twin(
    env: Any,
    sink: str,
    join: Any,
    *,
    trigger_interval: int,
    drive: Any,
    approximate: bool,
    reasons: list[str],
) -> TwinPlan:
    """The twin of the interval join node ``join`` feeding ``sink`` (``reasons``: what the
    caller already refused): each side's stream as for a window twin, ``between`` (exclusive
    bounds too) as the time-range condition, ``process(wv.PairJoinFunction())`` as the inner
    join's rows. ``left_index`` / ``right_index`` are positions in each side's arrival order."""
    from winviz.functions import PairJoinFunction

    spec: IntervalJoinSpec = join.spec
    if type(spec.function) is not PairJoinFunction:
        reasons.append(NO_TWIN["join_function"])
    late = spec.left_late_tag is not None or spec.right_late_tag is not None
    caveats = _caveats({"join_side_output": late}, approximate, reasons)
    sides = []
    for node in join.inputs:
        streams = streams_of(node, reasons)
        if len(streams) > 1:
            reasons.append(NO_TWIN["join_union"])
        sides.append(streams[0] if len(streams) == 1 else None)
    (left, left_arrivals), (right, right_arrivals) = (
        _rows([stream], key_selector, None, reasons, name) if stream is not None else ([], [])
        for stream, key_selector, name in zip(sides, spec.key_selectors, SIDE_NAMES, strict=True)
    )
    if reasons:
        return TwinPlan(sink, None, reasons=tuple(dict.fromkeys(reasons)))
    assert sides[0] is not None and sides[1] is not None
    twin = JoinSpec(
        lower=spec.lower,
        upper=spec.upper,
        lower_inclusive=spec.lower_inclusive,
        upper_inclusive=spec.upper_inclusive,
        left_delay=sides[0][1],
        right_delay=sides[1][1],
        join_type="inner",
        trigger_interval=trigger_interval,
        drive=drive,
    )
    return TwinPlan(
        sink,
        twin,
        left=tuple(left),
        left_arrivals=tuple(left_arrivals),
        right=tuple(right),
        right_arrivals=tuple(right_arrivals),
        caveats=tuple(caveats),
        auto_watermark_interval=env.auto_watermark_interval,
    )
