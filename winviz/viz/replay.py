"""The replay after a restore: elements read again.

After a restore (a ``restore`` record: Flink's ``CheckpointCoordinator`` resetting the sources
to the checkpoint's offsets, ``winviz.checkpoints``) the sources read every record after those
offsets again, often at the same place as the first reading, maybe with another fate (the
watermark went back to MIN). The timeline, skew chart and scrubber draw a reading *again* —
an element whose source record was read before the latest restart preceding it — as the same
glyph hollow and larger (``mark``), say so in its tooltip (``FIELD``) and subtitle (``note``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from winviz.trace import restores
from winviz.trace import vocabulary as words
from winviz.viz.watermark_steps import Restart

if TYPE_CHECKING:
    from winviz.trace.store import Trace

FIELD = "read again"
"""The tooltip field of a reading again: "after restore from checkpoint 1"."""
LEGEND = "read again (replay)"
"""The title of a legend of readings again, where a chart gives them their own."""
SIZE_FACTOR = 2.6
"""A reading again's area, in element glyphs (a ring about 1.6 × as wide)."""


def read_again(
    seqs: Sequence[int],
    sources: Sequence[Any],
    stamps: Sequence[Any],
    values: Sequence[Any],
    restarts: Sequence[Restart],
) -> list[str | None]:
    """Per element (seq, ``source_index``, timestamp, value): "after restore from checkpoint
    N" (or "after restart from the beginning") when the same source record was read before
    the latest restart preceding it, else None (always for elements without a source)."""
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
            checkpoint = restarts[attempt - 1].checkpoint_id
            out.append(
                "after restart from the beginning"
                if checkpoint is None
                else f"after restore from checkpoint {checkpoint}"
            )
        else:
            out.append(None)
    return out


def split(
    rows: list[dict[str, Any]], again: Sequence[str | None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of first readings, and those of readings again with their ``FIELD``."""
    first, replayed = [], []
    for row, text in zip(rows, again, strict=True):
        if text is None:
            first.append(row)
        else:
            replayed.append(row | {FIELD: text})
    return first, replayed


def mark(element_mark: dict[str, Any], size: float) -> dict[str, Any]:
    """The mark of readings again: the element glyph (area ``size``) hollow, ``SIZE_FACTOR``
    times its area, so a first reading at its point stays visible inside it."""
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
    after = sorted(set(r[FIELD] for r in replayed))
    return (
        f"{words.counted(len(replayed), 'element')} read again {', '.join(after)} (the replay): "
        "drawn hollow and larger, around the first reading where it is read at the same place"
    )


def elements_text(trace: Trace, elements: Any) -> str:
    """A subtitle's count of ``elements`` (readings: their "seq"): the run's elements, each
    once, with those the replay read again: "8 elements (1 read again after a restore)". A
    reading a restore rolled back (``restores.undone``) is read again by the replay."""
    n = int(restores.undone(trace, np.asarray(elements["seq"])).sum())
    return words.elements_count(len(elements["seq"]) - n, n)


def fates_text(trace: Trace, elements: Any) -> str:
    """A subtitle's count of ``elements`` (readings: their "seq" and "fate_code", the fate's
    index in ``vocabulary.ELEMENT_FATES``) by fate: the run's readings, then those a restore
    rolled back (``restores.undone``): "8 on time; rolled back by a restore: 1 side output"."""
    codes = np.asarray(elements["fate_code"])
    undone = restores.undone(trace, np.asarray(elements["seq"]))
    if not undone.any():
        return _by_fate(codes)
    return f"{_by_fate(codes[~undone])}; {words.ROLLED_BACK}: {_by_fate(codes[undone])}"


def _by_fate(codes: np.ndarray) -> str:
    """Readings counted by fate: "8 on time, 1 side output"."""
    counts = np.bincount(codes, minlength=len(words.ELEMENT_FATES)).tolist()
    return ", ".join(f"{n:,} {f}" for f, n in zip(words.ELEMENT_FATES, counts, strict=True) if n)
