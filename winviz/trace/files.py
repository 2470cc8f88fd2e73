"""A trace in one Parquet file: ``Trace.save(path)`` and ``winviz.load_trace(path)``.

A learner can hand an instructor one file, and anyone can open it without winviz (pandas,
DuckDB, Polars). The file holds data only — nothing in it is ever run when it is read — and
says which schema it follows (``winviz.schema_version`` in the file's metadata) and which file
layout (``winviz.file_layout``: 3; layout 2, whose JSON detail columns were dictionaries, is
read as well; a file of another layout is refused, naming it).

Columns (one row per record, in ``seq`` order):

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

The kinds share a few detail columns, one per type of value (issue 11: a column per field
name made 15 mostly-null columns for a plain windowed job, each costing as much to write and
read as the values themselves). A kind's field goes to the column of its values' type: its
first field of that type to ``detail_<type>``, its second to ``detail_<type>_2`` (a trigger
call's ``call`` and ``result`` strings: ``detail_str``, ``detail_str_2``). The file's metadata
``winviz.detail_columns`` says where each field is, as JSON ``{kind: {field: column}}`` (for
instance ``"fired": {"result": "detail_json", "pane": "detail_int", "timing": "detail_str",
"count": "detail_str_2"}``); a column is null on the rows of the kinds without a field in it,
and on a kind's rows a null is the value None. Only the columns some kind uses are written.

A value's type is its field's within a kind: ``bool``, ``int`` (all in Java's long range) or
``str`` when every value of that field in that kind is one (None aside); otherwise each value
is tagged JSON text (``winviz.trace.codec``), encoded once per distinct object (the engine
shares one object among several records: an element's payload in its ``arrival``,
``element`` and ``assigned`` records, a window's timer namespace) and written as a plain
string per record (layout 3: the texts are mostly distinct, a payload's repeats sit a few rows
apart so the pages' compression stores them about as small as a dictionary would — 18.0 MB
either way for a 1M-event run — and no million texts are hashed to build one). The column's
field metadata ``winviz.encoding`` says ``plain`` or ``json``.

The file is one row group with snappy pages and no column statistics; a dictionary column stays
dictionary-encoded in Parquet (its dictionary is written once), and the int64 columns but the
watermark are written as deltas (``DELTA_BINARY_PACKED``: a trace's times rise slowly, so a
100k-event run's file is ~3 MB instead of ~7.4 MB, and it reads faster).

Both ways work on whole columns (issue 11): a detail tuple shared by many records is split
once (``winviz.trace.frame.detail_fields``: shared tuples found by a random sample of them);
the texts of flat values (scalars and tuples of scalars) are written by one call of the JSON
encoder — tuples of one shape of plain scalars (an element payload per event) column by
column by Arrow (``json_texts``) — and read back by one ``json.loads`` of the texts joined
by Arrow (``decode_texts``); arrays with nulls are built from, and read through, their validity
bitmaps; the garbage collector is paused meanwhile (``winviz.collector``).

``load`` reads the file's bytes once and checks the metadata and every column's type at once,
decodes ``seq`` and ``kind`` (and checks each kind's detail columns), and decodes every other
column (from those bytes) when a reader first asks for it (``TraceColumns.pending``), as a
run's trace decodes its columns when first read: the details — a Python object per record,
most of a load's work — and the base columns (times, keys, windows), so ``load_trace`` then a
chart of kinds and times never decodes the keys, windows or details. A damaged column (one
that does not decode, a time window without bounds, a text that is not a trace value) raises
``TraceFileError`` naming the file when it is first read. The columns' buffers are used as
read (no copy of a column of one chunk), and the time windows are numbered by Arrow's hash
of each record's ``(start, end)`` pair.
"""

from __future__ import annotations

import json
import re
from itertools import compress, repeat
from operator import is_, is_not, itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from winviz.collector import paused
from winviz.errors import InputError, TraceFileError
from winviz.trace import codec
from winviz.trace.bulk import first_of_each, object_ids
from winviz.trace.coded import LONG_MAX, LONG_MIN, CodedColumn, TimeColumn, object_array
from winviz.trace.columns import TraceColumns
from winviz.trace.frame import DetailPiece, detail_fields
from winviz.trace.schema import SCHEMA_VERSION, detail_names
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow

FORMAT = "winviz-trace"
META_FORMAT = b"winviz.format"
META_VERSION = b"winviz.schema_version"
# the file layout (this module's; the records' schema is ``SCHEMA_VERSION``): 2 = a few typed
# detail columns shared by the kinds instead of one column per field name; 3 = the JSON detail
# columns as plain strings instead of dictionaries (a layout-2 file is read as well)
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
# no column statistics (nobody filters a trace file by row group), snappy pages (as fast as lz4
# here, and every Parquet reader has it), and dictionary pages as large as the dictionaries (an
# element payload per event) so they stay dictionaries
WRITE_OPTIONS: dict[str, Any] = {
    "compression": "snappy",
    "write_statistics": False,
    "dictionary_pagesize_limit": 1 << 30,
    # the writer's batches of 64k values instead of 1,024 (fewer passes of its per-batch work
    # over a million-event trace's 6.7M records: ~5% of the write)
    "write_batch_size": 1 << 16,
}


def to_arrow(c: TraceColumns) -> pa.Table:
    """The Arrow table ``save`` writes (see the module docstring). A record the file cannot
    hold exactly — a time or a time window's bound that is not an int in Java's long range,
    a key or detail that contains itself — raises ``InputError`` naming the record (its
    ``seq``), the field and the value."""
    _check_windows(c)
    try:
        with paused():  # many new objects, no cycles: no collection passes over the trace
            return _to_arrow(c)
    except RecursionError:
        raise _cyclic(c) from None


def _check_windows(c: TraceColumns) -> None:
    """Every time window's bounds are ints in the long range (the file's ``window_start`` /
    ``window_end`` are int64: a float bound would be cut)."""
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
    listed: dict[int, Any] = {}  # each typed piece's values, listed once (or ints converted)
    mapping, pieces_of = _detail_layout(c, listed)
    whole = _WholeIds()  # the details' identities, read once for every detail column
    for name, pieces in pieces_of.items():
        array, encoding = _detail_array(len(c), pieces, name.split("_")[1], listed, whole)
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


def _detail_layout(
    c: TraceColumns, listed: dict[int, Any]
) -> tuple[dict[str, dict[str, str]], dict[str, list[DetailPiece]]]:
    """Which column holds each detail field of each kind present (``{kind: {field:
    column}}``, kinds in order of first appearance) and each column's pieces.

    A kind's field goes to the column of its values' type (``_value_type``): the kind's first
    field of that type to ``detail_<type>``, its second to ``detail_<type>_2``, … Kinds share
    the columns, so a trace has a few detail columns, whatever kinds it holds."""
    mapping: dict[str, dict[str, str]] = {}
    pieces_of: dict[str, list[DetailPiece]] = {}
    per_name = detail_fields(c)
    for name, pieces in per_name.items():
        for p in pieces:
            kind = c.kind.values[int(c.kind.codes[p.rows[0]])]
            mapping.setdefault(kind, {})[name] = _value_type(p, listed)
    for kind in list(mapping):  # each kind's fields in its schema order
        taken: dict[str, int] = {}
        columns = {}
        for name in detail_names(kind):
            typ = mapping[kind][name]
            taken[typ] = taken.get(typ, 0) + 1
            columns[name] = f"detail_{typ}" + ("" if taken[typ] == 1 else f"_{taken[typ]}")
        mapping[kind] = columns
    for name, pieces in per_name.items():
        for p in pieces:
            kind = c.kind.values[int(c.kind.codes[p.rows[0]])]
            pieces_of.setdefault(mapping[kind][name], []).append(p)
    order = {"json": 0, "int": 1, "str": 2, "bool": 3}
    ordered = sorted(pieces_of, key=lambda col: (order[col.split("_")[1]], col))
    return mapping, {col: sorted(pieces_of[col], key=lambda p: int(p.rows[0])) for col in ordered}


_TYPED = (bool, int, str, type(None))


def _value_type(piece: DetailPiece, listed: dict[int, Any]) -> str:
    """``bool``, ``int`` (every int in Java's long range), ``str`` or ``json`` (anything
    else): the type of a kind's values of one field, None aside (all None: ``str``). A piece
    whose first value is none of these (an element payload) is ``json`` without building
    or scanning its values (on a 1M-event trace, each object touched is a cache miss)."""
    if len(piece.rows):
        first = piece.table[piece.rows[0]] if piece.whole else piece.table[0]
        if first.__class__ not in _TYPED:
            return "json"
    values = listed[id(piece)] = piece.distinct().tolist()  # (``listed``: kept for the writer)
    types = set(map(type, values))
    if types == {int}:  # (no None) converted now, once: beyond Java's long range, OverflowError
        try:
            listed[id(piece)] = np.fromiter(values, dtype=np.int64, count=len(values))
        except OverflowError:
            return "json"
        return "int"
    types.discard(type(None))
    if types == {bool}:
        return "bool"
    if types == {int}:
        ints = [v for v in values if v is not None]
        if min(ints) >= LONG_MIN and max(ints) <= LONG_MAX:
            return "int"
        return "json"
    if types <= {str}:
        return "str"
    return "json"


def save(c: TraceColumns, path: Path) -> Path:
    """Write the columns to a Parquet file at ``path``."""
    table = to_arrow(c)
    try:
        pq.write_table(
            table,
            path,
            # dictionary pages for the dictionary columns only (not tried on the int64 ones)
            use_dictionary=[f.name for f in table.schema if pa.types.is_dictionary(f.type)],
            # the int64 columns (seq, times, window bounds, int details) as deltas: a trace's
            # times rise slowly, so most deltas take a few bits (a file ~2.5x smaller, read
            # faster); every Parquet reader decodes them (a Parquet 2 encoding). Not the
            # watermark: it starts at Long.MIN_VALUE, and that first jump makes its deltas
            # wide (plain is smaller and ~5x faster to write there)
            column_encoding={
                f.name: "DELTA_BINARY_PACKED"
                for f in table.schema
                if f.type == pa.int64() and f.name != "watermark"
            },
            # one row group: each row group would repeat the dictionaries (an element payload
            # per event) and a reader would merge them again
            row_group_size=max(1, len(table)),
            **WRITE_OPTIONS,
        )
    except (OSError, pa.ArrowException) as exc:
        raise TraceFileError(f"{path}: cannot write the trace file there ({exc})") from exc
    return path


def _times(c: TraceColumns, name: str) -> pa.Array:
    """A time field as int64 (null where absent); a value that is not an int in the long
    range raises ``InputError`` naming the first such record."""
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
    """A dictionary array of strings, every record's (a None among the values becomes a
    null)."""
    return _texts_array(len(codes), None, codes, values)


def _texts_array(
    n: int,
    rows: list[np.ndarray] | None,
    codes: np.ndarray | list[np.ndarray],
    texts: list[str | None] | pa.Array,
) -> pa.DictionaryArray:
    """A dictionary array of ``n`` strings: the records ``rows[i]`` have
    ``texts[codes[i]]`` (null where that is None), the others null; every record has
    ``texts[codes]`` when ``rows`` is None. Each distinct string is once in the dictionary
    (Parquet keeps a dictionary only when its values are distinct)."""
    strings = texts if isinstance(texts, pa.Array) else pa.array(texts, pa.string())
    # Arrow's hash table finds equal texts (of different objects: two equal windows); one
    # pass whether or not there are any (cheaper than checking first with a Python set)
    encoded = strings.fill_null("").dictionary_encode()
    null = null_flags(strings) if strings.null_count else None
    if null is None and len(encoded.dictionary) == len(texts):  # distinct already
        dictionary, remap = strings, None
    else:
        dictionary = encoded.dictionary
        remap = encoded.indices.to_numpy().astype(np.int32, copy=False)
    # (``safe=False``: the codes index the texts already, as the columns' codes index their
    # values; Arrow's check of every index would cost a pass over millions of them)
    if rows is None:
        assert isinstance(codes, np.ndarray)
        local = codes.astype(np.int32, copy=False) if remap is None else remap[codes]
        return pa.DictionaryArray.from_arrays(
            masked(local, pa.int32(), None if null is None else null[codes]),
            dictionary,
            safe=False,
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


class _WholeIds:
    """The identities (``object_ids``) of the object arrays that are a kind's whole detail
    (``DetailPiece.whole``: the trace's detail column), read once per array for every
    detail column, kept alive with the array."""

    def __init__(self) -> None:
        self._ids: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def of(self, table: np.ndarray) -> np.ndarray:
        held = self._ids.get(id(table))
        if held is None:
            held = self._ids[id(table)] = (table, object_ids(table))
        return held[1]


def _detail_array(
    n: int, pieces: list[DetailPiece], typ: str, listed: dict[int, Any], whole: _WholeIds
) -> tuple[pa.Array, bytes]:
    """A detail column (null where absent) of values of one type (``_value_type``) and its
    encoding: ``bool`` and ``int`` typed, ``str`` a dictionary of the strings (one per
    distinct object, by identity, and equal strings once), ``json`` tagged JSON text per
    record (``_json_column``)."""
    if typ in ("bool", "int"):
        values = [listed[id(p)] if id(p) in listed else p.distinct().tolist() for p in pieces]
        typed = _typed_detail(n, pieces, values, typ == "bool")
        if typed is not None:
            return typed, b"plain"
        typ = "json"
    if typ == "json":
        return _json_column(n, pieces, whole), b"json"
    # the distinct objects of all pieces (by identity), and each record's code among them:
    # told apart by their addresses, read from the object arrays without touching the
    # objects (a piece that is a kind's whole detail is read through the detail column's
    # addresses: no array of its values is built)
    parts = []
    for p in pieces:
        if p.whole:
            parts.append(whole.of(p.table)[p.rows])
        else:
            parts.append(object_ids(p.table))
    codes, first = first_of_each(parts[0] if len(parts) == 1 else np.concatenate(parts))
    offsets = np.cumsum([0] + [len(part) for part in parts])
    row_codes = [
        codes[start:stop] if p.codes is None else codes[start:stop][p.codes]
        for p, start, stop in zip(pieces, offsets[:-1], offsets[1:], strict=True)
    ]
    # each distinct object fetched once, from its piece
    objects = np.empty(len(first), dtype=object)
    piece_of = np.searchsorted(offsets, first, side="right") - 1
    for i, p in enumerate(pieces):
        picked = np.flatnonzero(piece_of == i)
        if len(picked):
            local = first[picked] - offsets[i]
            objects[picked] = p.table[p.rows[local]] if p.whole else p.table[local]
    rows = [p.rows for p in pieces]
    return _texts_array(n, rows, row_codes, objects.tolist()), b"plain"


def _json_column(n: int, pieces: list[DetailPiece], whole: _WholeIds) -> pa.StringArray:
    """A JSON detail column: each record's value as tagged JSON text (null where absent),
    each object encoded once as far as the pieces tell cheaply (the texts are written per
    record, so an object encoded twice changes nothing in the file, only the time taken):

    * a piece whose objects are, row by row, those of an earlier piece (an element's payload
      in its ``arrival``, ``element`` and ``assigned`` records; a result in its ``emitted``,
      ``sink`` and ``fired`` records) takes that piece's texts: one comparison of addresses;
    * a piece whose sampled objects are all different (a payload per event) is encoded
      object by object, without a hash table of a million addresses;
    * any other piece (a window's timer namespace, shared by many records) is told apart by
      its objects' addresses first."""
    done: list[tuple[np.ndarray, np.ndarray]] = []  # (addresses, codes) of the pieces so far
    texts: list[pa.Array] = []  # each piece's new objects' texts, in the order of their codes
    count = 0  # of the objects encoded so far
    rows, codes = [], []
    for p in pieces:
        # (a piece's own table is read in place too: it lives as long as the piece)
        ids = whole.of(p.table)[p.rows] if p.whole else object_ids(p.table)
        local = next(
            (c for seen, c in done if len(seen) == len(ids) and np.array_equal(seen, ids)), None
        )
        if local is None:
            values = p.table[p.rows] if p.whole else p.table
            if _distinct_sample(ids):
                local = np.arange(count, count + len(ids))
                objects = values.tolist()
            else:
                group, first = first_of_each(ids)
                local = group + count
                objects = values[first].tolist()
            texts.append(_piece_texts(objects))
            count += len(objects)
            done.append((ids, local))
        rows.append(p.rows)
        codes.append(local if p.whole or p.codes is None else local[p.codes])
    return _dense_texts(n, rows, codes, texts[0] if len(texts) == 1 else pa.concat_arrays(texts))


def _piece_texts(values: list[Any]) -> pa.Array:
    """``json_texts`` of one piece's objects: all tuples (a kind's payloads) or none, mostly,
    so told at once (``json_texts`` sorts out a mixture)."""
    if len(values) >= _COLUMNWISE and set(map(type, values)) == {tuple}:
        texts = _tuple_texts(values)
        return pa.array(codec.to_texts(values), pa.string()) if texts is None else texts
    return json_texts(values)


def _distinct_sample(ids: np.ndarray, sample: int = 256) -> bool:
    """True when evenly spread samples of these addresses, each with its next one, are all
    different (each record its own object, as an ``arrival`` record's payload)."""
    if len(ids) < 4 * sample:
        return False
    at = np.arange(0, len(ids) - 1, (len(ids) - 1) // sample)
    picked = np.concatenate((ids[at], ids[at + 1]))
    return len(np.unique(picked)) == len(picked)


def _dense_texts(
    n: int, rows: list[np.ndarray], codes: list[np.ndarray], texts: pa.Array
) -> pa.StringArray:
    """A column of ``n`` strings: the records ``rows[i]`` have ``texts[codes[i]]``, the
    others null (each piece put in place: no concatenation of millions of rows). Written
    plain, not as a dictionary: a JSON column's texts are mostly distinct (an element payload
    per event), and its repeats (the same payload in a record's ``arrival``, ``element`` and
    ``assigned`` records) are a few records apart, so the file's compression stores them
    about as compactly as a dictionary would, without hashing a million texts when the file
    is written."""
    indices = np.zeros(n, dtype=np.int32)
    valid = np.zeros(n, dtype=bool)
    for at, code in zip(rows, codes, strict=True):
        indices[at] = code
        valid[at] = True
    # (no bounds check: the codes number the texts)
    return pc.take(texts, with_valid(indices, pa.int32(), valid), boundscheck=False)


def json_texts(values: list[Any]) -> pa.Array:
    """``codec.to_texts`` of some values, as an Arrow array of strings, the same texts: the
    tuples among them (an element payload per event) written column by column by Arrow when
    they share one shape (``_tuple_texts``), the other values by ``codec.to_texts``."""
    texts, at = _grouped_texts(values)
    return texts if at is None else texts.take(pa.array(at))


def _grouped_texts(values: list[Any]) -> tuple[pa.Array, np.ndarray | None]:
    """The texts of ``json_texts``, and where each value's text is among them: None when in
    order, else the tuples' texts come first (``at[i]``: the position of value ``i``'s)."""
    if len(values) < _COLUMNWISE:
        return pa.array(codec.to_texts(values), pa.string()), None
    tuples = np.fromiter(map(is_, map(type, values), repeat(tuple)), dtype=bool, count=len(values))
    count = int(np.count_nonzero(tuples))
    texts = None
    if count >= _COLUMNWISE:
        texts = _tuple_texts(
            values if count == len(values) else list(compress(values, tuples.tolist()))
        )
    if texts is None:
        return pa.array(codec.to_texts(values), pa.string()), None
    if count == len(values):
        return texts, None
    rest = pa.array(codec.to_texts(list(compress(values, (~tuples).tolist()))), pa.string())
    at = np.empty(len(values), dtype=np.int64)
    at[tuples] = np.arange(count)
    at[~tuples] = np.arange(count, len(values))
    return pa.concat_arrays([texts, rest]), at


# fewer values than this: written by ``codec.to_texts`` (Arrow's per-call cost would not pay)
_COLUMNWISE = 1024
# a string JSON writes as itself between quotes (``json.encoder.encode_basestring`` escapes
# only quotes, backslashes and control characters)
_UNESCAPED = r'^[^"\\\x00-\x1f]*$'


def _unescaped(strings: list[str]) -> bool:
    """Whether JSON writes each of these strings as itself between quotes: the distinct
    strings checked when a sample says they are few (a key per payload: each string object's
    hash is kept, so the set costs one pass), else every string by Arrow."""
    if len(set(strings[:_SAMPLE])) * 4 <= min(len(strings), _SAMPLE):
        return all(map(_UNESCAPED_MATCH, set(strings)))
    return pc.all(pc.match_substring_regex(pa.array(strings, pa.string()), _UNESCAPED)).as_py()


_SAMPLE = 4096
_UNESCAPED_MATCH = re.compile(r'[^"\\\x00-\x1f]*').fullmatch  # (``_UNESCAPED`` in Python's re)


def _tuple_texts(values: list[tuple[Any, ...]]) -> pa.Array | None:
    """The ``{"$tuple":[...]}`` texts of tuples (``tuple`` itself) of one width whose items
    at each position are all of one type — ``str`` (needing no JSON escape), ``int`` (in
    Java's long range), ``bool`` or None — joined by Arrow column by column, as
    ``codec.to_text`` writes them; None for any other tuples."""
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


def _typed_detail(
    n: int, pieces: list[DetailPiece], listed: list[list[Any] | np.ndarray], bools: bool
) -> pa.Array | None:
    """A bool or int64 detail column: each piece's records have its values (null where
    None), the other records null; None when an int is beyond Java's long range (then it
    is written as text)."""
    data = np.zeros(n, dtype=bool if bools else np.int64)
    valid = np.zeros(n, dtype=bool)
    for p, values in zip(pieces, listed, strict=True):
        if isinstance(values, np.ndarray):  # ints without None (``_value_type``)
            data[p.rows] = values if p.codes is None else values[p.codes]
            valid[p.rows] = True
            continue
        present = np.fromiter(map(is_not, values, repeat(None)), dtype=bool, count=len(values))
        table = np.zeros(len(values), dtype=np.int64)
        try:
            if present.all():
                table = np.fromiter(values, dtype=np.int64, count=len(values))
            else:
                table[present] = np.fromiter(
                    compress(values, present.tolist()), dtype=np.int64, count=int(present.sum())
                )
        except OverflowError:
            return None
        data[p.rows] = table if p.codes is None else table[p.codes]
        valid[p.rows] = present if p.codes is None else present[p.codes]
    return with_valid(data, pa.bool_() if bools else pa.int64(), valid)


def masked(values: np.ndarray, kind: pa.DataType, nulls: np.ndarray | None) -> pa.Array:
    """An Arrow array of a numpy array (int32, int64 or bool) with nulls where ``nulls`` is
    True (none when it is None)."""
    if nulls is None or not nulls.any():
        return pa.array(values, kind)
    return with_valid(values, kind, ~nulls)


def where_valid(values: np.ndarray, kind: pa.DataType, valid: np.ndarray) -> pa.Array:
    """An Arrow array of a numpy array (int32, int64 or bool), null where ``valid`` is False
    (``masked`` without a negated copy of the flags: a million-event trace's are 6.7 MB)."""
    if valid.all():
        return pa.array(values, kind)
    return with_valid(values, kind, valid)


def with_valid(values: np.ndarray, kind: pa.DataType, valid: np.ndarray) -> pa.Array:
    """An Arrow array of a numpy array (int32, int64 or bool), null where ``valid`` is
    False, built from its buffers: the values as they are, the flags packed to bits."""
    count = len(values) - int(np.count_nonzero(valid))
    data = np.packbits(values, bitorder="little") if kind == pa.bool_() else values
    buffers = [pa.py_buffer(np.packbits(valid, bitorder="little")), pa.py_buffer(data)]
    return pa.Array.from_buffers(kind, len(values), buffers, null_count=count)


# -- reading ----------------------------------------------------------------------------------


def load(path: str | Path) -> TraceColumns:
    """The columns of a trace file written by ``save``; ``TraceFileError`` names the file and
    what is wrong when it is not one."""
    path = Path(path)
    if path.is_dir():
        raise TraceFileError(f"{path}: a directory; expected a trace file written by Trace.save")
    if not path.is_file():
        raise TraceFileError(f"{path}: no such trace file")
    try:
        # the file's bytes, read once: the base columns are decoded now, the detail columns
        # from the same bytes when the details are first read (a file changed or removed
        # meanwhile changes nothing)
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
    """The file's columns: ``seq`` and ``kind`` read now, the other columns' types, the
    metadata and the detail columns' types checked now; every other column decoded (from the
    file's bytes) when a reader first asks for it (``TraceColumns.pending``), as a run's trace
    decodes its columns when first read: the details — the Python objects of every record,
    most of a load's work — and the base columns (a chart of kinds and times never decodes
    the keys or the windows). A damaged column then raises ``TraceFileError`` naming the
    file."""
    kinds = _coded(table, "kind")
    layout = _layout_of(schema)
    used = _present(kinds.codes, len(kinds.values))
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
                    value = _details(len(seq), checked, _rows_per_code(kinds), layout)
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
        return CodedColumn(coded.codes, codec.from_texts(coded.values))
    return coded


def _details(
    n: int,
    table: dict[str, tuple[pa.ChunkedArray, bytes]],
    per_kind: dict[Any, np.ndarray],
    layout: dict[str, dict[str, str]],
) -> np.ndarray:
    """Every record's detail, built from the detail columns kind by kind."""
    details = np.empty(n, dtype=object)
    columns: dict[str, _DetailColumn] = {}
    for kind, rows in per_kind.items():
        names = list(layout[kind].values())
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
    """The records' ``seq``: present and strictly increasing (a run numbers its records 0,
    1, 2 …; a view keeps its records' numbers, in order), else the file is refused."""
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
    """Every time window has a positive size (``winviz.windows.window.has_positive_size``,
    here over whole columns: numpy's int64 subtraction wraps as Java's long does): swapped or
    equal bounds are refused, naming the first such record."""
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


def _rows_per_code(column: CodedColumn) -> dict[Any, np.ndarray]:
    """The positions of each value's records, in order (values in order of their codes,
    those without a record left out)."""
    codes = column.codes
    order = np.argsort(
        codes.astype(np.uint8) if len(column.values) <= 256 else codes, kind="stable"
    )
    counts = np.bincount(codes, minlength=len(column.values))
    bounds = np.concatenate(([0], np.cumsum(counts)))
    return {
        value: order[bounds[i] : bounds[i + 1]]
        for i, value in enumerate(column.values)
        if counts[i]
    }


class _DetailColumn:
    """A detail field's column as read from the file: ``values(rows)`` (an object array,
    None where null) and ``codes(rows)`` (int64, equal exactly where the values are equal,
    -1 where null) on some rows — each kind's rows are read, not the whole column."""

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
    """True when evenly spread sample rows all have different combinations of the fields'
    values (then grouping the rows would not pay)."""
    if len(rows) < 4 * sample:
        return False
    picked = rows[:: len(rows) // sample]
    combos = set(zip(*(f.codes(picked).tolist() for f in fields), strict=True))
    return len(combos) == len(picked)


def _groups(codes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Group ids of rows by several code columns (each -1 or more; numbered in order of
    first appearance) and each group's first row."""
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
    """A detail column's encoding, checked with its type: texts (``plain`` or ``json``; strings
    or a dictionary of strings), or bools or int64s (``plain``)."""
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


# a text that is one tuple of plain scalars / one plain scalar: no bracket or brace outside
# a string, strings without escapes (so each text's strings end inside it)
_FLAT_TUPLE = r'^\{"\$tuple":\[(?:[^\[\]{}\\"]|"[^"\\]*")*\]\}$'
_FLAT_SCALAR = r'^(?:[^\[\]{}\\"]|"[^"\\]*")*$'
_TUPLE_HEAD = len('{"$tuple":')


def decode_texts(texts: pa.Array) -> np.ndarray:
    """``codec.from_texts`` of an array of texts, as an object array: the texts of flat
    tuples (``{"$tuple":[...]}`` of plain scalars) and of plain scalars — found by a regular
    expression over the whole array — each kind parsed by one ``json.loads`` of them all
    (a text's strings end inside it, so no text can run into the next: the count of values
    parsed is checked), the others one by one by ``codec.from_texts``."""
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
        out[rest[~scalars]] = object_array(codec.from_texts(others.filter(~scalars).to_pylist()))
    return out


def _loads_all(texts: pa.Array) -> list[Any]:
    """The JSON values of these texts (each one value), parsed as one array (the texts
    joined by Arrow, never made Python strings one by one)."""
    whole = pa.ListArray.from_arrays(pa.array([0, len(texts)], pa.int32()), texts)
    values = json.loads("[" + pc.binary_join(whole, ",")[0].as_py() + "]")
    if len(values) != len(texts):
        raise ValueError(f"{len(texts)} texts hold {len(values)} values; expected one each")
    return values


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


def _whole(column: pa.ChunkedArray) -> pa.Array:
    """A column read from the file as one array: its one chunk itself (a file of one row group
    reads as one; ``combine_chunks`` would copy it: 54 MB per int64 column of a
    million-event trace), else its chunks joined."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _raw_values(array: pa.Array, dtype: type) -> np.ndarray:
    """The values buffer of a fixed-width array as numpy (whatever a null slot holds: the
    caller masks nulls), without a copy."""
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


def _present(codes: np.ndarray, count: int) -> np.ndarray:
    """Whether each of ``count`` codes is used (``bincount``'s nonzero, without its copy of
    the codes as intp)."""
    used = np.zeros(count, dtype=bool)
    used[codes] = True
    return used


def _time_windows(
    starts: pa.Array, ends: pa.Array, is_time: np.ndarray, codes: np.ndarray, values: list[Any]
) -> CodedColumn:
    """``_windows`` of bounds valid exactly on the time windows' records: each record's
    (start, end) as one 16-byte value, numbered by Arrow's hash table in order of first
    appearance (nulls elsewhere), without gathering the time windows' records first."""
    n = len(is_time)
    pairs = np.empty((n, 2), dtype=np.int64)
    pairs[:, 0] = _raw_values(starts, np.int64)
    pairs[:, 1] = _raw_values(ends, np.int64)
    bitmap = starts.buffers()[0]
    encoded = pa.Array.from_buffers(
        pa.binary(16), n, [bitmap, pa.py_buffer(pairs)], null_count=starts.null_count
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


def _windows(kind: CodedColumn, starts: pa.Array, ends: pa.Array) -> CodedColumn:
    """Each record's window object, dictionary-encoded again (one object per distinct
    window: the global window and no window first, then the time windows in order of first
    appearance)."""
    if len(kind.values) <= 8:  # a pass per value (a few): no full-length scatter
        used = [bool((kind.codes == k).any()) for k in range(len(kind.values))]
    else:
        used = _present(kind.codes, len(kind.values)).tolist()
    lookup = np.zeros(len(kind.values), dtype=np.int32)  # the code of each kind's window
    values: list[Any] = []
    time_code = -1
    for k, name in enumerate(kind.values):
        if not used[k]:
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
    # the time windows' records by a mask (no arrays of their positions: on a 1M-event trace,
    # each temporary array is tens of MB of fresh memory)
    is_time = kind.codes == time_code
    if (
        np.array_equal(valid_flags(starts), is_time)
        and np.array_equal(valid_flags(ends), is_time)
        and not starts.offset
        and not ends.offset
    ):  # bounds exactly on the time windows' records (as ``save`` writes them)
        return _time_windows(starts, ends, is_time, codes, values)
    missing = is_time & ~(valid_flags(starts) & valid_flags(ends))
    if missing.any():
        row = int(np.argmax(missing))
        raise ValueError(f"record {row}: a time window without window_start / window_end")
    start = _raw_values(starts, np.int64)[is_time]
    end = _raw_values(ends, np.int64)[is_time]
    group, first = first_of_each(start)
    if not (end[first][group] == end).all():  # windows of one start but several ends
        ends_of, _ = pd.factorize(end)
        group, first = first_of_each(group.astype(np.int64) * (int(ends_of.max()) + 1) + ends_of)
    codes[is_time] = group + len(values)
    values.extend(map(TimeWindow, start[first].tolist(), end[first].tolist()))
    return CodedColumn(codes, values)


__all__ = ["TraceFileError", "load", "save", "to_arrow"]
