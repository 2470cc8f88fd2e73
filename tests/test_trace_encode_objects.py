"""``encode`` of many values that are a few objects repeated (the keys a job hands on) gives
each value the code of its type and value, numbered in order of first appearance: ``1``,
``True`` and ``1.0`` stay three keys, as Java tells them apart; equal values that are
distinct objects are one key (nothing depends on which object the engine shared)."""

from __future__ import annotations

import enum

import numpy as np
import pytest

from winviz.trace.coded import CodedColumn, encode, identity


class Color(enum.StrEnum):
    RED = "red"


def repeated(distinct: list[object], n: int = 20000) -> list[object]:
    """``n`` values, each one of these objects (in a scrambled order)."""
    return [distinct[(i * 7919) % len(distinct)] for i in range(n)]


def expected(values: list[object]) -> tuple[list[int], list[object]]:
    """Codes and values numbered by ``identity`` (type and value) one value at a time."""
    code_of: dict[object, int] = {}
    codes = [code_of.setdefault(identity(v), len(code_of)) for v in values]
    return codes, list(code_of)


def typed(coded: CodedColumn) -> tuple[list[int], list[object]]:
    return coded.codes.tolist(), [identity(v) for v in coded.values]


MIXES = {
    "strings": ["k00", "k01", "k02", "k03"],
    "numbers": [1, True, 1.0, "1", 0.0, -0.0, float("nan"), 2**70, None],
    "tuples": [(1, "a"), (True, "a"), (1.0, "a"), ("x", 2)],
    "a str and a StrEnum equal to it": ["red", Color.RED, "blue"],
}


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_few_objects_repeated_encode_by_type_and_value(mix: str) -> None:
    values = repeated(MIXES[mix])
    coded = encode(values)
    assert coded.codes.dtype == np.int32
    assert typed(coded) == expected(values)
    # each key's value is the first record's object
    firsts = [values[coded.codes.tolist().index(c)] for c in range(len(coded.values))]
    assert all(a is b for a, b in zip(coded.values, firsts, strict=True))


def test_unhashable_values_are_keys_by_their_repr() -> None:
    values = repeated([[1], [1], {"a": 1}, "a"])  # (two equal lists: one key)
    coded = encode(values)
    assert [repr(v) for v in coded.values] == ["[1]", "'a'", "{'a': 1}"]
    assert coded.codes.tolist()[:4] == [0, 1, 2, 0]
    assert typed(coded) == expected(values)


def test_equal_values_that_are_distinct_objects_are_one_key() -> None:
    made = [f"k{i % 20:02d}" for i in range(20000)]  # (a new object per record)
    assert typed(encode(made)) == expected(made)
    assert len(encode(made).values) == 20
    copies = ["".join(["k", "1"]) for _ in range(4)] + ["k1", 1, True]
    values = repeated(copies)
    assert len({id(v) for v in values}) == 7
    coded = encode(values)
    assert sorted(map(repr, coded.values)) == ["'k1'", "1", "True"]
    assert typed(coded) == expected(values)
