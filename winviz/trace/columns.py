"""The trace as columns: one typed array per base field, dictionaries for repeated values.

``TraceColumns`` is what every reader of a trace reads (``Trace.columns()``): ``seq`` and the
three time fields as ``int64`` arrays (each time field with a mask of where a value is present),
``kind`` / ``operator`` / ``key`` / ``window`` as integer codes into a dictionary of their
distinct values, and ``detail`` as an object array (element payloads stay Python objects).
A record of a 1M-event run costs about 50 bytes here, plus its share of the detail objects.

Writers never build columns: they append whole records to the trace's write buffer (one
``list.extend`` per record, the cheapest append CPython has; packed entries stand for several
records, ``winviz.trace.store``). A read slices the buffer field by field (``Pieces``) and
decodes each column the first time a reader asks for it: one C-speed pass over its slice
for the plain records, the marker's ``Packed.fields`` for the entries.

Dictionary codes tell values apart by type as well as by value, as Java would: ``1`` and
``True`` (equal in Python) stay two keys, and so do a ``TimeWindow`` and a plain tuple; floats
as ``Double.equals`` does (``0.0`` and ``-0.0`` are two keys, every NaN is one).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import is_not
from typing import Any

import numpy as np

from winviz.collector import paused

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


class TraceColumns:
    """A trace, column by column (see the module docstring). ``len()`` is its record count.

    The columns of a trace's first read are decoded one at a time, the first time a reader
    asks for each (``pending``): a reader that needs the kinds and times never pays for the
    keys or the details, and every reader gets the same values as if all were decoded at
    once."""

    __slots__ = (
        "_decode",
        "_detail",
        "_key",
        "_kind",
        "_operator",
        "_proc_time",
        "_ts",
        "_watermark",
        "_window",
        "seq",
    )

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

    @classmethod
    def pending(cls, seq: np.ndarray, decode: Callable[[str], Any]) -> TraceColumns:
        """Columns whose fields ``decode(name)`` gives (each asked once, when first read)."""
        columns = cls(seq, *([None] * 8))  # type: ignore[arg-type]
        columns._decode = decode
        return columns

    def _field(self, name: str) -> Any:
        value = self._decode(name)  # type: ignore[misc]
        setattr(self, "_" + name, value)
        return value

    @property
    def kind(self) -> CodedColumn:
        return self._kind if self._kind is not None else self._field("kind")

    @property
    def proc_time(self) -> TimeColumn:
        return self._proc_time if self._proc_time is not None else self._field("proc_time")

    @property
    def watermark(self) -> TimeColumn:
        return self._watermark if self._watermark is not None else self._field("watermark")

    @property
    def operator(self) -> CodedColumn:
        return self._operator if self._operator is not None else self._field("operator")

    @property
    def key(self) -> CodedColumn:
        return self._key if self._key is not None else self._field("key")

    @property
    def window(self) -> CodedColumn:
        return self._window if self._window is not None else self._field("window")

    @property
    def ts(self) -> TimeColumn:
        return self._ts if self._ts is not None else self._field("ts")

    @property
    def detail(self) -> np.ndarray:
        return self._detail if self._detail is not None else self._field("detail")

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
    """A ``TimeColumn`` of ints and Nones (one C-speed pass when every value is an int). A
    value of another type (a float, a bool) or beyond the long range keeps the column as
    written (an object column): nothing is rounded."""
    n = len(values)
    types = set(map(type, values))
    if types <= {int}:
        return ints_column(values)
    if types == {type(None)}:
        return TimeColumn(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool))
    present_list = list(map(is_not, values, repeat(None)))
    present = np.fromiter(present_list, dtype=bool, count=n)
    if types == {int, type(None)}:
        out = np.zeros(n, dtype=np.int64)
        try:
            out[present] = np.fromiter(
                compress(values, present_list), dtype=np.int64, count=int(present.sum())
            )
            return TimeColumn(out, present)
        except OverflowError:
            pass
    return TimeColumn(object_array(values), present)


def ints_column(values: list[int]) -> TimeColumn:
    """A ``TimeColumn`` of values known to be ints (``int`` itself: the engine's times), an
    object column when one is beyond the long range."""
    n = len(values)
    try:
        return TimeColumn(np.fromiter(values, dtype=np.int64, count=n), np.ones(n, dtype=bool))
    except OverflowError:
        return TimeColumn(object_array(values), np.ones(n, dtype=bool))


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


def encode_runs(values: list[Any], *, fast: bool = False) -> CodedColumn:
    """``encode`` for values that come in runs of one object (an open window's elements):
    only the first value of each run is looked up (consecutive values that are the same
    object have the same code); ``encode`` itself when runs are short."""
    n = len(values)
    if n < 64:
        return encode(values, fast=fast)
    ids = np.fromiter(map(id, values), dtype=np.intp, count=n)
    starts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    if len(starts) * 4 > n:
        return encode(values, fast=fast)
    starts = np.concatenate(([0], starts))
    heads = encode([values[i] for i in starts.tolist()], fast=fast)
    return CodedColumn(np.repeat(heads.codes, np.diff(starts, append=n)), heads.values)


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


class Deferred:
    """An item of ``Packed.fields`` made only when its field is decoded, by ``make()``, once
    (a ``Deferred`` several fields share is made for the first)."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make: Callable[[], Any] | None = make
        self._value: Any = None

    def get(self) -> Any:
        if self._make is not None:
            self._value, self._make = self._make(), None
        return self._value


class Slots:
    """A packed marker's entries value by value: ``slots[f]`` is value ``f`` of every entry,
    a list sliced from the entries' flat values (``width`` after each marker) when it is
    asked for, so that a field's decoding makes only the slots it reads."""

    __slots__ = ("_flat", "_step", "_width")

    def __init__(self, flat: list[Any], width: int) -> None:
        self._flat, self._step, self._width = flat, 1 + width, width

    def __len__(self) -> int:
        return self._width

    def __getitem__(self, f: int) -> list[Any]:
        if not 0 <= f < self._width:
            raise IndexError(f)
        return self._flat[1 + f :: self._step]


class Pieces:
    """The records of a trace's write buffer, not yet decoded (``Trace.columns``): the plain
    records, eight values each (``plain``, sliced field by field when the field is decoded),
    at record positions ``plain_at`` (None: every record is plain, in order), and the packed
    entries of each marker slot by slot, at positions ``at`` (entry by entry).
    ``decode(name)`` builds one field's column, straight into its typed array (codes, int64
    times), never through Python objects per record except the details;
    ``TraceColumns.pending`` asks for each field the first time a reader reads it. What a
    field alone needed is dropped once it is decoded."""

    def __init__(
        self,
        n: int,
        plain: list[Any],
        plain_at: np.ndarray | None,
        groups: list[tuple[Any, Any, np.ndarray]],
    ) -> None:
        self.n, self.flat, self.plain_at = n, plain, plain_at
        self.left = len(BASE_NAMES)  # fields not decoded yet
        self.groups = groups  # (marker, slots, at)
        # per marker: (entries, at, marker.fields(slots)), made when the first field is asked
        self.items: list[tuple[int, np.ndarray, list[Any]]] = []

    def decode(self, name: str) -> Any:
        f = BASE_NAMES.index(name)
        with paused():  # many new containers, no cycles: no collection passes over them
            if self.groups:
                self.items = [
                    (len(at) // marker.count, at, list(marker.fields(slots)))
                    for marker, slots, at in self.groups
                ]
                self.groups = []
            for _, _, fields in self.items:  # (made now: the field is read)
                fields[f] = [i.get() if i.__class__ is Deferred else i for i in fields[f]]
            plain = self.flat[f :: len(BASE_NAMES)] if self.flat else None
            if name in CODED:
                column: Any = self._coded(plain, f, name)
            elif name in TIMES:
                try:
                    column = self._time(plain, f)
                except NotExact:  # a time that is not a long: the values as written
                    column = self._time_objects(plain, f)
            else:
                column = self._objects(plain, f)
            for _, _, fields in self.items:
                fields[f] = None
            self.left -= 1
            if not self.left:  # every field decoded: nothing more to keep
                self.flat, self.plain_at, self.items = [], None, []
            return column

    def _put(self, out: np.ndarray, values: Any) -> None:
        """The plain records' values into ``out``."""
        if self.plain_at is None:
            out[:] = values
        else:
            out[self.plain_at] = values

    def _coded(self, plain: list[Any] | None, f: int, name: str) -> CodedColumn:
        fast = name != "key"  # (strings; the engine's windows, whose bounds are ints)
        if not self.items:
            return encode(plain if plain is not None else [], fast=fast)
        index: dict[Any, int] = {}
        values: list[Any] = []

        def code(value: Any) -> int:
            ident = identity(value)
            c = index.get(ident)
            if c is None:
                c = index[ident] = len(values)
                values.append(value)
            return c

        def remap(column: CodedColumn) -> np.ndarray:
            table = np.fromiter(map(code, column.values), dtype=np.int32, count=len(column.values))
            return table[column.codes] if len(column.codes) else column.codes

        out = np.empty(self.n, dtype=np.int32)  # (every position is written below)
        if plain is not None:
            self._put(out, remap(encode(plain, fast=fast)))
        for n, at, fields in self.items:
            done: dict[int, np.ndarray] = {}  # id(item) -> codes (items stay alive meanwhile)
            each: list[Any] = []
            for item in fields[f]:  # type: ignore[index]
                if isinstance(item, (CodedColumn, list)):
                    codes = done.get(id(item))
                    if codes is None:
                        coded = item if isinstance(item, CodedColumn) else encode(item, fast=fast)
                        codes = done[id(item)] = remap(coded)
                    each.append(codes)
                else:
                    each.append(code(item))
            if all(c.__class__ is int for c in each):  # the same for every entry
                out[at] = np.tile(np.array(each, dtype=np.int32), n)
            else:
                grid = np.empty((n, len(each)), dtype=np.int32)
                for r, c in enumerate(each):
                    grid[:, r] = c
                out[at] = grid.ravel()
        return CodedColumn(out, values)

    def _time(self, plain: list[Any] | None, f: int) -> TimeColumn:
        if not self.items:
            return time_column(plain if plain is not None else [])
        values = np.empty(self.n, dtype=np.int64)  # (every position is written below)
        present = np.empty(self.n, dtype=bool)
        if plain is not None:
            column = time_column(plain)
            if not column.exact:
                raise NotExact(f)
            self._put(values, column.values)
            self._put(present, column.present)
        for n, at, fields in self.items:
            done: dict[int, Any] = {}
            pairs = [(0, False) if item is None else _entry_times(item, done) for item in fields[f]]
            grid = np.empty((n, len(pairs)), dtype=np.int64)
            for r, (v, _) in enumerate(pairs):
                grid[:, r] = v
            values[at] = grid.ravel()
            masks = [m for _, m in pairs]
            if all(m.__class__ is bool for m in masks):  # the same for every entry
                present[at] = np.tile(np.array(masks, dtype=bool), n)
            else:
                marks = np.empty((n, len(masks)), dtype=bool)
                for r, m in enumerate(masks):
                    marks[:, r] = m
                present[at] = marks.ravel()
        return TimeColumn(values, present)

    def _time_objects(self, plain: list[Any] | None, f: int) -> TimeColumn:
        objects = np.empty(self.n, dtype=object)
        if plain is not None:
            self._put(objects, object_array(plain))
        for n, at, fields in self.items:
            objects[at] = entry_grid(n, fields[f])
        return time_column(objects.tolist())

    def _objects(self, plain: list[Any] | None, f: int) -> np.ndarray:
        if not self.items:
            return object_array(plain if plain is not None else [])
        out = np.empty(self.n, dtype=object)
        if plain is not None:
            self._put(out, object_array(plain))
        for n, at, fields in self.items:
            done: dict[int, Any] = {}
            grid = np.empty((n, len(fields[f])), dtype=object)
            for r, item in enumerate(fields[f]):
                grid[:, r] = _entry_objects(item, done)
            out[at] = grid.ravel()
        return out


def _entry_times(item: Any, done: dict[int, Any]) -> tuple[Any, Any]:
    """An entry time field's (values, present) for all entries (``Packed.fields``'s item:
    an int, a list, an ``int64`` array or a ``TimeColumn``); ``NotExact`` for a value that
    is not an int in the long range."""
    if item.__class__ is int:
        if not LONG_MIN <= item <= LONG_MAX:
            raise NotExact(item)
        return item, True
    if isinstance(item, np.ndarray):
        if item.dtype != np.int64:
            raise NotExact(item)
        return item, True
    if isinstance(item, TimeColumn):
        column = item
    elif isinstance(item, list):
        column = done.get(id(item))
        if column is None:
            column = done[id(item)] = time_column(item)
    else:
        raise NotExact(item)
    if not column.exact:
        raise NotExact(item)
    return column.values, True if column.present.all() else column.present


BASE_NAMES = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")
