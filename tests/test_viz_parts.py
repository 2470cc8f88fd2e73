"""The charts read parts of the trace (``TraceView`` reads the fields of some records through
``TraceColumns.part``): every chart's spec is byte for byte what it is drawn from a trace
whose columns were all decoded whole first, alone or after other charts of the same trace,
and the trace's ``to_pandas`` and saved file are the same after the charts as before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from chart_jobs import CHARTS, FIELDS, JOBS, decode_all

from winviz.trace import Trace
from winviz.trace.coded import identity
from winviz.trace.schema import detail_names
from winviz.viz.trace_view import open_trace


def spec(chart: Any) -> str:
    return json.dumps(chart.to_dict(), sort_keys=True)


@pytest.mark.parametrize("job", list(JOBS))
def test_charts_from_parts_are_the_charts_from_whole_columns(job: str) -> None:
    run = JOBS[job]
    for name, draw in CHARTS.items():
        whole = run().trace
        decode_all(whole)
        expected = spec(draw(whole))
        trace = run().trace
        assert spec(draw(trace)) == expected, name
        c = trace.columns()
        assert any(getattr(c, "_" + f) is None for f in FIELDS), name  # parts, not all


@pytest.mark.parametrize("job", ["kernel", "late_union", "session"])
def test_charts_drawn_one_after_another_and_the_files_after_them(job: str, tmp_path: Path) -> None:
    run = JOBS[job]
    whole = run().trace
    decode_all(whole)
    expected = {name: spec(draw(whole)) for name, draw in CHARTS.items()}
    fresh = run().trace
    frame, saved = fresh.to_pandas(), fresh.save(tmp_path / "fresh.parquet").read_bytes()
    for order in (list(CHARTS), list(reversed(CHARTS))):
        trace = run().trace
        for name in order:
            assert spec(CHARTS[name](trace)) == expected[name], (order, name)
        after = trace.to_pandas()
        assert after.to_csv() == frame.to_csv()
        assert after.dtypes.to_dict() == frame.dtypes.to_dict()
        for col in frame.columns:
            if isinstance(frame[col].dtype, pd.CategoricalDtype):  # (mixed keys: objects)
                assert [identity(v) for v in after[col].cat.categories] == [
                    identity(v) for v in frame[col].cat.categories
                ]
            assert [identity(v) for v in after[col].tolist()[:300]] == [
                identity(v) for v in frame[col].tolist()[:300]
            ]
        path = trace.save(tmp_path / "after.parquet")
        assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(saved).digest()


def _view_reads(trace: Trace) -> list[Any]:
    """What a ``TraceView`` gives for every kind's records: each read method's values."""
    view = open_trace(trace)
    out: list[Any] = []
    for kind in view.counts():
        rows = view.select(kind)
        mixed = view.select(kind, "fired", "watermark")
        for name in ("proc_time", "watermark", "ts"):
            values, present = view.ints(name, mixed)
            out.append((values.tolist(), present.tolist()))
            out.append([identity(v) for v in view.column(name, rows).tolist()])
            out.append(np.nan_to_num(view.numbers(name, rows), nan=-1.5).tolist())
        for name in ("operator", "key"):
            out.append([identity(v) for v in view.column(name, mixed).tolist()])
            out.append([identity(v) for v in view.column(name, rows).tolist()])
        start, end, present = view.bounds(mixed)
        out.append((start.tolist(), end.tolist(), present.tolist()))
        out.append(view.column("window", rows).tolist())
        codes, (starts, ends, has) = view.window_codes(mixed)
        out.append(
            [(s, e, h) for s, e, h in zip(starts[codes], ends[codes], has[codes], strict=True)]
        )
        for field in detail_names(kind):
            out.append([repr(d) for d in view.detail(kind, field, rows).tolist()])
        out.append(view.operators(kind))
        for op in view.operators(kind):
            out.append(view.select(kind, "fired", operator=op).tolist())
    return out


@pytest.mark.parametrize("job", ["kernel", "late_union", "sliding_count"])
def test_the_view_reads_the_same_values_from_parts_as_from_whole_columns(job: str) -> None:
    whole = JOBS[job]().trace
    decode_all(whole)
    assert _view_reads(JOBS[job]().trace) == _view_reads(whole)
