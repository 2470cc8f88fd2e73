"""Coded columns: ``int32`` codes into a field's distinct values (``CodedColumn``) or ``int64``
times with a presence mask (``TimeColumn``), and their encoders. Values are told apart as
Java's ``equals`` would (``identity``): by type and value, floats as ``Double.equals``, never
by which objects hold them.
"""

from __future__ import annotations

import numbers
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import compress, count, islice, repeat
from operator import eq, is_, itemgetter, ne
from typing import Any

import numpy as np

from winviz.trace import codec

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class TimeColumn:
    """A time field: ``values`` (``int64``, 0 where absent; objects when one is not a long)
    and ``present``."""

    values: np.ndarray
    present: np.ndarray

    @property
    def exact(self) -> bool:
        """True when ``values`` is ``int64``."""
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
    """``codes`` (``int32``) into ``values`` (distinct, in order of first appearance)."""

    codes: np.ndarray
    values: list[Any]
    _lookup: list[np.ndarray] = field(default_factory=list, repr=False, compare=False)

    def take(self, rows: np.ndarray) -> CodedColumn:
        return CodedColumn(self.codes[rows], self.values, self._lookup)

    def lookup(self) -> np.ndarray:
        """``values`` as an object array (made once)."""
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


class Merged:
    """One dictionary coded columns are merged into (values told apart by ``identity``)."""

    __slots__ = ("_index", "values")

    def __init__(self, values: list[Any] | None = None) -> None:
        self.values: list[Any] = [] if values is None else list(values)
        self._index = {identity(v): i for i, v in enumerate(self.values)}

    def code(self, value: Any) -> int:
        """The code of ``value``, added when new."""
        ident = identity(value)
        code = self._index.get(ident)
        if code is None:
            code = self._index[ident] = len(self.values)
            self.values.append(value)
        return code

    def remap(self, column: CodedColumn) -> np.ndarray:
        """``column``'s codes as codes of this dictionary (its values added)."""
        first = len(self.values)
        table = np.fromiter(map(self.code, column.values), np.int32, len(column.values))
        if first == 0 and len(self.values) == len(table):  # all new, in order: the same codes
            return column.codes
        return table[column.codes] if len(column.codes) else column.codes


# rows gathered per chunk (``gather``): numpy's cast of int32 indices to intp stays in cache
CHUNK = 1 << 16


def gather(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``table[codes]``, gathered chunk by chunk (``CHUNK``)."""
    out = np.empty(len(codes), dtype=table.dtype)
    for start in range(0, len(codes), CHUNK):
        table.take(codes[start : start + CHUNK], out=out[start : start + CHUNK])
    return out


def object_array(values: Any) -> np.ndarray:
    """A 1-d object array of these values (tuples and lists stay elements)."""
    values = values if isinstance(values, (list, tuple)) else list(values)
    return np.fromiter(values, dtype=object, count=len(values))


def time_column(values: list[Any]) -> TimeColumn:
    """A ``TimeColumn`` of ints and Nones (objects when a value is not a long)."""
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
    """A ``TimeColumn`` of values known to be ``int``s (objects when one is not a long)."""
    n = len(values)
    try:
        return TimeColumn(np.fromiter(values, dtype=np.int64, count=n), np.ones(n, dtype=bool))
    except OverflowError:
        return TimeColumn(object_array(values), np.ones(n, dtype=bool))


def encode(values: list[Any], *, fast: bool = False) -> CodedColumn:
    """Dictionary-encode a column (``value_codes``); ``fast``: equality alone tells the values
    apart (strings; the engine's windows)."""
    if fast:
        # one pass: a value not seen before gets the next code (``__missing__``), at C speed
        code_of: defaultdict[Any, int] = defaultdict(count().__next__)
        try:
            codes = np.fromiter(map(code_of.__getitem__, values), np.int32, len(values))
            return CodedColumn(codes, list(code_of))
        except TypeError:  # an unhashable value: the general way
            pass
    codes, first = value_codes(values)
    return CodedColumn(codes.astype(np.int32), [values[i] for i in first.tolist()])


def encode_runs(values: list[Any], *, fast: bool = False) -> CodedColumn:
    """``encode`` of values in runs (with ``fast``: only each run's first looked up)."""
    n = len(values)
    if n < 64 or not fast:
        return encode(values, fast=fast)
    changes = np.fromiter(map(ne, islice(values, 1, None), values), dtype=bool, count=n - 1)
    starts = np.flatnonzero(changes) + 1
    if len(starts) * 4 > n:
        return encode(values, fast=fast)
    starts = np.concatenate(([0], starts))
    heads = encode([values[i] for i in starts.tolist()], fast=fast)
    return CodedColumn(np.repeat(heads.codes, np.diff(starts, append=n)), heads.values)


_FAMILIES = (numbers.Number, tuple, str, bytes, frozenset)


def identity(value: Any) -> Any:
    """What tells a trace value apart: ``(type, value)``, tuples element by element, an
    unhashable value by its tagged JSON text (``repr`` when it contains itself)."""
    if isinstance(value, tuple):
        return (type(value), tuple(identity(v) for v in value))
    if value.__class__ is float:  # as Double.equals: 0.0 and -0.0 differ, every NaN is one
        return (float, value.hex())
    try:
        hash(value)
    except TypeError:
        try:
            return (type(value), codec.to_text(value))
        except RecursionError:
            return (type(value), "repr", repr(value))
    return (type(value), value)


def is_none(values: np.ndarray | list[Any]) -> np.ndarray:
    """Where the values are None, as a bool array (one C-speed pass, no value compared)."""
    return np.fromiter(map(is_, values, repeat(None)), dtype=bool, count=len(values))


def first_of_each(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a typed array (in order of first appearance) and each code's first position."""
    import pandas as pd

    codes, uniques = pd.factorize(values)
    return codes, _firsts(codes, len(uniques))


def _firsts(codes: np.ndarray, count: int) -> np.ndarray:
    """The position of each code's first occurrence (codes ``0 .. count-1``)."""
    first = np.zeros(count, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return first


# up to this many codes, ``rows_by_code`` finds each code's rows by a pass over the codes
_FEW_CODES = 16


def rows_by_code(codes: np.ndarray, count: int) -> list[tuple[int, np.ndarray]]:
    """The positions of each present code's values in ``codes`` (codes below ``count``)."""
    if count <= 256:  # a stable sort of small ints is a radix sort: one pass
        codes = codes.astype(np.uint8)
    if count <= _FEW_CODES:  # a pass per code over the (one-byte) codes: no sort
        found = [(code, np.flatnonzero(codes == code)) for code in range(count)]
        return [(code, at) for code, at in found if len(at)]
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    bounds = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1, [len(codes)]))
    return [
        (int(ordered[start]), order[start:stop])
        for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        if stop > start
    ]


def value_codes(values: np.ndarray | list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Codes of some values (one per ``identity``, in order of first appearance) and each
    code's first position (one dict pass when ``equality_is_exact``)."""
    listed = values.tolist() if isinstance(values, np.ndarray) else values
    n = len(listed)
    codes = None
    if equality_is_exact(listed):
        code_of: defaultdict[Any, int] = defaultdict(count().__next__)
        try:
            codes = np.fromiter(map(code_of.__getitem__, listed), dtype=np.int64, count=n)
        except TypeError:  # an unhashable value: by identity
            codes = None
    if codes is None:
        code_of = defaultdict(count().__next__)
        codes = np.fromiter(map(code_of.__getitem__, map(identity, listed)), np.int64, n)
    return codes, _firsts(codes, len(code_of))


def repeated(values: np.ndarray, sample: int = 1024) -> bool:
    """Whether telling values apart pays: some repeat in a seeded sample, or they are few."""
    n = len(values)
    if n < 4 * sample:
        return True
    picked = values[np.random.default_rng(0).integers(0, n, sample)]
    return len(value_codes(picked)[1]) < sample * 15 // 16


def distinct_values(values: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """``value_codes``' codes and each code's first value, in that order."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), []
    codes, first = value_codes(values)
    return codes, values[first].tolist()


def per_distinct(values: Any, make: Callable[[Any], Any]) -> list[Any]:
    """``make`` of each value (a list, array or Series), called once per distinct value
    (``value_codes``: values told apart by ``identity``)."""
    listed = values.tolist() if hasattr(values, "tolist") else list(values)
    if not listed:
        return []
    codes, first = value_codes(listed)
    return object_array([make(listed[i]) for i in first.tolist()])[codes].tolist()


def same_values(
    a: np.ndarray | list[Any], b: np.ndarray | list[Any], signature_of_a: Any = None
) -> np.ndarray:
    """Where ``a[i]`` and ``b[i]`` are one value (``identity``): ``==``, then ``identity`` for
    equal pairs unless both have one ``type_signature`` (``signature_of_a``, if known)."""
    a = a.tolist() if isinstance(a, np.ndarray) else a
    b = b.tolist() if isinstance(b, np.ndarray) else b
    try:
        same = np.fromiter(map(eq, a, b), dtype=bool, count=len(a))
    except (TypeError, ValueError):  # (an ``==`` that gives no bool: numpy's)
        same = np.fromiter(map(_equal, a, b), dtype=bool, count=len(a))
    if same.any():  # (one signature, not None: where ``==`` holds two equal, they are one)
        mine = type_signature(a) if signature_of_a is None else signature_of_a
        if mine is None or type_signature(b) != mine:
            for i in np.flatnonzero(same).tolist():
                same[i] = identity(a[i]) == identity(b[i])
    return same


def all_same(
    a: np.ndarray | list[Any], b: np.ndarray | list[Any], signature_of_a: Any = None
) -> bool:
    """Whether ``a`` and ``b`` hold one value at every position (``same_values``)."""
    return len(a) == len(b) and bool(same_values(a, b, signature_of_a).all())


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # (an ``==`` that gives no bool, numpy's: told by ``identity`` instead)
        return identity(a) == identity(b)


# types whose ``==`` and ``hash`` are their values' (no two values of one such type compare
# equal unless they are one value), within one family at most (``_FAMILIES``); floats checked
_SCALARS = frozenset({type(None), bool, int, str, bytes, float})
_DEPTH = 4  # nested tuples looked into this deep; deeper ones go through ``identity``


def equality_is_exact(values: list[Any]) -> bool:
    """True when ``==`` tells these values apart as ``identity`` does."""
    return type_signature(values) is not None


def type_signature(values: list[Any]) -> Any:
    """The values' types as far as ``==`` needs them to agree with ``identity`` (one type per
    family that compares across types, ``1 == True == 1.0``; no 0.0 or NaN; tuples position
    by position), or None when it cannot."""
    return _signature(lambda: iter(values), frozenset(map(type, values)), 0)


def _signature(column: Callable[[], Iterator[Any]], types: frozenset[type], depth: int) -> Any:
    """``type_signature`` of the values ``column()`` iterates over (their ``types`` given)."""
    if not _types_exact(types):
        return None
    if float in types:
        floats = np.array([v for v in column() if v.__class__ is float], dtype=np.float64)
        if (floats == 0).any() or np.isnan(floats).any():
            return None  # (== holds 0.0 and -0.0 one value, and each NaN none)
    tuples = [t for t in types if issubclass(t, tuple)]
    if not tuples:
        return types
    if depth >= _DEPTH:
        return None
    kind = tuples[0]
    mine = column
    if len(types) > 1:
        picked = list(compress(column(), map(is_, map(type, column()), repeat(kind))))
        mine = lambda: iter(picked)  # noqa: E731
    each = sorted(set(map(len, mine())))
    groups = [(each[0], mine)] if len(each) == 1 else _by_length(list(mine()), each)
    shape = []
    for length, group in groups:  # (tuples of two lengths are never equal: each length apart)
        for i in range(length):
            item = itemgetter(i)

            def items(group: Any = group, item: Any = item) -> Iterator[Any]:
                return map(item, group())

            signature = _signature(items, frozenset(map(type, items())), depth + 1)
            if signature is None:
                return None
            shape.append((length, i, signature))
    return (types, tuple(shape))


def _by_length(
    tuples: list[tuple[Any, ...]], lengths: list[int]
) -> list[tuple[int, Callable[[], Iterator[Any]]]]:
    """The tuples of each length, as ``_signature``'s columns."""
    of = list(map(len, tuples))
    groups = []
    for length in lengths:
        group = list(compress(tuples, map(eq, of, repeat(length))))
        groups.append((length, lambda group=group: iter(group)))
    return groups


def _types_exact(types: frozenset[type]) -> bool:
    """One type, or plain scalars and tuples at most one per family (``type_signature``)."""
    if len(types) > 1 and not all(t in _SCALARS or issubclass(t, tuple) for t in types):
        return False  # (another type among others: its equality may cross types)
    return all(sum(1 for t in types if issubclass(t, family)) <= 1 for family in _FAMILIES)
