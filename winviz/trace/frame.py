"""The trace as a pandas DataFrame (``to_pandas``), and back (``from_pandas``).

One row per record: ``FRAME_COLUMNS`` (``kind``, ``operator``, ``key`` categorical; times and
window bounds nullable ``Int64``), then one column per detail field of the kinds present, in
``DETAIL_FIELDS`` order, typed by its values (``detail_column``), missing on other kinds'
rows. Each column owns its arrays: setting a cell never changes the trace.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from winviz.collector import paused
from winviz.errors import InputError
from winviz.trace.coded import (
    CHUNK,
    CodedColumn,
    TimeColumn,
    gather,
    is_none,
    object_array,
    repeated,
    rows_by_code,
    value_codes,
)
from winviz.trace.columns import TraceColumns, from_fields
from winviz.trace.pieces import Tuples, entry_objects
from winviz.trace.schema import DETAIL_FIELDS, FRAME_COLUMNS, SCHEMA_VERSION, detail_names
from winviz.windows.window import TimeWindow


def to_pandas(c: TraceColumns) -> pd.DataFrame:
    """The DataFrame view of some columns (see the module docstring)."""
    with paused():  # many new objects, no cycles: no collection passes over the trace
        starts, ends, has = c.window_bounds()
        no_window = ~has
        columns: dict[str, Any] = {
            "seq": c.seq.copy(),
            "kind": categorical(c.kind, strings=True),
            "proc_time": nullable_ints(c.proc_time),
            "watermark": nullable_ints(c.watermark),
            "operator": categorical(c.operator, strings=True),
            "key": categorical(c.key),
            "window_start": pd.arrays.IntegerArray(starts, no_window),
            "window_end": pd.arrays.IntegerArray(ends, no_window.copy()),
            "ts": nullable_ints(c.ts),
        }
        columns.update(detail_columns(c, defer=True))
        # the string categoricals made last, one after the other (pandas' checks run warm)
        columns = {
            name: column.categorical() if isinstance(column, Coded) else column
            for name, column in columns.items()
        }
        frame = pd.DataFrame(columns, copy=False)
    frame.attrs["schema_version"] = SCHEMA_VERSION
    return frame


def nullable_ints(column: TimeColumn) -> Any:
    """A time column as a nullable ``Int64`` array of its own (objects if not exact)."""
    if column.exact:
        return pd.arrays.IntegerArray(column.values.copy(), ~column.present)
    return column.values.copy()


def categorical(column: CodedColumn, *, strings: bool = False) -> Any:
    """A coded column as a Categorical, categories in order of first appearance (None is
    missing), or objects when they cannot be categories. ``strings`` (kind, operator): a
    ``Coded``, made a Categorical later."""
    values = column.lookup()
    order = appearance_order(column.codes, len(values))
    keep = order[np.not_equal(values[order], None)] if len(order) else order
    in_order = len(keep) == len(values) and bool((keep == np.arange(len(values))).all())
    if strings:
        if in_order:  # (the codes narrowed as pandas keeps them: a copy, never the trace's)
            return Coded(column.codes.astype(_code_type(len(values))), column.values)
        return Coded(_recoded(column.codes, keep, len(values)), values[keep].tolist())
    try:
        categories = pd.Index(values[keep], dtype=object, tupleize_cols=False)
        if categories.is_unique and not categories.hasnans:
            codes = _recoded(column.codes, keep, len(values))
            return from_codes(codes, categories)
    except TypeError:
        pass
    return pd.Series(column.decode(), dtype=object)


def appearance_order(codes: np.ndarray, count: int) -> np.ndarray:
    """The codes (``0 .. count-1``; -1: none) that occur in ``codes``, in order of first
    occurrence (read chunk by chunk until all are found)."""
    found = np.zeros(count, dtype=bool)
    order: list[np.ndarray] = []
    left = count
    for start in range(0, len(codes), CHUNK):
        chunk = codes[start : start + CHUNK]
        if len(chunk) and chunk.min() < 0:
            chunk = chunk[chunk >= 0]
        new = np.flatnonzero((np.bincount(chunk, minlength=count) > 0) & ~found)
        if not len(new):
            continue
        first = np.empty(count, dtype=np.int64)  # (where each code first occurs in the chunk)
        first[chunk[::-1]] = np.arange(len(chunk) - 1, -1, -1)
        order.append(new[np.argsort(first[new], kind="stable")])
        found[new] = True
        left -= len(new)
        if not left:
            break
    return np.concatenate(order) if order else np.zeros(0, dtype=np.int64)


def _recoded(codes: np.ndarray, keep: np.ndarray, count: int) -> np.ndarray:
    """``codes`` as codes into the values ``keep`` (-1 for the others)."""
    remap = np.full(count, -1, dtype=_code_type(len(keep)))
    remap[keep] = np.arange(len(keep))
    return gather(remap, codes)


def from_codes(codes: np.ndarray, categories: Any) -> pd.Categorical:
    """A Categorical of codes made here (each in range, -1 for missing: not checked again)."""
    dtype = pd.CategoricalDtype(categories)
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


@dataclass(frozen=True, slots=True)
class Coded:
    """A categorical column not made yet: codes (-1: missing) into ``categories``."""

    codes: np.ndarray
    categories: Any

    def categorical(self) -> pd.Categorical:
        return from_codes(self.codes, self.categories)


@dataclass(frozen=True, slots=True)
class DetailPiece:
    """One kind's values of one detail field on its records ``rows``: record ``rows[i]`` has
    ``table[codes[i]]``, ``table[i]`` (``codes`` None) or ``table[rows[i]]`` (``whole``)."""

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
        """The piece's values, without repeats where coded (what its types are told by)."""
        return self.values() if self.whole else self.table


def _field_names(kinds: Any) -> list[str]:
    """The detail fields of these kinds, in ``DETAIL_FIELDS`` order (``detail`` last)."""
    names: list[str] = []
    for kind, fields in DETAIL_FIELDS.items():
        if kind in kinds:
            names.extend(f for f in fields if f not in names)
    if any(kind not in DETAIL_FIELDS for kind in kinds):
        names.append("detail")
    return names


def kind_pieces(c: TraceColumns) -> list[tuple[str, list[DetailPiece]]]:
    """The details in pieces (``TraceColumns.detail_items``), each with its kind and one piece
    per detail field of the kind (all on the same rows), kinds in order of first appearance."""
    kind = c.kind
    by_kind: list[tuple[str, np.ndarray, Any]] = []
    for k, rows, item in c.detail_items():
        if not len(rows):
            continue
        if k is not None:
            by_kind.append((k, rows, item))
            continue
        values = entry_objects(item, len(rows))
        for code, at in rows_by_code(kind.codes[rows], len(kind.values)):
            by_kind.append((kind.values[code], rows[at], _Picked(values, at)))
    # the kinds in order of first appearance (each piece's rows ascending)
    first: dict[str, int] = {}
    for k, rows, _ in by_kind:
        first[k] = min(first.get(k, len(c)), int(rows[0]))
    return [
        (k, [DetailPiece(*p) for p in _item_pieces(c, k, rows, item, len(detail_names(k)))])
        for k, rows, item in sorted(by_kind, key=lambda p: (first[p[0]], int(p[1][0])))
    ]


def detail_fields(c: TraceColumns) -> dict[str, list[DetailPiece]]:
    """Each detail field of the kinds present as pieces (``kind_pieces``), kinds in order of
    first appearance."""
    by_kind = kind_pieces(c)
    parts: dict[str, list[DetailPiece]] = {
        name: [] for name in _field_names({k for k, _ in by_kind})
    }
    for k, pieces in by_kind:
        for name, piece in zip(detail_names(k), pieces, strict=True):
            parts[name].append(piece)
    return parts


Piece = tuple[np.ndarray, np.ndarray, np.ndarray | None]  # rows, table, codes


@dataclass(frozen=True, slots=True)
class _Picked:
    """The details of one kind's plain records: ``values[at]`` (``_item_pieces``)."""

    values: np.ndarray
    at: np.ndarray


def _item_pieces(
    c: TraceColumns, kind: str, rows: np.ndarray, item: Any, width: int
) -> list[Piece]:
    """The pieces (rows, table, codes) of a kind's ``width`` detail fields on ``rows``."""
    if isinstance(item, CodedColumn) or not isinstance(item, (list, np.ndarray, Tuples, _Picked)):
        # a table of distinct details and each record's code in it (one value: code 0)
        if isinstance(item, CodedColumn):
            table, codes = _referenced(item.lookup(), item.codes)
        else:
            table = np.empty(1, dtype=object)
            table[0] = item
            codes = np.zeros(len(rows), dtype=np.int8)
        if width == 1:
            return [(rows, table, codes)]
        tables = _split(table.tolist(), width)
        if tables is not None:
            return [(rows, t, codes) for t in tables]
        item = table[codes]  # (a detail that is not a tuple of its fields: refused below)
    if isinstance(item, Tuples) and width > 1 and len(item.fields) == width:
        return [(rows, _typed(f), None) for f in item.fields]
    if isinstance(item, _Picked):
        item = item.values[item.at]
    values = entry_objects(item, len(rows))
    if width == 1:
        return [(rows, values, None)]
    codes = None
    first = rows
    if repeated(values):  # each distinct tuple split once
        codes, at = value_codes(values)
        first, values = rows[at], values[at]
    tables = split_fields(c, kind, first, values.tolist(), width)
    return [(rows, t, codes) for t in tables]


def _referenced(table: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A coded item's table, each value no record refers to replaced by one a record does
    (types and categories are the records' values'), and its codes as they are."""
    used = np.bincount(codes, minlength=len(table)) > 0
    if used.all() or not len(codes):
        return table, codes
    table = table.copy()
    table[~used] = table[[int(np.argmax(used))]]
    return table, codes


def _split(details: list[Any], width: int) -> list[np.ndarray] | None:
    """The fields of some tuples (or lists) of ``width`` values; None when one is not."""
    if not all(isinstance(d, (tuple, list)) and len(d) == width for d in details):
        return None
    return [object_array([d[i] for d in details]) for i in range(width)]


def _typed(values: Any) -> np.ndarray:
    """Values one per record as ``int64`` when all are ``int``s in the long range, else objects."""
    if isinstance(values, np.ndarray) and values.dtype == np.int64:
        return values
    if isinstance(values, list) and set(map(type, values)) == {int}:
        try:
            return np.fromiter(values, dtype=np.int64, count=len(values))
        except OverflowError:
            pass
    return entry_objects(values, len(values))


def split_fields(
    c: TraceColumns, kind: str, rows: np.ndarray, details: list[Any], width: int
) -> list[np.ndarray]:
    """The fields of some detail tuples (of the records ``rows``) as object arrays; a detail
    that is not a sequence of ``width`` values is refused naming its record."""
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
    """One column per detail field of the kinds present (``detail_column``)."""
    fields = detail_fields(c)
    return {name: detail_column(len(c), pieces, defer=defer) for name, pieces in fields.items()}


_NONE = type(None)
# the types a detail column is typed by (any other: objects, told by each piece's first value
# without scanning the rest: an element payload)
_TYPED = frozenset({str, int, bool, _NONE})


def detail_column(n: int, pieces: list[DetailPiece], *, defer: bool = False) -> Any:
    """A detail field's column of ``n`` rows from its pieces (missing elsewhere): Categorical
    when every value is a ``str``; nullable ``Int64`` when all are longs or None; nullable
    ``boolean`` likewise; else objects. ``defer``: a categorical as its ``Coded``."""
    if all(_first(p).__class__ in _TYPED for p in pieces):
        tables = [p.distinct() for p in pieces]
        types = set().union(*map(_types, tables))
        if types == {str}:
            coded = _strings(n, pieces, tables)
            return coded if defer else coded.categorical()
        if types - {_NONE} == {int}:
            ints = masked(n, pieces, tables, np.int64)
            if ints is not None:
                return pd.arrays.IntegerArray(*ints)
        if types - {_NONE} == {bool}:
            bools = masked(n, pieces, tables, np.bool_)
            assert bools is not None  # bools always fit
            return pd.arrays.BooleanArray(*bools)
    return _objects(n, pieces)


def _first(p: DetailPiece) -> Any:
    """A piece's first value (None for a piece without rows)."""
    if not len(p.rows):
        return None
    if p.table.dtype != object:  # (ints: ``_typed``)
        return p.table[0].item()
    return p.table[p.rows[0] if p.whole else 0]


def _types(table: np.ndarray) -> set[type]:
    """The types of a table's values (an ``int64`` table: ints, ``_typed``)."""
    if table.dtype != object:
        return {int}
    return set(map(type, table.tolist()))


def _code_type(categories: int) -> type:
    """The narrowest codes pandas keeps for that many categories."""
    for dtype in (np.int8, np.int16, np.int32):
        if categories < np.iinfo(dtype).max:
            return dtype
    return np.int64


def _strings(n: int, pieces: list[DetailPiece], tables: list[np.ndarray]) -> Coded:
    """The categorical codes of an all-strings field (``tables``: the pieces' ``distinct``)."""
    local, uniques = pd.factorize(tables[0] if len(tables) == 1 else np.concatenate(tables))
    local = local.astype(_code_type(len(uniques)), copy=False)
    codes = np.full(n, -1, dtype=local.dtype)
    coded: list[DetailPiece] = []
    offset = 0
    for p, table in zip(pieces, tables, strict=True):
        coded.append(DetailPiece(p.rows, local[offset : offset + len(table)], p.codes))
        offset += len(table)
    _put_all(codes, coded)
    order = appearance_order(codes, len(uniques))
    if len(order) == len(uniques) and bool((order == np.arange(len(order))).all()):
        return Coded(codes, list(uniques))
    remap = np.full(len(uniques) + 1, -1, dtype=codes.dtype)  # (-1 stays -1: the last)
    remap[order] = np.arange(len(order))
    return Coded(gather(remap, codes), [uniques[i] for i in order.tolist()])


# ``_put_all`` writes its output in blocks of this many rows
_BLOCK_ROWS = 1 << 15


def _put_all(out: np.ndarray, pieces: list[DetailPiece]) -> None:
    """Each piece's values on its rows, block of rows by block (in cache)."""
    pieces = [p for p in pieces if len(p.rows)]
    bounds = np.arange(0, len(out) + _BLOCK_ROWS, _BLOCK_ROWS)
    cuts = [np.searchsorted(p.rows, bounds).tolist() for p in pieces]
    for b in range(len(bounds) - 1):
        for p, cut in zip(pieces, cuts, strict=True):
            lo, hi = cut[b], cut[b + 1]
            if hi == lo:
                continue
            rows = p.rows[lo:hi]
            if len(p.table) == 1:
                out[rows] = p.table
            elif p.codes is None:
                out[rows] = p.table[lo:hi]
            else:
                out[rows] = p.table.take(p.codes[lo:hi])


def masked(
    n: int, pieces: list[DetailPiece], tables: list[np.ndarray], dtype: type
) -> tuple[np.ndarray, np.ndarray] | None:
    """The values (0 where missing) and missing mask of an ints (or bools) field as ``dtype``;
    None when an int is beyond Java's long range."""
    values_of: list[DetailPiece] = []  # each piece's values, and where they are missing
    missing_of: list[DetailPiece] = []
    present = np.zeros(1, dtype=bool)  # (one value for all the rows of a piece: none missing)
    for p, table in zip(pieces, tables, strict=True):
        if table.dtype == dtype:  # (ints already: ``_typed``)
            values, absent = table, present
        else:
            absent = is_none(table)
            try:
                if absent.any():
                    values = np.zeros(len(table), dtype=dtype)
                    values[~absent] = table[~absent].astype(dtype)
                else:
                    values, absent = table.astype(dtype), present
            except OverflowError:  # an int beyond int64
                return None
        if values.any():  # (else zero already)
            values_of.append(DetailPiece(p.rows, values, p.codes))
        missing_of.append(DetailPiece(p.rows, absent, p.codes))
    data = np.zeros(n, dtype=dtype)  # zero on missing rows
    missing = np.ones(n, dtype=bool)
    _put_all(data, values_of)
    _put_all(missing, missing_of)
    return data, missing


def _objects(n: int, pieces: list[DetailPiece]) -> pd.Series:
    """An object column of the pieces' values, None on the other rows."""
    out = np.empty(n, dtype=object)  # an empty object array holds None
    _put_all(out, [p for p in pieces if not p.whole])
    whole_pieces = [p for p in pieces if p.whole]
    if whole_pieces:  # their table is the whole detail column: one pass over it
        whole = np.zeros(n, dtype=bool)  # rows whose value is their detail itself
        for p in whole_pieces:
            whole[p.rows] = True
        np.copyto(out, whole_pieces[0].table, where=whole)
    return pd.Series(out, dtype=object, copy=False)


def from_pandas(frame: pd.DataFrame) -> TraceColumns:
    """Columns of a frame made by ``to_pandas`` (widened float columns read as ints), in
    ``seq`` order. A missing trace column, a repeated ``seq``, a row without a kind, or a
    time, bound or ``seq`` that is no whole number raises ``InputError`` naming the cell."""
    missing = [name for name in _NEEDED if name not in frame.columns]
    if missing:
        raise InputError(
            f"the frame lacks the trace column(s) {', '.join(missing)}",
            expected="a frame made by Trace.to_pandas()",
        )
    frame = frame.reset_index(drop=True)
    n = len(frame)
    seq = _seq(frame) if "seq" in frame else np.arange(n, dtype=np.int64)
    order = None
    if n > 1 and not bool((seq[1:] > seq[:-1]).all()):
        # rows sorted by another column: the records back in seq order
        order = np.argsort(seq, kind="stable")
        seq = seq[order]
        same = np.flatnonzero(seq[1:] == seq[:-1])
        if len(same):
            first, second = sorted(order[[same[0], same[0] + 1]].tolist())
            raise InputError(
                f"frame rows {first} and {second} have the same seq {int(seq[same[0]])}: "
                "a trace holds each record once",
                field="seq",
                value=int(seq[same[0]]),
                expected="one row per record (seq values distinct)",
            )
        frame = frame.iloc[order].reset_index(drop=True)
    rows = _Rows(seq, order)
    kinds = []
    for i, k in enumerate(frame["kind"].tolist()):
        if _missing(k):
            raise rows.error(i, "kind", k, "a kind name (str)")
        kinds.append(str(k))
    starts = rows.ints(frame, "window_start")
    ends = rows.ints(frame, "window_end")
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
    fields = [
        kinds,
        rows.ints(frame, "proc_time"),
        rows.ints(frame, "watermark"),
        [str(o) for o in frame["operator"].tolist()],
        [None if _missing(k) else k for k in frame["key"].tolist()],
        windows,
        rows.ints(frame, "ts"),
        details,
    ]
    return from_fields(fields, seq)


# the columns ``from_pandas`` reads (``seq`` is optional: the rows' positions then)
_NEEDED = tuple(name for name in FRAME_COLUMNS if name != "seq")


def _seq(frame: pd.DataFrame) -> np.ndarray:
    """The frame's ``seq`` as a new ``int64`` array (never the frame's own)."""
    column = frame["seq"]
    if column.dtype.kind in "iu":
        return np.array(column.to_numpy(), dtype=np.int64, copy=True)
    rows = _Rows(np.arange(len(frame), dtype=np.int64), None, with_seq=False)
    expected = "the record's position (an int)"
    values = rows.ints(frame, "seq", expected)
    for i, v in enumerate(values):
        if v is None:
            raise rows.error(i, "seq", column.iloc[i], expected)
    return np.array(values, dtype=np.int64)


class _Rows:
    """Where a frame's cell is, for ``from_pandas``'s errors: its row and ``seq``."""

    def __init__(
        self, seq: np.ndarray, order: np.ndarray | None = None, *, with_seq: bool = True
    ) -> None:
        self.seq = seq
        self.order = order
        self.with_seq = with_seq

    def error(self, i: int, name: str, value: Any, expected: str) -> InputError:
        row = i if self.order is None else int(self.order[i])
        at = f"frame row {row}" + (f" (seq {int(self.seq[i])})" if self.with_seq else "")
        return InputError(f"{at}: not a trace value", field=name, value=value, expected=expected)

    def ints(
        self, frame: pd.DataFrame, name: str, expected: str = "int milliseconds or missing"
    ) -> list[int | None]:
        """A time / bound column's cells as ints (None: missing), else raises naming it."""
        out: list[int | None] = []
        append = out.append
        for i, v in enumerate(frame[name].tolist()):
            if v.__class__ is int:
                append(v)
                continue
            try:
                append(_int_or_none(v))
            except (TypeError, ValueError):
                raise self.error(i, name, v, expected) from None
        return out


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def _int_or_none(v: Any) -> int | None:
    """An int from a frame cell (floats beyond the long range snap to MIN / MAX); a cell
    that is no whole number raises ``ValueError`` / ``TypeError``."""
    if _missing(v):
        return None
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if not isinstance(v, float):
        raise TypeError(v)
    if abs(v) >= 2.0**63:
        return 2**63 - 1 if v > 0 else -(2**63)
    if not v.is_integer():
        raise ValueError(v)
    return int(v)


def _cell(v: Any, *, widened: bool) -> Any:
    """A detail cell: missing as None; whole floats of a widened column as ints."""
    if _missing(v):
        return None
    return int(v) if widened and isinstance(v, float) and v.is_integer() else v
