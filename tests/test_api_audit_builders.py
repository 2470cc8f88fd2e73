"""Building a pipeline refuses what Flink refuses, when it is built: an empty or non-str
``OutputTag`` id (Flink's ``OutputTag`` constructor) and a None record in a bounded source
(Flink's ``fromCollection`` / ``FromElementsFunction.checkCollection``) — each a clear error
naming the argument, the value and what was expected."""

from __future__ import annotations

from typing import Any

import pytest

import winviz as wv
from winviz.errors import ArgumentTypeError, InputError

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
