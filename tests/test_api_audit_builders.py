"""Building a pipeline refuses what Flink refuses, when it is built: an empty or non-str
``OutputTag`` id (Flink's ``OutputTag`` constructor), a None record in a bounded source
(Flink's ``fromCollection`` / ``FromElementsFunction.checkCollection``), and a timestamp
assigner, punctuated watermark function or generator factory that is no function of the
arguments it will get — each a clear error naming the argument, the value and what was
expected, not a failure of the first record at run time."""

from __future__ import annotations

from typing import Any

import pytest
from jobs import timestamped

import winviz as wv
from winviz.errors import ArgumentTypeError, InputError

WS = wv.WatermarkStrategy


def _stamped(strategy: wv.WatermarkStrategy, records: list[Any]) -> list[Any]:
    env = wv.StreamExecutionEnvironment()
    timestamped(env, records, strategy).sink_to("out")
    return [(r.value, r.timestamp) for r in env.execute().outputs["out"]]


# -- OutputTag ------------------------------------------------------------------------------


def test_an_output_tag_id_must_not_be_empty() -> None:
    with pytest.raises(
        InputError,
        match=r"^field 'id', value '': OutputTag id must not be empty\. \(expected a non-empty "
        r"str naming the side output, e.g\. OutputTag\('late'\)\)$",
    ):
        wv.OutputTag("")


@pytest.mark.parametrize(
    ("tag_id", "message"),
    [
        (None, r"field 'id', value None: OutputTag id cannot be null\."),
        (5, r"field 'id', value 5: OutputTag id must be a str, not int"),
        (("late",), r"field 'id', value \('late',\): OutputTag id must be a str, not tuple"),
    ],
)
def test_an_output_tag_id_must_be_a_str(tag_id: Any, message: str) -> None:
    with pytest.raises(ArgumentTypeError, match="^" + message):
        wv.OutputTag(tag_id)
    with pytest.raises(TypeError):  # ArgumentTypeError is a TypeError
        wv.OutputTag(tag_id)


def test_an_output_tag_with_an_id_still_names_its_side_output() -> None:
    late = wv.OutputTag(" ")  # Flink refuses only an empty id, not a blank one
    assert late == wv.OutputTag(" ") and late.id == " " and repr(late) == "OutputTag(' ')"


# -- a None record ---------------------------------------------------------------------------


def test_from_collection_refuses_a_none_record_naming_its_index() -> None:
    env = wv.StreamExecutionEnvironment()
    with pytest.raises(
        InputError,
        match=r"^record 2, field 'data', value None: The collection contains a null element: "
        r"a Flink stream record is never null \(fromCollection / fromElements refuse one: "
        r"FromElementsFunction\.checkCollection\) \(expected records that are not None",
    ):
        env.from_collection(["a", "b", None, "c", None])
    with pytest.raises(InputError, match=r"^record 0, field 'data', value None"):
        env.from_collection(x for x in [None])


def test_from_partitions_refuses_a_none_record_naming_its_partition_and_index() -> None:
    env = wv.StreamExecutionEnvironment()
    with pytest.raises(InputError, match=r"^record 1, field 'partitions\[1\]', value None: "):
        env.from_partitions([["a", "b"], ["c", None]])


def test_records_that_are_falsy_but_not_none_are_records() -> None:
    env = wv.StreamExecutionEnvironment()
    env.from_collection([0, "", (), {}, False]).sink_to("out")
    assert [r.value for r in env.execute().outputs["out"]] == [0, "", (), {}, False]


# -- WatermarkStrategy builders ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("assigner", "message"),
    [
        (5, r"with_timestamp_assigner\(assigner\) takes a function; int is not callable"),
        (None, r"takes a function; None is no function \(Flink's checkNotNull\)"),
        ("ts", r"takes a function; str is not callable"),
        (
            lambda e: e[1],
            r"calls it with 2 arguments; .*<lambda>\(e\) cannot take them",
        ),
    ],
)
def test_with_timestamp_assigner_refuses_what_is_no_function_of_two_when_called(
    assigner: Any, message: str
) -> None:
    strategy = WS.for_monotonous_timestamps()
    with pytest.raises(ArgumentTypeError, match=message) as caught:
        strategy.with_timestamp_assigner(assigner)
    assert caught.value.field == "assigner" and caught.value.value is assigner
    assert str(caught.value).endswith(
        "(expected a function (element, record_timestamp) returning the element's timestamp "
        "(int ms, a datetime or an ISO text), e.g. lambda e, _: e['ts'])"
    )


def test_an_object_with_extract_timestamp_is_told_to_pass_the_method() -> None:
    class Assigner:
        def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
            return int(value[1])

    assigner = Assigner()
    with pytest.raises(
        ArgumentTypeError,
        match=r"Assigner is not callable; pass its method: "
        r"with_timestamp_assigner\(obj\.extract_timestamp\)",
    ):
        WS.for_monotonous_timestamps().with_timestamp_assigner(assigner)
    # what the error says to do works
    strategy = WS.for_monotonous_timestamps().with_timestamp_assigner(assigner.extract_timestamp)
    assert _stamped(strategy, [("a", 7), ("b", 9)]) == [(("a", 7), 7), (("b", 9), 9)]


def test_assigners_of_two_arguments_in_any_form_are_taken() -> None:
    class Stamp:
        def __call__(self, element: Any, record_timestamp: int, *rest: Any) -> int:
            return int(element[1])

    def with_default(element: Any, record_timestamp: int = 0, scale: int = 1) -> int:
        return int(element[1]) * scale

    for assigner in (Stamp(), with_default, lambda *args: args[0][1]):
        strategy = WS.for_monotonous_timestamps().with_timestamp_assigner(assigner)
        assert _stamped(strategy, [("a", 3)]) == [(("a", 3), 3)]


def test_for_punctuated_refuses_what_is_no_function_of_two_when_called() -> None:
    with pytest.raises(
        ArgumentTypeError,
        match=r"^field 'fn', value 5: for_punctuated\(fn\) takes a function; int is not "
        r"callable \(expected a function \(event, timestamp\) returning a watermark \(int ms\) "
        r"or None\)$",
    ):
        WS.for_punctuated(5)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=r"for_punctuated\(fn\) calls it with 2"):
        WS.for_punctuated(lambda e: None)  # type: ignore[arg-type,misc]


def test_for_generator_refuses_what_cannot_make_a_generator() -> None:
    with pytest.raises(
        ArgumentTypeError,
        match=r"^field 'factory', value 5: for_generator\(factory\) takes a function; int is "
        r"not callable \(expected a function of no arguments returning a WatermarkGenerator",
    ):
        WS.for_generator(5)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match=r"for_generator\(factory\) calls it with 0"):
        WS.for_generator(lambda clock: wv.watermarks.NoWatermarksGenerator())  # type: ignore[arg-type,misc]


def test_a_generator_factory_that_returns_no_generator_is_named_when_the_job_starts() -> None:
    def make() -> Any:
        return 5

    strategy = WS.for_generator(make).with_timestamp_assigner(lambda e, _: e)
    with pytest.raises(
        ArgumentTypeError,
        match=r"^field 'factory', value 5: the generator factory of WatermarkStrategy 'make' "
        r"returned 5 \(int\), which has no on_event\(\) \(expected a WatermarkGenerator",
    ):
        _stamped(strategy, [1, 2])


def test_a_generator_class_is_a_factory() -> None:
    class EveryEvent(wv.watermarks.WatermarkGenerator):
        def on_event(self, event: Any, timestamp: int, output: Any) -> None:
            output.emit_watermark(timestamp)

    strategy = WS.for_generator(EveryEvent).with_timestamp_assigner(lambda e, _: e)
    assert _stamped(strategy, [4, 6]) == [(4, 4), (6, 6)]


# -- the DataStream builders: a wrong type is a TypeError -------------------------------------


def _stream() -> wv.DataStream:
    return wv.StreamExecutionEnvironment().from_collection([("a", 1)])


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda s: s.union(5),
            r"^field 'others', value 5: union\(\) needs a DataStream of the same environment, "
            r"not int \(expected a DataStream of this environment\)$",
        ),
        (
            lambda s: s.assign_timestamps_and_watermarks(500),
            r"^field 'strategy', value 500: assign_timestamps_and_watermarks takes a "
            r"WatermarkStrategy, not int \(expected a WatermarkStrategy, e\.g\. ",
        ),
        (
            lambda s: s.key_by(lambda e: e[0]).window(5_000),
            r"^field 'assigner', value 5000: window\(\) / window_all\(\) take a WindowAssigner, "
            r"not int \(expected a WindowAssigner, e\.g\. TumblingEventTimeWindows\.of\(5000\)\)$",
        ),
        (
            lambda s: s.window_all("tumbling"),
            r"^field 'assigner', value 'tumbling': window\(\) / window_all\(\) take a "
            r"WindowAssigner, not str",
        ),
        (
            lambda s: (
                s.key_by(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(10)).trigger(3)
            ),
            r"^field 'trigger', value 3: trigger\(\) takes a Trigger, not int \(expected a "
            r"Trigger, e\.g\. CountTrigger\.of\(3\)\)$",
        ),
        (
            lambda s: (
                s.key_by(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(10)).evictor(3)
            ),
            r"^field 'evictor', value 3: evictor\(\) takes an Evictor, not int \(expected an "
            r"Evictor, e\.g\. CountEvictor\.of\(3\)\)$",
        ),
        (
            lambda s: s.union([s]),
            r"^field 'others', value \[<.*DataStream.*>\]: union\(\) needs a DataStream of the "
            r"same environment, not list",
        ),
        (
            lambda s: s.connect("other"),
            r"^field 'other', value 'other': connect needs a DataStream of the same environment, "
            r"not str \(expected a DataStream of this environment\)$",
        ),
        (
            lambda s: s.connect(s).key_by(lambda e: e[0], "k"),
            r"^field 'key_selector2', value 'k': key_by\(\) takes a function; str is not callable",
        ),
        (
            lambda s: s.connect(s).process(lambda a, b: None),
            r"^field 'function', value <function .*>: a co-process function needs "
            r"process_element1\(value, ctx, out\) \(expected a CoProcessFunction\)$",
        ),
        (
            lambda s: (
                s.key_by(lambda e: e[0])
                .window(wv.TumblingEventTimeWindows.of(10))
                .aggregate(wv.SumAggregate("amount"))
            ),
            r"^field 'field', value 'amount': SumAggregate\(field\) takes a function; str is not "
            r"callable",
        ),
    ],
)
def test_a_builder_given_the_wrong_type_raises_a_type_error_naming_it(
    build: Any, message: str
) -> None:
    with pytest.raises(ArgumentTypeError, match=message):
        build(_stream())


def test_streams_of_another_environment_stay_a_value_error() -> None:
    other = wv.StreamExecutionEnvironment().from_collection([1])
    with pytest.raises(
        InputError, match=r"union\(\) needs a DataStream of the same environment"
    ) as e:
        _stream().union(other)
    assert not isinstance(e.value, TypeError)
    with pytest.raises(InputError, match="connect needs a DataStream of the same") as e:
        _stream().connect(other)
    assert not isinstance(e.value, TypeError)
