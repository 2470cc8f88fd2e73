"""The ``watermark`` records as steps per operator, and the job's restarts, which split a
run's steps into attempts."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from winviz.viz.trace_view import Columns, TraceView


def watermark_steps(view: TraceView) -> pd.DataFrame:
    """The ``watermark`` records: seq, operator, proc_time, watermark (ints; MIN/MAX kept)."""
    columns = watermark_step_columns(view)
    return pd.DataFrame({name: columns[name] for name in WATERMARK_STEP_COLUMNS})


WATERMARK_STEP_COLUMNS = ("seq", "operator", "proc_time", "watermark")


def is_user_operator(name: Any) -> bool:
    """Whether ``name`` is an operator of the user's job, not the node
    ``DataStream.get_side_output`` adds (``side:<tag>``, forwarding its operator's
    watermark), which charts leave out."""
    return not str(name).startswith("side:")


def watermark_step_columns(view: TraceView) -> Columns:
    """``watermark_steps`` as ``Columns`` (operator, proc_time and watermark object arrays);
    the side-output node's records left out."""
    rows = view.select("watermark")
    part = view.c.part("operator", ("watermark",))
    pseudo = [i for i, name in enumerate(part.values) if not is_user_operator(name)]
    if pseudo:
        rows = rows[~np.isin(part.codes[rows], pseudo)]
    return Columns(
        {
            "seq": rows,
            "operator": view.column("operator", rows),
            "proc_time": view.column("proc_time", rows),
            "watermark": view.column("watermark", rows),
        }
    )


@dataclass(frozen=True)
class Restart:
    """A ``restore`` record: the job restarted from checkpoint ``checkpoint_id`` (None: from
    the beginning) at processing time ``proc_time`` (the checkpoint's), every watermark at
    MIN; ``failed_at``: the processing time of the record before it (the failure), None when
    the run started from a snapshot."""

    seq: int
    proc_time: int
    failed_at: int | None
    checkpoint_id: int | None

    def words(self, restarted: str = "restarted") -> str:
        """ "restarted from checkpoint 1" (or the beginning); a run from a snapshot "started"."""
        cid = self.checkpoint_id
        source = "the beginning" if cid is None else f"checkpoint {cid}"
        return f"{'started' if self.failed_at is None else restarted} from {source}"


def restarts(view: TraceView) -> list[Restart]:
    """The trace's ``restore`` records, in seq order."""
    rows = view.select("restore")
    if not len(rows):
        return []
    procs = view.column("proc_time", rows).tolist()
    ids = view.detail("restore", "checkpoint_id", rows).tolist()
    failures = view.detail("restore", "failed_at", rows).tolist()
    failed_times = _failure_times(view, rows)
    return [
        Restart(int(seq), proc, None if failed is None or seq == 0 else when, cid)
        for seq, proc, cid, failed, when in zip(
            rows.tolist(), procs, ids, failures, failed_times, strict=True
        )
    ]


def _failure_times(view: TraceView, rows: np.ndarray) -> list[int | None]:
    """When the job failed before each ``restore`` record (``rows``): the latest processing time
    of the records since the previous restore. The clock only moves forward within a run
    attempt and a restart sets it back, so this is the failed attempt's last moment, whatever
    records the restart itself writes before its ``restore`` record (a source's idleness)."""
    found: list[int | None] = []
    start = 0
    for row in rows.tolist():
        times, present = view.ints("proc_time", np.arange(start, row))
        found.append(int(times[present].max()) if present.any() else None)
        start = row + 1
    return found


def steps_by_attempt(
    seqs: list[int], times: list[Any], restarts: list[Restart]
) -> tuple[list[int], list[Any]]:
    """The run attempt and the end of each step of a step line (a watermark's records in seq
    order, ``times`` their processing times): ``attempt`` counts the restarts at or before
    the record; a step ends at the next record's time in the same attempt, where the job
    failed when a restart comes first (at its own time when unknown), the last at None."""
    cuts = [r.seq for r in restarts]
    attempts = [bisect_right(cuts, seq) for seq in seqs]
    ends: list[Any] = []
    for i, attempt in enumerate(attempts):
        if attempt < len(cuts) and (i + 1 == len(seqs) or attempts[i + 1] != attempt):
            failed = restarts[attempt].failed_at
            ends.append(times[i] if failed is None else failed)
        else:
            ends.append(times[i + 1] if i + 1 < len(seqs) else None)
    return attempts, ends
