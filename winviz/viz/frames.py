"""Tidy frames derived from a trace — the only place ``winviz.viz`` reads trace records.

Input is a ``wv.Trace``, its ``to_pandas()`` DataFrame, or anything with a ``.trace``
(a ``JobExecutionResult``). ``open_trace`` checks it and returns a ``TraceView``, a columnar
read-only view; an input that cannot be drawn raises ``TraceInputError``, whose message the
charts show in place of a plot.

How an element's fate is derived (``element_fates``), in Flink's words. An element is **late**
when its timestamp is at or below the window operator's current watermark when it arrives
(``ts <= watermark`` of its ``element`` record: Flink's "late element"); it is still
**accepted** while one of its windows is within the allowed lateness (the operator assigns it),
and is dropped or sent to the side output only when every window of it is past its cleanup
time. The engine writes, for one input record reaching a window operator, an ``element`` record
followed — before that operator's next ``element`` record — by its ``assigned`` /
``skipped_late_window`` records (one per window) and at most one ``late_dropped`` or
``side_output`` record. Records of *other* operators may interleave (a firing's output
travelling downstream), so the grouping is per operator: each record of kind assigned /
skipped_late_window / late_dropped / side_output belongs to the latest ``element`` record of
its operator in ``seq`` order. Then, per element:

* ``dropped`` — it has a ``late_dropped`` record (late, every window past cleanup);
* ``side output`` — it has a ``side_output`` record (late, every window past cleanup);
* ``late, accepted`` — ``ts <= watermark`` and it was assigned to at least one window (the
  window may not have fired yet: lateness is about the watermark, not about firings);
* ``on time`` — otherwise (``ts > watermark``, or no timestamp / no watermark yet).

How a firing's cause is worded (``firings``): ``cause`` names the trigger call or the timer
that made the window fire ("element", "event-time timer at 4999", "processing-time timer at
999"); ``fired_by`` is its category for legends and labels — "element", "event-time timer",
"processing-time timer", "end of input" (an event-time timer fired by the end-of-input
watermark MAX: the source finished, not a late element), "session merge" or "cause not
traced".

``source_index`` is the ``index`` of the nearest earlier ``arrival`` record when its value
equals the element's value (the record that caused it; elements made by a firing upstream get
none).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring
from operator import is_, itemgetter, ne
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pandas as pd

from winviz.collector import paused
from winviz.trace import FRAME_COLUMNS, SCHEMA_VERSION, Trace, detail_names, jsonable, vocabulary
from winviz.trace.bulk import distinct_objects, first_of_each, object_ids
from winviz.trace.causes import firing_causes as trace_firing_causes
from winviz.trace.codec import OpaqueValue
from winviz.trace.coded import object_array
from winviz.trace.columns import window_table
from winviz.trace.frame import from_pandas

P = ParamSpec("P")
R = TypeVar("R")
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
_FATE_NAMES = np.array(list(vocabulary.ELEMENT_FATES), dtype=object)
WINDOW_KINDS = ("assigned", "skipped_late_window", "fired", "late_dropped")
FATE_KINDS = ("element", "assigned", "skipped_late_window", "late_dropped", "side_output")


def gc_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with Python's cyclic garbage collector paused while it runs
    (``winviz.collector.paused``), as ``Trace.columns`` does for its bulk conversion: a chart
    of a large trace makes hundreds of thousands of short-lived containers and no cycles, and
    every collection pass they trigger would also walk all the objects the trace keeps alive.
    Reference counting still frees everything as usual."""

    @functools.wraps(fn)
    def with_collector_paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused():
            return fn(*args, **kwargs)

    return with_collector_paused


class TraceInputError(ValueError):
    """The input is not a trace winviz.viz can draw; the message says why and what to do."""


class TraceView:
    """Read-only access to a trace's columns (``winviz.trace.columns.TraceColumns``) by
    record position, for the frame builders below. A DataFrame made by ``to_pandas`` is read
    back into columns first (``winviz.trace.frame.from_pandas``): one backend.

    The methods that read a field of some records (``column``, ``detail``, ``ints``,
    ``numbers``, ``codes``, ``bounds``, ``select`` by operator, ``operators``) read the
    field's part for those records' kinds (``TraceColumns.part``): a chart decodes only the
    records of the kinds it reads. ``c`` is the whole trace: ``c.window.codes`` go with
    ``window_table()``, never with a part's codes."""

    def __init__(self, source: Trace | pd.DataFrame) -> None:
        self.source = source
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
        self._rows_of: dict[int, np.ndarray] = {}  # per kind code: its records, in seq order
        self.memo: dict[Any, Any] = {}  # tables derived from this view (see ``memoized``)
        self._last_kinds: tuple[np.ndarray, list[str]] | None = None  # (see ``_kinds_in``)
        # ``select``'s results by (kinds, operator), and the kinds present in each (by id)
        self._selected: dict[tuple[tuple[str, ...], str | None], np.ndarray] = {}
        self._kinds_of: dict[int, tuple[np.ndarray, list[str]]] = {}
        self._operators: dict[tuple[str, ...], list[str]] = {}  # ``operators``' by kinds

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

    def is_kind(self, rows: np.ndarray, kind: str) -> np.ndarray:
        """Boolean mask: which of these records are of ``kind``."""
        return self._codes[rows] == self._code_of.get(kind, -1)

    def operators(self, *kinds: str) -> list[str]:
        """Operators that wrote records of these kinds, in order of first appearance (found
        once per view and kinds: every chart and the summary ask for the window operators)."""
        kinds = tuple(k for k in dict.fromkeys(kinds) if k in self._code_of)
        found = self._operators.get(kinds)
        if found is None:
            found = self._operators[kinds] = self._first_operators(kinds)
        return list(found)

    def _first_operators(self, kinds: tuple[str, ...]) -> list[str]:
        first: dict[int, int] = {}  # operator code -> its first record of these kinds
        operator = self.c.part("operator", kinds)
        for kind in kinds:
            rows = self._rows(self._code_of[kind])
            codes = operator.codes[rows]
            for op in np.flatnonzero(np.bincount(codes)).tolist():
                at = int(rows[int(np.argmax(codes == op))])
                first[op] = min(at, first.get(op, at))
        return [operator.values[op] for op in sorted(first, key=first.__getitem__)]

    def __len__(self) -> int:
        return len(self._codes)

    def counts(self) -> dict[str, int]:
        """How many records of each kind."""
        n = np.bincount(self._codes, minlength=len(self._code_of))
        return {k: int(n[i]) for k, i in self._code_of.items()}

    def select(self, *kinds: str, operator: str | None = None) -> np.ndarray:
        """The positions of records of these kinds, in seq order (read-only: found once per
        view, kinds and operator, and shared; the kinds present among them are remembered
        for ``part``)."""
        kinds = tuple(k for k in dict.fromkeys(kinds) if k in self._code_of)
        found = self._selected.get((kinds, operator))
        if found is not None:
            return found
        if operator is None:
            parts = [self._rows(self._code_of[k]) for k in kinds]
        else:
            parts = [self._rows_at(k, operator, kinds) for k in kinds]
        present = [k for k, p in zip(kinds, parts, strict=True) if len(p)]
        parts = [p for p in parts if len(p)]
        if not parts:
            rows = np.zeros(0, dtype=np.int64)
        elif len(parts) == 1:
            rows = parts[0]
        else:  # each part in seq order: one sort of their union
            rows = np.sort(np.concatenate(parts), kind="stable")  # merges the sorted runs
        rows.setflags(write=False)
        self._selected[(kinds, operator)] = rows
        self._kinds_of[id(rows)] = (rows, present)  # (the array kept: its id stays its own)
        return rows

    def _rows_at(self, kind: str, operator: str, kinds: tuple[str, ...]) -> np.ndarray:
        """The records of one kind at one operator, found once per view (``kinds``: the
        kinds whose operator part to read when it is not read yet)."""
        found = self._selected.get(((kind,), operator))
        if found is None:
            rows = self._rows(self._code_of[kind])
            column = self.c.part("operator", kinds)
            found = rows[column.codes[rows] == column.code_of(operator)]
            found.setflags(write=False)
            self._selected[((kind,), operator)] = found
            self._kinds_of[id(found)] = (found, [kind] if len(found) else [])
        return found

    def _rows(self, code: int) -> np.ndarray:
        """The records of one kind (by its code), found once per view."""
        rows = self._rows_of.get(code)
        if rows is None:
            rows = self._rows_of[code] = np.flatnonzero(self._codes == code)
            rows.setflags(write=False)  # shared by every select of this kind
        return rows

    def read_parts(self, parts: dict[str, tuple[str, ...] | None]) -> None:
        """Read each field's part for these kinds at once (``TraceColumns.part``), the kinds
        that have records only (None: the whole column): a chart that will read a field of
        several kinds one after another asks for their union first, and each later read
        finds its records decoded (one pass over the write buffer per field instead of one
        per kind). Nothing changes when the columns are decoded already."""
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
        """The kinds of these records, remembered for the last array asked about (a frame
        reads several fields of the same records in a row; the array is kept, so it is that
        very array, and frames never change an array of positions in place)."""
        last = self._last_kinds
        if last is not None and last[0] is rows:
            return last[1]
        known = self._kinds_of.get(id(rows))
        if known is not None and known[0] is rows:  # an array ``select`` made
            return known[1]
        present = np.bincount(self._codes[rows], minlength=len(self._kind_names))
        kinds = self._kind_names[np.flatnonzero(present)].tolist()
        self._last_kinds = (rows, kinds)
        return kinds

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

    def codes(self, name: str, rows: np.ndarray) -> tuple[np.ndarray, list[Any]]:
        """A coded base column (operator, key) of some records as integer codes and the
        distinct values, in order of first appearance."""
        column = self.part(name, rows)
        codes, firsts = pd.factorize(column.codes[rows])
        return codes, [column.values[i] for i in firsts.tolist()]

    def ints(self, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A time column (proc_time, watermark, ts) as exact int64 values and a mask of where
        a value is present (absent values are 0 in the first array)."""
        column = self.part(name, rows).take(rows)
        if column.exact:
            return column.values, column.present
        out = np.zeros(len(rows), dtype=np.int64)
        out[column.present] = [
            min(max(int(v), LONG_MIN), 2**63 - 1) for v in column.values[column.present]
        ]
        return out, column.present

    def window_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(start, end, is a time window) of each distinct window of the trace, by window
        code (``winviz.trace.columns.window_table``), made once per view."""
        return self._window_table(self.c.window)

    def _window_table(self, window: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``window_table`` of a window column or part (made once per column)."""
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
        return window.codes[rows], self._window_table(window)

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
    if source is not None and not isinstance(source, (Trace, pd.DataFrame)):
        inner = getattr(source, "trace", None)
        if isinstance(inner, Trace):
            source = inner
    if source is None:
        raise TraceInputError(
            "There is no trace: the job ran with trace=False. Run it with "
            "StreamExecutionEnvironment(trace=True) (the default) and pass result.trace."
        )
    if isinstance(source, Trace):
        return TraceView(source)
    if isinstance(source, pd.DataFrame):
        _check_frame(source)
        return TraceView(source)
    raise TraceInputError(
        f"Expected a winviz Trace or its to_pandas() DataFrame, got {type(source).__name__}. "
        "Pass result.trace or result.trace.to_pandas()."
    )


def _check_frame(frame: pd.DataFrame) -> None:
    version = frame.attrs.get("schema_version")
    if version != SCHEMA_VERSION:
        found = "no schema_version" if version is None else f"schema version {version!r}"
        raise TraceInputError(
            f"This DataFrame has {found} (frame.attrs['schema_version']); winviz.viz reads "
            f"trace schema version {SCHEMA_VERSION}. Pass the Trace itself, or a frame made by "
            f"Trace.to_pandas() of this winviz version."
        )
    missing = [c for c in FRAME_COLUMNS if c not in frame.columns]
    if missing:
        raise TraceInputError(
            f"This DataFrame lacks the trace column(s) {', '.join(missing)}; it does not look "
            "like Trace.to_pandas() output."
        )


# -- tidy frames ------------------------------------------------------------------------------


class Columns:
    """A table as named numpy arrays of equal length, without a pandas DataFrame: what a chart
    that turns a few hundred rows into Vega-Lite rows reads (a DataFrame costs more to build and
    to read a column of than the chart's own work at that size). ``table[name]`` is a column,
    ``len(table)`` its row count; ``frame()`` the DataFrame."""

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

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (object columns kept as objects)."""
        return pd.DataFrame(
            {
                name: pd.Series(values, dtype=object) if values.dtype == object else values
                for name, values in self._data.items()
            }
        )


def memoized(view: TraceView, name: str, operator: str, build: Any) -> Any:
    """``build()`` once per view, table name and operator: the frames below that several
    charts (and an explorer's summary) of one trace read are derived once per view. The
    table is shared: callers never change it in place."""
    key = (name, operator)
    if key not in view.memo:
        view.memo[key] = build()
    return view.memo[key]


def window_operators(view: TraceView) -> list[str]:
    """Operators that wrote window records, in order of first appearance."""
    return view.operators(*WINDOW_KINDS)


def short(value: Any, limit: int = 60) -> str:
    """A compact text of a value for tooltips and labels: strings as they are, anything else
    as compact JSON; cut to ``limit`` characters."""
    text = value if value.__class__ is str else plain_json(value)
    if text is None:
        text = dataclass_json(value)
    if text is None:
        text = (
            value
            if isinstance(value, str)
            else json.dumps(jsonable(value), ensure_ascii=False, separators=(",", ":"), default=str)
        )
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shorts(values: list[Any], limit: int = 60) -> list[str]:
    """``short`` of each value; the usual payloads — a string, an int, a (string, int) pair
    such as ``("k3", 1200)`` — written directly (the same texts)."""
    out = []
    append = out.append
    for v in values:
        c = v.__class__
        if c is tuple and len(v) == 2 and v[0].__class__ is str and v[1].__class__ is int:
            text = f"[{encode_basestring(v[0])},{v[1]}]"
        elif c is str:
            text = v
        elif c is int:
            text = f"{v}"
        else:
            append(short(v, limit))
            continue
        append(text if len(text) <= limit else text[: limit - 1] + "…")
    return out


def plain_json(value: Any) -> str | None:
    """The compact JSON ``short`` writes for a plain value — an int, a finite float, a bool,
    None, or a tuple / list of them and of strings — written directly (the same text as
    ``json.dumps(jsonable(value))``); None for anything else."""
    write = _PLAIN_JSON.get(value.__class__)
    try:
        if write is not None:
            return write(value)
        if value.__class__ is tuple or value.__class__ is list:
            return "[" + ",".join([_JSON_OF[v.__class__](v) for v in value]) + "]"
    except (KeyError, ValueError):  # another type inside, or a float JSON cannot say
        pass
    return None


def dataclass_json(value: Any) -> str | None:
    """The compact JSON ``short`` writes for a dataclass instance whose fields are all plain
    values (an int, a finite float, a bool, None, a string), written directly: the same text
    as ``json.dumps(jsonable(value))`` — the object of its fields, in the order of their
    names — for the usual record of a lesson's data (``datasets``' clicks...); None for
    anything else (a dataclass with a ``start`` and an ``end``, which ``jsonable`` writes as a
    window, or with a field of another type)."""
    names = _FIELD_NAMES.get(value.__class__, _NOT_SEEN)
    if names is _NOT_SEEN:
        names = _field_names(value.__class__)
    if names is None or (hasattr(value, "start") and hasattr(value, "end")):
        return None
    parts = []
    try:
        for name, key in names:
            field = getattr(value, name)
            parts.append(f"{key}:{_JSON_OF[field.__class__](field)}")
    except (KeyError, ValueError, AttributeError):  # another type, a float JSON cannot say
        return None
    return "{" + ",".join(parts) + "}"


_NOT_SEEN: Any = object()
_FIELD_NAMES: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _field_names(cls: type) -> tuple[tuple[str, str], ...] | None:
    """A dataclass's field names as ``jsonable`` orders them (sorted) with their JSON texts;
    None for a class that is not a plain dataclass (``jsonable`` writes an ``OpaqueValue`` or a
    dataclass that is also an int, a string, a list... otherwise). Remembered per class."""
    names = None
    if dataclasses.is_dataclass(cls) and not issubclass(
        cls, (OpaqueValue, int, float, str, list, tuple, dict)
    ):
        fields = sorted(f.name for f in dataclasses.fields(cls))
        names = tuple((name, encode_basestring(name)) for name in fields)
    _FIELD_NAMES[cls] = names
    return names


def _finite(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(value)
    return float.__repr__(value)


_PLAIN_JSON: dict[type, Any] = {
    int: int.__repr__,
    bool: lambda b: "true" if b else "false",
    type(None): lambda _: "null",
    float: _finite,
}
_JSON_OF: dict[type, Any] = {**_PLAIN_JSON, str: encode_basestring}


def element_fates(view: TraceView, operator: str) -> pd.DataFrame:
    """One row per element reaching ``operator``: seq, proc_time, ts, fate, windows (how
    many it was assigned to). See the module docstring for the rules (Flink's late element,
    ``timestamp <= currentWatermark``; ``WindowOperator.isWindowLate`` decides what is
    dropped or side output)."""
    return memoized(view, "element_fates", operator, lambda: _element_fates_frame(view, operator))


def element_fate_columns(view: TraceView, operator: str) -> Columns:
    """``element_fates`` as ``Columns`` (the same values; fate an object array) and fate_code:
    each fate's position in ``palette.FATES``."""
    return memoized(view, "element_fate_columns", operator, lambda: _element_fates(view, operator))


def _element_fates_frame(view: TraceView, operator: str) -> pd.DataFrame:
    columns = element_fate_columns(view, operator)
    return pd.DataFrame(
        {
            name: _objects(columns[name]) if name == "fate" else columns[name]
            for name in ("seq", "proc_time", "ts", "fate", "windows")
        }
    )


def _element_fates(view: TraceView, operator: str) -> Columns:
    if view.kind_code("side_output") < 0 and view.kind_code("skipped_late_window") < 0:
        return _element_fates_searched(view, operator)
    rows = view.select(*FATE_KINDS, operator=operator)
    codes = view.kind_codes(rows)  # (read once: each mask below compares them)
    is_element = codes == view.kind_code("element")
    group = np.cumsum(is_element) - 1
    if len(group) and group[0] < 0:  # records before the first element (group: ascending)
        keep = slice(int(np.argmax(is_element)) if is_element.any() else len(rows), None)
        rows, group, is_element, codes = rows[keep], group[keep], is_element[keep], codes[keep]

    assigned = codes == view.kind_code("assigned")
    erows = rows[is_element]
    n = len(erows)
    # Flink's "late element": timestamp <= the operator's watermark on arrival (exact int64
    # comparison, not float64, which would round near MIN / MAX)
    stamps, has_ts = view.ints("ts", erows)
    marks, has_mark = view.ints("watermark", erows)
    late = has_ts & has_mark & (stamps <= marks)
    n_windows = np.bincount(group[assigned], minlength=n)
    # the fate's position in palette.FATES: late and assigned (to one window at least) is
    # "late, accepted", and so is a late element of an operator without windows (a
    # KeyedProcessFunction: it gets every element); a side output of its own (see
    # late_side_outputs) or a late_dropped record overrides that, late_dropped first
    fate = np.zeros(n, dtype=np.int64)
    fate[late & _accepted(view, operator, n_windows)] = 1
    if view.kind_code("side_output") >= 0:
        fate[group[late_side_outputs(view, rows, group, operator)]] = 3
    dropped = view.kind_code("late_dropped")
    if dropped >= 0:
        fate[group[codes == dropped]] = 2
    return Columns(
        {
            "seq": erows,
            "proc_time": view.numbers("proc_time", erows),
            "ts": _numbers(stamps, has_ts),  # view.numbers("ts", erows), read once
            "fate": _FATE_NAMES[fate],  # an object array (not pandas' str dtype)
            "windows": n_windows,
            "fate_code": fate,  # counted with bincount
        }
    )


def _element_fates_searched(view: TraceView, operator: str) -> Columns:
    """``_element_fates`` of a trace without side outputs: each assigned and late_dropped
    record's element (the last element record of the operator before it) found by a binary
    search among the elements, not by merging the records of all the kinds."""
    erows = view.select("element", operator=operator)
    n = len(erows)

    def elements_of(kind: str) -> np.ndarray:
        """The element of each record of ``kind`` at the operator that follows one."""
        owner = np.searchsorted(erows, view.select(kind, operator=operator)) - 1
        return owner[owner >= 0] if len(owner) and owner[0] < 0 else owner

    stamps, has_ts = view.ints("ts", erows)
    marks, has_mark = view.ints("watermark", erows)
    late = has_ts & has_mark & (stamps <= marks)
    n_windows = np.bincount(elements_of("assigned"), minlength=n)
    fate = np.zeros(n, dtype=np.int64)
    fate[late & _accepted(view, operator, n_windows)] = 1
    if view.kind_code("late_dropped") >= 0:
        fate[elements_of("late_dropped")] = 2
    return Columns(
        {
            "seq": erows,
            "proc_time": view.numbers("proc_time", erows),
            "ts": _numbers(stamps, has_ts),
            "fate": _FATE_NAMES[fate],
            "windows": n_windows,
            "fate_code": fate,
        }
    )


def _accepted(view: TraceView, operator: str, n_windows: np.ndarray) -> np.ndarray | bool:
    """Which elements the operator took in: at a window operator those assigned to a window
    at least (a late one assigned to none is dropped or sent to the side output); at an
    operator without windows (``KeyedProcessFunction``) every one — Flink's late element
    (timestamp <= the watermark) reaches ``processElement`` there, nothing drops it. An
    interval join (it writes ``buffered`` records) takes in every element it does not drop or
    send to the side output (those override this)."""
    if view.kind_code("buffered") >= 0 and len(view.select("buffered", operator=operator)):
        return True
    if n_windows.any() or operator in window_operators(view):  # (assigned: a window operator)
        return n_windows > 0
    return True


def late_side_outputs(
    view: TraceView, rows: np.ndarray, group: np.ndarray, operator: str
) -> np.ndarray:
    """Which of these ``side_output`` records (rows of ``element_fates``, ``group`` = their
    element) are the late-data side output of their element — Flink's
    ``sideOutput(lateDataOutputTag, element)`` in ``WindowOperator.processElement``, the last
    thing the operator does for a late element. A ProcessWindowFunction's ``ctx.output`` also
    writes ``side_output`` records: during a firing in ``onElement`` / ``onMerge`` (before that
    firing's ``fired`` record) or when a later watermark or timer fires a window (after a
    ``watermark`` / ``timer_fired`` record). Those are not the element's fate."""
    is_side = view.is_kind(rows, "side_output")
    if not is_side.any():
        return is_side
    # the records of the element's own processing: up to its operator's next watermark or
    # timer firing; a side output counts when no firing of that processing follows it
    marks = view.select("element", "watermark", "timer_fired", "fired", operator=operator)
    is_element = view.is_kind(marks, "element")
    is_fired = view.is_kind(marks, "fired")
    ordinal = np.cumsum(is_element) - 1  # the element each mark follows (-1: none yet)
    n = int(is_element.sum())
    # per element: its first boundary (a watermark or timer firing) before the next element
    boundary = np.flatnonzero(~is_element & ~is_fired & (ordinal >= 0))
    owners, first = np.unique(ordinal[boundary], return_index=True)
    end_pos = np.full(n, len(marks), dtype=np.int64)  # as a position in marks
    end_pos[owners] = boundary[first]
    own_end = np.full(n, len(view), dtype=np.int64)
    own_end[owners] = marks[boundary[first]]
    # per element: the last firing of its own processing (before that boundary)
    fired = np.flatnonzero(is_fired & (ordinal >= 0))
    fired = fired[fired < end_pos[ordinal[fired]]]
    fired_last = np.full(n, -1, dtype=np.int64)
    np.maximum.at(fired_last, ordinal[fired], marks[fired])
    side = np.flatnonzero(is_side)
    out = np.zeros(len(rows), dtype=bool)
    at = group[side]  # the element of each side output (elements are numbered alike)
    out[side] = (rows[side] < own_end[at]) & (rows[side] > fired_last[at])
    return out


def element_details(view: TraceView, seqs: np.ndarray) -> pd.DataFrame:
    """Tooltip fields of some element records: operator, key, value, watermark, ts (exact
    ints), source_index (see the module docstring)."""
    operators, keys, values, source_index = _element_texts(view, seqs)
    return pd.DataFrame(
        {
            "seq": seqs,
            "operator": operators,
            "key": keys,
            "value": values,
            "watermark": view.column("watermark", seqs),
            "ts": view.column("ts", seqs),
            "source_index": source_index,
        }
    )


def element_detail_lists(view: TraceView, seqs: np.ndarray) -> dict[str, list[Any]]:
    """``element_details`` as plain lists (no DataFrame: a chart that turns them into rows
    straight away saves pandas' column conversions): operator, key, value, watermark, ts the
    values ``element_details(...)[c].tolist()`` gives; source_index an int or None."""
    operators, keys, values, source_index = _element_texts(view, seqs)
    return {
        "operator": operators.tolist(),
        "key": keys,
        "value": values,
        "watermark": view.part("watermark", seqs).take(seqs).tolist(),
        "ts": view.part("ts", seqs).take(seqs).tolist(),
        "source_index": source_index,
    }


def _element_texts(
    view: TraceView, seqs: np.ndarray
) -> tuple[np.ndarray, list[str], list[str], list[Any]]:
    """The operator (an object array), key and value texts and source index (int or None)
    of element records."""
    arrivals = view.select("arrival")
    values = view.detail("element", "value", seqs).tolist()
    source_index: list[Any] = [None] * len(values)
    if len(arrivals):
        pos = np.searchsorted(arrivals, seqs) - 1
        has = (pos >= 0).tolist()
        src_rows = arrivals[np.maximum(pos, 0)]
        sources = view.part("detail", src_rows)[src_rows].tolist()  # (value, index) of each
        # the engine hands the arrival's own object on: identity first, then equal JSON
        same = list(map(is_, map(itemgetter(0), sources), values))
        indexes = list(map(itemgetter(1), sources))
        if all(has) and all(same) and all(i.__class__ is int for i in indexes):
            source_index = indexes  # the usual case: every element its arrival's own object
        else:
            for i, (h, s) in enumerate(zip(has, same, strict=True)):
                if h and (s or jsonable(sources[i][0]) == jsonable(values[i])):
                    source_index[i] = int(sources[i][1])
    # a key's text once per distinct key (the key column's dictionary tells keys apart)
    key_column = view.part("key", seqs)
    key_codes = key_column.codes[seqs]
    texts = {code: key_text(key_column.values[code]) for code in set(key_codes.tolist())}
    return (
        view.column("operator", seqs),
        [texts[c] for c in key_codes.tolist()],
        shorts(values),
        source_index,
    )


def watermark_steps(view: TraceView) -> pd.DataFrame:
    """The ``watermark`` records: seq, operator, proc_time, watermark (ints; MIN/MAX kept)."""
    columns = watermark_step_columns(view)
    return pd.DataFrame({name: columns[name] for name in WATERMARK_STEP_COLUMNS})


WATERMARK_STEP_COLUMNS = ("seq", "operator", "proc_time", "watermark")


SIDE_OUTPUT_NODE = "side:"
"""The name prefix of the node ``DataStream.get_side_output`` adds (``side:<tag>``): not an
operator of the user's, it forwards its operator's watermark. Legends name only the user's
operators, so charts leave its watermark records out."""


def is_user_operator(name: Any) -> bool:
    """Whether ``name`` is an operator of the user's job (not the side-output node)."""
    return not str(name).startswith(SIDE_OUTPUT_NODE)


def watermark_step_columns(view: TraceView) -> Columns:
    """``watermark_steps`` as ``Columns`` (operator, proc_time and watermark object arrays);
    the side-output node's records left out (``is_user_operator``)."""
    rows = view.select("watermark")
    part = view.c.part("operator", ("watermark",))
    pseudo = [i for i, name in enumerate(part.values) if not is_user_operator(name)]
    if pseudo:
        rows = rows[~np.isin(part.codes[rows], pseudo)]
    return Columns(
        {
            "seq": rows,
            "operator": view.column("operator", rows),
            "proc_time": view.column("proc_time", rows),
            "watermark": view.column("watermark", rows),
        }
    )


@dataclass(frozen=True)
class Restart:
    """A ``restore`` record: the job restarted from checkpoint ``checkpoint_id`` (None: from
    the beginning) at processing time ``proc_time`` (the checkpoint's: the simulated clock
    goes back), with every watermark at MIN (``winviz.checkpoints``); ``failed_at`` is the
    processing time of the record before it — when the failure happened — or None when the
    run started from a snapshot (``execute(restore_from=...)``)."""

    seq: int
    proc_time: int
    failed_at: int | None
    checkpoint_id: int | None


def restarts(view: TraceView) -> list[Restart]:
    """The trace's ``restore`` records, in seq order."""
    rows = view.select("restore")
    if not len(rows):
        return []
    procs = view.column("proc_time", rows).tolist()
    ids = view.detail("restore", "checkpoint_id", rows).tolist()
    failures = view.detail("restore", "failed_at", rows).tolist()
    before = view.column("proc_time", np.maximum(rows - 1, 0)).tolist()
    return [
        Restart(int(seq), proc, None if failed is None or seq == 0 else prev, cid)
        for seq, proc, cid, failed, prev in zip(
            rows.tolist(), procs, ids, failures, before, strict=True
        )
    ]


def steps_by_attempt(
    seqs: list[int], times: list[Any], restarts: list[Restart]
) -> tuple[list[int], list[Any]]:
    """The run attempt and the end of each step of a step line (a watermark's records in seq
    order, ``times`` their processing times): ``attempt`` counts the restarts at or before
    the record; a step ends at the next record's time in the same attempt, where the job
    failed when a restart comes first (at its own time when that is unknown: a run started
    from a snapshot), and the last one at None (the chart's edge). So no step runs back in
    processing time when the clock goes back to a checkpoint's: the charts draw one line per
    attempt (the timeline, the timers chart, the propagation chart)."""
    cuts = [r.seq for r in restarts]
    attempts = [bisect_right(cuts, seq) for seq in seqs]
    ends: list[Any] = []
    for i, attempt in enumerate(attempts):
        if attempt < len(cuts) and (i + 1 == len(seqs) or attempts[i + 1] != attempt):
            failed = restarts[attempt].failed_at
            ends.append(times[i] if failed is None else failed)
        else:
            ends.append(times[i + 1] if i + 1 < len(seqs) else None)
    return attempts, ends


def window_records(
    view: TraceView,
    operator: str,
    *kinds: str,
    fields: tuple[str, ...] = ("key", "proc_time", "watermark", "ts"),
) -> pd.DataFrame:
    """Records of these kinds at ``operator`` with window bounds: seq, kind, the ``fields``
    asked for (key, proc_time, watermark, ts), window_start, window_end (None for the global
    window)."""
    return pd.DataFrame(_window_record_columns(view, operator, kinds, fields))


def _window_record_columns(
    view: TraceView, operator: str, kinds: tuple[str, ...], fields: tuple[str, ...]
) -> dict[str, Any]:
    """The columns of ``window_records``, before they become a DataFrame."""
    rows = view.select(*kinds, operator=operator)
    columns: dict[str, Any] = {"seq": rows, "kind": view.kinds_of(rows)}
    for name in fields:
        columns[name] = view.column(name, rows)
    start, end, present = view.bounds(rows)
    if present.all():
        columns["window_start"], columns["window_end"] = start, end
    else:
        for name, values in (("window_start", start), ("window_end", end)):
            columns[name] = [int(v) if p else None for v, p in zip(values, present, strict=True)]
    return columns


def firings(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``fired`` records: window_records columns plus result (the value), pane, count,
    and what caused the firing (see ``firing_causes``): cause, timer (the firing timer's
    timestamp, None when no timer fired it), firing ("first firing" / "re-firing") and
    late_firing (``firing_words``: ``winviz.trace.vocabulary``'s words; Flink has no pane
    timing, so the trace's ``timing`` field is not read), fired_by (the cause's category,
    ``fired_by``) and at (the event time a firing mark sits at: the event-time timer's
    timestamp, else the window's end)."""
    return memoized(
        view, "firings", operator, lambda: pd.DataFrame(_firing_records(view, operator))
    )


def _firing_records(view: TraceView, operator: str) -> dict[str, Any]:
    """The columns of ``firings`` before they become a DataFrame (made once per view)."""
    return memoized(view, "firing_record_columns", operator, lambda: _firings(view, operator))


def firing_columns(view: TraceView, operator: str) -> Columns:
    """``firings`` as ``Columns``: the same values as ``firings(...)[c].tolist()`` gives for
    records of a time window, as object arrays (seq, window_start, window_end: int64), except
    ``timer``: ints and None (the frame's column is float64 where a firing has no timer). Only
    when every firing has a time window; None otherwise (use ``firings``)."""
    return memoized(view, "firing_columns", operator, lambda: _firing_columns(view, operator))


def _firing_columns(view: TraceView, operator: str) -> Columns | None:
    raw = _firing_records(view, operator)
    if not isinstance(raw["window_end"], np.ndarray):  # some firing without a time window
        return None
    return Columns(
        {
            name: values if isinstance(values, np.ndarray) else object_array(list(values))
            for name, values in raw.items()
        }
    )


def _firings(view: TraceView, operator: str) -> dict[str, Any]:
    # the columns first, one DataFrame at the end (adding columns one by one costs more)
    frame = _window_record_columns(
        view, operator, ("fired",), ("key", "proc_time", "watermark", "ts")
    )
    rows = frame["seq"]
    frame["result"] = view.detail("fired", "result", rows)  # raw values: short() them to show
    frame["pane"] = view.detail("fired", "pane", rows)
    frame["count"] = view.detail("fired", "count", rows)
    cause, timer, domain = firing_causes(view, rows)
    frame["cause"] = cause
    frame["timer"] = timer
    frame["firing"], frame["late_firing"] = firing_words(view, operator, frame, domain)
    frame["fired_by"] = fired_by(cause, domain, view.ints("watermark", rows)[0])
    ends = pd.Series(frame["window_end"]).tolist()  # as the frame's column reads them
    frame["at"] = pd.Series(
        [t if d == "event" else e for t, d, e in zip(timer, domain, ends, strict=True)],
        dtype=object,
    )
    return frame


_CALL_CAUSE = {"on_element": "element", "on_merge": "session merge"}


def firing_words(
    view: TraceView, operator: str, frame: dict[str, Any], domains: list[str | None]
) -> tuple[list[str], list[bool]]:
    """Each firing in ``vocabulary``'s words: "first firing" or "re-firing" (the window of
    that key fired before at the operator) and whether it is a late firing (the operator's
    watermark before its cause — before the advance that fired an event-time timer — had
    reached the window's max timestamp)."""
    rows = frame["seq"]
    keys = key_texts(object_array(list(frame["key"])))
    seen: dict[tuple[Any, Any, Any], int] = {}
    order = []
    for ident in zip(keys, list(frame["window_start"]), list(frame["window_end"]), strict=True):
        order.append(vocabulary.firing_order(seen.get(ident, 0)))
        seen[ident] = seen.get(ident, 0) + 1
    event = np.array([d == "event" for d in domains], dtype=bool)
    before = _watermark_before(view, operator, np.asarray(rows), event)
    late = [
        end is not None and vocabulary.is_late_firing(int(b), int(end) - 1)
        for b, end in zip(before.tolist(), list(frame["window_end"]), strict=True)
    ]
    return order, late


def _watermark_before(
    view: TraceView, operator: str, rows: np.ndarray, event: np.ndarray
) -> np.ndarray:
    """The operator's watermark before each firing's cause (``rows``: its ``fired``
    records): before the advance that fired it for an event-time timer (``event``), else the
    watermark the record carries (``vocabulary.is_late_firing`` compares it)."""
    marks = view.select("watermark", operator=operator)
    mark_ts, present = view.ints("ts", marks)
    mark_ts = np.where(present, mark_ts, LONG_MIN)
    own, has = view.ints("watermark", rows)
    own = np.where(has, own, LONG_MIN)
    k = np.searchsorted(marks, rows) - 2  # the watermark before the last advance
    prev = np.where(k >= 0, mark_ts[np.maximum(k, 0)], LONG_MIN) if len(marks) else own
    return np.where(event, prev, own)


def late_firing_count(view: TraceView, operator: str) -> int:
    """How many of ``operator``'s firings of a time window are late firings (the rule of
    ``firing_words``, counted with array operations: no texts), leaving out firings whose
    cause is not traced (no trigger call or timer: nothing to be late before)."""
    rows = view.select("fired", operator=operator)
    _, end, present = view.bounds(rows)
    rows, end = rows[present], end[present]
    if not len(rows):
        return 0
    calls, timer_rows = fired_causes(view, rows)
    has_timer = timer_rows >= 0
    event = np.zeros(len(rows), dtype=bool)
    if has_timer.any():
        numbers, details = distinct_objects(
            view.c.values_at("detail", timer_rows[has_timer], ("timer_fired",))
        )
        event[has_timer] = np.array([d[0] == "event" for d in details], dtype=bool)[numbers]
    traced = has_timer | np.isin(calls, list(_CALL_CAUSE))
    before = _watermark_before(view, operator, rows, event)
    # is_late_firing(before, end - 1), as arrays (end - 1 never overflows: end > MIN)
    return int((traced & (before >= end - 1)).sum())


FIRING_MARK_COLUMNS = ("seq", "window_start", "window_end", "proc_time", "at", "fired_by")
CLEANUP_MARK_COLUMNS = ("seq", "window_start", "window_end", "proc_time", "cleanup_time")


def firing_marks(view: TraceView, operator: str) -> Columns:
    """Where ``firings`` puts each firing of a time window, without its texts (key, result,
    cause wording): seq, window_start, window_end, proc_time, at and fired_by with the values
    ``firings`` has (times as int64 columns where every value is an exact int, else objects;
    fired_by objects) — what a chart needs to draw many firings aggregated, as ``Columns``
    (no DataFrame). Read off ``firings`` when that was derived already."""
    known = view.memo.get(("firings", operator))
    if known is not None:
        return _known_marks(known, FIRING_MARK_COLUMNS)
    rows = view.select("fired", operator=operator)
    start, end, present = view.bounds(rows)
    rows, start, end = rows[present], start[present], end[present]
    calls, timer_rows = fired_causes(view, rows)
    has_timer = timer_rows >= 0
    domains = np.full(len(rows), None, dtype=object)
    timed = timer_rows[has_timer]
    # each timer's domain: the first item of its detail, read once per detail object (the
    # engine shares each window's timer details)
    numbers, details = distinct_objects(view.c.values_at("detail", timed, ("timer_fired",)))
    heads = [d[0] for d in details]
    domains[has_timer] = object_array(heads)[numbers]
    event = np.zeros(len(rows), dtype=bool)
    event[has_timer] = np.array([h == "event" for h in heads], dtype=bool)[numbers]
    has_domain = np.zeros(len(rows), dtype=bool)  # (a detail whose domain is not None)
    has_domain[has_timer] = np.array([ne(h, None) for h in heads], dtype=bool)[numbers]
    event_rows = timer_rows[event]
    timer_ts = view.part("ts", event_rows).take(event_rows)
    if timer_ts.exact and timer_ts.present.all():  # ints: the timer's, else the window end
        at: Any = end.copy()
        at[event] = timer_ts.values
    else:
        stamps = np.full(len(rows), None, dtype=object)
        stamps[has_timer] = view.column("ts", timer_rows[has_timer])
        at = object_array(
            [
                t if d == "event" else e
                for t, d, e in zip(stamps.tolist(), domains.tolist(), end.tolist(), strict=True)
            ]
        )
    return Columns(
        {
            "seq": rows,
            "window_start": start,
            "window_end": end,
            "proc_time": _time_values(view, "proc_time", rows),
            "at": at,
            "fired_by": _fired_by_marks(calls, has_domain, event, view.ints("watermark", rows)[0]),
        }
    )


def _fired_by_marks(
    calls: np.ndarray, has_domain: np.ndarray, event: np.ndarray, watermarks: np.ndarray
) -> np.ndarray:
    """``fired_by(base_causes(calls), domains, watermarks)`` of firings whose timer's domain
    is not None where ``has_domain`` and "event" where ``event`` (``fired_by_masks``), each
    distinct call's cause found once."""
    numbers, distinct = distinct_objects(calls)  # (a few shared call names, and None)
    causes = base_causes(object_array(distinct))[numbers]
    return fired_by_masks(causes, has_domain, event, watermarks)


def _known_marks(known: pd.DataFrame, names: tuple[str, ...]) -> Columns:
    """The marks' columns of a frame derived already (``firings``, ``cleanups``): its rows
    with a time window, each column's values as its ``to_numpy()`` gives them."""
    known = known[known["window_end"].notna()]
    return Columns({name: known[name].to_numpy() for name in names})


def _time_values(view: TraceView, name: str, rows: np.ndarray) -> np.ndarray:
    """``_times`` as an array: int64 when every record has an exact value, else the values
    as objects (ints, None where absent)."""
    column = view.part(name, rows).take(rows)
    if column.exact and column.present.all():
        return column.values
    return view.column(name, rows)


def firing_causes(
    view: TraceView, fired_rows: np.ndarray
) -> tuple[list[str], list[int | None], list[str | None]]:
    """What made each of these ``fired`` records happen (``winviz.trace.causes``):
    (cause text, timer timestamp, timer domain) per record — "event-time timer at t" /
    "processing-time timer at t", "element", "session merge", or "" (unknown, never
    guessed)."""
    calls, timer_rows = fired_causes(view, fired_rows)
    causes = base_causes(calls).tolist()
    timers: list[int | None] = [None] * len(fired_rows)
    domains: list[str | None] = [None] * len(fired_rows)
    which = np.flatnonzero(timer_rows >= 0)
    if len(which):
        rows = timer_rows[which]
        stamps = view.column("ts", rows).tolist()
        details = view.part("detail", rows)[rows].tolist()
        for i, ts, detail in zip(which.tolist(), stamps, details, strict=True):
            domain = detail[0]
            word = "event-time" if domain == "event" else "processing-time"
            causes[i], timers[i], domains[i] = f"{word} timer at {ts}", ts, domain
    return causes, timers, domains


def fired_causes(view: TraceView, fired_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``winviz.trace.causes.firing_causes`` of these ``fired`` records (trigger calls, timer
    positions), found once per view for every ``fired`` record of the trace — each record's
    cause is its own, whichever others are asked with it — and picked for these."""
    every = view.select("fired")
    calls, timers = memoized(view, "firing_causes", "", lambda: trace_firing_causes(view.c, every))
    rows = np.asarray(fired_rows, dtype=np.int64)
    at = np.minimum(np.searchsorted(every, rows), max(0, len(every) - 1))
    if len(rows) and not (len(every) and np.array_equal(every[at], rows)):
        return trace_firing_causes(view.c, rows)  # (not ``fired`` records only)
    return calls[at], timers[at]


def base_causes(calls: np.ndarray) -> np.ndarray:
    """The cause of each firing that its trigger call names by itself (an object array):
    "element" (``onElement``), "session merge" (``onMerge``), else "" (a timer call, or no
    trigger record: ``fired_by`` tells them apart by the timer's domain)."""
    out = np.full(len(calls), "", dtype=object)
    for call, cause in _CALL_CAUSE.items():
        out[calls == call] = cause
    return out


def fired_by(causes: Any, domains: Any, watermarks: np.ndarray) -> np.ndarray:
    """The category of each firing's cause (one of ``palette.FIRED_BY``; an object array):
    ``fired_by_masks`` of the timers' domains (``causes``: texts, "" where unknown;
    ``domains``: the timer's, None where no timer fired it — arrays or lists)."""
    domains = object_array(list(domains))
    has_domain = np.not_equal(domains, None)  # (elementwise)
    return fired_by_masks(object_array(list(causes)), has_domain, domains == "event", watermarks)


def fired_by_masks(
    causes: np.ndarray, has_domain: np.ndarray, event: np.ndarray, watermarks: np.ndarray
) -> np.ndarray:
    """The category of each firing's cause: an event-time timer (``event``) that fired while
    the operator's watermark was MAX (``Long.MAX_VALUE``, emitted when the input ends) is
    "end of input"; otherwise the timer's domain (``has_domain``: a timer fired it), the cause
    ("element", "session merge"), or "cause not traced" when the trace names no trigger call
    (``causes``: an object array of texts, "" where unknown; changed in place)."""
    out = causes
    out[out == ""] = "cause not traced"
    out[has_domain] = "processing-time timer"
    out[event] = "event-time timer"
    out[event & (watermarks == LONG_MAX)] = "end of input"
    return out


def cleanups(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``cleanup`` records: window_records columns plus cleanup_time (shared, see
    ``memoized``)."""
    return memoized(view, "cleanups", operator, lambda: _cleanups(view, operator))


def cleanup_marks(view: TraceView, operator: str) -> Columns:
    """The ``cleanup`` records of time windows without their key, watermark and ts: seq,
    window_start, window_end, proc_time and cleanup_time as ``cleanups`` has them (times
    int64 where every value is an int in the long range, else objects) — what a chart needs
    to draw many cleanups aggregated, as ``Columns``. Read off ``cleanups`` when that was
    derived already."""
    known = view.memo.get(("cleanups", operator))
    if known is not None:
        return _known_marks(known, CLEANUP_MARK_COLUMNS)
    rows = view.select("cleanup", operator=operator)
    start, end, present = view.bounds(rows)
    rows = rows[present]
    return Columns(
        {
            "seq": rows,
            "window_start": start[present],
            "window_end": end[present],
            "proc_time": _time_values(view, "proc_time", rows),
            "cleanup_time": _int64_if_ints(view.detail("cleanup", "cleanup_time", rows)),
        }
    )


def _int64_if_ints(values: np.ndarray) -> np.ndarray:
    """An object array of values as int64 when every one is an ``int`` (not a bool) in the
    long range, else as it is."""
    items = values.tolist()
    if set(map(type, items)) != {int}:
        return values
    try:
        return np.array(items, dtype=np.int64)
    except OverflowError:
        return values


def cleanup_columns(view: TraceView, operator: str) -> Columns | None:
    """``cleanups`` as ``Columns`` (as ``firing_columns``: object arrays of the values the
    frame's columns give, seq, window_start, window_end int64), when every cleanup has a time
    window; None otherwise."""
    return memoized(view, "cleanup_columns", operator, lambda: _cleanup_columns(view, operator))


def _cleanup_columns(view: TraceView, operator: str) -> Columns | None:
    raw = memoized(
        view, "cleanup_record_columns", operator, lambda: _cleanup_records(view, operator)
    )
    if not isinstance(raw["window_end"], np.ndarray):
        return None
    return Columns(raw)


def _cleanup_records(view: TraceView, operator: str) -> dict[str, Any]:
    columns = _window_record_columns(
        view, operator, ("cleanup",), ("key", "proc_time", "watermark", "ts")
    )
    columns["cleanup_time"] = view.detail("cleanup", "cleanup_time", columns["seq"])
    return columns


def _cleanups(view: TraceView, operator: str) -> pd.DataFrame:
    return pd.DataFrame(
        memoized(view, "cleanup_record_columns", operator, lambda: _cleanup_records(view, operator))
    )


LIFE_COLUMNS = [
    "key",
    "window_start",
    "window_end",
    "opened",
    "closed",
    "elements",
    "firings",
    "merged_into",
]


def key_text(key: Any, limit: int = 30) -> str:
    """A key's label in every chart (lanes, colours, tooltips): ``short`` of the key, except
    that a str key which reads as JSON — ``"1"``, ``"true"``, ``"1.0"``, ``'["a",1]'`` — is
    written quoted (``'"1"'``), so that it is not taken for (nor drawn in one lane with) the
    int, bool, float or tuple key whose text it is: those are different keys in Flink and in
    the engine (``keygroups.KeyRule``). A text longer than ``limit`` is cut and ends with
    "…#" and 8 hex digits of a hash of the whole text, so that two long keys with the same
    beginning keep two labels (two lanes), the same in every chart and run."""
    if key.__class__ is str:
        text = json.dumps(key, ensure_ascii=False) if _reads_as_json(key) else key
    else:
        text = short(key, 1 << 62)
    if len(text) <= limit:
        return text
    digest = hashlib.blake2s(text.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{text[: max(1, limit - 10)]}…#{digest}"


def _reads_as_json(text: str) -> bool:
    """Whether ``json.loads`` takes this text (JSON numbers, literals, strings, arrays...)."""
    if not text or (text[0] not in _JSON_START and text.strip() == text):
        return False  # the usual key ("k03", "user-7"): no JSON value starts with its letter
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# the characters a JSON text can start with (but whitespace); "N" and "I": NaN, Infinity
_JSON_START = frozenset('-0123456789"[{tfnNI')


def _key_identity(key: Any) -> Any:
    """What tells keys apart as the engine does (``keygroups.KeyRule``: Java's equals): the
    class and the exact text, so 1, True and 1.0 — equal in Python — are three keys, and so
    are the float keys 0.0 and -0.0."""
    return (key.__class__, key if key.__class__ is str else short(key, 1 << 30))


def key_texts(keys: Any) -> list[str]:
    """``key_text`` of each key, computed once per distinct key (distinct as the engine
    tells keys apart, ``_key_identity``, not by Python's ``==``: 1, True and 1.0 are three)."""
    if isinstance(keys, pd.Series):
        keys = keys.to_numpy(dtype=object)
    elif not (isinstance(keys, np.ndarray) and keys.dtype == object and keys.ndim == 1):
        keys = np.asarray(list(keys), dtype=object)
    if not len(keys):
        return []
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    if all(k.__class__ is str for k in uniques) or set(map(type, keys.tolist())) == {int}:
        # the usual cases, str keys or int keys: == is the engine's equality
        texts = [key_text(k) for k in uniques]
        return [texts[c] for c in codes]
    # each distinct object once (the engine shares its key objects), then per identity
    numbers, objects = distinct_objects(keys)
    cache: dict[Any, str] = {}
    texts = []
    for k in objects:
        ident = _key_identity(k)
        text = cache.get(ident)
        if text is None:
            text = cache[ident] = key_text(k)
        texts.append(text)
    return object_array(texts)[numbers].tolist()


def groups(frame: pd.DataFrame, by: list[str]) -> dict[tuple, list[int]]:
    """Row positions per distinct value of ``by``, in order of first appearance (a plain dict:
    much faster than iterating a pandas groupby over thousands of small groups)."""
    out: dict[tuple, list[int]] = {}
    for i, k in enumerate(zip(*(frame[c].tolist() for c in by), strict=True)):
        out.setdefault(k, []).append(i)
    return out


def pairs_text(pairs: int, windows: int | None = None) -> str:
    """How every chart counts windows (one rule, one wording): a window of one key is one
    "(key, window) pair" (``window_lives`` has a row per pair); a chart that draws one band
    per window for all keys adds how many windows that is."""
    text = f"{pairs:,} (key, window) pairs"
    return text if windows is None else f"{text} in {windows:,} windows"


def window_lives(view: TraceView, operator: str) -> pd.DataFrame:
    """One row per (key, window): opened (first assigned proc_time), closed (cleanup
    proc_time; None while still open at the end of the trace), elements assigned, firings,
    merged_into ("[s, e)" when a session merge absorbed it, else None)."""
    return memoized(view, "window_lives", operator, lambda: _window_lives(view, operator))


def window_life_columns(view: TraceView, operator: str) -> Columns | None:
    """``window_lives`` as ``Columns`` (key and merged_into object arrays) when the operator
    has windows and merged none (no session merge); None otherwise (use ``window_lives``)."""
    return memoized(
        view, "window_life_columns", operator, lambda: _window_life_columns(view, operator)
    )


def _window_life_columns(view: TraceView, operator: str) -> Columns | None:
    if len(view.select("merged", operator=operator)):
        return None
    columns = _life_records(view, operator)
    return None if columns is None else Columns(columns)


def _life_records(view: TraceView, operator: str) -> dict[str, np.ndarray] | None:
    """The columns of ``window_lives`` before session merges (None: no window)."""
    return memoized(view, "window_life_records", operator, lambda: _life_columns(view, operator))


def _window_lives(view: TraceView, operator: str) -> pd.DataFrame:
    columns = _life_records(view, operator)
    if columns is None:
        return pd.DataFrame(columns=LIFE_COLUMNS)
    lives = pd.DataFrame(
        {
            **columns,
            "key": columns["key"].tolist(),
            "merged_into": pd.Series(columns["merged_into"], dtype=object),
        }
    )
    if not len(view.select("merged", operator=operator)):  # no session merge: nothing to apply
        return lives
    return _apply_merges(lives.drop(columns="merged_into"), merged(view, operator))[LIFE_COLUMNS]


def _life_columns(view: TraceView, operator: str) -> dict[str, np.ndarray] | None:
    rows = view.select("assigned", "fired", "cleanup", operator=operator)
    # the windows' codes read once (``bounds`` and ``window_codes`` both read them)
    window_codes, (starts_of, ends_of, has_of) = view.window_codes(rows)
    present = has_of[window_codes]
    if not present.all():
        rows, window_codes = rows[present], window_codes[present]
    if not len(rows):
        return None
    proc, _ = view.ints("proc_time", rows)
    # group by the key's text (as the lanes show it), then the window: a text per distinct
    # key of the key part's dictionary present here (numbered in any order: the groups are
    # numbered by first appearance below)
    key = view.part("key", rows)
    key_codes = key.codes[rows]
    present = np.flatnonzero(np.bincount(key_codes, minlength=len(key.values)))
    text_codes, texts = pd.factorize(
        object_array([key_text(key.values[i]) for i in present.tolist()]),
        use_na_sentinel=False,
    )
    text_of = np.zeros(len(key.values), dtype=np.int64)
    text_of[present] = text_codes
    t = text_of[key_codes]
    # one id per (start, end) among the trace's distinct windows, then per (key text, window)
    # in order of first appearance
    window_id = _group_ids(starts_of, ends_of) if len(starts_of) else starts_of
    codes = window_id[window_codes].astype(np.int64)
    group, first_row = _first_appearance(t * (int(codes.max()) + 1) + codes)
    n_groups = len(first_row)
    kinds = view.kind_codes(rows)  # (gathered once: three masks)
    assigned = kinds == view.kind_code("assigned")
    fired = kinds == view.kind_code("fired")
    cleanup = kinds == view.kind_code("cleanup")
    first = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, group, proc)
    opened = first.copy()
    np.minimum.at(opened, group[assigned], proc[assigned])  # the first assigned, if any
    elements = np.bincount(group[assigned], minlength=n_groups)
    last_cleanup = np.full(n_groups, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last_cleanup, group[cleanup], proc[cleanup])
    cleanups = np.bincount(group[cleanup], minlength=n_groups)
    # closed: int64, or float64 with NaN while some pane is kept (what pandas makes of ints
    # and None)
    kept = cleanups == 0
    closed = np.where(kept, np.nan, last_cleanup.astype(np.float64)) if kept.any() else last_cleanup
    return {
        "key": np.asarray(texts, dtype=object)[t[first_row]],
        "window_start": starts_of[window_codes[first_row]],
        "window_end": ends_of[window_codes[first_row]],
        "opened": np.where(elements > 0, opened, first),
        "closed": closed,
        "elements": elements.astype(np.int64),
        "firings": np.bincount(group[fired], minlength=n_groups).astype(np.int64),
        "merged_into": object_array([None] * n_groups),
    }


def _first_appearance(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative int64 ids numbered densely in order of first appearance (as
    ``pd.factorize``), and each number's first position. Ids below a few times their count
    are numbered through a table indexed by id (no hashing), others by ``pd.factorize``."""
    n = len(ids)
    positions = np.arange(n, dtype=np.int64)
    span = int(ids.max()) + 1 if n else 0
    if span <= 4 * n + 64:
        first = np.full(span, n, dtype=np.int64)  # per id: its first position (n: none)
        np.minimum.at(first, ids, positions)
        used = np.flatnonzero(first < n)
        firsts = np.sort(first[used])  # the ids' first positions, in order of appearance
        number = np.zeros(span, dtype=np.int64)
        number[ids[firsts]] = np.arange(len(firsts), dtype=np.int64)
        return number[ids], firsts
    codes, uniques = pd.factorize(ids)
    firsts = np.full(len(uniques), n, dtype=np.int64)
    np.minimum.at(firsts, codes, positions)
    return codes.astype(np.int64, copy=False), firsts


def _apply_merges(lives: pd.DataFrame, merges: pd.DataFrame) -> pd.DataFrame:
    """Session merges, in seq order: a window a merge absorbed is closed at the merge
    (``closed`` = the merge's proc_time, ``merged_into`` = "[s, e)" of the window it went into);
    the window it went into inherits the absorbed window's elements (its pane holds them, as
    Flink's ``MergingWindowSet`` merges the state), so ``elements`` counts every element the
    surviving pane received, directly or through the windows it absorbed. A window that only
    a merge names (no record of its own) gets a row opened and closed at the merge."""
    lives = lives.assign(merged_into=[None] * len(lives))
    if merges.empty:
        return lives
    row_of = {
        (k, s, e): i
        for i, (k, s, e) in enumerate(
            zip(
                lives["key"].tolist(),
                lives["window_start"].tolist(),
                lives["window_end"].tolist(),
                strict=True,
            )
        )
    }
    table = {c: lives[c].tolist() for c in lives.columns}
    # elements assigned directly; inherited ones are added merge by merge (chains carry over)
    total = list(table["elements"])

    def row(key: str, s: int, e: int, proc: int) -> int:
        i = row_of.get((key, s, e))
        if i is None:
            i = row_of[(key, s, e)] = len(total)
            new = dict.fromkeys(table, None)
            new.update(key=key, window_start=s, window_end=e, opened=proc, elements=0, firings=0)
            for c, v in new.items():
                table[c].append(v)
            total.append(0)
        return i

    for m in merges.itertuples():
        into = (int(m.window_start), int(m.window_end))
        target = row(m.key_text, *into, int(m.proc_time))
        for s, e in m.merged_windows:
            if (s, e) == into:
                continue
            i = row(m.key_text, int(s), int(e), int(m.proc_time))
            total[target] += total[i]
            table["closed"][i] = int(m.proc_time)
            table["merged_into"][i] = f"[{into[0]}, {into[1]})"
    table["elements"] = total
    out = pd.DataFrame(table)
    out["elements"] = out["elements"].astype(np.int64)
    out["firings"] = out["firings"].astype(np.int64)
    out["opened"] = out["opened"].astype(np.int64)
    out["window_start"] = out["window_start"].astype(np.int64)
    out["window_end"] = out["window_end"].astype(np.int64)
    out["closed"] = pd.Series(
        [None if c is None or pd.isna(c) else int(c) for c in table["closed"]], dtype=object
    )
    # object, not pandas' str dtype, which would turn None into NaN
    out["merged_into"] = pd.Series(table["merged_into"], dtype=object)
    return out

    return lives[LIFE_COLUMNS]


def merged_text(values: pd.Series | list[Any]) -> str:
    """The windows a (start, end) was merged into, over all keys — "" unless every key's pane
    of it was merged away by a session merge."""
    texts = values.tolist() if isinstance(values, pd.Series) else values
    if not texts or not all(isinstance(t, str) for t in texts):
        return ""
    return ", ".join(dict.fromkeys(texts))


def _group_ids(*columns: np.ndarray) -> np.ndarray:
    """One id per distinct tuple of these integer columns, numbered in order of first
    appearance (as ``groupby(sort=False).ngroup()``): each column's codes folded into one
    int64 per row (renumbered densely whenever the next fold could leave the int64 range),
    then numbered once."""
    ids, span = _dense_codes(columns[0])
    for column in columns[1:]:
        codes, width = _dense_codes(column)
        if span * width > 2**62:  # renumber densely first: the product stays in int64
            ids, found = pd.factorize(ids)
            span = max(1, len(found))
        ids = ids.astype(np.int64) * width + codes
        span *= width
    ids, _ = pd.factorize(ids)
    return ids


def _dense_codes(column: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes of an integer column, equal where its values are, and a bound above them: the
    values themselves when they are already small non-negative codes (as a trace's key codes
    are), else numbered by ``pd.factorize``."""
    column = np.asarray(column)
    if column.dtype.kind in "iu" and len(column):
        lo, hi = int(column.min()), int(column.max())
        if lo >= 0 and hi <= 4 * len(column) + 64:
            return column.astype(np.int64, copy=False), hi + 1
    codes, uniques = pd.factorize(column)
    return codes, max(1, len(uniques))


def merged(view: TraceView, operator: str) -> pd.DataFrame:
    """The ``merged`` records: window_records columns plus key_text and merged_windows
    (list of (start, end)); shared, see ``memoized``."""
    return memoized(view, "merged", operator, lambda: _merged(view, operator))


def _merged(view: TraceView, operator: str) -> pd.DataFrame:
    frame = window_records(view, operator, "merged")
    rows = frame["seq"].to_numpy()
    mw = view.detail("merged", "merged_windows", rows)
    frame["merged_windows"] = [[_bounds(w) for w in ws] for ws in mw]
    frame["key_text"] = key_texts(frame["key"])
    return frame


def _bounds(w: Any) -> tuple[int, int]:
    if hasattr(w, "start"):
        return (w.start, w.end)
    return (int(w[0]), int(w[1]))


# -- timers -------------------------------------------------------------------------------------

TIMER_KINDS = ("timer_registered", "timer_deleted", "timer_fired")
TIMER_COLUMNS = [
    "key",
    "namespace",
    "domain",
    "timestamp",
    "registered",
    "ended",
    "end",
    "reg_seq",
    "end_seq",
    "watermark",
]


def timer_operators(view: TraceView) -> list[str]:
    """Operators that wrote timer records, in order of first appearance."""
    return view.operators(*TIMER_KINDS)


def allowed_lateness(view: TraceView, operator: str) -> int | None:
    """The allowed lateness of a window operator, read off its ``cleanup`` records: cleanup
    time − the window's max timestamp (Flink's ``WindowOperator.cleanupTime``: ``maxTimestamp
    + allowedLateness`` for event time, the max timestamp for processing time), the same for
    every window of the operator; cleanup times that overflowed to MAX say nothing. None when
    the records give no single value (no cleanup record yet)."""

    def build() -> int | None:
        rows = view.select("cleanup", operator=operator)
        if not len(rows):
            return None
        _, ends, present = view.bounds(rows)
        times = view.detail("cleanup", "cleanup_time", rows).tolist()
        found = {
            int(t) - (int(e) - 1)
            for t, e, p in zip(times, ends.tolist(), present.tolist(), strict=True)
            if p and t is not None and t != LONG_MAX
        }
        return found.pop() if len(found) == 1 else None

    return memoized(view, "allowed_lateness", operator, build)


def processing_time_windows(view: TraceView, operator: str) -> bool:
    """Whether ``operator``'s windows are processing-time windows (Flink's
    ``TumblingProcessingTimeWindows``, ``ProcessingTimeSessionWindows``...): it registered
    processing-time timers and no event-time timer at all. (An event-time window operator
    registers an event-time cleanup timer for every window that got an element:
    ``WindowOperator.registerCleanupTimer`` uses the assigner's domain.) Their start, end,
    firing and cleanup times are processing times."""

    def build() -> bool:
        first = _first_of(view, "timer_registered", operator)
        if first < 0:
            return False
        detail = view.c.values_at("detail", np.array([first]), ("timer_registered",))[0]
        if detail[0] == "event":  # (the usual case, an event-time window: one record read)
            return False
        rows = view.select("timer_registered", operator=operator)
        _, details = distinct_objects(view.c.values_at("detail", rows, ("timer_registered",)))
        return {d[0] for d in details} == {"processing"}

    return bool(memoized(view, "processing_time_windows", operator, build))


def _first_of(view: TraceView, kind: str, operator: str, step: int = 1024) -> int:
    """The position of the first record of ``kind`` written by ``operator`` (-1: none), read
    a block of records at a time (not the kind and operator of every record)."""
    code = view.kind_code(kind)
    if code < 0:
        return -1
    codes = view.c.kind.codes
    for start in range(0, len(codes), step):
        rows = start + np.flatnonzero(codes[start : start + step] == code)
        if len(rows):
            hit = np.flatnonzero(view.c.values_at("operator", rows, (kind,)) == operator)
            if len(hit):
                return int(rows[hit[0]])
    return -1


def timer_records(view: TraceView, operator: str) -> pd.DataFrame:
    """The timer records of ``operator``: seq, kind, proc_time, watermark, key, namespace (text),
    ts, domain, flag (``deduplicated`` of a registration, ``existed`` of a deletion, False for
    a firing), and timer: one integer per timer identity (key, namespace text, domain,
    timestamp), as ``timer_lives`` tells timers apart. The times are int64 columns when every
    record has an exact one, else objects (ints, None where absent)."""
    rows = view.select(*TIMER_KINDS, operator=operator)
    # the kind as a categorical of TIMER_KINDS: comparisons by code, not string by string
    order = np.full(len(view.c.kind.values) + 1, -1, dtype=np.int8)
    for i, kind in enumerate(TIMER_KINDS):
        if kind in view._code_of:
            order[view._code_of[kind]] = i
    kinds = pd.Categorical.from_codes(order[view._codes[rows]], categories=list(TIMER_KINDS))
    columns: dict[str, Any] = {"seq": rows.copy(), "kind": kinds}
    for name in ("proc_time", "watermark"):
        columns[name] = _times(view, name, rows)
    columns["key"] = _objects(view.column("key", rows))
    columns["ts"] = _times(view, "ts", rows)
    # detail is (domain, namespace[, flag]) for every timer kind; a run shares a few detail
    # objects among many records: each distinct object (by id(): alive throughout, so no id
    # is reused) is read once
    details = view.part("detail", rows)[rows]  # (an object array: its ids read in bulk)
    at, firsts = _first_of_each(details)
    distinct = [details[i] for i in firsts]
    texts, text_codes = _namespace_texts_codes(list(map(itemgetter(1), distinct)))
    columns["namespace"] = _objects(object_array(texts)[at])
    ns_codes = text_codes[at]
    distinct_domains = list(map(itemgetter(0), distinct))
    domains = object_array(distinct_domains)[at]
    columns["domain"] = _objects(domains)
    columns["flag"] = np.array([bool(d[2]) if len(d) > 2 else False for d in distinct], dtype=bool)[
        at
    ]
    if len(rows):
        stamps = columns["ts"]
        ts_codes = (
            pd.factorize(stamps.to_numpy())[0]
            if stamps.dtype != object
            else _codes(stamps.to_numpy(dtype=object))
        )
        columns["timer"] = _group_ids(
            view.part("key", rows).codes[rows],
            ns_codes,
            _identity_codes(distinct_domains)[at],
            ts_codes,
        )
    else:
        columns["timer"] = np.zeros(0, dtype=np.int64)
    return pd.DataFrame(columns, copy=False)  # (every column made here, for this frame only)


def _first_of_each(values: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Per value of an object array, the number of the distinct object it is (by identity,
    numbered in order of first appearance), and each distinct object's first position."""
    codes, first = first_of_each(object_ids(values))
    return codes, first.tolist()


def _times(view: TraceView, name: str, rows: np.ndarray) -> pd.Series:
    """A time column of some records: int64 when every one has an exact value, else objects
    (ints, None where absent)."""
    column = view.part(name, rows).take(rows)
    if column.exact and column.present.all():
        return pd.Series(column.values, dtype=np.int64)
    return _objects(view.column(name, rows))


def _identity_codes(values: list[Any]) -> np.ndarray:
    """Integer codes of some strings (or any values) telling equal ones apart: by object
    identity first (a run's domains are a few shared objects), then by value."""
    ids = np.fromiter(map(id, values), dtype=np.int64, count=len(values))
    if not len(ids) or (ids == ids[0]).all():  # one shared object (one domain): no hashing
        return np.zeros(len(ids), dtype=np.int64)
    codes, distinct = pd.factorize(ids)
    firsts = np.full(len(distinct), len(codes), dtype=np.int64)  # each object's first record
    np.minimum.at(firsts, codes, np.arange(len(codes), dtype=np.int64))
    by_value, _ = pd.factorize(object_array([values[i] for i in firsts.tolist()]))
    return by_value[codes]


def _objects(values: Any) -> pd.Series:
    """A column of Python objects as they are (not converted to pandas' Arrow-backed str
    dtype, which costs a conversion each way for columns only read back as objects)."""
    return pd.Series(values, dtype=object)


def namespace_texts(values: list[Any]) -> list[str]:
    """A timer namespace as text: a window as "[start, end)" (from a TimeWindow or the
    [start, end] pair of a DataFrame), anything else as ``short``."""
    return _namespace_texts_codes(values)[0]


def _namespace_texts_codes(values: list[Any]) -> tuple[list[str], np.ndarray]:
    """``namespace_texts`` and an integer code per value: one per distinct text."""
    if not values:
        return [], np.zeros(0, dtype=np.int64)
    # a text per distinct object (by id(): the values are alive throughout, so no id is
    # reused), then per distinct namespace — not a Python-level __hash__ per record
    ids = np.fromiter(map(id, values), dtype=np.int64, count=len(values))
    codes, _ = pd.factorize(ids)
    first_pos = np.unique(codes, return_index=True)[1]  # codes are 0..n-1: in code order
    cache: dict[Any, str] = {}
    texts = []
    for pos in first_pos.tolist():
        v = values[pos]
        ident = _identity(v)
        text = cache.get(ident)
        if text is None:
            if hasattr(v, "start") and hasattr(v, "end"):
                text = f"[{v.start}, {v.end})"
            elif (
                isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(b, int) for b in v)
            ):
                text = f"[{v[0]}, {v[1]})"
            else:
                text = short(v, 30)
            cache[ident] = text
        texts.append(text)
    text_codes, _ = pd.factorize(np.asarray(texts, dtype=object))
    return np.asarray(texts, dtype=object)[codes].tolist(), text_codes[codes]


def _identity(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return short(v, 200)


def timer_lives(records: pd.DataFrame) -> pd.DataFrame:
    """One row per timer that existed (a registration that was not de-duplicated): key and
    namespace (texts), domain, timestamp, registered (proc_time), ended (proc_time of its
    firing or deletion; None while pending at the end), end ("fired" / "deleted" / "pending"),
    reg_seq, end_seq, watermark (at registration). A timer is (key, namespace, domain,
    timestamp), as in Flink's timer queues.

    Per timer identity, in seq order, a registration that was not de-duplicated starts a
    timer unless one is live, and a firing or deletion ends the live one, if any: so of a run
    of registrations (or of ends) only the first counts, and the counted records alternate
    start, end, start, ... — found with array operations, not a walk over every record."""
    n = len(records)
    if n == 0:
        return pd.DataFrame([], columns=TIMER_COLUMNS)
    kinds = records["kind"]
    is_reg = (kinds == "timer_registered").to_numpy()
    is_fired = (kinds == "timer_fired").to_numpy()
    counted = np.flatnonzero(~(is_reg & records["flag"].to_numpy(dtype=bool)))
    if "timer" in records.columns:  # timer_records' identities
        ident = records["timer"].to_numpy()[counted]
    else:
        ident = _group_ids(
            _codes(records["key"].to_numpy(dtype=object)[counted]),
            _codes(records["namespace"].to_numpy(dtype=object)[counted]),
            _codes(records["domain"].to_numpy(dtype=object)[counted]),
            _codes(records["ts"].to_numpy(dtype=object)[counted]),
        )
    order = np.argsort(ident, kind="stable")  # per timer, in seq order
    group, reg, pos = ident[order], is_reg[counted][order], counted[order]
    same = np.zeros(len(order), dtype=bool)
    same[1:] = group[1:] == group[:-1]
    prev_reg = np.zeros(len(order), dtype=bool)
    prev_reg[1:] = reg[:-1]
    keep = reg != (same & prev_reg)  # a start after no live timer, an end of a live one
    group, reg, pos = group[keep], reg[keep], pos[keep]
    starts = np.flatnonzero(reg)
    nxt = np.minimum(starts + 1, len(pos) - 1)
    ended = (starts + 1 < len(pos)) & (group[nxt] == group[starts]) & ~reg[nxt]
    start_pos = pos[starts]
    end_pos = np.where(ended, pos[nxt], -1)
    by_seq = np.argsort(start_pos, kind="stable")
    start_pos, end_pos = start_pos[by_seq], end_pos[by_seq]
    has_end = end_pos >= 0
    end_at = np.where(has_end, end_pos, 0)

    def col(name: str, at: np.ndarray) -> list[Any]:
        return records[name].to_numpy()[at].tolist()  # Python ints / objects as they are

    end_text = np.where(is_fired[end_at], "fired", "deleted")
    end_text = np.where(has_end, end_text, "pending").tolist()
    ends = has_end.tolist()
    values = (
        records["key"].to_numpy(dtype=object)[start_pos],
        col("namespace", start_pos),
        col("domain", start_pos),
        col("ts", start_pos),
        col("proc_time", start_pos),
        [p if e else None for p, e in zip(col("proc_time", end_at), ends, strict=True)],
        end_text,
        col("seq", start_pos),
        [q if e else None for q, e in zip(col("seq", end_at), ends, strict=True)],
        col("watermark", start_pos),
    )
    frame = {c: pd.Series(v, dtype=object) for c, v in zip(TIMER_COLUMNS, values, strict=True)}
    if len(start_pos):  # the keys as texts (the string column assigning them would make)
        frame["key"] = pd.Series(key_texts(values[0]), dtype="str")
    return pd.DataFrame(frame)


def _codes(values: np.ndarray) -> np.ndarray:
    """Integer codes of an object column by ``_identity`` (values that cannot be hashed by
    their ``short`` text)."""
    try:
        codes, _ = pd.factorize(values, use_na_sentinel=False)
    except TypeError:
        codes, _ = pd.factorize(
            object_array([_identity(v) for v in values.tolist()]),
            use_na_sentinel=False,
        )
    return codes


def timer_queue(records: pd.DataFrame) -> pd.DataFrame:
    """Live timers per domain after each timer record: seq, proc_time, domain, size
    (registrations that were not de-duplicated add one, firings and deletions of an existing
    timer take one away)."""
    kinds = records["kind"]
    flag = records["flag"].to_numpy(dtype=bool)
    delta = np.where(
        (kinds == "timer_registered").to_numpy(),
        np.where(flag, 0, 1),
        np.where((kinds == "timer_fired").to_numpy(), -1, np.where(flag, -1, 0)),
    )
    keep = np.flatnonzero(delta != 0)
    domains = records["domain"].to_numpy()[keep]
    codes, _ = pd.factorize(domains, use_na_sentinel=False)
    size = np.zeros(len(keep), dtype=np.int64)
    steps = delta[keep]
    for code in range(int(codes.max()) + 1 if len(codes) else 0):  # a running sum per domain
        mine = codes == code
        size[mine] = np.cumsum(steps[mine])
    return pd.DataFrame(
        {
            "seq": records["seq"].to_numpy()[keep],
            "proc_time": pd.Series(records["proc_time"].to_numpy()[keep].tolist(), dtype=object),
            "domain": pd.Series(domains, dtype=object),
            "size": size,
        }
    )
