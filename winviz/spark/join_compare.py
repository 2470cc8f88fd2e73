"""Flink's interval join and Spark's stream-stream join of the same data, side by side.

``flink_interval_join`` runs the engine's interval join (Flink's ``IntervalJoinOperator``) with
a ``JoinSpec``'s bounds and delays; ``compare_join`` says, per pair the condition joins and per
NULL row of Spark's outer join, whether each engine output it, when, and why not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from winviz.errors import InputError
from winviz.spark.batches import KEY, LEFT, RIGHT, SIDE_NAMES, TS, InputBatch
from winviz.spark.join_model import JoinSpec, join_batches, joins
from winviz.spark.results import TwinResult

COLUMNS = [
    "key",
    "left_index",
    "left_ts",
    "right_index",
    "right_ts",
    "flink",
    "flink_time",
    "spark",
    "spark_batch",
    "spark_time",
    "reason",
]
LATE_TAGS = ("late-left", "late-right")
SPARK_LATER = (
    "the same pair, later: Spark outputs a micro-batch's rows when the batch runs, Flink "
    "when the second row of the pair arrives"
)


def _sides(inputs: Sequence[InputBatch]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each side's rows as ``{side, i, key, ts, arrival}``, from the join twin's input batches
    (``join_batches``)."""
    rows: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    for b in inputs:
        for r, (side, i), arrival in zip(b.rows, b.indexes, b.arrivals, strict=True):  # type: ignore[misc]
            rows[side].append(
                {"side": side, "i": i, "key": r[KEY], "ts": r[TS], "arrival": arrival}
            )
    return (sorted(rows[0], key=lambda r: r["i"]), sorted(rows[1], key=lambda r: r["i"]))


def flink_interval_join(
    left: Sequence[Any],
    left_arrivals: Sequence[int],
    right: Sequence[Any],
    right_arrivals: Sequence[int],
    spec: JoinSpec,
    *,
    auto_watermark_interval: int = 200,
) -> Any:
    """The engine's interval join of the same inputs (``JobExecutionResult``): output
    ``(left index, right index)`` per pair, late rows to the side outputs ``LATE_TAGS``;
    periodic watermarks every ``auto_watermark_interval`` ms (the environment's setting)."""
    import winviz as wv

    lrows, rrows = _sides(join_batches(left, left_arrivals, right, right_arrivals, spec))
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=auto_watermark_interval)

    def stream(rows: list[dict[str, Any]], delay: int, name: str) -> Any:
        strategy = wv.WatermarkStrategy.for_bounded_out_of_orderness(delay)
        strategy = strategy.with_timestamp_assigner(lambda e, _: e["ts"])
        rows = sorted(rows, key=lambda r: (r["arrival"], r["i"]))  # a source's arrival order
        values = [{k: r[k] for k in ("side", "i", "key", "ts")} for r in rows]
        source = env.from_collection(values, arrival_times=[r["arrival"] for r in rows], name=name)
        return source.assign_timestamps_and_watermarks(strategy).key_by(lambda e: e["key"])

    class Pair(wv.ProcessJoinFunction):
        def process_element(self, le: Any, ri: Any, ctx: Any, out: Any) -> None:
            out.collect((le["i"], ri["i"]))

    between = (
        stream(lrows, spec.left_delay, "left")
        .interval_join(stream(rrows, spec.right_delay, "right"))
        .between(spec.lower, spec.upper)
    )
    if not spec.lower_inclusive:
        between = between.lower_bound_exclusive()
    if not spec.upper_inclusive:
        between = between.upper_bound_exclusive()
    joined = (
        between.side_output_left_late_data(wv.OutputTag(LATE_TAGS[0]))
        .side_output_right_late_data(wv.OutputTag(LATE_TAGS[1]))
        .process(Pair())
    )
    joined.sink_to("pairs")
    return env.execute()


class _FlinkFates:
    """What the engine's trace says: pairs emitted (with proc time), rows late (with the
    watermark) and buffer removals."""

    def __init__(self, trace: Any) -> None:
        records = list(trace.records())
        ops = sorted({r.operator for r in records if r.kind == "buffered"})
        ops = ops or sorted({r.operator for r in records if r.kind == "side_output"})
        op = ops[0] if ops else None
        self.pairs: dict[tuple[int, int], int] = {}
        self.late: dict[tuple[int, int], int] = {}
        self.arrived: dict[tuple[int, int], int] = {}
        self.removed: list[tuple[int, Any, int, int, int]] = []  # seq, key, side, ts, wm
        self.removed_at: dict[int, int] = {}  # seq -> proc_time
        for r in records:
            if r.operator != op:
                continue
            if r.kind == "emitted":
                self.pairs.setdefault(tuple(r.detail), r.proc_time)
            elif r.kind == "element":
                self.arrived[(r.detail["side"], r.detail["i"])] = r.seq
            elif r.kind == "side_output":
                value = r.detail[1]
                self.late[(value["side"], value["i"])] = r.watermark
            elif r.kind == "buffer_removed":
                side = LEFT if r.detail[0] in ("left", LEFT) else RIGHT
                self.removed.append((r.seq, r.key, side, r.ts, r.watermark))

    def removal(self, side: int, row: dict[str, Any]) -> tuple[int, int] | None:
        """(seq, watermark) of the removal of ``row``'s buffer after it arrived."""
        arrived = self.arrived.get((side, row["i"]))
        if arrived is None:
            return None
        for seq, key, s, ts, wm in self.removed:
            if s == side and key == row["key"] and ts == row["ts"] and seq > arrived:
                return seq, wm
        return None


def compare_join(engine_result: Any, spark_result: TwinResult) -> Any:
    """A pandas DataFrame (columns ``COLUMNS``): one row per pair the condition joins and per
    NULL row Spark output, sorted by key and indexes (``winviz.spark.compare`` of a join
    twin's result); ``engine_result`` is ``flink_interval_join`` of the same input."""
    import pandas as pd

    spec = spark_result.spec
    assert isinstance(spec, JoinSpec)
    if spec.join_type == "left_semi":
        raise InputError(
            "compare_join compares pairs; a left semi join outputs left rows only",
            field="join_type",
            value=spec.join_type,
            expected="inner, left_outer, right_outer or full_outer",
        )
    lrows, rrows = _sides(spark_result.inputs)
    rows_of = (lrows, rrows)
    flink = _FlinkFates(engine_result.trace)
    spark_pairs: dict[tuple[Any, Any], tuple[int, int]] = {}
    arrived_in: dict[tuple[int, int], int] = {}
    late_in: dict[tuple[int, int], tuple[int, int]] = {}
    evicted_in: dict[tuple[int, int], tuple[int, int, int]] = {}
    for b in spark_result.batches:
        for r in b.rows:
            spark_pairs.setdefault((r.left_index, r.right_index), (b.batch_id, b.proc_time))
        for side, i in b.late:
            late_in[(side, i)] = (b.batch_id, b.late_watermark)
        for side, i, _ in b.evicted:
            evicted_in.setdefault((side, i), (b.batch_id, b.state_watermarks[side], b.watermark))
        for side, i in b.arrived:  # the batch each input row was read in
            arrived_in[(side, i)] = b.batch_id

    def flink_late(side: int, row: dict[str, Any]) -> str | None:
        if (side, row["i"]) not in flink.late:
            return None
        return (
            f"Flink dropped {SIDE_NAMES[side]} row {row['i']} (ts {row['ts']}) as late: "
            f"{row['ts']} < watermark {flink.late[(side, row['i'])]}"
        )

    def flink_gone(side: int, row: dict[str, Any], other: int, orow: dict[str, Any]) -> Any:
        removal = flink.removal(side, row)
        arrived = flink.arrived.get((other, orow["i"]))
        if removal is None or arrived is None or removal[0] >= arrived:
            return None
        return (
            f"Flink removed {SIDE_NAMES[side]} row {row['i']} (ts {row['ts']}) from its "
            f"buffer at watermark {removal[1]} before {SIDE_NAMES[other]} row {orow['i']} arrived"
        )

    def spark_late(side: int, row: dict[str, Any]) -> str | None:
        if (side, row["i"]) not in late_in:
            return None
        batch, wm = late_in[(side, row["i"])]
        return (
            f"Spark dropped {SIDE_NAMES[side]} row {row['i']} (ts {row['ts']}) as late "
            f"in batch {batch}: {row['ts']} <= watermark of previous batch {wm}"
        )

    def spark_gone(side: int, row: dict[str, Any], other: int, orow: dict[str, Any]) -> Any:
        batch, swm, wm = evicted_in.get((side, row["i"]), (None, None, None))
        later = arrived_in.get((other, orow["i"]))
        if batch is None or later is None or later <= batch:
            return None
        name, formula = SIDE_NAMES[side], state_watermark_formula(spec, side, wm)
        return (
            f"Spark evicted {name} row {row['i']} in batch {batch} (ts {row['ts']} <= "
            f"{name} state watermark {swm} = {formula}) before {SIDE_NAMES[other]} row "
            f"{orow['i']} arrived in batch {later}"
        )

    def why_not(who: str, late: Any, gone: Any, lr: Any, rr: Any) -> list[str]:
        """Why ``who`` did not output the pair: its rows that were late, else its rows removed
        before the other arrived, else nothing."""
        pairs = ((LEFT, lr, RIGHT, rr), (RIGHT, rr, LEFT, lr))
        dropped = [m for side, row, _, _ in pairs if (m := late(side, row)) is not None]
        removed = [m for p in pairs if (m := gone(*p)) is not None]
        return dropped or removed or [f"{who} emitted nothing"]

    table = []
    for lr in lrows:
        for rr in rrows:
            if lr["key"] != rr["key"] or not joins(spec, lr["ts"], rr["ts"]):
                continue
            pair = (lr["i"], rr["i"])
            f_time = flink.pairs.get(pair)
            s = spark_pairs.get(pair)
            reasons: list[str] = []
            if f_time is None:
                reasons += why_not("Flink", flink_late, flink_gone, lr, rr)
            if s is None:
                reasons += why_not("Spark", spark_late, spark_gone, lr, rr)
            if f_time is not None and s is not None and s[1] > f_time:
                reasons.append(SPARK_LATER)
            table.append(_row(lr, rr, f_time, s, reasons))
    for (li, ri), s in spark_pairs.items():
        if li is not None and ri is not None:
            continue
        side = LEFT if ri is None else RIGHT
        row = rows_of[side][li if side == LEFT else ri]
        batch, swm, _ = evicted_in.get((side, row["i"]), (s[0], None, None))
        reason = (
            f"Spark {spec.join_type}: {SIDE_NAMES[side]} row {row['i']} never matched; "
            f"emitted with NULLs when evicted in batch {batch} (ts {row['ts']} <= "
            f"{SIDE_NAMES[side]} state watermark {swm}); Flink's interval join has no outer rows"
        )
        lr, rr = (row, None) if side == LEFT else (None, row)
        table.append(_row(lr, rr, None, s, [reason]))
    frame = pd.DataFrame(table, columns=COLUMNS, dtype=object)
    frame = frame.sort_values(
        ["key", "left_index", "right_index"], key=lambda c: c.astype(str), ignore_index=True
    )
    ints = ["left_index", "left_ts", "right_index", "right_ts", "flink_time"]
    ints += ["spark_batch", "spark_time"]
    return frame.astype({c: "Int64" for c in ints} | {"flink": bool, "spark": bool})


def state_watermark_formula(spec: JoinSpec, side: int, watermark: int) -> str:
    """How the side's state watermark is solved from ``watermark`` (``join_model`` rule 2)."""
    if side == LEFT:
        return f"{watermark} - {spec.upper}" + (" - 1" if spec.upper_inclusive else "")
    return f"{watermark} + {spec.lower}" + (" - 1" if spec.lower_inclusive else "")


def _row(
    lr: dict[str, Any] | None,
    rr: dict[str, Any] | None,
    f_time: int | None,
    s: tuple[int, int] | None,
    reasons: list[str],
) -> dict[str, Any]:
    key = (lr if lr is not None else rr)["key"]  # type: ignore[index]
    left = (None, None) if lr is None else (lr["i"], lr["ts"])
    right = (None, None) if rr is None else (rr["i"], rr["ts"])
    spark = (None, None) if s is None else s
    values = (key, *left, *right, f_time is not None, f_time, s is not None, *spark)
    return dict(zip(COLUMNS, (*values, "; ".join(dict.fromkeys(reasons))), strict=True))
