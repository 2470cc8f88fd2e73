"""The replay after a restore: elements read again.

When a job fails and restarts from a checkpoint (a ``restore`` record, Flink's
``CheckpointCoordinator.restoreLatestCheckpointedStateToAll`` resetting the sources to the
checkpoint's offsets — ``winviz.checkpoints``), the sources read every record after the
checkpoint's offsets again: an element read before the failure is read a second time, with the
same timestamp, often at the same processing time (the simulated clock went back to the
checkpoint's) — and drawn exactly over its first reading. Its fate may differ: the watermark
went back to MIN, so a reading late the first time may be on time the second.

The one rule the timeline, the skew chart and the scrubber share: a reading *again* is an
element whose source record (its ``source_index``, timestamp and value) was read before the
latest restart preceding it; it is drawn as the same glyph hollow and larger (``mark``), so the
first reading stays visible inside it, its tooltip says so (``FIELD``) and the chart's subtitle
names the glyph (``note``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from winviz.viz.watermark_steps import Restart

FIELD = "read again"
"""The tooltip field of a reading again: "after restore from checkpoint 1"."""

LEGEND = "read again (replay)"
"""The title of a legend of readings again, where a chart gives them their own."""

SIZE_FACTOR = 2.6
"""A reading again is drawn this many times the area of the chart's element glyph: its ring
lies around the first reading's glyph (about 1.6 × as wide)."""


def restart_text(r: Restart) -> str:
    """What a reading again is read after: "restore from checkpoint 1" (or "restart from the
    beginning")."""
    if r.checkpoint_id is None:
        return "restart from the beginning"
    return f"restore from checkpoint {r.checkpoint_id}"


def read_again(
    seqs: Sequence[int],
    sources: Sequence[Any],
    stamps: Sequence[Any],
    values: Sequence[Any],
    restarts: Sequence[Restart],
) -> list[str | None]:
    """Per element (its seq, ``source_index``, timestamp and value): "after restore from
    checkpoint N" when an element of the same source record was read before the latest
    restart preceding it (the replay reads it again), else None. Elements without a source
    record (made by a firing upstream) are never called read again."""
    if not restarts:
        return [None] * len(seqs)
    cuts = [r.seq for r in restarts]
    first: dict[tuple[Any, Any, Any], int] = {}  # a source record -> its first reading's seq
    for seq, source, ts, value in zip(seqs, sources, stamps, values, strict=True):
        if source is not None:
            at = (source, ts, value)
            first[at] = min(seq, first.get(at, seq))
    out: list[str | None] = []
    for seq, source, ts, value in zip(seqs, sources, stamps, values, strict=True):
        attempt = bisect_right(cuts, seq)  # restarts at or before this reading
        before = first.get((source, ts, value)) if source is not None else None
        if attempt and before is not None and before < cuts[attempt - 1]:
            out.append("after " + restart_text(restarts[attempt - 1]))
        else:
            out.append(None)
    return out


def split(
    rows: list[dict[str, Any]], again: Sequence[str | None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of first readings, and those of readings again — each with its ``FIELD``
    (its tooltip) — in order."""
    first, replayed = [], []
    for row, text in zip(rows, again, strict=True):
        if text is None:
            first.append(row)
        else:
            replayed.append(row | {FIELD: text})
    return first, replayed


def mark(element_mark: dict[str, Any], size: float) -> dict[str, Any]:
    """The mark of readings again: the element mark's glyph hollow (``filled`` False),
    ``SIZE_FACTOR`` times its area (``size``: the element glyph's), with a 1.5 px stroke
    — drawn over a first reading at its point, that reading stays visible inside it."""
    return element_mark | {
        "filled": False,
        "size": round(size * SIZE_FACTOR),
        "strokeWidth": 1.5,
        "opacity": 1,
    }


def note(replayed: list[dict[str, Any]]) -> str | None:
    """The subtitle's note on the readings again (None: there are none)."""
    if not replayed:
        return None
    n = len(replayed)
    after = sorted(set(r[FIELD] for r in replayed))
    return (
        f"{n:,} element{'' if n == 1 else 's'} read again {', '.join(after)} (the replay): "
        "drawn hollow and larger, around the first reading where it is read at the same place"
    )
