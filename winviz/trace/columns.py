"""The trace as columns: one typed array per base field, dictionaries for repeated values.

``TraceColumns`` is what every reader of a trace reads (``Trace.columns()``): ``seq`` and the
three time fields as ``int64`` arrays (each time field with a mask of where a value is present),
``kind`` / ``operator`` / ``key`` / ``window`` as integer codes into a dictionary of their
distinct values, and ``detail`` as an object array (element payloads stay Python objects).
A record of a 1M-event run costs about 50 bytes here, plus its share of the detail objects.

Writers never build columns: they append whole records to the trace's write buffer (one
``list.extend`` per record, the cheapest append CPython has), and ``from_flat`` turns the
buffer into columns when someone reads — each column with one C-speed pass over a slice of
the buffer.

Dictionary codes tell values apart by type as well as by value, as Java would: ``1`` and
``True`` (equal in Python) stay two keys, and so do a ``TimeWindow`` and a plain tuple; floats
as ``Double.equals`` does (``0.0`` and ``-0.0`` are two keys, every NaN is one).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import is_not
from typing import Any

import numpy as np

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class TimeColumn:
    """A time field: ``values`` (``int64``, 0 where absent) and ``present`` (a bool mask).

    ``values`` is an object array instead when some value is not an int in Java's long range
    (the column then holds the values exactly as written, None where absent)."""

    values: np.ndarray
    present: np.ndarray

    @property
    def exact(self) -> bool:
        """True when ``values`` is ``int64`` (every present value an int in the long range)."""
        return self.values.dtype != object

    def take(self, rows: np.ndarray) -> TimeColumn:
        return TimeColumn(self.values[rows], self.present[rows])

    def get(self, i: int) -> Any:
        """The value of record ``i`` (an int, None where absent)."""
        if not self.present[i]:
            return None
        value = self.values[i]
        return value.item() if self.exact else value

    def tolist(self) -> list[Any]:
        """Python ints, None where absent."""
        if not self.exact:
            return self.values.tolist()
        values = self.values.tolist()
        if self.present.all():
            return values
        return [v if p else None for v, p in zip(values, self.present.tolist(), strict=True)]


@dataclass(frozen=True, slots=True)
class CodedColumn:
    """A field with few distinct values: ``codes`` (``int32``) into ``values`` (the distinct
    values in order of first appearance)."""

    codes: np.ndarray
    values: list[Any]
    _lookup: list[np.ndarray] = field(default_factory=list, repr=False, compare=False)

    def take(self, rows: np.ndarray) -> CodedColumn:
        return CodedColumn(self.codes[rows], self.values, self._lookup)

    def lookup(self) -> np.ndarray:
        """``values`` as an object array (made once, element by element: tuples stay
        scalars)."""
        if not self._lookup:
            self._lookup.append(object_array(self.values))
        return self._lookup[0]

    def decode(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The values of some records (all when ``rows`` is None), as an object array."""
        codes = self.codes if rows is None else self.codes[rows]
        return self.lookup()[codes]

    def code_of(self, value: Any) -> int:
        """The code of ``value`` (type and value), -1 when no record has it."""
        want = identity(value)
        for i, v in enumerate(self.values):
            if identity(v) == want:
                return i
        return -1


@dataclass(frozen=True, slots=True)
class TraceColumns:
    """A trace, column by column (see the module docstring). ``len()`` is its record count."""

    seq: np.ndarray
    kind: CodedColumn
    proc_time: TimeColumn
    watermark: TimeColumn
    operator: CodedColumn
    key: CodedColumn
    window: CodedColumn
    ts: TimeColumn
    detail: np.ndarray

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
        """(start, end, present) per record: ``int64`` arrays and a mask of the records whose
        window is a time window (False for none and for the global window)."""
        starts, ends, has = window_table(self.window.values)
        codes = self.window.codes
        return starts[codes], ends[codes], has[codes]


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


def object_array(values: Any) -> np.ndarray:
    """A 1-d object array of these values (tuples and lists stay elements)."""
    values = values if isinstance(values, (list, tuple)) else list(values)
    return np.fromiter(values, dtype=object, count=len(values))


def from_flat(data: list[Any], first_seq: int = 0, width: int = 8) -> TraceColumns:
    """Columns of the plain records in a flat buffer (record ``i`` is ``data[width*i:][:8]``:
    kind, proc_time, watermark, operator, key, window, ts, detail), numbered from
    ``first_seq``."""
    return from_fields([data[f::width] for f in range(8)], first_seq)


def from_fields(fields: list[Any], first_seq: int = 0) -> TraceColumns:
    """Columns of records given field by field (eight sequences of equal length, in
    ``BASE_FIELDS`` order), numbered from ``first_seq``."""
    kind, proc, wm, op, key, window, ts, detail = (
        f.tolist() if isinstance(f, np.ndarray) else f for f in fields
    )
    n = len(kind)
    return TraceColumns(
        np.arange(first_seq, first_seq + n, dtype=np.int64),
        encode(kind, fast=True),
        time_column(proc),
        time_column(wm),
        encode(op, fast=True),
        encode(key),
        encode(window, fast=True),
        time_column(ts),
        fields[7] if isinstance(fields[7], np.ndarray) else object_array(detail),
    )


def entry_grid(n: int, per_record: tuple[Any, ...]) -> np.ndarray:
    """One field of the records of ``n`` packed entries, entry by entry, as Python objects
    (``Packed.fields``): ``per_record[r]`` is record ``r``'s value (the same for every entry)
    or its values (a list, one per entry, or converted: a ``CodedColumn``, a ``TimeColumn``,
    an array)."""
    out = np.empty((n, len(per_record)), dtype=object)
    for r, values in enumerate(per_record):
        if isinstance(values, CodedColumn):
            out[:, r] = values.decode()
        elif isinstance(values, TimeColumn):
            out[:, r] = object_array(values.tolist())
        elif isinstance(values, np.ndarray):
            out[:, r] = values if values.dtype == object else object_array(values.tolist())
        elif isinstance(values, list):
            out[:, r] = np.fromiter(values, dtype=object, count=n)
        else:
            out[:, r].fill(values)
    return out.ravel()


def _entry_objects(item: Any, done: dict[int, Any]) -> np.ndarray:
    """An entry's detail values as an object array (a 0-d one for one value for all)."""
    if isinstance(item, np.ndarray):
        return item
    if isinstance(item, list):
        objects = done.get(id(item))
        if objects is None:
            objects = done[id(item)] = object_array(item)
        return objects
    one = np.empty((), dtype=object)
    one[()] = item
    return one


def time_column(values: list[Any]) -> TimeColumn:
    """A ``TimeColumn`` of ints and Nones (one C-speed pass when every value is an int)."""
    n = len(values)
    try:
        return TimeColumn(np.fromiter(values, dtype=np.int64, count=n), np.ones(n, dtype=bool))
    except (TypeError, OverflowError, ValueError):
        pass
    if values.count(None) == n and not any(map(is_not, values, repeat(None))):
        return TimeColumn(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool))
    present_list = list(map(is_not, values, repeat(None)))
    present = np.fromiter(present_list, dtype=bool, count=n)
    types = set(map(type, compress(values, present_list)))
    if types <= {int}:
        out = np.zeros(n, dtype=np.int64)
        try:
            out[present] = np.fromiter(
                compress(values, present_list), dtype=np.int64, count=int(present.sum())
            )
            return TimeColumn(out, present)
        except OverflowError:
            pass
    return TimeColumn(object_array(values), present)


def encode(values: list[Any], *, fast: bool = False) -> CodedColumn:
    """Dictionary-encode a column. ``fast``: the values are known to be told apart by
    equality alone (strings; windows, whose bounds the engine made ints)."""
    n = len(values)
    try:
        distinct: dict[Any, Any] | None = dict.fromkeys(values)
    except TypeError:  # an unhashable value: the general way
        distinct = None
    if distinct is not None and (fast or _plain_dictionary_is_exact(values, distinct)):
        code_of = dict(zip(distinct, range(len(distinct)), strict=True))
        codes = np.fromiter(map(code_of.__getitem__, values), dtype=np.int32, count=n)
        return CodedColumn(codes, list(code_of))
    idents = list(map(identity, values))
    code_of = {}
    first: list[Any] = []
    for ident, v in zip(idents, values, strict=True):
        if ident not in code_of:
            code_of[ident] = len(first)
            first.append(v)
    codes = np.fromiter(map(code_of.__getitem__, idents), dtype=np.int32, count=n)
    return CodedColumn(codes, first)


_FAMILIES = (numbers.Number, tuple, str, bytes, frozenset)


def _plain_dictionary_is_exact(values: list[Any], distinct: dict[Any, Any] | None = None) -> bool:
    """True when a plain dict tells the values apart exactly: no two of their types belong to
    one family whose members compare equal across types (``1 == True == 1.0``, a namedtuple and
    a tuple, ...), and no tuple holds such mixtures. ``distinct``: ``dict.fromkeys(values)``
    when the caller has it."""
    if distinct is None:
        try:
            distinct = dict.fromkeys(values)
        except TypeError:
            return False
    types = set(map(type, values))  # of every value: the dict above already merged 1 and True
    if float in types and any(v.__class__ is float and (v == 0 or v != v) for v in distinct):
        return False  # the dict merged 0.0 and -0.0, or kept NaNs apart
    if any(issubclass(t, tuple) for t in types):
        # tuples compare element by element: (1,) == (True,); be exact only when every
        # element of every tuple is a str, an int or None (composite keys, windows)
        for v in distinct:
            if isinstance(v, tuple) and not all(
                e is None or e.__class__ is str or e.__class__ is int for e in v
            ):
                return False
        if sum(1 for t in types if issubclass(t, tuple)) > 1:
            return False
        # equal tuples of other element types were merged: check every tuple, not the distinct
        return all(
            all(e is None or e.__class__ is str or e.__class__ is int for e in v)
            for v in values
            if isinstance(v, tuple)
        ) and _one_per_family(types)
    return _one_per_family(types)


def _one_per_family(types: set[type]) -> bool:
    return all(sum(1 for t in types if issubclass(t, family)) <= 1 for family in _FAMILIES)


def identity(value: Any) -> Any:
    """What tells a value apart, type included: ``(type, value)`` for hashable scalars, the
    same, element by element, for tuples, and the value's ``repr`` for unhashable ones."""
    if isinstance(value, tuple):
        return (type(value), tuple(identity(v) for v in value))
    if value.__class__ is float:  # as Double.equals: 0.0 and -0.0 differ, every NaN is one
        return (float, value.hex())
    try:
        hash(value)
    except TypeError:
        return (type(value), repr(value))
    return (type(value), value)


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
    code_of: dict[Any, int] = {}
    values: list[Any] = []
    parts = []
    for c in columns:
        remap = np.empty(len(c.values), dtype=np.int32)
        for i, v in enumerate(c.values):
            ident = identity(v)
            code = code_of.get(ident)
            if code is None:
                code = code_of[ident] = len(values)
                values.append(v)
            remap[i] = code
        parts.append(remap[c.codes] if len(c.codes) else c.codes)
    return CodedColumn(np.concatenate(parts).astype(np.int32, copy=False), values)


def empty() -> TraceColumns:
    """The columns of a trace with no record."""
    return from_flat([])


class NotExact(Exception):
    """A time value that is not an int in the long range: the builder's caller takes the
    general path (object columns) instead."""


CODED = ("kind", "operator", "key", "window")
TIMES = ("proc_time", "watermark", "ts")


class ColumnsBuilder:
    """Builds the columns of ``n`` records from pieces placed at record positions: columns of
    plain records (``put_columns``) and the grids of packed entries (``put_grid``), each field
    written straight into its typed array (codes, int64 times), never through Python objects
    per record except the details."""

    def __init__(self, n: int, first_seq: int) -> None:
        self.n, self.first_seq = n, first_seq
        self.codes = {f: np.zeros(n, dtype=np.int32) for f in CODED}
        self.dicts: dict[str, tuple[dict[Any, int], list[Any]]] = {f: ({}, []) for f in CODED}
        self.times = {f: (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)) for f in TIMES}
        self.detail = np.empty(n, dtype=object)

    def _code(self, field: str, value: Any) -> int:
        index, values = self.dicts[field]
        ident = identity(value)
        code = index.get(ident)
        if code is None:
            code = index[ident] = len(values)
            values.append(value)
        return code

    def _remap(self, field: str, column: CodedColumn) -> np.ndarray:
        remap = np.fromiter(
            (self._code(field, v) for v in column.values), dtype=np.int32, count=len(column.values)
        )
        return remap[column.codes] if len(column.codes) else column.codes

    def put_columns(self, at: np.ndarray, c: TraceColumns) -> None:
        """Plain records' columns at positions ``at``."""
        for f in CODED:
            self.codes[f][at] = self._remap(f, getattr(c, f))
        for f in TIMES:
            column: TimeColumn = getattr(c, f)
            if not column.exact:
                raise NotExact(f)
            values, present = self.times[f]
            values[at], present[at] = column.values, column.present
        self.detail[at] = c.detail

    def put_grid(self, at: np.ndarray, n: int, fields: list[tuple[Any, ...]]) -> None:
        """The records of ``n`` packed entries at positions ``at`` (entry by entry), given per
        field as ``Packed.fields`` describes: per record of an entry, one value for all
        entries, or the ``n`` entries' values (a list, or already converted: a
        ``CodedColumn`` for a coded field, an ``int64`` array or a ``TimeColumn`` for a time,
        an object array for the detail). Each is written straight to its records' positions;
        an item that several records share is converted once."""
        count = len(fields[0])
        for f, per_record in zip(BASE_NAMES, fields, strict=True):
            done: dict[int, Any] = {}  # id(item) -> converted (the item stays alive meanwhile)
            if f in self.codes:
                codes = np.empty((n, count), dtype=np.int32)
                for r, item in enumerate(per_record):
                    codes[:, r] = self._entry_codes(f, item, done)
                self.codes[f][at] = codes.ravel()
            elif f in self.times:
                if all(item is None for item in per_record):
                    continue  # absent: as the arrays start
                values = np.zeros((n, count), dtype=np.int64)
                present = np.zeros((n, count), dtype=bool)
                for r, item in enumerate(per_record):
                    if item is not None:
                        values[:, r], present[:, r] = self._entry_times(f, item, done)
                column_values, column_present = self.times[f]
                column_values[at], column_present[at] = values.ravel(), present.ravel()
            else:
                objects = np.empty((n, count), dtype=object)
                for r, item in enumerate(per_record):
                    objects[:, r] = _entry_objects(item, done)
                self.detail[at] = objects.ravel()

    def _entry_codes(self, f: str, item: Any, done: dict[int, Any]) -> Any:
        """An entry field's codes in this builder's dictionary (an int for one value)."""
        if isinstance(item, CodedColumn):
            codes = done.get(id(item))
            if codes is None:
                codes = done[id(item)] = self._remap(f, item)
            return codes
        if isinstance(item, list):
            codes = done.get(id(item))
            if codes is None:
                codes = done[id(item)] = self._remap(f, encode(item, fast=f != "key"))
            return codes
        return self._code(f, item)

    @staticmethod
    def _entry_times(f: str, item: Any, done: dict[int, Any]) -> tuple[Any, Any]:
        """An entry time field's (values, present); ``NotExact`` for a value that is not an
        int in the long range."""
        if item.__class__ is int:
            if not LONG_MIN <= item <= LONG_MAX:
                raise NotExact(f)
            return item, True
        if isinstance(item, np.ndarray):
            if item.dtype != np.int64:
                raise NotExact(f)
            return item, True
        if isinstance(item, TimeColumn):
            column = item
        elif isinstance(item, list):
            column = done.get(id(item))
            if column is None:
                column = done[id(item)] = time_column(item)
        else:
            raise NotExact(f)
        if not column.exact:
            raise NotExact(f)
        return column.values, column.present

    def build(self) -> TraceColumns:
        def coded(f: str) -> CodedColumn:
            return CodedColumn(self.codes[f], self.dicts[f][1])

        def times(f: str) -> TimeColumn:
            return TimeColumn(*self.times[f])

        return TraceColumns(
            np.arange(self.first_seq, self.first_seq + self.n, dtype=np.int64),
            coded("kind"),
            times("proc_time"),
            times("watermark"),
            coded("operator"),
            coded("key"),
            coded("window"),
            times("ts"),
            self.detail,
        )


BASE_NAMES = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")
