"""What a restore undid, read off the trace (the one place this rule lives, for ``winviz.why``
and ``winviz.viz`` alike). Flink restores a failed job from its last completed checkpoint
(``CheckpointCoordinator.restoreLatestCheckpointedState``) and replays the input after it: what
the failed attempt did after that checkpoint is rolled back, and a window's replayed firing is
counted as if the rolled-back one had never happened.

**The run at processing time t** (``kept_at``) is what the run keeps: the records made by t that
no restore rolled back. Where a failed attempt and its replay overlap — the processing times
from the restored checkpoint to the failure, which both passed, for the clock went back — t
shows the replay; a rolled-back record is in the run at no t. Every chart and line "at t" (the
scrubber's bands and firings, the explorer's ``state_at``) reads the run so.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from winviz.trace import vocabulary as words

if TYPE_CHECKING:
    from winviz.trace.store import Trace


def rolled_back(trace: Trace) -> list[tuple[int, int]]:
    """The seq spans a restore rolled back: from the record of the checkpoint it restored (of a
    run's snapshot, its own ``restore`` record; none: the trace's start) to the ``restore`` record.
    Flink replays from the checkpoint: what the failed attempt did after it is undone."""
    taken: dict[Any, int] = {}  # checkpoint id -> the seq of its record
    spans = []
    for r in trace.records("checkpoint", "restore"):
        checkpoint_id = r.detail[0]
        if r.kind == "checkpoint" or r.detail[3] is None:  # (a run started from a snapshot)
            taken[checkpoint_id] = r.seq
        else:
            spans.append((taken.get(checkpoint_id, -1), r.seq))
    return spans


def started_from(trace: Trace) -> int | None:
    """The checkpoint of an earlier run this trace's run started from (``execute(restore_from=
    ...)``: a ``restore`` record without a failure), else None. Its firings are not traced."""
    starts = [r.detail[0] for r in trace.records("restore") if r.detail[3] is None]
    return starts[0] if starts else None


def kept(rows: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """Of ``rows`` (record seqs), those none of ``spans`` (``rolled_back``) rolled back."""
    for start, restore in spans:
        rows = rows[(rows <= start) | (rows >= restore)]
    return rows


def restored(trace: Trace) -> bool:
    """Whether the trace holds a ``restore`` record (a kind its records never name: no scan)."""
    return "restore" in trace.columns().kind.values and bool(len(trace.rows_where("restore")))


def undone(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """Per record of ``rows`` (record seqs), whether a restore rolled it back: not ``kept``,
    so in the run at no processing time (``kept_at``). All False without a restore."""
    if not restored(trace):
        return np.zeros(len(rows), dtype=bool)
    return ~np.isin(rows, kept(rows, rolled_back(trace)))


def kept_before(rows: np.ndarray, seq: int, spans: list[tuple[int, int]]) -> int:
    """How many of ``rows`` (record seqs) before ``seq`` the run still keeps at ``seq``: those no
    restore before ``seq`` rolled back (``spans``: ``rolled_back``)."""
    return len(kept(rows[rows < seq], [span for span in spans if span[1] < seq]))


def kept_at(
    rows: np.ndarray, procs: np.ndarray, t: float, spans: list[tuple[int, int]]
) -> np.ndarray:
    """Of ``rows`` (record seqs; ``procs``: their processing times), those the run has at
    processing time ``t``: made by t, and rolled back by no restore (``spans``: ``rolled_back``).
    A restore sets the clock back to its checkpoint's time (none: the start) and replays from
    there, so the replay passes every time the failed attempt had reached: at any t the run is
    what the checkpoint kept plus what the replay redid by t, never the rolled-back records
    (the module's rule for the run at t)."""
    return kept(rows[procs <= t], spans)


def undone_by(seq: int, spans: list[tuple[int, int]]) -> int | None:
    """The seq of the ``restore`` record that rolled back the record at ``seq`` (``spans``:
    ``rolled_back``), None when the run keeps it."""
    return next((end for start, end in spans if start < seq < end), None)


def is_rolled_back(seq: int, spans: list[tuple[int, int]]) -> bool:
    """Whether a later restore rolled back the record at ``seq`` (``spans``: ``rolled_back``)."""
    return undone_by(seq, spans) is not None


def firing_orders(
    trace: Trace, seqs: Sequence[int] | np.ndarray, windows: Sequence[Hashable]
) -> list[str]:
    """Each ``fired`` record (``seqs``, ascending, of one operator; ``windows``: its key and
    window) named by ``vocabulary.firing_order``: its earlier firings of that key and window are
    those the run still keeps (``kept_before``), a rolled-back one says so, and a first firing of
    a run started from a snapshot is the first "in this trace"."""
    if not restored(trace):  # (no restore: every earlier firing counts)
        first, again = words.firing_order(0), words.firing_order(1)
        seen: set[Hashable] = set()
        out = []
        for ident in windows:
            out.append(again if ident in seen else first)
            seen.add(ident)
        return out
    spans, snapshot = rolled_back(trace), started_from(trace) is not None
    history: dict[Hashable, list[int]] = {}
    for seq, ident in zip(seqs, windows, strict=True):
        history.setdefault(ident, []).append(int(seq))
    arrays = {ident: np.array(rows, dtype=np.int64) for ident, rows in history.items()}
    return [
        words.firing_order(
            kept_before(arrays[ident], int(seq), spans),
            rolled_back=is_rolled_back(int(seq), spans),
            in_this_trace=snapshot,
        )
        for seq, ident in zip(seqs, windows, strict=True)
    ]
