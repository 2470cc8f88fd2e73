"""Questions answered from the trace: why a window fired, why it has not, what became of a
record. Each answer is checked word for word against a run whose story is known."""

from __future__ import annotations

import pytest
from jobs import bounded

import winviz as wv
from winviz.trace import Trace

BOUND_0 = bounded(0)


def _partitions() -> Trace:
    """Partition 1 has one record (ts 1500) and then nothing: it holds the watermark at 1499
    until the end of input."""
    env = wv.StreamExecutionEnvironment()
    parts = [[("a", 1_000), ("a", 3_000), ("a", 9_000)], [("b", 1_500)]]
    (
        env.from_partitions(parts, arrival_times=[[0, 100, 900], [50]])
        .assign_timestamps_and_watermarks(BOUND_0)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(2_000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute().trace


def _lateness() -> Trace:
    """5 s windows, allowed lateness 2 s, late data to a side output."""
    env = wv.StreamExecutionEnvironment()
    events = [("a", 1_000), ("a", 6_000), ("a", 4_000), ("a", 12_000), ("a", 2_000)]
    (
        env.from_collection(events, arrival_times=[0, 100, 300, 500, 700])
        .assign_timestamps_and_watermarks(BOUND_0)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5_000))
        .allowed_lateness(2_000)
        .side_output_late_data(wv.OutputTag("late"))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute().trace


def test_why_not_fired_names_the_partition_that_holds_the_watermark() -> None:
    answer = wv.why_not_fired(_partitions().until(800), "a", (0, 2_000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at 1499, below the window's max timestamp 1999: it "
        "fires once the watermark ≥ 1999. The minimum is held by source[1] (channel 1 of "
        "'watermarks') at 1499, last advanced at processing time 200; it is not idle, so it "
        "holds everyone back: with_idleness(t) would mark it idle after t ms without records "
        "and let the other inputs advance the watermark (and may make its later records late)."
    )
    assert answer.table[["input", "watermark", "idle"]].values.tolist() == [
        ["source[0]", 2999, False],
        ["source[1]", 1499, False],
    ]
    assert "source[1]" in repr(answer)


def test_why_not_fired_names_a_partition_without_elements() -> None:
    """Partition 1 gets no element: it writes no record, and its watermark MIN holds the
    source's (winviz.trace.channels finds it from the source's watermark staying at MIN)."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions(
            [[("a", 1_000), ("a", 3_000), ("a", 9_000)], []],
            arrival_times=[[0, 100, 900], []],
            name="kafka",
        )
        .assign_timestamps_and_watermarks(BOUND_0)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(2_000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    answer = wv.why_not_fired(env.execute().trace.until(800), "a", (0, 2_000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at none, below the window's max timestamp 1999: it "
        "fires once the watermark ≥ 1999. The minimum is held by kafka[1] (channel 1 of "
        "'watermarks') at MIN, never advanced (the trace has no watermark of it); it is not "
        "idle, so it holds everyone back: with_idleness(t) would mark it idle after t ms "
        "without records and let the other inputs advance the watermark (and may make its "
        "later records late)."
    )
    assert answer.table[["input", "watermark", "idle"]].values.tolist() == [
        ["kafka[0]", 2999, False],
        ["kafka[1]", wv.MIN, False],
    ]
    # the silent partition has no time it advanced: <NA>, the column stays ints (not 200.0)
    assert answer.table["channel"].dtype == "Int64"
    assert answer.table["last_advanced"].dtype == "Int64"
    assert answer.table["channel"].tolist() == [0, 1]
    assert answer.table["last_advanced"].tolist()[0] == 200  # (the periodic emit at 200)
    assert answer.table["last_advanced"].isna().tolist() == [False, True]


def test_why_fired_at_the_end_of_input_and_on_a_watermark() -> None:
    end = wv.why_fired(_partitions(), "a", (0, 2_000))
    assert end.table[["proc_time", "cause", "timing"]].values.tolist() == [
        [900, "end of input", "on_time"]
    ]
    assert end.table["raised by"].iloc[0].startswith("the end of input")
    answer = wv.why_fired(_lateness(), "a", (0, 5_000))
    assert answer.table[["proc_time", "watermark", "cause", "timing"]].values.tolist() == [
        [200, "5999", "event-time timer at 4999", "on_time"],
        [300, "5999", "an element (the trigger fired on it)", "late"],
    ]
    assert answer.sentence == (
        "It fired 2 time(s) at 'window'. The first firing, at processing time 200, was caused "
        "by event-time timer at 4999: the watermark reached 5999 ≥ max timestamp 4999, raised "
        "by the watermark generator of 'watermarks' emitting 5999."
    )


def test_why_fired_of_a_window_that_never_fired_points_to_why_not_fired() -> None:
    answer = wv.why_fired(_partitions().until(800), "a", (0, 2_000))
    assert answer.sentence.startswith("It never fired at 'window'")
    missing = wv.why_not_fired(_partitions(), "a", (4_000, 6_000))
    assert missing.sentence == (
        "It has no contents at 'window': no element of that key was ever assigned to it."
    )


def test_why_dropped_on_time_late_accepted_and_side_output() -> None:
    trace = _lateness()
    sentences = [wv.why_dropped(trace, i).sentence for i in range(5)]
    assert sentences[0].startswith("On time at 'window' (timestamp 1000, watermark MIN")
    assert sentences[2] == (
        "Late but accepted at 'window' (timestamp 4000, watermark 5999 at arrival): its "
        "timestamp ≤ the watermark, but a window it belongs to is still within allowed "
        "lateness (not past cleanup), so it was added and that window fires again (a late "
        "firing)."
    )
    assert sentences[4] == (
        "Sent to the side output 'late' at 'window' (timestamp 2000, watermark 11999 at "
        "arrival): late, and every window it belongs to is past cleanup."
    )
    table = wv.why_dropped(trace, 4).table
    assert table.values.tolist() == [["[0, 5000)", 4999, 6999, "11999", "not added: past cleanup"]]
    with pytest.raises(ValueError, match="no arrival record with index 99"):
        wv.why_dropped(trace, 99)


def test_why_dropped_without_a_side_output_says_dropped() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("a", 9_000), ("a", 1_000)], arrival_times=[0, 300])
        .assign_timestamps_and_watermarks(BOUND_0)
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(5_000))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    answer = wv.why_dropped(env.execute().trace, 1)
    assert answer.sentence.startswith("Dropped at 'window' (timestamp 1000, watermark 8999")
    assert "num_late_records_dropped" in answer.sentence


def test_a_window_argument_that_is_not_a_window_is_refused() -> None:
    with pytest.raises(TypeError, match="expected a TimeWindow or a"):
        wv.why_fired(_lateness(), "a", "0-5000")


def test_why_fired_names_a_partition_going_idle() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions(
            [[("p0", 100), ("p0", 600), ("p0", 1200), ("p0", 1800)], [("p1", 200), ("p1", 700)]],
            arrival_times=[[0, 500, 1000, 1500], [100, 400]],
            name="kafka",
        )
        .assign_timestamps_and_watermarks(BOUND_0.with_idleness(500))
        .key_by(lambda e: 0)
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .sink_to("counts")
    )
    answer = wv.why_fired(env.execute().trace, 0, (0, 1000))
    assert answer.table[["proc_time", "watermark", "cause", "raised by"]].values.tolist() == [
        [
            1400,
            "1199",
            "event-time timer at 999",
            "kafka[1] (channel 1 of 'watermarks') going idle: the minimum then ignores it",
        ]
    ]


def test_bad_arguments_are_refused_clearly() -> None:
    trace = _lateness()
    with pytest.raises(TypeError, match="expected a winviz Trace or a job result"):
        wv.why_fired(None, "a", (0, 5_000))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"window \('a', 'b'\): expected a TimeWindow"):
        wv.why_not_fired(trace, "a", ("a", "b"))
    with pytest.raises(TypeError, match="index '2': expected the int index"):
        wv.why_dropped(trace, "2")  # type: ignore[arg-type]
    result_answer = wv.why_fired(
        wv.StreamExecutionEnvironment().from_collection([1]) and trace, "a", (0, 5_000)
    )
    assert result_answer.sentence.startswith("It fired 2 time(s)")
