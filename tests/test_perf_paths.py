"""The window kernel (``winviz.operators.window_kernel``: a non-merging event-time window
with Flink's EventTimeTrigger, no evictor, a reduce or aggregate, with or without a
ProcessWindowFunction) must be invisible: with the trace on, its element loops and timer loop
write the same trace, byte for byte (``to_json()``), as Flink's path in
``WindowOperator``; with it off, the batched loop gives the same outputs, side outputs,
metrics and errors. ``WindowKernel.enabled = False`` forces Flink's path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jobs import (
    KERNEL_FUNCTIONS,
    build,
    engine_paths,
    jobs,
    keyed_window,
    sum_pipeline,
    timestamped,
)

import winviz as wv
from winviz.errors import InputError, UserFunctionError
from winviz.operators.window_kernel import WindowKernel
from winviz.operators.window_operator import WindowOperator


def fast_paths(on: bool):
    """The window kernel on or off (``WindowKernel.enabled``)."""
    return engine_paths(kernel=on)


def run(job, trace: bool, fast: bool):
    with fast_paths(fast):
        return build(job, trace).execute()


@st.composite
def fast_path_jobs(draw):
    """Random jobs in every configuration the window kernel takes (tumbling, offset or
    sliding windows, EventTimeTrigger by default or given, reduce or aggregate, each with or
    without a ProcessWindowFunction, with or without lateness and a late side output)."""
    job = draw(jobs())
    job["assigner"] = draw(st.sampled_from(["tumbling", "tumbling_offset", "sliding"]))
    job["trigger"] = draw(st.sampled_from(["default", "event_time"]))
    job["function"] = draw(st.sampled_from(KERNEL_FUNCTIONS))
    return job


@settings(max_examples=200, deadline=None)
@given(fast_path_jobs())
def test_the_traced_fast_path_writes_the_same_trace_byte_for_byte(job) -> None:
    fast, slow = run(job, True, True), run(job, True, False)
    assert fast.trace.to_json() == slow.trace.to_json()
    assert fast.outputs == slow.outputs
    assert fast.side_outputs == slow.side_outputs
    assert fast.metrics == slow.metrics


@settings(max_examples=200, deadline=None)
@given(fast_path_jobs(), st.sampled_from([1, 1, 2, 3]))
def test_the_traced_fast_paths_with_batches_write_the_one_by_one_trace(job, parallelism) -> None:
    """Batches with a trace (the source, the timestamps operator chained to it, the window's
    traced element loop) against the one-by-one step-by-step path."""

    def make(fast: bool):
        def go():
            with fast_paths(fast):
                return build(job, True).set_parallelism(parallelism).execute()

        return go

    with engine_paths(batches=True):
        fast = make(True)()
    with engine_paths(batches=False):
        slow = make(False)()
    assert fast.trace.to_json() == slow.trace.to_json()
    assert fast.outputs == slow.outputs
    assert fast.side_outputs == slow.side_outputs
    assert fast.metrics == slow.metrics


@settings(max_examples=200, deadline=None)
@given(fast_path_jobs())
def test_the_untraced_fast_path_gives_the_same_results(job) -> None:
    fast, slow = run(job, False, True), run(job, False, False)
    assert fast.outputs == slow.outputs
    assert fast.side_outputs == slow.side_outputs
    assert fast.metrics == slow.metrics


def test_the_fast_paths_are_taken() -> None:
    job = {
        "events": [("a", 5, 1), ("b", 7, 2), ("a", 60, 3)],
        "arrivals": [0, 1, 2],
        "assigner": "tumbling",
        "trigger": "default",
        "lateness": 25,
        "side": True,
        "function": "reduce",
        "bound": 0,
        "interval": 0,
        "layout": "single",
        "parts": [0, 0, 0],
        "idle": None,
    }
    calls: list[str] = []
    traced, fire = WindowKernel.process_element, WindowKernel.fire_event_timers
    batch = WindowKernel.process_source_batch

    def spy_batch(self, records, stamps, arrival):
        calls.append(f"batch of {len(stamps)}")
        batch(self, records, stamps, arrival)

    def spy_traced(self, value, ts):
        calls.append("element")
        traced(self, value, ts)

    def spy_fire(self, watermark):
        calls.append("timers")
        fire(self, watermark)

    WindowKernel.process_element, WindowKernel.fire_event_timers = spy_traced, spy_fire
    WindowKernel.process_source_batch = spy_batch
    try:
        result = run(job, True, True)
    finally:
        WindowKernel.process_element, WindowKernel.fire_event_timers = traced, fire
        WindowKernel.process_source_batch = batch
    # the source batch goes into the window whole; ("b", 7) lands in the open window cached
    # for ("a", 5) and is written as one packed entry (no process_element call)
    assert calls == ["batch of 3", "element", "element", "timers"]
    assert [r.kind for r in result.trace.records(operator="window")][:12] == [
        "element", "assigned", "timer_registered", "trigger", "timer_registered",
        "element", "assigned", "timer_registered", "trigger", "timer_registered",
        "element", "assigned",
    ]  # fmt: skip
    assert [(r.value, r.timestamp) for r in result.outputs["out"]] == [
        (("a", 5, 1), 49),
        (("b", 7, 2), 49),
        (("a", 60, 3), 99),
    ]


def _failing_job(trace: bool, fast: bool, where: str, arrival_interval: int = 1):
    """A reduce that raises on the element with value 3 (``where="reduce"``), a key selector
    that raises on it (``where="key"``), a timestamp assigner that raises on it
    (``where="assigner"``) or gives it a timestamp that is not one (``where="timestamp"``),
    or an aggregate whose result raises when the window of key "b" fires (``where="fire"``).
    ``fast``: the fast paths and batches (``JobRuntime.use_batches``), else neither."""

    class Agg(wv.SumAggregate):
        def get_result(self, accumulator):
            if accumulator == 2:
                raise ZeroDivisionError("result")
            return accumulator

    def reduce(a, b):
        if b[2] == 3:
            raise ValueError("reduce")
        return (a[0], a[1], a[2] + b[2])

    env = wv.StreamExecutionEnvironment(trace=trace)
    windowed = keyed_window(
        env,
        [("a", 5, 1), ("b", 7, 2), ("a", 9, 3), ("a", 60, 4)],
        50,
        wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
            lambda e, _: (
                e[1]
                if e[2] != 3 or where not in ("assigner", "timestamp")
                else e[99]
                if where == "assigner"
                else 9.5
            )
        ),
        key=lambda e: e[0] if where != "key" or e[2] != 3 else e[99],
        arrival_interval=arrival_interval,
    )
    out = windowed.reduce(reduce) if where == "reduce" else windowed.aggregate(Agg(lambda e: e[2]))
    out.sink_to("out")
    error = InputError if where == "timestamp" else UserFunctionError
    with engine_paths(kernel=fast, batches=fast), pytest.raises(error) as info:
        env.execute()
    return info.value


@pytest.mark.parametrize("where", ["reduce", "key", "assigner", "timestamp", "fire"])
@pytest.mark.parametrize("trace", [True, False])
def test_errors_are_the_same_on_both_paths(trace: bool, where: str) -> None:
    fast, slow = _failing_job(trace, True, where), _failing_job(trace, False, where)
    assert str(fast) == str(slow)
    assert fast.partial_result.outputs == slow.partial_result.outputs
    if trace:  # (untraced batches count a whole batch upstream of a failure)
        assert fast.partial_result.metrics == slow.partial_result.metrics
        assert fast.trace.to_json() == slow.trace.to_json()
    if where == "assigner":
        assert str(fast) == (
            "timestamp assigner in operator 'watermarks' raised IndexError: tuple index out of "
            "range; record 2; value ('a', 9, 3)"
        )
    elif where == "timestamp":
        assert "record 2" in str(fast) and "9.5" in str(fast)
    elif where == "reduce":
        assert "record 2" in str(fast) and "key 'a'" in str(fast)
    elif where == "key":
        assert "record 2" in str(fast) and "IndexError" in str(fast) and "key '" not in str(fast)
    else:
        assert "key 'b'" in str(fast) and "window [0, 50)" in str(fast)


@pytest.mark.parametrize(("where", "records"), [("reduce", 3), ("key", 3), ("fire", 4)])
def test_a_batch_of_one_gives_the_one_by_one_trace(where, records) -> None:
    """Records 500 ms apart, watermarks every 200 ms: each source batch is one record, which
    the kernel takes (``WindowKernel.process_source_batch``); the error, trace and metrics are
    Flink's path's, up to the record that fails."""
    taken: list[int] = []
    one = WindowKernel.process_source_batch

    def spy(self, batch, stamps, arrival):
        taken.append(len(stamps))
        one(self, batch, stamps, arrival)

    WindowKernel.process_source_batch = spy
    try:
        fast = _failing_job(True, True, where, arrival_interval=500)
    finally:
        WindowKernel.process_source_batch = one
    slow = _failing_job(True, False, where, arrival_interval=500)
    assert taken == [1] * records
    assert str(fast) == str(slow)
    assert fast.partial_result.metrics == slow.partial_result.metrics
    assert fast.trace.to_json() == slow.trace.to_json()


def test_a_run_raises_the_full_collection_threshold_and_puts_it_back() -> None:
    import gc

    from winviz.runtime import JobRuntime

    seen: list[int] = []

    def assigner(e, _):
        seen.append(gc.get_threshold()[2])
        if e[2] == 3:
            raise ValueError("bad")
        return e[1]

    before = gc.get_threshold()
    try:
        gc.set_threshold(before[0], before[1], 10)
        for fail in (False, True):
            env = wv.StreamExecutionEnvironment()
            timestamped(
                env,
                [("a", 1, 1), ("a", 2, 2), ("a", 3, 3 if fail else 4)],
                wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(assigner),
            ).sink_to("out")
            if fail:
                with pytest.raises(UserFunctionError):
                    env.execute()
            else:
                env.execute()
            assert gc.get_threshold()[2] == 10
        assert set(seen) == {JobRuntime.gc_full_collection_threshold}
        gc.set_threshold(before[0], before[1], 500)  # already higher: left alone
        seen.clear()
        env = wv.StreamExecutionEnvironment()
        timestamped(
            env,
            [("a", 1, 1)],
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(assigner),
        ).sink_to("out")
        env.execute()
        assert seen == [500] and gc.get_threshold()[2] == 500
    finally:
        gc.set_threshold(*before)


@pytest.mark.parametrize("threshold", [100, None])
def test_a_run_starts_with_what_exists_in_the_oldest_generation(threshold) -> None:
    """The trace's buffer and the sink's list, made before the run, are in no young
    generation while it runs (``collector.promote_to_oldest``): the young passes do not visit what
    they hold. With the collector turned off nothing else moves them; a threshold of None
    leaves the collector alone; frozen objects keep the collector as it is."""
    import gc

    from winviz.runtime import JobRuntime

    young_during_run: list[set[int]] = []

    def look(e):
        young_during_run.append({id(o) for g in (0, 1) for o in gc.get_objects(generation=g)})
        return e

    def job() -> wv.StreamExecutionEnvironment:
        env = wv.StreamExecutionEnvironment()
        env.from_collection([("a", 1, 1)]).map(look).sink_to("out")
        return env

    before, enabled = JobRuntime.gc_full_collection_threshold, gc.isenabled()
    gc.disable()
    try:
        JobRuntime.gc_full_collection_threshold = threshold
        result = job().execute()
        made_before = {id(result.trace._buffer), id(result.outputs["out"])}
        assert made_before.isdisjoint(young_during_run[0]) == (threshold is not None)
        gc.freeze()  # something else keeps objects frozen: nothing is moved
        young_during_run.clear()
        JobRuntime.gc_full_collection_threshold = 100
        result = job().execute()
        assert id(result.trace._buffer) in young_during_run[0]
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        JobRuntime.gc_full_collection_threshold = before
        if enabled:
            gc.enable()


def _one_batch_job(
    trace: bool, function: str, events: list[tuple[str, int, int]], late: bool
) -> wv.StreamExecutionEnvironment:
    """``events`` keyed by their first field into tumbling windows of 50 ms with 30 ms of
    allowed lateness (and late data to the side output ``late`` when ``late``), summed by a
    reduce or an AggregateFunction: the first arrives at 0, the others at 101, 102, ... — one
    batch, before the periodic emission at 200; from 100 on the watermark is 119."""
    env = wv.StreamExecutionEnvironment(trace=trace, auto_watermark_interval=100)
    arrivals = [0, *range(101, 100 + len(events))]
    windowed = keyed_window(env, events, 50, lateness=30, arrival_times=arrivals)
    if late:
        windowed = windowed.side_output_late_data(wv.OutputTag("late"))
    if function == "reduce":
        out = windowed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
    else:
        out = windowed.aggregate(wv.SumAggregate(lambda e: e[2]))
    out.sink_to("out")
    return env


def _cached_window_job(trace: bool, function: str) -> wv.StreamExecutionEnvironment:
    """One batch (arrivals 101-107; the watermark is 119) that hits the untraced loop's
    cached tumbling window in each of its three states: open (the short way), fires at once
    (max_timestamp 99 <= 119 < cleanup 129) and late (cleanup 79 <= 119), each window
    entered twice in a row."""
    events = [
        ("a", 120, 1),  # arrival 0; at 100 the watermark becomes 119
        ("a", 130, 2),  # arrivals 101...: [100, 150), open
        ("b", 140, 3),
        ("a", 60, 5),  # [50, 100): fires at once
        ("b", 70, 6),
        ("a", 10, 7),  # [0, 50): late
        ("b", 20, 8),
        ("b", 145, 10),  # [100, 150) again
    ]
    return _one_batch_job(trace, function, events, late=True)


@pytest.mark.parametrize("function", ["reduce", "aggregate"])
def test_the_cached_window_in_each_state_gives_the_step_by_step_results(function: str) -> None:
    from winviz.runtime import JobRuntime

    runtime = JobRuntime(_cached_window_job(False, function), "check")
    window = next(op for op in runtime.order if isinstance(op, WindowOperator))
    assert isinstance(window.kernel, WindowKernel)
    calls: list[int] = []
    original = window.process_batch
    window.process_batch = lambda batch: (calls.append(len(batch)), original(batch))
    fast = runtime.run()
    assert calls == [1, 7]
    with engine_paths(kernel=False, batches=False):
        slow = _cached_window_job(False, function).execute()
    traced = _cached_window_job(True, function).execute()
    for other in (slow, traced):
        assert fast.outputs == other.outputs
        assert fast.side_outputs == other.side_outputs
        assert fast.metrics == other.metrics
    values = [(r.value, r.timestamp) for r in fast.outputs["out"]]
    if function == "reduce":
        assert values == [
            (("a", 60, 5), 99),
            (("b", 70, 6), 99),
            (("a", 120, 3), 149),
            (("b", 140, 13), 149),
        ]
    else:
        assert values == [(5, 99), (6, 99), (3, 149), (13, 149)]
    assert [r.value for r in fast.side_outputs["late"]] == [("a", 10, 7), ("b", 20, 8)]


def _alternating_windows_job(trace: bool, function: str) -> wv.StreamExecutionEnvironment:
    """One batch (arrivals 101-106; the watermark is 119) whose records alternate between
    two tumbling windows, as records out of order around a window's end do: [100, 150) open
    and [50, 100) firing at once (max_timestamp 99 <= 119 < cleanup 129). The untraced loop
    keeps both windows cached and swaps them."""
    events = [
        ("a", 120, 1),  # arrival 0; at 100 the watermark becomes 119
        ("a", 130, 2),  # [100, 150)
        ("b", 60, 3),  # [50, 100): fires at once
        ("a", 140, 4),  # [100, 150) again
        ("a", 70, 5),  # [50, 100) again: fires at once
        ("b", 145, 6),  # [100, 150)
        ("b", 80, 7),  # [50, 100): fires b's window a second time
    ]
    return _one_batch_job(trace, function, events, late=False)


@pytest.mark.parametrize("function", ["reduce", "aggregate"])
def test_records_alternating_between_two_windows_give_the_step_by_step_results(
    function: str,
) -> None:
    from winviz.runtime import JobRuntime

    runtime = JobRuntime(_alternating_windows_job(False, function), "check")
    window = next(op for op in runtime.order if isinstance(op, WindowOperator))
    assert isinstance(window.kernel, WindowKernel)
    calls: list[int] = []
    original = window.process_batch
    window.process_batch = lambda batch: (calls.append(len(batch)), original(batch))
    assigned: list[int] = []  # the timestamps the assigner was asked about
    assign = window.assigner.assign_windows
    window.assigner.assign_windows = lambda v, ts, now: (assigned.append(ts), assign(v, ts, now))[1]
    fast = runtime.run()
    assert calls == [1, 6]
    assert assigned == [120, 130, 60]  # then the two cached windows swap four times
    with engine_paths(kernel=False, batches=False):
        slow = _alternating_windows_job(False, function).execute()
    traced = _alternating_windows_job(True, function).execute()
    for other in (slow, traced):
        assert fast.outputs == other.outputs
        assert fast.metrics == other.metrics
    got = [(r.value, r.timestamp, r.processing_time) for r in fast.outputs["out"]]
    if function == "reduce":
        assert got == [
            (("b", 60, 3), 99, 102),
            (("a", 70, 5), 99, 104),
            (("b", 60, 10), 99, 106),
            (("a", 120, 7), 149, 106),
            (("b", 145, 6), 149, 106),
        ]
    else:
        assert got == [(3, 99, 102), (5, 99, 104), (10, 99, 106), (7, 149, 106), (6, 149, 106)]


def test_records_alternating_between_two_open_windows_write_the_one_by_one_trace() -> None:
    """Traced batches: records alternating between two open tumbling windows (the watermark
    is still MIN) take the short way in both, swapping them, and write the trace of
    Flink's path one record at a time, byte for byte."""

    def job() -> wv.StreamExecutionEnvironment:
        env = wv.StreamExecutionEnvironment(auto_watermark_interval=100)
        events = [
            ("a", 40, 1),
            ("a", 60, 2),
            ("b", 45, 3),
            ("b", 70, 4),
            ("a", 30, 5),
            ("a", 80, 6),
        ]
        sum_pipeline(env, events, 50, lateness=10, arrival_times=[1, 2, 3, 4, 5, 6])
        return env

    calls: list[str] = []
    traced = WindowKernel.process_element

    def spy(self, value, ts):
        calls.append(f"element {ts}")
        traced(self, value, ts)

    WindowKernel.process_element = spy
    try:
        fast = job().execute()
    finally:
        WindowKernel.process_element = traced
    assert calls == ["element 40", "element 60"]  # the first in each window: then both open
    with engine_paths(kernel=False, batches=False):
        slow = job().execute()
    assert fast.trace.to_json() == slow.trace.to_json()
    assert fast.outputs == slow.outputs and fast.metrics == slow.metrics
    assert [(r.value, r.timestamp) for r in fast.outputs["out"]] == [
        (("a", 40, 6), 49),
        (("b", 45, 3), 49),
        (("a", 60, 8), 99),
        (("b", 70, 4), 99),
    ]


@st.composite
def dense_fast_path_jobs(draw):
    """``fast_path_jobs`` with many records per batch in few windows: records close in
    arrival and event time, so that the untraced loop's cached tumbling window is hit while
    open, firing at once and late."""
    job = draw(fast_path_jobs())
    n = draw(st.integers(20, 120))
    keys = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    ts = draw(st.lists(st.integers(0, 250), min_size=n, max_size=n))
    gaps = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    arrivals, t = [], 0
    for g in gaps:
        t += g
        arrivals.append(t)
    job["events"] = [(k, x, i) for i, (k, x) in enumerate(zip(keys, ts, strict=True))]
    job["arrivals"] = arrivals
    job["parts"] = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    job["interval"] = draw(st.sampled_from([7, 50, 200]))
    return job


@settings(max_examples=200, deadline=None)
@given(dense_fast_path_jobs())
def test_the_untraced_fast_path_with_dense_batches_gives_the_same_results(job) -> None:
    fast = run(job, False, True)
    with engine_paths(batches=False):
        slow = run(job, False, False)
    assert fast.outputs == slow.outputs
    assert fast.side_outputs == slow.side_outputs
    assert fast.metrics == slow.metrics
