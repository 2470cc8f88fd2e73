"""A trace in one Parquet file: the layout, and ``Trace.save(path)`` that writes it
(``winviz.load_trace(path)`` reads it: ``winviz.trace.read_file``).

Data only (nothing in it is ever run); its metadata names the schema
(``winviz.schema_version``) and the file layout (``winviz.file_layout``: 4; layouts 2 and 3,
whose detail fields had typed columns, are read by a converter). One row per record in ``seq``
order:

| column | type | what |
|---|---|---|
| ``seq`` | int64 | the record's position in the run |
| ``kind``, ``operator`` | dictionary of strings | as in the trace schema |
| ``proc_time``, ``watermark``, ``ts`` | int64, null where absent | milliseconds |
| ``key`` | dictionary of strings | the key as tagged JSON text (``winviz.trace.codec``) |
| ``window_start``, ``window_end`` | int64, null unless a time window | ``[start, end)`` |
| ``window`` | dictionary of strings | ``"time"``, ``"global"`` or null (no window) |
| ``detail`` | string | the record's detail as tagged JSON text (a tuple of its fields) |
"""

from __future__ import annotations

from operator import is_
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from winviz.collector import paused
from winviz.errors import InputError, TraceFileError
from winviz.trace import codec
from winviz.trace.coded import (
    LONG_MAX,
    LONG_MIN,
    TimeColumn,
    all_same,
    repeated,
    type_signature,
    value_codes,
)
from winviz.trace.columns import TraceColumns
from winviz.trace.frame import DetailPiece, kind_pieces
from winviz.trace.schema import SCHEMA_VERSION

FORMAT = "winviz-trace"
META_FORMAT = b"winviz.format"
META_VERSION = b"winviz.schema_version"
# the file layout (the records' schema is ``SCHEMA_VERSION``; see the module docstring)
META_LAYOUT = b"winviz.file_layout"
LAYOUT_VERSION = 4
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
# no statistics, snappy, dictionary pages as large as the dictionaries, batches of 64k
WRITE_OPTIONS: dict[str, Any] = {
    "compression": "snappy",
    "write_statistics": False,
    "dictionary_pagesize_limit": 1 << 30,
    "write_batch_size": 1 << 16,
}


def where_valid(values: np.ndarray, kind: pa.DataType, valid: np.ndarray) -> pa.Array:
    """An Arrow array of a numpy array (int32 or int64), null where ``valid`` is False (built
    from buffers: the values as they are, the flags packed to bits)."""
    if valid.all():
        return pa.array(values, kind)
    count = len(values) - int(np.count_nonzero(valid))
    buffers = [pa.py_buffer(np.packbits(valid, bitorder="little")), pa.py_buffer(values)]
    return pa.Array.from_buffers(kind, len(values), buffers, null_count=count)


def valid_flags(array: pa.Array) -> np.ndarray:
    """True where the array is not null, unpacked from its validity bitmap."""
    n = len(array)
    bitmap = array.buffers()[0]
    if not array.null_count or bitmap is None:
        return np.ones(n, dtype=bool)
    bits = np.frombuffer(bitmap, dtype=np.uint8)
    return np.unpackbits(bits, count=array.offset + n, bitorder="little")[array.offset :].view(bool)


def null_flags(array: pa.Array) -> np.ndarray:
    """True where the array is null."""
    return ~valid_flags(array)


def to_arrow(c: TraceColumns) -> pa.Table:
    """The Arrow table ``save`` writes. A record the file cannot hold exactly (a time or
    window bound that is not a long, a value that contains itself) raises ``InputError``
    naming its ``seq``, the field and the value."""
    _check_windows(c)
    try:
        with paused():  # many new objects, no cycles: no collection passes over the trace
            return _to_arrow(c)
    except RecursionError:
        raise _cyclic(c) from None


def _check_windows(c: TraceColumns) -> None:
    """Every time window's bounds are longs (a float bound would be cut)."""
    for code, w in enumerate(c.window.values):
        if getattr(w, "end", None) is None:
            continue
        for bound in (w.start, w.end):
            if bound.__class__ is not int or not LONG_MIN <= bound <= LONG_MAX:
                row = int(np.argmax(c.window.codes == code))
                raise InputError(
                    "a trace whose windows' bounds are not all ints in Java's long range "
                    "cannot be saved",
                    index=int(c.seq[row]),
                    field="window",
                    value=w,
                    expected="a TimeWindow of int milliseconds",
                )


def _cyclic(c: TraceColumns) -> InputError:
    """The error of the first record whose key or detail has no text (it contains itself)."""
    keys = c.key.decode()
    for row, detail in enumerate(c.detail):
        for field, value in (("key", keys[row]), ("detail", detail)):
            try:
                codec.to_text(value)
            except RecursionError:
                return InputError(
                    "a value that contains itself (or is nested too deep) cannot be saved",
                    index=int(c.seq[row]),
                    field=field,
                    expected="values without cycles",
                )
    return InputError("a value that contains itself cannot be saved")


def _to_arrow(c: TraceColumns) -> pa.Table:
    starts, ends, has = c.window_bounds()
    window_kind = [
        None if w is None else ("time" if getattr(w, "end", None) is not None else "global")
        for w in c.window.values
    ]
    columns: dict[str, Any] = {
        "seq": pa.array(c.seq, pa.int64()),
        "kind": _dictionary(c.kind.codes, c.kind.values),
        "proc_time": _times(c, "proc_time"),
        "watermark": _times(c, "watermark"),
        "operator": _dictionary(c.operator.codes, c.operator.values),
        "key": _dictionary(c.key.codes, codec.to_texts(c.key.values)),
        "window_start": where_valid(starts, pa.int64(), has),
        "window_end": where_valid(ends, pa.int64(), has),
        "window": _dictionary(c.window.codes, window_kind),
        "ts": _times(c, "ts"),
        "detail": _detail_texts(c),
    }
    # a column without nulls is marked so (Parquet then stores no null flags for it)
    fields = [pa.field(name, a.type, nullable=a.null_count > 0) for name, a in columns.items()]
    schema = pa.schema(
        fields,
        metadata={
            META_FORMAT: FORMAT.encode(),
            META_VERSION: str(SCHEMA_VERSION).encode(),
            META_LAYOUT: str(LAYOUT_VERSION).encode(),
        },
    )
    return pa.Table.from_arrays(list(columns.values()), schema=schema)


def _detail_texts(c: TraceColumns) -> pa.StringArray:
    """Each record's detail as its tagged JSON text (``codec.to_text``): a kind's fields'
    texts (``_field_texts``) joined as its tuple's (``_tuple_texts``; fields coded alike, as a
    table of shared tuples, joined once per entry of the table)."""
    done: list[list[Any]] = []  # each field of one value per record so far: values, texts, ...
    rows, texts = [], []
    for _, pieces in kind_pieces(c):
        fields = [_field_texts(p, done) for p in pieces]
        codes = fields[0][1]
        if any(k is not codes for _, k in fields):  # each field's text record by record
            fields, codes = [(t if k is None else t.take(k), None) for t, k in fields], None
        joined = fields[0][0] if len(fields) == 1 else _tuple_texts([t for t, _ in fields])
        rows.append(pieces[0].rows)
        texts.append(joined if codes is None else joined.take(codes))
    if not texts:
        return pa.array([], pa.string())
    # each record's text in place: where its kind's texts are, record by record
    order = np.empty(len(c), dtype=np.int64)
    order[np.concatenate(rows)] = np.arange(len(c))
    return pc.take(pa.concat_arrays(texts), order, boundscheck=False)


def _tuple_texts(fields: list[pa.StringArray]) -> pa.StringArray:
    """The texts of tuples from their fields' texts: ``{"$tuple":[a,b]}`` (``codec``)."""
    parts: list[Any] = ['{"$tuple":[']
    for field in fields:
        parts += [field, ","]
    parts[-1] = "]}"
    return pc.binary_join_element_wise(*parts, "")


def _field_texts(p: DetailPiece, done: list[list[Any]]) -> tuple[pa.StringArray, Any]:
    """The texts of a detail field's values on the piece's rows, as texts and the records'
    codes into them (None: a text per record), each value encoded once as far as cheaply told:
    a piece with a value per record whose values are an earlier such piece's (the same
    objects or equal ones: an element's payload in ``arrival``, ``element`` and ``assigned``)
    takes its texts, a repeating one is coded first (``done``: those pieces so far)."""
    values = p.table[p.rows] if p.whole else p.table
    if p.codes is not None and not p.whole:  # a table of the values the records' codes pick
        return _texts(values), p.codes
    listed = values.tolist()
    for seen in done:
        if len(seen[0]) != len(listed) or not all_same(seen[0][:1], listed[:1]):
            continue
        if all(map(is_, seen[0], listed)):
            return seen[1], seen[2]
        if seen[3] is None:  # (told once per piece)
            seen[3] = type_signature(seen[0]) or False
        if all_same(seen[0], listed, seen[3] or None):
            return seen[1], seen[2]
    if repeated(values):
        codes, first = value_codes(listed)
        texts = _texts(values[first])
    else:
        texts, codes = _texts(values), None
    done.append([listed, texts, codes, None])
    return texts, codes


def _texts(values: np.ndarray) -> pa.StringArray:
    """``codec.to_texts`` of some values, as an Arrow array."""
    return pa.array(codec.to_texts(values.tolist()), pa.string())


def save(c: TraceColumns, path: Path) -> Path:
    """Write the columns to a Parquet file at ``path``."""
    table = to_arrow(c)
    try:
        pq.write_table(
            table,
            path,
            use_dictionary=[f.name for f in table.schema if pa.types.is_dictionary(f.type)],
            # int64 as deltas (times rise slowly), but the watermark (its jump from MIN)
            column_encoding={
                f.name: "DELTA_BINARY_PACKED"
                for f in table.schema
                if f.type == pa.int64() and f.name != "watermark"
            },
            # one row group: each would repeat the dictionaries
            row_group_size=max(1, len(table)),
            **WRITE_OPTIONS,
        )
    except (OSError, pa.ArrowException) as exc:
        raise TraceFileError(f"{path}: cannot write the trace file there ({exc})") from exc
    return path


def _times(c: TraceColumns, name: str) -> pa.Array:
    """A time field as int64 (null where absent); a non-long raises ``InputError``."""
    column: TimeColumn = getattr(c, name)
    if not column.exact:
        for row in np.flatnonzero(column.present).tolist():
            value = column.values[row]
            if value.__class__ is not int or not LONG_MIN <= value <= LONG_MAX:
                raise InputError(
                    "a trace whose times are not all ints in Java's long range cannot be saved",
                    index=int(c.seq[row]),
                    field=name,
                    value=value,
                    expected="int milliseconds in Java's long range, or None",
                )
        raise InputError(
            "a trace whose times are not all ints in Java's long range cannot be saved",
            field=name,
        )
    return where_valid(column.values, pa.int64(), column.present)


def _dictionary(codes: np.ndarray, values: list[Any]) -> pa.DictionaryArray:
    """A dictionary array of strings, every record's ``values[codes]`` (None: null)."""
    strings = pa.array(values, pa.string())
    encoded = strings.fill_null("").dictionary_encode()
    null = null_flags(strings) if strings.null_count else None
    if null is None and len(encoded.dictionary) == len(values):  # distinct already
        dictionary, local = strings, codes.astype(np.int32, copy=False)
    else:
        dictionary = encoded.dictionary
        local = encoded.indices.to_numpy().astype(np.int32, copy=False)[codes]
    valid = np.ones(1, dtype=bool) if null is None else ~null[codes]
    # (``safe=False``: the codes index the texts already)
    return pa.DictionaryArray.from_arrays(
        where_valid(local, pa.int32(), valid), dictionary, safe=False
    )


__all__ = ["save", "to_arrow"]
