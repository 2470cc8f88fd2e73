"""``KeyedStateBackend``: state by (name, namespace) then key; empty slots do not stay."""

from __future__ import annotations

import pytest
from jobs import bounded, keyed_window

import winviz as wv
from winviz.runtime import JobRuntime
from winviz.state import (
    AggregatingStateDescriptor,
    KeyedStateBackend,
    ListStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
    add_to_contents,
)


def test_values_are_kept_per_state_key_and_namespace_and_empty_slots_go() -> None:
    state = KeyedStateBackend()
    total = ReducingStateDescriptor("sum", lambda a, b: a + b)
    state.add(total, "a", "w1", 1)
    state.add(total, "a", "w1", 2)
    state.add(total, "b", "w1", 5)
    state.add(ListStateDescriptor("list"), "a", "w2", "x")
    state.add(ListStateDescriptor("list"), "a", "w2", "y")
    state.add(AggregatingStateDescriptor("agg", wv.SumAggregate(lambda v: v)), "c", "w1", 4)
    assert state.get("sum", "a", "w1") == 3 and state.get("sum", "b", "w1") == 5
    assert state.get("sum", "a", "w2") is None and state.get("nothing", "a", "w1") is None
    assert state.count() == 4 and state.count(key="a") == 2 and state.count(namespace="w1") == 3
    assert sorted(state.items(), key=repr) == sorted(
        [
            (("sum", "a", "w1"), 3),
            (("sum", "b", "w1"), 5),
            (("list", "a", "w2"), ["x", "y"]),
            (("agg", "c", "w1"), 4),
        ],
        key=repr,
    )
    snap = state.snapshot()
    state.clear("sum", "a", "w1")
    assert ("sum", "w1") in state.slots
    assert state.pop("sum", "b", "w1") == 5
    assert ("sum", "w1") not in state.slots  # the last key went: the slot goes too
    state.merge_namespaces(ListStateDescriptor("list"), "a", "w3", ["w2"])
    assert state.get("list", "a", "w3") == ["x", "y"] and ("list", "w2") not in state.slots
    state.restore(snap)
    assert state.get("sum", "a", "w1") == 3 and state.get("list", "a", "w2") == ["x", "y"]
    snap[("list", "a", "w2")].append("z")  # a restore copies lists
    assert state.get("list", "a", "w2") == ["x", "y"]


def test_a_finished_window_job_leaves_no_state_behind() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        keyed_window(
            env,
            [(f"k{i % 7}", i * 13 % 500) for i in range(300)],
            50,
            bounded(20),
            lateness=10,
            arrival_interval=1,
        )
        .reduce(lambda a, b: (a[0], max(a[1], b[1])))
        .sink_to("out")
    )
    runtime = JobRuntime(env, "job")
    result = runtime.run()
    assert len(result.outputs["out"]) > 0
    window = next(op for op in runtime.order if op.name == "window")
    assert window.state.slots == {}


class _Joined(wv.AggregateFunction[str, str, str]):
    """An aggregate whose accumulator shows the order of its calls."""

    def create_accumulator(self) -> str:
        return "<"

    def add(self, value: str, accumulator: str) -> str:
        return f"{accumulator}+{value}"


def test_add_to_each_kind_of_state_folds_as_flinks_heap_states() -> None:
    """``add`` for reducing state keeps the first value as it is, then ``reduce(contents,
    value)`` (HeapReducingState); aggregating state ``add(value, create_accumulator())``, then
    ``add(value, accumulator)`` (HeapAggregatingState); list state appends (HeapListState);
    value state refuses; ``add_to_contents`` is the rule it calls."""
    state = KeyedStateBackend()
    joined = ReducingStateDescriptor("r", lambda a, b: f"({a}.{b})")
    agg = AggregatingStateDescriptor("g", _Joined())
    for value in "xyz":
        state.add(joined, "k", "w", value)
        state.add(agg, "k", "w", value)
        state.add(ListStateDescriptor("l"), "k", "w", value)
    assert state.get("r", "k", "w") == "((x.y).z)"
    assert state.get("g", "k", "w") == "<+x+y+z"
    assert state.get("l", "k", "w") == ["x", "y", "z"]
    assert add_to_contents(joined, None, "x") == "x"
    assert add_to_contents(agg, "<+x", "y") == "<+x+y"
    with pytest.raises(TypeError, match="state 'v' does not support add"):
        state.add(ValueStateDescriptor("v"), "k", "w", 1)
    assert ("v", "w") not in state.slots
