"""A parallelism of the wrong type (a str, a float, a bool, None) is an ``ArgumentTypeError``
(a ``TypeError`` and an ``InputError``) naming the field, the value, its type and the ints
expected, like every other argument of the wrong type (``winviz.arguments``)."""

from __future__ import annotations

import pytest

import winviz as wv
from winviz.errors import ArgumentTypeError, InputError


@pytest.mark.parametrize(
    ("value", "type_name"), [("2", "str"), (1.0, "float"), (True, "bool"), (None, "NoneType")]
)
def test_a_parallelism_of_another_type_names_it_and_the_ints_expected(value, type_name) -> None:
    env = wv.StreamExecutionEnvironment()
    with pytest.raises(ArgumentTypeError) as err:
        env.set_parallelism(value)
    assert str(err.value) == (
        f"field 'parallelism', value {value!r}: a parallelism must be an int, not {type_name} "
        "(expected an int in 1..32768)"
    )
    assert isinstance(err.value, TypeError) and isinstance(err.value, InputError)
    assert (err.value.field, err.value.value) == ("parallelism", value)
    stream = env.from_collection([1]).map(lambda x: x)
    with pytest.raises(ArgumentTypeError, match=r"^field 'parallelism', value "):
        stream.set_parallelism(value)


@pytest.mark.parametrize(("value", "type_name"), [("128", "str"), (128.0, "float")])
def test_a_max_parallelism_of_another_type_names_it_and_the_ints_expected(value, type_name) -> None:
    env = wv.StreamExecutionEnvironment()
    with pytest.raises(ArgumentTypeError) as err:
        env.set_max_parallelism(value)
    assert str(err.value) == (
        f"field 'max_parallelism', value {value!r}: a maximum parallelism must be an int, not "
        f"{type_name} (expected an int in 1..32768)"
    )
    stream = env.from_collection([1]).map(lambda x: x)
    with pytest.raises(ArgumentTypeError, match=r"^field 'max_parallelism', value "):
        stream.set_max_parallelism(value)


def test_a_parallelism_out_of_range_keeps_flinks_message() -> None:
    env = wv.StreamExecutionEnvironment()
    with pytest.raises(InputError) as err:
        env.set_parallelism(0)
    assert not isinstance(err.value, TypeError)
    assert str(err.value) == (
        "field 'parallelism', value 0: The parallelism of an operator must be at least 1 and at "
        "most the largest maximum parallelism (expected 1..32768)"
    )
