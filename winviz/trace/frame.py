"""The trace as a pandas DataFrame, and back.

``to_pandas`` gives one row per record: ``seq``; ``kind``, ``operator`` and ``key`` as
categoricals (``key`` stays an object column when its values cannot be pandas categories:
unhashable keys, or keys pandas holds equal such as ``1`` and ``True``); ``proc_time``,
``watermark``, ``window_start``, ``window_end`` and ``ts`` as nullable ``Int64`` (``<NA>``
where absent; ``window_*`` are absent for the global window and for records without one);
then one column per detail field of the kinds present, in ``DETAIL_FIELDS`` order, typed by
its values (``detail_column``): a categorical when every value is a string, nullable
``Int64`` when every value is an int in Java's long range or None (``index``, ``pane``,
``count``, ``cleanup_time``, ...), nullable ``boolean`` when every value is a bool or None
(``deduplicated``, ``existed``), else objects (element payloads, windows such as a timer's
``namespace``, an int beyond the long range, mixed types, a field None throughout). Missing
on the rows of other kinds: ``<NA>`` in the nullable columns, NaN in the categoricals,
``None`` among objects. Values are the engine's own objects (a namespace is a
``TimeWindow``, an element value is the record itself). ``frame.attrs["schema_version"]``
names the schema.

The frame is built column by column from the trace's codes and typed arrays (issue 11): the
categoricals from the existing codes, the times as ``IntegerArray`` over the ``int64`` values
and their masks, the window bounds gathered from the distinct windows, and each detail field
from ``detail_fields``, which splits a detail tuple shared by many records once; only the
fields that stay objects take a full-length object array. Gathers by ``int32`` codes go chunk
by chunk (no full-length ``intp`` copy of the codes), and no other full-length temporary is
kept that a pass can do without: memory a 1M-event frame would touch fresh. Each column owns
its arrays (no mask is shared: setting a cell changes one column).
``pd.DataFrame(..., copy=False)`` keeps each column as made (no consolidation copy).

``from_pandas`` reads such a frame back into columns (``winviz.viz`` accepts a frame this way):
each detail value as the record held it, of the same type (a missing cell as None; windows
by their bounds).
"""

from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from winviz.collector import paused
from winviz.trace.bulk import first_of_each, object_ids
from winviz.trace.columns import (
    CodedColumn,
    TimeColumn,
    TraceColumns,
    encode,
    object_array,
    time_column,
    window_table,
)
from winviz.trace.schema import DETAIL_FIELDS, SCHEMA_VERSION, detail_names
from winviz.windows.window import TimeWindow


def to_pandas(c: TraceColumns) -> pd.DataFrame:
    """The DataFrame view of some columns (see the module docstring)."""
    with paused():  # many new objects, no cycles: no collection passes over the trace
        starts, ends, no_window = _window_columns(c)
        columns: dict[str, Any] = {
            "seq": c.seq,
            "kind": Coded(c.kind.codes, c.kind.values),
            "proc_time": nullable_ints(c.proc_time),
            "watermark": nullable_ints(c.watermark),
            "operator": Coded(c.operator.codes, c.operator.values),
            "key": categorical(c.key),
            "window_start": pd.arrays.IntegerArray(starts, no_window),
            "window_end": pd.arrays.IntegerArray(ends, no_window.copy()),
            "ts": nullable_ints(c.ts),
        }
        columns.update(detail_columns(c, defer=True))
        # the string categoricals made one after the other, after the bulk work: pandas'
        # checks of each one's categories then run warm (~0.7 ms each when cold, after passes
        # over the whole trace; ~0.1 ms each in a row)
        columns = {
            name: column.categorical() if isinstance(column, Coded) else column
            for name, column in columns.items()
        }
        frame = pd.DataFrame(columns, copy=False)
    frame.attrs["schema_version"] = SCHEMA_VERSION
    return frame


# rows gathered per chunk: numpy casts int32 indices to intp before a gather (a full-length
# temporary); a chunk's cast stays in cache and its memory is reused
_CHUNK = 1 << 16


def _window_columns(c: TraceColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each record's window start and end (0 where it has no time window) and where it has
    none, gathered from the distinct windows chunk by chunk (a code out of range is refused
    as by ``starts[codes]``)."""
    starts, ends, has = window_table(c.window.values)
    codes = c.window.codes
    n = len(codes)
    out = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=bool)
    tables = starts, ends, ~has
    for start in range(0, n, _CHUNK):
        at = codes[start : start + _CHUNK].astype(np.intp)
        for table, column in zip(tables, out, strict=True):
            table.take(at, out=column[start : start + _CHUNK])
    return out


def _take(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``table[codes]`` gathered chunk by chunk (see ``_CHUNK``; a code out of range is
    refused as by ``table[codes]``)."""
    out = np.empty(len(codes), dtype=table.dtype)
    for start in range(0, len(codes), _CHUNK):
        table.take(codes[start : start + _CHUNK], out=out[start : start + _CHUNK])
    return out


def nullable_ints(column: TimeColumn) -> Any:
    """A time column as a nullable ``Int64`` array (an object array if it is not exact)."""
    if column.exact:
        return pd.arrays.IntegerArray(column.values, ~column.present)
    return column.values


def categorical(column: CodedColumn, *, strings: bool = False) -> Any:
    """A coded column as a pandas Categorical, or its values as objects when they cannot be
    categories."""
    if strings:
        return from_codes(column.codes, column.values)
    values = column.lookup()
    none = np.flatnonzero(np.equal(values, None))
    try:
        categories = pd.Index(np.delete(values, none), dtype=object, tupleize_cols=False)
        if categories.is_unique and not categories.hasnans:
            # None is a missing value, not a category: code -1
            remap = np.arange(len(values), dtype=np.int32) - np.searchsorted(
                none, np.arange(len(values)), side="right"
            )
            remap[none] = -1
            codes = _take(remap.astype(_code_type(len(categories))), column.codes)
            return from_codes(codes, categories)
    except TypeError:
        pass
    return pd.Series(column.decode(), dtype=object)


def from_codes(codes: np.ndarray, categories: Any) -> pd.Categorical:
    """A Categorical of codes made here (each in range, -1 for missing: not checked again)."""
    dtype = pd.CategoricalDtype(categories)
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


@dataclass(frozen=True, slots=True)
class Coded:
    """A categorical column not made yet: codes made here (-1 for missing) into the
    ``categories`` (see ``to_pandas``)."""

    codes: np.ndarray
    categories: Any

    def categorical(self) -> pd.Categorical:
        return from_codes(self.codes, self.categories)


# up to this many kinds, each kind's rows are found by a pass over the codes (cheaper than the
# radix sort's two full-length position arrays, fresh memory at a million events)
_FEW_KINDS = 16


def kind_rows(c: TraceColumns) -> dict[str, np.ndarray]:
    """The positions of each kind's records, in order (kinds in order of first appearance)."""
    codes = c.kind.codes
    kinds = c.kind.values
    if len(kinds) <= 256:  # a stable sort of small ints is a radix sort: one pass
        codes = codes.astype(np.uint8)
    if len(kinds) <= _FEW_KINDS:  # a pass per kind over the (one-byte) codes: no sort
        rows = [np.flatnonzero(codes == code) for code in range(len(kinds))]
        present = sorted((int(r[0]), code) for code, r in enumerate(rows) if len(r))
        return {kinds[code]: rows[code] for _, code in present}
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    # where each kind's run of sorted codes starts (a kind absent has no run)
    bounds = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1, [len(codes)]))
    return {
        kinds[int(ordered[start])]: order[start:stop]
        for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        if stop > start
    }


@dataclass(frozen=True, slots=True)
class DetailPiece:
    """One kind's values of one detail field, for its records ``rows``: record ``rows[i]``
    has ``table[codes[i]]``, or ``table[i]`` when ``codes`` is None.

    For a kind with one field the values are the records' details themselves (``whole``:
    ``table`` is then the whole detail column and record ``rows[i]`` has
    ``table[rows[i]]``). For a kind with several fields ``table`` holds that field of each
    distinct detail tuple (the engine shares one tuple among many records: a window's timer
    details), so each tuple is split once; ``codes`` is None when each record has its own."""

    rows: np.ndarray
    table: np.ndarray
    codes: np.ndarray | None
    whole: bool = False

    def values(self) -> np.ndarray:
        """The value of each of ``rows`` (an object array)."""
        if self.whole:
            return self.table[self.rows]
        return self.table if self.codes is None else self.table[self.codes]

    def distinct(self) -> np.ndarray:
        """The piece's values without repeats of a shared tuple's field, one per row when
        ``codes`` is None (what to tell the field's types by)."""
        return self.values() if self.whole else self.table


def detail_fields(c: TraceColumns) -> dict[str, list[DetailPiece]]:
    """Each detail field of the kinds present (in ``DETAIL_FIELDS`` order; ``detail`` for a
    kind the schema lacks) as pieces, one per kind that has the field (kinds in order of
    first appearance)."""
    per_kind = kind_rows(c)
    names: list[str] = []
    for kind, fields in DETAIL_FIELDS.items():
        if kind in per_kind:
            names.extend(f for f in fields if f not in names)
    if any(kind not in DETAIL_FIELDS for kind in per_kind):
        names.append("detail")
    parts: dict[str, list[DetailPiece]] = {name: [] for name in names}
    ids: np.ndarray | None = None  # the details' identities (read once, without touching them)
    for kind, rows in per_kind.items():
        fields = detail_names(kind)
        if len(fields) == 1:
            parts[fields[0]].append(DetailPiece(rows, c.detail, None, whole=True))
            continue
        if ids is None:
            ids = _addresses(c.detail)
        codes: np.ndarray | None = None
        first = rows
        kind_ids = ids[rows]
        if shared(kind_ids):
            # each distinct tuple split once (by identity: the engine shares tuples)
            codes, at = first_of_each(kind_ids)
            first = rows[at]
        tables = split_fields(c, kind, first, c.detail[first].tolist(), len(fields))
        for name, table in zip(fields, tables, strict=True):
            parts[name].append(DetailPiece(rows, table, codes))
    return parts


def _addresses(values: np.ndarray) -> np.ndarray:
    """The identities of an object array's elements as ``object_ids`` gives them, read in
    place where ``object_ids`` would copy them (CPython, 64-bit, a contiguous array): a
    read-only ``uint64`` view of the array's pointers, for gathers (``ids[rows]``, copies)
    while ``values`` lives and is not changed."""
    if (
        values.dtype != object
        or values.ndim != 1
        or sys.implementation.name != "cpython"
        or ctypes.sizeof(ctypes.c_void_p) != 8
        or not len(values)
        or not values.flags.c_contiguous
    ):
        return object_ids(values)
    buffer = (ctypes.c_uint64 * len(values)).from_address(values.ctypes.data)
    view = np.frombuffer(buffer, dtype=np.uint64)
    view.flags.writeable = False
    return view


def shared(ids: np.ndarray, sample: int = 1024) -> bool:
    """True when some details' identities (``object_ids``) repeat in a sample of them — rows
    drawn at random by a fixed seed (the same rows every time), since an even stride can step
    in time with the records' order (every key's timer of one window in turn: 4,004 tuples
    among 2M ``timer_registered`` records of a 1M-event run) — or when they are few (telling
    them apart then costs little). False: each record has its own tuple (as ``arrival``),
    and telling them apart would not pay."""
    n = len(ids)
    if n < 4 * sample:
        return True
    picked = ids[np.random.default_rng(0).integers(0, n, sample)]
    return len(np.unique(picked)) < sample * 15 // 16


def split_fields(
    c: TraceColumns, kind: str, rows: np.ndarray, details: list[Any], width: int
) -> list[np.ndarray]:
    """The fields of some detail tuples (of the records ``rows``), field by field (an object
    array each); a detail that is not a tuple (or list) of ``width`` values is refused
    naming its record (a sequence of ``width`` values of another type is taken as is)."""
    try:  # one pass over the tuples for their lengths, one per field
        if set(map(len, details)) <= {width}:
            return [
                np.fromiter(map(itemgetter(i), details), dtype=object, count=len(details))
                for i in range(width)
            ]
    except (TypeError, KeyError, IndexError):  # not a sequence: refused below
        pass
    for row, detail in zip(rows.tolist(), details, strict=True):
        if not isinstance(detail, (tuple, list)) or len(detail) != width:
            raise ValueError(
                f"record {int(c.seq[row])} ({kind}): detail {detail!r}; expected a tuple of "
                f"its {width} fields {detail_names(kind)}"
            )
    raise AssertionError("unreachable: a detail was refused above")


def detail_columns(c: TraceColumns, *, defer: bool = False) -> dict[str, Any]:
    """One column per detail field of the kinds present, missing on the rows of other kinds
    (see ``detail_column``; ``defer``: a categorical as its ``Coded`` codes)."""
    return {
        name: detail_column(len(c), pieces, defer=defer)
        for name, pieces in detail_fields(c).items()
    }


_NONE = type(None)
# the types a detail column is typed by (any other: objects, told by each piece's first value
# without scanning the rest: an element payload)
_TYPED = frozenset({str, int, bool, _NONE})


def detail_column(n: int, pieces: list[DetailPiece], *, defer: bool = False) -> Any:
    """A detail field's column of ``n`` rows from its pieces (missing on the other rows):

    * a Categorical when every value is a ``str`` (a domain, a trigger call, an input name);
      categories in order of first appearance;
    * nullable ``Int64`` when every value is an ``int`` in Java's long range or None, with at
      least one int (an input index, a pane, a cleanup time, a count);
    * nullable ``boolean`` when every value is a ``bool`` or None, at least one a bool
      (``deduplicated``, ``existed``);
    * else objects, None where missing (an int beyond the long range, mixed types, a field
      whose values are all None, element payloads, windows: a ``TimeWindow`` is a tuple, and
      pandas 2 cannot turn a categorical of tuples into strings, ``astype(str)``).

    With ``defer`` a categorical comes as its ``Coded`` codes and categories.
    """
    if all(_first(p).__class__ in _TYPED for p in pieces):
        tables = [p.distinct() for p in pieces]
        types = set().union(*(map(type, t.tolist()) for t in tables))
        if types == {str}:
            coded = _strings(n, pieces, tables)
            return coded if defer else coded.categorical()
        if types - {_NONE} == {int}:
            ints = _masked(n, pieces, tables, np.int64)
            if ints is not None:
                return pd.arrays.IntegerArray(*ints)
        if types - {_NONE} == {bool}:
            bools = _masked(n, pieces, tables, np.bool_)
            assert bools is not None  # bools always fit
            return pd.arrays.BooleanArray(*bools)
    return _objects(n, pieces)


def _first(p: DetailPiece) -> Any:
    """A piece's first value (None for a piece without rows)."""
    if not len(p.rows):
        return None
    return p.table[p.rows[0] if p.whole else 0]


def _code_type(categories: int) -> type:
    """The narrowest codes pandas keeps for that many categories (no copy in ``from_codes``)."""
    for dtype in (np.int8, np.int16, np.int32):
        if categories < np.iinfo(dtype).max:
            return dtype
    return np.int64


def _strings(n: int, pieces: list[DetailPiece], tables: list[np.ndarray]) -> Coded:
    """The categorical codes of a field whose values are all strings (``tables``: each piece's
    ``distinct`` values); categories in order of first appearance, piece by piece (as the
    rows are given: each piece's values are in order of first appearance among its rows)."""
    local, uniques = pd.factorize(tables[0] if len(tables) == 1 else np.concatenate(tables))
    local = local.astype(_code_type(len(uniques)), copy=False)
    codes = np.full(n, -1, dtype=local.dtype)
    offset = 0
    for p, table in zip(pieces, tables, strict=True):
        here = local[offset : offset + len(table)]
        offset += len(table)
        codes[p.rows] = here if p.codes is None else here[p.codes]
    return Coded(codes, list(uniques))


def _masked(
    n: int, pieces: list[DetailPiece], tables: list[np.ndarray], dtype: type
) -> tuple[np.ndarray, np.ndarray] | None:
    """The values and missing mask of a nullable ``Int64`` / ``boolean`` column of a field
    whose values are all ints (or all bools) or None (``tables``: each piece's ``distinct``
    values); None when an int is beyond Java's long range (the column stays objects)."""
    data = np.zeros(n, dtype=dtype)  # zero on missing rows
    missing = np.ones(n, dtype=bool)
    none = id(None)
    for p, table in zip(pieces, tables, strict=True):
        absent = _addresses(table) == none
        try:
            if absent.any():
                values = np.zeros(len(table), dtype=dtype)
                values[~absent] = table[~absent].astype(dtype)
            else:
                values = table.astype(dtype)
        except OverflowError:  # an int beyond int64
            return None
        if p.codes is None:
            data[p.rows] = values
            missing[p.rows] = absent
        else:
            data[p.rows] = values[p.codes]
            missing[p.rows] = absent[p.codes]
    return data, missing


def _objects(n: int, pieces: list[DetailPiece]) -> pd.Series:
    """An object column of the pieces' values, None on the other rows."""
    out = np.empty(n, dtype=object)  # an empty object array holds None
    whole = np.zeros(n, dtype=bool)  # rows whose value is their detail itself
    for p in pieces:
        if p.whole:
            whole[p.rows] = True
        else:
            out[p.rows] = p.values()
    whole_pieces = [p for p in pieces if p.whole]
    if whole_pieces:  # their table is the whole detail column: one pass over it
        np.copyto(out, whole_pieces[0].table, where=whole)
    return pd.Series(out, dtype=object, copy=False)


def from_pandas(frame: pd.DataFrame) -> TraceColumns:
    """Columns of a frame made by ``to_pandas`` (or by an older winviz's ``to_pandas``, whose
    windows were ``[start, end]`` lists and whose integer columns pandas may have widened to
    floats)."""
    frame = frame.reset_index(drop=True)
    n = len(frame)
    kinds = [str(k) for k in frame["kind"].tolist()]
    starts = [_int_or_none(v) for v in frame["window_start"].tolist()]
    ends = [_int_or_none(v) for v in frame["window_end"].tolist()]
    windows = [
        None if s is None or e is None else TimeWindow(s, e)
        for s, e in zip(starts, ends, strict=True)
    ]
    cells = {
        name: [_cell(v, widened=frame[name].dtype.kind == "f") for v in frame[name].tolist()]
        for name in {f for fs in DETAIL_FIELDS.values() for f in fs} | {"detail"}
        if name in frame.columns
    }
    details = []
    for i, kind in enumerate(kinds):
        fields = detail_names(kind)
        values = tuple(cells[f][i] if f in cells else None for f in fields)
        details.append(values[0] if len(fields) == 1 else values)
    seq = frame["seq"].to_numpy(dtype=np.int64) if "seq" in frame else np.arange(n)
    return TraceColumns(
        seq.astype(np.int64, copy=False),
        encode(kinds, fast=True),
        time_column([_int_or_none(v) for v in frame["proc_time"].tolist()]),
        time_column([_int_or_none(v) for v in frame["watermark"].tolist()]),
        encode([str(o) for o in frame["operator"].tolist()], fast=True),
        encode([None if _missing(k) else k for k in frame["key"].tolist()]),
        encode(windows),
        time_column([_int_or_none(v) for v in frame["ts"].tolist()]),
        object_array(details),
    )


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def _int_or_none(v: Any) -> int | None:
    """An int from a frame cell; floats at the ends of the long range (MIN / MAX widened to
    float64 by pandas) snap back to MIN / MAX."""
    if _missing(v):
        return None
    if isinstance(v, float) and abs(v) >= 2.0**63:
        return 2**63 - 1 if v > 0 else -(2**63)
    return int(v)


def _cell(v: Any, *, widened: bool) -> Any:
    """A detail cell: missing as None; in a float column (pandas widened an older frame's
    int column) whole floats as int. A float among objects stays a float."""
    if _missing(v):
        return None
    return int(v) if widened and isinstance(v, float) and v.is_integer() else v
