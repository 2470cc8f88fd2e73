"""Watermarks across parallel inputs: partitioned sources with per-partition watermarks and
unions, both combined by a StatusWatermarkValve. The classic "my window never fires" stall,
its fix with idleness, and aggressive idleness turning good data late — exact values only.

The data: tumbling 1 s windows, bounded out-of-orderness 0 (watermark = max_ts - 1), periodic
emission every 200 ms. Partition 0 keeps sending (ts 100, 600, 1200, 1800, 2500 arriving at 0,
500, 1000, 1500, 2000); partition 1 sends ts 200 and 700 (arriving at 100 and 400), then goes
quiet. Window [0, 1000) holds 100, 200, 600, 700 and needs the watermark 999.
"""

from __future__ import annotations

import pytest
from jobs import bounded, union_all_idle

import winviz as wv
from winviz.errors import InputError

P0 = [("p0", 100), ("p0", 600), ("p0", 1200), ("p0", 1800), ("p0", 2500)]
A0 = [0, 500, 1000, 1500, 2000]
P1 = [("p1", 200), ("p1", 700)]
A1 = [100, 400]
ALL_LATER = [((1000, [1200, 1800]), 2000), ((2000, [2500]), 2000)]


def strategy(idle: int | None = None) -> wv.WatermarkStrategy:
    s = bounded(0)
    return s if idle is None else s.with_idleness(idle)


def windows(stream: wv.DataStream, late: wv.OutputTag) -> None:
    (
        stream.key_by(lambda e: 0)
        .window(wv.TumblingEventTimeWindows.of(1000))
        .side_output_late_data(late)
        .process(
            lambda k, ctx, els, out: out.collect((ctx.window().start, sorted(e[1] for e in els)))
        )
        .sink_to("out")
    )


def partitioned(p1=P1, a1=A1, idle=None, trace=True) -> wv.JobExecutionResult:
    env = wv.StreamExecutionEnvironment(trace=trace)
    late = wv.OutputTag("late")
    source = env.from_partitions([P0, p1], arrival_times=[A0, a1], name="kafka")
    windows(source.assign_timestamps_and_watermarks(strategy(idle)), late)
    return env.execute()


def fired(result: wv.JobExecutionResult) -> list:
    return [(r.value, r.processing_time) for r in result.outputs["out"]]


def events(result: wv.JobExecutionResult, operator: str) -> list:
    kinds = ("channel_watermark", "channel_idle", "channel_active", "watermark", "idle", "active")
    return [
        (r.kind, r.proc_time, r.ts, r.detail)
        for r in result.trace.records(*kinds, operator=operator)
    ]


def test_a_quiet_partition_stalls_the_window_until_the_end_of_input() -> None:
    result = partitioned()
    # partition 1's watermark stays at 699: the minimum never reaches 999
    assert fired(result) == [((0, [100, 200, 600, 700]), 2000), *ALL_LATER]
    assert events(result, "watermarks") == [
        ("channel_watermark", 200, 99, (0, "kafka[0]")),
        ("channel_watermark", 200, 199, (1, "kafka[1]")),
        ("watermark", 200, 99, "input"),
        # Flink's multiplexer combines once per periodic emit, after every partition:
        ("channel_watermark", 600, 599, (0, "kafka[0]")),
        ("channel_watermark", 600, 699, (1, "kafka[1]")),
        ("watermark", 600, 599, "input"),
        ("channel_watermark", 1200, 1199, (0, "kafka[0]")),
        ("watermark", 1200, 699, "input"),
        ("channel_watermark", 1600, 1799, (0, "kafka[0]")),
        ("channel_watermark", 2000, 2499, (0, "kafka[0]")),
        ("watermark", 2000, wv.MAX, "input"),
    ]
    window_fired = result.trace.records("fired", operator="window")
    assert [(r.window.start, r.proc_time, r.watermark) for r in window_fired] == [
        (0, 2000, wv.MAX),
        (1000, 2000, wv.MAX),
        (2000, 2000, wv.MAX),
    ]


def test_idleness_fires_the_window_once_the_quiet_partition_is_idle() -> None:
    result = partitioned(idle=500)
    # partition 1's last record at 400; its idleness timer starts at the emit at 800 and
    # reports idle at 1400 (1400 - 800 > 500): the multiplexer leaves it out of the minimum
    # and partition 0's 1199 goes on
    assert fired(result) == [((0, [100, 200, 600, 700]), 1400), *ALL_LATER]
    assert events(result, "watermarks")[6:] == [
        ("channel_watermark", 1200, 1199, (0, "kafka[0]")),
        ("watermark", 1200, 699, "input"),
        ("channel_idle", 1400, None, (1, "kafka[1]")),
        ("watermark", 1400, 1199, "input"),
        ("channel_watermark", 1600, 1799, (0, "kafka[0]")),
        ("watermark", 1600, 1799, "input"),
        ("channel_watermark", 2000, 2499, (0, "kafka[0]")),
        ("watermark", 2000, 2499, "input"),
        ("watermark", 2000, wv.MAX, "input"),
    ]
    fire = result.trace.records("fired", operator="window")[0]
    assert (fire.window.start, fire.proc_time, fire.watermark) == (0, 1400, 1199)


def test_aggressive_idleness_turns_a_returning_partitions_record_late() -> None:
    result = partitioned(p1=[*P1, ("p1", 900)], a1=[*A1, 1300], idle=300)
    # idle at 1200 (1200 - 800 > 300): the watermark jumps to 1199 and [0, 1000) fires without
    # ts 900, which arrives at 1300 on partition 1 and is late
    assert fired(result) == [((0, [100, 200, 600, 700]), 1200), *ALL_LATER]
    assert result.side_outputs["late"] == [wv.Record(("p1", 900), 900, 1300)]
    assert events(result, "watermarks")[6:] == [
        # one periodic emit: partition 0 moves to 1199 and partition 1 goes idle, then the
        # multiplexer combines once
        ("channel_watermark", 1200, 1199, (0, "kafka[0]")),
        ("channel_idle", 1200, None, (1, "kafka[1]")),
        ("watermark", 1200, 1199, "input"),
        # back with watermark 899 it counts in the minimum at once (Flink's
        # WatermarkOutputMultiplexer): it holds the source at 1199 — never backwards — ...
        ("channel_watermark", 1400, 899, (1, "kafka[1]")),
        ("channel_active", 1400, None, (1, "kafka[1]")),
        ("channel_watermark", 1600, 1799, (0, "kafka[0]")),
        # ... until it is idle again
        ("channel_idle", 2000, None, (1, "kafka[1]")),
        ("watermark", 2000, 1799, "input"),
        ("channel_watermark", 2000, 2499, (0, "kafka[0]")),
        ("watermark", 2000, 2499, "input"),
        ("watermark", 2000, wv.MAX, "input"),
    ]


def test_union_combines_its_inputs_watermarks_in_the_next_operator() -> None:
    def run(idle):
        env = wv.StreamExecutionEnvironment()
        late = wv.OutputTag("late")
        a = env.from_collection(P0, arrival_times=A0, name="a")
        b = env.from_collection(P1, arrival_times=A1, name="b")
        a = a.assign_timestamps_and_watermarks(strategy()).name("wm_a")
        b = b.assign_timestamps_and_watermarks(strategy(idle)).name("wm_b")
        windows(a.union(b), late)
        return env.execute()

    stalled, fixed = run(None), run(500)
    assert fired(stalled) == [((0, [100, 200, 600, 700]), 2000), *ALL_LATER]
    assert fired(fixed) == [((0, [100, 200, 600, 700]), 1400), *ALL_LATER]
    assert events(fixed, "window")[:5] == [
        ("channel_watermark", 200, 99, (0, "wm_a")),
        ("channel_watermark", 200, 199, (1, "wm_b")),
        ("watermark", 200, 99, "input"),
        ("channel_watermark", 600, 599, (0, "wm_a")),
        ("watermark", 600, 199, "input"),
    ]
    assert [e for e in events(fixed, "window") if e[1] == 1400] == [
        ("channel_idle", 1400, None, (1, "wm_b")),
        ("watermark", 1400, 1199, "input"),
    ]
    # the idle status travels from the generator to the window's channel
    assert [(r.kind, r.proc_time) for r in fixed.trace.records("idle", "active")] == [
        ("idle", 1400),
        ("active", 2000),
    ]


def test_all_inputs_idle_flushes_the_largest_watermark_then_the_operator_is_idle() -> None:
    result = union_all_idle()
    # both emit at 200 (999 / 4999); the idleness timers start at the emit at 400: a is idle
    # at 800 (800 - 400 > 300), b at 1000 (600 > 500). a's idleness lets the valve move on to
    # b's 4999; with both idle it flushes the max (4999, already out) and goes idle itself.
    # At the end of input (3000) a ends first: active again, MAX — b is still idle, so the
    # valve's output is MAX at once; b's last record then makes it active, too late to matter.
    assert events(result, "m") == [
        ("channel_watermark", 200, 999, (0, "watermarks")),
        ("channel_watermark", 200, 4999, (1, "watermarks_2")),
        ("watermark", 200, 999, "input"),
        ("channel_idle", 800, None, (0, "watermarks")),
        ("watermark", 800, 4999, "input"),
        ("channel_idle", 1000, None, (1, "watermarks_2")),
        ("idle", 1000, None, "m"),
        ("channel_active", 3000, None, (0, "watermarks")),
        ("active", 3000, None, "m"),
        ("channel_watermark", 3000, wv.MAX, (0, "watermarks")),
        ("watermark", 3000, wv.MAX, "input"),
        ("channel_active", 3000, None, (1, "watermarks_2")),
        ("channel_watermark", 3000, 5999, (1, "watermarks_2")),
        ("channel_watermark", 3000, wv.MAX, (1, "watermarks_2")),
    ]
    assert [r.processing_time for r in result.outputs["out"]] == [0, 0, 3000]


def test_a_stream_united_with_itself_delivers_every_record_twice() -> None:
    env = wv.StreamExecutionEnvironment()
    s = env.from_collection([1, 2], arrival_times=[0, 10])
    s.union(s).sink_to("out")
    assert [r.value for r in env.execute().outputs["out"]] == [1, 1, 2, 2]


def test_partitioned_source_input_errors_name_the_partition() -> None:
    env = wv.StreamExecutionEnvironment()
    with pytest.raises(InputError) as err:
        env.from_partitions([[1, 2], [3]], arrival_times=[[0, 1], [0, 1]])
    assert err.value.field == "arrival_times[1]"
    with pytest.raises(InputError):
        env.from_partitions([[1]], arrival_times=[[0], [0]])
    with pytest.raises(InputError):
        env.from_partitions([])


@pytest.mark.parametrize("idle", [None, 300, 500])
def test_trace_off_gives_the_same_outputs(idle) -> None:
    p1, a1 = [*P1, ("p1", 900)], [*A1, 1300]
    fast = partitioned(p1, a1, idle, trace=False)
    slow = partitioned(p1, a1, idle, trace=True)
    assert (fast.outputs, fast.side_outputs, fast.metrics) == (
        slow.outputs,
        slow.side_outputs,
        slow.metrics,
    )
