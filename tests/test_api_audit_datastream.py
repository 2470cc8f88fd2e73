"""The DataStream API refuses a function argument that is no function when the pipeline is
built, naming the call, the argument and what was expected — as Flink's Java API cannot take
one, and refuses null (``ReducingStateDescriptor``'s ``checkNotNull(reduceFunction)``). A
window ``reduce(None)`` ran (a window of one record never calls it) and ``aggregate(lambda)``
failed with a bare ``AttributeError`` from inside the window kernel. What the engine runs for
valid functions is unchanged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
from jobs import bounded

import winviz as wv
from winviz.errors import ArgumentTypeError


def _events() -> wv.DataStream:
    env = wv.StreamExecutionEnvironment()
    return env.from_collection([("a", 1), ("b", 2)]).assign_timestamps_and_watermarks(bounded(0))


def _windowed() -> wv.WindowedStream:
    return _events().key_by(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(5))


CASES: dict[str, tuple[Callable[[], Any], str, str]] = {
    "map": (lambda: _events().map(5), "fn", "map() takes a function; int is not callable"),
    "filter": (lambda: _events().filter(None), "fn", "filter() takes a function"),
    "flat_map": (lambda: _events().flat_map("x"), "fn", "flat_map() takes a function"),
    "key_by": (lambda: _events().key_by(5), "key_selector", "key_by() takes a function"),
    "rolling_reduce": (
        lambda: _events().key_by(lambda e: e[0]).reduce(None),
        "fn",
        "reduce() takes a function; None is no function (Flink's checkNotNull)",
    ),
    "window_reduce": (lambda: _windowed().reduce(None), "fn", "reduce() takes a function"),
    "window_reduce_process": (
        lambda: _windowed().reduce(lambda a, b: a, 7),
        "process_function",
        "reduce() takes a window function; int is not one",
    ),
    "aggregate": (
        lambda: _windowed().aggregate(lambda a: a),
        "fn",
        "aggregate() takes an AggregateFunction; function has no create_accumulator()",
    ),
    "window_process": (
        lambda: _windowed().process(None),
        "process_function",
        "process() takes a window function",
    ),
    "apply": (lambda: _windowed().apply(None), "fn", "apply() takes a function"),
    "keyed_process": (
        lambda: _events().key_by(lambda e: e[0]).process(5),
        "function",
        "process() takes a KeyedProcessFunction; int has no process_element()",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_function_argument_that_is_no_function_is_refused_when_built(case: str) -> None:
    build, field, words = CASES[case]
    with pytest.raises(ArgumentTypeError) as info:
        build()
    assert info.value.field == field
    assert words in str(info.value)


class _Window(wv.ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: list[Any], out: Any) -> None:
        out.collect((key, context.window().start, len(elements)))


class _Keyed(wv.KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any, out: Any) -> None:
        out.collect(value[1])


def test_functions_of_every_accepted_shape_still_run() -> None:
    """Callables, objects with ``__call__``, function objects with the interface's methods,
    and a plain function as a window function."""

    class Double:
        def __call__(self, e: Any) -> Any:
            return (e[0], e[1] * 2)

    env = wv.StreamExecutionEnvironment()
    events = env.from_collection([("a", 1), ("a", 2), ("b", 3)]).assign_timestamps_and_watermarks(
        bounded(0)
    )
    events.map(Double()).sink_to("doubled")
    keyed = events.key_by(lambda e: e[0])
    keyed.window(wv.TumblingEventTimeWindows.of(5)).aggregate(wv.CountAggregate()).sink_to("counts")
    keyed.window(wv.TumblingEventTimeWindows.of(5)).process(_Window()).sink_to("windows")
    keyed.window(wv.TumblingEventTimeWindows.of(5)).reduce(
        lambda a, b: (a[0], a[1] + b[1]),
        lambda key, ctx, elements, out: out.collect((key, elements[0][1])),
    ).sink_to("sums")
    keyed.process(_Keyed()).sink_to("values")
    outputs = env.execute().outputs
    assert [r.value for r in outputs["doubled"]] == [("a", 2), ("a", 4), ("b", 6)]
    assert sorted(r.value for r in outputs["counts"]) == [1, 2]
    assert sorted(r.value for r in outputs["windows"]) == [("a", 0, 2), ("b", 0, 1)]
    assert sorted(r.value for r in outputs["sums"]) == [("a", 3), ("b", 3)]
    assert [r.value for r in outputs["values"]] == [1, 2, 3]


def _dict_job(
    events: list[dict[str, Any]], partitions: bool = False
) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment(trace=True)
    source = (
        env.from_partitions([events[:2], events[2:]]) if partitions else env.from_collection(events)
    )
    (
        source.assign_timestamps_and_watermarks(bounded(0, lambda e: e["ts"]))
        .key_by(lambda e: e["k"])
        .window(wv.TumblingEventTimeWindows.of(10))
        .reduce(lambda a, b: {**a, "n": a["n"] + b["n"]})
        .sink_to("sums")
    )
    return env


@pytest.mark.parametrize("partitions", [False, True], ids=["from_collection", "from_partitions"])
def test_the_callers_records_changed_later_change_neither_the_job_nor_its_trace(
    partitions: bool,
) -> None:
    """The trace held the caller's own dicts: editing the input list after a run (to try a
    variant in the next cell) silently changed the earlier run's trace and its charts; edits
    between building and executing changed the job (Flink's fromCollection serializes its
    elements when the source is made)."""
    events = [{"k": "a", "ts": 1, "n": 1}, {"k": "a", "ts": 2, "n": 2}, {"k": "b", "ts": 3, "n": 3}]
    env = _dict_job(events, partitions)
    events[1]["n"] = 20  # after the source was made, before execute
    result = env.execute()
    assert sorted((r.value["k"], r.value["n"]) for r in result.outputs["sums"]) == [
        ("a", 3),
        ("b", 3),
    ]
    before = result.trace.to_json()
    events[0]["n"] = 100
    events[2]["k"] = "z"
    assert result.trace.to_json() == before
    assert events[0] == {"k": "a", "ts": 1, "n": 100}  # (the caller's data is the caller's)


def test_immutable_source_records_are_not_copied() -> None:
    events = [("a", 1), ("b", 2)]
    env = wv.StreamExecutionEnvironment(trace=True)
    env.from_collection(events).sink_to("out")
    result = env.execute()
    assert all(r.value is e for r, e in zip(result.outputs["out"], events, strict=True))


@pytest.mark.parametrize("data", [5, None, 1.5])
def test_from_collection_of_no_iterable_is_named(data: Any) -> None:
    """It was int's own "'int' object is not iterable" from inside from_collection."""
    with pytest.raises(ArgumentTypeError, match=rf"field 'data', value {data!r}: from_collection"):
        wv.StreamExecutionEnvironment().from_collection(data)


@pytest.mark.parametrize("frame", [[{"a": 1}], pd.Series([1, 2])], ids=["list", "series"])
def test_from_pandas_of_no_frame_is_named(frame: Any) -> None:
    """A list raised AttributeError: 'list' object has no attribute 'to_dict'; a Series
    TypeError from Series.to_dict."""
    with pytest.raises(
        ArgumentTypeError,
        match=r"(?s)field 'frame', value .*: from_pandas takes a pandas DataFrame, not "
        r"(list|Series)",
    ):
        wv.StreamExecutionEnvironment().from_pandas(frame)


def test_from_pandas_of_a_frame_still_reads_its_rows() -> None:
    env = wv.StreamExecutionEnvironment()
    frame = pd.DataFrame({"k": ["a", "b"], "arrive": [0, 5]})
    env.from_pandas(frame, arrival_column="arrive").sink_to("rows")
    out = env.execute().outputs["rows"]
    assert [(r.value, r.processing_time) for r in out] == [({"k": "a"}, 0), ({"k": "b"}, 5)]
