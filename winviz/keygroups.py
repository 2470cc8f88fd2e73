"""Key → key group → subtask, exactly as Flink assigns them (KeyGroupRangeAssignment).

Flink never hashes a key straight onto a subtask. It hashes the key's Java ``hashCode()`` with
murmur hash onto one of ``max_parallelism`` *key groups*, and each subtask owns a contiguous
range of key groups. State and timers move between subtasks by whole key groups, which is why
the maximum parallelism cannot change after a job starts.

Java ``hashCode`` rules used here: ``str`` → ``String.hashCode`` (UTF-16 code units);
``int`` → ``Integer.hashCode`` when it fits 32 bits, else ``Long.hashCode``; ``bool`` →
``Boolean.hashCode``; ``float`` → ``Double.hashCode`` (``bits ^ (bits >>> 32)`` of
``doubleToLongBits``: -0.0 has its own bits, every NaN the canonical NaN's); ``tuple`` →
Flink's ``TupleN.hashCode`` (a None field → 0). A None key is refused, as Flink refuses a
null key.

**One rule for keys at every parallelism** (``KeyRule``): a keyed operator's subtasks share
one rule, which checks every key that is not a str, at parallelism 1 too (where no key group
is computed). It refuses None (Flink's "Assigned key must not be null!"), NaN (Java's
``Double.equals`` takes every NaN for one key, but ``NaN != NaN`` in Python, and winviz keys
its state by Python equality: every NaN record would be a key of its own), unhashable values
and types without a Java ``hashCode`` rule here, and two keys that Python takes for one but
Java for two: ``1`` and ``True`` (Integer and Boolean), ``2`` and ``2.0`` (Integer and
Double), ``0.0`` and ``-0.0`` (``Double.equals`` compares the bits), also as fields of
tuples — winviz keys its state by Python equality and could not keep them apart.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from winviz.errors import InputError, KeySelectionError

DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 128
UPPER_BOUND_MAX_PARALLELISM = 32768

_M32 = 0xFFFFFFFF


def _int32(x: int) -> int:
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def _rotl32(x: int, r: int) -> int:
    x &= _M32
    return ((x << r) | (x >> (32 - r))) & _M32


def java_hash_code(key: Any) -> int:
    """The Java ``hashCode()`` the key would have in Flink (see the module docstring)."""
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if -(2**31) <= key < 2**31:
            return key
        if not -(2**63) <= key < 2**63:
            raise InputError("an int key must fit Java's long", value=key)
        unsigned = key & 0xFFFFFFFFFFFFFFFF
        return _int32(unsigned ^ (unsigned >> 32))
    if isinstance(key, float):
        return _double_hash_code(key)
    if isinstance(key, str):
        h = 0
        data = key.encode("utf-16-be")
        for i in range(0, len(data), 2):
            h = (31 * h + ((data[i] << 8) | data[i + 1])) & _M32
        return _int32(h)
    if isinstance(key, tuple):
        h = 0
        for item in key:  # a None field hashes to 0 (Flink's TupleN.hashCode)
            h = (31 * h + (0 if item is None else java_hash_code(item))) & _M32
        return _int32(h)
    raise InputError(
        f"no Java hashCode rule for key type {type(key).__name__}",
        value=key,
        expected="str, int, bool, float, None or a tuple of those",
    )


_CANONICAL_NAN_BITS = 0x7FF8000000000000


def _double_hash_code(x: float) -> int:
    """``Double.hashCode``: ``(int) (bits ^ (bits >>> 32))`` of ``doubleToLongBits(x)``
    (which maps every NaN to the canonical ``0x7ff8000000000000L``)."""
    bits = _CANONICAL_NAN_BITS if x != x else struct.unpack(">Q", struct.pack(">d", x))[0]
    return _int32(bits ^ (bits >> 32))


def null_key_error(value: Any, index: int | None) -> KeySelectionError:
    """Flink's "Assigned key must not be null!" for the record ``value``."""
    return KeySelectionError(
        "Assigned key must not be null! (the key selector returned None)",
        index=index,
        field="key",
        value=value,
        expected="a key that is not None",
    )


def _field_signature(x: Any) -> Any:
    if x.__class__ is float and x == 0:  # Double.equals tells 0.0 and -0.0 apart
        return (float, math.copysign(1.0, x))
    return x.__class__


def _signature(key: Any) -> Any:
    """What Java tells apart among keys Python finds equal: the class (per field of a
    tuple), and the sign of a zero Double."""
    if key.__class__ is tuple:
        types = tuple(map(type, key))
        if float in types and 0.0 in key:  # a zero Double: its sign counts too
            return tuple(map(_field_signature, key))
        return types
    return _field_signature(key)


def _types(key: Any) -> Any:
    return tuple(map(type, key)) if key.__class__ is tuple else key.__class__


def _ambiguous(key: Any) -> bool:
    """Whether a key equal to ``key`` could be another Java key: a number (Integer 1 and
    Boolean true, Integer 2 and Double 2.0, Double 0.0 and -0.0), as the key or as a field
    of it."""
    if key.__class__ is tuple:
        return any(map(_ambiguous, key))
    return key.__class__ is int or key.__class__ is bool or key.__class__ is float


def _has_nan(key: Any) -> bool:
    if key.__class__ is tuple:
        return any(map(_has_nan, key))
    return isinstance(key, float) and key != key


class KeyRule:
    """Checks the keys of one keyed operator (all its subtasks) by one rule: see the module
    docstring. ``check(key, index)`` is called for every key that is not a str."""

    def __init__(self, *, window_all: bool = False) -> None:
        # key -> (its signature when ambiguous, else None; the first key object)
        self._known: dict[Any, tuple[Any, Any]] = {}
        self.window_all = window_all
        """``window_all``: every record has the key None (Flink keys them by the byte 0)."""

    def check(self, key: Any, index: int | None = None) -> None:
        if key is None and self.window_all:
            return
        try:
            known = self._known.get(key)
        except TypeError:
            raise KeySelectionError(
                f"a key must be hashable; {type(key).__name__} is not (Flink needs hashCode "
                "and equals)",
                index=index,
                field="key",
                value=key,
                expected="a str, int, bool or a tuple of those (e.g. tuple(the list))",
            ) from None
        if known is None:
            self._first(key, index)
            return
        sig = known[0]  # a plain number key: its class (one identity test)
        if sig is None or sig is key.__class__:
            return
        if key.__class__ is tuple and sig == tuple(map(type, key)):  # no zero Double in it
            return
        if sig != _signature(key):
            first = known[1]
            same_types = _types(first) == _types(key)  # only a zero's sign differs
            why = (
                "Java's Double.equals compares the bits, and 0.0 and -0.0 differ"
                if same_types
                else "Java's equals tells their types apart"
            )
            raise KeySelectionError(
                f"keys {first!r} ({type(first).__name__}) and {key!r} ({type(key).__name__}) "
                f"are one key in Python but two in Flink ({why}, at every parallelism); "
                "winviz keys state by Python equality and cannot keep them apart",
                index=index,
                field="key",
                value=key,
                expected=(
                    "zeros of one sign (e.g. key + 0.0 turns -0.0 into 0.0)"
                    if same_types
                    else "keys of one type for one value (e.g. str(key) or int(key))"
                ),
            )

    def _first(self, key: Any, index: int | None) -> None:
        if key is None:
            raise null_key_error(key, index)
        if _has_nan(key):
            raise KeySelectionError(
                "a NaN key: Java's Double.equals takes every NaN for one key, but NaN != NaN "
                "in Python and winviz keys state by Python equality, so every NaN record "
                "would be a key of its own",
                index=index,
                field="key",
                value=key,
                expected="a key without NaN",
            )
        try:
            java_hash_code(key)
        except InputError as exc:  # its message without its own "value ...: " prefix
            text = str(exc).removeprefix(f"value {exc.value!r}: ")
            if exc.value is not key:
                text = f"its field {exc.value!r}: {text}"
            raise KeySelectionError(text, index=index, field="key", value=key) from None
        # the signature only where another Java key could be equal (1 / True / 1.0, 0.0 / -0.0)
        self._known[key] = (_signature(key) if _ambiguous(key) else None, key)


def _bit_mix(x: int) -> int:
    x &= _M32
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & _M32
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & _M32
    x ^= x >> 16
    return x


def murmur_hash(code: int) -> int:
    """Flink's ``MathUtils.murmurHash(int)``: a non-negative int."""
    c = (code * 0xCC9E2D51) & _M32
    c = _rotl32(c, 15)
    c = (c * 0x1B873593) & _M32
    c = _rotl32(c, 13)
    c = (c * 5 + 0xE6546B64) & _M32
    c ^= 4
    c = _int32(_bit_mix(c))
    if c >= 0:
        return c
    return -c if c != -(2**31) else 0


def compute_default_max_parallelism(parallelism: int) -> int:
    """``KeyGroupRangeAssignment.computeDefaultMaxParallelism``: 1.5 × parallelism rounded up
    to a power of two, at least 128 and at most 32768."""
    _check_parallelism(parallelism)
    target = parallelism + parallelism // 2
    power = 1
    while power < target:
        power <<= 1
    return min(max(power, DEFAULT_LOWER_BOUND_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)


def _check_parallelism(parallelism: int) -> None:
    if not 0 < parallelism <= UPPER_BOUND_MAX_PARALLELISM:
        raise InputError(
            "Operator parallelism not within bounds",
            field="parallelism",
            value=parallelism,
            expected=f"1..{UPPER_BOUND_MAX_PARALLELISM}",
        )


def assign_to_key_group(key: Any, max_parallelism: int) -> int:
    """``KeyGroupRangeAssignment.assignToKeyGroup``: ``murmur(hashCode) % max_parallelism``."""
    if key is None:
        raise InputError("Assigned key must not be null!", field="key", value=None)
    _check_parallelism(max_parallelism)
    return murmur_hash(java_hash_code(key)) % max_parallelism


def operator_index_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    """``computeOperatorIndexForKeyGroup``: the subtask that owns a key group."""
    return key_group * parallelism // max_parallelism


def assign_key_to_subtask(key: Any, parallelism: int, max_parallelism: int | None = None) -> int:
    """The subtask index that processes ``key`` (``assignKeyToParallelOperator``)."""
    _check_parallelism(parallelism)
    mp = (
        compute_default_max_parallelism(parallelism) if max_parallelism is None else max_parallelism
    )
    _check_parallelism(mp)
    if mp < parallelism:
        raise InputError("max parallelism must be >= parallelism", value=mp)
    return operator_index_for_key_group(mp, parallelism, assign_to_key_group(key, mp))
