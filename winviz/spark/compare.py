"""``compare(engine_result, spark_result)``: what the Flink engine (read from its trace) and its
Spark twin produced for each (key, window), when, and every rule that explains a difference
(``reason``); a join twin's result pair by pair (``winviz.spark.join_compare``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from winviz.errors import ArgumentTypeError
from winviz.spark.batches import KEY, TS
from winviz.spark.join_compare import compare_join
from winviz.spark.join_model import JoinSpec
from winviz.spark.model import SparkModel
from winviz.spark.results import TwinResult, with_inputs
from winviz.spark.spec import copies
from winviz.time import MAX

COLUMNS = [
    "key",
    "window_start",
    "window_end",
    "flink_result",
    "flink_time",
    "flink_firings",
    "spark_result",
    "spark_batch",
    "spark_time",
    "same_result",
    "reason",
]
APPEND_LATER = (
    "Spark emits in append mode only once the watermark reaches the window end, one batch later"
)
LATE_REFIRE = "late re-fire (allowed lateness) has no Spark equivalent"


def compare(engine_result: Any, spark_result: TwinResult, operator: str | None = None) -> Any:
    """A pandas DataFrame (``COLUMNS``), one row per (key, window) either side produced or
    dropped rows for, sorted by key then window: Flink's final result, when and how many times
    it fired; Spark's last output, its batch and processing time; whether the results agree,
    and why not (or why at different times). ``operator``: the engine's window operator
    (default: the one that fired windows)."""
    import pandas as pd

    if getattr(engine_result, "trace", None) is None:
        raise ArgumentTypeError(
            "compare needs the engine's result with its trace",
            field="engine_result",
            value=engine_result,
            expected="env.execute()'s JobExecutionResult of a run with the trace on",
        )
    if not isinstance(spark_result, TwinResult):
        raise ArgumentTypeError(
            "compare needs the Spark twin's result",
            field="spark_result",
            value=spark_result,
            expected="a TwinResult (run_twin(...) or plan.run(...))",
        )
    if isinstance(spark_result.spec, JoinSpec):
        return compare_join(engine_result, spark_result)
    flink = _flink_side(engine_result.trace, operator)
    spark = _spark_side(spark_result)
    groups = sorted(set(flink) | set(spark), key=lambda g: (str(type(g[0])), g[0], g[1], g[2]))
    final_wm = spark_result.batches[-1].watermark if spark_result.batches else 0
    open_sessions = _open_sessions(spark_result) if spark_result.spec.is_session else {}
    rows = []
    for g in groups:
        f, s = flink.get(g, _Flink()), spark.get(g, _Spark())
        f_last = f.firings[-1][:2] if f.firings else (None, None)  # (proc_time, result)
        s_last = s.outputs[-1] if s.outputs else (None, None, None)  # (batch, time, result)
        same = f_last[1] == s_last[2]
        why = "; ".join(_reasons(g, f, s, same, final_wm, open_sessions))
        rows.append((*g, f_last[1], f_last[0], len(f.firings), s_last[2], *s_last[:2], same, why))
    frame = pd.DataFrame(rows, columns=COLUMNS, dtype=object)
    ints = ["window_start", "window_end", "flink_time", "flink_firings"]
    ints += ["spark_batch", "spark_time"]
    return frame.astype({c: "Int64" for c in ints} | {"same_result": bool, "reason": str})


@dataclass
class _Flink:
    # (proc_time, result, timing, watermark) of each firing
    firings: list[tuple[int, Any, str, int]] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    late_ts: list[int] = field(default_factory=list)  # the timestamps of those late rows


@dataclass
class _Spark:
    outputs: list[tuple[int, int, Any]] = field(default_factory=list)  # batch_id, proc_time, result
    dropped: list[str] = field(default_factory=list)
    counted: dict[int, str] = field(default_factory=dict)  # ts -> why Spark's late filter let it in


def _flink_side(trace: Any, operator: str | None) -> dict[tuple, _Flink]:
    records = list(trace.records())
    if operator is None:
        fired_ops = sorted({r.operator for r in records if r.kind == "fired"})
        skipped_ops = sorted({r.operator for r in records if r.kind == "skipped_late_window"})
        ops = fired_ops or skipped_ops
        if len(ops) > 1:
            raise ValueError(f"several window operators fired ({ops}); pass operator=")
        operator = ops[0] if ops else None
    side: dict[tuple, _Flink] = defaultdict(_Flink)
    pending: list[tuple[tuple, Any]] = []  # skipped windows of the element being handled

    def settle(r: Any) -> None:
        """What became of the pending late element: ``r`` is the record after its skips."""
        routed = r is not None and r.kind == "side_output"
        for g, skipped in pending:
            if routed and (r.ts, r.key) == (skipped.ts, skipped.key):
                side[g].late.append(
                    f"side output {r.detail[0]!r}: Flink routed late row ts {r.ts} there "
                    f"(watermark {skipped.watermark})"
                )
            else:
                side[g].late.append(
                    f"dropped by Flink as late: ts {skipped.ts} (watermark {skipped.watermark})"
                )
            side[g].late_ts.append(skipped.ts)
        pending.clear()

    for r in records:
        if r.operator != operator:
            continue
        if r.kind == "fired" and r.window is not None:
            g = (r.key, r.window.start, r.window.end)
            side[g].firings.append((r.proc_time, r.detail[0], r.detail[2], r.watermark))
        elif r.kind == "skipped_late_window":
            pending.append(((r.key, r.window.start, r.window.end), r))
        elif r.kind in ("side_output", "late_dropped", "element", "arrival"):
            settle(r)
    settle(None)
    return side


def _spark_side(result: TwinResult) -> dict[tuple, _Spark]:
    spec = result.spec
    side: dict[tuple, _Spark] = defaultdict(_Spark)
    for b in result.batches:
        for r in b.rows:
            value = r.count if spec.aggregate == "count" else r.sum
            side[(r.key, r.window_start, r.window_end)].outputs.append(
                (b.batch_id, b.proc_time, value)
            )
    for b, batch in with_inputs(result.batches, result.inputs):  # late rows
        late = b.late_watermark
        for row in batch.rows:
            key, ts = row[KEY], row[TS]
            for start, end in copies(spec, ts):
                why = f"ts {ts} (window end {end})"
                if end <= late:
                    if spec.is_session:
                        why = f"ts {ts} + gap {spec.session_gap}"
                    side[(key, start, end)].dropped.append(
                        f"dropped by Spark's late filter: {why} <= watermark of previous batch "
                        f"{late} (batch {b.batch_id})"
                    )
                elif not spec.is_session:
                    side[(key, start, end)].counted[ts] = (
                        f"counted by Spark: {why} > watermark of previous batch {late} "
                        f"(batch {b.batch_id})"
                    )
    return side


def _open_sessions(result: TwinResult) -> dict[Any, list[list[Any]]]:
    """The sessions (``[start, end, count, sum]`` per key) in Spark's state after the last
    batch: ``result`` replayed through ``SparkModel`` (a streaming query never shows its
    state)."""
    model = SparkModel(result.spec)
    for b, batch in with_inputs(result.batches, result.inputs):
        model.run_batch(batch, b.proc_time)
    return model.sessions


def _reasons(
    g: tuple,
    f: _Flink,
    s: _Spark,
    same: bool,
    final_wm: int,
    open_sessions: dict[Any, list[list[Any]]],
) -> list[str]:
    reasons: list[str] = []
    if any(timing == "late" for _, _, timing, _ in f.firings):
        reasons.append(LATE_REFIRE)
    reasons.extend(dict.fromkeys(f.late))
    reasons.extend(dict.fromkeys(s.counted[ts] for ts in f.late_ts if ts in s.counted))
    reasons.extend(dict.fromkeys(s.dropped))
    if f.firings and not s.outputs:
        end = g[2]
        fired_wm = f.firings[0][3]
        if final_wm < end:
            by = (
                "fired by Flink's end-of-input watermark (MAX)"
                if fired_wm == MAX
                else f"fired by Flink at watermark {fired_wm}"
            )
            reasons.append(
                f"{by}; Spark's watermark stayed at {final_wm} < window end {end}, the window "
                "is still open in Spark's state"
            )
        elif not reasons:
            key, start, end = g
            holding = [o for o in open_sessions.get(key, []) if o[0] <= start and end <= o[1]]
            if holding:
                o_start, o_end, o_count = holding[0][:3]
                reasons.append(
                    f"Spark's session for this key is [{o_start}, {o_end}) with {o_count} "
                    f"rows, still open (its end is past Spark's watermark {final_wm}): it grew "
                    "past Flink's session through rows Flink did not add to it"
                )
            else:
                reasons.append("Spark emitted nothing")
    elif s.outputs and not f.firings and not reasons:
        reasons.append("Flink emitted nothing")
    elif f.firings and s.outputs and same and s.outputs[-1][1] > f.firings[-1][0]:
        reasons.append(APPEND_LATER)
    if not reasons and not same:
        reasons.append("the results differ")
    return reasons
