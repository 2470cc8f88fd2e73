"""winviz.keygroups against real Flink: every expected number below was printed by Flink.

The tables were produced by a one-off Java program (kept out of the repo) that called Flink
2.3.0's ``KeyGroupRangeAssignment``, ``MathUtils.murmurHash`` and the keys' own ``hashCode()``
from ``flink-dist-2.3.0.jar`` (the jar from ``apache-flink-libraries==2.3.0``) on JDK 17.
Python ↔ Java key mapping: ``str`` ↔ ``String``; ``int`` inside 32 bits ↔ ``Integer``; ``int``
outside 32 bits ↔ ``Long``; ``bool`` ↔ ``Boolean``; tuple of 2/3 ↔ ``Tuple2``/``Tuple3``;
``None`` inside a tuple ↔ a ``null`` field.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest

from winviz.errors import InputError, KeySelectionError
from winviz.keygroups import (
    JavaKey,
    KeyRule,
    assign_key_to_subtask,
    assign_to_key_group,
    compute_default_max_parallelism,
    java_hash_code,
    murmur_hash,
    operator_index_for_key_group,
    user_key,
)

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

# From Flink 2.3.0's KeyGroupRangeAssignment via a one-off Java program. Columns:
# key, key.hashCode(), MathUtils.murmurHash(hashCode), assignToKeyGroup(key, 128),
# assignToKeyGroup(key, 32768), assignKeyToParallelOperator(key, 128, p) for p = 1, 2, 3, 4, 7,
# assignKeyToParallelOperator(key, computeDefaultMaxParallelism(p), p) for p = 100, 200.
FLINK_KEYS: list[tuple[Any, int, int, int, int, tuple[int, ...], tuple[int, int]]] = [
    # String
    ("", 0, 593689054, 94, 31198, (0, 1, 2, 2, 5), (86, 186)),
    ("a", 97, 1455541201, 81, 19409, (0, 1, 1, 2, 4), (81, 181)),
    ("hello", 99162322, 1715862179, 35, 31395, (0, 0, 0, 1, 1), (63, 63)),
    ("user-42", -147182656, 1600933524, 20, 20116, (0, 0, 0, 0, 1), (57, 57)),
    ("sensor_1", 1262115052, 1770583113, 73, 29769, (0, 1, 1, 2, 3), (28, 28)),
    ("Hello, World!", 1498789909, 741723222, 86, 19542, (0, 1, 2, 2, 4), (33, 33)),
    ("é", 233, 1107437598, 30, 10270, (0, 0, 0, 0, 1), (11, 11)),
    ("日本", 835047, 1762503263, 95, 10847, (0, 1, 2, 2, 5), (37, 37)),
    ("\U0001f600", 1772899, 1934073014, 54, 7350, (0, 0, 1, 1, 2), (71, 71)),  # surrogate pair
    ("a\U0001f680b", 57853662, 1037511140, 100, 10724, (0, 1, 2, 3, 5), (89, 189)),
    ("naïve café", 824164310, 1918400269, 13, 30477, (0, 0, 0, 0, 0), (5, 105)),
    # Integer
    (0, 0, 593689054, 94, 31198, (0, 1, 2, 2, 5), (86, 186)),
    (1, 1, 68075478, 86, 16342, (0, 1, 2, 2, 4), (83, 183)),
    (-1, -1, 1982413648, 80, 15184, (0, 1, 1, 2, 4), (31, 131)),
    (42, 42, 1134849565, 29, 28189, (0, 0, 0, 0, 1), (11, 11)),
    (1000, 1000, 3506311, 7, 135, (0, 0, 0, 0, 0), (52, 52)),
    (INT_MIN, INT_MIN, 1718298732, 108, 10348, (0, 1, 2, 3, 5), (42, 42)),
    (INT_MAX, INT_MAX, 1653689534, 62, 19646, (0, 0, 1, 1, 3), (74, 74)),
    # Long (outside the int range)
    (2147483648, INT_MIN, 1718298732, 108, 10348, (0, 1, 2, 3, 5), (42, 42)),
    (-2147483649, INT_MIN, 1718298732, 108, 10348, (0, 1, 2, 3, 5), (42, 42)),
    (4294967296, 1, 68075478, 86, 16342, (0, 1, 2, 2, 4), (83, 183)),
    (1566640304152, -1022758540, 1163117036, 108, 16876, (0, 1, 2, 3, 5), (92, 192)),
    (-1566640304152, -1022758533, 527639920, 112, 9584, (0, 1, 2, 3, 6), (43, 143)),
    (LONG_MAX, INT_MIN, 1718298732, 108, 10348, (0, 1, 2, 3, 5), (42, 42)),
    (LONG_MIN, INT_MIN, 1718298732, 108, 10348, (0, 1, 2, 3, 5), (42, 42)),
    # Boolean
    (True, 1231, 1090530765, 77, 11725, (0, 1, 1, 2, 4), (80, 180)),
    (False, 1237, 1530821891, 3, 32003, (0, 0, 0, 0, 0), (1, 101)),
    # Tuple2 / Tuple3
    (("a", 1), 3008, 1123382429, 29, 29853, (0, 0, 0, 0, 1), (61, 61)),
    ((1, "a"), 128, 132521001, 41, 7209, (0, 0, 0, 1, 2), (16, 16)),
    (("user", 1566640304152), -911180023, 1242591414, 54, 28854, (0, 0, 1, 1, 2), (71, 71)),
    ((True, False), 39398, 1339127584, 32, 30496, (0, 0, 0, 1, 1), (12, 112)),
    (("日本", -1), 25886456, 369973610, 106, 22890, (0, 1, 2, 3, 5), (41, 141)),
    (("", 0), 0, 593689054, 94, 31198, (0, 1, 2, 2, 5), (86, 186)),
    ((("a", 1), "b"), 93346, 1407891368, 40, 14248, (0, 0, 0, 1, 2), (65, 165)),
    ((None, "a"), 97, 1455541201, 81, 19409, (0, 1, 1, 2, 4), (81, 181)),
    (("x", -1, INT_MIN), -2147368359, 238471035, 123, 18299, (0, 1, 2, 3, 6), (48, 148)),
    (("sensor_1", True, LONG_MAX), -435657987, 366751914, 42, 12458, (0, 0, 0, 1, 2), (66, 66)),
    (("\U0001f600", "é", 2147483648), -443720486, 111463662, 110, 19694, (0, 1, 2, 3, 6), (92, 92)),
]

# MathUtils.murmurHash(code), from the same Java program.
FLINK_MURMUR = [
    (0, 593689054),
    (1, 68075478),
    (-1, 1982413648),
    (2, 1085422463),
    (42, 1134849565),
    (INT_MIN, 1718298732),
    (INT_MAX, 1653689534),
    (1231, 1090530765),
    (1237, 1530821891),
    (123456789, 1088346449),
    (-123456789, 1470798557),
]

# KeyGroupRangeAssignment.computeDefaultMaxParallelism(p), from the same Java program.
FLINK_DEFAULT_MAX_PARALLELISM = [
    (1, 128),
    (2, 128),
    (3, 128),
    (4, 128),
    (10, 128),
    (85, 128),
    (86, 256),
    (100, 256),
    (128, 256),
    (1000, 2048),
    (21845, 32768),
    (21846, 32768),
    (30000, 32768),
    (32768, 32768),
]

# computeOperatorIndexForKeyGroup(maxParallelism, parallelism, keyGroup) -> subtask.
FLINK_OPERATOR_INDEX = [
    (128, 1, 0, 0),
    (128, 1, 127, 0),
    (128, 2, 63, 0),
    (128, 2, 64, 1),
    (128, 3, 42, 0),
    (128, 3, 43, 1),
    (128, 3, 85, 1),
    (128, 3, 86, 2),
    (128, 7, 127, 6),
    (32768, 10, 32767, 9),
    (32768, 32768, 32767, 32767),
    (256, 100, 255, 99),
]

KEY_IDS = [repr(row[0]) for row in FLINK_KEYS]


@pytest.mark.parametrize("key, hash_code", [row[:2] for row in FLINK_KEYS], ids=KEY_IDS)
def test_java_hash_code(key: Any, hash_code: int) -> None:
    """The key's hashCode() is the one Java computes for the mapped Java object."""
    assert java_hash_code(key) == hash_code


@pytest.mark.parametrize("key, hash_code, murmur", [row[:3] for row in FLINK_KEYS], ids=KEY_IDS)
def test_murmur_of_key_hash(key: Any, hash_code: int, murmur: int) -> None:
    """murmurHash(hashCode) matches Flink for every key's hash."""
    assert murmur_hash(java_hash_code(key)) == murmur


@pytest.mark.parametrize("code, murmur", FLINK_MURMUR)
def test_murmur_hash(code: int, murmur: int) -> None:
    """MathUtils.murmurHash on chosen codes, including Integer.MIN/MAX."""
    assert murmur_hash(code) == murmur
    assert murmur >= 0


@pytest.mark.parametrize(
    "key, kg128, kg32768", [(r[0], r[3], r[4]) for r in FLINK_KEYS], ids=KEY_IDS
)
def test_assign_to_key_group(key: Any, kg128: int, kg32768: int) -> None:
    """assignToKeyGroup with the smallest and the largest default max parallelism."""
    assert assign_to_key_group(key, 128) == kg128
    assert assign_to_key_group(key, 32768) == kg32768


@pytest.mark.parametrize("key, subtasks", [(r[0], r[5]) for r in FLINK_KEYS], ids=KEY_IDS)
def test_assign_key_to_subtask_mp128(key: Any, subtasks: tuple[int, ...]) -> None:
    """assignKeyToParallelOperator(key, 128, p) for p = 1, 2, 3, 4, 7."""
    got = tuple(assign_key_to_subtask(key, p, 128) for p in (1, 2, 3, 4, 7))
    assert got == subtasks


@pytest.mark.parametrize("key, subtasks", [(r[0], r[6]) for r in FLINK_KEYS], ids=KEY_IDS)
def test_assign_key_to_subtask_default_max_parallelism(key: Any, subtasks: tuple[int, int]) -> None:
    """Without max_parallelism the default is used (256 for p=100, 512 for p=200)."""
    got = (assign_key_to_subtask(key, 100), assign_key_to_subtask(key, 200))
    assert got == subtasks


@pytest.mark.parametrize("key", [r[0] for r in FLINK_KEYS], ids=KEY_IDS)
def test_default_max_parallelism_is_128_for_small_parallelism(key: Any) -> None:
    """For p <= 85 the default max parallelism is 128, so omitting it changes nothing."""
    for p in (1, 2, 3, 4, 7):
        assert assign_key_to_subtask(key, p) == assign_key_to_subtask(key, p, 128)


@pytest.mark.parametrize("parallelism, expected", FLINK_DEFAULT_MAX_PARALLELISM)
def test_compute_default_max_parallelism(parallelism: int, expected: int) -> None:
    """1.5 × p rounded up to a power of two, clamped to [128, 32768]."""
    assert compute_default_max_parallelism(parallelism) == expected


@pytest.mark.parametrize("max_parallelism, parallelism, key_group, expected", FLINK_OPERATOR_INDEX)
def test_operator_index_for_key_group(
    max_parallelism: int, parallelism: int, key_group: int, expected: int
) -> None:
    """computeOperatorIndexForKeyGroup: keyGroup * parallelism / maxParallelism."""
    assert operator_index_for_key_group(max_parallelism, parallelism, key_group) == expected


def test_every_subtask_owns_a_contiguous_key_group_range() -> None:
    """With 128 key groups and p=3 the ranges are [0, 42], [43, 85], [86, 127]."""
    owners = [operator_index_for_key_group(128, 3, kg) for kg in range(128)]
    assert owners == [0] * 43 + [1] * 43 + [2] * 42


def test_long_and_int_with_same_hash_share_a_key_group() -> None:
    """Long 2**32 hashes like Integer 1 (Long.hashCode folds the halves)."""
    assert java_hash_code(2**32) == java_hash_code(1) == 1
    assert assign_to_key_group(2**32, 128) == assign_to_key_group(1, 128) == 86


@pytest.mark.parametrize(
    "key, shown",
    [
        ({"a": 1}, "{'a': 1}"),
        (b"a", "b'a'"),
        (["a", 1], "['a', 1]"),
        (("a", b"x"), "b'x'"),  # inside a tuple: the offending field is named
        (2**63, "9223372036854775808"),  # does not fit Java's long
        (-(2**63) - 1, "-9223372036854775809"),
    ],
    ids=["dict", "bytes", "list", "bytes-in-tuple", "long-overflow", "long-underflow"],
)
def test_unsupported_key_raises_input_error(key: Any, shown: str) -> None:
    """A key without a Java hashCode rule is an InputError that names the value."""
    with pytest.raises(InputError) as info:
        java_hash_code(key)
    assert shown in str(info.value)
    with pytest.raises(InputError, match="value"):
        assign_to_key_group(key, 128)
    with pytest.raises(InputError):
        assign_key_to_subtask(key, 2)


def _java_double_hash_code(x: float) -> int:
    """``Double.hashCode`` straight from its Java definition: ``long bits =
    doubleToLongBits(value); return (int) (bits ^ (bits >>> 32));`` (``doubleToLongBits``
    maps every NaN to ``0x7ff8000000000000L``)."""
    bits = 0x7FF8000000000000 if x != x else struct.unpack(">q", struct.pack(">d", x))[0]
    folded = bits ^ ((bits & 0xFFFFFFFFFFFFFFFF) >> 32)  # >>> : an unsigned shift
    return struct.unpack(">i", struct.pack(">I", folded & 0xFFFFFFFF))[0]  # (int): low 32 bits


# key, Double.hashCode (1.0 → 1072693248 and 3.08 → 1245041523 as Java documents them),
# assignToKeyGroup(key, 128), assignKeyToParallelOperator(key, 128, 4)
DOUBLE_KEYS = [
    (1.0, 1072693248, 71, 2),
    (3.08, 1245041523, 30, 0),
    (1.5, 1073217536, 65, 2),
    (-2.5, -1073479680, 60, 1),  # bits 0xc004000000000000
    (0.0, 0, 94, 2),  # like Integer 0
    (-0.0, INT_MIN, 108, 3),  # sign bit only: like Integer.MIN_VALUE
    (float("inf"), 2146435072, 122, 3),
    (1e300, -164130400, 111, 3),
    (5e-324, 1, 86, 2),  # the smallest subnormal: bits 1, like Integer 1
]


@pytest.mark.parametrize(("key", "code", "group", "subtask"), DOUBLE_KEYS)
def test_double_keys_hash_as_java_doubles(key: float, code: int, group: int, subtask: int) -> None:
    """A float key is a Java Double: Double.hashCode, then murmur and key groups as any key
    (so it shares its key group with the Integer of the same hashCode, checked against Flink
    above)."""
    assert java_hash_code(key) == _java_double_hash_code(key) == code
    assert assign_to_key_group(key, 128) == group == murmur_hash(code) % 128
    assert assign_to_key_group(key, 128) == assign_to_key_group(code, 128)
    assert assign_key_to_subtask(key, 4, 128) == subtask
    # inside a tuple: TupleN.hashCode over the fields' hashCodes
    assert java_hash_code(("a", key)) == ((31 * 97 + code + 2**31) % 2**32) - 2**31


def test_every_nan_hashes_as_the_canonical_nan() -> None:
    """doubleToLongBits maps every NaN to 0x7ff8000000000000L: hashCode 2146959360 (and
    Double.equals takes every NaN for one key: see test_the_key_rule_keeps_java_keys_apart)."""
    other_nan = struct.unpack(">d", bytes.fromhex("7ff0000000000001"))[0]
    assert other_nan != other_nan
    assert java_hash_code(float("nan")) == java_hash_code(other_nan) == 2146959360
    assert _java_double_hash_code(other_nan) == 2146959360


def test_none_key_rejected_like_flink() -> None:
    """Flink: assignToKeyGroup(null, 128) throws NPE "Assigned key must not be null!".

    A null *field* of a tuple is fine (hash 0, see FLINK_KEYS), a null key is not.
    """
    with pytest.raises(InputError):
        assign_to_key_group(None, 128)
    with pytest.raises(InputError):
        assign_key_to_subtask(None, 2, 128)


@pytest.mark.parametrize("parallelism", [0, -1, 32769])
def test_default_max_parallelism_rejects_out_of_bounds(parallelism: int) -> None:
    """Flink: IllegalArgumentException "Operator parallelism not within bounds: <p>"."""
    with pytest.raises(InputError):
        compute_default_max_parallelism(parallelism)


@pytest.mark.parametrize("parallelism", [0, -3])
def test_assign_key_to_subtask_rejects_bad_parallelism(parallelism: int) -> None:
    """Parallelism below 1 is an InputError naming the value."""
    with pytest.raises(InputError, match=f"value {parallelism}"):
        assign_key_to_subtask("a", parallelism, 128)


def test_assign_key_to_subtask_rejects_max_parallelism_below_parallelism() -> None:
    """max_parallelism < parallelism would leave subtasks without key groups: the runtime's
    rule (``StreamingJobGraphGenerator``'s message), naming both."""
    with pytest.raises(InputError) as info:
        assign_key_to_subtask("a", 4, 2)
    assert str(info.value) == (
        "field 'parallelism', value 4: The parallelism (4) is higher than its maximum "
        "parallelism (2). Please lower the parallelism or increase the maximum parallelism. "
        "(expected <= 2)"
    )


def test_assign_key_to_subtask_rejects_zero_max_parallelism() -> None:
    """An explicit max_parallelism of 0 is invalid in Flink (assignToKeyGroup divides by it);
    it must not silently fall back to the default."""
    with pytest.raises(InputError):
        assign_key_to_subtask("a", 2, 0)


# -- the key rule: Java's equals at every parallelism --------------------------------------

OTHER_NAN = struct.unpack(">d", bytes.fromhex("7ff0000000000001"))[0]

# keys, and which of them are one Java key (same group number)
JAVA_KEYS = [
    (1, 0), (True, 1), (1.0, 2), (1, 0),
    (2, 3), (2.0, 4), (2**40, 5), (float(2**40), 6),
    (0, 7), (False, 8), (0.0, 9), (-0.0, 10), (0.0, 9),
    (float("nan"), 11), (OTHER_NAN, 11),
    ("1", 12), (None, None),
    ((1, "a"), 13), ((True, "a"), 14), ((1.0, "a"), 15), ((1, "a"), 13),
    (("a", 0.0), 16), (("a", -0.0), 17), (("a", 0), 18),
    ((1, (2, True)), 19), ((1, (2, 1)), 20), ((1, None), 21),
]  # fmt: skip


def test_the_key_rule_keeps_java_keys_apart() -> None:
    """Internal keys are equal exactly when Java's ``equals`` says so (Integer 1, Boolean
    true and Double 1.0 are three keys; Double 0.0 and -0.0 two; every NaN one), and each
    gives the user's own key back."""
    rule = KeyRule(window_all=True)  # (which takes None: every record of a window_all)
    internal = [rule.internal_key(k) for k, _ in JAVA_KEYS]
    for (key, group), ikey in zip(JAVA_KEYS, internal, strict=True):
        assert user_key(ikey) is key
        for (other, other_group), other_ikey in zip(JAVA_KEYS, internal, strict=True):
            same = group == other_group
            assert (ikey == other_ikey) is same, (key, other)
            if same:
                assert hash(ikey) == hash(other_ikey)
    assert len(set(internal)) == len({g for _, g in JAVA_KEYS})


def test_internal_keys_of_str_int_and_their_tuples_are_the_keys_themselves() -> None:
    """The common case costs nothing: Python's equality is Java's there."""
    rule = KeyRule()
    for key in ("a", 7, -(2**63), 2**63 - 1, ("a", 1), ("a", (1, None)), ()):
        assert rule.internal_key(key) is key
    for key in (True, 1.5, ("a", 1.5), ("a", (1, False))):
        assert isinstance(rule.internal_key(key), JavaKey)
        assert repr(rule.internal_key(key)) == repr(key)


@pytest.mark.parametrize(
    ("key", "words"),
    [
        (None, "Assigned key must not be null!"),
        ([1], "a key must be hashable; list is not"),
        (("a", [1]), "a key must be hashable; tuple is not"),
        (b"a", "no Java hashCode rule for key type bytes"),
        (("a", b"x"), "its field b'x': no Java hashCode rule for key type bytes"),
        (2**63, "an int key must fit Java's long"),
        (("a", 2**63), "its field 9223372036854775808: an int key must fit Java's long"),
        (int, "no Java hashCode rule for key type type"),
    ],
)
def test_the_key_rule_refuses_what_flink_cannot_take(key: Any, words: str) -> None:
    with pytest.raises(KeySelectionError) as info:
        KeyRule().internal_key(key, 4)
    assert words in str(info.value)
    assert "record 4" in str(info.value) and info.value.value is key


def test_the_key_by_partitioner_routes_1_and_true_apart_whatever_came_first() -> None:
    """Its cache of key groups never hands ``True`` the group of ``1`` (or -0.0 that of
    0.0), with or without the internal key (the conformance runner routes without one)."""
    from winviz.partitioners import KeyGroupStreamPartitioner

    rule = KeyRule()
    keys = [1, True, 1.0, 0.0, -0.0, (1, "a"), (True, "a"), "a"]
    for with_internal in (False, True):
        p = KeyGroupStreamPartitioner(lambda k: k, 3, 128)
        for key in keys + keys[::-1]:
            internal = rule.internal_key(key) if with_internal else None
            group, channel = p.route(key, internal)
            assert group == assign_to_key_group(key, 128)
            assert channel == assign_key_to_subtask(key, 3, 128)
    assert assign_to_key_group(True, 128) != assign_to_key_group(1, 128)
    assert assign_to_key_group(-0.0, 128) != assign_to_key_group(0.0, 128)
