"""A trace in one Parquet file: ``Trace.save(path)`` and ``winviz.load_trace(path)``.

A learner can hand an instructor one file, and anyone can open it without winviz (pandas,
DuckDB, Polars). The file holds data only — nothing in it is ever run when it is read — and
says which schema it follows (``winviz.schema_version`` in the file's metadata).

Columns (one row per record, in ``seq`` order):

| column | type | what |
|---|---|---|
| ``seq`` | int64 | the record's position in the run |
| ``kind``, ``operator`` | dictionary of strings | as in the trace schema |
| ``proc_time``, ``watermark``, ``ts`` | int64, null where absent | milliseconds |
| ``key`` | dictionary of strings | the key as tagged JSON text (``winviz.trace.codec``) |
| ``window_start``, ``window_end`` | int64, null unless a time window | ``[start, end)`` |
| ``window`` | dictionary of strings | ``"time"``, ``"global"`` or null (no window) |
| ``detail`` | dictionary of strings | the kind's detail fields as a JSON object of tagged values |

Values are dictionary-encoded by identity, so a value shared by several records (an element's
payload in its ``element`` and ``assigned`` records, a window's timer details) is written once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from winviz.errors import TraceFileError
from winviz.trace import codec
from winviz.trace.columns import CodedColumn, TimeColumn, TraceColumns, object_array
from winviz.trace.schema import SCHEMA_VERSION, detail_names
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow

FORMAT = "winviz-trace"
META_FORMAT = b"winviz.format"
META_VERSION = b"winviz.schema_version"
COLUMNS = {
    "seq": pa.int64(),
    "kind": pa.string(),
    "proc_time": pa.int64(),
    "watermark": pa.int64(),
    "operator": pa.string(),
    "key": pa.string(),
    "window_start": pa.int64(),
    "window_end": pa.int64(),
    "window": pa.string(),
    "ts": pa.int64(),
    "detail": pa.string(),
}


def to_arrow(c: TraceColumns) -> pa.Table:
    """The Arrow table ``save`` writes (see the module docstring)."""
    starts, ends, has = c.window_bounds()
    window_kind = [
        None if w is None else ("time" if getattr(w, "end", None) is not None else "global")
        for w in c.window.values
    ]
    kinds = c.kind.values
    details = _by_identity(c.kind.codes, c.detail, lambda k, d: _detail_text(kinds[k], d))
    table = pa.table(
        {
            "seq": pa.array(c.seq, pa.int64()),
            "kind": _dictionary(c.kind.codes, c.kind.values),
            "proc_time": _times(c.proc_time),
            "watermark": _times(c.watermark),
            "operator": _dictionary(c.operator.codes, c.operator.values),
            "key": _dictionary(c.key.codes, [codec.to_text(k) for k in c.key.values]),
            "window_start": pa.array(starts, pa.int64(), mask=~has),
            "window_end": pa.array(ends, pa.int64(), mask=~has),
            "window": _dictionary(c.window.codes, window_kind),
            "ts": _times(c.ts),
            "detail": details,
        }
    )
    return table.replace_schema_metadata(
        {META_FORMAT: FORMAT.encode(), META_VERSION: str(SCHEMA_VERSION).encode()}
    )


def save(c: TraceColumns, path: Path) -> Path:
    """Write the columns to a Parquet file at ``path``."""
    pq.write_table(to_arrow(c), path)
    return path


def _times(column: TimeColumn) -> pa.Array:
    if not column.exact:
        raise ValueError(
            "a trace whose times are not all ints in Java's long range cannot be saved"
        )
    return pa.array(column.values, pa.int64(), mask=~column.present)


def _dictionary(codes: np.ndarray, values: list[Any]) -> pa.DictionaryArray:
    """A dictionary array; a None among the values becomes a null."""
    none = [i for i, v in enumerate(values) if v is None]
    indices = pa.array(codes, pa.int32(), mask=np.isin(codes, none) if none else None)
    return pa.DictionaryArray.from_arrays(
        indices, pa.array(["" if v is None else v for v in values], pa.string())
    )


def _by_identity(kinds: np.ndarray, values: np.ndarray, text: Any) -> pa.DictionaryArray:
    """A dictionary array of ``text(kind, value)`` per record, computed once per kind and
    distinct object (the same object in several records of a kind is one entry)."""
    # ``values`` keeps every object alive while their ids are used
    ids = np.fromiter(map(id, values.tolist()), dtype=np.uint64, count=len(values))
    id_codes, _ = pd.factorize(ids)
    codes, firsts = pd.factorize(id_codes.astype(np.int64) * 256 + kinds)
    rows = np.zeros(len(firsts), dtype=np.int64)
    rows[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # the first record of each entry
    texts = [text(k, v) for k, v in zip(kinds[rows].tolist(), values[rows].tolist(), strict=True)]
    # equal texts (one payload in its element and assigned records) are one entry
    text_codes, distinct = pd.factorize(np.asarray(texts, dtype=object))
    codes, texts = text_codes[codes], distinct.tolist()
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(texts, pa.string()))


def _detail_text(kind: str, detail: Any) -> str:
    names = detail_names(kind)
    fields = (
        {names[0]: detail}
        if len(names) == 1
        else dict(zip(names, detail, strict=True))
        if isinstance(detail, tuple) and len(detail) == len(names)
        else {"detail": detail}
    )
    return codec.to_text(fields)


# -- reading ----------------------------------------------------------------------------------


def load(path: str | Path) -> TraceColumns:
    """The columns of a trace file written by ``save``; ``TraceFileError`` names the file and
    what is wrong when it is not one."""
    path = Path(path)
    if not path.is_file():
        raise TraceFileError(f"{path}: no such trace file")
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise TraceFileError(
            f"{path}: not a readable Parquet file ({exc}); expected a trace written by Trace.save"
        ) from exc
    meta = table.schema.metadata or {}
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
    for name, want in COLUMNS.items():
        if name not in table.column_names:
            raise TraceFileError(f"{path}: the column {name!r} is missing")
        got = table.schema.field(name).type
        if pa.types.is_dictionary(got):
            got = got.value_type
        if got != want:
            raise TraceFileError(f"{path}: column {name!r} is {got}; expected {want}")
    try:
        return _columns(table)
    except (ValueError, TypeError, KeyError) as exc:
        raise TraceFileError(f"{path}: damaged trace file: {exc}") from exc


def _columns(table: pa.Table) -> TraceColumns:
    kinds = _coded(table, "kind")
    detail_col = _coded(table, "detail")
    if any(t is None for t in detail_col.values):
        raise ValueError("a record without a detail")
    detail_values = codec.from_texts(detail_col.values)
    # one value per (kind, detail text): records sharing one share the decoded object
    pair_codes, pairs = pd.factorize(
        detail_col.codes.astype(np.int64) * 256 + kinds.codes.astype(np.int64)
    )
    rows = np.zeros(len(pairs), dtype=np.int64)
    rows[pair_codes[::-1]] = np.arange(len(pair_codes) - 1, -1, -1)
    decoded = object_array(
        _detail_value(kinds.values[p % 256], detail_values[p // 256], int(r))
        for p, r in zip(pairs.tolist(), rows.tolist(), strict=True)
    )
    details = decoded[pair_codes]
    window_kind = _coded(table, "window")
    starts = table.column("window_start").to_numpy(zero_copy_only=False)
    ends = table.column("window_end").to_numpy(zero_copy_only=False)
    windows = _windows(window_kind, starts, ends)
    key_col = _coded(table, "key")
    return TraceColumns(
        table.column("seq").to_numpy().astype(np.int64),
        kinds,
        _time(table, "proc_time"),
        _time(table, "watermark"),
        _coded(table, "operator"),
        CodedColumn(key_col.codes, codec.from_texts(key_col.values)),
        windows,
        _time(table, "ts"),
        details,
    )


def _coded(table: pa.Table, name: str) -> CodedColumn:
    """A dictionary column as codes (-1 for null) into its values (None appended for null)."""
    column = table.column(name).combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    values = column.dictionary.to_pylist()
    codes = column.indices.to_numpy(zero_copy_only=False)
    if column.null_count:
        codes = np.where(column.is_null().to_numpy(zero_copy_only=False), len(values), codes)
        values.append(None)
    return CodedColumn(np.asarray(codes, dtype=np.int32), values)


def _time(table: pa.Table, name: str) -> TimeColumn:
    column = table.column(name).combine_chunks()
    present = ~column.is_null().to_numpy(zero_copy_only=False)
    values = column.fill_null(0).to_numpy().astype(np.int64)
    return TimeColumn(values, present)


def _windows(kind: CodedColumn, starts: np.ndarray, ends: np.ndarray) -> CodedColumn:
    """Each record's window object, dictionary-encoded again (one object per distinct
    window)."""
    n = len(kind.codes)
    starts = (
        np.nan_to_num(starts.astype(float)).astype(np.int64) if starts.dtype != np.int64 else starts
    )
    ends = np.nan_to_num(ends.astype(float)).astype(np.int64) if ends.dtype != np.int64 else ends
    if not n:
        return CodedColumn(np.zeros(0, dtype=np.int32), [])
    s_codes, _ = pd.factorize(starts)
    e_codes, _ = pd.factorize(ends)
    combined = (kind.codes.astype(np.int64) * (n + 1) + s_codes) * (n + 1) + e_codes
    codes, _ = pd.factorize(combined)
    firsts = np.zeros(int(codes.max()) + 1, dtype=np.int64)
    firsts[codes[::-1]] = np.arange(n - 1, -1, -1)
    values: list[Any] = []
    for i, (k, start, end) in enumerate(
        zip(
            kind.codes[firsts].tolist(),
            starts[firsts].tolist(),
            ends[firsts].tolist(),
            strict=True,
        )
    ):
        name = kind.values[k]
        if name is None:
            values.append(None)
        elif name == "global":
            values.append(GLOBAL_WINDOW)
        elif name == "time":
            values.append(TimeWindow(int(start), int(end)))
        else:
            row = int(np.flatnonzero(codes == i)[0])
            raise ValueError(f"record {row}: window {name!r}; expected 'time', 'global' or null")
    return CodedColumn(codes.astype(np.int32), values)


def _detail_value(kind: str, fields: Any, row: int) -> Any:
    names = detail_names(kind)
    if not isinstance(fields, dict):
        raise ValueError(f"record {row}: detail {fields!r}; expected a JSON object")
    if set(fields) == {"detail"} and names != ("detail",):
        return fields["detail"]
    if set(fields) != set(names):
        raise ValueError(
            f"record {row} ({kind}): detail fields {sorted(fields)}; expected {list(names)}"
        )
    return fields[names[0]] if len(names) == 1 else tuple(fields[n] for n in names)


__all__ = ["TraceFileError", "load", "save", "to_arrow"]
