"""The Spark twin of an engine pipeline that ends in an interval join: what ``build_twin(env,
sink)`` returns when the sink's input is ``key_by(...).interval_join(other.key_by(...))
.between(lower, upper)``.

What translates (``winviz.spark.join_model``): each side's stream as for a window twin
(``winviz.spark.builder``: rows, ``withWatermark`` delay, key column); ``between(lower,
upper)`` -> ``rt >= lt + lower AND rt <= lt + upper``, an exclusive bound
(``lower_bound_exclusive()`` / ``upper_bound_exclusive()``) as the strict inequality, whose
state watermark Spark solves without its ``- 1`` (``StreamingJoinHelper.getStateValueWatermark``):
the pairs and the eviction of Flink's bound moved by one; ``process(wv.PairJoinFunction())`` ->
the inner join's rows (Flink's interval join is inner). Everything else is refused
(``NO_TWIN``).

The rows keep each side's source order (arrival order): ``left_index`` / ``right_index`` in the
twin's output are positions in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from winviz.graph import IntervalJoinSpec
from winviz.spark.join_model import JoinResult, JoinSpec
from winviz.spark.no_twin import NO_TWIN, NoTwinError
from winviz.spark.twin_streams import streams_of


@dataclass(frozen=True)
class JoinTwinPlan:
    """The Spark join twin of one sink: ``spec`` (a ``JoinSpec``) and each side's rows
    (``{"key", "ts"}``) with their arrival times, or ``spec`` None and ``reasons``."""

    sink: str
    spec: JoinSpec | None
    left: tuple[dict[str, Any], ...] = ()
    left_arrivals: tuple[int, ...] = ()
    right: tuple[dict[str, Any], ...] = ()
    right_arrivals: tuple[int, ...] = ()
    reasons: tuple[str, ...] = field(default=())
    caveats: tuple[str, ...] = field(default=())  # what an approximate twin leaves out
    auto_watermark_interval: int = 200  # the engine env's, for ``flink()``

    @property
    def possible(self) -> bool:
        return self.spec is not None

    @property
    def inputs(self) -> tuple[list[dict[str, Any]], list[int], list[dict[str, Any]], list[int]]:
        """``(left, left_arrivals, right, right_arrivals)`` as ``run_join_twin`` takes them."""
        left, right = list(self.left), list(self.right)
        return left, list(self.left_arrivals), right, list(self.right_arrivals)

    def run(self, **kw: Any) -> JoinResult:
        """Run the twin on real Spark (``winviz.spark.run_join_twin``)."""
        from winviz.spark.join_twin import run_join_twin

        return run_join_twin(*self.inputs, self._spec(), **kw)

    def predict(self) -> JoinResult:
        """The model's answer (``winviz.spark.predict_join``), no JVM."""
        from winviz.spark.join_model import predict_join

        return predict_join(*self.inputs, self._spec())

    def flink(self) -> Any:
        """The engine's interval join of the twin's rows (``flink_interval_join``: the same
        bounds, delays and watermark interval; output ``(left index, right index)``)."""
        from winviz.spark.join_compare import flink_interval_join

        return flink_interval_join(
            *self.inputs, self._spec(), auto_watermark_interval=self.auto_watermark_interval
        )

    def compare(self, spark_result: JoinResult | None = None) -> Any:
        """``compare_join`` of ``flink()`` and ``spark_result`` (default: ``predict()``)."""
        from winviz.spark.join_compare import compare_join

        result = spark_result if spark_result is not None else self.predict()
        return compare_join(self.flink(), result, self.inputs)

    def _spec(self) -> JoinSpec:
        if self.spec is None:
            raise NoTwinError(self.sink, self.reasons)
        return self.spec


def build_join_twin(
    env: Any,
    sink: str,
    join: Any,
    *,
    trigger_interval: int,
    drive: Any,
    approximate: bool,
    reasons: list[str],
) -> JoinTwinPlan:
    """The twin of the interval join node ``join`` (``IntervalJoinSpec``) feeding ``sink``;
    ``reasons`` holds what the caller already refused."""
    from winviz.functions import PairJoinFunction

    spec: IntervalJoinSpec = join.spec
    if type(spec.function) is not PairJoinFunction:
        reasons.append(NO_TWIN["join_function"])
    caveats = []
    if spec.left_late_tag is not None or spec.right_late_tag is not None:
        caveats.append(NO_TWIN["join_side_output"])
    if not approximate:
        reasons.extend(caveats)
    sides = []
    for node in join.inputs:
        streams = streams_of(node, reasons)
        if len(streams) > 1:
            reasons.append(NO_TWIN["join_union"])
        sides.append(streams[0] if len(streams) == 1 else None)
    rows: list[list[dict[str, Any]]] = [[], []]
    arrivals: list[list[int]] = [[], []]
    for s, (stream, key_selector) in enumerate(zip(sides, spec.key_selectors, strict=True)):
        if stream is None:
            continue
        records, _, assigner = stream
        for i, (arrival, value, source_ts) in enumerate(records):
            key = key_selector(value)
            if not isinstance(key, str | int) or isinstance(key, bool):
                reasons.append(
                    NO_TWIN["join_key"].format(
                        side=("left", "right")[s], index=i, value=key, kind=type(key).__name__
                    )
                )
                break
            rows[s].append({"key": key, "ts": assigner(value, source_ts)})
            arrivals[s].append(arrival)
    if reasons:
        return JoinTwinPlan(sink, None, reasons=tuple(dict.fromkeys(reasons)))
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
    return JoinTwinPlan(
        sink,
        twin,
        tuple(rows[0]),
        tuple(arrivals[0]),
        tuple(rows[1]),
        tuple(arrivals[1]),
        caveats=tuple(caveats),
        auto_watermark_interval=env.auto_watermark_interval,
    )
