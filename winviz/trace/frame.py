"""The trace as a pandas DataFrame, and back.

``to_pandas`` gives one row per record: ``seq``; ``kind``, ``operator`` and ``key`` as
categoricals (``key`` stays an object column when its values cannot be pandas categories:
unhashable keys, or keys pandas holds equal such as ``1`` and ``True``); ``proc_time``,
``watermark``, ``window_start``, ``window_end`` and ``ts`` as nullable ``Int64`` (``<NA>``
where absent; ``window_*`` are absent for the global window and for records without one);
then one column per detail field of the kinds present, in ``DETAIL_FIELDS`` order: objects,
``None`` on the rows of other kinds (a categorical when every value is a string). Values are
the engine's own objects (a namespace is a ``TimeWindow``, an element value is the record
itself). ``frame.attrs["schema_version"]`` names the schema.

The frame is built column by column from the trace's codes and typed arrays (issue 11): the
categoricals from the existing codes, the times as ``IntegerArray`` over the ``int64`` values
and their masks, and each detail field from ``detail_fields``, which splits a detail tuple
shared by many records once.

``from_pandas`` reads such a frame back into columns (``winviz.viz`` accepts a frame this way).
"""

from __future__ import annotations

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
)
from winviz.trace.schema import DETAIL_FIELDS, SCHEMA_VERSION, detail_names
from winviz.windows.window import TimeWindow


def to_pandas(c: TraceColumns) -> pd.DataFrame:
    """The DataFrame view of some columns (see the module docstring)."""
    with paused():  # many new objects, no cycles: no collection passes over the trace
        starts, ends, has = c.window_bounds()
        columns: dict[str, Any] = {
            "seq": c.seq,
            "kind": categorical(c.kind, strings=True),
            "proc_time": nullable_ints(c.proc_time),
            "watermark": nullable_ints(c.watermark),
            "operator": categorical(c.operator, strings=True),
            "key": categorical(c.key),
            "window_start": pd.arrays.IntegerArray(starts, ~has),
            "window_end": pd.arrays.IntegerArray(ends, ~has),
            "ts": nullable_ints(c.ts),
        }
        columns.update(detail_columns(c))
        frame = pd.DataFrame(columns, copy=False)
    frame.attrs["schema_version"] = SCHEMA_VERSION
    return frame


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
            return from_codes(remap[column.codes], categories)
    except TypeError:
        pass
    return pd.Series(column.decode(), dtype=object)


def from_codes(codes: np.ndarray, categories: Any) -> pd.Categorical:
    """A Categorical of codes made here (each in range, -1 for missing: not checked again)."""
    dtype = pd.CategoricalDtype(categories)
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def kind_rows(c: TraceColumns) -> dict[str, np.ndarray]:
    """The positions of each kind's records, in order (kinds in order of first appearance)."""
    codes = c.kind.codes
    if len(c.kind.values) <= 256:  # a stable sort of small ints is a radix sort: one pass
        codes = codes.astype(np.uint8)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(c.kind.values))
    bounds = np.concatenate(([0], np.cumsum(counts)))
    return {
        kind: order[bounds[i] : bounds[i + 1]] for i, kind in enumerate(c.kind.values) if counts[i]
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
    for kind, rows in per_kind.items():
        fields = detail_names(kind)
        if len(fields) == 1:
            parts[fields[0]].append(DetailPiece(rows, c.detail, None, whole=True))
            continue
        details = c.detail[rows]
        codes: np.ndarray | None = None
        if _mostly_distinct(details):
            distinct, first = details, rows
        else:  # each distinct tuple split once (by identity: the engine shares tuples)
            codes, at = first_of_each(object_ids(details))
            distinct, first = details[at], rows[at]
        tables = split_fields(c, kind, first, distinct.tolist(), len(fields))
        for name, table in zip(fields, tables, strict=True):
            parts[name].append(DetailPiece(rows, table, codes))
    return parts


def _mostly_distinct(details: np.ndarray, sample: int = 256) -> bool:
    """True when evenly spread samples of the details are all different objects (then
    telling them apart would not pay: each record has its own tuple, as ``arrival``)."""
    if len(details) < 4 * sample:
        return False
    picked = object_ids(details[:: len(details) // sample])
    return len(np.unique(picked)) == len(picked)


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


def detail_columns(c: TraceColumns) -> dict[str, Any]:
    """One column per detail field of the kinds present, missing on the rows of other kinds:
    a Categorical when every value is a string (a domain, a trigger call, an input name),
    else objects (None where missing)."""
    return {name: _column(len(c), pieces) for name, pieces in detail_fields(c).items()}


def _all_strings(pieces: list[DetailPiece]) -> bool:
    """True when every value of the pieces is a ``str`` (checked value by value only when
    each piece's first value is one)."""
    for p in pieces:
        first = p.table[p.rows[0] if p.whole else 0] if len(p.rows) else None
        if first.__class__ is not str:
            return False
    return all(set(map(type, p.distinct().tolist())) == {str} for p in pieces)


def _column(n: int, pieces: list[DetailPiece]) -> Any:
    """A detail field's column from its pieces."""
    if _all_strings(pieces):
        # categories in order of first appearance, piece by piece (as the rows are given):
        # each piece's values are in order of first appearance among its rows
        tables = [p.distinct() for p in pieces]
        local, categories = pd.factorize(tables[0] if len(tables) == 1 else np.concatenate(tables))
        codes = np.full(n, -1, dtype=np.int32)
        offset = 0
        for p, table in zip(pieces, tables, strict=True):
            here = local[offset : offset + len(table)]
            offset += len(table)
            codes[p.rows] = here if p.codes is None else here[p.codes]
        return from_codes(codes, list(categories))
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
        name: [_cell(v) for v in frame[name].tolist()]
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


def _cell(v: Any) -> Any:
    """A detail cell: missing as None, whole floats (pandas widened an int column) as int."""
    if _missing(v):
        return None
    return int(v) if isinstance(v, float) and v.is_integer() else v
