"""The trace as columns (``TraceColumns``, what every reader reads: ``Trace.columns()``):
``seq`` and the times as ``int64`` (``TimeColumn``), ``kind``, ``operator``, ``key`` and
``window`` coded (``CodedColumn``), ``detail`` as objects.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any, Generic, TypeVar

import numpy as np

from winviz.trace.coded import (
    CodedColumn,
    Merged,
    TimeColumn,
    encode,
    gather,
    object_array,
    time_column,
)
from winviz.trace.pieces import Pieces

_WHOLE = ("kind", "operator")  # (``TraceColumns.part``: always read whole)
T = TypeVar("T")


class _Decoded(Generic[T]):
    """A ``TraceColumns`` field, decoded the first time it is read (``pending``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot = name, "_" + name

    def __get__(self, c: TraceColumns | None, owner: type | None = None) -> T:
        if c is None:  # (the class's attribute)
            return self  # type: ignore[return-value]
        value = getattr(c, self.slot)
        if value is None:
            value = c._decode(self.name)  # type: ignore[misc]
            setattr(c, self.slot, value)
            c._parts.pop(self.name, None)
        return value


class TraceColumns:
    """A trace, column by column; a first read's columns are each decoded when first asked
    for (``pending``), or in ``part``s of some kinds' records."""

    __slots__ = (
        "_decode",
        "_detail",
        "_key",
        "_kind",
        "_operator",
        "_part",
        "_parts",
        "_proc_time",
        "_ts",
        "_watermark",
        "_window",
        "seq",
    )

    kind = _Decoded[CodedColumn]()
    proc_time = _Decoded[TimeColumn]()
    watermark = _Decoded[TimeColumn]()
    operator = _Decoded[CodedColumn]()
    key = _Decoded[CodedColumn]()
    window = _Decoded[CodedColumn]()
    ts = _Decoded[TimeColumn]()
    detail = _Decoded[np.ndarray]()

    def __init__(
        self,
        seq: np.ndarray,
        kind: CodedColumn,
        proc_time: TimeColumn,
        watermark: TimeColumn,
        operator: CodedColumn,
        key: CodedColumn,
        window: CodedColumn,
        ts: TimeColumn,
        detail: np.ndarray,
    ) -> None:
        self.seq = seq
        self._kind, self._proc_time, self._watermark = kind, proc_time, watermark
        self._operator, self._key, self._window = operator, key, window
        self._ts, self._detail = ts, detail
        self._decode: Callable[[str], Any] | None = None
        self._part: Callable[..., Any] | None = None
        self._parts: dict[str, tuple[frozenset[str], Any]] = {}

    @classmethod
    def pending(
        cls,
        seq: np.ndarray,
        decode: Callable[[str], Any],
        part: Callable[..., Any] | None = None,
    ) -> TraceColumns:
        """Columns whose fields ``decode(name)`` gives when first read; ``part``: a field's
        column on some kinds' records (``Pieces.part``)."""
        columns = cls(seq, *([None] * 8))  # type: ignore[arg-type]
        columns._decode, columns._part = decode, part
        return columns

    def part(self, name: str, kinds: Iterable[str]) -> Any:
        """Field ``name``'s column for a reader of these ``kinds``' records only: full length,
        decoded on those records (a coded part has a dictionary of its own). A part is kept
        and grows; the whole column when decoded already, for every kind, for ``kind`` and
        ``operator``, or when the columns cannot decode parts."""
        if self._part is None or name in _WHOLE or getattr(self, "_" + name) is not None:
            return getattr(self, name)
        wanted = frozenset(kinds)
        have = self._parts.get(name)
        if have is not None and wanted <= have[0]:
            return have[1]
        kind = self.kind
        covered = wanted if have is None else wanted | have[0]
        if covered.issuperset(kind.values):  # every record: the whole column
            return getattr(self, name)
        column = self._part(name, covered if have is None else wanted - have[0], kind, have)
        self._parts[name] = (covered, column)
        return column

    def values_at(
        self, name: str, rows: np.ndarray, kinds: Collection[str] | None = None
    ) -> np.ndarray:
        """Field ``name`` (coded or ``detail``) of the records at these positions, as objects:
        while not decoded, read from only these records when few (``Pieces.values_at``), else
        from their ``kinds``' part (when given)."""
        rows = np.asarray(rows, dtype=np.int64)
        pieces = getattr(self._part, "__self__", None)
        if getattr(self, "_" + name) is None and isinstance(pieces, Pieces) and pieces.left:
            have = self._parts.get(name)
            few = len(rows) * 8 <= len(self)
            if kinds is None or ((have is None or not have[0].issuperset(kinds)) and few):
                return pieces.values_at(name, rows, self.kind)
            column = self.part(name, kinds)
            return column[rows] if name == "detail" else column.decode(rows)
        column = getattr(self, name)
        return column[rows] if name == "detail" else column.decode(rows)

    def detail_items(self) -> list[tuple[str | None, np.ndarray, Any]]:
        """The detail field in pieces as the write buffer holds them: (kind or None, rows,
        a ``Packed.fields`` item) each (``winviz.trace.frame.detail_fields``)."""
        pieces = getattr(self._part, "__self__", None)
        if isinstance(pieces, Pieces):
            if self._detail is None:
                return pieces.detail_items()
            return pieces.kept_details(self._detail)
        return [(None, np.arange(len(self)), self.detail)]

    def __repr__(self) -> str:
        return f"TraceColumns({len(self)} records)"

    def __len__(self) -> int:
        return len(self.seq)

    def take(self, rows: np.ndarray) -> TraceColumns:
        """The records at these positions (their ``seq`` kept)."""
        return TraceColumns(
            self.seq[rows],
            self.kind.take(rows),
            self.proc_time.take(rows),
            self.watermark.take(rows),
            self.operator.take(rows),
            self.key.take(rows),
            self.window.take(rows),
            self.ts.take(rows),
            self.detail[rows],
        )

    def window_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(start, end, is a time window) per record (``window_table`` by their codes)."""
        codes = self.window.codes
        starts, ends, has = (gather(t, codes) for t in window_table(self.window.values))
        return starts, ends, has


def window_table(windows: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, is a time window) of each distinct window."""
    n = len(windows)
    starts = np.zeros(n, dtype=np.int64)
    ends = np.zeros(n, dtype=np.int64)
    has = np.zeros(n, dtype=bool)
    for i, w in enumerate(windows):
        end = getattr(w, "end", None)
        if end is not None:
            starts[i], ends[i], has[i] = w.start, end, True
    return starts, ends, has


def from_fields(fields: list[Any], seq: np.ndarray | int = 0) -> TraceColumns:
    """Columns of records given field by field (``BASE_FIELDS`` order), numbered ``seq`` (an
    ``int64`` array) or from ``seq`` on."""
    kind, proc, wm, op, key, window, ts, detail = (
        f.tolist() if isinstance(f, np.ndarray) else f for f in fields
    )
    n = len(kind)
    return TraceColumns(
        np.arange(seq, seq + n, dtype=np.int64) if isinstance(seq, int) else seq,
        encode(kind, fast=True),
        time_column(proc),
        time_column(wm),
        encode(op, fast=True),
        encode(key),
        encode(window, fast=True),
        time_column(ts),
        fields[7] if isinstance(fields[7], np.ndarray) else object_array(detail),
    )


def concat(chunks: list[TraceColumns]) -> TraceColumns:
    """One ``TraceColumns`` of several, in order (their dictionaries merged)."""
    if len(chunks) == 1:
        return chunks[0]
    return TraceColumns(
        np.concatenate([c.seq for c in chunks]),
        _concat_coded([c.kind for c in chunks]),
        _concat_time([c.proc_time for c in chunks]),
        _concat_time([c.watermark for c in chunks]),
        _concat_coded([c.operator for c in chunks]),
        _concat_coded([c.key for c in chunks]),
        _concat_coded([c.window for c in chunks]),
        _concat_time([c.ts for c in chunks]),
        np.concatenate([c.detail for c in chunks]),
    )


def _concat_time(columns: list[TimeColumn]) -> TimeColumn:
    present = np.concatenate([c.present for c in columns])
    if all(c.exact for c in columns):
        return TimeColumn(np.concatenate([c.values for c in columns]), present)
    values = np.concatenate([object_array(c.tolist()) for c in columns])
    return TimeColumn(values, present)


def _concat_coded(columns: list[CodedColumn]) -> CodedColumn:
    merged = Merged()
    parts = [merged.remap(c) for c in columns]
    return CodedColumn(np.concatenate(parts).astype(np.int32, copy=False), merged.values)


def empty() -> TraceColumns:
    """The columns of a trace with no record."""
    return from_fields([[]] * 8)
