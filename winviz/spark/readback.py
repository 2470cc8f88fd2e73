"""Reading a query back: Spark's ``StreamingQueryProgress`` reports (``query.recentProgress``)
and the rows ``foreachBatch`` captured become ``BatchOutcome``s; a query that failed
(``StreamingQueryException``) becomes a ``SparkQueryError`` naming its micro-batch and row.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from winviz.errors import WinvizError
from winviz.spark.batches import NO_DATA, InputBatch
from winviz.spark.results import BatchOutcome, OutputRow

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MS = _dt.timedelta(milliseconds=1)


class ReadbackError(RuntimeError):
    """Spark's progress reports do not match the batches that ran."""


def iso_to_ms(text: str) -> int:
    """``"1970-01-01T00:00:06.000Z"`` -> 6000 (exact integer ms)."""
    return (_dt.datetime.fromisoformat(text) - _EPOCH) // _MS


def to_outcomes(
    progress: Sequence[Mapping[str, Any]],
    captured: Mapping[int, list[OutputRow]],
    inputs: Sequence[InputBatch],
    *,
    complete: bool = True,
) -> list[BatchOutcome]:
    """One ``BatchOutcome`` per batch that reached ``foreachBatch``, in ``batchId`` order (the
    idle reports of batches that never ran are skipped), each its last progress report. Data
    batches are matched to ``inputs`` in order (one file each) and must have read its rows.
    ``complete=False`` (a failed query): only the batches that reported progress, and inputs
    may be left unread."""
    ids = sorted(captured)
    reports = {p["batchId"]: p for p in progress if p["batchId"] in captured}
    if not complete:
        ids = [i for i in ids if i in reports]
    missing = [i for i in ids if i not in reports]
    if missing:
        raise ReadbackError(
            f"no progress report for batches {missing}; raise "
            "spark.sql.streaming.numRecentProgressUpdates"
        )
    data = iter(inputs)
    outcomes = []
    previous_wm = 0
    last_proc = inputs[0].proc_time if inputs else 0
    for batch_id in ids:
        p = reports[batch_id]
        n = p["numInputRows"]
        batch = next(data, None) if n else NO_DATA
        if batch is None or len(batch.rows) != n:
            expected = None if batch is None else len(batch.rows)
            raise ReadbackError(f"batch {batch_id} read {n} rows; its file has {expected}")
        event_time = p.get("eventTime", {})
        watermark = iso_to_ms(event_time["watermark"]) if "watermark" in event_time else 0
        max_et = iso_to_ms(event_time["max"]) if "max" in event_time else None
        last_proc = batch.proc_time if n else last_proc
        outcomes.append(
            BatchOutcome(
                batch_id=batch_id,
                interval=batch.interval,
                proc_time=last_proc,
                input_rows=n,
                max_event_time=max_et,
                watermark=watermark,
                late_watermark=previous_wm,
                dropped=sum(
                    op.get("numRowsDroppedByWatermark", 0) for op in p.get("stateOperators", [])
                ),
                rows=tuple(captured[batch_id]),
            )
        )
        previous_wm = watermark
    leftover = list(data)
    if leftover and complete:
        raise ReadbackError(f"{len(leftover)} input batches were never read by Spark")
    return outcomes


_MARK = re.compile(r"\[winviz record (\d+)\]")


def record_marker(index: int) -> str:
    """The text a handler puts in its exception to name the input record it was handling."""
    return f"[winviz record {index}]"


def marked_record(text: str) -> int | None:
    """The input index a ``record_marker`` in ``text`` names, or None."""
    found = _MARK.search(text)
    return int(found.group(1)) if found else None


class SparkQueryError(WinvizError, RuntimeError):
    """The Spark query failed in micro-batch ``batch_id``. ``input_batch`` is the input batch
    it was reading (None: a no-data batch), ``row`` / ``index`` the failing row in it and its
    input index when known, ``outcomes`` the batches that completed before (also on
    ``partial_result``), ``spark_message`` Spark's own message."""

    def __init__(
        self,
        *,
        batch_id: int,
        input_batch: InputBatch | None,
        index: int | None,
        outcomes: Sequence[Any],
        spark_message: str,
    ) -> None:
        self.batch_id = batch_id
        self.input_batch = input_batch
        self.index = index
        self.row = (
            input_batch.indexes.index(index)
            if input_batch is not None and index in input_batch.indexes
            else None
        )
        self.outcomes = list(outcomes)
        self.partial_result = self.outcomes
        self.spark_message = spark_message
        if input_batch is None:
            where = "a no-data batch"
        else:
            where = f"input batch {input_batch.seq} (proc time {input_batch.proc_time})"
        if self.row is not None:
            where += f", row {self.row} (record {index}: {input_batch.rows[self.row]!r})"
        cause = _first_lines(spark_message)
        super().__init__(
            f"Spark failed in micro-batch {batch_id}, {where}: {cause} "
            f"({len(self.outcomes)} completed batches kept on .outcomes)"
        )


def _first_lines(text: str) -> str:
    """The informative part of a Spark error: the Python exception line when there is one,
    else the first line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception): ", ln) and "Traceback" not in ln:
            return ln
    return lines[0] if lines else "(no message)"
