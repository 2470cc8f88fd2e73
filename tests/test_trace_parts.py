"""Kind-selective decoding (issues 11/12): ``TraceColumns.part(name, kinds)`` decodes a field
on the records of some kinds only — the plain records of those kinds and the packed record
slots of those kinds — and gives exactly the whole column's values on those records; the
whole columns, ``to_pandas`` and saved files stay the same whatever parts were read first."""

from __future__ import annotations

import hashlib
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from chart_jobs import FIELDS, JOBS, decode_all

from winviz.trace import Packed, Trace
from winviz.trace.coded import (
    LONG_MAX,
    LONG_MIN,
    CodedColumn,
    TimeColumn,
    encode,
    identity,
    object_array,
    time_column,
)
from winviz.trace.pieces import Deferred
from winviz.windows.window import TimeWindow

READ = FIELDS[1:]  # every field but the kind (decoded first, whole)


def typed(column: Any, rows: np.ndarray) -> list[Any]:
    """The values of a column (or part) on these records, each with its type (``1`` is not
    ``True``), nested values too; unhashable ones by their repr."""
    if isinstance(column, CodedColumn):
        values = column.decode(rows).tolist()
    elif isinstance(column, TimeColumn):
        values = column.take(rows).tolist()
    else:
        values = column[rows].tolist()
    return [identity(v) for v in values]


def rows_of(trace: Trace, kinds: tuple[str, ...]) -> np.ndarray:
    c = trace.columns()
    codes = [i for i, k in enumerate(c.kind.values) if k in kinds]
    return np.flatnonzero(np.isin(c.kind.codes, codes))


# -- a hand-made trace: plain records and two markers, one of a slot of varying kind ------


class Varying(Packed):
    """Three records per entry (values: proc_time, a key, which, a detail): ``alpha`` (its
    time beyond the long range for ``which == 3``), then ``beta`` or ``gamma`` as ``which``
    is even or odd (a slot of varying kind), then ``delta`` in the window
    ``[t, t + 10)`` and without times. ``fields`` says it with every kind of item: constant
    values, lists, ``Deferred`` ones, a ``CodedColumn``, a ``TimeColumn``, arrays; ``made``
    records which ``Deferred`` items were made."""

    width = 4
    count = 3

    def __init__(self) -> None:
        self.made: list[str] = []

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        t, key, which, detail = values[at : at + 4]
        out.extend(("alpha", t, None, "op", key, None, 2**64 if which == 3 else t, detail))
        second = "beta" if which % 2 == 0 else "gamma"
        out.extend((second, t + 1, t, "op", key, None, t - 1, (detail, which)))
        out.extend(("delta", None, None, "op2", key, TimeWindow(t, t + 10), None, [detail]))

    def fields(self, slots: Any) -> list[tuple[Any, ...]]:
        def deferred(label: str, make: Any) -> Deferred:
            def made() -> Any:
                self.made.append(label)
                return make()

            return Deferred(made)

        n = len(slots[0])
        kinds = ["beta" if w % 2 == 0 else "gamma" for w in slots[2]]
        return [
            ("alpha", deferred("kind", lambda: encode(kinds)), "delta"),
            (
                deferred("alpha proc", lambda: time_column(slots[0])),
                deferred("second proc", lambda: np.array(slots[0], dtype=np.int64) + 1),
                None,
            ),
            (None, deferred("second wm", lambda: list(slots[0])), None),
            ("op", "op", "op2"),
            (encode(slots[1]),) * 3,
            (None, None, deferred("window", lambda: [TimeWindow(t, t + 10) for t in slots[0]])),
            (
                deferred("alpha ts", lambda: [
                    2**64 if w == 3 else t for t, w in zip(slots[0], slots[2], strict=True)
                ]),
                deferred("second ts", lambda: TimeColumn(np.array(slots[0]) - 1, np.ones(n, bool))),
                None,
            ),
            (
                deferred("alpha detail", lambda: list(slots[3])),
                deferred(
                    "second detail",
                    lambda: object_array(list(zip(slots[3], slots[2], strict=True))),
                ),
                deferred("delta detail", lambda: [[d] for d in slots[3]]),
            ),
        ]  # fmt: skip


class Plain(Packed):
    """Two records per entry, said with ``Packed.fields``'s default (from ``unpack``: every
    item a list, every slot's kind varying as far as the read can tell)."""

    width = 2
    count = 2

    def unpack(self, values: list[Any], at: int, out: list[Any]) -> None:
        t, key = values[at : at + 2]
        out.extend(("beta", t, t - 5, "op", key, None, t + 2, None))
        out.extend(("epsilon", t, None, "op3", (key, 1), TimeWindow(0, t), None, {"k": key}))


KEYS = [1, True, 1.0, "1", (1, "a"), (True, "a"), None, -0.0, 0.0]


def hand_trace(varying: Varying | None = None) -> Trace:
    """Plain records (times None, beyond the long range, at its edges; keys Python holds
    equal and Java does not) between runs of the two markers."""
    trace = Trace()
    varying = varying if varying is not None else Varying()
    plain = Plain()
    for block in range(4):
        for i in range(5):
            j = block * 5 + i
            key = KEYS[j % len(KEYS)]
            t = 100 * block + i
            trace.writer.emit(
                "alpha", t, None, "op", key, None, [None, LONG_MAX, LONG_MIN, t][i % 4], j
            )
            trace.writer.emit("epsilon", None, t, "op3", KEYS[(j + 1) % len(KEYS)],
                              TimeWindow(t, t + 5), -t if i % 2 else LONG_MAX + 1,
                              {"j": j})  # fmt: skip
            trace.writer.emit("beta", t, t, "op", key, None, t, ("plain", j))
        entries = [
            (varying, 100 * block + e, KEYS[(block + e) % len(KEYS)], block * 7 + e, f"d{e}")
            for e in range(6)
        ]
        trace.append_run(varying, [v for entry in entries for v in entry], len(entries))
        run = [(plain, 1000 * block + e, KEYS[(block * 3 + e) % len(KEYS)]) for e in range(3)]
        trace.append_run(plain, [v for entry in run for v in entry], 3)
    trace.writer.emit("zeta", 5, 5, "op", True, None, 5, None)
    return trace


def test_the_hand_made_trace_reads_as_its_records_unpacked() -> None:
    trace = hand_trace()
    records = trace._unpacked()
    c = trace.columns()
    for f, name in enumerate(FIELDS):
        column = getattr(c, name)
        whole = typed(column, np.arange(len(c)))
        assert whole == [identity(v) for v in records[f :: len(FIELDS)]], name
    assert not c.ts.exact and c.proc_time.exact  # (the times beyond the long range)
    assert c.key.values[:6] == [1, True, 1.0, "1", (1, "a"), (True, "a")]


KIND_SETS = [
    ("alpha",),
    ("beta",),
    ("gamma",),
    ("delta",),
    ("epsilon",),
    ("zeta",),
    ("alpha", "gamma"),
    ("beta", "epsilon"),
    ("gamma", "delta", "zeta"),
]


@pytest.mark.parametrize("kinds", KIND_SETS)
def test_a_part_equals_the_whole_column_on_its_kinds(kinds: tuple[str, ...]) -> None:
    whole = hand_trace()
    decode_all(whole)
    trace = hand_trace()
    rows = rows_of(trace, kinds)
    assert len(rows)
    for name in READ:
        part = trace.columns().part(name, kinds)
        assert typed(part, rows) == typed(getattr(whole.columns(), name), rows), name
    parted = [name for name in READ if name != "operator"]  # (the operator: read whole)
    assert all(getattr(trace.columns(), "_" + name) is None for name in parted)  # parts only


def test_parts_grow_kind_by_kind_and_keep_their_values() -> None:
    whole = hand_trace()
    decode_all(whole)
    trace = hand_trace()
    c = trace.columns()
    asked: tuple[str, ...] = ()
    for kind in ("beta", "alpha", "delta", "gamma", "epsilon"):  # ts turns objects at alpha
        asked += (kind,)
        for name in READ:
            before = c._parts.get(name)
            part = c.part(name, (kind,))
            assert c.part(name, asked) is part  # the part covers every kind asked so far
            rows = rows_of(trace, asked)
            assert typed(part, rows) == typed(getattr(whole.columns(), name), rows), name
            if before is not None and name != "ts":
                assert before[0] < c._parts[name][0]
    # every kind asked: the whole column itself
    for name in READ:
        assert c.part(name, (*asked, "zeta")) is getattr(c, name)
        assert typed(getattr(c, name), np.arange(len(c))) == typed(
            getattr(whole.columns(), name), np.arange(len(c))
        )


def test_a_part_makes_only_the_items_of_its_kinds() -> None:
    varying = Varying()
    trace = hand_trace(varying)
    c = trace.columns()
    assert varying.made == []
    assert len(c.kind.values) == 6  # (the kinds: read whole first)
    assert varying.made == ["kind"]
    c.part("ts", ("alpha",))
    assert varying.made == ["kind", "alpha ts"]
    c.part("detail", ("delta",))
    assert varying.made == ["kind", "alpha ts", "delta detail"]
    c.part("proc_time", ("epsilon", "zeta"))  # kinds no Varying record has
    assert varying.made == ["kind", "alpha ts", "delta detail"]
    part = c.part("proc_time", ("gamma",))  # a slot of varying kind: read whole
    assert varying.made[-1] == "second proc"
    beta = rows_of(trace, ("beta",))
    gamma = rows_of(trace, ("gamma",))
    assert part.present[gamma].all()
    # of the beta records only those in the slot read have a value: not the plain ones,
    # nor Plain's (a slot of varying kinds too, but none of them gamma)
    in_slot = sum((block * 7 + e) % 2 == 0 for block in range(4) for e in range(6))
    assert int(part.present[beta].sum()) == in_slot < len(beta)
    # elsewhere nothing was read: no code, no detail
    key = c.part("key", ("delta",))
    assert (key.codes[rows_of(trace, ("alpha", "epsilon"))] == -1).all()
    detail = c.part("detail", ("delta",))
    assert all(d is None for d in detail[rows_of(trace, ("alpha",))].tolist())


def test_a_coded_part_has_a_dictionary_of_its_own() -> None:
    trace = hand_trace()
    c = trace.columns()
    part = c.part("key", ("zeta",))
    assert part.values == [True]
    assert c._key is None
    whole = c.key
    assert whole.values[:2] == [1, True] and whole is not part
    assert c.part("key", ("zeta",)) is whole  # decoded whole: the whole column from now on


def test_columns_that_cannot_decode_parts_give_the_whole_column() -> None:
    trace = hand_trace()
    view = trace.where(kind=("alpha", "beta"))
    c = view.columns()
    assert c.part("ts", ("alpha",)) is c.ts


# -- the whole columns, to_pandas and saved files after parts -----------------------------


def fingerprint(trace: Trace, tmp: Path) -> tuple[Any, ...]:
    c = trace.columns()
    coded = {
        name: (getattr(c, name).codes.tolist(), [identity(v) for v in getattr(c, name).values])
        for name in ("kind", "operator", "key", "window")
    }
    times = {
        name: (getattr(c, name).values.tolist(), getattr(c, name).present.tolist())
        for name in ("proc_time", "watermark", "ts")
    }
    frame = trace.to_pandas()
    categories = {
        col: [identity(v) for v in frame[col].cat.categories]
        for col in frame.columns
        if isinstance(frame[col].dtype, pd.CategoricalDtype)
    }
    saved = None  # (a file holds times in the long range only: not the hand-made trace's)
    if all(getattr(c, name).exact for name in times):
        saved = hashlib.sha256(trace.save(tmp / "trace.parquet").read_bytes()).hexdigest()
    return (
        coded,
        times,
        typed(c.detail, np.arange(len(c))),
        frame.to_csv(),
        frame.dtypes.to_dict(),
        categories,
        saved,
    )


def _read_parts(trace: Trace, seed: int) -> None:
    c = trace.columns()
    kinds = list(c.kind.values)
    rng = np.random.default_rng(seed)
    for _ in range(6):
        name = READ[int(rng.integers(len(READ)))]
        some = rng.choice(len(kinds), size=int(rng.integers(1, 4)), replace=False)
        c.part(name, [kinds[i] for i in some.tolist()])


SMALL = [job for job in JOBS if job != "kernel_binned"]  # (the kernel job at 3k: the same paths)


@pytest.mark.parametrize("job", ["hand", *SMALL])
def test_whole_columns_pandas_and_files_are_the_same_after_any_parts(
    job: str, tmp_path: Path
) -> None:
    def run() -> Trace:
        return hand_trace() if job == "hand" else JOBS[job]().trace

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    expected = fingerprint(run(), tmp_path / "a")
    assert (expected[-1] is None) == (job == "hand")
    for seed in range(2):
        trace = run()
        _read_parts(trace, seed)
        assert fingerprint(trace, tmp_path / "b") == expected


@pytest.mark.parametrize("job", SMALL)
def test_parts_of_engine_traces_equal_their_whole_columns(job: str) -> None:
    whole = JOBS[job]().trace
    decode_all(whole)
    kinds = list(whole.columns().kind.values)
    sets = [(k,) for k in kinds] + list(combinations(kinds, 2))[::7]
    for kind_set in sets:
        trace = JOBS[job]().trace
        rows = rows_of(trace, kind_set)
        for name in READ:
            part = trace.columns().part(name, kind_set)
            assert typed(part, rows) == typed(getattr(whole.columns(), name), rows), (
                kind_set,
                name,
            )


def _typed_records(records: list[Any]) -> list[Any]:
    """Each record's fields, each value with its type (``coded.identity``: ``1`` is not
    ``True``)."""
    fields = ("seq", "kind", "proc_time", "watermark", "operator", "key", "window", "ts", "detail")
    return [[identity(getattr(r, f)) for f in fields] for r in records]


@pytest.mark.parametrize("job", ["hand", *SMALL])
def test_records_of_some_kinds_read_only_their_parts(job: str) -> None:
    """``trace.records(kind, ...)`` reads each field on the records of those kinds only (their
    parts, ``TraceColumns.part``) and gives exactly the records, with their values' types,
    that the whole decoded columns give (``records_at`` of a fully decoded trace), for each
    kind, pairs of kinds and one operator's records; the other kinds' records stay undecoded."""
    run = hand_trace if job == "hand" else (lambda: JOBS[job]().trace)
    whole = run()
    decode_all(whole)
    kinds = list(whole.columns().kind.values)
    operators = whole.operators()
    for kind_set in [(k,) for k in kinds] + list(combinations(kinds, 2))[::5]:
        trace = run()
        got = trace.records(*kind_set)
        want = whole.records_at(rows_of(whole, kind_set))
        assert _typed_records(got) == _typed_records(want), kind_set
        assert [r.seq for r in got] == rows_of(whole, kind_set).tolist()
    if operators and len(kinds) > 1:
        trace = run()
        got = trace.records(kind=kinds[:2], operator=operators[-1])
        want = whole.records_at(rows_of(whole, tuple(kinds[:2])))
        want = [r for r in want if r.operator == operators[-1]]
        assert _typed_records(got) == _typed_records(want)
