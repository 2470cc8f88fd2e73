"""A trace in one Parquet file: the layout, and ``Trace.save(path)`` that writes it
(``winviz.load_trace(path)`` reads it: ``winviz.trace.read_file``).

Data only (nothing in it is ever run); its metadata names the schema
(``winviz.schema_version``) and the file layout (``winviz.file_layout``: 3; layout 2, whose
JSON detail columns were dictionaries, reads the same). One row per record in ``seq`` order:

| column | type | what |
|---|---|---|
| ``seq`` | int64 | the record's position in the run |
| ``kind``, ``operator`` | dictionary of strings | as in the trace schema |
| ``proc_time``, ``watermark``, ``ts`` | int64, null where absent | milliseconds |
| ``key`` | dictionary of strings | the key as tagged JSON text (``winviz.trace.codec``) |
| ``window_start``, ``window_end`` | int64, null unless a time window | ``[start, end)`` |
| ``window`` | dictionary of strings | ``"time"``, ``"global"`` or null (no window) |
| ``detail_json``, ``detail_json_2`` | strings | detail values as tagged JSON text |
| ``detail_int``, ``detail_int_2``, … | int64 | detail values that are ints |
| ``detail_str``, ``detail_str_2``, … | dictionary of strings | detail values that are strings |
| ``detail_bool`` | bool | detail values that are bools |

A kind's detail field goes to the column of its values' type (``bool``, ``int`` in Java's
long range, ``str``, else ``json``), its n-th field of a type to ``detail_<type>_n``; the
metadata ``winviz.detail_columns`` says where each field is (``{kind: {field: column}}``),
each column's ``winviz.encoding`` ``plain`` or ``json``. A null on a kind's rows is None.
"""

from __future__ import annotations

import json
import re
from operator import itemgetter
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
from winviz.trace.frame import DetailPiece, detail_fields, masked
from winviz.trace.schema import SCHEMA_VERSION, detail_names

FORMAT = "winviz-trace"
META_FORMAT = b"winviz.format"
META_VERSION = b"winviz.schema_version"
# the file layout (the records' schema is ``SCHEMA_VERSION``; see the module docstring)
META_LAYOUT = b"winviz.file_layout"
LAYOUT_VERSION = 3
READS_LAYOUTS = ("2", "3")
META_COLUMNS = b"winviz.detail_columns"
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
}
ENCODING = b"winviz.encoding"
# no statistics, snappy, dictionary pages as large as the dictionaries, batches of 64k
WRITE_OPTIONS: dict[str, Any] = {
    "compression": "snappy",
    "write_statistics": False,
    "dictionary_pagesize_limit": 1 << 30,
    "write_batch_size": 1 << 16,
}


def where_valid(values: np.ndarray, kind: pa.DataType, valid: np.ndarray) -> pa.Array:
    """An Arrow array of a numpy array (int32, int64 or bool), null where ``valid`` is False."""
    if valid.all():
        return pa.array(values, kind)
    return with_valid(values, kind, valid)


def with_valid(values: np.ndarray, kind: pa.DataType, valid: np.ndarray) -> pa.Array:
    """``where_valid`` built from buffers: the values as they are, the flags packed to bits."""
    count = len(values) - int(np.count_nonzero(valid))
    data = np.packbits(values, bitorder="little") if kind == pa.bool_() else values
    buffers = [pa.py_buffer(np.packbits(valid, bitorder="little")), pa.py_buffer(data)]
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


def nulls_at(array: pa.Array, rows: np.ndarray) -> np.ndarray:
    """True where the array is null, at these rows only (read from its validity bitmap)."""
    if not array.null_count or array.buffers()[0] is None:
        return np.zeros(len(rows), dtype=bool)
    return ~bits_at(array.buffers()[0], array.offset, rows)


def bits_at(bitmap: pa.Buffer, offset: int, rows: np.ndarray) -> np.ndarray:
    """The bits of an Arrow bitmap (least significant bit first) at these rows, as bools."""
    at = rows + offset
    bits = np.frombuffer(bitmap, dtype=np.uint8)
    return ((bits[at >> 3] >> (at & 7).astype(np.uint8)) & 1).astype(bool)


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
    }
    # a column without nulls is marked so (Parquet then stores no null flags for it)
    fields = [pa.field(name, a.type, nullable=a.null_count > 0) for name, a in columns.items()]
    mapping, pieces_of = _detail_layout(c)
    for name, pieces in pieces_of.items():
        array, encoding = _detail_array(len(c), pieces, name.split("_")[1])
        columns[name] = array
        fields.append(
            pa.field(name, array.type, array.null_count > 0, metadata={ENCODING: encoding})
        )
    schema = pa.schema(
        fields,
        metadata={
            META_FORMAT: FORMAT.encode(),
            META_VERSION: str(SCHEMA_VERSION).encode(),
            META_LAYOUT: str(LAYOUT_VERSION).encode(),
            META_COLUMNS: json.dumps(mapping, separators=(",", ":")).encode(),
        },
    )
    return pa.Table.from_arrays(list(columns.values()), schema=schema)


# a detail column's piece, and its values as ``_value_type`` listed them (or None)
Listed = tuple[DetailPiece, Any]


def _detail_layout(c: TraceColumns) -> tuple[dict[str, dict[str, str]], dict[str, list[Listed]]]:
    """Which column holds each detail field of each kind present (``{kind: {field:
    column}}``) and each column's pieces."""
    kind_of = c.kind.values
    typed: dict[str, dict[str, tuple[str, list[Listed]]]] = {}  # kind -> field -> typed pieces
    for name, pieces in detail_fields(c).items():
        of_kind: dict[str, list[DetailPiece]] = {}
        for p in pieces:
            of_kind.setdefault(kind_of[int(c.kind.codes[p.rows[0]])], []).append(p)
        for kind, mine in of_kind.items():
            typ, listed = _value_type(mine)
            typed.setdefault(kind, {})[name] = (typ, list(zip(mine, listed, strict=True)))
    mapping: dict[str, dict[str, str]] = {}
    pieces_of: dict[str, list[Listed]] = {}
    for kind, fields in typed.items():  # each kind's fields in its schema order
        taken: dict[str, int] = {}
        mapping[kind] = {}
        for name in detail_names(kind):
            typ, listed = fields[name]
            taken[typ] = taken.get(typ, 0) + 1
            column = f"detail_{typ}" + ("" if taken[typ] == 1 else f"_{taken[typ]}")
            mapping[kind][name] = column
            pieces_of.setdefault(column, []).extend(listed)
    order = {"json": 0, "int": 1, "str": 2, "bool": 3}
    ordered = sorted(pieces_of, key=lambda col: (order[col.split("_")[1]], col))
    return mapping, {
        col: sorted(pieces_of[col], key=lambda p: int(p[0].rows[0])) for col in ordered
    }


_TYPED = (bool, int, str, type(None))


def _value_type(pieces: list[DetailPiece]) -> tuple[str, list[Any]]:
    """The type of a kind's values of one field, None aside: ``bool``, ``int`` (longs),
    ``str`` (also all None) or ``json``; and each piece's values as listed to tell it."""
    for p in pieces:
        first = p.table[p.rows[0]] if p.whole else p.table[0]
        if first.__class__ not in _TYPED:
            return "json", [None] * len(pieces)
    listed = [p.distinct().tolist() for p in pieces]
    types = set().union(*(map(type, values) for values in listed))
    if types == {int}:  # (no None) converted now, once: beyond Java's long range, OverflowError
        try:
            return "int", [np.fromiter(v, dtype=np.int64, count=len(v)) for v in listed]
        except OverflowError:
            return "json", listed
    types.discard(type(None))
    if types == {bool}:
        return "bool", listed
    if types == {int}:
        ints = [v for values in listed for v in values if v is not None]
        if min(ints) >= LONG_MIN and max(ints) <= LONG_MAX:
            return "int", listed
        return "json", listed
    if types <= {str}:
        return "str", listed
    return "json", listed


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
    """A dictionary array of strings, every record's (None: null)."""
    return _texts_array(len(codes), None, codes, values)


def _texts_array(
    n: int,
    rows: list[np.ndarray] | None,
    codes: np.ndarray | list[np.ndarray],
    texts: list[str | None] | pa.Array,
) -> pa.DictionaryArray:
    """A dictionary array of ``n`` strings: records ``rows[i]`` have ``texts[codes[i]]``
    (``rows`` None: every record ``texts[codes]``), the others null."""
    strings = texts if isinstance(texts, pa.Array) else pa.array(texts, pa.string())
    encoded = strings.fill_null("").dictionary_encode()
    null = null_flags(strings) if strings.null_count else None
    if null is None and len(encoded.dictionary) == len(texts):  # distinct already
        dictionary, remap = strings, None
    else:
        dictionary = encoded.dictionary
        remap = encoded.indices.to_numpy().astype(np.int32, copy=False)
    # (``safe=False``: the codes index the texts already)
    if rows is None:
        assert isinstance(codes, np.ndarray)
        local = codes.astype(np.int32, copy=False) if remap is None else remap[codes]
        valid = np.ones(1, dtype=bool) if null is None else ~null[codes]
        return pa.DictionaryArray.from_arrays(
            where_valid(local, pa.int32(), valid), dictionary, safe=False
        )
    # each piece put in place (no concatenation of millions of rows)
    indices = np.zeros(n, dtype=np.int32)
    valid = np.zeros(n, dtype=bool)
    for at, code in zip(rows, codes, strict=True):
        indices[at] = code if remap is None else remap[code]
        valid[at] = True if null is None else ~null[code]
    return pa.DictionaryArray.from_arrays(
        with_valid(indices, pa.int32(), valid), dictionary, safe=False
    )


def _detail_array(n: int, listed: list[Listed], typ: str) -> tuple[pa.Array, bytes]:
    """A detail column of one type (``_value_type``) and its encoding: ``bool`` and ``int``
    typed, ``str`` a dictionary, ``json`` tagged JSON text per record (``_json_column``)."""
    pieces = [p for p, _ in listed]
    values = [v if v is not None else p.distinct().tolist() for p, v in listed]
    if typ in ("bool", "int"):
        tables = [v if isinstance(v, np.ndarray) else p.distinct() for p, v in listed]
        typed = masked(n, pieces, tables, np.bool_ if typ == "bool" else np.int64)
        if typed is not None:
            data, missing = typed
            return with_valid(data, pa.bool_() if typ == "bool" else pa.int64(), ~missing), b"plain"
        typ = "json"
    if typ == "json":
        return _json_column(n, pieces), b"json"
    # each piece's strings in turn, each record's code among them
    rows, codes, texts = [], [], []
    for p, strings in zip(pieces, values, strict=True):
        local = np.arange(len(texts), len(texts) + len(strings))
        texts += strings
        rows.append(p.rows)
        codes.append(local if p.whole or p.codes is None else local[p.codes])
    return _texts_array(n, rows, codes, texts), b"plain"


def _json_column(n: int, pieces: list[DetailPiece]) -> pa.StringArray:
    """A JSON detail column: each record's value as tagged JSON text, each value encoded once
    as far as cheaply told: a piece whose values are an earlier piece's (an element's payload
    in ``element`` and ``assigned``) takes its texts, a repeating piece is coded first."""
    # (values, codes, type signature when told) of the pieces so far
    done: list[list[Any]] = []
    texts: list[pa.Array] = []  # each piece's new values' texts, in the order of their codes
    count = 0  # of the values encoded so far
    rows, codes = [], []
    for p in pieces:
        values = p.table[p.rows] if p.whole else p.table
        local = None
        for seen in done:
            if len(seen[0]) == len(values):
                if seen[2] is None:  # (told once per piece)
                    seen[2] = type_signature(seen[0].tolist()) or False
                if all_same(seen[0], values, seen[2] or None):
                    local = seen[1]
                    break
        if local is None:
            if not repeated(values):
                local = np.arange(count, count + len(values))
                objects = values.tolist()
            else:
                group, first = value_codes(values)
                local = group + count
                objects = values[first].tolist()
            texts.append(json_texts(objects))
            count += len(objects)
            done.append([values, local, None])
        rows.append(p.rows)
        codes.append(local if p.whole or p.codes is None else local[p.codes])
    return _dense_texts(n, rows, codes, texts[0] if len(texts) == 1 else pa.concat_arrays(texts))


def json_texts(values: list[Any]) -> pa.Array:
    """``codec.to_texts`` as an Arrow array (many flat tuples joined by Arrow, ``_tuple_texts``)."""
    if len(values) >= _COLUMNWISE and set(map(type, values)) == {tuple}:
        texts = _tuple_texts(values)
        if texts is not None:
            return texts
    return pa.array(codec.to_texts(values), pa.string())


def _dense_texts(
    n: int, rows: list[np.ndarray], codes: list[np.ndarray], texts: pa.Array
) -> pa.StringArray:
    """A plain column of ``n`` strings: records ``rows[i]`` have ``texts[codes[i]]``."""
    indices = np.zeros(n, dtype=np.int32)
    valid = np.zeros(n, dtype=bool)
    for at, code in zip(rows, codes, strict=True):
        indices[at] = code
        valid[at] = True
    # (no bounds check: the codes number the texts)
    return pc.take(texts, with_valid(indices, pa.int32(), valid), boundscheck=False)


# fewer values than this: written by ``codec.to_texts`` (Arrow's per-call cost would not pay)
_COLUMNWISE = 1024
# a string JSON writes as itself between quotes (``json.encoder.encode_basestring`` escapes
# only quotes, backslashes and control characters)
_UNESCAPED = r'^[^"\\\x00-\x1f]*$'


def _unescaped(strings: list[str]) -> bool:
    """Whether JSON writes each of these strings as itself between quotes."""
    if len(set(strings[:_SAMPLE])) * 4 <= min(len(strings), _SAMPLE):
        return all(map(_UNESCAPED_MATCH, set(strings)))
    return pc.all(pc.match_substring_regex(pa.array(strings, pa.string()), _UNESCAPED)).as_py()


_SAMPLE = 4096
_UNESCAPED_MATCH = re.compile(r'[^"\\\x00-\x1f]*').fullmatch  # (``_UNESCAPED`` in Python's re)


def _tuple_texts(values: list[tuple[Any, ...]]) -> pa.Array | None:
    """``codec.to_text`` of tuples of one width whose items at each position are of one type
    (unescaped ``str``, long ``int``, ``bool`` or None), joined by Arrow; else None."""
    if not values:
        return None
    width = len(values[0])
    if not width or set(map(len, values)) != {width}:
        return None
    parts: list[Any] = ['{"$tuple":[']
    for i in range(width):
        column = list(map(itemgetter(i), values))
        types = set(map(type, column))
        if len(types) != 1:
            return None
        typ = types.pop()
        if typ is str:
            if not _unescaped(column):
                return None
            parts += ['"', pa.array(column, pa.string()), '"']
        elif typ is int:
            try:
                ints = np.fromiter(column, dtype=np.int64, count=len(column))
            except OverflowError:
                return None
            parts.append(pc.cast(pa.array(ints), pa.string()))
        elif typ is bool:
            parts.append(pc.if_else(pa.array(column, pa.bool_()), "true", "false"))
        elif typ is type(None):
            parts.append("null")
        else:
            return None
        parts.append(",")
    parts[-1] = "]}"
    if all(isinstance(p, str) for p in parts):  # (every item None: no array to join)
        return pa.array(["".join(parts)] * len(values), pa.string())
    return pc.binary_join_element_wise(*parts, "")


__all__ = ["save", "to_arrow"]
