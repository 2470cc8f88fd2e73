"""``to_pandas`` against a reference built record by record from the documented contract
(``winviz.trace.frame``'s docstring, the README's trace schema): same columns, dtypes and
cells, exactly (``assert_frame_equal(check_exact=True)``), on random jobs' traces and on
hand-made traces of mixed detail values (issue 11: the frame is built column by column from
the trace's codes and typed arrays; this says it still is the frame the contract describes).
And the columns built next to each other share no memory: setting a cell of one column
leaves every other column as it was."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from jobs import bounded, build, jobs, sum_pipeline, two_keys_run

import winviz as wv
from winviz.trace import Trace
from winviz.trace.schema import DETAIL_FIELDS, SCHEMA_VERSION, detail_names
from winviz.windows.window import GLOBAL_WINDOW, TimeWindow

MIN, MAX = -(2**63), 2**63 - 1


def _first_appearance(values: list[Any]) -> list[Any]:
    """The distinct values (not None) in order of first appearance."""
    return list(dict.fromkeys(v for v in values if v is not None))


def _categorical(values: list[Any], *, objects: bool = False) -> pd.Categorical:
    """Categories in order of first appearance (held as objects: a key's; else as pandas
    holds strings)."""
    categories = _first_appearance(values)
    return pd.Categorical(
        values, categories=pd.Index(categories, dtype=object) if objects else categories
    )


def _ints(values: list[Any]) -> Any:
    return pd.array([pd.NA if v is None else v for v in values], dtype="Int64")


def _typed_column(values: list[Any], present: list[bool]) -> Any:
    """A detail field's column by the contract: categorical when every value of the rows that
    have the field is a str, Int64 when each is an int in the long range or None (one int at
    least), boolean when each is a bool or None (one bool at least), else objects."""
    own = [v for v, p in zip(values, present, strict=True) if p]
    types = {type(v) for v in own}
    if types == {str}:
        return _categorical([v if p else None for v, p in zip(values, present, strict=True)])
    if types - {type(None)} == {int} and all(v is None or MIN <= v <= MAX for v in own):
        return _ints([v if p else None for v, p in zip(values, present, strict=True)])
    if types - {type(None)} == {bool}:
        cells = [pd.NA if not p or v is None else v for v, p in zip(values, present, strict=True)]
        return pd.array(cells, dtype="boolean")
    out = np.empty(len(values), dtype=object)
    for i, (v, p) in enumerate(zip(values, present, strict=True)):
        out[i] = v if p else None
    return pd.Series(out, dtype=object)


def reference_frame(trace: Trace) -> pd.DataFrame:
    """The frame of a trace whose keys are strings (or None), record by record."""
    records = list(trace)
    assert all(r.key is None or type(r.key) is str for r in records)

    def bound(w: Any, end: bool) -> int | None:
        return (w.end if end else w.start) if isinstance(w, TimeWindow) else None

    columns: dict[str, Any] = {
        "seq": np.array([r.seq for r in records], dtype=np.int64),
        "kind": _categorical([r.kind for r in records]),
        "proc_time": _ints([r.proc_time for r in records]),
        "watermark": _ints([r.watermark for r in records]),
        "operator": _categorical([r.operator for r in records]),
        "key": _categorical([r.key for r in records], objects=True),
        "window_start": _ints([bound(r.window, False) for r in records]),
        "window_end": _ints([bound(r.window, True) for r in records]),
        "ts": _ints([r.ts for r in records]),
    }
    kinds = _first_appearance([r.kind for r in records])
    names: list[str] = []
    for kind, fields in DETAIL_FIELDS.items():
        if kind in kinds:
            names.extend(f for f in fields if f not in names)
    if any(kind not in DETAIL_FIELDS for kind in kinds):
        names.append("detail")
    for name in names:
        present = [name in detail_names(r.kind) for r in records]
        values = [
            (r.detail if len(detail_names(r.kind)) == 1 else r.details()[name]) if p else None
            for r, p in zip(records, present, strict=True)
        ]
        columns[name] = _typed_column(values, present)
    frame = pd.DataFrame(columns)
    frame.attrs["schema_version"] = SCHEMA_VERSION
    return frame


def _same(trace: Trace) -> pd.DataFrame:
    frame = trace.to_pandas()
    expected = reference_frame(trace)
    pd.testing.assert_frame_equal(frame, expected, check_exact=True)
    assert frame.attrs == expected.attrs
    # the very objects the records hold (assert_frame_equal compares objects by ==)
    for name in [n for n, d in frame.dtypes.items() if d == np.dtype(object)]:
        for got, want in zip(frame[name].tolist(), expected[name].tolist(), strict=True):
            assert got is want or (type(got) is type(want) and got == want), (name, got, want)
    return frame


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs())
def test_random_jobs_frames_are_the_reference(job: dict[str, Any]) -> None:
    trace = build(job, trace=True).execute().trace
    _same(trace)


def _mixed(seed: int, n: int) -> Trace:
    """A hand-made trace of many records (the bulk paths: shared detail tuples, most
    details distinct) of kinds with typed, untyped and mixed detail values."""
    rng = random.Random(seed)
    windows = [TimeWindow(i * 10, i * 10 + 10) for i in range(20)] + [GLOBAL_WINDOW]
    shared = [("event", rng.choice(windows), rng.choice([True, False, None])) for _ in range(30)]
    triggers = [("on_element", "CONTINUE"), ("on_event_time", "FIRE_AND_PURGE")]
    trace = Trace()
    for i in range(n):
        pick = rng.random()
        window = rng.choice([*windows, None])
        key = rng.choice(["a", "b", None])
        if pick < 0.2:
            kind, detail = "arrival", ((key, i), i)
        elif pick < 0.35:
            kind, detail = "element", (key, i)
        elif pick < 0.55:
            kind, detail = "timer_registered", rng.choice(shared)
        elif pick < 0.7:
            kind, detail = "trigger", rng.choice(triggers)
        elif pick < 0.75:
            kind, detail = "fired", ((key, i), rng.randrange(3), "on_time", rng.choice([1, None]))
        elif pick < 0.8:
            kind, detail = "cleanup", rng.choice([MIN, MAX, i])
        elif pick < 0.85:
            kind, detail = "timer_deleted", (rng.choice(["event", "processing"]), window, True)
        elif pick < 0.9:
            kind, detail = "watermark", rng.choice(["input", "input1"])
        elif pick < 0.95:
            kind, detail = "channel_watermark", (rng.choice([0, 1, None]), "input2")
        else:
            kind, detail = "custom_kind", rng.choice([1, "x", (1, 2), None])
        proc = rng.choice([i, None, MIN, MAX])
        trace.writer.emit(
            kind,
            proc,
            rng.choice([None, i - 5]),
            rng.choice(["w", "src"]),
            key,
            window,
            rng.choice([None, i]),
            detail,
        )
    return trace


def test_mixed_hand_made_traces_are_the_reference() -> None:
    for seed in range(3):
        frame = _same(_mixed(seed, 3_000))
        assert frame["deduplicated"].dtype == "boolean" and frame["index"].dtype == "Int64"
        assert frame["detail"].dtype == object and frame["count"].dtype == "Int64"


def test_a_trace_of_many_kinds_is_the_reference() -> None:
    """More kinds than ``rows_by_code`` finds by a pass per kind (it sorts them then): the
    schema's kinds and some it lacks, interleaved."""
    rng = random.Random(5)
    kinds = [*list(DETAIL_FIELDS)[:14], *(f"custom_{i}" for i in range(6))]
    trace = Trace()
    for i in range(4_000):
        kind = rng.choice(kinds)
        width = len(detail_names(kind))
        detail = rng.choice([i, "s", None]) if width == 1 else tuple([i % 7] * width)
        trace.writer.emit(kind, i, None, "w", "k", None, i, detail)
    frame = _same(trace)
    assert len(set(frame["kind"].tolist())) == 20


def test_categories_come_in_order_of_first_appearance_across_packed_and_plain_records() -> None:
    """The kernel's packed entries and the plain records (firings, watermarks) are coded
    apart, so a key a plain record holds first can get its code before keys that packed
    entries hold earlier (trace_bench's job: k019 first appears after k020's firing): the
    categories still follow the records, as the reference's do. And a dictionary value no
    record has (a selection's) is no category."""
    env = wv.StreamExecutionEnvironment(trace=True)
    keys = [f"k{i:03d}" for i in range(100)]
    events = [(keys[i % 100], i - (i * 7919) % 150, 1) for i in range(3_000)]
    sum_pipeline(env, events, 1000, bounded(200), arrival_interval=1)
    trace = env.execute().trace
    codes = trace.columns().key
    assert list(codes.values) != [None, *keys]  # (the dictionary is not in record order)
    frame = _same(trace)
    assert list(frame["key"].cat.categories) == keys
    fired = trace.where(kind="fired")
    assert len(fired.columns().key.values) > len(set(fired.columns().key.decode().tolist()))
    _same(fired)


def test_a_cell_set_in_one_column_changes_no_other() -> None:
    """Each column owns its values and mask: window_start and window_end (gathered from the
    same window codes, with the same missing rows), the times, the detail columns."""
    frame = _mixed(7, 2_000).to_pandas()
    before = frame.copy(deep=True)
    for name in frame.columns:
        changed = frame.copy(deep=False)
        column = changed[name]
        present = int(np.flatnonzero(column.notna().to_numpy())[0])
        missing = np.flatnonzero(column.isna().to_numpy())
        if len(missing):  # a missing cell given a value: the column's mask changes
            changed.loc[int(missing[0]), name] = column.iloc[present]
            assert changed[name].notna().iloc[int(missing[0])]
        changed.loc[present, name] = -1 if name == "seq" else None
        assert (
            changed[name].iloc[present] == -1
            if name == "seq"
            else changed[name].isna().iloc[present]
        )
        rest = [c for c in frame.columns if c != name]
        pd.testing.assert_frame_equal(changed[rest], before[rest], check_exact=True)
        pd.testing.assert_frame_equal(frame, before, check_exact=True)


@pytest.mark.parametrize("make", ["mixed", "run", "loaded"])
def test_a_cell_set_in_the_frame_leaves_the_trace_as_it_was(make: str, tmp_path: Any) -> None:
    """The frame owns every array it holds: none is the trace's own decoded column (``seq``,
    the times, the kind / operator codes), so that a learner who edits a frame cell changes
    the frame only, never the trace that every chart and later frame reads."""
    if make == "mixed":
        trace = _mixed(3, 2_000)
    else:
        trace = two_keys_run(600)
        if make == "loaded":
            trace = wv.load_trace(trace.save(str(tmp_path / "run.parquet")))
    frame = trace.to_pandas()
    before = frame.copy(deep=True)
    for name in frame.columns:
        # (no Series of the column is held while a cell is set: pandas' copy-on-write would
        # copy a column another pandas object refers to, and hide a shared array)
        present = np.flatnonzero(before[name].notna().to_numpy())
        dtype = before[name].dtype
        if not len(present):  # (a field None throughout: objects)
            frame.loc[0, name] = "set"
        elif isinstance(dtype, pd.CategoricalDtype):
            frame.loc[int(present[0]), name] = None
        elif dtype == "boolean":
            frame.loc[int(present[0]), name] = not before[name].iloc[int(present[0])]
        elif dtype.kind == "O":
            frame.loc[int(present[0]), name] = "set"
        else:  # (seq, Int64: the value itself, not only the mask)
            frame.loc[int(present[0]), name] = -7
        assert not frame[name].equals(before[name]), name
    pd.testing.assert_frame_equal(trace.to_pandas(), before, check_exact=True)
