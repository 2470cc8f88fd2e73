"""The detail columns of ``to_pandas`` (issue 11): a field whose values are all ints is a
nullable ``Int64`` column, all bools a nullable ``boolean`` one; an int beyond Java's long
range, mixed types, windows or a field that is None throughout stay objects.
Every cell is the record's own value, exactly, and ``from_pandas`` reads the frame back to the
same records."""

from __future__ import annotations

import enum
from typing import Any

import pandas as pd
import pytest
from jobs import bounded, keyed_window

import winviz as wv
from winviz.trace import Trace
from winviz.trace.frame import from_pandas
from winviz.trace.schema import FRAME_COLUMNS, window_bounds
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow


class Level(enum.IntEnum):
    HIGH = 2


def _sessions() -> Trace:
    """Session windows with a process function (each firing counts its elements), allowed
    lateness and a late element: arrivals, timers registered (some de-duplicated) and
    deleted (the merged sessions'), firings, cleanups."""
    env = wv.StreamExecutionEnvironment()
    events = [("a", 1_000), ("b", 2_500), ("a", 1_800), ("a", 900), ("b", 7_000), ("a", 200)]
    (
        env.from_collection(events, arrival_times=[0, 100, 200, 900, 1_000, 1_300])
        .assign_timestamps_and_watermarks(bounded(500))
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(1_000))
        .allowed_lateness(2_000)
        .process(lambda k, ctx, els, out: out.collect((k, len(els))))
        .sink_to("out")
    )
    return env.execute().trace


def _typed(value: Any) -> Any:
    """A value with the type of each part (1 and True, 1 and 1.0 differ)."""
    if isinstance(value, (tuple, list)):
        return type(value), [_typed(v) for v in value]
    return type(value), value


def _cell(value: Any) -> Any:
    """A frame cell as a record holds it: a missing value (``<NA>``, NaN, None) as None."""
    return None if value is None or value is pd.NA or value != value else value


def _cells_are_the_records_own(trace: Trace, frame: pd.DataFrame) -> None:
    """Each detail cell is its record's value, of the same type (``tolist()`` gives Python
    ints and bools; a missing cell, ``<NA>`` / NaN / None, stands for the record's None);
    missing on the rows of the kinds without that field."""
    columns = {name: frame[name].tolist() for name in frame.columns[len(FRAME_COLUMNS) :]}
    for r in trace:
        details = r.details()
        for name, cells in columns.items():
            cell = cells[r.seq]
            if name in details:
                assert _typed(_cell(cell)) == _typed(details[name]), (r, name, cell)
            else:
                assert _cell(cell) is None, (r, name, cell)


def _round_trips(trace: Trace, frame: pd.DataFrame) -> None:
    """``from_pandas`` reads the frame back to the same records (windows by their bounds:
    the frame keeps ``window_start`` / ``window_end``), each value of the same type."""
    back = Trace.from_columns(from_pandas(frame), view=True)

    def rows(t: Trace) -> list[Any]:
        return [
            _typed(
                (
                    r.seq,
                    r.kind,
                    r.proc_time,
                    r.watermark,
                    r.operator,
                    r.key,
                    window_bounds(r.window),
                    r.ts,
                    r.detail,
                )
            )
            for r in t
        ]

    assert rows(back) == rows(trace)


def test_int_and_bool_fields_are_nullable_columns() -> None:
    trace = _sessions()
    frame = trace.to_pandas()
    kinds = trace.kinds()
    assert kinds["timer_deleted"] > 0 and kinds["merged"] > 0 and kinds["cleanup"] > 0
    for name in ("index", "pane", "count", "cleanup_time"):
        assert frame[name].dtype == "Int64", name
    for name in ("deduplicated", "existed"):
        assert frame[name].dtype == "boolean", name
    # tuples, windows (tuples too: pandas 2 cannot make strings of a categorical of them),
    # strings and tuples, lists of windows
    for name in ("value", "namespace", "state_window", "result", "merged_windows"):
        assert frame[name].dtype == object, name
    arrivals = frame[frame["kind"] == "arrival"]
    assert arrivals["index"].tolist() == list(range(6))
    assert frame["index"].isna().sum() == len(frame) - 6
    # a de-duplicated registration is one whose window's timer was registered before
    regs = trace.records("timer_registered")
    seen: set[Any] = set()
    expected = []
    for r in regs:
        domain, window, _ = r.detail
        expected.append((r.key, domain, window, r.ts) in seen)
        seen.add((r.key, domain, window, r.ts))
    assert frame.loc[[r.seq for r in regs], "deduplicated"].tolist() == expected
    assert any(expected)  # the late element re-registers its window's cleanup timer
    _cells_are_the_records_own(trace, frame)
    _round_trips(trace, frame)


def test_a_field_none_throughout_stays_objects() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        keyed_window(env, [("a", 1), ("a", 2)], 10, arrival_times=[0, 1])
        .reduce(lambda x, y: (x[0], x[1] + y[1]))  # no element count at the firing
        .sink_to("out")
    )
    trace = env.execute().trace
    frame = trace.to_pandas()
    assert frame["count"].dtype == object
    assert frame["count"].tolist() == [None] * len(frame)
    assert frame["pane"].dtype == "Int64"
    _cells_are_the_records_own(trace, frame)
    _round_trips(trace, frame)


def _hand_made(*records: tuple[str, Any]) -> Trace:
    """A trace of records of these kinds and details (times and keys made up)."""
    trace = Trace()
    for i, (kind, detail) in enumerate(records):
        trace.writer.emit(kind, i, None, "w", "k", None, i, detail)
    return trace


@pytest.mark.parametrize(
    ("records", "name", "dtype", "values"),
    [
        # Java's long range exactly: Int64
        (
            [("cleanup", wv.MIN), ("cleanup", wv.MAX), ("cleanup", 0)],
            "cleanup_time",
            "Int64",
            [wv.MIN, wv.MAX, 0],
        ),
        # beyond it on either side: objects, exact
        ([("cleanup", 2**63), ("cleanup", 5)], "cleanup_time", object, [2**63, 5]),
        ([("cleanup", -(2**63) - 1), ("cleanup", 5)], "cleanup_time", object, [-(2**63) - 1, 5]),
        # an int and a bool (equal in Python), an int and a str, an int and a float: objects
        ([("arrival", ("x", 1)), ("arrival", ("y", True))], "index", object, [1, True]),
        ([("arrival", ("x", 1)), ("arrival", ("y", "2"))], "index", object, [1, "2"]),
        ([("arrival", ("x", 1)), ("arrival", ("y", 2.0))], "index", object, [1, 2.0]),
        # an int subclass is not an int
        ([("cleanup", 1), ("cleanup", Level.HIGH)], "cleanup_time", object, [1, Level.HIGH]),
        # ints and None: Int64 with <NA>
        ([("arrival", ("x", None)), ("arrival", ("y", 7))], "index", "Int64", [None, 7]),
        # bools and None: boolean with <NA>; a bool and an int: objects
        (
            [
                ("timer_registered", ("event", TimeWindow(0, 5), None)),
                ("timer_registered", ("event", TimeWindow(0, 5), True)),
            ],
            "deduplicated",
            "boolean",
            [None, True],
        ),
        (
            [
                ("timer_deleted", ("event", TimeWindow(0, 5), False)),
                ("timer_deleted", ("event", TimeWindow(0, 5), 0)),
            ],
            "existed",
            object,
            [False, 0],
        ),
        # windows (the global window among them; a plain tuple equal to a window): objects
        (
            [
                ("timer_fired", ("event", TimeWindow(0, 5))),
                ("timer_fired", ("event", GLOBAL_WINDOW)),
                ("timer_fired", ("event", (0, 5))),
            ],
            "namespace",
            object,
            [TimeWindow(0, 5), GLOBAL_WINDOW, (0, 5)],
        ),
        # None throughout: objects
        ([("cleanup", None), ("cleanup", None)], "cleanup_time", object, [None, None]),
    ],
)
def test_typed_columns_and_their_fallbacks(
    records: list[tuple[str, Any]], name: str, dtype: Any, values: list[Any]
) -> None:
    trace = _hand_made(*records)
    frame = trace.to_pandas()
    assert frame[name].dtype == dtype
    assert [_typed(_cell(v)) for v in frame[name].tolist()] == [_typed(v) for v in values]
    _cells_are_the_records_own(trace, frame)
    _round_trips(trace, frame)


def test_a_field_of_several_kinds_is_typed_across_them() -> None:
    """``channel`` of channel_watermark (ints) and of channel_idle (ints) makes one Int64
    column; ``input`` of watermark (strings) and of channel_watermark (strings) one
    categorical; a kind's None among another kind's ints stays <NA>."""
    trace = _hand_made(
        ("channel_watermark", (0, "input1")),
        ("watermark", "input2"),
        ("channel_idle", (1, "input2")),
        ("channel_watermark", (None, "input1")),
    )
    frame = trace.to_pandas()
    assert frame["channel"].dtype == "Int64"
    assert [_cell(v) for v in frame["channel"].tolist()] == [0, None, 1, None]
    assert isinstance(frame["input"].dtype, pd.CategoricalDtype)
    assert frame["input"].cat.categories.tolist() == ["input1", "input2"]
    assert frame["input"].tolist() == ["input1", "input2", "input2", "input1"]
    _cells_are_the_records_own(trace, frame)
    _round_trips(trace, frame)


def test_shared_detail_tuples_give_each_record_its_values() -> None:
    """The engine shares one detail tuple among a window's timer records: split once, each
    record still gets its own row's values (many records: the shared path is taken)."""
    shared = [("event", TimeWindow(i * 10, i * 10 + 10), i % 2 == 0) for i in range(50)]
    records = [("timer_registered", shared[(i * 7) % 50]) for i in range(3_000)]
    trace = _hand_made(*records)
    frame = trace.to_pandas()
    assert frame["deduplicated"].dtype == "boolean"
    assert frame["deduplicated"].tolist() == [((i * 7) % 50) % 2 == 0 for i in range(3_000)]
    namespaces = frame["namespace"].tolist()
    assert namespaces == [shared[(i * 7) % 50][1] for i in range(3_000)]
    # each record's window is its detail's own object
    assert all(w is shared[(i * 7) % 50][1] for i, w in enumerate(namespaces))
    assert isinstance(frame["domain"].dtype, pd.CategoricalDtype)
    assert frame["domain"].cat.categories.tolist() == ["event"]
    _round_trips(trace, frame)


def test_an_older_frame_with_a_widened_int_field_reads_back_as_ints() -> None:
    """An older winviz's detail column of ints was objects that pandas could widen to float64
    (NaN where missing): whole floats there read back as ints; a float in an object column
    stays a float."""
    trace = _hand_made(("cleanup", 4_999), ("arrival", ("x", 3)), ("cleanup", 9_999))
    frame = trace.to_pandas()
    widened = frame.astype({"cleanup_time": "float64", "index": "float64"})
    assert widened["cleanup_time"].tolist()[1] != widened["cleanup_time"].tolist()[1]  # NaN
    _round_trips(trace, widened)
    floats = _hand_made(("cleanup", 4_999.0), ("cleanup", 1.5))
    assert floats.to_pandas()["cleanup_time"].dtype == object
    _round_trips(floats, floats.to_pandas())
