"""Deterministic micro-batches: interval ``k`` of trigger interval ``I`` holds the records arriving
in ``[k*I, (k+1)*I)`` and runs at ``(k+1)*I`` (``Trigger.ProcessingTime(I)``; an empty one runs no
batch). Each is one JSON-lines file with an increasing mtime, the only order of Spark's
``FileStreamSource``; ``maxFilesPerTrigger=1`` makes a micro-batch read one file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from winviz.errors import InputError
from winviz.spark.spec import TwinSpec, is_ms
from winviz.time import TimestampNormalizer

# Spark's column names for the three fields of a row (the JSON files use them).
KEY, TS, VALUE, STREAM = "key", "ts", "value", "stream"
INDEX = "index"  # the record's input index, written to the files too (errors name it)
LEFT, RIGHT = 0, 1  # a join twin's sides: the ``stream`` of their rows
SIDE_NAMES = ("left", "right")
BASE_MTIME = 1_000_000_000  # seconds; file k gets BASE_MTIME + k
# Spark's TimestampType covers 0001-01-01 .. 9999-12-31 (microseconds in a long).
MIN_SPARK_MS, MAX_SPARK_MS = -62_135_596_800_000, 253_402_300_799_999


class BatchInputError(InputError):
    """A record that cannot go to Spark; names the micro-batch, the row in it and the input
    index."""

    def __init__(self, message: str, *, batch: int, row: int, index: int, **kw: Any) -> None:
        super().__init__(message, index=index, **kw)
        self.batch = batch
        self.row = row
        self.args = (f"micro-batch {batch}, row {row}: {self.args[0]}",)


@dataclass(frozen=True)
class InputBatch:
    """One micro-batch of input: trigger interval ``interval`` (its batch runs at
    ``proc_time``), the normalised rows (``key``, ``ts``, ``value``), their input indexes and
    arrival times."""

    seq: int  # position among the non-empty batches (0, 1, ...)
    interval: int | None
    proc_time: int
    rows: tuple[dict[str, Any], ...]
    indexes: tuple[int, ...]
    arrivals: tuple[int, ...]


NO_DATA = InputBatch(-1, None, 0, (), (), ())
"""A no-data micro-batch's input: nothing (Spark runs one after a batch raised the watermark)."""


def form_batches(
    records: Sequence[Any], arrival_times: Sequence[int], spec: TwinSpec
) -> list[InputBatch]:
    """Cut ``records`` into micro-batches by arrival time (empty intervals skipped) and check
    every row; a bad row raises ``BatchInputError`` naming its batch and row."""
    if len(arrival_times) != len(records):
        raise InputError(
            f"{len(arrival_times)} arrival times for {len(records)} records",
            field="arrival_times",
            expected="one arrival time per record",
        )
    by_interval: dict[int, list[int]] = {}
    for i, arrival in enumerate(arrival_times):
        if not is_ms(arrival):
            raise InputError("must be an int (ms)", index=i, field="arrival_time", value=arrival)
        by_interval.setdefault(arrival // spec.trigger_interval, []).append(i)
    norm = TimestampNormalizer(None)
    batches = []
    for seq, k in enumerate(sorted(by_interval)):
        idx = by_interval[k]
        rows = tuple(_row(records[i], spec, norm, seq, j, i) for j, i in enumerate(idx))
        proc_time = (k + 1) * spec.trigger_interval
        arrivals = tuple(arrival_times[i] for i in idx)
        batches.append(InputBatch(seq, k, proc_time, rows, tuple(idx), arrivals))
    return batches


def field_of(record: Any, name: str | int) -> Any:
    """A record's field: a dict key, or a tuple/list index (``KeyError``: none)."""
    if isinstance(record, Mapping):
        return record[name]
    if isinstance(name, int) and isinstance(record, Sequence) and not isinstance(record, str):
        return record[name]
    raise KeyError(name)


def _row(
    record: Any, spec: TwinSpec, norm: TimestampNormalizer, batch: int, row: int, index: int
) -> dict[str, Any]:
    """``{key, ts, value, stream}`` of one record, checked."""
    where = {"batch": batch, "row": row, "index": index}
    fields = {KEY: spec.key_field, TS: spec.ts_field}
    if spec.value_field is not None:
        fields[VALUE] = spec.value_field
    if spec.stream_field is not None:
        fields[STREAM] = spec.stream_field
    out: dict[str, Any] = {}
    for column, name in fields.items():
        try:
            out[column] = field_of(record, name)
        except (KeyError, IndexError, TypeError):
            raise BatchInputError(
                f"no field {name!r} in {record!r}", field=str(name), **where
            ) from None

    key = out[KEY]
    if not isinstance(key, (str, int)) or isinstance(key, bool):
        raise _bad("a key must be a str or an int", where, fields[KEY], key)
    try:
        out[TS] = norm(out[TS], field_name=str(spec.ts_field))
    except InputError as exc:
        raise BatchInputError(f"bad event time: {exc}", **where) from None
    if not MIN_SPARK_MS <= out[TS] <= MAX_SPARK_MS:
        message = "event time outside Spark's TimestampType range (years 0001-9999)"
        raise _bad(message, where, fields[TS], out[TS])
    stream = out.get(STREAM)
    if STREAM in out and (not is_ms(stream) or not 0 <= stream < len(spec.delays)):
        message, expected = (
            "a stream must be the index of one of the union's streams",
            f"an int in 0..{len(spec.delays) - 1}",
        )
        raise _bad(message, where, fields[STREAM], stream, expected)
    value = out.get(VALUE)
    if VALUE in out and (
        not isinstance(value, (int, float)) or isinstance(value, bool) or value != value
    ):
        raise _bad("a value must be an int or a float (not NaN)", where, fields[VALUE], value)
    return out


def _bad(
    message: str, where: dict[str, int], field: Any, value: Any, expected: str | None = None
) -> BatchInputError:
    return BatchInputError(message, field=str(field), value=value, expected=expected, **where)


def write_batch_file(batch: InputBatch, watched: Path, staging: Path) -> Path:
    """Write ``batch`` as JSON lines (each row with its input ``index``; queries that do not
    read it ignore it) into ``watched`` atomically, with mtime
    ``BASE_MTIME + batch.seq`` (the file source's only ordering)."""
    name = f"batch-{batch.seq:06d}.json"
    tmp = staging / name
    with tmp.open("w") as f:
        for r, index in zip(batch.rows, batch.indexes, strict=True):
            f.write(json.dumps({**r, INDEX: index}) + "\n")
    mtime = BASE_MTIME + batch.seq
    os.utime(tmp, (mtime, mtime))
    final = watched / name
    os.replace(tmp, final)
    return final
