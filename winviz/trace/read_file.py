"""Reading a trace file (``winviz.load_trace``; layout: ``winviz.trace.files``): metadata and
column types checked, ``seq`` and ``kind`` decoded, each other column when first read (a
damaged one raises ``TraceFileError`` then).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from winviz.collector import paused
from winviz.errors import TraceFileError
from winviz.trace import codec
from winviz.trace.coded import (
    CodedColumn,
    TimeColumn,
    first_of_each,
    object_array,
    rows_by_code,
)
from winviz.trace.columns import TraceColumns
from winviz.trace.files import (
    COLUMNS,
    ENCODING,
    FORMAT,
    META_COLUMNS,
    META_FORMAT,
    META_LAYOUT,
    META_VERSION,
    READS_LAYOUTS,
    bits_at,
    null_flags,
    nulls_at,
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
    if layout not in READS_LAYOUTS:
        raise TraceFileError(
            f"{path}: trace file layout version {layout!r}; this winviz reads layout versions "
            f"{' and '.join(READS_LAYOUTS)} (save the trace again with this winviz)"
        )
    for name, want in COLUMNS.items():
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
            return _columns(table, schema, file, path)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise TraceFileError(f"{path}: damaged trace file: {exc}") from exc


def _columns(table: pa.Table, schema: pa.Schema, file: pq.ParquetFile, path: Path) -> TraceColumns:
    """The file's columns: ``seq`` and ``kind`` now, the others when first read."""
    kinds = _coded(table, "kind")
    layout = _layout_of(schema)
    used = np.zeros(len(kinds.values), dtype=bool)
    used[kinds.codes] = True
    needed: dict[str, bytes] = {}
    for k, kind in enumerate(kinds.values):
        if not used[k]:
            continue
        if kind is None:
            raise ValueError(f"record {int(np.argmax(kinds.codes == k))} has no kind")
        where = layout.get(kind)
        if where is None or list(where) != list(detail_names(kind)):
            raise ValueError(
                f"{META_COLUMNS.decode()} names no columns for the {kind!r} records' detail "
                f"fields {list(detail_names(kind))}"
            )
        for name in where.values():
            if name not in schema.names:
                raise ValueError(f"the {kind!r} records' detail column {name!r} is missing")
            if name not in needed:
                needed[name] = _check_detail(schema, name)
    seq = _seq(_whole(table.column("seq")))
    held = [file]  # the file's bytes, dropped once every column is decoded
    pending = {*_BASE_READS, "detail"}

    def decode(name: str) -> Any:
        if name == "kind":
            return kinds
        try:
            with paused():  # many new objects, no cycles: no collection passes over them
                if name == "detail":
                    columns = held[0].read(columns=list(needed), use_threads=False)
                    checked = {name: (columns.column(name), needed[name]) for name in needed}
                    per_kind = rows_by_code(kinds.codes, len(kinds.values))
                    value = _details(len(seq), checked, per_kind, kinds.values, layout)
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
    coded = _coded(table, name)
    if name == "key":  # tagged JSON texts
        return CodedColumn(coded.codes, decode_texts(pa.array(coded.values, pa.string())).tolist())
    return coded


def _details(
    n: int,
    table: dict[str, tuple[pa.ChunkedArray, bytes]],
    per_kind: list[tuple[int, np.ndarray]],
    kinds: list[Any],
    layout: dict[str, dict[str, str]],
) -> np.ndarray:
    """Every record's detail, from the detail columns kind by kind (``per_kind``: code, rows)."""
    details = np.empty(n, dtype=object)
    columns: dict[str, _DetailColumn] = {}
    for code, rows in per_kind:
        names = list(layout[kinds[code]].values())
        for name in names:
            if name not in columns:
                columns[name] = _detail_values(table[name])
        if len(names) == 1:
            details[rows] = columns[names[0]].values(rows)
        else:
            fields = [columns[name] for name in names]
            if _mostly_distinct(fields, rows):  # each record its own tuple (as ``arrival``)
                parts = [f.values(rows).tolist() for f in fields]
                details[rows] = object_array(list(zip(*parts, strict=True)))
                continue
            # one tuple per distinct combination of the fields' values, shared by its rows
            # (as the engine shares a window's timer details)
            group, first = _groups([f.codes(rows) for f in fields])
            parts = [f.values(rows[first]).tolist() for f in fields]
            details[rows] = object_array(list(zip(*parts, strict=True)))[group]
    return details


def _layout_of(schema: pa.Schema) -> dict[str, dict[str, str]]:
    """The file's ``{kind: {field: column}}`` (its metadata, read as JSON data)."""
    text = (schema.metadata or {}).get(META_COLUMNS)
    if text is None:
        raise ValueError(f"the metadata lacks {META_COLUMNS.decode()}")
    layout = json.loads(text)
    if not isinstance(layout, dict) or not all(
        isinstance(where, dict) and all(isinstance(c, str) for c in where.values())
        for where in layout.values()
    ):
        raise ValueError(f"{META_COLUMNS.decode()} is not {{kind: {{field: column}}}}")
    return layout


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


class _DetailColumn:
    """A detail column: ``values(rows)`` (objects, None where null) and ``codes(rows)``
    (equal where the values are, -1 where null)."""

    def __init__(self, column: pa.Array, table_values: np.ndarray, codes: np.ndarray) -> None:
        self.column, self.table_values, self._codes = column, table_values, codes

    def codes(self, rows: np.ndarray) -> np.ndarray:
        codes = self._codes[rows].astype(np.int64)
        codes[nulls_at(self.column, rows)] = -1  # whatever a null slot holds
        return codes

    def values(self, rows: np.ndarray) -> np.ndarray:
        codes = self.codes(rows)
        if not len(self.table_values):
            return np.empty(len(rows), dtype=object)
        out = self.table_values[np.maximum(codes, 0)]
        out[codes < 0] = None
        return out


class _PlainColumn(_DetailColumn):
    """A bool or int64 detail column (values are the data themselves)."""

    def __init__(self, column: pa.Array) -> None:
        super().__init__(column, np.empty(0, dtype=object), np.zeros(0, dtype=np.int64))

    def data(self, rows: np.ndarray) -> np.ndarray:
        if pa.types.is_boolean(self.column.type):
            return bits_at(self.column.buffers()[1], self.column.offset, rows)
        return _raw_values(self.column, np.int64)[rows]

    def values(self, rows: np.ndarray) -> np.ndarray:
        out = object_array(self.data(rows).tolist())
        out[nulls_at(self.column, rows)] = None
        return out

    def codes(self, rows: np.ndarray) -> np.ndarray:
        data = self.data(rows)
        codes = data.astype(np.int64) if data.dtype == bool else pd.factorize(data)[0]
        return np.where(nulls_at(self.column, rows), -1, codes.astype(np.int64))


def _mostly_distinct(fields: list[_DetailColumn], rows: np.ndarray, sample: int = 256) -> bool:
    """True when sample rows all differ in the fields' values (grouping would not pay)."""
    if len(rows) < 4 * sample:
        return False
    picked = rows[:: len(rows) // sample]
    combos = set(zip(*(f.codes(picked).tolist() for f in fields), strict=True))
    return len(combos) == len(picked)


def _groups(codes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Group ids of rows by several code columns (each >= -1) and each group's first row."""
    combined = codes[0] + 1
    width = int(combined.max()) + 1 if len(combined) else 1
    for column in codes[1:]:
        span = int(column.max()) + 2 if len(column) else 1
        if width * span >= 2**62:  # too wide for one int64: number the groups so far first
            combined, _ = pd.factorize(combined)
            width = int(combined.max()) + 1 if len(combined) else 1
        combined = combined * span + (column + 1)
        width *= span
    return first_of_each(combined)


def _check_detail(schema: pa.Schema, name: str) -> bytes:
    """A detail column's encoding, checked with its type (texts, or plain bools / int64s)."""
    field = schema.field(name)
    encoding = (field.metadata or {}).get(ENCODING)
    if encoding not in (b"plain", b"json"):
        raise ValueError(f"detail column {name!r} has no winviz.encoding (plain or json)")
    kind = field.type
    if pa.types.is_dictionary(kind):
        if not pa.types.is_string(kind.value_type):
            raise ValueError(f"detail column {name!r} is {kind}; expected strings")
    elif pa.types.is_string(kind):
        pass
    elif pa.types.is_boolean(kind) or pa.types.is_int64(kind):
        if encoding != b"plain":
            raise ValueError(f"detail column {name!r} is {kind} but marked json")
    else:
        raise ValueError(f"detail column {name!r} is {kind}; expected bool, int64 or text")
    return encoding


def _detail_values(checked: tuple[pa.ChunkedArray, bytes]) -> _DetailColumn:
    """A detail column (checked by ``_check_detail``) as a ``_DetailColumn``."""
    chunks, encoding = checked
    column = _whole(chunks)
    if pa.types.is_string(column.type):  # each distinct text decoded once
        column = column.dictionary_encode()
    if pa.types.is_dictionary(column.type):
        if encoding == b"json":
            table_values = decode_texts(column.dictionary)
        else:
            table_values = object_array(column.dictionary.to_pylist())
        return _DetailColumn(column, table_values, _raw_values(column.indices, np.int32))
    return _PlainColumn(column)


# a flat tuple / plain scalar text: no bracket or brace outside a string, no escapes
_FLAT_TUPLE = r'^\{"\$tuple":\[(?:[^\[\]{}\\"]|"[^"\\]*")*\]\}$'
_FLAT_SCALAR = r'^(?:[^\[\]{}\\"]|"[^"\\]*")*$'
_TUPLE_HEAD = len('{"$tuple":')


def decode_texts(texts: pa.Array) -> np.ndarray:
    """``codec.from_text`` of each text, as objects: flat tuples and plain scalars parsed by
    one ``json.loads`` of them all, the others one by one."""
    out = np.empty(len(texts), dtype=object)
    if not len(texts):
        return out
    if texts.null_count:
        raise ValueError("a text in a dictionary is null; expected tagged JSON text")
    tuples = pc.match_substring_regex(texts, _FLAT_TUPLE).to_numpy(zero_copy_only=False)
    if tuples.all():
        inner = pc.utf8_slice_codeunits(texts, _TUPLE_HEAD, -1)
        return object_array(list(map(tuple, _loads_all(inner))))
    if tuples.any():
        inner = pc.utf8_slice_codeunits(texts.filter(tuples), _TUPLE_HEAD, -1)
        out[tuples] = object_array(list(map(tuple, _loads_all(inner))))
    rest = np.flatnonzero(~tuples)
    others = texts.take(rest)
    scalars = pc.match_substring_regex(others, _FLAT_SCALAR).to_numpy(zero_copy_only=False)
    if scalars.any():
        out[rest[scalars]] = object_array(_loads_all(others.filter(scalars)))
    if not scalars.all():
        tagged = others.filter(~scalars).to_pylist()
        out[rest[~scalars]] = object_array(list(map(codec.from_text, tagged)))
    return out


def _loads_all(texts: pa.Array) -> list[Any]:
    """The JSON values of these texts (one each), parsed as one array joined by Arrow."""
    whole = pa.ListArray.from_arrays(pa.array([0, len(texts)], pa.int32()), texts)
    values = json.loads("[" + pc.binary_join(whole, ",")[0].as_py() + "]")
    if len(values) != len(texts):
        raise ValueError(f"{len(texts)} texts hold {len(values)} values; expected one each")
    return values


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


def _coded(table: pa.Table, name: str) -> CodedColumn:
    """A dictionary column as codes (-1 for null) into its values (None appended for null)."""
    column = _whole(table.column(name))
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    values = column.dictionary.to_pylist()
    codes = _raw_values(column.indices, np.int32)  # read-only, kept alive by the table
    if len(codes) and (codes.min() < 0 or codes.max() >= len(values)):
        bad = int(np.argmax((codes < 0) | (codes >= len(values))))
        raise ValueError(
            f"record {bad}'s {name!r} is code {int(codes[bad])} of a dictionary of "
            f"{len(values)} values; expected 0 to {len(values) - 1}"
        )
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
