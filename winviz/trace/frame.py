"""The trace as a pandas DataFrame, and back.

``to_pandas`` gives one row per record: ``seq``; ``kind``, ``operator`` and ``key`` as
categoricals (``key`` stays an object column when its values cannot be pandas categories:
unhashable keys, or keys pandas holds equal such as ``1`` and ``True``); ``proc_time``,
``watermark``, ``window_start``, ``window_end`` and ``ts`` as nullable ``Int64`` (``<NA>``
where absent; ``window_*`` are absent for the global window and for records without one);
then one object column per detail field of the kinds present, in ``DETAIL_FIELDS`` order,
``None`` on the rows of other kinds. Values are the engine's own objects (a namespace is a
``TimeWindow``, an element value is the record itself). ``frame.attrs["schema_version"]``
names the schema.

``from_pandas`` reads such a frame back into columns (``winviz.viz`` accepts a frame this way).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

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
        return pd.Categorical.from_codes(column.codes, categories=column.values)
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
            return pd.Categorical.from_codes(remap[column.codes], categories=categories)
    except TypeError:
        pass
    return pd.Series(column.decode(), dtype=object)


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


def detail_pieces(c: TraceColumns) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """Each detail field of the kinds present (in ``DETAIL_FIELDS`` order; ``detail`` for a
    kind the schema lacks) as (rows, values) pieces, one per kind that has the field."""
    per_kind = kind_rows(c)
    names: list[str] = []
    for kind, fields in DETAIL_FIELDS.items():
        if kind in per_kind:
            names.extend(f for f in fields if f not in names)
    if any(kind not in DETAIL_FIELDS for kind in per_kind):
        names.append("detail")
    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {name: [] for name in names}
    for kind, rows in per_kind.items():
        fields = detail_names(kind)
        details = c.detail[rows]
        if len(fields) == 1:
            parts[fields[0]].append((rows, details))
            continue
        # details are often shared objects (a window's timer details): split each once
        ids = np.fromiter(map(id, details.tolist()), dtype=np.uint64, count=len(details))
        codes, first = first_of_each(ids)
        distinct = details[first].tolist()
        for i, name in enumerate(fields):
            values = list(map(itemgetter(i), distinct))
            parts[name].append((rows, object_array(values)[codes]))
    return parts


def detail_columns(c: TraceColumns) -> dict[str, Any]:
    """One column per detail field of the kinds present, missing on the rows of other kinds:
    a Categorical when every value is a string (a domain, a trigger call, an input name),
    else objects (None where missing)."""
    return {name: _column(len(c), pieces) for name, pieces in detail_pieces(c).items()}


def first_of_each(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` (numbered in order of first appearance) and the position of each
    code's first value."""
    codes, uniques = pd.factorize(values)
    first = np.zeros(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return codes, first


def _column(n: int, pieces: list[tuple[np.ndarray, np.ndarray]]) -> Any:
    """A detail field's column from its (rows, values) pieces."""
    rows = pieces[0][0] if len(pieces) == 1 else np.concatenate([r for r, _ in pieces])
    values = pieces[0][1] if len(pieces) == 1 else np.concatenate([v for _, v in pieces])
    if set(map(type, values.tolist())) == {str}:
        # categories in order of first appearance, piece by piece (as the rows are given)
        local, categories = pd.factorize(values)
        codes = np.full(n, -1, dtype=np.int32)
        codes[rows] = local
        return pd.Categorical.from_codes(codes, categories=list(categories))
    out = np.empty(n, dtype=object)  # an empty object array holds None
    out[rows] = values
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
