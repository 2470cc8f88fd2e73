"""Records handed to user functions are copies (Flink's default: object reuse disabled), so a
function that changes its input changes nothing upstream, nor the trace. Immutable records —
atomic values, tuples and frozensets of them, frozen dataclasses and namedtuples of them — are
handed over as they are (``is_immutable``); the rest is copied (``copy_record``)."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import countOf
from typing import Any

_ATOMIC = frozenset({type(None), bool, int, float, str, bytes, complex})


_COPY_HOOKS = (
    "__deepcopy__",
    "__copy__",
    "__reduce__",
    "__reduce_ex__",
    "__getstate__",
    "__setstate__",
)
_ITEMS = ("",)
_RECORD_FIELDS: dict[type, tuple[str, ...] | None] = {}
"""Per type: where its instances' values are when it may be an immutable record (``("",)`` for a
namedtuple's items, a frozen dataclass's slots and ``"__dict__"``), or None: always copied."""


def _record_fields(cls: type) -> tuple[str, ...] | None:
    """``_RECORD_FIELDS[cls]``, decided the first time ``cls`` is seen."""
    try:
        return _RECORD_FIELDS[cls]
    except KeyError:
        fields = _RECORD_FIELDS[cls] = _decide_record_fields(cls)
        return fields


def _decide_record_fields(cls: type) -> tuple[str, ...] | None:
    """The rule of ``_RECORD_FIELDS``: a class with copying hooks of its own is always copied; a
    namedtuple is read as its items; a class itself decorated ``@dataclass(frozen=True)`` by its
    ``__dict__`` and slots."""
    for klass in cls.__mro__[:-1]:  # (object's own hooks copy the state as it is)
        for hook in _COPY_HOOKS:
            f = klass.__dict__.get(hook)
            if f is not None and not getattr(f, "__qualname__", "").startswith("_dataclass_"):
                return None  # (dataclasses' own slot state hooks are fine)
    if issubclass(cls, tuple):
        return _ITEMS if cls.__dictoffset__ == 0 else None
    params = cls.__dict__.get("__dataclass_params__")
    if params is None or not params.frozen:
        return None
    names = ["__dict__"] if cls.__dictoffset__ != 0 else []
    for klass in cls.__mro__[:-1]:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return tuple(dict.fromkeys(n for n in names if n != "__weakref__"))


def _record_immutable(value: Any, fields: tuple[str, ...]) -> bool:
    """Whether an immutable record's values (``_RECORD_FIELDS``) are all immutable."""
    if fields is _ITEMS:
        return all(map(is_immutable, value))  # a namedtuple's items
    for name in fields:
        if name == "__dict__":
            if not all(map(is_immutable, value.__dict__.values())):
                return False
        elif not is_immutable(getattr(value, name, None)):
            return False
    return True


def is_immutable(value: Any) -> bool:
    """True when nothing in ``value`` can be changed in place (atomic values, and tuples, frozensets
    and immutable records of them, to any depth)."""
    cls = value.__class__
    if cls in _ATOMIC:
        return True
    if cls is tuple or cls is frozenset:
        return all(map(is_immutable, value))
    fields = _record_fields(cls)
    return fields is not None and _record_immutable(value, fields)


def copy_record(value: Any) -> Any:
    """``value`` itself when it is immutable, else a copy a user function may change."""
    cls = value.__class__
    if cls in _ATOMIC:
        return value
    if cls is tuple:
        return value if all(map(is_immutable, value)) else copy.deepcopy(value)
    if cls is dict or cls is list:  # a shallow copy, unless something inside can change
        for item in value.values() if cls is dict else value:
            if item.__class__ not in _ATOMIC and not is_immutable(item):
                return copy.deepcopy(value)
        return value.copy()
    fields = _record_fields(cls)
    if fields is not None and _record_immutable(value, fields):
        return value
    return copy.deepcopy(value)


def all_immutable(values: Sequence[Any], kinds: set[type] | None = None) -> bool:
    """True when ``copy_record`` would hand every value over as it is (``Batch.immutable``):
    ``is_immutable`` of each value, decided a level at a time with a few passes at C speed per
    level. ``kinds``: the values' types, when the caller has them (``kinds_of(values)``)."""
    level = values
    if kinds is None:
        kinds = kinds_of(level)
    for _ in range(sys.getrecursionlimit()):
        if kinds <= _ATOMIC:
            return True
        if any(_fields_of(kind) is None for kind in kinds - _ATOMIC):
            return False  # (a type whose instances are never shared)
        # (tuples of one width: their items' types repeat with that period, column by column)
        width = len(level[0]) if len(kinds) == 1 and _fields_of(level[0].__class__) is _ITEMS else 1
        level = _inside(level, kinds)
        kinds = kinds_of(level, width)
    return all(map(is_immutable, values))  # (nested deeper than that: it raises as deep)


def kinds_of(values: Sequence[Any], width: int = 1) -> set[type]:
    """``set(map(type, values))``, each column (values ``width`` apart) counted at C speed."""
    kinds: set[type] = set()
    step = width or 1
    for column in (values[j::step] for j in range(min(step, len(values)))):
        first = type(column[0])
        same = countOf(map(type, column), first) == len(column)
        kinds.update([first] if same else map(type, column))
    return kinds


def _fields_of(kind: type) -> tuple[str, ...] | None:
    """Where the values inside a ``kind`` are: ``_ITEMS`` for a tuple or frozenset, else its
    fields."""
    return _ITEMS if kind is tuple or kind is frozenset else _record_fields(kind)


def _inside(level: Sequence[Any], kinds: set[type]) -> list[Any]:
    """The values inside the non-atomic values of ``level`` (``kinds``: their types), as
    ``is_immutable`` looks into them (None for an unset slot)."""
    inside: list[Any] = []
    extend = inside.extend  # (``any`` runs it over every value: it returns None)
    for kind in kinds - _ATOMIC:
        of_kind = level if len(kinds) == 1 else [v for v in level if v.__class__ is kind]
        for name in _fields_of(kind):  # type: ignore[union-attr]
            if name == "":  # (_ITEMS)
                any(map(extend, of_kind))
            elif name == "__dict__":
                any(map(extend, map(dict.values, map(vars, of_kind))))
            else:
                extend(map(getattr, of_kind, repeat(name), repeat(None)))
    return inside


def first_uncopyable(named: Iterable[tuple[Any, Any]]) -> tuple[Any, Any] | None:
    """The first ``(name, value)`` whose value ``copy.deepcopy`` refuses (None: every one copies),
    for an error that names what cannot be copied."""
    for name, value in named:
        try:
            copy.deepcopy(value)
        except Exception:
            return name, value
    return None
