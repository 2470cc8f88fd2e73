"""Saving a trace to one Parquet file and loading it back: exact round trips, data only, and
clear errors for files that are not traces."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import winviz as wv
from winviz.trace import Trace, codec, read_file
from winviz.trace.codec import OpaqueValue

STRATEGY = wv.WatermarkStrategy.for_bounded_out_of_orderness(300).with_timestamp_assigner(
    lambda e, _: e[1]
)


@dataclasses.dataclass(frozen=True)
class Click:
    user: str
    ts: int


def _session_job() -> Trace:
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    events = [("a", 1_000), ("a", 5_000), ("a", 3_000), ("b", 100), ("a", 20_000), ("b", 50)]
    (
        env.from_collection(events, arrival_interval=100)
        .assign_timestamps_and_watermarks(STRATEGY)
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(2_500))
        .allowed_lateness(1_000)
        .side_output_late_data(late)
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    return env.execute().trace


def _odd_values_job() -> Trace:
    """Keys and payloads of every shape the codec tags: tuples, ints vs strings vs bools,
    floats that JSON cannot hold, dicts with non-string keys, a dataclass, the global window."""
    env = wv.StreamExecutionEnvironment()
    events = [
        (1, 10, {"n": float("nan")}),
        ("1", 20, {1: "x", "flag": True}),
        (("t", 1), 30, [float("inf"), -0.5, True, 1]),
        ("$tuple", 40, Click("u", 40)),
    ]
    (
        env.from_collection(events, arrival_interval=10)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.GlobalWindows.create())
        .trigger(wv.CountTrigger.of(1))
        .reduce(lambda x, y: y)
        .sink_to("out")
    )
    return env.execute().trace


@pytest.mark.parametrize("make", [_session_job, _odd_values_job])
def test_save_and_load_round_trip_exactly(make, tmp_path: Path) -> None:
    trace = make()
    path = trace.save(tmp_path / "run.parquet")
    back = wv.load_trace(path)
    assert len(back) == len(trace)
    assert back.to_json() == trace.to_json()  # byte for byte
    assert back.to_pandas().astype(str).equals(trace.to_pandas().astype(str))
    assert [r.kind for r in back] == [r.kind for r in trace]
    assert [type(r.key) for r in back] == [type(r.key) for r in trace]
    assert [r.window for r in back] == [r.window for r in trace]
    assert back.kinds() == trace.kinds()


def test_values_that_are_not_plain_data_come_back_as_text(tmp_path: Path) -> None:
    trace = _odd_values_job()
    back = wv.load_trace(trace.save(tmp_path / "odd.parquet"))
    payloads = [r.detail for r in back.records("element")]
    assert payloads[0][2]["n"] != payloads[0][2]["n"]  # NaN stays NaN
    assert payloads[1][2] == {1: "x", "flag": True} and payloads[1][0] == "1"
    assert [type(k) for k in (payloads[0][0], payloads[1][0])] == [int, str]
    assert payloads[2][0] == ("t", 1) and payloads[2][2] == [float("inf"), -0.5, True, 1]
    assert [type(v) for v in payloads[2][2]] == [float, float, bool, int]
    click = payloads[3][2]
    assert isinstance(click, OpaqueValue) and repr(click) == "Click(user='u', ts=40)"
    assert click.json == {"ts": 40, "user": "u"}
    assert back.records("element")[3].key == "$tuple"  # a string that looks like a tag


# layout 3's columns of the session job's detail fields (as its writer chose them)
SESSION_DETAIL_COLUMNS = {
    "arrival": {"value": "detail_json", "index": "detail_int"},
    "element": {"value": "detail_json"},
    "assigned": {"value": "detail_json"},
    "emitted": {"value": "detail_int"},  # the counts are ints: the int column
    "sink": {"sink": "detail_str", "value": "detail_int"},
    "skipped_late_window": {"value": "detail_json"},
    "side_output": {"tag": "detail_str", "value": "detail_json"},
    "watermark": {"input": "detail_str"},
    "watermark_generated": {"generator": "detail_str"},
    "timer_registered": {
        "domain": "detail_str",
        "namespace": "detail_json",
        "deduplicated": "detail_bool",
    },
    "timer_fired": {"domain": "detail_str", "namespace": "detail_json"},
    "timer_deleted": {"domain": "detail_str", "namespace": "detail_json", "existed": "detail_bool"},
    "trigger": {"call": "detail_str", "result": "detail_str_2"},
    "fired": {
        "result": "detail_int",
        "pane": "detail_int_2",
        "timing": "detail_str",
        "count": "detail_str_2",  # None on every fired record: a null string
    },
    "merged": {"merged_windows": "detail_json", "state_window": "detail_json_2"},
    "cleanup": {"cleanup_time": "detail_int"},
}


def _typed_layout(trace: Trace, table: pa.Table, columns: dict, layout: bytes) -> pa.Table:
    """The table as layouts 2 and 3 wrote it: each kind's detail fields in the typed columns
    ``columns`` names (``detail_json``: tagged JSON texts, as dictionaries in layout 2)."""
    values: dict[str, list] = {}
    for row, record in enumerate(trace):
        names = list(columns[record.kind].values())
        fields = (record.detail,) if len(names) == 1 else record.detail
        for name, value in zip(names, fields, strict=True):
            json_text = name.startswith("detail_json")
            cell = codec.to_text(value) if json_text else value
            values.setdefault(name, [None] * len(trace))[row] = cell
    old = table.drop_columns(["detail"])
    kinds = {"json": pa.string(), "int": pa.int64(), "str": pa.string(), "bool": pa.bool_()}
    for name, cells in values.items():
        json_text = name.startswith("detail_json")
        array = pa.array(cells, kinds[name.split("_")[1]])
        if json_text and layout == b"2":
            array = array.dictionary_encode()
        encoding = {b"winviz.encoding": b"json" if json_text else b"plain"}
        old = old.append_column(pa.field(name, array.type, metadata=encoding), array)
    meta = {**table.schema.metadata, b"winviz.file_layout": layout}
    meta[b"winviz.detail_columns"] = json.dumps(columns).encode()
    return old.replace_schema_metadata(meta)


@pytest.mark.parametrize("layout", [b"2", b"3"])
@pytest.mark.parametrize("make", [_session_job, _odd_values_job])
def test_a_file_of_typed_detail_columns_is_converted_exactly(make, layout, tmp_path: Path) -> None:
    """Layouts 2 and 3 kept each detail field in a column of its values' type; such a file
    is read (by a converter) as exactly as one of today's layout."""
    trace = make()
    table = pq.read_table(trace.save(tmp_path / "v4.parquet"))
    if make is _session_job:
        columns = SESSION_DETAIL_COLUMNS
    else:  # every field as JSON text, the n-th of a kind in detail_json_n
        columns = {
            r.kind: {f: f"detail_json_{i}" for i, f in enumerate(r.details(), 1)} for r in trace
        }
    path = _rewrite(tmp_path / "old.parquet", _typed_layout(trace, table, columns, layout))
    assert "detail" not in pq.read_table(path).column_names
    back = wv.load_trace(path)
    assert back.to_json() == trace.to_json()
    assert [repr(r.detail) for r in back] == [repr(r.detail) for r in trace]  # (NaN: not ==)
    assert back.to_pandas().astype(str).equals(trace.to_pandas().astype(str))


def test_a_saved_file_opens_without_winviz(tmp_path: Path) -> None:
    trace = _session_job()
    table = pq.read_table(trace.save(tmp_path / "run.parquet"))
    assert table.column_names == [
        "seq",
        "kind",
        "proc_time",
        "watermark",
        "operator",
        "key",
        "window_start",
        "window_end",
        "window",
        "ts",
        "detail",
    ]
    assert table.schema.metadata[b"winviz.file_layout"] == b"4"
    assert b"winviz.detail_columns" not in table.schema.metadata
    frame = table.to_pandas()
    assert frame["kind"].astype(str).tolist() == [r.kind for r in trace]
    # each record's detail as tagged JSON text, a tuple of its fields, from the one codec
    assert frame["detail"].tolist() == [codec.to_text(r.detail) for r in trace]
    fired = frame[frame["kind"] == "fired"]
    assert fired["window_start"].tolist() == [r.window.start for r in trace.records("fired")]
    assert fired["detail"].tolist()[:2] == [
        '{"$tuple":[1,0,"on_time",null]}',
        '{"$tuple":[2,0,"on_time",null]}',
    ]
    timers = frame[frame["kind"] == "timer_registered"]
    assert timers["detail"].iloc[0] == '{"$tuple":["event",{"$window":[1000,3500]},false]}'
    arrival = frame[frame["kind"] == "arrival"].iloc[0]
    assert json.loads(arrival["detail"]) == {"$tuple": [{"$tuple": ["a", 1_000]}, 0]}
    assert table.schema.metadata[b"winviz.schema_version"] == str(wv.SCHEMA_VERSION).encode()


def test_int_columns_are_written_as_deltas_and_texts_as_dictionaries(tmp_path: Path) -> None:
    trace = _session_job()
    meta = pq.ParquetFile(trace.save(tmp_path / "run.parquet")).metadata
    assert meta.num_row_groups == 1
    chunks = {
        meta.schema.column(i).name: meta.row_group(0).column(i) for i in range(meta.num_columns)
    }
    # (the watermark plain: its first value, Long.MIN_VALUE, would make its deltas wide)
    assert "DELTA_BINARY_PACKED" not in chunks["watermark"].encodings
    for name in ("seq", "proc_time", "window_start", "window_end", "ts"):
        assert "DELTA_BINARY_PACKED" in chunks[name].encodings, (name, chunks[name].encodings)
        assert not chunks[name].has_dictionary_page, name
    for name in ("kind", "operator", "key", "window"):
        assert chunks[name].has_dictionary_page, name
        assert "RLE_DICTIONARY" in chunks[name].encodings, (name, chunks[name].encodings)
    # the detail texts plain (mostly distinct: an element payload per event)
    assert not chunks["detail"].has_dictionary_page
    assert "PLAIN" in chunks["detail"].encodings, chunks["detail"].encodings
    assert {c.compression for c in chunks.values()} == {"SNAPPY"}


def _rewrite(path: Path, table: pa.Table) -> Path:
    pq.write_table(table, path)
    return path


def test_files_that_are_not_traces_are_refused_naming_the_file(tmp_path: Path) -> None:
    trace = _session_job()
    table = pq.read_table(trace.save(tmp_path / "good.parquet"))
    meta = table.schema.metadata
    old = _typed_layout(trace, table, SESSION_DETAIL_COLUMNS, b"3")
    old_meta = old.schema.metadata
    less = {k: v for k, v in SESSION_DETAIL_COLUMNS.items() if k != "arrival"}
    cases = {
        tmp_path / "missing.parquet": "no such trace file",
        tmp_path / "junk.parquet": "not a readable Parquet file",
        _rewrite(
            tmp_path / "plain.parquet", table.replace_schema_metadata({})
        ): "not a winviz trace file",
        _rewrite(
            tmp_path / "v9.parquet",
            table.replace_schema_metadata(
                {b"winviz.format": b"winviz-trace", b"winviz.schema_version": b"9"}
            ),
        ): "trace schema version '9'; this winviz reads schema version 1",
        _rewrite(
            tmp_path / "layout1.parquet",
            table.replace_schema_metadata(
                {k: v for k, v in meta.items() if k != b"winviz.file_layout"}
            ),
        ): "trace file layout version '1'; this winviz reads layout version 4 (and converts 2 "
        "and 3; save the trace again with this winviz)",
        _rewrite(
            tmp_path / "nodetail.parquet",
            table.drop_columns(["detail"]).replace_schema_metadata(meta),
        ): "the column 'detail' is missing",
        _rewrite(
            tmp_path / "nolayout.parquet",
            old.replace_schema_metadata(
                {k: v for k, v in old_meta.items() if k != b"winviz.detail_columns"}
            ),
        ): "damaged trace file: the metadata's winviz.detail_columns is missing or not {kind: "
        "{field: column}}",
        _rewrite(
            tmp_path / "badlayout.parquet",
            old.replace_schema_metadata({**old_meta, b"winviz.detail_columns": b'["detail_json"]'}),
        ): "damaged trace file: the metadata's winviz.detail_columns is missing or not {kind: "
        "{field: column}}",
        _rewrite(
            tmp_path / "noarrival.parquet",
            old.replace_schema_metadata({**old_meta, b"winviz.detail_columns": json.dumps(less)}),
        ): "winviz.detail_columns names no columns for the 'arrival' records' detail fields "
        "['value', 'index']",
        _rewrite(
            tmp_path / "nocolumn.parquet",
            old.drop_columns(["detail_bool"]).replace_schema_metadata(old_meta),
        ): "the 'timer_registered' records' detail column 'detail_bool' is missing",
        _rewrite(
            tmp_path / "nokind.parquet",
            table.drop_columns(["kind"]).replace_schema_metadata(table.schema.metadata),
        ): "the column 'kind' is missing",
    }
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 this is not parquet")
    for path, words in cases.items():
        with pytest.raises(wv.TraceFileError) as err:
            wv.load_trace(path).records()  # (a detail column is read when first read)
        assert str(path) in str(err.value) and words in str(err.value), str(err.value)


def test_a_dictionary_code_out_of_range_is_refused_naming_record_and_column() -> None:
    """A code past its column's dictionary (a damaged file; pyarrow itself may crash writing
    one, so the column is made in memory) is refused when the column is read, never decoded
    into an IndexError or another record's value (``load_trace`` makes it a TraceFileError
    naming the file, as every ValueError of a column's first read)."""
    dictionary = pa.array(["source", "window"])
    for codes, bad in (
        ([0, 1, 2, 0], "record 2's 'operator' is code 2"),
        ([1, -1], "record 1's 'operator' is code -1"),
    ):
        column = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), dictionary, safe=False)
        table = pa.table({"operator": column})
        with pytest.raises(ValueError) as err:
            read_file._coded(table, "operator")
        assert str(err.value) == f"{bad} of a dictionary of 2 values; expected 0 to 1"
    column = pa.DictionaryArray.from_arrays(pa.array([1, None, 0], pa.int32()), dictionary)
    coded = read_file._coded(pa.table({"operator": column}), "operator")
    assert (coded.codes.tolist(), coded.values) == ([1, 2, 0], ["source", "window", None])


def test_a_crafted_detail_is_data_never_code(tmp_path: Path) -> None:
    good = _session_job().save(tmp_path / "good.parquet")
    table = pq.read_table(good)
    values = table.column("detail").combine_chunks()
    hostile = [
        '{"$text":"__import__(\'os\').system(\'touch pwned\')","$type":"os.system",'
        '"$json":"\\"x\\""}',
        '{"$reduce":["os.system","touch pwned"]}',
    ]
    for i, text in enumerate(hostile):
        texts = values.to_pylist()
        texts[1] = text  # the first element record's value
        column = table.column_names.index("detail")
        crafted = table.set_column(column, table.schema.field(column), pa.array(texts))
        path = _rewrite(tmp_path / f"crafted{i}.parquet", crafted)
        if i == 0:  # a tagged text stays text
            value = wv.load_trace(path)[1].detail
            assert isinstance(value, OpaqueValue) and value.type_name == "os.system"
        else:  # an unknown tag is refused when the details are first read, naming the file
            back = wv.load_trace(path)  # the details are built when first read
            assert back.kinds() == _session_job().kinds()
            with pytest.raises(wv.TraceFileError, match=r"damaged trace file.*unknown tag") as err:
                back.records("element")
            assert str(path) in str(err.value)
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


def test_a_hostile_trace_round_trips_and_charts_the_same(tmp_path: Path) -> None:
    """Issue 16: a trace file is untrusted input. The hostile job's trace (markup, script and
    quote payloads as keys, values, operator and sink names and tag ids) saves and loads back
    exactly, and the loaded trace draws the very same chart as the original."""
    import hostile_job as hj  # tests/hostile_job.py (tests/conftest.py puts it on the path)

    from winviz import viz

    trace = hj.run().trace
    back = wv.load_trace(trace.save(tmp_path / "hostile.parquet"))
    assert back.to_json() == trace.to_json()
    assert set(back.operators()) == set(trace.operators())
    assert any(hj.SCRIPT in op for op in back.operators())
    assert viz.timeline(back).to_dict() == viz.timeline(trace).to_dict()


def test_bad_paths_are_refused_clearly(tmp_path: Path) -> None:
    trace = _session_job()
    with pytest.raises(TypeError, match=r"path None: expected a str or pathlib\.Path"):
        trace.save(None)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"value 3: load_trace\(\) takes the path of a trace file, not int"
    ):
        wv.load_trace(3)  # type: ignore[arg-type]
    target = tmp_path / "no" / "such" / "dir" / "run.parquet"
    with pytest.raises(wv.TraceFileError, match="cannot write the trace file there") as err:
        trace.save(target)
    assert str(target) in str(err.value)


def test_each_records_detail_is_the_tagged_json_text_of_its_value(tmp_path: Path) -> None:
    """Whatever its fields' types (ints beyond Java's long, None on some or every record, a
    kind the schema lacks with a dict), a record's detail is one text, the codec's; all of it
    round-trips exactly."""
    trace = Trace()
    trace.writer.emit("custom_kind", 1, None, "op", None, None, None, {"a": (1, 2)})
    trace.writer.emit("fired", 2, 3, "w", "k", None, 4, (None, 0, "on_time", 3))
    trace.writer.emit("fired", 2, 3, "w", "k", None, 4, (None, 1, "late", None))
    trace.writer.emit("cleanup", 2, 3, "w", "k", None, 4, 2**70)
    trace.writer.emit("cleanup", 2, 3, "w", "k", None, 4, None)
    trace.writer.emit("trigger", 2, 3, "w", "k", None, 4, ("on_element", None))
    path = trace.save(tmp_path / "odd.parquet")
    table = pq.read_table(path)
    assert table.column("detail").to_pylist() == [
        '{"a":{"$tuple":[1,2]}}',  # a dict of string keys: a JSON object
        '{"$tuple":[null,0,"on_time",3]}',
        '{"$tuple":[null,1,"late",null]}',
        "1180591620717411303424",
        "null",  # None: the text null, not a missing value
        '{"$tuple":["on_element",null]}',
    ]
    back = wv.load_trace(path)
    assert back.to_json() == trace.to_json()
    assert [r.detail for r in back] == [r.detail for r in trace]
    assert [type(r.detail) for r in back] == [type(r.detail) for r in trace]
