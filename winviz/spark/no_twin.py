"""Why a pipeline has no Spark twin: the refusal vocabulary (``NO_TWIN``, one sentence per
obstacle) that ``winviz.spark.builder`` gives window and join twins alike, and
``NoTwinError``, raised when a twin without a spec is asked to run."""

from __future__ import annotations

from collections.abc import Sequence

from winviz.errors import WinvizError

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
