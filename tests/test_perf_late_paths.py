"""The window kernel's traced paths for late elements (``winviz.operators.window_kernel``):
a late element into a window still within the allowed lateness fires it at once
(``WindowKernel.fire_traced``, written without ``WindowOperator.emit_window_contents``), a
late element into a window past it goes to the late side output, and an element into a
cached window that is not open goes the general way without looking for an open window
again (the element loop keeps two windows cached, as late records around two windows' ends
alternate between them). Each must write the trace of Flink's path, one record at a time,
byte for byte (``to_json()``), with the same outputs, side outputs and metrics."""

from __future__ import annotations

import pytest
from jobs import bounded, engine_paths

import winviz as wv
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

    def spy_fire(self, key, window, max_ts, contents):
        fired.append((key, max_ts))
        fire(self, key, window, max_ts, contents)

    def spy_element(self, value, ts):
        elements.append(ts)
        element(self, value, ts)

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
    assert fast.trace.to_json() == slow.trace.to_json()
    assert fast.outputs == slow.outputs
    assert fast.side_outputs == slow.side_outputs
    assert fast.metrics == slow.metrics

    # the first record, the late ones and the first of a new open window went the general
    # way; the others were packed entries of an open window
    assert elements == [120, 60, 70, 80, 10, 20, 90, 160]
    assert assigned == [120, 60, 10, 160]  # 90: the window cached before [0, 50)
    if function == "aggregate_process":  # a ProcessWindowFunction: Flink's emission
        assert fired == []
    else:  # the three firings at once, then the open windows' at the end of input
        assert fired == [
            ("a", 99), ("a", 99), ("b", 99), ("b", 99), ("a", 149), ("b", 149), ("c", 199),
        ]  # fmt: skip
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
