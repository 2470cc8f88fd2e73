"""``winviz.copies``: a record no user function can change is handed over as it is — frozen
dataclasses and namedtuples whose values are all immutable included — and every other record
is copied, so a user function that changes its input changes nothing upstream or in a
sibling branch (Flink's default, object reuse disabled: ``CopyingChainingOutput``)."""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pytest

import winviz as wv
from winviz.copies import all_immutable, copy_record, is_immutable, kinds_of


@dataclass(frozen=True)
class Point:
    x: int
    y: int


@dataclass(frozen=True)
class Labelled:
    name: str
    at: Point
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Slotted:
    x: int
    label: str


@dataclass(frozen=True)
class Basket:
    user: str
    items: list[str] = field(default_factory=list)


@dataclass
class Counter:
    user: str
    n: int


class Pair(NamedTuple):
    a: int
    b: Any


class LoosePoint(Point):
    """A subclass of a frozen dataclass that is not itself decorated: may set attributes."""

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


@dataclass(frozen=True)
class OwnCopy:
    """Takes over copying: never shared."""

    x: int

    def __deepcopy__(self, memo: dict[int, Any]) -> OwnCopy:
        return OwnCopy(self.x + 1)


@pytest.mark.parametrize(
    "value",
    [
        Point(1, 2),
        Labelled("a", Point(1, 2), ("t",)),
        Slotted(3, "s"),
        Pair(1, "x"),
        Pair(1, Point(0, 0)),
    ],
    ids=repr,
)
def test_an_immutable_record_is_shared(value: Any) -> None:
    assert is_immutable(value)
    assert copy_record(value) is value
    keyed = (value, 1)
    assert copy_record(keyed) is keyed
    assert all_immutable([value, value, 1, ("a", value)])


@pytest.mark.parametrize(
    "value",
    [
        Basket("u", ["x"]),
        Labelled("a", Point(1, 2), ["t"]),  # type: ignore[arg-type]  (a list, at run time)
        Counter("u", 1),
        Pair(1, [2]),
        LoosePoint(1, 2),
        OwnCopy(1),
    ],
    ids=repr,
)
def test_a_record_that_can_change_is_copied(value: Any) -> None:
    assert not is_immutable(value)
    assert not all_immutable([Point(1, 2), value])
    if isinstance(value, OwnCopy):  # its own __deepcopy__ decides what the copy is
        assert copy_record(value) == OwnCopy(2)
        return
    copied = copy_record(value)
    assert copied == value and copied is not value
    assert copied == copy.deepcopy(value)


def test_a_frozen_record_holding_a_list_gets_its_own_list() -> None:
    basket = Basket("u", ["x"])
    copied = copy_record(basket)
    copied.items.append("y")
    assert basket.items == ["x"]


def test_the_decision_is_per_instance_for_a_shared_type() -> None:
    """The type is looked at once; the values of each instance still decide."""
    assert copy_record(Pair(1, 2)) == Pair(1, 2)
    shared, holding = Pair(1, 2), Pair(1, [2])
    assert copy_record(shared) is shared
    assert copy_record(holding) is not holding and copy_record(holding).b is not holding.b


def _branches(data: list[Any], change: Any, read: Any) -> tuple[list[Any], list[Any]]:
    """The source's records through two sibling maps: ``change`` (which changes its input
    in place and returns what it read) and ``read``; the outputs of each."""
    env = wv.StreamExecutionEnvironment()
    source = env.from_collection(data)
    source.map(change).sink_to("changed")
    source.map(read).sink_to("read")
    result = env.execute()
    return (
        [r.value for r in result.outputs["changed"]],
        [r.value for r in result.outputs["read"]],
    )


def test_a_user_function_changing_a_mutable_dataclass_changes_nothing_elsewhere() -> None:
    data = [Counter("a", 1), Counter("b", 2)]

    def change(c: Counter) -> int:
        c.n += 100
        return c.n

    changed, read = _branches(data, change, lambda c: c.n)
    assert changed == [101, 102]
    assert read == [1, 2]
    assert data == [Counter("a", 1), Counter("b", 2)]


def test_a_user_function_changing_a_frozen_records_list_changes_nothing_elsewhere() -> None:
    data = [Basket("a", ["x"]), Basket("b", [])]

    def change(b: Basket) -> int:
        b.items.append("added")
        return len(b.items)

    changed, read = _branches(data, change, lambda b: list(b.items))
    assert changed == [2, 1]
    assert read == [["x"], []]
    assert data == [Basket("a", ["x"]), Basket("b", [])]


def test_a_frozen_record_reaches_the_user_function_as_it_was() -> None:
    """The shared record is the caller's own object: nothing could change it."""
    data = [Point(1, 2), Point(3, 4)]
    changed, read = _branches(data, lambda p: p is data[0] or p is data[1], lambda p: p.x + p.y)
    assert changed == [True, True]
    assert read == [3, 7]


# all_immutable decides a level at a time (one pass over the types of each level's values);
# each case: the values, and whether they are all immutable
LEVELS = [
    ([], True),
    ([1, "a", None, 2.5, b"x", True, 1j], True),
    ([("u1", 1, 2), ("u2", 3, 4)], True),  # flat tuples: one level inside
    ([("u1", 1), ("u2", [3])], False),  # a list inside one tuple
    ([(("eu", "web"), 3), ((("deep",),), frozenset({1}))], True),  # nested tuples, a frozenset
    ([((("deep", [1]),),)], False),  # a list three tuples down
    ([1, ("a", 2), "b"], True),  # atomic values next to tuples
    ([1, ("a", {}), "b"], False),
    ([Point(1, 2), Labelled("a", Point(1, 2), ("t",)), Slotted(3, "s")], True),
    ([Labelled("a", Point(1, 2), ("t", ["x"]))], False),  # a list two records down
    ([Slotted(3, ("s", [])), Slotted(4, "t")], False),  # in a slot
    ([Pair(1, Point(0, 0)), (Pair(2, "x"), 3)], True),  # namedtuples, inside a tuple too
    ([Pair(1, Point(0, [0]))], False),
    ([Point(1, 2), Basket("u", [])], False),  # a frozen dataclass holding a list
    ([Point(1, 2), LoosePoint(1, 2)], False),  # a subclass that may set attributes
    ([OwnCopy(1)], False),  # takes over copying
    ([(Point(1, 2), Counter("u", 1))], False),  # a mutable dataclass inside a tuple
    ([frozenset({(1, "a"), 2})], True),
]


# (ids by position: a frozenset's repr changes with the hash seed, and pytest-xdist's workers
# must collect the same ids)
@pytest.mark.parametrize(("values", "expected"), LEVELS, ids=[f"L{i}" for i in range(len(LEVELS))])
def test_all_immutable_is_is_immutable_of_every_value(values: list[Any], expected: bool) -> None:
    assert all_immutable(values) is expected
    assert all_immutable(values, set(map(type, values))) is expected  # (kinds given)
    assert all(map(is_immutable, values)) is expected  # the rule it decides level by level


def test_all_immutable_says_it_as_deep_as_the_values_go() -> None:
    """A list five hundred tuples down is found; nested deeper than the recursion limit (a
    frozen record holding itself, say) it raises as ``is_immutable`` does."""
    deep: Any = [1]
    for _ in range(500):
        deep = (deep,)
    assert all_immutable([("a", 1), deep]) is False
    for _ in range(sys.getrecursionlimit()):
        deep = (deep,)
    with pytest.raises(RecursionError):
        all_immutable([deep])


@pytest.mark.parametrize(
    ("values", "width", "kinds"),
    [
        (["a", 1, 2, "b", 3, 4], 3, {str, int}),  # period 3: the first three
        (["a", 1, "b", []], 2, {str, int, list}),  # breaks the period: every type
        ([1, "a", 2], 2, {int, str}),  # length not a multiple of the width
        ([(), ()], 1, {tuple}),
        ([], 1, set()),
        ([1, 2], 0, {int}),
    ],
)
def test_kinds_of_is_the_set_of_types(values: list[Any], width: int, kinds: set[type]) -> None:
    assert kinds_of(values, width) == kinds == set(map(type, values))


def test_all_immutable_agrees_with_is_immutable_on_random_values() -> None:
    """10,000 random batches of nested values (tuples of one or several widths, frozensets,
    namedtuples, frozen dataclasses, now and then a mutable value at any depth): the
    level-by-level answer is ``is_immutable``'s."""
    import random

    rnd = random.Random(3)
    leaves = [1, "a", None, 2.5, b"x", True, 1j, Point(1, 2), Pair(1, "x"), Slotted(1, "s")]
    mutable = [[], {}, set(), bytearray(b"x"), Counter("u", 1), Basket("u")]

    def value(depth: int, width: int) -> Any:
        roll = rnd.random()
        if depth > 3 or roll < 0.4:
            return rnd.choice(leaves) if rnd.random() < 0.97 else rnd.choice(mutable)
        items = [value(depth + 1, rnd.randrange(4)) for _ in range(width)]
        if roll < 0.8:
            return tuple(items)
        if roll < 0.9:
            return frozenset(i for i in items if i.__hash__ is not None and is_immutable(i))
        return Pair(items[0] if items else 0, tuple(items))

    for _ in range(10_000):
        width = rnd.randrange(4)  # (the batch's records mostly of one shape)
        values = [value(0, width if rnd.random() < 0.8 else 2) for _ in range(rnd.randrange(1, 6))]
        assert all_immutable(values) is all(map(is_immutable, values)), values
