"""The Spark twin of an engine pipeline: ``build_twin(env, sink)`` reads the job graph that
``winviz.datastream`` built and, where Spark has an equivalent, returns the ``TwinSpec`` and
the rows to feed it; where it has none, it says precisely why.

What translates (the engine side -> the Spark side):

- ``env.from_collection(values, arrival_times=...)`` -> the rows, cut into micro-batches by
  arrival time; ``map`` / ``filter`` / ``flat_map`` before the windows run here, in Python;
- ``assign_timestamps_and_watermarks(for_bounded_out_of_orderness(B))`` (or
  ``for_monotonous_timestamps()``, B = 0) -> ``withWatermark(ts, B)``: Flink's watermark is
  ``max_ts - B - 1`` and fires a window when it reaches ``end - 1``; Spark's is ``max_ts - B``
  and closes a window when it reaches ``end``: the same condition on the event times seen;
- ``a.union(b)`` of two such streams -> a union with one delay per stream and policy ``min``
  (Flink's ``StatusWatermarkValve`` takes the minimum too);
- ``key_by(f)`` -> the key column ``f(value)`` (a str or an int);
- ``TumblingEventTimeWindows.of(size)`` / ``SlidingEventTimeWindows.of(size, slide)`` (offset
  0) -> ``window(ts, size, slide)``; ``EventTimeSessionWindows.with_gap(gap)`` ->
  ``session_window(ts, gap)``;
- ``aggregate(CountAggregate())`` -> ``count(*)``; ``aggregate(SumAggregate(field))`` ->
  ``sum(value)``; the default ``EventTimeTrigger`` -> output mode ``append``.

Everything else is refused with its reason (``winviz.spark.no_twin.NO_TWIN``). A sink fed by
an interval join gets the stream-stream join twin instead (``winviz.spark.join_builder``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from winviz.batch_execution import RuntimeExecutionMode, runtime_mode
from winviz.datastream import StreamExecutionEnvironment
from winviz.errors import ArgumentTypeError, InputError
from winviz.graph import (
    IntervalJoinSpec,
    KeyedProcessSpec,
    SinkSpec,
    WindowSpec,
)
from winviz.joins import UnionKeySelector
from winviz.spark.join_builder import JoinTwinPlan, build_join_twin
from winviz.spark.no_twin import NO_TWIN, NoTwinError
from winviz.spark.spec import Drive, TwinSpec
from winviz.spark.twin_streams import Stream, streams_of


@dataclass(frozen=True)
class TwinPlan:
    """The Spark twin of one sink: ``spec`` and the rows (``{"key", "ts", "value"[,
    "stream"]}``) with their arrival times, or ``spec`` None and ``reasons``."""

    sink: str
    spec: TwinSpec | None
    records: tuple[dict[str, Any], ...] = ()
    arrival_times: tuple[int, ...] = ()
    reasons: tuple[str, ...] = field(default=())
    caveats: tuple[str, ...] = field(default=())  # what an approximate twin leaves out

    @property
    def possible(self) -> bool:
        return self.spec is not None

    def run(self, **kw: Any) -> Any:
        """Run the twin on Spark (``winviz.spark.run_twin``)."""
        from winviz.spark.twins import run_twin

        return run_twin(list(self.records), list(self.arrival_times), self._spec(), **kw)

    def predict(self) -> Any:
        """The model's answer (``winviz.spark.predict``), no JVM."""
        from winviz.spark.model import predict

        return predict(list(self.records), list(self.arrival_times), self._spec())

    def _spec(self) -> TwinSpec:
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
) -> TwinPlan | JoinTwinPlan:
    """The Spark twin of the pipeline that ends in ``sink_to(sink)`` (``TwinPlan.reasons``
    says why when there is none). ``approximate=True`` builds the nearest twin of a pipeline
    with allowed lateness or a late-data side output anyway — Spark drops those late rows —
    and lists what it leaves out in ``TwinPlan.caveats`` (for ``winviz.spark.compare``).
    A sink fed by an interval join gets a ``JoinTwinPlan`` (``winviz.spark.join_builder``)."""
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
    if isinstance(window.spec, KeyedProcessSpec):
        return TwinPlan(sink, None, reasons=(*reasons, NO_TWIN["process"]))
    if isinstance(window.spec, WindowSpec) and isinstance(
        window.spec.key_selector, UnionKeySelector
    ):
        return TwinPlan(sink, None, reasons=(*reasons, NO_TWIN["window_join"]))
    if not isinstance(window.spec, WindowSpec):
        return TwinPlan(sink, None, reasons=(*reasons, NO_TWIN["shape"]))
    w = window.spec
    shape = _window_shape(w.assigner, reasons)
    caveats: list[str] = []
    if w.allowed_lateness:
        caveats.append(NO_TWIN["allowed_lateness"])
    if w.late_data_tag is not None:
        caveats.append(NO_TWIN["side_output"])
    if not approximate:
        reasons.extend(caveats)
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

    if not assigner.is_event_time:  # the processing-time assigners subclass these three
        reasons.append(NO_TWIN["assigner"])
    elif isinstance(assigner, SlidingEventTimeWindows):
        if assigner.offset:
            reasons.append(NO_TWIN["offset"])
        return {"size": assigner.size, "slide": assigner.slide}
    elif isinstance(assigner, TumblingEventTimeWindows):
        if assigner.offset:
            reasons.append(NO_TWIN["offset"])
        return {"size": assigner.size}
    elif isinstance(assigner, EventTimeSessionWindows) and assigner.gap is not None:
        return {"session_gap": assigner.gap}
    else:
        reasons.append(NO_TWIN["assigner"])
    return {}


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


def _rows(
    streams: list[Stream], key_selector: Any, value_of: Any
) -> tuple[list[dict[str, Any]], list[int]]:
    """The twin's rows in arrival order (stable: stream order, then input order)."""
    tagged = []
    for i, (rows, _, assigner) in enumerate(streams):
        for arrival, value, source_ts in rows:
            row: dict[str, Any] = {"key": key_selector(value), "ts": assigner(value, source_ts)}
            if value_of is not None:
                row["value"] = value_of(value)
            if len(streams) > 1:
                row["stream"] = i
            tagged.append((arrival, row))
    tagged.sort(key=lambda t: t[0])
    return [r for _, r in tagged], [a for a, _ in tagged]
