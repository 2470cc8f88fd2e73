"""The trace's JSON keeps what it was given: a dict value two of whose keys have the same
``str()`` (``1`` and ``"1"``) reaches ``to_json`` whole, as its ``[key, value]`` pairs (a JSON
object would keep one of them), while every other dict keeps its JSON object form byte for
byte."""

from __future__ import annotations

from pathlib import Path

import winviz as wv
from winviz.trace import Trace, jsonable

# -- jsonable / to_json: keys of one str() ---------------------------------------------------


def test_a_dict_whose_keys_share_a_str_form_keeps_every_entry_as_pairs() -> None:
    assert jsonable({1: "a", "1": "b"}) == [[1, "a"], ["1", "b"]]
    assert jsonable({True: 1, "True": 2}) == [[True, 1], ["True", 2]]
    # the order of the entries does not matter: the same dict, the same form
    assert jsonable({"1": "b", 1: "a"}) == [[1, "a"], ["1", "b"]]
    assert jsonable({"True": 2, True: 1}) == [[True, 1], ["True", 2]]


def test_pairs_are_ordered_by_str_then_type_name() -> None:
    value = {(1, 2): {"x": 1.5}, "(1, 2)": None, "0": (3,)}
    # "(1, 2)" < "0" as text; builtins.str < builtins.tuple
    assert jsonable(value) == [["(1, 2)", None], [[1, 2], {"x": 1.5}], ["0", [3]]]


def test_nested_colliding_dicts_are_pairs_at_their_own_level_only() -> None:
    value = [{"k": {1: "int", "1": "str"}, "n": 2}]
    assert jsonable(value) == [{"k": [[1, "int"], ["1", "str"]], "n": 2}]


def test_a_dict_whose_keys_str_forms_differ_keeps_its_object_form() -> None:
    assert jsonable({2: "x", "1": "y", True: None}) == {"1": "y", "2": "x", "True": None}
    assert jsonable({}) == {}


def _trace_of(value: object) -> Trace:
    own = Trace()
    own.writer.emit("element", 0, None, "w", "k", None, 1, value)
    return own


def test_to_json_writes_both_entries_of_a_colliding_dict() -> None:
    assert _trace_of({1: "a", "1": "b"}).to_json() == (
        '{"records":[{"key":"k","kind":"element","operator":"w","proc_time":0,"seq":0,'
        '"ts":1,"value":[[1,"a"],["1","b"]],"watermark":null,"window_end":null,'
        '"window_start":null}],"schema_version":1}'
    )
    # the same bytes whatever the order the dict was built in
    assert _trace_of({"1": "b", 1: "a"}).to_json() == _trace_of({1: "a", "1": "b"}).to_json()


def test_to_json_of_a_dict_without_colliding_keys_is_unchanged() -> None:
    assert _trace_of({1: "a", "2": "b"}).to_json() == (
        '{"records":[{"key":"k","kind":"element","operator":"w","proc_time":0,"seq":0,'
        '"ts":1,"value":{"1":"a","2":"b"},"watermark":null,"window_end":null,'
        '"window_start":null}],"schema_version":1}'
    )


def test_a_colliding_dict_survives_save_and_load(tmp_path: Path) -> None:
    trace = _trace_of({True: 1, "True": 2})
    back = wv.load_trace(trace.save(tmp_path / "t.parquet"))
    assert back[0].detail == {True: 1, "True": 2}
    assert back.to_json() == trace.to_json()
    assert '"value":[[true,1],["True",2]]' in back.to_json()


def test_a_run_with_colliding_keys_in_its_records_keeps_them_in_to_json() -> None:
    env = wv.StreamExecutionEnvironment()
    events = [{1: "int one", "1": "str one", "ts": 5}]
    (
        env.from_collection(events)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e["ts"]
            )
        )
        .map(lambda e: e)
        .sink_to("out")
    )
    text = env.execute().trace.to_json()
    pairs = '[[1,"int one"],["1","str one"],["ts",5]]'
    # the arrival, the map's emitted record, the sink: each keeps both keys
    assert text.count(pairs) == 3
    assert text.count('"int one"') == text.count('"str one"') == 3
