"""``encode`` of many values that are a few objects repeated (the keys a job hands on) finds
the distinct objects by identity and encodes only them (``_encode_by_object``, issues 11/12):
the same codes and values, type by type, as ``encode``'s dictionary of every value — ``1``,
``True`` and ``1.0`` stay three keys, as Java tells them apart."""

from __future__ import annotations

import enum
import sys

import numpy as np
import pandas  # noqa: F401  (loaded: ``_encode_by_object`` takes pandas' hash table then)
import pytest

from winviz.trace import columns
from winviz.trace.columns import _encode_by_object, encode, identity


class Color(enum.StrEnum):
    RED = "red"


def repeated(distinct: list[object], n: int = 20000) -> list[object]:
    """``n`` values, each one of these objects (in a scrambled order)."""
    return [distinct[(i * 7919) % len(distinct)] for i in range(n)]


def dictionary_way(values: list[object], monkeypatch: pytest.MonkeyPatch) -> columns.CodedColumn:
    with monkeypatch.context() as m:
        m.setattr(columns, "_BY_OBJECT_MIN", len(values) + 1)
        return encode(values)


def typed(coded: columns.CodedColumn) -> tuple[list[int], list[object]]:
    return coded.codes.tolist(), [identity(v) for v in coded.values]


MIXES = {
    "strings": ["k00", "k01", "k02", "k03"],
    "numbers": [1, True, 1.0, "1", 0.0, -0.0, float("nan"), 2**70, None],
    "tuples": [(1, "a"), (True, "a"), (1.0, "a"), ("x", 2)],
    "a str and a StrEnum equal to it": ["red", Color.RED, "blue"],
    "unhashable": [[1], [1], {"a": 1}, "a"],  # (two equal lists: one key, by repr, as encode)
}


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_few_objects_repeated_encode_as_every_value_would(
    mix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = repeated(MIXES[mix])
    by_object = _encode_by_object(values)
    assert by_object is not None  # (this way taken)
    assert by_object.codes.dtype == np.int32
    want = dictionary_way(values, monkeypatch)
    assert typed(by_object) == typed(want)
    assert typed(encode(values)) == typed(want)
    # the first appearance of each key: its object, as the dictionary way keeps it
    assert all(a is b for a, b in zip(by_object.values, want.values, strict=True))


def test_equal_values_that_are_distinct_objects_are_one_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Keys made per record (``f"k{i % 20}"``): many objects, equal in twenties; a sample
    shows many distinct objects, and the dictionary way is taken; with few objects per key,
    copies of one key by value are still one key."""
    made = [f"k{i % 20:02d}" for i in range(20000)]
    assert _encode_by_object(made) is None
    assert typed(encode(made)) == typed(dictionary_way(made, monkeypatch))
    copies = ["".join(["k", "1"]) for _ in range(4)] + ["k1", 1, True]
    values = repeated(copies)
    assert len({id(v) for v in values}) == 7
    coded = encode(values)
    assert sorted(map(repr, coded.values)) == ["'k1'", "1", "True"]
    assert typed(coded) == typed(dictionary_way(values, monkeypatch))


def test_without_pandas_loaded_the_dictionary_way(monkeypatch: pytest.MonkeyPatch) -> None:
    values = repeated([1, True, "a"])
    monkeypatch.delitem(sys.modules, "pandas")
    assert _encode_by_object(values) is None
    assert typed(encode(values)) == typed(dictionary_way(values, monkeypatch))
