"""A trace's write buffer read as columns (``Pieces``), each field decoded when first asked
for: sliced from the plain records, built by the markers' ``fields`` for packed entries;
``part`` decodes a field on some kinds' records only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from winviz.collector import paused
from winviz.trace.coded import (
    LONG_MAX,
    LONG_MIN,
    CodedColumn,
    Merged,
    TimeColumn,
    encode,
    object_array,
    time_column,
)

BASE_NAMES = ("kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")
CODED = ("kind", "operator", "key", "window")
TIMES = ("proc_time", "watermark", "ts")


class NotExact(Exception):
    """A time value that is not an int in the long range: the caller builds an object column."""


@dataclass(frozen=True, slots=True)
class Tuples:
    """A packed detail item of tuples said field by field: entry ``e``'s detail is
    ``tuple(f[e] for f in fields)``, made only when the detail column is read."""

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
            _python(f[entries]) if isinstance(f, np.ndarray) else taken(f, at) for f in self.fields
        ]
        return np.fromiter(zip(*fields, strict=True), dtype=object, count=len(at))


def _python(values: Any) -> Any:
    """A ``Tuples`` field as Python values (an ``int64`` array's as ints)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        return values.tolist()
    return values


def entry_objects(item: Any, n: int, entries: np.ndarray | None = None) -> np.ndarray:
    """The values of ``n`` records given as one ``Packed.fields`` item (of some ``entries``
    of them, if given), as an object array."""
    if isinstance(item, np.ndarray):
        item = item if entries is None else item[entries]
        return item if item.dtype == object else object_array(item.tolist())
    if isinstance(item, list):
        return object_array(item if entries is None else taken(item, entries.tolist()))
    if isinstance(item, Tuples):
        return item.objects() if entries is None else item.pick(entries)
    if isinstance(item, CodedColumn):
        return item.decode(entries)
    if isinstance(item, TimeColumn):
        return object_array((item if entries is None else item.take(entries)).tolist())
    out = np.empty(n if entries is None else len(entries), dtype=object)
    out.fill(item)
    return out


class Deferred:
    """An item of ``Packed.fields`` made by ``make()`` when its field is first decoded, once."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make: Callable[[], Any] | None = make
        self._value: Any = None

    def get(self) -> Any:
        if self._make is not None:
            self._value, self._make = self._make(), None
        return self._value


class Slots:
    """A marker's entries value by value: ``slots[f]`` is value ``f`` of every entry, sliced
    from ``flat``'s slot ranges ``spans`` (None: ``flat`` is one run)."""

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
    (``kinds``: field 0, when the caller has it)."""

    __slots__ = ("_counts", "_data", "_fields", "_n", "_spans", "_table", "_width")

    def __init__(
        self,
        data: list[Any],
        spans: list[tuple[int, int]],
        width: int = 8,
        kinds: list[Any] | None = None,
    ) -> None:
        self._data, self._spans, self._width = data, spans, width
        bounds = np.fromiter(chain.from_iterable(spans), np.int64, 2 * len(spans))
        self._counts = (bounds[1::2] - bounds[0::2]) // width  # each span's records
        self._n = int(self._counts.sum())
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
        """Field ``f`` of the plain records ``rows`` (a few: ``pick``ed from the buffer)."""
        if f not in self._fields and len(rows) * 8 < self._n:
            return self.pick(rows, f)
        return taken(self.field(f), rows.tolist())

    def pick(self, rows: np.ndarray, f: int) -> list[Any]:
        """``gather`` without slicing the whole field: each record's slot found by its span."""
        if not len(rows):
            return []
        if self._table is None:
            counts = self._counts
            ends = np.cumsum(counts)  # (the records before each span's end)
            starts = np.fromiter(map(itemgetter(0), self._spans), np.int64, len(counts))
            # a record's slot: its index times the width plus its span's offset
            self._table = (ends, starts - (ends - counts) * self._width)
        ends, offsets = self._table
        span = np.searchsorted(ends, rows, side="right")
        return taken(self._data, (offsets[span] + rows * self._width + f).tolist())


def taken(values: list[Any], at: list[int]) -> list[Any]:
    """``[values[i] for i in at]``, at C speed."""
    return list(itemgetter(*at)(values)) if len(at) > 1 else [values[i] for i in at]


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
    """``start, start + step, ...`` (``length`` numbers) for each start and length, in turn."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths  # where each span starts in the result
    return np.repeat(starts - offsets * step, lengths) + np.arange(total, dtype=np.int64) * step


@dataclass(slots=True)
class _Group:
    """A marker's ``n`` entries of ``count`` records (record ``r`` of entry ``e`` at
    ``first[e] + r``), its ``Packed.fields`` and each slot's kind (None: it varies)."""

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
        """``out[at(r)] = values`` for each ``(r, values)``; a big output block by block."""
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
    """The records a part reads: plain ones (indices, positions) and each group's slots."""

    plain: np.ndarray
    plain_at: np.ndarray
    slots: list[list[int]]


class Pieces:
    """A write buffer's records, not yet decoded: the plain records at positions ``plain_at``
    (None: all plain) and per marker its entries (``_Group``). ``decode(name)`` builds a
    field's column; ``part(name, kinds, kind)`` builds it on some kinds' records only."""

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
        self.items: list[_Group] = []  # made from ``groups`` when a field is first asked
        self.kept: list[tuple[str | None, np.ndarray, Any]] = []  # (``kept_details``)
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
            if name == "detail":
                self.kept = self._coded_details(items, f)
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
        """Field ``name``'s part for these ``kinds`` (``kind``: the kind column); ``base``:
        (its kinds, a part) to extend with these kinds' records."""
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
        """Field ``name`` (coded or ``detail``) of the records ``rows`` only, as objects."""
        f = BASE_NAMES.index(name)
        out = np.empty(len(rows), dtype=object)
        for hit, e, item in self._found(rows, kind, f):
            out[hit] = object_array(item) if e is None else entry_objects(item, 0, e)
        return out

    def detail_items(self) -> list[tuple[str | None, np.ndarray, Any]]:
        """The detail field as the buffer holds it (``TraceColumns.detail_items``)."""
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

    def kept_details(self, column: np.ndarray) -> list[tuple[str | None, np.ndarray, Any]]:
        """``detail_items`` once the detail column is decoded: the packed details that are
        one value or coded as they were, the other records' from ``column``."""
        if not self.kept:
            return [(None, np.arange(self.n), column)]
        rest = np.ones(self.n, dtype=bool)
        for _, rows, _ in self.kept:
            rest[rows] = False
        return [*self.kept, (None, np.flatnonzero(rest), column[rest])]

    def _coded_details(
        self, items: list[_Group], f: int
    ) -> list[tuple[str | None, np.ndarray, Any]]:
        """The packed detail items ``kept_details`` keeps (not one value per record)."""
        kept = []
        for group in items:
            for r in range(group.count):
                item = group.item(f, r)
                if not isinstance(item, (list, np.ndarray, Tuples)):
                    kept.append((group.kinds[r], group.at(r), item))
        return kept

    def _found(
        self, rows: np.ndarray, kind: CodedColumn, f: int
    ) -> Iterator[tuple[np.ndarray, np.ndarray | None, Any]]:
        """Where the records ``rows`` are: (mask, None, values) of the plain ones, and (mask,
        entries, item) per packed record slot holding some."""
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
        """The plain records of a kind (indices among them), found once."""
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
        """Field ``f``'s column of the records picked (all: None), into ``base`` if given."""
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
        """Each marker group with the record slots read and their records' positions."""
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
        merged = Merged(None if base is None else base.values)
        if base is not None:
            out = base.codes  # (grown in place)
        elif pick is None:  # (a whole column: every position is written below)
            out = np.empty(self.n, dtype=np.int32)
        else:
            out = np.full(self.n, -1, dtype=np.int32)
        if plain:
            self._put(out, merged.remap(encode(plain, fast=fast)), pick)
        for group, read in self._read(pick):
            slots: list[tuple[int, Any]] = []
            for r, _ in read:
                item = group.item(f, r)
                if isinstance(item, (CodedColumn, list)):
                    coded = item if isinstance(item, CodedColumn) else encode(item, fast=fast)
                    slots.append((r, merged.remap(coded)))
                else:  # the same for every entry
                    slots.append((r, merged.code(item)))
            group.put(out, slots)
        return CodedColumn(out, merged.values)

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
            times: list[tuple[int, Any]] = []
            masks: list[tuple[int, Any]] = []
            for r, _ in read:
                item = group.item(f, r)
                v, m = (0, False) if item is None else _entry_times(item)
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
                objects[at] = entry_objects(group.item(f, r), group.n)
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
            for r, at in read:
                out[at] = entry_objects(group.item(f, r), group.n)
        return out


def _entry_times(item: Any) -> tuple[Any, Any]:
    """A time item's (values, present) for all entries; ``NotExact`` unless longs."""
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
        column = time_column(item)
    else:
        raise NotExact(item)
    if not column.exact:
        raise NotExact(item)
    return column.values, True if column.present.all() else column.present
