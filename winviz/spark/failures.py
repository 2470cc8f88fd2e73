"""A Spark query that fails mid-run: which micro-batch, which input row, and what completed.

Spark stops a streaming query at the first failing task and raises ``StreamingQueryException``
(from ``processAllAvailable()`` / ``awaitTermination()``); the batches before it were
committed and their output already reached ``foreachBatch``. The failing batch is the next
``batchId``; with ``maxFilesPerTrigger=1`` it was reading the first file not yet read (or none:
a no-data batch); the row is known when winviz's own code failed (``record_marker``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from winviz.errors import WinvizError
from winviz.spark.batches import InputBatch

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
