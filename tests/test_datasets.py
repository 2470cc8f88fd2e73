"""The lessons' datasets: exact contents and clear errors for malformed rows."""

from __future__ import annotations

import errno
import importlib.util
import itertools
from pathlib import Path

import pytest
from jobs import keyed_window

import winviz as wv
from winviz import datasets

DATA = Path(__file__).resolve().parent.parent / "data"


def test_late_data_has_the_seeds_records_and_times() -> None:
    rows = {r["id"]: r for r in datasets.late_data()}
    assert sorted(rows) == [890, 891, 892, 893]
    assert rows[891]["ts"] == 1566640304152  # 2019-08-24 17:51:44.152 China time
    assert rows[892]["ts"] == 1566640314152
    # the two watermarks the seed states are the timestamps of 890 and 893
    assert (rows[890]["ts"], rows[893]["ts"]) == (1566640294102, 1566652224102)


def test_seed_002_pipeline_sends_892_to_the_side_output() -> None:
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    (
        keyed_window(
            env,
            datasets.late_data(),
            wv.TumblingEventTimeWindows.of(wv.minutes(1)),
            wv.WatermarkStrategy.for_punctuated(lambda e, ts: ts).with_timestamp_assigner(
                lambda e, _: e["ts"]
            ),
            key=lambda e: "key",
            late=late,
            arrival_interval=1,
        )
        .process(lambda k, ctx, els, out: out.collect([e["id"] for e in els]))
        .sink_to("out")
    )
    result = env.execute()
    assert [r.value["id"] for r in result.side_outputs["late"]] == [892]
    assert result.outputs["out"][0].value == [890, 891]


def test_clickstream_file_is_what_the_seeded_generator_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen", DATA / "generate_clickstream.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    fresh = tmp_path / "clickstream.csv"
    gen.write(fresh, gen.generate())
    assert fresh.read_bytes() == (DATA / "clickstream.csv").read_bytes()


def test_clickstream_has_late_clicks_and_an_idle_partition() -> None:
    clicks = datasets.clickstream()
    assert len(clicks) == 531
    assert {c.user for c in clicks} == {"u1", "u2", "u3", "u4", "u5", "u6"}
    late = [c for c in clicks if c.arrival_time - c.event_time > 10_000]
    assert len(late) == 13
    out_of_order = sum(1 for a, b in itertools.pairwise(clicks) if b.event_time < a.event_time)
    assert out_of_order > 50
    start = 1_767_603_600_000
    assert max(c.event_time for c in clicks if c.partition == 1) < start + 6 * 60_000
    assert max(c.event_time for c in clicks if c.partition == 0) > start + 9 * 60_000


def test_seattle_temps_is_a_real_hourly_series_with_arrival_delays() -> None:
    rows = datasets.seattle_temps()
    assert len(rows) == 8759
    by_time = sorted(r["ts"] for r in rows)
    assert by_time[0] == 1262332800000  # 2010-01-01 00:00 Seattle time = 08:00 UTC
    gaps = [(a, b - a) for a, b in itertools.pairwise(by_time) if b - a != 3_600_000]
    # hourly in UTC, except where the clocks went back on 2010-11-07: the file has the
    # repeated local hour 01:00 only once, so one UTC hour (09:00Z) is missing
    assert gaps == [(1289116800000, 7_200_000)]
    assert all(r["arrival_time"] >= r["ts"] for r in rows)
    assert [r["arrival_time"] for r in rows] == sorted(r["arrival_time"] for r in rows)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "seed_002_late_data.jsonl",
            '{"id": 1, "createTime": "2019-08-24 17:51:44.152", '
            '"amt": "1.0"}\n{"id": 2, "createTime": "yesterday", "amt": "1"}\n',
            "seed_002_late_data.jsonl, line 2: field 'createTime' = 'yesterday'",
        ),
        (
            "seed_002_late_data.jsonl",
            '{"id": "x", "createTime": "2019-08-24 17:51:44", "amt": "1"}\n',
            "line 1: field 'id' = 'x' is not an integer",
        ),
        (
            "clickstream.csv",
            "user,page,event_time,arrival_time,partition\nu1,home,5,6,0\nu1,home,soon,7,0\n",
            "clickstream.csv, line 3: field 'event_time' = 'soon'",
        ),
        (
            "clickstream.csv",
            "user,page,event_time,arrival_time,partition\nu1,home,5,6,3\n",
            "line 2: field 'partition' = '3' is not 0 or 1",
        ),
    ],
)
def test_malformed_rows_name_file_line_and_field(tmp_path: Path, name, text, message) -> None:
    (tmp_path / name).write_text(text)
    loader = datasets.late_data if name.endswith("jsonl") else datasets.clickstream
    with pytest.raises(datasets.DatasetError) as err:
        loader(tmp_path)
    assert message in str(err.value)


def test_a_malformed_row_names_its_field_once(tmp_path: Path) -> None:
    (tmp_path / "clickstream.csv").write_text(
        "user,page,event_time,arrival_time,partition\n"
        "u1,home,5,6,0\nu1,home,6,7,0\nu1,cart,17676o3602000,8,1\n"
    )
    with pytest.raises(datasets.DatasetError) as err:
        datasets.clickstream(tmp_path)
    assert str(err.value) == (
        "clickstream.csv, line 4: field 'event_time' = '17676o3602000' is not an integer"
    )
    error = err.value
    assert (error.path, error.line, error.field, error.value) == (
        str(tmp_path / "clickstream.csv"),
        4,
        "event_time",
        "17676o3602000",
    )
    assert isinstance(error, ValueError) and isinstance(error, wv.InputError)


@pytest.mark.parametrize(
    ("loader", "name"),
    [(datasets.clickstream, "clickstream.csv"), (datasets.late_data, "seed_002_late_data.jsonl")],
)
def test_a_missing_dataset_file_names_the_path_and_the_folder_expected(loader, name) -> None:
    with pytest.raises(datasets.DatasetError) as err:
        loader("/nonexistent")
    assert str(err.value) == (
        f"field 'data_dir', value '/nonexistent': no file '/nonexistent/{name}' (expected a "
        f"folder holding {name}; data_dir=None reads the kit's data folder "
        f"{str(datasets.DATA_DIR)!r})"
    )
    error = err.value
    assert isinstance(error, FileNotFoundError) and isinstance(error, wv.InputError)
    assert (error.errno, error.filename, error.path) == (
        errno.ENOENT,
        f"/nonexistent/{name}",
        f"/nonexistent/{name}",
    )
    with pytest.raises(FileNotFoundError):  # old callers' except clauses still catch it
        loader(Path("/nonexistent"))


@pytest.mark.parametrize(
    ("loader", "name"),
    [(datasets.clickstream, "clickstream.csv"), (datasets.late_data, "seed_002_late_data.jsonl")],
)
def test_a_data_dir_that_is_a_file_or_a_dataset_that_is_a_folder_is_named(
    loader, name, tmp_path
) -> None:
    expected = (
        f"(expected a folder holding {name}; data_dir=None reads the kit's data folder "
        f"{str(datasets.DATA_DIR)!r})"
    )
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    with pytest.raises(datasets.DatasetFileError) as err:
        loader(a_file)
    assert str(err.value) == (
        f"field 'data_dir', value '{a_file}': no file '{a_file}/{name}': '{a_file}' is not a "
        f"folder {expected}"
    )
    assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, wv.InputError)
    assert (err.value.errno, err.value.filename) == (errno.ENOTDIR, f"{a_file}/{name}")
    (tmp_path / name).mkdir()
    with pytest.raises(datasets.DatasetFileError) as err:
        loader(str(tmp_path))
    assert str(err.value) == (
        f"field 'data_dir', value '{tmp_path}': no file '{tmp_path}/{name}': it is a folder "
        f"{expected}"
    )
    assert (err.value.errno, err.value.filename) == (errno.EISDIR, f"{tmp_path}/{name}")
