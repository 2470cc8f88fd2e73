"""The window kernel's traced paths for late elements (``winviz.operators.window_kernel``):
a late element into a window still within the allowed lateness fires it at once
(``WindowKernel.fire_traced``, written without ``WindowOperator.emit_window_contents``), a
late element into a window past it goes to the late side output, and an element into a
cached window that is not open goes the general way without looking for an open window
again (the element loop keeps two windows cached, as late records around two windows' ends
alternate between them); within a source batch, a late element into a cached window within
the lateness takes the firing way (``process_source_batch``: process_element's and
fire_traced's steps in the batch loop). Each must write the trace of Flink's path, one record
at a time, byte for byte (``to_json()``), with the same outputs, side outputs and metrics."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jobs import bounded, engine_paths, keyed_window
from test_batching import same_run

import winviz as wv
from winviz.errors import WinvizError
from winviz.operators.window_kernel import WindowKernel


class Annotate(wv.ProcessWindowFunction):
    """Emits (key, the window's result): a ProcessWindowFunction takes Flink's emission."""

    def process(self, key, context, elements, out):
        for e in elements:
            out.collect((key, e))


def _late_job(function: str) -> wv.StreamExecutionEnvironment:
    """One source batch (arrivals 101-110; from 100 on the watermark is 119): tumbling
    windows of 50 ms, 30 ms of allowed lateness, late data to the side output ``late``.
    [50, 100) is within the lateness (max_timestamp 99 <= 119 < cleanup 129): its elements
    fire it at once, a's twice in a row, b's twice (on time, then late); [0, 50) is past it
    (cleanup 79 <= 119): its elements go to the side output; [100, 150) and [150, 200) are
    open."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=100)
    events = [
        ("a", 120, 1),  # arrival 0; at 100 the watermark becomes 119
        ("a", 130, 2),  # arrivals 101...: [100, 150), open
        ("a", 60, 3),  # [50, 100): fires at once (on time)
        ("a", 70, 4),  # [50, 100) again: fires a second time (late)
        ("b", 80, 5),  # [50, 100): b's first firing
        ("a", 10, 6),  # [0, 50): past the lateness, to the side output
        ("b", 20, 7),
        ("b", 90, 8),  # [50, 100) again (the window cached before): b's second firing
        ("b", 140, 9),  # [100, 150) again: the open window kept from before
        ("c", 160, 10),  # [150, 200): a new open window
        ("c", 170, 11),
    ]
    windowed = (
        env.from_collection(events, arrival_times=[0, *range(101, 111)])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(50))
        .allowed_lateness(30)
        .side_output_late_data(wv.OutputTag("late"))
    )
    if function == "reduce":
        out = windowed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
    elif function == "aggregate":
        out = windowed.aggregate(wv.SumAggregate(lambda e: e[2]))
    else:
        out = windowed.aggregate(wv.SumAggregate(lambda e: e[2]), Annotate())
    out.sink_to("out")
    return env


RESULTS = {  # what [50, 100) fires: (key, result, pane, timing), in order
    "reduce": [("a", ("a", 60, 3), 0, "on_time"), ("a", ("a", 60, 7), 1, "late"),
               ("b", ("b", 80, 5), 0, "on_time"), ("b", ("b", 80, 13), 1, "late")],
    "aggregate": [("a", 3, 0, "on_time"), ("a", 7, 1, "late"), ("b", 5, 0, "on_time"),
                  ("b", 13, 1, "late")],
    "aggregate_process": [("a", ("a", 3), 0, "on_time"), ("a", ("a", 7), 1, "late"),
                          ("b", ("b", 5), 0, "on_time"), ("b", ("b", 13), 1, "late")],
}  # fmt: skip


@pytest.mark.parametrize("function", ["reduce", "aggregate", "aggregate_process"])
def test_late_elements_write_the_one_by_one_trace(function: str) -> None:
    fired: list[tuple[object, int]] = []
    elements: list[int | None] = []
    assigned: list[int | None] = []  # the timestamps the assigner was asked about
    fire, element = WindowKernel.fire_traced, WindowKernel.process_element
    assign = wv.TumblingEventTimeWindows.assign_windows

    def spy_fire(self, key, window, max_ts, contents, *timer):
        fired.append((key, max_ts))
        fire(self, key, window, max_ts, contents, *timer)

    def spy_element(self, value, ts, windows=None):
        if windows is None:  # (else the firing or the late way: the window is known)
            elements.append(ts)
        element(self, value, ts, windows)

    def spy_assign(self, value, ts, now):
        assigned.append(ts)
        return assign(self, value, ts, now)

    WindowKernel.fire_traced, WindowKernel.process_element = spy_fire, spy_element
    wv.TumblingEventTimeWindows.assign_windows = spy_assign
    try:
        with engine_paths(kernel=True, batches=True):
            fast = _late_job(function).execute()
    finally:
        WindowKernel.fire_traced, WindowKernel.process_element = fire, element
        wv.TumblingEventTimeWindows.assign_windows = assign
    with engine_paths(kernel=False, batches=False):
        slow = _late_job(function).execute()
    same_run(fast, slow)  # outputs, side outputs, metrics, trace byte for byte

    # the first record, the first into [50, 100) (which caches it), the first past the
    # lateness and the first of a new open window went the general way; 70, 80 and 90
    # (the window cached before [0, 50)) took the firing way, 20 the late way
    assert elements == [120, 60, 10, 160]
    if function == "aggregate_process":  # a ProcessWindowFunction: Flink's emission
        assert fired == []
    else:
        # the firings at once, of the general way (60) and of the firing way (70, 80, 90),
        # both through fire_traced; then the open windows' at the end of input
        assert fired == [("a", 99), ("a", 99), ("b", 99), ("b", 99), ("a", 149), ("b", 149),
                         ("c", 199)]  # fmt: skip
    assert assigned == [120, 60, 10, 160]  # 90: the window cached before [0, 50)
    window = fast.trace.operators("fired")[0]
    late_window = [
        (r.key, r.detail[0], r.detail[1], r.detail[2])
        for r in fast.trace.records("fired", operator=window)
        if r.window.start == 50
    ]
    assert late_window == RESULTS[function]
    assert [r.value for r in fast.side_outputs["late"]] == [("a", 10, 6), ("b", 20, 7)]
    assert [r.detail for r in fast.trace.records("side_output", operator=window)] == [
        ("late", ("a", 10, 6)),
        ("late", ("b", 20, 7)),
    ]
    assert fast.metrics[window]["num_late_records_dropped"] == 0


# -- the firing way: random late-heavy jobs against the one-by-one step-by-step path ---------


@st.composite
def late_heavy_jobs(draw):
    """Source batches full of late elements: records out of order by up to ``disorder`` ms
    against a small bound, tumbling windows, allowed lateness (so that many late elements
    land in a window within it and fire it at once, the firing way), late data to a side
    output or dropped; reduce, aggregate, or aggregate with a ProcessWindowFunction (which
    keeps the general way); keys of str, int or tuple (Java's rule for keys)."""
    n = draw(st.integers(10, 160))
    keys = draw(st.integers(1, 4))
    key_kind = draw(st.sampled_from(["str", "int", "tuple"]))
    disorder = draw(st.integers(0, 300))
    offsets = draw(st.lists(st.integers(0, 300), min_size=n, max_size=n))

    def key(i: int) -> object:
        k = i % keys
        return f"k{k}" if key_kind == "str" else k if key_kind == "int" else (k, "x")

    return {
        "events": [(key(i), max(0, i * 5 - offsets[i] * disorder // 300), i + 1) for i in range(n)],
        "bound": draw(st.sampled_from([0, 5, 20, 60])),
        "size": draw(st.sampled_from([20, 50, 100])),
        "lateness": draw(st.sampled_from([0, 10, 40, 120])),
        "side": draw(st.booleans()),
        "interval": draw(st.sampled_from([10, 25, 100])),
        "function": draw(st.sampled_from(["reduce", "aggregate", "aggregate", "process"])),
    }


def _late_heavy(job: dict) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=job["interval"])
    windowed = keyed_window(
        env,
        job["events"],
        job["size"],
        bounded(job["bound"]),
        lateness=job["lateness"],
        arrival_interval=1,
    )
    if job["side"]:
        windowed = windowed.side_output_late_data(wv.OutputTag("late"))
    if job["function"] == "reduce":
        out = windowed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
    elif job["function"] == "aggregate":
        out = windowed.aggregate(wv.SumAggregate(lambda e: e[2]))
    else:
        out = windowed.aggregate(wv.SumAggregate(lambda e: e[2]), Annotate())
    out.sink_to("out")
    return env


def _element_firings(result) -> int:
    """How many trigger calls on an element fired (the trace's ``trigger`` records)."""
    return sum(r.detail == ("on_element", "FIRE") for r in result.trace.records("trigger"))


@settings(max_examples=150, deadline=None)
@given(late_heavy_jobs())
def test_the_firing_way_writes_the_one_by_one_trace(job) -> None:
    with engine_paths(kernel=True, batches=True):
        fast = _late_heavy(job).execute()
    with engine_paths(kernel=False, batches=False):
        slow = _late_heavy(job).execute()
    same_run(fast, slow)  # outputs, side outputs, metrics, trace byte for byte


def test_the_firing_and_late_ways_are_taken() -> None:
    """On a late-heavy job (windows of 50 ms, 40 ms of lateness, records up to 150 ms out of
    order) the element firings take the firing way: a window is usually cached while it is
    open and found again once the watermark passes its end; only where late records past the
    lateness took the cache (and no batch found it since) does the first late element into
    it go through process_element and fire_traced. Elements past the lateness take the late
    way when their window is cached or was the late way's last (``late_cache``)."""
    job = {
        "events": [(f"k{i % 3}", max(0, i * 5 - (i * 37) % 150), i + 1) for i in range(400)],
        "bound": 0, "size": 50, "lateness": 40, "side": True, "interval": 25,
        "function": "aggregate",
    }  # fmt: skip
    through_element: list[int] = []
    elements: list[tuple] = []
    element, fire = WindowKernel.process_element, WindowKernel.fire_traced
    inside = [False]

    def spy_element(self, value, ts, windows=None):
        if windows is not None:  # the firing or the late way: the window is known
            element(self, value, ts, windows)
            return
        elements.append(value)
        inside[0] = True
        try:
            element(self, value, ts)
        finally:
            inside[0] = False

    def spy_fire(self, key, window, max_ts, contents, *timer):
        if inside[0]:
            through_element.append(max_ts)
        fire(self, key, window, max_ts, contents, *timer)

    WindowKernel.process_element, WindowKernel.fire_traced = spy_element, spy_fire
    try:
        with engine_paths(kernel=True, batches=True):
            fast = _late_heavy(job).execute()
    finally:
        WindowKernel.process_element, WindowKernel.fire_traced = element, fire
    with engine_paths(kernel=False, batches=False):
        slow = _late_heavy(job).execute()
    assert fast.trace.to_json() == slow.trace.to_json()
    firings = _element_firings(fast)
    assert firings == _element_firings(slow) == 70
    assert through_element == [199, 949, 1699]  # (max_timestamp of the windows)
    late = [r.value for r in fast.side_outputs["late"]]
    assert late == [r.value for r in slow.side_outputs["late"]] and len(late) == 32
    # the others took the late way: the window was cached (open, then firing, then past the
    # lateness) or found in late_cache
    assert [e[2] for e in elements if e in late] == [77, 78, 81, 102, 227, 228, 231, 252, 377,
                                                      378, 381]  # fmt: skip


def _failing_firing_job(fast: bool, where: str):
    """A late element (value 6, into [0, 50) after the watermark passed 49, within the
    lateness) whose key selector raises (``where="key"``), whose reduce raises
    (``"reduce"``), whose reduce returns None (``"none"``), or whose firing's downstream
    map raises (``"downstream"``); the element before it (value 5) takes the firing way.
    With 30 ms of lateness [0, 50) is past it: both take the late way, and value 6's key
    selector (``"late_key"``) or the side output's consumer (``"late_side"``) raises."""

    def reduce(a, b):
        if b[2] == 6 and where == "reduce":
            raise ValueError("reduce")
        if b[2] == 6 and where == "none":
            return None
        return (a[0], a[1], a[2] + b[2])

    def downstream(v):
        if v[2] == 1 + 3 + 5 + 6:
            raise KeyError("downstream")
        return v

    env = wv.StreamExecutionEnvironment(auto_watermark_interval=100)
    events = [("a", 10, 1), ("b", 20, 2), ("a", 30, 3), ("a", 120, 4),  # wm 119 at 100
              ("a", 40, 5), ("a", 45, 6), ("a", 130, 7)]  # fmt: skip
    out = (
        env.from_collection(events, arrival_times=[0, 1, 2, 3, 101, 102, 103])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0] if not where.endswith("key") or e[2] != 6 else e[99])
        .window(wv.TumblingEventTimeWindows.of(50))
        .allowed_lateness(30 if where.startswith("late") else 100)
        .side_output_late_data(wv.OutputTag("late"))
        .reduce(reduce)
    )
    if where == "downstream":
        out = out.map(downstream)
    out.get_side_output(wv.OutputTag("late")).map(
        lambda e: e if where != "late_side" or e[2] != 6 else e[99]
    ).sink_to("late")
    out.sink_to("out")
    with engine_paths(kernel=fast, batches=fast), pytest.raises(WinvizError) as info:
        env.execute()
    return info.value


@pytest.mark.parametrize("where", ["key", "reduce", "none", "downstream", "late_key", "late_side"])
def test_errors_on_the_firing_way_are_the_step_by_step_ones(where: str) -> None:
    fast, slow = _failing_firing_job(True, where), _failing_firing_job(False, where)
    assert type(fast) is type(slow)
    assert str(fast) == str(slow)
    assert "record 5" in str(fast)
    assert fast.partial_result.outputs == slow.partial_result.outputs
    assert fast.partial_result.metrics == slow.partial_result.metrics
    assert fast.trace.to_json() == slow.trace.to_json()
