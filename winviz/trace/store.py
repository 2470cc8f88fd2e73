"""The trace store (``Trace``): written through ``trace.writer`` into one flat buffer (plain
records of ``BASE_FIELDS`` values, and declared runs of packed entries,
``winviz.trace.element_entry``), read as columns (``Pieces`` turns what was written since the
last read into a chunk). ``to_json()`` is canonical: the same run gives the same bytes.
"""

from __future__ import annotations

import json
import numbers
import reprlib
from collections.abc import Iterable, Iterator
from difflib import get_close_matches
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from winviz.collector import paused
from winviz.errors import ArgumentTypeError, InputError, PositionError
from winviz.trace.codec import jsonable
from winviz.trace.columns import TraceColumns, concat, empty
from winviz.trace.element_entry import Packed
from winviz.trace.pieces import Pieces, Plain, Slots, sliced, spans
from winviz.trace.schema import (
    BASE_FIELDS,
    DETAIL_FIELDS,
    SCHEMA_VERSION,
    TraceRecord,
    split_subtask,
    window_bounds,
)
from winviz.trace.writer import TraceWriter

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_ANY: Any = object()  # "no filter" for filters whose value may be None
_BLOCK = 1 << 16  # records decoded at a time when iterating


class _ReadOnlyBuffer(list):
    """The write buffer of a read-only trace (``Trace.where``'s view): refuses every write."""

    def extend(self, _values: Iterable[Any]) -> None:
        raise TypeError("this trace is a read-only selection (Trace.where); write to the run's")


class Trace:
    """The records of one run, in ``seq`` order (see the module docstring)."""

    __slots__ = (
        "__weakref__",
        "_buffer",
        "_chunks",
        "_packed_records",
        "_packed_slots",
        "_runs",
        "_view",
        "writer",
    )

    schema_version = SCHEMA_VERSION
    WIDTH = len(BASE_FIELDS)
    FIELDS = BASE_FIELDS

    def __init__(self, *, view: bool = False) -> None:
        self._buffer: list[Any] = _ReadOnlyBuffer() if view else []
        self._chunks: list[TraceColumns] = []
        # the declared runs of packed entries: (first slot, marker, entries), in buffer order
        self._runs: list[tuple[int, Packed, int]] = []
        self._packed_slots = 0
        self._packed_records = 0
        self._view = view  # a read-only selection of another trace (``where``)
        self.writer = TraceWriter(self)  # the one way records go in

    @classmethod
    def from_columns(cls, columns: TraceColumns, *, view: bool = False) -> Trace:
        """A trace holding these columns (``view``: read-only, as ``where`` returns)."""
        trace = cls(view=view)
        trace._chunks = [columns]
        return trace

    def append_run(self, marker: Packed, values: list[Any], entries: int) -> None:
        """Append and declare a run of ``entries`` packed entries of ``marker`` (``values``:
        each entry's marker, then its ``width`` values)."""
        step, start = 1 + marker.width, len(self._buffer)
        self._buffer.extend(values)
        self._packed_slots += entries * step
        self._packed_records += entries * marker.count
        runs = self._runs
        if runs and runs[-1][1] is marker and runs[-1][0] + runs[-1][2] * step == start:
            runs[-1] = (runs[-1][0], marker, runs[-1][2] + entries)
        else:
            runs.append((start, marker, entries))

    def __len__(self) -> int:
        buffered = (len(self._buffer) - self._packed_slots) // self.WIDTH + self._packed_records
        return sum(len(c) for c in self._chunks) + buffered

    def columns(self) -> TraceColumns:
        """Every record as columns."""
        if self._buffer:
            first = sum(len(c) for c in self._chunks)
            with paused():  # many new containers, no cycles: no collection passes over them
                self._chunks.append(self._buffer_columns(first))
        if len(self._chunks) > 1:
            self._chunks = [concat(self._chunks)]
        return self._chunks[0] if self._chunks else empty()

    def _buffer_columns(self, first: int) -> TraceColumns:
        """The write buffer as columns (``Pieces``), the buffer left empty (``_take``)."""
        data, width = self._buffer, self.WIDTH
        run_starts, of_run, entries = zip(*self._runs, strict=True) if self._runs else ((), (), ())
        markers = {m: 1 + i for i, m in enumerate(dict.fromkeys(of_run))}  # (label: 1 + i)
        label = np.fromiter(map(markers.__getitem__, of_run), np.int64, len(of_run))
        step = np.array([0, *(1 + m.width for m in markers)], dtype=np.int64)[label]
        count = np.array([0, *(m.count for m in markers)], dtype=np.int64)[label]
        start, n_entries = np.array(run_starts, dtype=np.int64), np.array(entries, dtype=np.int64)
        stop = start + n_entries * step
        # in buffer order: the plain records before each run, the run; then those after
        before, after = np.concatenate(([0], stop)), np.append(start, len(data))
        piece_label = np.zeros(2 * len(start) + 1, dtype=np.int64)
        piece_label[1::2] = label
        records = np.empty(len(piece_label), dtype=np.int64)
        records[0::2], records[1::2] = (after - before) // width, n_entries * count
        keep = np.ones(len(piece_label), dtype=bool)
        keep[0::2] = after > before
        plain_spans = list(
            zip(before[keep[0::2]].tolist(), after[keep[0::2]].tolist(), strict=True)
        )
        runs = {
            m: list(zip(start[label == i].tolist(), stop[label == i].tolist(), strict=True))
            for m, i in markers.items()
        }
        kinds = sliced(data, plain_spans, 0, width)
        if ((after - before) % width).any() or not set(map(type, kinds)) <= {str}:
            raise ValueError("trace write buffer: a record whose kind is not a str")
        data = self._take()
        plain = Plain(data, plain_spans, width, kinds)
        if not markers:
            n, plain_at, groups = len(plain), None, []
        else:
            label_of, counts = piece_label[keep], records[keep]
            starts = np.cumsum(counts) - counts  # each piece's first record
            n = int(counts.sum())
            is_plain = label_of == 0
            plain_at = spans(starts[is_plain], counts[is_plain])
            groups = []  # (marker, its entries slot by slot, each entry's first record)
            for marker, i in markers.items():
                slots = Slots(data, marker.width, runs[marker])
                mine = label_of == i
                heads = spans(starts[mine], counts[mine] // marker.count, marker.count)
                groups.append((marker, slots, heads))
        seq = np.arange(first, first + n, dtype=np.int64)
        pieces = Pieces(n, plain, plain_at, groups)
        return TraceColumns.pending(seq, pieces.decode, pieces.part)

    def _take(self) -> list[Any]:
        """The write buffer's values, a new empty buffer (without runs) in its place."""
        data = self._buffer
        self._buffer = []
        self.writer._extend = self._buffer.extend
        self._runs.clear()
        self._packed_slots = self._packed_records = 0
        return data

    def _unpacked(self) -> list[Any]:
        """The write buffer record by record (packed entries through ``Packed.unpack``)."""
        data, width = self._buffer, self.WIDTH
        out: list[Any] = []
        i, end = 0, len(data)
        while i < end:
            head = data[i]
            if head.__class__ is str:
                out.extend(data[i : i + width])
                i += width
            else:
                head.unpack(data, i + 1, out)
                i += 1 + head.width
        return out

    def __getitem__(self, i: int) -> TraceRecord:
        """The ``i``-th record (its ``seq`` for a whole trace)."""
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise ArgumentTypeError(
                "trace[i] takes one record position",
                field="i",
                value=i,
                expected="an int; several positions: trace.records_at(rows), a selection: "
                "trace.where(...)",
            )
        n = len(self)
        return next(self._records(_in_trace(np.array([int(i)]), n, "i", "trace[i]") % n))

    def __iter__(self) -> Iterator[TraceRecord]:
        n = len(self)
        for start in range(0, n, _BLOCK):
            yield from self._records(np.arange(start, min(n, start + _BLOCK)))

    def _records(
        self, rows: np.ndarray, kinds: Iterable[str] | None = None
    ) -> Iterator[TraceRecord]:
        """The records at these positions (``kinds``, when known: read from their parts)."""
        c = self.columns()
        wanted = None if kinds is None else frozenset(kinds)

        def field(name: str) -> Any:
            return getattr(c, name) if wanted is None else c.part(name, wanted)

        return map(
            TraceRecord,
            c.seq[rows].tolist(),
            c.kind.decode(rows).tolist(),
            field("proc_time").take(rows).tolist(),
            field("watermark").take(rows).tolist(),
            c.operator.decode(rows).tolist(),
            field("key").decode(rows).tolist(),
            field("window").decode(rows).tolist(),
            field("ts").take(rows).tolist(),
            field("detail")[rows].tolist(),
        )

    def rows_where(
        self,
        kind: str | Iterable[str] | None = None,
        operator: str | Iterable[str] | None = None,
        key: Any = _ANY,
        window: Any = _ANY,
    ) -> np.ndarray:
        """Positions of the records that match every filter given (see ``where``)."""
        c = self.columns()
        mask = np.ones(len(c), dtype=bool)
        for field, column, want in (("kind", c.kind, kind), ("operator", c.operator, operator)):
            if want is not None:
                names = _known(field, want, column.values)
                codes = [i for i, v in enumerate(column.values) if v in names]
                mask &= np.isin(column.codes, codes)
        if key is not _ANY:
            code = _code_of(
                c.key,
                "key",
                key,
                f"a {type(key).__name__} can never be a key (keys are hashable, as Flink's key "
                "selectors' results must be)",
                "one key: a str, int, float, bool or tuple of those (select several keys one by "
                "one)",
            )
            mask &= c.key.codes == code
        if window is not _ANY:
            mask &= c.window.codes == _window_code(c, window)
        return np.flatnonzero(mask)

    def where(
        self,
        kind: str | Iterable[str] | None = None,
        operator: str | Iterable[str] | None = None,
        key: Any = _ANY,
        window: Any = _ANY,
    ) -> Trace:
        """A read-only trace of the records that match every filter given (``seq`` kept):
        ``kind`` and ``operator`` a name or several, ``key`` a key (by type and value: ``1``
        is not ``True``), ``window`` a ``TimeWindow``, a ``(start, end)`` pair of ints, the
        ``GlobalWindow`` or None. An unknown kind or operator, a key that can never be one
        and a window that is none of those raise, naming it."""
        return Trace.from_columns(
            self.columns().take(self.rows_where(kind, operator, key, window)), view=True
        )

    def until(self, proc_time: int) -> Trace:
        """A read-only trace of the records written up to processing time ``proc_time`` (int
        ms): the run as it stood then."""
        if isinstance(proc_time, bool) or not isinstance(proc_time, numbers.Integral):
            raise ArgumentTypeError(
                "until(proc_time): a processing time is int milliseconds",
                field="proc_time",
                value=proc_time,
                expected="an int (ms)",
            )
        proc_time = int(proc_time)
        c = self.columns()
        later = np.flatnonzero(c.proc_time.present & (c.proc_time.values > proc_time))
        end = int(later[0]) if len(later) else len(c)
        return Trace.from_columns(c.take(np.arange(end)), view=True)

    def records(
        self,
        *kinds: str,
        kind: str | Iterable[str] | None = None,
        operator: str | None = None,
        key: Any = _ANY,
        window: Any = _ANY,
    ) -> list[TraceRecord]:
        """The ``TraceRecord``s of the given kinds (all when none given), optionally of one
        operator, key or window."""
        wanted = [*kinds, *([kind] if isinstance(kind, str) else kind or [])]
        rows = self.rows_where(wanted or None, operator, key, window)
        return list(self._records(rows, wanted or None))

    def records_at(self, rows: np.ndarray | list[int]) -> list[TraceRecord]:
        """The ``TraceRecord``s at these positions (ints; negative from the end). A boolean
        mask, a float or a position beyond the trace raises, naming it."""
        return list(self._records(_positions(rows, len(self))))

    def operators(self, *kinds: str) -> list[str]:
        """The operators that wrote records of these kinds (any when none given), in order."""
        c = self.columns()
        codes = c.operator.codes[self.rows_where(kinds or None)]
        return [c.operator.values[i] for i in dict.fromkeys(codes.tolist())]

    def kinds(self) -> dict[str, int]:
        """How many records of each kind (in order of first appearance)."""
        c = self.columns()
        counts = np.bincount(c.kind.codes, minlength=len(c.kind.values))
        return {k: int(n) for k, n in zip(c.kind.values, counts.tolist(), strict=True) if n}

    def column(self, field: str) -> list[Any]:
        """One base field (``BASE_FIELDS``) or ``seq`` of every record, in order, as a list."""
        if not isinstance(field, str):
            raise ArgumentTypeError(
                "column(field) takes a field's name",
                field="field",
                value=field,
                expected=f"one of seq, {', '.join(BASE_FIELDS)}",
            )
        if field != "seq" and field not in BASE_FIELDS:
            fields = ("seq", *BASE_FIELDS)
            raise InputError(
                f"no field {field!r} in a trace record"
                + "".join(f" ({hint})" for hint in _close_match(field, fields)),
                field="field",
                value=field,
                expected=f"one of {', '.join(fields)}",
            )
        c = self.columns()
        if field == "seq":
            return c.seq.tolist()
        if field == "detail":
            return c.detail.tolist()
        value = getattr(c, field)
        return value.decode().tolist() if hasattr(value, "decode") else value.tolist()

    def to_rows(self) -> list[dict[str, Any]]:
        """Plain dict rows with JSON-ready values (windows as start/end); a value that
        contains itself raises ``InputError`` naming its record."""
        rows = []
        for r in self:
            start, end = window_bounds(r.window)
            try:
                key = jsonable(r.key)
                details = {k: jsonable(v) for k, v in r.details().items()}
            except RecursionError:
                raise InputError(
                    "a value that contains itself (or is nested too deep) has no JSON form",
                    index=r.seq,
                    field=f"{r.kind} record's key or detail",
                    expected="values without cycles",
                ) from None
            row = {
                "seq": r.seq,
                "kind": r.kind,
                "proc_time": r.proc_time,
                "watermark": r.watermark,
                "operator": r.operator,
                "key": key,
                "window_start": start,
                "window_end": end,
                "ts": r.ts,
            }
            row.update(details)
            rows.append(row)
        return rows

    def to_json(self, *, indent: int | None = None) -> str:
        """Canonical JSON (sorted keys, values in ``jsonable``'s form): the same run gives the
        same bytes. A NaN or infinite time raises ``InputError`` naming record and field."""
        rows = self.to_rows()
        doc = {"schema_version": SCHEMA_VERSION, "records": rows}
        try:
            return json.dumps(
                doc,
                sort_keys=True,
                indent=indent,
                allow_nan=False,
                separators=(",", ":") if indent is None else None,
            )
        except ValueError:  # a non-finite float (jsonable writes the details' as text)
            for row in rows:
                for name, value in row.items():
                    try:
                        json.dumps(value, allow_nan=False)
                    except ValueError:
                        raise InputError(
                            "JSON has no NaN or infinity",
                            index=row["seq"],
                            field=name,
                            value=value,
                            expected="an int (ms) or None",
                        ) from None
            raise

    def to_pandas(self) -> pd.DataFrame:
        """One row per record, a column per field (``winviz.trace.frame``)."""
        from winviz.trace.frame import to_pandas

        return to_pandas(self.columns())

    def to_arrow(self) -> pa.Table:
        """The trace as an Arrow table, the layout ``save`` writes (``winviz.trace.files``)."""
        from winviz.trace.files import to_arrow

        return to_arrow(self.columns())

    def save(self, path: str | Path) -> Path:
        """Write the trace to a Parquet file (data only, ``winviz.trace.files``); the path."""
        from winviz.trace.files import save

        if not isinstance(path, (str, Path)):
            raise TypeError(f"path {path!r}: expected a str or pathlib.Path to write to")
        return save(self.columns(), Path(path))


def load_trace(path: str | Path) -> Trace:
    """``winviz.load_trace``: the trace saved at ``path`` by ``Trace.save``, read-only
    (``winviz.trace.read_file``; a file that is not one raises ``TraceFileError``)."""
    from winviz.trace.read_file import load  # pyarrow, imported when a file is read

    if not isinstance(path, (str, Path)):
        raise ArgumentTypeError(
            f"load_trace() takes the path of a trace file, not {type(path).__name__}",
            field="path",
            value=path,
            expected="a str or pathlib.Path of a trace file",
        )
    return Trace.from_columns(load(path), view=True)


def _known(field: str, want: Any, present: list[Any]) -> set[str]:
    """The names a ``kind`` or ``operator`` filter (``want``: a name or several) selects, each
    one the trace can have: a kind of the schema or of ``present`` (the column's dictionary),
    an operator of ``present`` (a view's: its whole run's); else ``InputError`` naming the
    unknown ones with the closest name (or, for an operator, its subtasks)."""
    items = list(want) if isinstance(want, Iterable) and not isinstance(want, str) else [want]
    if not all(isinstance(n, str) for n in items):
        raise ArgumentTypeError(
            f"{field} filters select by name",
            field=field,
            value=want,
            expected="a name (str) or several names",
        )
    names = set(items)
    known = [v for v in present if isinstance(v, str)]
    if field == "kind":
        known = sorted(set(DETAIL_FIELDS).union(known))
        place = "in the trace schema"
        expected = f"kind names of winviz.trace.schema.DETAIL_FIELDS: {', '.join(DETAIL_FIELDS)}"
    else:
        place = "in this trace"
        expected = (
            f"the name of one of the trace's operators: {', '.join(map(repr, known))}"
            if known
            else "an operator name, but the trace has no records"
        )
    unknown = sorted(names.difference(known))
    if not unknown:
        return names
    hints = []
    for name in unknown:
        subtasks = [o for o in known if o != name and split_subtask(o)[0] == name]
        if subtasks:
            hints.append(f"{name!r} runs as the subtasks {', '.join(map(repr, subtasks))}")
        else:
            hints.extend(_close_match(name, known))
    raise InputError(
        f"no {field} {', '.join(map(repr, unknown))} {place}"
        + (f" ({'; '.join(hints)})" if hints else ""),
        field=field,
        value=want,
        expected=expected,
    )


def _close_match(name: str, known: Iterable[str]) -> list[str]:
    """ "did you mean …?" naming the one of ``known`` closest to ``name`` (``difflib``), if one
    is close enough; else nothing."""
    return [f"did you mean {m!r}?" for m in get_close_matches(name, list(known), n=1)]


def _code_of(column: Any, field: str, value: Any, what: str, expected: str) -> int:
    """``value``'s code in a key or window column (-1: in no record), else
    ``ArgumentTypeError`` (``what``, ``expected``) when it can never be one (not hashable)."""
    code = column.code_of(value)
    if code < 0:
        try:
            hash(value)
        except TypeError:
            raise ArgumentTypeError(what, field=field, value=value, expected=expected) from None
    return code


def _positions(rows: Any, n: int) -> np.ndarray:
    """``records_at``'s positions as ``int64``, checked against a trace of ``n`` records."""
    array = np.asarray(rows)
    if array.dtype == object and all(
        isinstance(r, numbers.Integral) and not isinstance(r, bool) for r in array.ravel()
    ):
        array = array.astype(np.int64)
    if array.size == 0 and array.ndim == 1:
        return np.empty(0, dtype=np.int64)
    if array.dtype == bool:
        raise ArgumentTypeError(
            f"records_at takes record positions, not a boolean mask ({array.size} bools)",
            field="rows",
            expected="ints (for a mask: records_at(numpy.flatnonzero(mask)))",
        )
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ArgumentTypeError(
            f"records_at takes record positions, got {reprlib.repr(rows)}",
            field="rows",
            expected="a sequence or 1-d array of ints",
        )
    return _in_trace(array.astype(np.int64, copy=False), n, "rows", "records_at: rows[{}]")


def _in_trace(positions: np.ndarray, n: int, field: str, what: str) -> np.ndarray:
    """``positions`` when each is one of a trace of ``n`` records (negative: from the end),
    else ``PositionError`` naming the first other one (``what``: where it was given, its
    index in ``positions`` formatted in)."""
    bad = np.flatnonzero((positions < -n) | (positions >= n))
    if len(bad):
        raise PositionError(
            f"{what.format(int(bad[0]))} has no record there",
            field=field,
            value=positions[bad[0]].item(),
            expected=f"a position in 0..{n - 1} or -{n}..-1; the trace has {n} records"
            if n
            else "none: the trace has no records",
        )
    return positions


_WINDOWS = (
    "a TimeWindow, a (start, end) pair of ints such as (0, 1000) or wv.TimeWindow(0, 1000), "
    "GLOBAL_WINDOW or None"
)


def _window_code(c: TraceColumns, window: Any) -> int:
    """The code of a window filter (``_WINDOWS``; -1: in no record), else
    ``ArgumentTypeError`` naming what it is."""
    pair = isinstance(window, (tuple, list)) and not hasattr(window, "start")
    if pair and len(window) == 2:
        if not all(_whole(b) for b in window):
            raise ArgumentTypeError(
                "a window's bounds are int milliseconds",
                field="window",
                value=window,
                expected=_WINDOWS,
            )
        want = (int(window[0]), int(window[1]))
        for i, w in enumerate(c.window.values):
            if getattr(w, "end", None) is not None and (w.start, w.end) == want:
                return i
        return -1
    what = f"{type(window).__name__} is no window"
    if pair or isinstance(window, (str, bytes, numbers.Number)):
        what = f"a {f'{len(window)}-item ' if pair else ''}{what}"
        raise ArgumentTypeError(what, field="window", value=window, expected=_WINDOWS)
    return _code_of(c.window, "window", window, what, _WINDOWS)


def _whole(value: Any) -> bool:
    """An int (no bool) or a whole float: a window bound."""
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
