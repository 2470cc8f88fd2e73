"""The dataset loaders on damaged files: each bad row is a ``DatasetError`` naming the file,
the line, the field and the value — never a value read as another (``"amt": true`` was 1.0,
a row's extra value was dropped, an event time beyond Java's long was kept) and never a bare
``UnicodeDecodeError`` without its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from winviz import datasets
from winviz.datasets import DatasetError
from winviz.errors import ArgumentTypeError

HEADER = "user,page,event_time,arrival_time,partition\n"
LATE = "seed_002_late_data.jsonl"
GOOD_LATE = '{"id": 1, "createTime": "2019-08-24 17:51:44.152", "amt": 2.5}\n'


def _clicks(tmp_path: Path, body: bytes) -> Path:
    (tmp_path / "clickstream.csv").write_bytes(HEADER.encode() + body)
    return tmp_path


def test_a_late_data_amount_that_is_a_bool_is_refused(tmp_path: Path) -> None:
    (tmp_path / LATE).write_text(GOOD_LATE + GOOD_LATE.replace("2.5", "true"))
    with pytest.raises(DatasetError) as info:
        datasets.late_data(tmp_path)
    assert str(info.value).endswith(f"{LATE}, line 2: field 'amt' = True is not a decimal number")
    assert (info.value.line, info.value.field) == (2, "amt")


def test_a_click_row_with_more_values_than_columns_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        datasets.clickstream(_clicks(tmp_path, b"u,p,1,2,0\nu,p,3,4,1,9\n"))
    assert "clickstream.csv, line 3: field '<row>' = ['9'] is not one value per column" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("id", "an integer"),
        ("createTime", "a time like '2019-08-24 17:51:44.152'"),
        ("amt", "a decimal number"),
    ],
)
def test_a_late_data_record_without_a_key_says_the_key_is_missing(
    tmp_path: Path, field: str, expected: str
) -> None:
    """Not ``field 'amt' = None``: the key is absent (a blank line is no record)."""
    damaged = GOOD_LATE.replace(f'"{field}": ', '"other": ')
    (tmp_path / LATE).write_text(GOOD_LATE + "\n" + damaged)
    with pytest.raises(DatasetError) as info:
        datasets.late_data(tmp_path)
    assert str(info.value) == (
        f"{LATE}, line 3 (record 1): field {field!r} is missing (expected {expected})"
    )
    error = info.value
    assert (error.line, error.index, error.field, error.value) == (3, 1, field, datasets.MISSING)
    assert repr(error.value) == "<missing>"


def test_a_late_data_null_is_a_value_not_a_missing_key(tmp_path: Path) -> None:
    (tmp_path / LATE).write_text(GOOD_LATE.replace("2.5", "null"))
    with pytest.raises(DatasetError) as info:
        datasets.late_data(tmp_path)
    assert str(info.value) == f"{LATE}, line 1: field 'amt' = None is not a decimal number"


def test_a_click_row_with_fewer_values_than_columns_names_the_first_missing(
    tmp_path: Path,
) -> None:
    with pytest.raises(DatasetError) as info:
        datasets.clickstream(_clicks(tmp_path, b"u,p,1,2,0\nu,p,3\n"))
    assert str(info.value) == (
        "clickstream.csv, line 3 (record 1): field 'arrival_time' is missing (expected one "
        "value per column of ['user', 'page', 'event_time', 'arrival_time', 'partition'])"
    )
    assert (info.value.index, info.value.field) == (1, "arrival_time")


@pytest.mark.parametrize("field", ["event_time", "arrival_time"])
def test_a_click_time_beyond_javas_long_is_refused_with_its_line(
    tmp_path: Path, field: str
) -> None:
    row = {"event_time": "1", "arrival_time": "2"}
    row[field] = str(2**63)
    body = f"u,p,{row['event_time']},{row['arrival_time']},0\n".encode()
    with pytest.raises(DatasetError) as info:
        datasets.clickstream(_clicks(tmp_path, b"u,p,1,1,0\n" + body))
    assert str(info.value).endswith(
        f"clickstream.csv, line 3: field '{field}' = '{2**63}' is not an integer in Java's "
        "long range (ms)"
    )
    row[field] = str(2**63 - 1)
    if field == "event_time":  # the long's last value is a time
        body = f"u,p,{row['event_time']},{row['arrival_time']},0\n".encode()
        assert datasets.clickstream(_clicks(tmp_path, body))[0].event_time == 2**63 - 1


def test_a_byte_that_is_not_utf8_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        datasets.clickstream(_clicks(tmp_path, b"u,p,1,2,0\n\xff,p,1,2,0\n"))
    assert str(info.value).endswith(
        "clickstream.csv, line 3: field '<text>' = b'\\xff' is not UTF-8 text"
    )
    (tmp_path / LATE).write_bytes(GOOD_LATE.encode() * 2 + b'{"id": 3, "createTime": "\xe9"}\n')
    with pytest.raises(DatasetError, match=rf"{LATE}, line 3: field '<text>'"):
        datasets.late_data(tmp_path)


def test_a_data_dir_that_is_no_path_is_named() -> None:
    with pytest.raises(ArgumentTypeError, match=r"field 'data_dir', value 5"):
        datasets.late_data(5)  # type: ignore[arg-type]


def test_good_files_load_as_before(tmp_path: Path) -> None:
    (tmp_path / LATE).write_text(GOOD_LATE)
    assert datasets.late_data(tmp_path) == [
        {"id": 1, "createTime": "2019-08-24 17:51:44.152", "amt": 2.5, "ts": 1566640304152}
    ]
    clicks = datasets.clickstream(_clicks(tmp_path, b"u,p,1,2,0\r\nv,q,3,4,1\r\n"))
    assert [(c.user, c.page, c.event_time, c.arrival_time, c.partition) for c in clicks] == [
        ("u", "p", 1, 2, 0),
        ("v", "q", 3, 4, 1),
    ]
