"""``TraceColumns.values_at``: some records' values read from a first read (only those
records, ``Pieces.values_at``) are the whole decoded column's (issue 11)."""

from __future__ import annotations

import numpy as np
import pytest
from chart_jobs import JOBS, decode_all

from winviz.trace.coded import identity

NAMES = ("operator", "key", "window", "detail")


def _idents(values: np.ndarray) -> list[object]:
    return [identity(v) for v in values.tolist()]


@pytest.mark.parametrize("job", sorted(JOBS))
def test_values_of_some_records_are_the_whole_columns(job: str) -> None:
    whole = JOBS[job]().trace
    decode_all(whole)
    c = whole.columns()
    kinds = c.kind.decode()
    rng = np.random.default_rng(7)
    n = len(c)
    for kind in sorted(set(kinds.tolist())):
        of_kind = np.flatnonzero(kinds == kind)
        # a few records of one kind (read one by one), every record of it (from its part)
        few = np.sort(rng.choice(of_kind, size=min(len(of_kind), max(1, n // 20)), replace=False))
        for rows in (few, of_kind):
            for name in NAMES:
                fresh = JOBS[job]().trace.columns()
                got = fresh.values_at(name, rows, (kind,))
                want = c.detail[rows] if name == "detail" else getattr(c, name).decode(rows)
                assert _idents(got) == _idents(want), (job, kind, name, len(rows))
    # records of every kind at once, kinds not given: read one by one
    rows = np.sort(rng.choice(n, size=n // 10, replace=False))
    for name in NAMES:
        fresh = JOBS[job]().trace.columns()
        fresh.part(name, ("fired",))  # (a part read before changes nothing)
        got = fresh.values_at(name, rows)
        want = c.detail[rows] if name == "detail" else getattr(c, name).decode(rows)
        assert _idents(got) == _idents(want), (job, name)
