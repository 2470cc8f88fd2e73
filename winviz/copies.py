"""Records handed to user functions are copies (Flink's default: object reuse disabled).

With ``ExecutionConfig.enableObjectReuse()`` off — Flink's default — every chained operator
gets its own copy of a record (``CopyingChainingOutput`` copies it with the type's
serializer), so a user function that changes its input changes nothing upstream. winviz
keeps the records it traces as they were: a map, filter, flat_map, KeyedProcessFunction or
window function gets a copy of a record that could be changed in place (a dict, a list, an
object), and the first record of a window's reduce state is a copy too. Immutable records —
None, bool, int, float, str, bytes and tuples (or frozensets) of those, nested to any depth —
are handed over as they are (no copy, no cost). ``copy_record`` copies dicts and lists of
such values at C speed and anything else with ``copy.deepcopy``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from itertools import chain
from typing import Any

_ATOMIC = frozenset({type(None), bool, int, float, str, bytes, complex})
_ATOMIC_OR_TUPLE = _ATOMIC | {tuple}


def is_immutable(value: Any) -> bool:
    """True when nothing in ``value`` can be changed in place: an atomic value, or a tuple or
    frozenset whose items are immutable (to any depth). A tuple key such as
    ``(("eu", "web"), 3)`` is immutable; a tuple holding a list is not."""
    cls = value.__class__
    if cls in _ATOMIC:
        return True
    if cls is tuple or cls is frozenset:
        return all(map(is_immutable, value))
    return False


def copy_record(value: Any) -> Any:
    """``value`` itself when it is immutable, else a copy a user function may change."""
    cls = value.__class__
    if cls in _ATOMIC:
        return value
    if cls is tuple:
        return value if all(map(is_immutable, value)) else copy.deepcopy(value)
    if cls is dict:
        for item in value.values():
            if item.__class__ not in _ATOMIC and not is_immutable(item):
                return copy.deepcopy(value)
        return value.copy()
    if cls is list:
        for item in value:
            if item.__class__ not in _ATOMIC and not is_immutable(item):
                return copy.deepcopy(value)
        return value.copy()
    return copy.deepcopy(value)


def all_immutable(values: Sequence[Any], kinds: set[type] | None = None) -> bool:
    """True when ``copy_record`` would hand every value over as it is, so loops over a batch
    of such values skip the copies (``Batch.immutable``). Atomic values and tuples of atomic
    values are checked at C speed (about 60 ns per three-field tuple); nested tuples and
    frozensets are looked into item by item (``is_immutable``). ``kinds``: the values' types,
    when the caller has them already (``set(map(type, values))``)."""
    if kinds is None:
        kinds = set(map(type, values))
    if not kinds <= _ATOMIC_OR_TUPLE:
        return False
    if tuple not in kinds:
        return True
    tuples = values if len(kinds) == 1 else [v for v in values if v.__class__ is tuple]
    if _ATOMIC.issuperset(map(type, chain.from_iterable(tuples))):
        return True
    return all(map(is_immutable, tuples))
