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
for the plain records, the marker's ``Packed.fields`` for the entries. A reader of a few
kinds' records (a chart) asks for a field's ``part`` instead (``TraceColumns.part``): only
the plain records of those kinds and the packed record slots of those kinds are decoded,
and the whole columns stay the same whatever parts were read first.

Dictionary codes tell values apart by type as well as by value, as Java would: ``1`` and
``True`` (equal in Python) stay two keys, and so do a ``TimeWindow`` and a plain tuple; floats
as ``Double.equals`` does (``0.0`` and ``-0.0`` are two keys, every NaN is one).
"""

from __future__ import annotations

import numbers
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import count, islice
from operator import is_not
from typing import Any

import numpy as np

from winviz.collector import paused
from winviz.trace.bulk import is_none

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
    once. A reader of a few kinds' records asks for a field's ``part`` instead: only those
    records are decoded (the whole column, once decoded, is the same whatever parts were
    read before)."""

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
        """Columns whose fields ``decode(name)`` gives (each asked once, when first read);
        ``part(name, kinds, kind_column, base)``, when given, a field's column on the records
        of some kinds only, ``base`` (kinds, column) the part it extends (see ``part``;
        ``Pieces.part``)."""
        columns = cls(seq, *([None] * 8))  # type: ignore[arg-type]
        columns._decode, columns._part = decode, part
        return columns

    def _field(self, name: str) -> Any:
        value = self._decode(name)  # type: ignore[misc]
        setattr(self, "_" + name, value)
        self._parts.pop(name, None)
        return value

    def part(self, name: str, kinds: Iterable[str]) -> Any:
        """Field ``name``'s column for a reader of the records of these ``kinds`` only: an
        array of every record, as the field's property gives it, whose values on the records
        of those kinds are the column's (elsewhere: -1 codes, absent times, None details).
        When the column is not decoded yet, only those records are (``Pieces.part``): a
        ``CodedColumn`` part has a dictionary of its own (its codes are not the whole
        column's: read values, or compare codes of one part only). A part is kept and grows
        with the kinds asked for (in place: the records of the kinds asked for before keep
        their values; only the new kinds' records are decoded); the whole column
        when every kind is asked for, when it is decoded already, or when the columns cannot
        decode parts."""
        if self._part is None or name == "kind" or getattr(self, "_" + name) is not None:
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
        """Field ``name`` (a coded field or ``detail``) of the records at these positions, as
        an object array of the values as written: the same values as the whole column's
        ``decode(rows)`` (``detail[rows]``). When the column is not decoded yet and the
        records are few (an eighth of the trace at most), only these records are read
        (``Pieces.values_at``) and nothing is kept; ``kinds``, the records' kinds when known:
        the field's part for them is read instead when it is read already, or when the
        records are many (finding each one would cost more)."""
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

    def detail_items(self) -> list[tuple[str | None, np.ndarray, Any]] | None:
        """The detail field as the write buffer holds it (``Pieces.detail_items``) while the
        detail column is not decoded yet; None once it is (or when these columns were not
        read from a write buffer)."""
        pieces = getattr(self._part, "__self__", None)
        if self._detail is not None or not isinstance(pieces, Pieces) or not pieces.left:
            return None
        return pieces.detail_items()

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


@dataclass(frozen=True, slots=True)
class Tuples:
    """A ``Packed.fields`` detail item of tuples said field by field: entry ``e``'s detail is
    ``tuple(f[e] for f in fields)`` (each field a list or an object array, one value per
    entry; an ``int64`` array for ints the engine made). The tuples are made only when the
    detail column is read (``objects``); a reader of the detail's fields one by one
    (``to_pandas``) reads ``fields`` as they are."""

    fields: tuple[Any, ...]

    def objects(self) -> np.ndarray:
        """Each entry's tuple, as an object array."""
        n = len(self.fields[0])
        fields = [_python(f) for f in self.fields]
        return np.fromiter(zip(*fields, strict=True), dtype=object, count=n)

    def pick(self, entries: np.ndarray) -> np.ndarray:
        """The tuples of some entries, as an object array."""
        at = entries.tolist()
        fields = [
            _python(f[entries]) if isinstance(f, np.ndarray) else list(map(f.__getitem__, at))
            for f in self.fields
        ]
        return np.fromiter(zip(*fields, strict=True), dtype=object, count=len(at))


def _python(values: Any) -> Any:
    """A ``Tuples`` field as Python values (an ``int64`` array's as ints)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        return values.tolist()
    return values


def _entry_objects(item: Any, done: dict[int, Any]) -> np.ndarray:
    """An entry's detail values as an object array (a 0-d one for one value for all)."""
    if isinstance(item, np.ndarray):
        return item
    if isinstance(item, (list, Tuples, CodedColumn)):
        objects = done.get(id(item))
        if objects is None:
            if isinstance(item, list):
                objects = object_array(item)
            else:
                objects = item.objects() if isinstance(item, Tuples) else item.decode()
            done[id(item)] = objects
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
    objects = object_array(values)
    present = ~is_none(objects)
    if types == {int, type(None)}:
        objects[~present] = 0
        try:
            return TimeColumn(objects.astype(np.int64), present)
        except OverflowError:  # (beyond the long range: the values as written)
            objects = object_array(values)
    return TimeColumn(objects, present)


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
    # one pass: a value not seen before gets the next code (``__missing__``), at C speed
    code_of: defaultdict[Any, int] = defaultdict(count().__next__)
    try:
        codes = np.fromiter(map(code_of.__getitem__, values), dtype=np.int32, count=n)
    except TypeError:  # an unhashable value: the general way
        codes = None
    if codes is not None and (fast or _plain_dictionary_is_exact(values, code_of)):
        return CodedColumn(codes, list(code_of))
    code_of_ident: defaultdict[Any, int] = defaultdict(count().__next__)
    codes = np.fromiter(map(code_of_ident.__getitem__, map(identity, values)), np.int32, n)
    first = np.unique(codes, return_index=True)[1] if n else codes  # (each code's first)
    return CodedColumn(codes, [values[i] for i in first.tolist()])


def encode_runs(values: list[Any], *, fast: bool = False) -> CodedColumn:
    """``encode`` for values that come in runs of one object (an open window's elements):
    only the first value of each run is looked up (consecutive values that are the same
    object have the same code); ``encode`` itself when runs are short."""
    n = len(values)
    if n < 64:
        return encode(values, fast=fast)
    # (``is not`` of neighbours: no int made per value, as ``id`` would)
    changes = np.fromiter(map(is_not, islice(values, 1, None), values), dtype=bool, count=n - 1)
    starts = np.flatnonzero(changes) + 1
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
    asked for, so that a field's decoding makes only the slots it reads. ``spans``: where
    the marker's runs of entries are in ``flat`` (slot ranges ``(start, stop)``, each
    starting at a marker; None: ``flat`` is one run): a first read slices them straight from
    the trace's write buffer."""

    __slots__ = ("_flat", "_spans", "_step", "_width")

    def __init__(
        self, flat: list[Any], width: int, spans: list[tuple[int, int]] | None = None
    ) -> None:
        self._flat, self._step, self._width = flat, 1 + width, width
        self._spans = [(0, len(flat))] if spans is None else spans

    def __len__(self) -> int:
        return self._width

    def __getitem__(self, f: int) -> list[Any]:
        if not 0 <= f < self._width:
            raise IndexError(f)
        return sliced(self._flat, self._spans, 1 + f, self._step)


class Plain:
    """The plain records of a write buffer, in place: ``data``'s slot ranges ``spans``
    (``(start, stop)``, whole records of ``width`` values each, in order). ``field(f)``
    slices field ``f`` of every record (kept for ``gather`` until ``drop``), ``gather(rows,
    f)`` picks some records' (indices among the plain records); ``kinds``: field 0 when the
    caller has it already (a first read checks it)."""

    __slots__ = ("_data", "_fields", "_n", "_spans", "_table", "_width")

    def __init__(
        self,
        data: list[Any],
        spans: list[tuple[int, int]],
        width: int = 8,
        kinds: list[Any] | None = None,
    ) -> None:
        self._data, self._spans, self._width = data, spans, width
        self._n = sum(stop - start for start, stop in spans) // width
        self._fields: dict[int, list[Any]] = {} if kinds is None else {0: kinds}
        self._table: tuple[np.ndarray, np.ndarray] | None = None  # (see ``pick``)

    def __len__(self) -> int:
        return self._n

    def field(self, f: int, *, drop: bool = False) -> list[Any]:
        """Field ``f`` of every plain record (``drop``: not kept for later reads)."""
        values = self._fields.pop(f, None) if drop else self._fields.get(f)
        if values is None:
            values = sliced(self._data, self._spans, f, self._width)
            if not drop:
                self._fields[f] = values
        return values

    def gather(self, rows: np.ndarray, f: int) -> list[Any]:
        """Field ``f`` of the plain records ``rows``, in that order (a few records: picked
        from the buffer, ``pick``; more: from the field sliced whole and kept)."""
        if f not in self._fields and len(rows) * 8 < self._n:
            return self.pick(rows, f)
        return list(map(self.field(f).__getitem__, rows.tolist()))

    def pick(self, rows: np.ndarray, f: int) -> list[Any]:
        """``gather`` without slicing the field of every record first (nothing is kept but
        where the spans start): the records' slots in the buffer, found span by span."""
        values = self._fields.get(f)
        if values is not None:
            return list(map(values.__getitem__, rows.tolist()))
        if not len(rows):
            return []
        if self._table is None:
            spans = np.array(self._spans, dtype=np.int64).reshape(-1, 2)
            counts = (spans[:, 1] - spans[:, 0]) // self._width
            ends = np.cumsum(counts)  # (the records before each span's end)
            # a record's slot: its index times the width plus its span's offset
            self._table = (ends, spans[:, 0] - (ends - counts) * self._width)
        ends, offsets = self._table
        span = np.searchsorted(ends, rows, side="right")
        slots = offsets[span] + rows * self._width + f
        return list(map(self._data.__getitem__, slots.tolist()))


def sliced(data: list[Any], ranges: list[tuple[int, int]], offset: int, step: int) -> list[Any]:
    """``data[start + offset : stop : step]`` of each slot range, one list (C-speed slices)."""
    if len(ranges) == 1:
        start, stop = ranges[0]
        return data[start + offset : stop : step]
    out: list[Any] = []
    for start, stop in ranges:
        out += data[start + offset : stop : step]
    return out


def spans(starts: np.ndarray, lengths: np.ndarray, step: int = 1) -> np.ndarray:
    """``start, start + step, ...`` (``length`` numbers) for each start and length, one
    after another: the records of some pieces (``step`` 1), their entries' first records
    (``step`` = the records of an entry) or their records' first slots (``step`` = the
    record width)."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths  # where each span starts in the result
    return np.repeat(starts - offsets * step, lengths) + np.arange(total, dtype=np.int64) * step


@dataclass(slots=True)
class _Group:
    """A marker's entries in a first read (``Pieces``): ``n`` entries of ``count`` records,
    an entry's records one after another from position ``first[e]`` (record ``r`` of entry
    ``e`` at ``first[e] + r``: ``at(r)``); ``fields`` the marker's ``Packed.fields`` (a
    field's items dropped once that field is decoded whole), ``kinds`` the kind of each
    record slot when it is the same for every entry (a str), else None."""

    n: int
    count: int
    first: np.ndarray
    fields: list[Any]
    kinds: tuple[str | None, ...]
    _at: dict[int, np.ndarray] = field(default_factory=dict)

    def at(self, r: int) -> np.ndarray:
        """The positions of record slot ``r`` of every entry (made once)."""
        at = self._at.get(r)
        if at is None:
            at = self._at[r] = self.first + r
        return at

    def item(self, f: int, r: int) -> Any:
        """Field ``f``'s item of record slot ``r``, made if it is ``Deferred``."""
        item = self.fields[f][r]
        return item.get() if item.__class__ is Deferred else item

    def put(self, out: np.ndarray, slots: list[tuple[int, Any]]) -> None:
        """``out[at(r)] = values`` for each ``(r, values)`` (the entries' values of record slot
        ``r``, an array, or one value for all). Into an output bigger than the caches, entry
        block by entry block: each block's records are one after another in ``out``, so each
        of its cache lines is written once rather than once per slot."""
        if out.nbytes < _BLOCKED_BYTES or len(slots) < 2:
            for r, values in slots:
                out[self.at(r)] = values
            return
        offsets = np.array([r for r, _ in slots], dtype=np.int64)
        grid = np.empty((_BLOCK_ENTRIES, len(slots)), dtype=out.dtype)
        for start in range(0, self.n, _BLOCK_ENTRIES):
            stop = min(start + _BLOCK_ENTRIES, self.n)
            block = grid[: stop - start]
            for j, (_, values) in enumerate(slots):
                block[:, j] = values[start:stop] if isinstance(values, np.ndarray) else values
            out[(self.first[start:stop, None] + offsets).ravel()] = block.ravel()


# ``_Group.put``: an output of more bytes than this is written in blocks of this many entries
_BLOCKED_BYTES = 16 << 20
_BLOCK_ENTRIES = 8192


@dataclass(frozen=True, slots=True)
class _Pick:
    """The records a part reads (``Pieces.part``): the plain records ``plain`` (indices among
    the plain records, in order) at positions ``plain_at``, and per marker group the record
    slots read."""

    plain: np.ndarray
    plain_at: np.ndarray
    slots: list[list[int]]


class Pieces:
    """The records of a trace's write buffer, not yet decoded (``Trace.columns``): the plain
    records, eight values each (``plain``, a ``Plain``: sliced field by field when the field
    is decoded),
    at record positions ``plain_at`` (None: every record is plain, in order), and the packed
    entries of each marker slot by slot, each entry's records one after another from the
    position of its first (``first``, entry by entry).
    ``decode(name)`` builds one field's column, straight into its typed array (codes, int64
    times), never through Python objects per record except the details;
    ``TraceColumns.pending`` asks for each field the first time a reader reads it. What a
    field alone needed is dropped once it is decoded.

    ``part(name, kinds, kind)`` builds a field's column on the records of some kinds only
    (``TraceColumns.part``): only the plain records of those kinds are read, and of the
    packed entries only the record slots of those kinds (a slot whose kind varies from entry
    to entry is read whole when any of its records is of one of them). Nothing a part makes
    is dropped: the field's whole column, decoded later, reads the same items."""

    def __init__(
        self,
        n: int,
        plain: Plain | None,
        plain_at: np.ndarray | None,
        groups: list[tuple[Any, Any, np.ndarray]],
    ) -> None:
        self.n, self.plain_at = n, plain_at
        self.flat = plain if plain is not None and len(plain) else None
        self.left = len(BASE_NAMES)  # fields not decoded yet
        self.groups = groups  # (marker, slots, each entry's first record's position)
        # per marker: its entries' fields (``_Group``), made when the first field is asked
        self.items: list[_Group] = []
        # (parts) the plain records' kind codes, and the plain records of each kind code
        self._plain_kinds: np.ndarray | None = None
        self._plain_of: dict[int, np.ndarray] = {}

    def _items(self) -> list[_Group]:
        if self.groups:
            items = []
            for marker, slots, first in self.groups:
                fields = list(marker.fields(slots))
                kinds = tuple(k if k.__class__ is str else None for k in fields[0])
                items.append(_Group(len(first), marker.count, first, fields, kinds))
            self.items, self.groups = items, []
        return self.items

    def decode(self, name: str) -> Any:
        f = BASE_NAMES.index(name)
        with paused():  # many new containers, no cycles: no collection passes over them
            items = self._items()
            plain = self.flat.field(f, drop=True) if self.flat is not None else None
            column = self._column(name, f, plain, None)
            for group in items:
                group.fields[f] = None
            self.left -= 1
            if not self.left:  # every field decoded: nothing more to keep
                self.flat, self.plain_at, self.items = None, None, []
                self._plain_kinds, self._plain_of = None, {}
            return column

    def part(
        self,
        name: str,
        kinds: Collection[str],
        kind: CodedColumn,
        base: tuple[Collection[str], Any] | None = None,
    ) -> Any:
        """Field ``name``'s column (a ``CodedColumn`` with a dictionary of its own, a
        ``TimeColumn``, an object array), full length, whose values are those of the whole
        column on the records of these ``kinds`` (``kind``: the kind column): -1 codes, absent
        times and None details elsewhere, except where a read slot holds other kinds too.
        ``base``: (its kinds, a part) to extend with these kinds' records, in place (the
        values on the base's kinds stay as they are; a coded part gets a new ``CodedColumn``
        with the dictionary extended)."""
        f = BASE_NAMES.index(name)
        column = None if base is None else base[1]
        if column is not None and name in TIMES and not column.exact:
            kinds, column = frozenset(kinds) | frozenset(base[0]), None  # (read again)
        with paused():
            pick = self._pick(kinds, kind)
            plain = self.flat.gather(pick.plain, f) if self.flat is not None else []
            try:
                return self._column(name, f, plain, pick, column)
            except NotExact:  # a time not a long among the new kinds' records: all again
                assert base is not None
                return self.part(name, frozenset(kinds) | frozenset(base[0]), kind)

    def values_at(self, name: str, rows: np.ndarray, kind: CodedColumn) -> np.ndarray:
        """Field ``name`` (coded or ``detail``, not decoded whole yet) of the records at
        positions ``rows``, as an object array of the values as written: only these records'
        plain values and the packed entries' items of these records are read (``kind``: the
        kind column; record slots of other kinds are not searched)."""
        f = BASE_NAMES.index(name)
        out = np.empty(len(rows), dtype=object)
        for hit, e, item in self._found(rows, kind, f):
            out[hit] = object_array(item) if e is None else _entry_values(item, e)
        return out

    def detail_items(self) -> list[tuple[str | None, np.ndarray, Any]]:
        """The detail field as the buffer holds it, not decoded (for a reader that splits the
        details into their fields itself, ``to_pandas``): per piece of records (their kind,
        None where it varies from record to record; their positions, ascending; their
        details: a list or an object array with one per record, a ``CodedColumn``, a
        ``Tuples``, else one value for them all). The plain records first, then each
        marker's record slots; nothing is kept (the column, decoded later, reads them
        again)."""
        f = BASE_NAMES.index("detail")
        out: list[tuple[str | None, np.ndarray, Any]] = []
        with paused():
            items = self._items()
            if self.flat is not None:
                at = self.plain_at if self.plain_at is not None else np.arange(self.n)
                out.append((None, at, self.flat.field(f, drop=True)))
            for group in items:
                for r in range(group.count):
                    out.append((group.kinds[r], group.at(r), group.item(f, r)))
        return out

    def _found(
        self, rows: np.ndarray, kind: CodedColumn, f: int
    ) -> Iterator[tuple[np.ndarray, np.ndarray | None, Any]]:
        """Where the records at positions ``rows`` are: (the mask of those among the plain
        records, None, their field ``f`` values) and per packed record slot holding some
        (their mask, their entries, the slot's item of field ``f``)."""
        if not len(rows):
            return
        present = np.bincount(kind.codes[rows], minlength=len(kind.values))
        kinds = {kind.values[k] for k in np.flatnonzero(present).tolist()}
        with paused():
            if self.flat is not None:
                if self.plain_at is None:
                    at, hit = rows, np.ones(len(rows), dtype=bool)
                else:
                    at = np.searchsorted(self.plain_at, rows)
                    hit = self.plain_at[np.minimum(at, len(self.plain_at) - 1)] == rows
                if hit.any():
                    yield hit, None, self.flat.gather(at[hit], f)
            for group in self._items():
                for r in range(group.count):
                    slot = group.at(r)  # (each entry's record r, in order)
                    k = group.kinds[r]
                    if not len(slot) or (k is not None and k not in kinds):
                        continue
                    e = np.searchsorted(slot, rows)
                    hit = slot[np.minimum(e, len(slot) - 1)] == rows
                    if hit.any():
                        yield hit, e[hit], group.item(f, r)

    def _pick(self, kinds: Collection[str], kind: CodedColumn) -> _Pick:
        codes = [i for i, k in enumerate(kind.values) if k in kinds]
        if self.flat is not None:
            found = [self._plain_of_kind(c, kind) for c in codes]
            if len(found) == 1:
                plain = found[0]
            else:  # (each in order: one sort of their union)
                plain = np.sort(np.concatenate(found or [np.zeros(0, dtype=np.int64)]))
            plain_at = plain if self.plain_at is None else self.plain_at[plain]
        else:
            plain = plain_at = np.zeros(0, dtype=np.int64)
        slots = []
        wanted = None
        for group in self._items():
            read = []
            for r, k in enumerate(group.kinds):
                if k is not None:
                    if k in kinds:
                        read.append(r)
                    continue
                if wanted is None:
                    wanted = np.zeros(len(kind.values), dtype=bool)
                    wanted[codes] = True
                if wanted[kind.codes[group.at(r)]].any():  # (a slot of varying kinds)
                    read.append(r)
            slots.append(read)
        return _Pick(plain, plain_at, slots)

    def _plain_of_kind(self, code: int, kind: CodedColumn) -> np.ndarray:
        """The plain records of a kind (indices among the plain records), found once."""
        found = self._plain_of.get(code)
        if found is None:
            if self._plain_kinds is None:
                at = self.plain_at
                self._plain_kinds = kind.codes if at is None else kind.codes[at]
            found = self._plain_of[code] = np.flatnonzero(self._plain_kinds == code)
        return found

    def _column(
        self, name: str, f: int, plain: list[Any] | None, pick: _Pick | None, base: Any = None
    ) -> Any:
        """Field ``f``'s column of the records picked (all when ``pick`` is None), into the
        part ``base`` when given (``NotExact`` from a time then: the caller reads the union
        again)."""
        if name in CODED:
            return self._coded(plain, f, name, pick, base)
        if name in TIMES:
            try:
                return self._time(plain, f, pick, base)
            except NotExact:  # a time that is not a long: the values as written
                if base is not None:
                    raise
                return self._time_objects(plain, f, pick)
        return self._objects(plain, f, pick, base)

    def _read(self, pick: _Pick | None) -> Iterator[tuple[_Group, list[tuple[int, np.ndarray]]]]:
        """Each marker group with the record slots read, each with its records' positions
        (entry by entry)."""
        if pick is None:
            for group in self.items:
                yield group, [(r, group.at(r)) for r in range(group.count)]
        else:
            for group, read in zip(self.items, pick.slots, strict=True):
                if read:
                    yield group, [(r, group.at(r)) for r in read]

    def _put(self, out: np.ndarray, values: Any, pick: _Pick | None) -> None:
        """The plain records' values into ``out``."""
        if pick is not None:
            out[pick.plain_at] = values
        elif self.plain_at is None:
            out[:] = values
        else:
            out[self.plain_at] = values

    def _coded(
        self,
        plain: list[Any] | None,
        f: int,
        name: str,
        pick: _Pick | None,
        base: CodedColumn | None = None,
    ) -> CodedColumn:
        fast = name != "key"  # (strings; the engine's windows, whose bounds are ints)
        if not self.items and pick is None:
            return encode(plain if plain is not None else [], fast=fast)
        values: list[Any] = [] if base is None else list(base.values)
        index: dict[Any, int] = {identity(v): i for i, v in enumerate(values)}

        def code(value: Any) -> int:
            ident = identity(value)
            c = index.get(ident)
            if c is None:
                c = index[ident] = len(values)
                values.append(value)
            return c

        def remap(column: CodedColumn) -> np.ndarray:
            first = len(values)  # (the codes new values get from here on)
            table = np.fromiter(map(code, column.values), dtype=np.int32, count=len(column.values))
            if first == 0 and len(values) == len(table):  # all new, in order: the same codes
                return column.codes
            return table[column.codes] if len(column.codes) else column.codes

        if base is not None:
            out = base.codes  # (grown in place)
        elif pick is None:  # (a whole column: every position is written below)
            out = np.empty(self.n, dtype=np.int32)
        else:
            out = np.full(self.n, -1, dtype=np.int32)
        if plain:
            self._put(out, remap(encode(plain, fast=fast)), pick)
        for group, read in self._read(pick):
            done: dict[int, np.ndarray] = {}  # id(item) -> codes (items stay alive meanwhile)
            slots: list[tuple[int, Any]] = []
            for r, _ in read:
                item = group.item(f, r)
                if isinstance(item, (CodedColumn, list)):
                    codes = done.get(id(item))
                    if codes is None:
                        coded = item if isinstance(item, CodedColumn) else encode(item, fast=fast)
                        codes = done[id(item)] = remap(coded)
                    slots.append((r, codes))
                else:  # the same for every entry
                    slots.append((r, code(item)))
            group.put(out, slots)
        return CodedColumn(out, values)

    def _time(
        self, plain: list[Any] | None, f: int, pick: _Pick | None, base: TimeColumn | None = None
    ) -> TimeColumn:
        if not self.items and pick is None:
            return time_column(plain if plain is not None else [])
        if base is not None:  # (grown in place)
            values, present = base.values, base.present
        elif pick is None:  # (every value is written below; present unless said absent)
            values, present = np.empty(self.n, dtype=np.int64), np.ones(self.n, dtype=bool)
        else:
            values, present = np.zeros(self.n, dtype=np.int64), np.zeros(self.n, dtype=bool)
        whole = base is None and pick is None  # (``present`` True where nothing is written)
        if plain:
            column = time_column(plain)
            if not column.exact:
                raise NotExact(f)
            self._put(values, column.values, pick)
            if not whole or not column.present.all():
                self._put(present, column.present, pick)
        for group, read in self._read(pick):
            done: dict[int, Any] = {}
            times: list[tuple[int, Any]] = []
            masks: list[tuple[int, Any]] = []
            for r, _ in read:
                item = group.item(f, r)
                v, m = (0, False) if item is None else _entry_times(item, done)
                times.append((r, v))
                if not whole or m is not True:
                    masks.append((r, m))
            group.put(values, times)
            group.put(present, masks)
        return TimeColumn(values, present)

    def _time_objects(self, plain: list[Any] | None, f: int, pick: _Pick | None) -> TimeColumn:
        objects = np.empty(self.n, dtype=object)  # (None where nothing is written)
        if plain:
            self._put(objects, object_array(plain), pick)
        for group, read in self._read(pick):
            for r, at in read:
                objects[at] = entry_grid(group.n, (group.item(f, r),))
        return time_column(objects.tolist())

    def _objects(
        self,
        plain: list[Any] | None,
        f: int,
        pick: _Pick | None,
        base: np.ndarray | None = None,
    ) -> np.ndarray:
        if not self.items and pick is None:
            return object_array(plain if plain is not None else [])
        out = np.empty(self.n, dtype=object) if base is None else base  # (None: not written)
        if plain:
            self._put(out, object_array(plain), pick)
        for group, read in self._read(pick):
            done: dict[int, Any] = {}
            for r, at in read:
                out[at] = _entry_objects(group.item(f, r), done)
        return out


def _entry_values(item: Any, entries: np.ndarray) -> np.ndarray:
    """A ``Packed.fields`` item's values of some entries (a coded or object field's item:
    a ``CodedColumn``, a list or an array, one value per entry, else one value for all)."""
    if isinstance(item, CodedColumn):
        return item.decode(entries)
    if isinstance(item, Tuples):
        return item.pick(entries)
    if isinstance(item, np.ndarray):
        return item[entries] if item.dtype == object else object_array(item[entries].tolist())
    if isinstance(item, list):
        return object_array(list(map(item.__getitem__, entries.tolist())))
    out = np.empty(len(entries), dtype=object)
    out.fill(item)
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
