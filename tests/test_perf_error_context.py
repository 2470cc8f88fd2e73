"""Errors after packed records (``WindowKernel.process_source_batch``): a record of a traced
source batch that goes the general way (``process_element``) after records written as packed
entries of an open cached window must raise the error of the step-by-step path, naming the
same window. A user function that raises before the trigger context is set for the record
(the key selector, the reduce function or ``AggregateFunction.add``) is reported with the
window of the trigger context as the previous record left it (``WindowOperator.user_error``):
one by one that is the open window the packed records went into, so the kernel must hand
that context on before ``process_element``. Each case compares the error (type, message and
attributes), the partial outputs, the metrics and the trace, byte for byte (``to_json()``),
with Flink's path one record at a time; untraced, the batch loop (``process_batch``) is held
to the same error and outputs.

Only tumbling windows pack records: sliding windows take the kernel but every record goes
the general way, and session windows (merging) never take the kernel; the random jobs below
include sliding windows all the same."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jobs import bounded, engine_paths

import winviz as wv
from winviz.errors import FunctionResultError, UserFunctionError, WinvizError
from winviz.windows.window import TimeWindow


class Ids(wv.AggregateFunction):
    """Collects the records' ids (their third field) in arrival order; ``get_result``
    raises when ``fail`` is among them and ``result_fails``; ``add`` raises on the record
    ``fail`` when ``add_fails``, or returns None for it when ``none``."""

    def __init__(self, fail: int, where: str) -> None:
        self.fail, self.where = fail, where

    def create_accumulator(self) -> tuple:
        return ()

    def add(self, value: Any, accumulator: tuple) -> tuple | None:
        if value[2] == self.fail and self.where == "add":
            raise ValueError(f"add {value[2]}")
        if value[2] == self.fail and self.where == "none":
            return None
        return (*accumulator, value[2])

    def get_result(self, accumulator: tuple) -> tuple:
        if self.fail in accumulator and self.where == "result":
            raise ZeroDivisionError(f"result {accumulator}")
        return accumulator

    def merge(self, a: tuple, b: tuple) -> tuple:
        return a + b


class Annotate(wv.ProcessWindowFunction):
    """Emits (key, window start, ids); raises when the record ``fail`` is in the window
    and ``where == "process"``."""

    def __init__(self, fail: int, where: str) -> None:
        self.fail, self.where = fail, where

    def process(self, key, context, elements, out):
        for ids in elements:
            if self.fail in ids and self.where == "process":
                raise KeyError(f"process {ids}")
            out.collect((key, context.window().start, ids))


def _env(job: dict) -> wv.StreamExecutionEnvironment:
    """The job: ``events`` (key, timestamp, id) arriving at ``arrivals``, a bounded watermark
    every ``interval`` ms, windows of ``assigner`` with ``lateness``, late data to a side
    output (``side``) or dropped, and ``function`` (reduce summing the ids, the ``Ids``
    aggregate, or it with ``Annotate``); the record ``fail`` makes the user function
    ``where`` raise: the key selector (``key``), the reduce / add (``add``, ``none``: it
    returns None), get_result (``result``), the ProcessWindowFunction (``process``) or the
    late side output's consumer (``side``)."""
    fail, where = job["fail"], job["where"]
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=job["interval"], trace=job["trace"])

    def key(e):
        return e[99] if where == "key" and e[2] == fail else e[0]

    def reduce(a, b):
        if b[2] == fail and where in ("add", "result", "process"):
            raise ValueError(f"reduce {b[2]}")
        if b[2] == fail and where == "none":
            return None
        return (a[0], a[1], a[2] + b[2])

    assigner = (
        wv.TumblingEventTimeWindows.of(job["size"])
        if job["assigner"] == "tumbling"
        else wv.SlidingEventTimeWindows.of(job["size"], job["size"] // 2)
    )
    windowed = (
        env.from_collection(job["events"], arrival_times=job["arrivals"])
        .assign_timestamps_and_watermarks(bounded(job["bound"]))
        .key_by(key)
        .window(assigner)
        .allowed_lateness(job["lateness"])
    )
    late = wv.OutputTag("late")
    if job["side"]:
        windowed = windowed.side_output_late_data(late)
    if job["function"] == "reduce":
        out = windowed.reduce(reduce)
    elif job["function"] == "aggregate":
        out = windowed.aggregate(Ids(fail, where))
    else:
        out = windowed.aggregate(Ids(fail, where), Annotate(fail, where))
    out.sink_to("out")
    if job["side"]:
        out.get_side_output(late).map(
            lambda e: e[99] if where == "side" and e[2] == fail else e
        ).sink_to("late")
    return env


def _run(job: dict, fast: bool) -> Any:
    """The job's error (or its result, when it ran through) with the kernel and batches
    (``fast``), or one record at a time on Flink's path."""
    with engine_paths(kernel=fast, batches=fast):
        try:
            return _env(job).execute()
        except WinvizError as exc:
            return exc


def _attributes(exc: WinvizError) -> dict[str, Any]:
    """What an error names (its attributes but the trace and partial result, which are
    compared on their own), its message and its cause's."""
    named = {k: v for k, v in vars(exc).items() if k not in ("trace", "partial_result")}
    return {**named, "message": str(exc), "type": type(exc), "cause": repr(exc.__cause__)}


def _same(job: dict) -> WinvizError | None:
    """Run ``job`` both ways and assert they agree; the fast run's error, if any."""
    fast, slow = _run(job, True), _run(job, False)
    assert isinstance(fast, WinvizError) == isinstance(slow, WinvizError)
    if not isinstance(fast, WinvizError):
        assert fast.outputs == slow.outputs
        return None
    assert _attributes(fast) == _attributes(slow)
    assert fast.partial_result.outputs == slow.partial_result.outputs
    assert fast.partial_result.side_outputs == slow.partial_result.side_outputs
    if job["trace"]:  # (untraced batches count a whole batch upstream of a failure)
        assert fast.partial_result.metrics == slow.partial_result.metrics
        assert fast.trace.to_json() == slow.trace.to_json()
    return fast


def _job(events, arrivals, fail, where, *, trace=True, function="reduce", **kw) -> dict:
    return {
        "events": events, "arrivals": arrivals, "fail": fail, "where": where, "trace": trace,
        "function": function, "interval": kw.get("interval", 1000), "bound": 0, "size": 50,
        "assigner": "tumbling", "lateness": kw.get("lateness", 0), "side": kw.get("side", True),
    }  # fmt: skip


# One source batch (no watermark before arrival 1000): records 0 and 1 cache [0, 50) and
# [50, 100) through process_element, record 2 goes back to [0, 50), open, as a packed entry
# (the two cached windows swap), record 3 too; record 4 opens [100, 150) through
# process_element. One by one, record 4 finds the trigger context of record 3: [0, 50).
NEW_WINDOW = [("a", 10, 1), ("a", 60, 2), ("a", 20, 3), ("b", 30, 4), ("c", 110, 5)]


@pytest.mark.parametrize("trace", [True, False])
@pytest.mark.parametrize("function", ["reduce", "aggregate", "aggregate_process"])
def test_a_key_selector_failing_after_packed_records_names_their_window(
    trace: bool, function: str
) -> None:
    error = _same(_job(NEW_WINDOW, [0, 1, 2, 3, 4], 5, "key", trace=trace, function=function))
    assert isinstance(error, UserFunctionError)
    assert error.window == TimeWindow(0, 50) and error.index == 4 and error.key is None
    assert error.record == ("c", 110, 5)
    assert str(error).endswith("record 4; window [0, 50); value ('c', 110, 5)")


# Records 0-2 cache [0, 50), [50, 100), [100, 150) through process_element (the element loop
# keeps the last two: [100, 150) and [50, 100)); record 3 goes back to [0, 50) through it
# (now cached with [100, 150)); record 4 goes into [100, 150), open, as a packed entry;
# record 5 goes into [50, 100) again through process_element, where key a has contents: its
# reduce / add runs before the trigger context is set, and one by one the context is record
# 4's: [100, 150).
OLD_WINDOW = [("a", 10, 1), ("a", 60, 2), ("a", 110, 3), ("a", 20, 4), ("a", 120, 5),
              ("a", 70, 6), ("a", 80, 7)]  # fmt: skip


@pytest.mark.parametrize("trace", [True, False])
@pytest.mark.parametrize("function", ["reduce", "aggregate", "aggregate_process"])
def test_a_reduce_or_add_failing_after_packed_records_names_their_window(
    trace: bool, function: str
) -> None:
    job = _job(OLD_WINDOW, list(range(7)), 6, "add", trace=trace, function=function)
    error = _same(job)
    assert isinstance(error, UserFunctionError)
    assert error.window == TimeWindow(100, 150) and error.index == 5 and error.key == "a"
    assert "ValueError" in str(error) and "record 5; key 'a'; window [100, 150)" in str(error)


@pytest.mark.parametrize("trace", [True, False])
@pytest.mark.parametrize("function", ["reduce", "aggregate"])
def test_a_none_state_after_packed_records_names_its_own_window(trace: bool, function: str) -> None:
    """A reduce / add returning None: the error names the window the record went into
    (``none_result_error``), not the trigger context's."""
    error = _same(_job(OLD_WINDOW, list(range(7)), 6, "none", trace=trace, function=function))
    assert isinstance(error, FunctionResultError)
    assert error.index == 5 and "window [50, 100)" in str(error)


# A late record after packed ones: at arrival 100 the watermark becomes 119 (its window timer
# for [0, 50) fires: the trigger context is key a, [0, 50)); records 2 and 3 go into
# [100, 150), open, as packed entries; record 4 is late into [50, 100), not cached (no late
# way): it goes through process_element. One by one its trigger context is record 3's.
LATE = [("a", 10, 1), ("a", 120, 2), ("b", 130, 3), ("a", 140, 4), ("c", 60, 5), ("a", 145, 6)]
LATE_ARRIVALS = [0, 1, 101, 102, 103, 104]


@pytest.mark.parametrize("trace", [True, False])
@pytest.mark.parametrize("side", [True, False])
def test_a_late_record_failing_after_packed_records_names_their_window(
    trace: bool, side: bool
) -> None:
    job = _job(LATE, LATE_ARRIVALS, 5, "key", trace=trace, side=side, interval=100)
    error = _same(job)
    assert isinstance(error, UserFunctionError)
    assert error.window == TimeWindow(100, 150) and error.index == 4
    assert "record 4; window [100, 150); value ('c', 60, 5)" in str(error)


@pytest.mark.parametrize("trace", [True, False])
def test_a_late_record_within_the_lateness_after_packed_records(trace: bool) -> None:
    """With 30 ms of lateness record 4 is late into [50, 100) within it, with a
    ProcessWindowFunction (no firing way): its add raises before the trigger context is
    set; record 3's context, [100, 150), is the one named."""
    job = _job(LATE, LATE_ARRIVALS, 5, "add", trace=trace, interval=100, lateness=30,
               function="aggregate_process")  # fmt: skip
    error = _same(job)
    assert isinstance(error, UserFunctionError)
    assert error.window == TimeWindow(100, 150) and error.index == 4 and error.key == "c"


@pytest.mark.parametrize("where", ["side", "process", "result"])
def test_other_failures_after_packed_records(where: str) -> None:
    """The late side output's consumer (id 5, record 4: late, to the side output), a
    ProcessWindowFunction and get_result (the firings at the end of input of [100, 150),
    which holds id 2): the same error both ways."""
    function = "aggregate_process" if where == "process" else "aggregate"
    fail = 5 if where == "side" else 2
    job = _job(LATE, LATE_ARRIVALS, fail, where, interval=100, function=function)
    error = _same(job)
    assert error is not None
    if where == "side":
        assert "record 4" in str(error) and "('c', 60, 5)" in str(error)
    else:
        assert isinstance(error, UserFunctionError) and error.window == TimeWindow(100, 150)


# -- random jobs: any record fails, anywhere -------------------------------------------------


@st.composite
def failing_jobs(draw, focused: bool = False):
    """Records in order but for a few ms, out of order by up to 120 ms, or each in one of
    three windows in turn at random (more windows than the two the kernel caches: records
    packed into one of them come between records that go the general way), arriving in
    runs (watermarks between some of them), tumbling (mostly) or sliding windows, lateness,
    a side output or not, a reduce, an aggregate or one with a ProcessWindowFunction, and
    one record that makes one user function raise. ``focused``: the shape that packs records
    between general ones (the three windows, one traced source batch, tumbling windows) with
    the key selector or the reduce / add raising."""

    def pick(*options, focus=None):
        return draw(st.sampled_from(options if focus is None or not focused else focus))

    n = draw(st.integers(3, 40))
    keys = draw(st.integers(1, 3))
    size = draw(st.sampled_from([20, 50]))
    disorder = pick(0, 30, 120, None, None, focus=[None])
    offsets = draw(st.lists(st.integers(0, 100), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([1, 1, 1, 2, 40]), min_size=n, max_size=n))
    arrivals = [sum(gaps[: i + 1]) for i in range(n)]
    stamps = (
        [(o % 3) * size + o % size for o in offsets]
        if disorder is None
        else [max(0, i * 10 - offsets[i] * disorder // 100) for i in range(n)]
    )
    events = [(f"k{i % keys}", stamps[i], i + 1) for i in range(n)]
    return {
        "events": events, "arrivals": arrivals, "fail": draw(st.integers(1, n)),
        "where": pick("key", "key", "key", "add", "add", "none", "result", "process", "side",
                      focus=["key", "add"]),
        "trace": pick(True, True, False, focus=[True]),
        "function": draw(st.sampled_from(["reduce", "aggregate", "aggregate_process"])),
        "interval": pick(25, 1000, 1000, focus=[1000]), "size": size,
        "bound": draw(st.sampled_from([0, 10])),
        "assigner": pick("tumbling", "tumbling", "tumbling", "sliding", focus=["tumbling"]),
        "lateness": draw(st.sampled_from([0, 30])), "side": draw(st.booleans()),
    }  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(failing_jobs())
def test_a_failing_record_anywhere_gives_the_step_by_step_error(job) -> None:
    _same(job)


@settings(max_examples=300, deadline=None)
@given(failing_jobs(focused=True))
def test_a_record_failing_between_packed_ones_gives_the_step_by_step_error(job) -> None:
    _same(job)


# -- a timer's firing between two batches ---------------------------------------------------


@pytest.mark.parametrize("trace", [True, False])
def test_a_firing_between_batches_names_the_last_record_read(trace: bool) -> None:
    """The watermark at 25 (after records 0-2, arrivals 1-3, one batch) fires [0, 20), whose
    get_result raises: one by one the error names the last record read, 2. Untraced, a
    batch's loops set the record index only where a record leaves; the runtime sets it
    after the batch, as it sets the clock."""
    events = [("k0", 0, 1), ("k0", 10, 2), ("k0", 20, 3), ("k0", 30, 4)]
    job = _job(events, [1, 2, 3, 43], 1, "result", trace=trace, function="aggregate",
               interval=25, side=False)  # fmt: skip
    job["size"] = 20
    error = _same(job)
    assert isinstance(error, UserFunctionError)
    assert error.index == 2 and error.window == TimeWindow(0, 20) and error.key == "k0"
    assert "raised ZeroDivisionError: result (1, 2); record 2; key 'k0'" in str(error)
