"""Functions as Flink ships them (``winviz.graph.OperatorSpec.shipped``): Flink serializes the
job's functions and every task deserializes its own copy, so each subtask — in each
execution, after each restart — starts from the function objects as the job was built; the
caller's objects never change. A function that cannot be copied is refused, naming it."""

from __future__ import annotations

import threading

import pytest
from jobs import bounded

import winviz as wv
from winviz.errors import FunctionNotSerializableError


class Numbering:
    """A stateful map function: numbers the records it sees (a field, not Flink state)."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, value):
        self.seen += 1
        return (value, self.seen)


def numbered(function: Numbering, parallelism: int = 2) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment(trace=False)
    env.from_collection(list(range(6))).rebalance().map(function).set_parallelism(
        parallelism
    ).sink_to("out")
    return env


def test_each_subtask_and_each_run_numbers_from_one() -> None:
    """Six records round robin over two subtasks: each subtask numbers its three records
    1…3; a second ``execute()`` starts again at 1; the caller's object saw nothing."""
    function = Numbering()
    env = numbered(function)
    for _ in range(2):
        result = env.execute()
        assert [r.value for r in result.outputs["out"]] == [
            (0, 1),
            (1, 1),
            (2, 2),
            (3, 2),
            (4, 3),
            (5, 3),
        ]
    assert function.seen == 0


def test_a_restart_gets_a_fresh_copy_of_the_functions() -> None:
    """The function's field is no Flink state: the checkpoint does not hold it, and the
    restarted task deserializes the function again, so the replay numbers from 1."""
    function = Numbering()
    env = numbered(function, parallelism=1).enable_checkpointing(at_records=[2])
    result = env.execute(fail_at=3)
    assert [r.value for r in result.outputs["out"]] == [
        (0, 1),
        (1, 2),  # in the sink at the checkpoint
        (2, 1),  # after the restart: a new copy of the function
        (3, 2),
        (4, 3),
        (5, 4),
    ]
    assert function.seen == 0


class Remembering(wv.ProcessWindowFunction):
    """Remembers every window it fired in a field and emits how many it had seen."""

    def __init__(self) -> None:
        self.windows: list = []

    def process(self, key, ctx, elements, out):
        self.windows.append((key, ctx.window()))
        out.collect((key, len(self.windows)))


class CountingTrigger(wv.EventTimeTrigger):
    """The event-time trigger, counting its on_element calls in a field."""

    def __init__(self) -> None:
        self.calls = 0

    def on_element(self, element, timestamp, window, ctx):
        self.calls += 1
        return super().on_element(element, timestamp, window, ctx)


def windowed(function, trigger, parallelism: int) -> wv.JobExecutionResult:
    env = wv.StreamExecutionEnvironment(trace=False).set_parallelism(parallelism)
    (
        env.from_collection([("a", 100), ("b", 200), ("a", 1_100), ("b", 1_200)])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1_000))
        .trigger(trigger)
        .process(function)
        .sink_to("out")
    )
    return env.execute()


def test_window_functions_and_triggers_are_copies_per_subtask() -> None:
    """Keys "a" and "b" go to different subtasks of the window (key groups): each subtask's
    ProcessWindowFunction counts only its own windows; with one subtask it counts all four.
    The caller's function and trigger are untouched."""
    function, trigger = Remembering(), CountingTrigger()
    two = windowed(function, trigger, 2)
    assert sorted(r.value for r in two.outputs["out"]) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    one = windowed(function, trigger, 1)
    assert sorted(r.value for r in one.outputs["out"]) == [("a", 1), ("a", 3), ("b", 2), ("b", 4)]
    assert (function.windows, trigger.calls) == ([], 0)


class Locked:
    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, value):
        return value


class Streaming(wv.KeyedProcessFunction):
    def __init__(self) -> None:
        self.numbers = (n for n in range(3))

    def process_element(self, value, ctx, out):
        out.collect(next(self.numbers))


def test_a_function_that_cannot_be_copied_is_refused_naming_it() -> None:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).map(Locked()).sink_to("out")
    with pytest.raises(wv.FunctionNotSerializableError) as info:  # (public, as the other errors)
        env.execute()
    assert str(info.value) == (
        "the function of operator 'map' (a Locked) cannot be copied for its subtasks: "
        "TypeError: cannot pickle '_thread.lock' object. Flink ships every subtask its own "
        "deserialized copy of the job's functions and refuses this one "
        "(InvalidProgramException: the implementation of Locked is not serializable); keep "
        "plain data in function objects and create locks, files or generators inside the "
        "function's methods"
    )

    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).key_by(lambda v: v).process(Streaming()).sink_to("out")
    with pytest.raises(FunctionNotSerializableError, match=r"^the function of operator "
                       r"'process' \(a Streaming\) cannot be copied for its subtasks: "
                       r"TypeError: cannot pickle 'generator' object"):  # fmt: skip
        env.execute()
