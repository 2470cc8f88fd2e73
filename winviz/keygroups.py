"""Key → key group → subtask, exactly as Flink's ``KeyGroupRangeAssignment``: the key's Java
``hashCode`` (``String``, ``Integer`` / ``Long``, ``Boolean``, ``Double`` by ``doubleToLongBits``,
``TupleN`` with a None field → 0), murmur-hashed modulo ``max_parallelism``; each subtask owns a
contiguous range of key groups.

``KeyRule`` refuses None, unhashable keys and types without a Java ``hashCode``, and keeps apart
what Java's ``equals`` does but Python's ``==`` does not (``1`` / ``True``, ``2`` / ``2.0``,
``0.0`` / ``-0.0``): state and timers are keyed by the *internal key*, the key itself when it is
a str, int or tuple of str, int and None, else a ``JavaKey``. Users see their own key
(``user_key``)."""

from __future__ import annotations

import numbers
import struct
from typing import Any

from winviz.errors import ArgumentTypeError, InputError, KeySelectionError

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
    if isinstance(key, float):  # Double.hashCode: (int) (bits ^ (bits >>> 32))
        bits = _double_bits(key)
        return _int32(bits ^ (bits >> 32))
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


def null_key_error(value: Any, index: int | None) -> KeySelectionError:
    """Flink's "Assigned key must not be null!" for the record ``value``."""
    return KeySelectionError(
        "Assigned key must not be null! (the key selector returned None)",
        index=index,
        field="key",
        value=value,
        expected="a key that is not None",
    )


class JavaKey(tuple):
    """A key whose Java identity Python's ``==`` would lose (a bool, a float, or a tuple with one):
    the tuple of its type and value per field (a Double by its bits), compared and hashed as a
    tuple. ``value`` is the user's key; ``repr`` shows it."""

    value: Any

    def __new__(cls, identity: tuple, value: Any) -> JavaKey:
        self = super().__new__(cls, identity)
        self.value = value
        return self

    def __getnewargs__(self) -> tuple[Any, ...]:  # (copies and checkpoints)
        return (tuple(self), self.value)

    def __repr__(self) -> str:
        return repr(self.value)


def user_key(key: Any) -> Any:
    """The user's key of an internal key (``JavaKey.value``; any other key is itself)."""
    return key.value if key.__class__ is JavaKey else key


def _double_bits(x: float) -> int:
    """``Double.doubleToLongBits``: every NaN is the canonical NaN."""
    return _CANONICAL_NAN_BITS if x != x else struct.unpack(">Q", struct.pack(">d", x))[0]


def _identity(x: Any) -> Any:
    """A key field's Java identity: its type with its value (a Double: its bits). The type
    objects cannot be key values themselves, so no identity equals another key's."""
    cls = x.__class__
    if cls is float:
        return (float, _double_bits(x))
    if cls is tuple:
        return (tuple, tuple(map(_identity, x)))
    return x if x is None else (cls, x)


def _plain(key: tuple) -> bool:
    """Whether Python's equality is Java's for this tuple and Java can take it: every field
    a str, None or an int in Java's long range (nested tuples likewise)."""
    for f in key:
        cls = f.__class__
        if cls is str or f is None:
            continue
        if cls is int:
            if not -(2**63) <= f < 2**63:
                return False
        elif cls is not tuple or not _plain(f):
            return False
    return True


class KeyRule:
    """The keys of one keyed operator (all its subtasks), by one rule: see the module
    docstring. ``internal_key(key, index)`` is called for every key that is not a str."""

    def __init__(self, *, window_all: bool = False) -> None:
        self.window_all = window_all
        """``window_all``: every record has the key None (Flink keys them by the byte 0)."""
        self._doubles: dict[float, JavaKey] = {}
        """The internal keys of the float keys met (but zeros and NaN), made once each."""

    def internal_key(self, key: Any, index: int | None = None) -> Any:
        """The key the engine keeps state and timers by (see the module docstring); refuses a
        key Flink could not take, naming the record ``index``."""
        cls = key.__class__
        if cls is int:
            if -(2**63) <= key < 2**63:
                return key
        elif cls is str:
            return key
        elif cls is bool:
            return _TRUE if key else _FALSE
        elif cls is float:
            if key and key == key:  # not a zero, not NaN: here == is Double.equals
                internal = self._doubles.get(key)
                if internal is None:
                    internal = self._doubles[key] = JavaKey((float, _double_bits(key)), key)
                return internal
            return JavaKey((float, _double_bits(key)), key)
        elif cls is tuple:
            if _plain(key):
                return key
            try:
                java_hash_code(key)
            except InputError:
                pass  # refused below, with the reason
            else:
                return JavaKey(_identity(key), key)
        elif key is None and self.window_all:
            return None
        raise self._refusal(key, index)

    @staticmethod
    def _refusal(key: Any, index: int | None) -> KeySelectionError:
        if key is None:
            return null_key_error(key, index)
        try:
            hash(key)
        except TypeError:
            return KeySelectionError(
                f"a key must be hashable; {type(key).__name__} is not (Flink needs hashCode "
                "and equals)",
                index=index,
                field="key",
                value=key,
                expected="a str, int, bool, float or a tuple of those (e.g. tuple(the list))",
            )
        try:
            java_hash_code(key)
        except InputError as exc:  # its message without its own "value ...: " prefix
            text = str(exc).removeprefix(f"value {exc.value!r}: ")
            if exc.value is not key:
                text = f"its field {exc.value!r}: {text}"
            return KeySelectionError(text, index=index, field="key", value=key)
        raise AssertionError(f"key {key!r} is valid")  # pragma: no cover - callers refuse


_TRUE = JavaKey((bool, True), True)
_FALSE = JavaKey((bool, False), False)


def murmur_hash(code: int) -> int:
    """Flink's ``MathUtils.murmurHash(int)`` of a key's Java ``hashCode`` (a non-negative int)."""
    if isinstance(code, bool) or not isinstance(code, numbers.Integral):
        raise ArgumentTypeError(
            f"murmur_hash() takes a key's Java hashCode, not {type(code).__name__}",
            field="code",
            value=code,
            expected=f"an int, e.g. java_hash_code({code!r})",
        )
    return _murmur(int(code))


def _murmur(code: int) -> int:
    c = (code * 0xCC9E2D51) & _M32
    c = _rotl32(c, 15)
    c = (c * 0x1B873593) & _M32
    c = _rotl32(c, 13)
    c = (c * 5 + 0xE6546B64) & _M32
    c ^= 4  # then fmix32
    c ^= c >> 16
    c = (c * 0x85EBCA6B) & _M32
    c ^= c >> 13
    c = (c * 0xC2B2AE35) & _M32
    c = _int32(c ^ (c >> 16))
    if c >= 0:
        return c
    return -c if c != -(2**31) else 0


def compute_default_max_parallelism(parallelism: int) -> int:
    """``KeyGroupRangeAssignment.computeDefaultMaxParallelism``: 1.5 × parallelism rounded up
    to a power of two, at least 128 and at most 32768."""
    check_parallelism(parallelism)
    target = parallelism + parallelism // 2
    power = 1
    while power < target:
        power <<= 1
    return min(max(power, DEFAULT_LOWER_BOUND_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)


def _one_to_upper_bound(value: Any, field: str, noun: str, too_low: str, too_high: str) -> int:
    """``value`` when it is an int in 1..32768, else ``ArgumentTypeError`` naming the ``noun``
    (another type) or ``InputError`` (out of range)."""
    upper = UPPER_BOUND_MAX_PARALLELISM
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(
            f"{noun} must be an int, not {type(value).__name__}",
            field=field,
            value=value,
            expected=f"an int in 1..{upper}",
        )
    if not 1 <= value <= upper:
        message = too_low if value < 1 else too_high
        raise InputError(message, field=field, value=value, expected=f"1..{upper}")
    return value


def check_parallelism(parallelism: Any) -> int:
    """A parallelism in 1..32768 (Flink: at least 1, at most the largest max parallelism)."""
    message = (
        "The parallelism of an operator must be at least 1 and at most the largest maximum "
        "parallelism"
    )
    return _one_to_upper_bound(parallelism, "parallelism", "a parallelism", message, message)


def check_max_parallelism(max_parallelism: Any) -> int:
    """A number of key groups in 1..32768 (Flink's ``validateMaxParallelism``)."""
    return _one_to_upper_bound(
        max_parallelism,
        "max_parallelism",
        "a maximum parallelism",
        "The maximum parallelism must be greater than 0.",
        f"Maximum parallelism must be between 1 and {UPPER_BOUND_MAX_PARALLELISM}",
    )


def check_fits(parallelism: int, max_parallelism: int, of: str = "") -> None:
    """``StreamingJobGraphGenerator``'s check: a parallelism no higher than the maximum
    parallelism (the key groups); ``of`` names the operator (" of operator 'map'")."""
    if parallelism > max_parallelism:
        raise InputError(
            f"The parallelism ({parallelism}){of} is higher than its maximum parallelism "
            f"({max_parallelism}). Please lower the parallelism or increase the maximum "
            "parallelism.",
            field="parallelism",
            value=parallelism,
            expected=f"<= {max_parallelism}",
        )


def assign_to_key_group(key: Any, max_parallelism: int) -> int:
    """``KeyGroupRangeAssignment.assignToKeyGroup``: ``murmur(hashCode) % max_parallelism``."""
    if key is None:
        raise InputError("Assigned key must not be null!", field="key", value=None)
    check_max_parallelism(max_parallelism)
    return _murmur(java_hash_code(key)) % max_parallelism


def operator_index_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    """``computeOperatorIndexForKeyGroup``: the subtask that owns a key group."""
    return key_group * parallelism // max_parallelism


def assign_key_to_subtask(key: Any, parallelism: int, max_parallelism: int | None = None) -> int:
    """The subtask index that processes ``key`` (``assignKeyToParallelOperator``)."""
    check_parallelism(parallelism)
    mp = (
        compute_default_max_parallelism(parallelism) if max_parallelism is None else max_parallelism
    )
    check_fits(parallelism, check_max_parallelism(mp))
    return operator_index_for_key_group(mp, parallelism, assign_to_key_group(key, mp))
