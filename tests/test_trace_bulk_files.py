"""The bulk paths of ``to_pandas``, ``save`` and ``load_trace`` (issue 11) give exactly what the
value-by-value paths give: texts written by one call of the JSON encoder, texts parsed by one
``json.loads``, details split once per shared tuple; and what they cannot take is refused
naming the record or the file."""

from __future__ import annotations

import enum
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from jobs import bounded, sum_pipeline

import winviz as wv
from winviz.trace import Trace, codec
from winviz.trace.coded import (
    CodedColumn,
    all_same,
    distinct_values,
    equality_is_exact,
    is_none,
    per_distinct,
    same_values,
    type_signature,
    value_codes,
)
from winviz.trace.files import null_flags, valid_flags
from winviz.trace.read_file import _windows, decode_texts
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow


class Color(enum.IntEnum):
    RED = 1


class Name(str):
    pass


# strings that look like the separators and the JSON around them
TRICKY = ["]\x00[", "a,b", '"q"', "x\\y", "é\u2028", "{", "[", "}", "]", "\x01", "", "$tuple"]

FLAT_TUPLES = [
    ("k", 1, 2),
    (),
    (None, True, False),
    (1.5, -0.0, 1e300),
    (10**30, -(10**30)),
    *[(s, i) for i, s in enumerate(TRICKY)],
]
SCALARS = [None, True, False, 0, -7, 10**30, 1.5, -0.0, *TRICKY]


@pytest.mark.parametrize(
    "values",
    [
        FLAT_TUPLES,
        SCALARS,
        FLAT_TUPLES + SCALARS,  # mixed: written one by one
        [("k", float("nan")), ("k", 1)],  # a non-finite float is tagged: the general way
        [("k", (1, 2)), ("k", 1)],  # a tuple inside a tuple is tagged: the general way
        [("k", [1, "]"]), ("k", {"a": 1})],  # containers inside: the general way
        [Color.RED, Name("n"), ("k", Color.RED)],  # subclasses are not plain: tagged
        [TimeWindow(0, 5), GLOBAL_WINDOW, ("k", 1)],
        [float("inf"), 1],
    ],
)
def test_texts_written_in_bulk_are_the_texts_written_one_by_one(values: list) -> None:
    assert codec.to_texts(values) == [codec.to_text(v) for v in values]


def test_texts_decoded_in_bulk_are_the_values_decoded_one_by_one() -> None:
    values = [*FLAT_TUPLES, *SCALARS, TimeWindow(0, 5), GLOBAL_WINDOW, ("k", (1,)), [1, "]"]]
    texts = [codec.to_text(v) for v in values]
    for batch in (texts, texts[: len(FLAT_TUPLES)], texts[len(FLAT_TUPLES) :]):
        bulk = decode_texts(pa.array(batch, pa.string())).tolist()
        single = [codec.from_text(t) for t in batch]
        assert [type(v) for v in bulk] == [type(v) for v in single]
        assert [repr(v) for v in bulk] == [repr(v) for v in single]
    assert decode_texts(pa.array([], pa.string())).tolist() == []


@pytest.mark.parametrize(
    "texts",
    [
        ["1,2", "3"],  # two values in one text
        ["1", ""],  # no value
        ['{"$tuple":[1,2],"x":[3]}'],  # a tuple text with more in it
        ['{"$tuple":[1]', "2]}"],  # a tuple split over two texts
        ['"a', 'b"'],  # a string split over two texts
    ],
)
def test_texts_that_are_not_one_value_each_are_refused(texts: list[str]) -> None:
    with pytest.raises(ValueError):
        decode_texts(pa.array(texts, pa.string()))


def test_value_codes_number_values_not_objects_in_order_of_first_appearance() -> None:
    shared = ("k", 1)
    values = np.empty(6, dtype=object)
    values[:] = [shared, "a", shared, None, tuple(["k", 1]), ("k", True)]
    codes, first = value_codes(values)
    # an equal tuple that is another object is the same value; (k, True) is not (k, 1)
    assert codes.tolist() == [0, 1, 0, 2, 0, 3]
    assert first.tolist() == [0, 1, 3, 5]
    numbers, distinct = distinct_values(values)
    assert numbers.tolist() == codes.tolist() and distinct == [shared, "a", None, ("k", True)]
    assert [type(d[1]) for d in (distinct[0], distinct[3])] == [int, bool]


def test_per_distinct_makes_once_per_value_told_apart_by_identity() -> None:
    made: list[object] = []

    def make(value: object) -> str:
        made.append(value)
        return f"<{value!r}>"

    values = [1, True, 1.0, ("k", 1), 1, ("k", 1), -0.0, 0.0, [1], [1]]
    texts = per_distinct(values, make)
    assert texts == [
        "<1>",
        "<True>",
        "<1.0>",
        "<('k', 1)>",
        "<1>",
        "<('k', 1)>",
        "<-0.0>",
        "<0.0>",
        "<[1]>",
        "<[1]>",
    ]
    assert [repr(v) for v in made] == ["1", "True", "1.0", "('k', 1)", "-0.0", "0.0", "[1]"]
    assert per_distinct(np.array(["a", "b", "a"], dtype=object), str.upper) == ["A", "B", "A"]
    assert per_distinct([], make) == [] and len(made) == 7


@pytest.mark.parametrize(
    ("values", "codes"),
    [
        ([1, True, 1.0, 1], [0, 1, 2, 0]),  # equal across types: three values
        ([0.0, -0.0, float("nan"), float("nan")], [0, 1, 2, 2]),  # as Double.equals
        ([TimeWindow(0, 5), (0, 5), TimeWindow(0, 5)], [0, 1, 0]),
        ([[1, 2], [1, 2], [1, True], {"a": 1}, {"a": 1}], [0, 0, 1, 2, 2]),  # unhashable
        ([(1, [2]), (1, [2]), (True, [2])], [0, 0, 1]),  # a tuple holding a list
        ([((1, "a"),), ((True, "a"),), ((1, "a"),)], [0, 1, 0]),  # nested tuples
    ],
)
def test_value_codes_tell_values_apart_by_type_as_well(values: list, codes: list[int]) -> None:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    assert value_codes(array)[0].tolist() == codes


def test_equality_is_exact_only_where_no_two_types_compare_equal() -> None:
    assert equality_is_exact(["a", 1, None, ("k", 1), ("j", 2)])
    assert equality_is_exact([TimeWindow(0, 5), TimeWindow(5, 10), None])
    assert not equality_is_exact([1, True])
    assert not equality_is_exact([("k", 1), ("k", True)])
    assert not equality_is_exact([TimeWindow(0, 5), (0, 5)])
    assert not equality_is_exact([1.5, -0.0])
    assert equality_is_exact([("k", 1), ("k", True, 2)])  # (two lengths: never equal)
    assert not equality_is_exact([("k", 1), ("k", True), ("k", 1, 2)])
    assert type_signature([("k", 1)]) == type_signature([tuple(["j", 2])])
    assert type_signature([("k", 1)]) != type_signature([("k", True)])


def test_is_none_and_same_values_compare_values_by_type() -> None:
    class Odd:  # (== None and == anything: only ``is`` tells it apart)
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    odd, shared = Odd(), ("k", 1)
    values = np.empty(5, dtype=object)
    values[:] = [None, odd, 0, shared, ("k", 1)]
    assert is_none(values).tolist() == [True, False, False, False, False]
    other = np.empty(5, dtype=object)
    other[:] = [None, 1, 0, tuple(["k", 1]), ("k", True)]
    # Odd() == 1 holds, but they are of two types; (k, 1) is not (k, True)
    assert same_values(values, other).tolist() == [True, False, True, True, False]
    assert all_same(values[:4], values[:4]) and not all_same(values, other)
    assert not all_same(values[:3], values[:4])


def _tricky_trace() -> Trace:
    """Records written directly: payloads of tricky strings, shared timer details, a window
    and the global window, two equal payloads that are different objects."""
    trace = Trace()
    timer = ("event", TimeWindow(0, 10), False)
    for i, s in enumerate(TRICKY):
        value = (s, i, i % 2 == 0)
        trace.writer.emit("arrival", i, None, "src", None, None, i, (value, i))
        trace.writer.emit("element", i, 0, "w", s, None, i, value)
        trace.writer.emit("assigned", i, 0, "w", s, TimeWindow(0, 10), i, value)
        trace.writer.emit("timer_registered", i, 0, "w", s, TimeWindow(0, 10), 9, timer)
    trace.writer.emit("element", 20, 0, "w", "k", None, 5, ("same", 1))
    trace.writer.emit("element", 21, 0, "w", "k", None, 6, ("same", 1))
    trace.writer.emit("fired", 22, 9, "w", "k", GLOBAL_WINDOW, 9, (("k", 3), 0, "on_time", None))
    return trace


def test_a_tricky_trace_round_trips_exactly(tmp_path: Path) -> None:
    trace = _tricky_trace()
    path = trace.save(tmp_path / "tricky.parquet")
    back = wv.load_trace(path)
    assert back.to_json() == trace.to_json()
    assert [r.detail for r in back] == [r.detail for r in trace]
    assert [r.window for r in back] == [r.window for r in trace]
    # the timer details are one shared tuple again, as the engine wrote them
    timers = [r.detail for r in back.records("timer_registered")]
    assert len({id(d) for d in timers}) == 1
    # the JSON texts are written plain, a text per record; equal texts come back as one value
    texts = pq.read_table(path).column("detail").to_pylist()
    assert texts[-3:] == ['{"$tuple":["same",1]}'] * 2 + [
        '{"$tuple":[{"$tuple":["k",3]},0,"on_time",null]}'
    ]
    assert texts == [codec.to_text(r.detail) for r in trace]
    same = [r.detail for r in back.records("element")][-2:]
    assert same == [("same", 1)] * 2 and same[0] is same[1]
    frame = trace.to_pandas()
    assert back.to_pandas().astype(str).equals(frame.astype(str))
    assert isinstance(frame["domain"].dtype, pd.CategoricalDtype)
    assert [None if pd.isna(v) else v for v in frame["domain"]] == [
        "event" if k == "timer_registered" else None for k in frame["kind"]
    ]
    assert frame["value"].tolist()[:3] == [("]\x00[", 0, True)] * 3


def test_a_detail_that_is_not_its_fields_is_refused_naming_the_record() -> None:
    trace = Trace()
    trace.writer.emit("element", 0, 0, "w", "k", None, 1, ("k", 1))
    trace.writer.emit("timer_registered", 1, 0, "w", "k", None, 9, ("event", TimeWindow(0, 10)))
    with pytest.raises(ValueError, match=r"record 1 \(timer_registered\): detail .*expected a"):
        trace.to_pandas()


def test_a_time_window_without_bounds_is_a_damaged_file_when_first_read(tmp_path: Path) -> None:
    good = _tricky_trace().save(tmp_path / "good.parquet")
    table = pq.read_table(good)
    at = table.column_names.index("window_start")
    starts = table.column(at).combine_chunks().to_pylist()
    row = next(i for i, s in enumerate(starts) if s is not None)
    starts[row] = None
    crafted = table.set_column(at, table.schema.field(at), pa.array(starts, pa.int64()))
    path = tmp_path / "nostart.parquet"
    pq.write_table(crafted, path)
    back = wv.load_trace(path)  # the windows are decoded when first read
    assert back.kinds() == _tricky_trace().kinds()
    with pytest.raises(
        wv.TraceFileError, match=rf"damaged trace file: record {row}: a time"
    ) as err:
        back.records("fired")
    assert str(path) in str(err.value)
    with pytest.raises(wv.TraceFileError, match=rf"record {row}: a time"):  # again, when asked
        [r.window for r in back]


def test_a_crafted_dictionary_of_texts_is_refused_or_read_as_data(tmp_path: Path) -> None:
    good = _tricky_trace().save(tmp_path / "good.parquet")
    table = pq.read_table(good)
    # a dictionary of texts, in order of first appearance
    values = table.column("detail").combine_chunks().dictionary_encode()
    at = table.column_names.index("detail")
    for texts, ok in ((["1,2"], False), (['{"$tuple":[1]', "2]}"], False), (["[1, 2]"], True)):
        dictionary = values.dictionary.to_pylist()
        dictionary[: len(texts)] = texts
        crafted = table.set_column(
            at,
            table.schema.field(at).with_type(values.type),
            pa.DictionaryArray.from_arrays(values.indices, pa.array(dictionary)),
        )
        path = tmp_path / "crafted.parquet"
        pq.write_table(crafted, path)
        if ok:
            assert wv.load_trace(path).records("arrival")[0].detail == [1, 2]
        else:  # refused when the details are first read, naming the file and the record
            back = wv.load_trace(path)
            with pytest.raises(wv.TraceFileError, match="damaged trace file") as err:
                back.records("arrival")
            assert str(path) in str(err.value)
            assert f"record 0: field 'detail' value {texts[0]!r} is not a trace value" in str(
                err.value
            )
    assert json.loads(dictionary[0]) == [1, 2]


def test_windows_read_by_their_bounds_pairs_are_the_windows_read_one_field_at_a_time() -> None:
    # the window kind of each record (0 time, 1 global, 2 none) and its bounds: two windows
    # of one start but different ends (merged sessions), numbered in order of first appearance
    kinds = CodedColumn(
        np.array([2, 0, 0, 1, 0, 0, 2, 0], dtype=np.int32), ["time", "global", None]
    )
    starts = [None, 10, 0, None, 10, 0, None, 30]
    ends = [None, 20, 5, None, 25, 5, None, 40]
    exact = _windows(kinds, pa.array(starts, pa.int64()), pa.array(ends, pa.int64()))
    want = [None, TimeWindow(10, 20), TimeWindow(0, 5), GLOBAL_WINDOW, TimeWindow(10, 25)]
    want += [TimeWindow(0, 5), None, TimeWindow(30, 40)]
    assert [exact.values[c] for c in exact.codes] == want
    windows = [TimeWindow(10, 20), TimeWindow(0, 5), TimeWindow(10, 25), TimeWindow(30, 40)]
    assert exact.values == [GLOBAL_WINDOW, None, *windows]
    # bounds also on another record (not as ``save`` writes them): read the other way, the same
    starts[3], ends[3] = 10, 20
    other = _windows(kinds, pa.array(starts, pa.int64()), pa.array(ends, pa.int64()))
    assert other.values == exact.values
    assert other.codes.tolist() == exact.codes.tolist() == [1, 2, 3, 0, 4, 3, 1, 5]


def test_null_flags_read_from_the_bitmap_are_arrows_own() -> None:
    ints = pa.array([1, None, 3, None, 5, 6, 7, 8, None, 10])
    bools = pa.array([True, None, False, True, None, False, True, True, False, None])
    for array in (ints, ints.slice(1), ints.slice(3, 5), pa.array([1, 2]), bools, bools.slice(2)):
        want = array.is_null().to_numpy(zero_copy_only=False)
        assert null_flags(array).tolist() == want.tolist()
        assert valid_flags(array).tolist() == (~want).tolist()


def test_a_long_run_round_trips_exactly(tmp_path: Path) -> None:
    """Enough records that each kind's own-tuple paths are taken (arrival: every record its
    own detail tuple), with a shared timer detail per window as the engine writes it."""
    env = wv.StreamExecutionEnvironment()
    events = [(f"k{i % 7}", i * 3 - (i * 13) % 40, i % 5) for i in range(3_000)]
    sum_pipeline(env, events, 500, bounded(50), arrival_interval=1)
    trace = env.execute().trace
    assert trace.kinds()["arrival"] == 3_000
    back = wv.load_trace(trace.save(tmp_path / "long.parquet"))
    assert back.to_json() == trace.to_json()
    assert back.to_pandas().astype(str).equals(trace.to_pandas().astype(str))
    frame = trace.to_pandas()
    arrivals = frame[frame["kind"] == "arrival"]
    assert arrivals["index"].tolist() == list(range(3_000))
    assert arrivals["value"].tolist() == events


@pytest.mark.parametrize(
    "values",
    [
        [(f"k{i % 7}", i * 3 - 50, i % 5) for i in range(3_000)],  # one shape: column by column
        [(f"k{i}", i % 2 == 0, None) for i in range(2_000)],
        # tuples of one shape among windows and scalars: put back in order
        [("k", i) for i in range(1_500)]
        + [TimeWindow(0, 5), GLOBAL_WINDOW, 3, "x", None]
        + [("k", -i) for i in range(1_500)],
        [(s, i) for i, s in enumerate(TRICKY * 100)],  # strings JSON escapes: the general way
        # one such string beyond the sample that tells few distinct strings from many
        [("k", i) for i in range(5_000)] + [("a\nb", 0)],
        [(f"k{i}", i) for i in range(5_000)] + [("a\nb", 0)],
        [("k", i) for i in range(1_500)] + [("k", 10**30)],  # beyond Java's long
        [("k", i) for i in range(1_500)] + [("k", True)],  # a bool among ints
        [("k", i) for i in range(1_500)] + [("k", 1.5)],  # a float
        [("k", i) for i in range(1_500)] + [("k", 7, 1)],  # another width
        [(Name("n"), i) for i in range(1_500)],  # a str subclass is tagged
        [(None,)] * 1_500,
        [("é\u2028", -i) for i in range(1_500)],
    ],
)
def test_many_texts_of_one_shape_written_in_bulk_are_the_texts_written_one_by_one(
    values: list,
) -> None:
    assert codec.to_texts(values) == [codec.to_text(v) for v in values]


def test_the_columns_are_read_from_the_files_bytes_when_first_read(tmp_path: Path) -> None:
    """``load_trace`` decodes ``seq`` and ``kind``; the other columns come from the bytes it
    read, when first read, so they are the same when the file is gone by then."""
    trace = _tricky_trace()
    path = trace.save(tmp_path / "tricky.parquet")
    back = wv.load_trace(path)
    path.unlink()
    assert back.kinds() == trace.kinds()
    assert [r.key for r in back] == [r.key for r in trace]
    assert [r.window for r in back] == [r.window for r in trace]
    assert [r.detail for r in back] == [r.detail for r in trace]
    assert back.to_json() == trace.to_json()


def test_a_damaged_base_column_is_refused_when_first_read(tmp_path: Path) -> None:
    good = _tricky_trace().save(tmp_path / "good.parquet")
    table = pq.read_table(good)
    keys = table.column("key").combine_chunks()
    texts = keys.dictionary.to_pylist()
    texts[0] = '{"$reduce":["os.system","touch pwned"]}'
    at = table.column_names.index("key")
    crafted = table.set_column(
        at,
        table.schema.field(at),
        pa.DictionaryArray.from_arrays(keys.indices, pa.array(texts)),
    )
    path = tmp_path / "badkey.parquet"
    pq.write_table(crafted, path)
    back = wv.load_trace(path)
    assert back.kinds() == _tricky_trace().kinds()  # (kinds and times need no key)
    with pytest.raises(wv.TraceFileError, match=r"damaged trace file.*unknown tag") as err:
        [r.key for r in back]
    assert str(path) in str(err.value)
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


def test_a_damaged_detail_column_is_refused_when_the_details_are_first_read(
    tmp_path: Path,
) -> None:
    good = _tricky_trace().save(tmp_path / "good.parquet")
    meta = pq.ParquetFile(good).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    chunk = meta.row_group(0).column(names.index("detail"))
    data = bytearray(good.read_bytes())
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data[start : start + chunk.total_compressed_size] = b"\xff" * chunk.total_compressed_size
    path = tmp_path / "damaged.parquet"
    path.write_bytes(bytes(data))
    back = wv.load_trace(path)  # the base columns are whole
    assert back.kinds() == _tricky_trace().kinds()
    with pytest.raises(wv.TraceFileError, match="damaged trace file") as err:
        back.records("element")
    assert str(path) in str(err.value)


def test_json_texts_are_one_per_record_however_the_objects_are_shared(tmp_path: Path) -> None:
    """Each record's JSON text is its own value's, whether its object is shared with an
    earlier kind's records row by row (arrival / element), appears again far apart (which an
    evenly spread sample does not see), or is one of a few shared by many records."""
    trace = Trace()
    payloads = [(f"k{i % 3}", i, i % 2 == 0) for i in range(1_200)]
    windows = [TimeWindow(w * 10, w * 10 + 10) for w in range(3)]
    again = [payloads[i % 602] for i in range(1_200)]  # objects twice, 602 records apart
    for i, value in enumerate(payloads):
        trace.writer.emit("arrival", i, None, "src", None, None, i, (value, i))
    for i, value in enumerate(payloads):
        trace.writer.emit("element", i, 0, "w", value[0], None, i, value)
    for i, value in enumerate(again):
        trace.writer.emit("assigned", i, 0, "w", value[0], windows[i % 3], i, value)
    for i in range(1_200):
        trace.writer.emit(
            "timer_fired", i, 0, "w", "k0", windows[i % 3], 9, ("event", windows[i % 3])
        )
    path = trace.save(tmp_path / "shared.parquet")
    texts = pq.read_table(path).column("detail").to_pylist()
    want = [*zip(payloads, range(1_200), strict=True), *payloads, *again]
    want += [("event", windows[i % 3]) for i in range(1_200)]
    assert texts == [codec.to_text(v) for v in want]
    back = wv.load_trace(path)
    assert [r.detail for r in back] == [r.detail for r in trace]
    assert back.to_json() == trace.to_json()
    # saved again: the arrival payloads equal the element ones but are other objects now
    assert back.records("arrival")[0].detail[0] is not back.records("element")[0].detail
    again_texts = pq.read_table(back.save(tmp_path / "again.parquet")).column("detail")
    assert again_texts.to_pylist() == texts


def test_equal_payloads_of_other_types_keep_their_own_texts(tmp_path: Path) -> None:
    """A kind's values equal to an earlier kind's (``1 == True``) but not of their types are
    written as their own texts, never the earlier kind's."""
    trace = Trace()
    for i in range(1_200):
        trace.writer.emit("arrival", i, None, "src", None, None, i, (("k", 1, 0.0), i))
    for i in range(1_200):
        trace.writer.emit("element", i, 0, "w", "k", None, i, ("k", True, 0))
    path = trace.save(tmp_path / "types.parquet")
    texts = pq.read_table(path).column("detail").to_pylist()
    assert texts[0] == '{"$tuple":[{"$tuple":["k",1,0.0]},0]}'
    assert texts[1_200:] == ['{"$tuple":["k",true,0]}'] * 1_200
    assert wv.load_trace(path).to_json() == trace.to_json()


def test_shared_detail_tuples_are_told_by_a_sample_that_does_not_step_with_them() -> None:
    """A window's timer detail is one tuple shared by every key's records of it; records of
    a few thousand such tuples in a repeating order are told shared (each split once), even
    where an even stride would pick a different tuple each time; a tuple per record is not."""
    from winviz.trace.coded import repeated

    n = 2_000_000
    # the tuple at row i: one of 4,001 in turn (a prime count: an even stride never lands on
    # the same one twice in 256 steps)
    tuples = np.empty(4_001, dtype=object)
    tuples[:] = [("event", TimeWindow(i, i + 1), False) for i in range(4_001)]
    shared = tuples[np.arange(n) % 4_001]
    assert len(set(shared[:: n // 256][:256])) == 256  # an even stride sees no repeat
    assert repeated(shared)
    distinct = np.empty(n, dtype=object)
    distinct[:] = [("event", i) for i in range(n)]
    assert not repeated(distinct)
    assert repeated(distinct[:1_000])  # few: grouped whatever they are
