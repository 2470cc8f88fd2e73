"""Reading a trace file (``winviz.load_trace``; layout: ``winviz.trace.files``): metadata and
column types checked, ``seq`` and ``kind`` decoded, each other column when first read (a
damaged one raises ``TraceFileError`` then). Layouts 2 and 3 (typed detail columns) are read
by a converter (``_typed_details``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from winviz.collector import paused
from winviz.errors import TraceFileError
from winviz.trace import codec
from winviz.trace.coded import CodedColumn, TimeColumn, object_array, rows_by_code
from winviz.trace.columns import TraceColumns
from winviz.trace.files import (
    COLUMNS,
    FORMAT,
    LAYOUT_VERSION,
    META_FORMAT,
    META_LAYOUT,
    META_VERSION,
    null_flags,
    valid_flags,
)
from winviz.trace.schema import SCHEMA_VERSION, detail_names
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow


def load(path: str | Path) -> TraceColumns:
    """The columns of a trace file (``TraceFileError`` says what is wrong when it is not one)."""
    path = Path(path)
    if path.is_dir():
        raise TraceFileError(f"{path}: a directory; expected a trace file written by Trace.save")
    if not path.is_file():
        raise TraceFileError(f"{path}: no such trace file")
    try:
        data = pa.py_buffer(path.read_bytes())
        file = pq.ParquetFile(pa.BufferReader(data))
        schema = file.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise TraceFileError(
            f"{path}: not a readable Parquet file ({exc}); expected a trace written by Trace.save"
        ) from exc
    meta = schema.metadata or {}
    if meta.get(META_FORMAT) != FORMAT.encode():
        raise TraceFileError(
            f"{path}: not a winviz trace file (its metadata lacks {META_FORMAT.decode()}="
            f"{FORMAT}); expected a trace written by Trace.save"
        )
    version = meta.get(META_VERSION, b"").decode(errors="replace")
    if version != str(SCHEMA_VERSION):
        raise TraceFileError(
            f"{path}: trace schema version {version!r}; this winviz reads schema version "
            f"{SCHEMA_VERSION}"
        )
    layout = meta.get(META_LAYOUT, b"1").decode(errors="replace")
    if layout not in (*_TYPED_LAYOUTS, str(LAYOUT_VERSION)):
        raise TraceFileError(
            f"{path}: trace file layout version {layout!r}; this winviz reads layout version "
            f"{LAYOUT_VERSION} (and converts {' and '.join(_TYPED_LAYOUTS)}; save the trace "
            "again with this winviz)"
        )
    typed = layout in _TYPED_LAYOUTS
    for name, want in COLUMNS.items():
        if typed and name == "detail":
            continue
        if name not in schema.names:
            raise TraceFileError(f"{path}: the column {name!r} is missing")
        got = schema.field(name).type
        if pa.types.is_dictionary(got):
            got = got.value_type
        if got != want:
            raise TraceFileError(f"{path}: column {name!r} is {got}; expected {want}")
    try:
        table = file.read(columns=["seq", "kind", "window_start", "window_end"], use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        raise TraceFileError(f"{path}: damaged trace file: {exc}") from exc
    try:
        _check_window_bounds(
            _whole(table.column("window_start")), _whole(table.column("window_end"))
        )
        with paused():  # many new objects, no cycles: no collection passes over them
            return _columns(table, file, path, typed)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise TraceFileError(f"{path}: damaged trace file: {exc}") from exc


def _columns(table: pa.Table, file: pq.ParquetFile, path: Path, typed: bool) -> TraceColumns:
    """The file's columns: ``seq`` and ``kind`` now, the others when first read."""
    kinds = _coded(table, "kind")
    if len(kinds.values) and kinds.values[-1] is None:  # (a null kind: coded last)
        raise ValueError(
            f"record {int(np.argmax(kinds.codes == len(kinds.values) - 1))} has no kind"
        )
    seq = _seq(_whole(table.column("seq")))
    held = [file]  # the file's bytes, dropped once every column is decoded
    pending = {*_BASE_READS, "detail"}

    def decode(name: str) -> Any:
        if name == "kind":
            return kinds
        try:
            with paused():  # many new objects, no cycles: no collection passes over them
                if name == "detail" and typed:
                    value = _typed_details(held[0], kinds)
                else:
                    read = held[0].read(columns=list(_BASE_READS[name]), use_threads=False)
                    value = _base_column(read, name)
        except (ValueError, TypeError, KeyError, IndexError, OSError, pa.ArrowException) as exc:
            raise TraceFileError(f"{path}: damaged trace file: {exc}") from exc
        pending.discard(name)
        if not pending:
            held.clear()
        return value

    return TraceColumns.pending(seq, decode)


# the file's columns each base field (but ``seq`` and ``kind``) is decoded from
_BASE_READS = {
    "proc_time": ("proc_time",),
    "watermark": ("watermark",),
    "operator": ("operator",),
    "key": ("key",),
    "window": ("window", "window_start", "window_end"),
    "ts": ("ts",),
    "detail": ("detail",),
}


def _base_column(table: pa.Table, name: str) -> Any:
    """Base field ``name``'s column from the file's columns for it (``_BASE_READS``)."""
    if name in ("proc_time", "watermark", "ts"):
        return _time(table, name)
    if name == "window":
        return _windows(
            _coded(table, "window"),
            _whole(table.column("window_start")),
            _whole(table.column("window_end")),
        )
    if name == "detail":  # each record's own value (records of one text share it)
        return _coded(table, name, texts=True).decode()
    return _coded(table, name, texts=name == "key")


# the layouts whose detail fields had typed columns, named per kind by ``_TYPED_COLUMNS``
_TYPED_LAYOUTS = ("2", "3")
_TYPED_COLUMNS = b"winviz.detail_columns"


def _typed_details(file: pq.ParquetFile, kinds: CodedColumn) -> np.ndarray:
    """Layouts 2 and 3 converted: each record's detail from its kind's columns, ``{kind:
    {field: column}}`` in the metadata, a column ``json``-encoded holding tagged JSON texts
    (value by value: a converter)."""
    schema = file.schema_arrow
    where = json.loads((schema.metadata or {}).get(_TYPED_COLUMNS, b"null"))
    if not isinstance(where, dict):
        raise ValueError(
            f"the metadata's {_TYPED_COLUMNS.decode()} is missing or not "
            "{kind: {field: column}}"
        )
    columns: dict[str, list[Any]] = {}  # each column's values, read when a kind names it
    details = np.empty(len(kinds.codes), dtype=object)
    for code, rows in rows_by_code(kinds.codes, len(kinds.values)):
        kind = kinds.values[code]
        names = where.get(kind)
        if not isinstance(names, dict) or list(names) != list(detail_names(kind)):
            raise ValueError(
                f"{_TYPED_COLUMNS.decode()} names no columns for the {kind!r} records' detail "
                f"fields {list(detail_names(kind))}"
            )
        for name in names.values():
            if name not in schema.names:
                raise ValueError(f"the {kind!r} records' detail column {name!r} is missing")
            if name not in columns:
                texts = (schema.field(name).metadata or {}).get(b"winviz.encoding") == b"json"
                values = file.read(columns=[name], use_threads=False).column(name).to_pylist()
                columns[name] = [
                    codec.from_text(v) if texts and v is not None else v for v in values
                ]
        fields = [[columns[name][row] for row in rows.tolist()] for name in names.values()]
        details[rows] = object_array(
            fields[0] if len(fields) == 1 else list(zip(*fields, strict=True))
        )
    return details


def _seq(column: pa.Array) -> np.ndarray:
    """The records' ``seq``, refused unless present and increasing."""
    if column.null_count:
        raise ValueError(f"record {int(np.argmax(null_flags(column)))} has no seq")
    seq = _raw_values(column, np.int64)
    if len(seq) > 1:
        down = np.flatnonzero(seq[1:] <= seq[:-1])
        if len(down):
            row = int(down[0]) + 1
            raise ValueError(
                f"record {row}: field 'seq' value {int(seq[row])} is not greater than record "
                f"{row - 1}'s {int(seq[row - 1])} (expected seq to increase from record to "
                "record, as a trace numbers them)"
            )
    return seq


def _check_window_bounds(starts: pa.Array, ends: pa.Array) -> None:
    """Every time window has a positive size (in Java's long arithmetic), else names one."""
    n = len(starts)
    if not n or len(ends) != n:
        return
    with np.errstate(over="ignore"):
        size = _raw_values(ends, np.int64) - _raw_values(starts, np.int64)  # wraps as a long
    bad = size <= 0
    if starts.null_count or ends.null_count:
        bad &= valid_flags(starts) & valid_flags(ends)
    if bad.any():
        row = int(np.argmax(bad))
        start, end = starts[row].as_py(), ends[row].as_py()
        raise ValueError(
            f"record {row}: field 'window_end' value {end} is not after window_start {start} "
            "(expected window_start < window_end: a time window [start, end) of positive size, "
            "end - start in Java's long arithmetic)"
        )


def decode_texts(texts: pa.Array) -> np.ndarray:
    """``codec.from_text`` of each text, as objects: all parsed by one ``json.loads`` of them
    joined by Arrow as one JSON array."""
    if texts.null_count:
        raise ValueError("a text in a dictionary is null; expected tagged JSON text")
    whole = pa.ListArray.from_arrays(pa.array([0, len(texts)], pa.int32()), texts)
    values = codec.from_array_text("[" + pc.binary_join(whole, ",")[0].as_py() + "]")
    if len(values) != len(texts):
        raise ValueError(f"{len(texts)} texts hold {len(values)} values; expected one each")
    return object_array(values)


def _decoded(texts: pa.Array, codes: np.ndarray, name: str) -> list[Any]:
    """``decode_texts`` of a column's distinct texts (``codes``: the records'); a text that is
    no trace value is refused naming the first record that has it."""
    try:
        return decode_texts(texts).tolist()
    except ValueError:
        for i, text in enumerate(texts.to_pylist()):
            try:
                codec.from_text(text)
            except (ValueError, TypeError) as exc:
                if (codes == i).any():
                    raise ValueError(
                        f"record {int(np.argmax(codes == i))}: field {name!r} value {text!r} "
                        f"is not a trace value ({exc}); expected tagged JSON text "
                        "(winviz.trace.codec)"
                    ) from None
        raise


def _whole(column: pa.ChunkedArray) -> pa.Array:
    """A column read from the file as one array (its one chunk itself: no copy)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _raw_values(array: pa.Array, dtype: type) -> np.ndarray:
    """The values buffer of a fixed-width array as numpy, without a copy (nulls unmasked)."""
    if array.type.bit_width != np.dtype(dtype).itemsize * 8:
        raise ValueError(f"expected {np.dtype(dtype).name} values, found {array.type}")
    buffer = array.buffers()[1]
    if buffer is None:
        return np.zeros(len(array), dtype=dtype)
    return np.frombuffer(buffer, dtype=dtype, count=array.offset + len(array))[array.offset :]


def _coded(table: pa.Table, name: str, *, texts: bool = False) -> CodedColumn:
    """A column of strings as codes into its distinct values (a null: None, appended), or
    (``texts``: ``key``, ``detail``) into the values its tagged JSON texts decode to, each
    distinct text decoded once (a null refused)."""
    column = _whole(table.column(name))
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    count = len(column.dictionary)
    codes = _raw_values(column.indices, np.int32)  # read-only, kept alive by the table
    if len(codes) and (codes.min() < 0 or codes.max() >= count):
        bad = int(np.argmax((codes < 0) | (codes >= count)))
        raise ValueError(
            f"record {bad}'s {name!r} is code {int(codes[bad])} of a dictionary of "
            f"{count} values; expected 0 to {count - 1}"
        )
    if texts:
        if column.null_count:
            raise ValueError(
                f"record {int(np.argmax(null_flags(column)))}: field {name!r} is null; "
                "expected tagged JSON text"
            )
        return CodedColumn(codes, _decoded(column.dictionary, codes, name))
    values = column.dictionary.to_pylist()
    if column.null_count:
        codes = codes.copy()
        codes[null_flags(column)] = len(values)
        values.append(None)
    return CodedColumn(codes, values)


def _time(table: pa.Table, name: str) -> TimeColumn:
    column = _whole(table.column(name))
    if not column.null_count:
        return TimeColumn(_raw_values(column, np.int64), np.ones(len(column), dtype=bool))
    present = valid_flags(column)
    values = _raw_values(column, np.int64)
    if values.flags.writeable:  # this table's own buffer (decoded for it): 0 put in place
        np.copyto(values, 0, where=~present)
    else:
        values = np.where(present, values, 0)  # 0 where absent
    return TimeColumn(values, present)


def _windows(kind: CodedColumn, starts: pa.Array, ends: pa.Array) -> CodedColumn:
    """Each record's window, coded (None and the global window first, then time windows)."""
    lookup = np.zeros(len(kind.values), dtype=np.int32)  # the code of each kind's window
    values: list[Any] = []
    time_code = -1
    for k, name in enumerate(kind.values):  # (a few: a pass each, no full-length scatter)
        if not (kind.codes == k).any():
            continue
        if name == "time":
            time_code = k
        elif name is None or name == "global":
            lookup[k] = len(values)
            values.append(None if name is None else GLOBAL_WINDOW)
        else:
            row = int(np.argmax(kind.codes == k))
            raise ValueError(f"record {row}: window {name!r}; expected 'time', 'global' or null")
    if time_code >= 0:  # the time windows' codes follow the others'
        lookup[time_code] = len(values)
    codes = lookup[kind.codes]
    if time_code < 0:
        return CodedColumn(codes, values)
    is_time = kind.codes == time_code
    missing = is_time & ~(valid_flags(starts) & valid_flags(ends))
    if missing.any():
        row = int(np.argmax(missing))
        raise ValueError(f"record {row}: a time window without window_start / window_end")
    # each time window's (start, end) as one 16-byte value, numbered by Arrow's hash table
    n = len(is_time)
    pairs = np.empty((n, 2), dtype=np.int64)
    pairs[:, 0] = _raw_values(starts, np.int64)
    pairs[:, 1] = _raw_values(ends, np.int64)
    bitmap = pa.py_buffer(np.packbits(is_time, bitorder="little"))
    null_count = n - int(np.count_nonzero(is_time))
    encoded = pa.Array.from_buffers(
        pa.binary(16), n, [bitmap, pa.py_buffer(pairs)], null_count=null_count
    ).dictionary_encode()
    found = encoded.dictionary
    bounds = np.frombuffer(
        found.buffers()[1], dtype=np.int64, count=2 * (found.offset + len(found))
    )
    bounds = bounds[2 * found.offset :].reshape(-1, 2)
    # (``codes`` holds the time windows' first code on their records already)
    np.add(codes, _raw_values(encoded.indices, np.int32), out=codes, where=is_time)
    values.extend(map(TimeWindow, bounds[:, 0].tolist(), bounds[:, 1].tolist()))
    return CodedColumn(codes, values)


__all__ = ["load"]
