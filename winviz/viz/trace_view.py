"""A trace as the charts read it — the only place ``winviz.viz`` reads trace records.

``open_trace`` checks a ``wv.Trace``, its ``to_pandas()`` DataFrame or a result with a
``.trace`` and returns a ``TraceView``, a columnar read-only view; an input that cannot be
drawn raises ``TraceInputError``, whose message the charts show in place of a plot.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pandas as pd

from winviz.collector import paused
from winviz.trace import FRAME_COLUMNS, SCHEMA_VERSION, Trace, detail_names
from winviz.trace.coded import LONG_MAX, LONG_MIN, object_array
from winviz.trace.columns import window_table
from winviz.trace.frame import from_pandas

P = ParamSpec("P")
R = TypeVar("R")
WINDOW_KINDS = ("assigned", "skipped_late_window", "fired", "late_dropped")


def gc_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with the cyclic garbage collector paused while it runs
    (``winviz.collector.paused``): a chart makes many containers and no cycles."""

    @functools.wraps(fn)
    def with_collector_paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused():
            return fn(*args, **kwargs)

    return with_collector_paused


class TraceInputError(ValueError):
    """The input is not a trace winviz.viz can draw; the message says why and what to do."""


class TraceView:
    """Read-only access to a trace's columns (``TraceColumns``) by record position (a
    ``to_pandas`` DataFrame is read back into columns first). A read of a field of some records
    reads the field's part for those records' kinds (``TraceColumns.part``). ``c`` is the whole
    trace: ``c.window.codes`` go with ``window_table()``, never with a part's codes."""

    def __init__(self, source: Trace | pd.DataFrame) -> None:
        if isinstance(source, Trace):
            self.trace = source
        else:
            self.trace = Trace.from_columns(from_pandas(source), view=True)
        self.c = self.trace.columns()
        self._codes = self.c.kind.codes
        self._code_of = {k: i for i, k in enumerate(self.c.kind.values)}
        self._kind_names = self.c.kind.lookup()
        # per window column or part read (by id): the column and its window table
        self._tables: dict[int, tuple[Any, Any]] = {}
        self.memo: dict[Any, Any] = {}  # tables derived from this view (see ``memoized``)
        # ``select``'s results by (kinds, operator), and the kinds present in each (by id)
        self._selected: dict[tuple[tuple[str, ...], str | None], np.ndarray] = {}
        self._kinds_of: dict[int, tuple[np.ndarray, list[str]]] = {}
        self._operators: dict[tuple[str, ...], list[str]] = {}  # ``operators``' by kinds
        self._ints: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}  # (``ints``)

    @property
    def kinds(self) -> np.ndarray:
        """The kind of every record (an object array)."""
        return self._kind_names[self._codes]

    def kinds_of(self, rows: np.ndarray) -> np.ndarray:
        """The kinds of some records (object array) — cheaper than ``kinds[rows]``."""
        return self._kind_names[self._codes[rows]]

    def kind_codes(self, rows: np.ndarray) -> np.ndarray:
        """The kind codes of some records (compare them with ``kind_code``)."""
        return self._codes[rows]

    def kind_code(self, kind: str) -> int:
        """The code of ``kind`` in ``kind_codes`` (-1 when no record is of it)."""
        return self._code_of.get(kind, -1)

    def operators(self, *kinds: str) -> list[str]:
        """Operators that wrote records of these kinds, in order of first appearance (found
        once per view and kinds)."""
        kinds = tuple(k for k in dict.fromkeys(kinds) if k in self._code_of)
        found = self._operators.get(kinds)
        if found is None:
            column = self.c.operator
            codes = pd.unique(column.codes[self.select(*kinds)]).tolist()
            found = self._operators[kinds] = [column.values[c] for c in codes]
        return list(found)

    def __len__(self) -> int:
        return len(self._codes)

    def counts(self) -> dict[str, int]:
        """How many records of each kind."""
        n = np.bincount(self._codes, minlength=len(self._code_of))
        return {k: int(n[i]) for k, i in self._code_of.items()}

    def select(self, *kinds: str, operator: str | None = None) -> np.ndarray:
        """The positions of records of these kinds (of one operator), in seq order (read-only:
        found once per view and shared)."""
        kinds = tuple(k for k in dict.fromkeys(kinds) if k in self._code_of)
        found = self._selected.get((kinds, operator))
        if found is not None:
            return found
        if len(kinds) == 1 and operator is None:
            rows = np.flatnonzero(self._codes == self._code_of[kinds[0]])
        elif len(kinds) == 1:
            rows = self.select(kinds[0])
            column = self.c.operator
            rows = rows[column.codes[rows] == column.code_of(operator)]
        else:  # each kind's records in seq order: one sort of their union
            parts = [p for p in (self.select(k, operator=operator) for k in kinds) if len(p)]
            parts = parts or [np.zeros(0, dtype=np.int64)]
            rows = parts[0] if len(parts) == 1 else np.sort(np.concatenate(parts), kind="stable")
        rows.setflags(write=False)
        present = [k for k in kinds if len(self._selected.get(((k,), operator), rows))]
        self._selected[(kinds, operator)] = rows
        self._kinds_of[id(rows)] = (rows, present)  # (the array kept: its id stays its own)
        return rows

    def read_parts(self, parts: dict[str, tuple[str, ...] | None]) -> None:
        """Read each field's part for these kinds at once (``TraceColumns.part``; None: the
        whole column), so that later reads of single kinds find their records decoded."""
        for name, kinds in parts.items():
            if kinds is None:
                getattr(self.c, name)
                continue
            present = [k for k in kinds if k in self._code_of]
            if present:
                self.c.part(name, present)

    def part(self, name: str, rows: np.ndarray) -> Any:
        """Field ``name``'s part for the kinds of these records (``TraceColumns.part``): its
        values are the field's on these records."""
        if not len(rows):
            return self.c.part(name, ())
        return self.c.part(name, self._kinds_in(rows))

    def _kinds_in(self, rows: np.ndarray) -> list[str]:
        """The kinds of these records (remembered for the arrays ``select`` made)."""
        known = self._kinds_of.get(id(rows))
        if known is not None and known[0] is rows:
            return known[1]
        present = np.bincount(self._codes[rows], minlength=len(self._kind_names))
        return self._kind_names[np.flatnonzero(present)].tolist()

    def column(self, name: str, rows: np.ndarray) -> np.ndarray:
        """A base column (kind, proc_time, watermark, operator, key, window, ts) for rows, as
        an object array; ``window`` gives (start, end) pairs or None."""
        if name in ("proc_time", "watermark", "ts"):
            return object_array(self.part(name, rows).take(rows).tolist())
        if name == "window":
            start, end, present = self.bounds(rows)
            return object_array(
                [
                    (s, e) if p else None
                    for s, e, p in zip(start.tolist(), end.tolist(), present.tolist(), strict=True)
                ]
            )
        return self.part(name, rows).decode(rows)

    def detail(self, kind: str, name: str, rows: np.ndarray) -> np.ndarray:
        """A detail field of records that are all of ``kind``."""
        names = detail_names(kind)
        raw = self.c.values_at("detail", rows, (kind,))
        if len(names) == 1:
            return raw
        i = names.index(name)
        return object_array([d[i] for d in raw.tolist()])

    def numbers(self, name: str, rows: np.ndarray) -> np.ndarray:
        """A time column as float64 (NaN where absent) — for vectorised arithmetic only;
        values beyond 2**53 are approximate (they are drawn clipped anyway)."""
        return _numbers(*self.ints(name, rows))

    def ints(self, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A time column (proc_time, watermark, ts) as exact int64 values and a mask of where
        a value is present (absent values are 0 in the first array); read-only, read once per
        view for the arrays ``select`` made."""
        known = self._kinds_of.get(id(rows))
        key = (name, id(rows)) if known is not None and known[0] is rows else None
        if key in self._ints:
            return self._ints[key]
        column = self.part(name, rows).take(rows)
        out, present = column.values, column.present
        if not column.exact:
            out = np.zeros(len(rows), dtype=np.int64)
            out[present] = [min(max(int(v), LONG_MIN), LONG_MAX) for v in column.values[present]]
        if key is not None:
            out.setflags(write=False)
            present.setflags(write=False)
            self._ints[key] = (out, present)
        return out, present

    def window_table(self, window: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(start, end, is a time window) of each distinct window of a window column or part
        (default: the whole trace's), by window code (``winviz.trace.columns.window_table``),
        made once per column."""
        window = self.c.window if window is None else window
        made = self._tables.get(id(window))
        if made is None:  # (the column kept alive with its table: ids stay its own)
            made = self._tables[id(window)] = (window, window_table(window.values))
        return made[1]

    def window_codes(
        self, rows: np.ndarray
    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The window codes of some records and the table they index ((start, end, is a time
        window) per code, as ``window_table``), both of the window part of these records'
        kinds: compare these codes with each other, never with ``c.window.codes``."""
        window = self.part("window", rows)
        return window.codes[rows], self.window_table(window)

    def bounds(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The windows of some records as (start, end, present): int64 arrays and a mask of
        the records that have a time window (False for none and for the global window)."""
        codes, (starts, ends, has) = self.window_codes(rows)
        return starts[codes], ends[codes], has[codes]


def _numbers(ints: np.ndarray, present: np.ndarray) -> np.ndarray:
    """``TraceView.numbers`` of a time column read with ``TraceView.ints``."""
    out = ints.astype(float)
    out[~present] = np.nan
    return out


def open_trace(source: Any) -> TraceView:
    """A TraceView of a Trace, a trace DataFrame or a result with ``.trace`` (a TraceView as
    it is: charts drawn from one view share the tables derived from it, see ``memoized``);
    raises TraceInputError with a readable reason when the input cannot be drawn."""
    if isinstance(source, TraceView):
        return source
    if source is None:
        raise TraceInputError(
            "The trace given is None. Pass result.trace (or the JobExecutionResult itself) of "
            "a job run with StreamExecutionEnvironment(trace=True) (the default)."
        )
    if not isinstance(source, (Trace, pd.DataFrame)) and hasattr(source, "trace"):
        if source.trace is None:
            raise TraceInputError(
                "There is no trace: the job ran with trace=False. Run it with "
                "StreamExecutionEnvironment(trace=True) (the default) and pass result.trace."
            )
        if isinstance(source.trace, Trace):
            source = source.trace
    if isinstance(source, pd.DataFrame):
        version = source.attrs.get("schema_version")
        if version != SCHEMA_VERSION:
            found = "no schema_version" if version is None else f"schema version {version!r}"
            raise TraceInputError(
                f"This DataFrame has {found} (frame.attrs['schema_version']); winviz.viz reads "
                f"trace schema version {SCHEMA_VERSION}. Pass the Trace itself, or a frame made "
                f"by Trace.to_pandas() of this winviz version."
            )
        missing = [c for c in FRAME_COLUMNS if c not in source.columns]
        if missing:
            raise TraceInputError(
                f"This DataFrame lacks the trace column(s) {', '.join(missing)}; it does not "
                "look like Trace.to_pandas() output."
            )
    if isinstance(source, (Trace, pd.DataFrame)):
        return TraceView(source)
    raise TraceInputError(
        f"Expected a winviz Trace or its to_pandas() DataFrame, got {type(source).__name__}. "
        "Pass result.trace or result.trace.to_pandas()."
    )


# -- tidy frames ------------------------------------------------------------------------------


class Columns:
    """A table as named numpy arrays of equal length (cheaper than a DataFrame for a chart's
    few hundred rows): ``table[name]`` a column, ``len(table)`` its row count."""

    __slots__ = ("_data", "_n")

    def __init__(self, data: dict[str, np.ndarray]) -> None:
        self._data = data
        self._n = len(next(iter(data.values()))) if data else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self._data[name]

    def __len__(self) -> int:
        return self._n

    @property
    def empty(self) -> bool:
        return self._n == 0

    def take(self, rows: np.ndarray) -> Columns:
        """The rows at these positions (or where a boolean mask is True)."""
        return Columns({name: values[rows] for name, values in self._data.items()})

    @property
    def columns(self) -> list[str]:
        """The column names, in order."""
        return list(self._data)


def memoized(view: TraceView, name: str, operator: str, build: Any) -> Any:
    """``build()`` once per view, table name and operator (shared: never changed in
    place)."""
    key = (name, operator)
    if key not in view.memo:
        view.memo[key] = build()
    return view.memo[key]


def window_operators(view: TraceView) -> list[str]:
    """Operators that wrote window records, in order of first appearance."""
    return view.operators(*WINDOW_KINDS)


def _times(view: TraceView, name: str, rows: np.ndarray) -> pd.Series:
    """A time column of some records: int64 when every one has an exact value, else objects
    (ints, None where absent)."""
    column = view.part(name, rows).take(rows)
    if column.exact and column.present.all():
        return pd.Series(column.values, dtype=np.int64)
    return _objects(view.column(name, rows))


def _objects(values: Any) -> pd.Series:
    """A column of Python objects as they are (not pandas' Arrow-backed str dtype)."""
    return pd.Series(values, dtype=object)
