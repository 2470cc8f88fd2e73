"""The lessons' datasets, validated row by row (``DatasetError`` names file, line and field), times
as epoch ms: ``late_data()`` (seed 002, China time), ``clickstream()``
(``data/generate_clickstream.py``) and ``seattle_temps()`` (2010 NOAA hourly readings from
``vega_datasets``, with seeded arrival delays). I/O: the engine core never imports it."""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from winviz.errors import ArgumentTypeError, InputError
from winviz.time import MAX, MIN, TimestampNormalizer, count_arg, duration_at_least, format_ms

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


MISSING: Any = type("Missing", (), {"__repr__": lambda _: "<missing>"})()
"""A ``DatasetError``'s value when the row has no such field."""


class DatasetError(InputError):
    """A malformed row: names the file, the line, the field and its value, once each; a field
    the row lacks (``MISSING``): the record's index too (``index``, from 0) and what it needs."""

    def __init__(
        self,
        path: str | Path,
        line: int,
        field: str,
        value: Any,
        expected: str,
        record: int | None = None,
    ) -> None:
        where = f"{Path(path).name}, line {line}"
        if value is MISSING:
            where += f" (record {record}): field {field!r} is missing (expected {expected})"
            super().__init__(where)
        else:
            super().__init__(f"{where}: field {field!r} = {value!r} is not {expected}")
        self.path, self.line, self.index = str(path), line, record
        self.field, self.value = field, value


class DatasetFileError(DatasetError, FileNotFoundError):
    """A dataset file that is not there (``errno`` ENOENT), whose folder ``data_dir`` is no
    folder (ENOTDIR) or that is a folder (EISDIR): names the path looked at and the folder it was
    looked for in. A ``FileNotFoundError`` too, with ``filename`` and ``errno`` set as ``open``
    sets them."""

    def __init__(self, path: Path, data_dir: str | Path | None, code: int = errno.ENOENT) -> None:
        problem = {
            errno.ENOTDIR: f": {str(path.parent)!r} is not a folder",
            errno.EISDIR: ": it is a folder",
        }.get(code, "")
        InputError.__init__(
            self,
            f"no file {str(path)!r}{problem}",
            field="data_dir",
            value=None if data_dir is None else str(data_dir),
            expected=f"a folder holding {path.name}; data_dir=None reads the kit's data "
            f"folder {str(DATA_DIR)!r}",
        )
        self.path, self.line = str(path), None
        self.errno, self.strerror, self.filename = code, None, str(path)

    def __str__(self) -> str:
        """The message (``OSError`` would show ``[Errno 2] None: path`` instead)."""
        return str(self.args[0])


def _path(name: str, data_dir: str | Path | None) -> Path:
    if data_dir is not None and not isinstance(data_dir, (str, Path)):
        raise ArgumentTypeError(
            "data_dir must be a folder's path",
            field="data_dir",
            value=data_dir,
            expected="a str or pathlib.Path (or None: the kit's data folder)",
        )
    return Path(data_dir or DATA_DIR) / name


def _text(path: Path, data_dir: str | Path | None = None) -> str:
    """The file's text; a path that is no file raises ``DatasetFileError`` naming it, a byte
    that is not UTF-8 ``DatasetError`` naming its line."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
        raise DatasetFileError(path, data_dir, exc.errno) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DatasetError(path, line, "<text>", data[exc.start : exc.end], "UTF-8 text") from None


_LATE_FIELDS = {
    "id": "an integer",
    "createTime": "a time like '2019-08-24 17:51:44.152'",
    "amt": "a decimal number",
}
"""Each field of a seed 002 record and what it must be."""


def late_data(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Seed 002's records: ``{"id": int, "createTime": str, "amt": float, "ts": ms}``."""
    path = _path("seed_002_late_data.jsonl", data_dir)
    to_ms = TimestampNormalizer("Asia/Shanghai")
    rows = []
    for line_no, line in enumerate(_text(path, data_dir).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            raise DatasetError(path, line_no, "<json>", line, "a JSON object") from None
        if not isinstance(raw, dict):
            raise DatasetError(path, line_no, "<json>", raw, "a JSON object (a mapping)")
        for field, expected in _LATE_FIELDS.items():
            if field not in raw:
                raise DatasetError(path, line_no, field, MISSING, expected, len(rows))
        rid, created, amount = raw["id"], raw["createTime"], raw["amt"]
        if not isinstance(rid, int) or isinstance(rid, bool):
            raise DatasetError(path, line_no, "id", rid, _LATE_FIELDS["id"])
        try:
            ts = to_ms(created, index=line_no, field_name="createTime")
        except InputError:
            expected = _LATE_FIELDS["createTime"]
            raise DatasetError(path, line_no, "createTime", created, expected) from None
        try:
            if isinstance(amount, bool):  # float(True) would be 1.0
                raise TypeError
            amt = float(amount)
        except (TypeError, ValueError):
            raise DatasetError(path, line_no, "amt", amount, _LATE_FIELDS["amt"]) from None
        if not math.isfinite(amt):  # float() reads "nan" and "inf" too
            raise DatasetError(path, line_no, "amt", amount, "a finite decimal number")
        rows.append({"id": rid, "createTime": created, "amt": amt, "ts": ts})
    return rows


@dataclass(frozen=True)
class Click:
    """One click of the clickstream."""

    user: str
    page: str
    event_time: int
    arrival_time: int
    partition: int


def clickstream(data_dir: str | Path | None = None) -> list[Click]:
    """The clicks in arrival order (see ``data/generate_clickstream.py``)."""
    path = _path("clickstream.csv", data_dir)
    clicks = []
    with io.StringIO(_text(path, data_dir), newline="") as f:
        reader = csv.DictReader(f)
        expected = ["user", "page", "event_time", "arrival_time", "partition"]
        if reader.fieldnames != expected:
            raise DatasetError(path, 1, "<header>", reader.fieldnames, f"the columns {expected}")
        for line_no, row in enumerate(reader, start=2):
            if None in row:  # more values than the header has columns
                raise DatasetError(
                    path, line_no, "<row>", row[None], f"one value per column of {expected}"
                )
            for field in expected:  # fewer values: the columns left are None
                if row[field] is None:
                    need = f"one value per column of {expected}"
                    raise DatasetError(path, line_no, field, MISSING, need, len(clicks))
            values = {}
            for field in ("event_time", "arrival_time", "partition"):
                try:
                    values[field] = int(row[field])
                except (TypeError, ValueError):
                    raise DatasetError(path, line_no, field, row[field], "an integer") from None
                if not MIN <= values[field] <= MAX:
                    raise DatasetError(
                        path, line_no, field, row[field], "an integer in Java's long range (ms)"
                    )
            if values["partition"] not in (0, 1):
                raise DatasetError(path, line_no, "partition", row["partition"], "0 or 1")
            if not row["user"]:
                raise DatasetError(path, line_no, "user", row["user"], "a user id")
            clicks.append(Click(row["user"], row["page"], **values))
    for i in range(1, len(clicks)):
        if clicks[i].arrival_time < clicks[i - 1].arrival_time:
            raise DatasetError(
                path,
                i + 2,
                "arrival_time",
                clicks[i].arrival_time,
                "in arrival order (not before the previous row's)",
            )
    return clicks


def seattle_temps(
    *, mean_delay: int = 2_000, seed: int = 7, limit: int | None = None
) -> list[dict[str, Any]]:
    """Hourly readings ``{"ts": ms, "temp": °F, "arrival_time": ms}``: each reading arrives
    after a seeded random delay (exponential, ``mean_delay`` ms), in arrival order.
    ``limit`` (an int >= 0, or None for all) keeps the first readings."""
    mean_delay = duration_at_least(mean_delay, 0, "mean_delay", "mean_delay must not be negative")
    if limit is not None:
        limit = count_arg(limit, what="limit", minimum=0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArgumentTypeError("seed must be an int", field="seed", value=seed, expected="an int")
    name = "seattle-temps.csv"
    source = resources.files("vega_datasets") / "_data" / name
    to_ms = TimestampNormalizer("America/Los_Angeles")
    rnd = random.Random(seed)
    rows = []
    with source.open() as f:
        reader = csv.DictReader(f)
        for line_no, row in enumerate(reader, start=2):
            if limit is not None and len(rows) >= limit:
                break
            try:
                ts = to_ms(row["date"].replace("/", "-"), index=line_no, field_name="date")
            except InputError:
                raise DatasetError(
                    name, line_no, "date", row["date"], "a time like '2010/01/01 00:00'"
                ) from None
            try:
                temp = float(row["temp"])
            except (TypeError, ValueError):
                raise DatasetError(name, line_no, "temp", row["temp"], "a number") from None
            if not math.isfinite(temp):
                raise DatasetError(name, line_no, "temp", row["temp"], "a finite number")
            delay = round(rnd.expovariate(1 / mean_delay)) if mean_delay > 0 else 0
            if ts + delay > MAX:  # a processing time is a Java long, as every time
                raise InputError(
                    f"{name}, line {line_no}: the reading at ts {ts} would arrive "
                    f"{delay} ms later, after MAX (Long.MAX_VALUE): mean_delay "
                    f"{format_ms(mean_delay)} is too large",
                    index=len(rows),
                    field="mean_delay",
                    expected="a mean_delay that keeps every arrival time (ts + delay) within "
                    "Java's long range, e.g. the default 2000 ms",
                )
            rows.append({"ts": ts, "temp": temp, "arrival_time": ts + delay})
    rows.sort(key=lambda r: r["arrival_time"])
    return rows
