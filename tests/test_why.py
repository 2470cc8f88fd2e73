"""Questions answered from the trace: why a window fired, why it has not, what became of a
record. Each answer is checked word for word against a run whose story is known."""

from __future__ import annotations

import pytest
from jobs import bounded, build, count_pipeline, keyed_window, restored_after_idle

import winviz as wv
from winviz.trace import Trace
from winviz.trace.channels import CHANNEL_KINDS, channel_states
from winviz.why import Replayed

BOUND_0 = bounded(0)


def _partitions() -> Trace:
    """Partition 1 has one record (ts 1500) and then nothing: it holds the watermark at 1499
    until the end of input."""
    env = wv.StreamExecutionEnvironment()
    parts = [[("a", 1_000), ("a", 3_000), ("a", 9_000)], [("b", 1_500)]]
    count_pipeline(env, parts, 2_000, partitioned=True, arrival_times=[[0, 100, 900], [50]])
    return env.execute().trace


def _lateness() -> Trace:
    """5 s windows, allowed lateness 2 s, late data to a side output."""
    env = wv.StreamExecutionEnvironment()
    events = [("a", 1_000), ("a", 6_000), ("a", 4_000), ("a", 12_000), ("a", 2_000)]
    count_pipeline(
        env,
        events,
        5_000,
        lateness=2_000,
        late=wv.OutputTag("late"),
        arrival_times=[0, 100, 300, 500, 700],
    )
    return env.execute().trace


def test_why_not_fired_names_the_partition_that_holds_the_watermark() -> None:
    answer = wv.why_not_fired(_partitions().until(800), "a", (0, 2_000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at 1499, below the window's max timestamp 1999: it "
        "fires once the watermark ≥ 1999. The minimum is held by source[1] (channel 1 of "
        "'watermarks') at 1499, last advanced at processing time 200; it is not idle, so it "
        "holds everyone back: once it is marked idle the other inputs advance the watermark to "
        "2999. with_idleness(t) marks an input idle after t ms without records (the trace "
        "records no idleness timeout for it and shows no idle input; its later records may "
        "then be late)."
    )
    assert answer.table[["input", "watermark", "idle"]].values.tolist() == [
        ["source[0]", "2999", False],
        ["source[1]", "1499", False],
    ]
    assert "source[1]" in repr(answer)


def test_why_not_fired_names_a_partition_without_elements() -> None:
    """Partition 1 gets no element: it writes no record, and its watermark MIN holds the
    source's (winviz.trace.channels finds it from the source's watermark staying at MIN)."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [[("a", 1_000), ("a", 3_000), ("a", 9_000)], []],
        2_000,
        partitioned=True,
        arrival_times=[[0, 100, 900], []],
        name="kafka",
    )
    answer = wv.why_not_fired(env.execute().trace.until(800), "a", (0, 2_000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at MIN, below the window's max timestamp 1999: it "
        "fires once the watermark ≥ 1999. The minimum is held by kafka[1] (channel 1 of "
        "'watermarks') at MIN, never advanced (the trace has no watermark of it); it is not "
        "idle, so it holds everyone back: once it is marked idle the other inputs advance the "
        "watermark to 2999. with_idleness(t) marks an input idle after t ms without records "
        "(the trace records no idleness timeout for it and shows no idle input; its later "
        "records may then be late)."
    )
    # MIN printed by name, never -9223372036854775808
    assert answer.table[["input", "watermark", "idle"]].values.tolist() == [
        ["kafka[0]", "2999", False],
        ["kafka[1]", "MIN", False],
    ]
    assert "9223372036854775808" not in repr(answer)
    # the silent partition has no time it advanced: <NA>, the column stays ints (not 200.0)
    assert answer.table["channel"].dtype == "Int64"
    assert answer.table["last_advanced"].dtype == "Int64"
    assert answer.table["channel"].tolist() == [0, 1]
    assert answer.table["last_advanced"].tolist()[0] == 200  # (the periodic emit at 200)
    assert answer.table["last_advanced"].isna().tolist() == [False, True]


def test_why_fired_at_the_end_of_input_and_on_a_watermark() -> None:
    end = wv.why_fired(_partitions(), "a", (0, 2_000))
    assert end.table[["proc_time", "cause", "firing", "late firing"]].values.tolist() == [
        [900, "end of input", "first firing", False]
    ]
    assert end.table["raised by"].iloc[0].startswith("the end of input")
    answer = wv.why_fired(_lateness(), "a", (0, 5_000))
    assert answer.table[
        ["proc_time", "watermark", "cause", "firing", "late firing"]
    ].values.tolist() == [
        [200, "5999", "event-time timer at 4999", "first firing", False],
        [300, "5999", "element at seq 21 (timestamp 4000)", "re-firing", True],
    ]
    assert answer.sentence == (
        "It fired 2 time(s) at 'window'. First firing at processing time 200, caused by the "
        "event-time timer at 4999: the watermark reached 5999 ≥ 4999, raised by the watermark "
        "generator of 'watermarks' emitting 5999. Re-firing at processing time 300, caused by "
        "the element at seq 21 (timestamp 4000): the trigger fired on it; a late firing: the "
        "watermark 5999 had already passed the max timestamp 4999."
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
        "timestamp ≤ the watermark, but a window it belongs to is not past cleanup (max "
        "timestamp + allowed lateness > watermark), so it was added. Window [0, 5000) had "
        "fired 1 time(s) and fired at once on it (re-firing, a late firing: the watermark had "
        "passed its max timestamp 4999)."
    )
    assert sentences[4] == (
        "Sent to the side output 'late' at 'window' (timestamp 2000, watermark 11999 at "
        "arrival): late, and every window it belongs to is past cleanup."
    )
    table = wv.why_dropped(trace, 4).table
    assert table.values.tolist() == [
        ["[0, 5000)", "4999", "6999", "11999", "not added: past cleanup"]
    ]
    assert wv.why_dropped(trace, 2).table["outcome"].tolist() == [
        "added; fired at once (re-firing, late firing)"
    ]
    with pytest.raises(ValueError, match="value 99: no arrival record with this index"):
        wv.why_dropped(trace, 99)


def test_why_dropped_without_a_side_output_says_dropped() -> None:
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, [("a", 9_000), ("a", 1_000)], 5_000, arrival_times=[0, 300])
    answer = wv.why_dropped(env.execute().trace, 1)
    assert answer.sentence.startswith("Dropped at 'window' (timestamp 1000, watermark 8999")
    assert "num_late_records_dropped" in answer.sentence


def test_a_window_argument_that_is_not_a_window_is_refused() -> None:
    with pytest.raises(TypeError, match="expected a TimeWindow or a"):
        wv.why_fired(_lateness(), "a", "0-5000")


def test_why_fired_names_a_partition_going_idle() -> None:
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [[("p0", 100), ("p0", 600), ("p0", 1200), ("p0", 1800)], [("p1", 200), ("p1", 700)]],
        1000,
        BOUND_0.with_idleness(500),
        partitioned=True,
        key=lambda e: 0,
        sink="counts",
        arrival_times=[[0, 500, 1000, 1500], [100, 400]],
        name="kafka",
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
    with pytest.raises(
        TypeError, match=r"value \('a', 'b'\): not a window \(expected a TimeWindow"
    ):
        wv.why_not_fired(trace, "a", ("a", "b"))
    with pytest.raises(
        TypeError, match=r"value '2': why_dropped\(\) takes a source record's index, not str"
    ):
        wv.why_dropped(trace, "2")  # type: ignore[arg-type]
    result_answer = wv.why_fired(
        wv.StreamExecutionEnvironment().from_collection([1]) and trace, "a", (0, 5_000)
    )
    assert result_answer.sentence.startswith("It fired 2 time(s)")


# -- issue 26: the false answers, each reproduced ----------------------------------------------


def _idle_partitions() -> Trace:
    """Two partitions with ``with_idleness(300)``: partition 0 reads a@1000, a@3000, a@4500
    (at 0, 500, 1350 ms) then a@9000 at 2500; partition 1 never gets an element. Partition 1
    goes idle at 600; partition 0 is idle at 1200, active again at 1400 (watermark 4499)."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [[("a", 1_000), ("a", 3_000), ("a", 4_500), ("a", 9_000)], []],
        5_000,
        BOUND_0.with_idleness(300),
        partitioned=True,
        arrival_times=[[0, 500, 1_350, 2_500], []],
        name="kafka",
    )
    return env.execute().trace


def test_an_idle_partition_is_never_named_as_holding_the_watermark() -> None:
    """At 1800 partition 1 is idle (it holds nothing back) and partition 0 is active at 4499:
    partition 0 holds the window [0, 5000); marking it idle would not help (no other active
    input), so with_idleness is not advised — the job has it anyway."""
    answer = wv.why_not_fired(_idle_partitions().until(1_800), "a", (0, 5_000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at 4499, below the window's max timestamp 4999: it "
        "fires once the watermark ≥ 4999. kafka[1] is idle and holds nothing back. The "
        "minimum is held by kafka[0] (channel 0 of 'watermarks') at 4499, last advanced at "
        "processing time 1400; it is not idle: the window fires only after its watermark "
        "reaches 4999 or it goes idle."
    )
    (held,) = answer.claims
    assert [h.input for h in held.holders] == ["kafka[0]"]
    assert [h.input for h in held.idle] == ["kafka[1]"]
    assert (held.idleness_seen, held.idleness_would_help) == (True, False)
    assert answer.table[["input", "watermark", "idle"]].values.tolist() == [
        ["kafka[0]", "4499", False],
        ["kafka[1]", "MIN", True],
    ]


def test_no_single_holder_is_said_so() -> None:
    """At 500 both partitions are active and below 4999 (999 and MIN): marking either idle
    would leave the other holding the window, so no single cause is named and no
    with_idleness advice is given."""
    answer = wv.why_not_fired(_idle_partitions().until(500), "a", (0, 5_000))
    assert "with_idleness" not in answer.sentence
    assert answer.sentence.endswith(
        "No single input holds it: kafka[1] (channel 1 of 'watermarks') at MIN, kafka[0] "
        "(channel 0 of 'watermarks') at 999 are all active and below 4999; it fires once each "
        "of them reaches it or goes idle."
    )


def test_with_idleness_is_not_advised_to_a_job_that_has_it() -> None:
    """Three partitions, idleness 300: p2 (one record at 0) is idle at 800, p1 keeps
    delivering ts 1500 and holds [0, 2000) at 1499, p0 keeps delivering ts 9000. The job has
    idleness (p2 went idle): the answer says its timeout marks p1 idle, not 'with_idleness(t)
    would'."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [[("a", 9_000)] * 4, [("a", 1_500)] * 5, [("a", 100)]],
        2_000,
        BOUND_0.with_idleness(300),
        partitioned=True,
        arrival_times=[[100, 400, 700, 1_000], [0, 300, 600, 900, 1_200], [0]],
    )
    answer = wv.why_not_fired(env.execute().trace.until(1_100), "a", (0, 2_000))
    (held,) = answer.claims
    assert (held.idleness_seen, held.idleness_would_help, held.others) == (True, True, 8999)
    assert "with_idleness" not in answer.sentence
    assert answer.sentence.endswith(
        "source[2] is idle and holds nothing back. The minimum is held by source[1] (channel 1 "
        "of 'watermarks') at 1499, last advanced at processing time 200; it is not idle, so it "
        "holds everyone back; once the job's idleness timeout marks it idle, the other inputs "
        "raise the watermark to 8999."
    )


def test_a_late_element_of_a_window_not_yet_fired_is_in_its_first_firing() -> None:
    """Allowed lateness 0: a@4500 moves the watermark to 4499; a@4000 is then late (4000 ≤
    4499) but [0, 5000) has not reached its max timestamp 4999: it is added and the window
    fires once, at 4999 — a first firing, not a late one; nothing 'fires again'."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(env, [("a", 4_500), ("a", 4_000)], 5_000, arrival_times=[0, 300])
    trace = env.execute().trace
    dropped = wv.why_dropped(trace, 1)
    assert dropped.sentence == (
        "Late but accepted at 'window' (timestamp 4000, watermark 4499 at arrival): its "
        "timestamp ≤ the watermark, but a window it belongs to is not past cleanup (max "
        "timestamp + allowed lateness > watermark), so it was added. Window [0, 5000) fired "
        "next at processing time 300 (first firing), caused by end of input."
    )
    assert "again" not in dropped.sentence
    fired = wv.why_fired(trace, "a", (0, 5_000))
    assert fired.table[["cause", "firing", "late firing"]].values.tolist() == [
        ["end of input", "first firing", False]
    ]


def test_a_merge_of_fired_sessions_by_a_late_element_is_a_late_firing() -> None:
    """Sessions (gap 1000, lateness 10 s): [1000, 2000) and [3000, 4000) fire when a@10000
    moves the watermark to 9999; the late a@2000 then merges them into [1000, 4000), which
    fires at once — its first firing as that window, and a late firing (not 'on time')."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 1_000), ("a", 3_000), ("a", 10_000), ("a", 2_000)],
            arrival_times=[0, 100, 300, 500],
        )
        .assign_timestamps_and_watermarks(BOUND_0)
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(1_000))
        .allowed_lateness(10_000)
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    trace = env.execute().trace
    answer = wv.why_fired(trace, "a", (1_000, 4_000))
    assert answer.table[["proc_time", "cause", "firing", "late firing"]].values.tolist() == [
        [500, "element at seq 35 (timestamp 2000)", "first firing", True]
    ]
    assert "a late firing: the watermark 9999 had already passed the max timestamp 3999" in (
        answer.sentence
    )
    fate = wv.why_dropped(trace, 3).claims[0]
    assert fate.fate == "late, accepted"
    assert [
        (o.window, o.fired_now, o.earlier_firings, o.next_firing.late_firing) for o in fate.windows
    ] == [("[1000, 4000)", True, 0, True)]


def test_the_sentence_is_rendered_from_the_claims_only() -> None:
    """An answer's sentence is ``render(claims)``: changing a claim changes the sentence, and
    there is no other input to it."""
    from dataclasses import replace

    from winviz.why import Answer, render

    answer = wv.why_fired(_lateness(), "a", (0, 5_000))
    assert answer.sentence == render(answer.claims)
    first, second = answer.claims
    changed = Answer(answer.question, (first, replace(second, late_firing=False)), answer.table)
    assert "late firing" in answer.sentence and "late firing" not in changed.sentence


def _replayed_late_record() -> wv.JobExecutionResult:
    """The running example (bound 1 s, 10 s windows, late side output): f (4000, record 5) is
    late when it first arrives (watermark 10999); the job fails right after it and restores the
    checkpoint taken after e, so f is replayed with the watermark at MIN: on time."""
    events = [("a", 1_000), ("b", 3_000), ("c", 2_000), ("d", 7_000),
              ("e", 12_000), ("f", 4_000), ("g", 16_000), ("h", 25_000)]  # fmt: skip
    arrivals = [1_200, 3_100, 3_500, 7_300, 12_100, 12_500, 16_200, 25_100]
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[5])
    (
        keyed_window(
            env,
            events,
            10_000,
            bounded(1_000),
            key=lambda e: "all",
            late=wv.OutputTag("late"),
            arrival_times=arrivals,
        )
        .process(lambda k, ctx, els, out: out.collect("".join(e[0] for e in els)))
        .sink_to("out")
    )
    return env.execute(fail_at=6)


def test_why_dropped_of_a_replayed_record_answers_its_last_arrival_and_says_so() -> None:
    result = _replayed_late_record()
    assert [r.value for r in result.outputs["out"]] == ["abcdf", "eg", "h"]
    assert result.side_outputs.get("late", []) == []  # rolled back with the sinks
    last = wv.why_dropped(result.trace, 5)
    assert last.sentence == (
        "Source record 5 arrived 2 times: a restore replayed it, with the watermarks starting "
        "again at MIN. Its last arrival, whose fate the results keep (2 of 2): On time at "
        "'window' (timestamp 4000, watermark MIN at arrival): its timestamp > the watermark; it "
        "was added to its windows."
    )
    assert last.claims[0] == Replayed(5, 2, 2)
    assert last.claims[1].fate == "on time" and last.claims[1].watermark == wv.MIN
    first = wv.why_dropped(result.trace, 5, arrival=0)
    assert first.claims[0] == Replayed(5, 2, 1)
    assert first.sentence.startswith(
        "Source record 5 arrived 2 times: a restore replayed it, with the watermarks starting "
        "again at MIN. Arrival 1 of 2, rolled back by a restore: Sent to the side output "
        "'late' at 'window' (timestamp 4000, watermark 10999 at arrival)"
    )
    assert wv.why_dropped(result.trace, 5, arrival=1).claims == last.claims
    # a record read once says nothing of replays
    assert [type(c).__name__ for c in wv.why_dropped(result.trace, 4).claims] == ["ElementFate"]
    for bad in (2, -1, True, "0"):
        with pytest.raises(
            ValueError, match=r"field 'arrival', value .*: source record 5 arrived 2 "
        ):
            wv.why_dropped(result.trace, 5, arrival=bad)


def test_idleness_is_known_before_any_input_goes_idle() -> None:
    """Issue 26: two partitions with ``with_idleness(300)``, both delivering every 100 ms: p0
    ts 9000, p1 ts 1500 (it holds [0, 2000) at 1499). No input is idle before 1000, yet the
    trace records the strategy's idleness (an ``idleness`` record when the run starts), so
    the answer knows the job has it: its timeout, not ``with_idleness(t)``, would mark p1
    idle."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        [[("a", 9_000)] * 10, [("a", 1_500)] * 10],
        2_000,
        BOUND_0.with_idleness(300),
        partitioned=True,
        arrival_times=[[i * 100 for i in range(10)]] * 2,
        name="kafka",
    )
    trace = env.execute().trace
    (record,) = trace.records("idleness")
    assert (record.seq, record.proc_time, record.operator, record.detail) == (
        0,
        0,
        "watermarks",
        (300, "watermarks"),
    )
    cut = trace.until(500)
    assert not cut.records("channel_idle")  # nothing idle yet
    answer = wv.why_not_fired(cut, "a", (0, 2_000))
    (held,) = answer.claims
    assert (held.idleness_seen, held.idleness_would_help, held.others) == (True, True, 8999)
    assert "with_idleness(t)" not in answer.sentence
    assert answer.sentence.endswith(
        "it is not idle, so it holds everyone back; once the job's idleness timeout marks it "
        "idle, the other inputs raise the watermark to 8999."
    )


def test_a_restore_puts_every_channel_back_at_min() -> None:
    """Partition 1 (b@1500) is at 1499 before the failure; the restore of the checkpoint after
    three records starts every channel again at MIN (watermarks are not checkpointed), and only
    partition 0 replays (a@5000): at 800 partition 1 holds 'window' at MIN, not at 1499, and no
    third partition is guessed from the restore's watermark records at MIN."""
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[3])
    parts = [[("a", 1_000), ("a", 3_000), ("a", 5_000), ("a", 9_000)], [("b", 1_500)]]
    count_pipeline(env, parts, 2_000, partitioned=True, arrival_times=[[0, 300, 500, 900], [50]])
    result = env.execute(fail_at=4)
    assert result.restores == [wv.Restore(failed_at=4, checkpoint_id=1, source_records=3)]
    answer = wv.why_not_fired(result.trace.until(800), "a", (0, 2_000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at MIN, below the window's max timestamp 1999: it "
        "fires once the watermark ≥ 1999. The minimum is held by source[1] (channel 1 of "
        "'watermarks') at MIN, not advanced since the restore at processing time 300 "
        "(watermarks are not checkpointed: every channel starts again at MIN); it is not idle, "
        "so it holds everyone back: once it is marked idle the other inputs advance the "
        "watermark to 4999. with_idleness(t) marks an input idle after t ms without records "
        "(the trace records no idleness timeout for it and shows no idle input; its later "
        "records may then be late)."
    )
    assert answer.table[["input", "watermark", "idle"]].values.tolist() == [
        ["source[0]", "4999", False],
        ["source[1]", "MIN", False],
    ]
    assert answer.table["last_advanced"].tolist()[0] == 700
    assert answer.table["last_advanced"].isna().tolist() == [False, True]


def test_a_channel_idle_before_a_restore_is_active_at_min_after_it() -> None:
    """``restored_after_idle``: at 1300 partition 1 is active at MIN again (the engine keeps
    'window' at MIN until it goes idle again at 1500, then 4999), never "idle at 1499"."""
    result = restored_after_idle()
    trace = result.trace
    assert [r.seq for r in trace.records("restore", "channel_idle")] == [17, 18, 56, 66, 90]
    assert [r.ts for r in trace.records("watermark", operator="window")][-5:] == [
        2_999,
        wv.MIN,
        4_999,
        8_999,
        wv.MAX,
    ]
    answer = wv.why_not_fired(trace.until(1_300), "a", (2_000, 4_000))
    assert answer.sentence == (
        "The watermark of 'window' is stuck at MIN, below the window's max timestamp 3999: it "
        "fires once the watermark ≥ 3999. The minimum is held by source[1] (channel 1 of "
        "'watermarks') at MIN, not advanced since the restore at processing time 900 "
        "(watermarks are not checkpointed: every channel starts again at MIN); it is not idle, "
        "so it holds everyone back; once the job's idleness timeout marks it idle, the other "
        "inputs raise the watermark to 4999."
    )
    assert answer.table[["input", "watermark", "idle"]].values.tolist() == [
        ["source[0]", "4999", False],
        ["source[1]", "MIN", False],
    ]


def _count_every_record(checkpoint: list[int]) -> wv.JobExecutionResult:
    """A tumbling window [0, 1000) fired by every record (CountTrigger.of(1)), five records
    10 ms apart, the checkpoints after ``checkpoint`` records, the failure at the fifth."""
    env = wv.StreamExecutionEnvironment()
    if checkpoint:
        env = env.enable_checkpointing(at_records=checkpoint)
    events = [("a", t) for t in (10, 20, 30, 40, 50)]
    arrivals = [0, 10, 20, 30, 40]
    job = count_pipeline(env, events, 1000, trigger=wv.CountTrigger.of(1), arrival_times=arrivals)
    return job.execute(fail_at=4)


def test_firings_a_restore_rolled_back_are_not_earlier_firings() -> None:
    """The checkpoint after two records (seq 16), the restore (seq 33) replaying records 3 and
    4: their first firings (seq 23, 31) were rolled back, so the replayed ones (seq 40, 48) have
    2 and 3 earlier firings, not 4 and 5 (the engine's pane index, restored with the checkpoint,
    says so; the sink keeps five counts)."""
    result = _count_every_record([2])
    trace = result.trace
    answer = wv.why_fired(trace, "a", (0, 1000))
    fired = trace.records("fired")
    assert [f.seq for f in answer.claims] == [r.seq for r in fired] == [6, 14, 23, 31, 40, 48, 56]
    assert [f.earlier_firings for f in answer.claims] == [0, 1, 2, 3, 2, 3, 4]
    assert [f.earlier_firings for f in answer.claims] == [r.detail[1] for r in fired]  # engine
    assert [f.rolled_back for f in answer.claims] == [False, False, True, True] + [False] * 3
    kept = sum(not f.rolled_back for f in answer.claims)
    assert kept == len(result.outputs["out"]) == 5
    assert answer.sentence.startswith(
        "It fired 7 time(s) at 'window'; a restore rolled back 2 of them (they came after the "
        "checkpoint it restored, in an attempt that then failed; Flink replays from the "
        "checkpoint), so the run keeps 5. First firing at processing time 0,"
    )
    assert "(timestamp 30): the trigger fired on it. It was rolled back by a restore. Re-" in (
        answer.sentence
    )
    assert answer.table["firing"].tolist()[2:5] == [
        "re-firing (rolled back by a restore)",
        "re-firing (rolled back by a restore)",
        "re-firing",
    ]
    assert wv.why_dropped(trace, 4).sentence.endswith(
        "Window [0, 1000) had fired 4 time(s) and fired at once on it (re-firing)."
    )


def test_a_first_firing_replayed_without_a_checkpoint_is_a_first_firing() -> None:
    """No checkpoint: the restore (seq 33) starts over from the first record, rolling back
    all four firings before it; the replayed first record's firing (seq 40) is the window's
    first firing again (the engine's pane index 0, the sink's first count 1)."""
    result = _count_every_record([])
    trace = result.trace
    assert result.restores == [wv.Restore(failed_at=4, checkpoint_id=None, source_records=0)]
    answer = wv.why_fired(trace, "a", (0, 1000))
    fired = trace.records("fired")
    assert [f.earlier_firings for f in answer.claims] == [0, 1, 2, 3, 0, 1, 2, 3, 4]
    assert [f.earlier_firings for f in answer.claims] == [r.detail[1] for r in fired]  # engine
    assert [f.rolled_back for f in answer.claims] == [True] * 4 + [False] * 5
    assert [r.value for r in result.outputs["out"]] == [1, 2, 3, 4, 5]
    assert answer.table["firing"].tolist()[3:5] == [
        "re-firing (rolled back by a restore)",
        "first firing",
    ]
    assert wv.why_dropped(trace, 0).sentence.endswith(
        "Window [0, 1000) fired at once on it (first firing)."
    )


def test_a_timer_the_trigger_registers_on_a_merge_is_its_next_timer() -> None:
    """Sessions (gap 15) with ContinuousEventTimeTrigger.of(20): a@14 registers the trigger's
    timer at 20 for [14, 29); a@15 (at 10 ms) merges it into [14, 30), and the trigger's
    onMerge registers the merged next fire timestamp 20 there (seq 10, before the element's
    ``assigned`` record; Flink's ContinuousEventTimeTrigger.onMerge). At 10 ms the window waits
    for that timer, not its max timestamp 29: b@25 raises the watermark to 24 at 20 ms and the
    timer at 20 fires it then."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection([("a", 14), ("a", 15), ("b", 25)], arrival_times=[0, 10, 20])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(15))
        .trigger(wv.ContinuousEventTimeTrigger.of(20))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .sink_to("out")
    )
    trace = env.execute().trace
    merge_timer = trace.records("timer_registered", operator="window", key="a")[3]
    assert (merge_timer.seq, repr(merge_timer.window), merge_timer.ts) == (10, "[14, 30)", 20)
    answer = wv.why_not_fired(trace.until(10), "a", (14, 30), operator="window")
    assert answer.sentence == (
        "The watermark of 'window' is stuck at MIN, below 20, the time of its trigger's next "
        "event-time timer (the window's max timestamp is 29): the trigger is asked once the "
        "watermark ≥ 20. The operator has one input: no later event raised the generator's "
        "watermark (max timestamp seen − bound − 1) that far."
    )
    assert answer.claims[0].target == 20
    first = trace.records("fired", operator="window", key="a", window=(14, 30))[0]
    assert (first.proc_time, first.watermark) == (20, 24)  # the engine: the timer at 20 fired it
    assert wv.why_fired(trace, "a", (14, 30)).claims[0].timer == 20


# a generated job (tests/jobs.py's build) where a channel comes back from idle below the
# operator's watermark (found by tests/test_why_truth.py's walk)
UNALIGNED_JOB = {
    "arrivals": [49, 82, 121, 137, 181, 219, 257, 314, 332, 356, 366, 395, 446],
    "assigner": "sliding",
    "bound": 40,
    "events": [
        ("c", 191, 0), ("c", 359, 1), ("b", 24, 2), ("a", 181, 3), ("a", 314, 4),
        ("a", 120, 5), ("c", 125, 6), ("a", 364, 7), ("a", 399, 8), ("a", 204, 9),
        ("a", 162, 10), ("a", 139, 11), ("c", 335, 12),
    ],
    "function": "reduce_process",
    "idle": 100,
    "interval": 7,
    "lateness": 25,
    "layout": "union",
    "parts": [0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0],
    "side": True,
    "trigger": "default",
}  # fmt: skip


def test_a_channel_back_from_idle_below_the_watermark_holds_nothing_back() -> None:
    """At 314 ms 'window#1' is at 273; watermarks#1 (channel 1) came back from idle at 224 and
    advanced to 79 only: Flink's StatusWatermarkValve leaves it out of the minimum until it
    reaches 273 (not aligned), so it is not the holder. The engine: channel 2 comes back at
    315 at 323 and window [260, 320) fires then, watermarks#1 still active at 79."""
    trace = build(UNALIGNED_JOB, True).set_parallelism(2).execute().trace
    answer = wv.why_not_fired(trace.until(314), "a", (260, 320), operator="window#1")
    assert answer.sentence == (
        "The watermark of 'window#1' is stuck at 273, below the window's max timestamp 319: it "
        "fires once the watermark ≥ 319. watermarks#0, watermarks_2#0, watermarks_2#1 are idle "
        "and hold nothing back. watermarks#1 (channel 1 of 'window#1') at 79 is active again "
        "but not aligned: back from idle below the operator's watermark, left out of the "
        "minimum until a watermark of it reaches 273 (Flink's StatusWatermarkValve), so it "
        "holds nothing back. No aligned input is below it now: the watermark stays where it "
        "is until an aligned input's watermark advances (an input is aligned again once its "
        "watermark reaches 273)."
    )
    (held,) = answer.claims
    assert held.holders == ()
    assert [(ch.channel, ch.watermark, ch.idle, ch.aligned) for ch in held.unaligned] == [
        (1, 79, False, False)
    ]
    table = answer.table[answer.table["operator"] == "window#1"].sort_values("channel")
    assert table["aligned"].tolist() == [True, False, True, True]
    fired = trace.records("fired", operator="window#1", key="a", window=(260, 320))
    assert [(r.proc_time, r.watermark) for r in fired] == [(315, 323)]  # the engine
    before = trace.records(*CHANNEL_KINDS, "restore")
    states = channel_states(r for r in before if r.seq < fired[0].seq)
    ch = states[("window#1", 1)]  # when it fired: still active at 79
    assert (ch.input, ch.watermark, ch.idle, ch.aligned) == ("watermarks#1", 79, False, False)


def test_a_run_from_a_snapshot_does_not_call_its_first_traced_firing_the_first() -> None:
    """The run of ``_count_every_record`` without a failure, then a second run from its
    checkpoint after two records (restore_from): the window had fired twice before (the
    engine's pane index 2; the sink's first counts 1 and 2 come with the snapshot), so its
    first firing in this trace is said to be that, not its first firing."""
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[2])
    events = [("a", t) for t in (10, 20, 30, 40, 50)]
    arrivals = [0, 10, 20, 30, 40]
    job = count_pipeline(env, events, 1000, trigger=wv.CountTrigger.of(1), arrival_times=arrivals)
    first = job.execute()
    result = job.execute(restore_from=first.checkpoints[-1])
    trace = result.trace
    assert [r.detail[1] for r in trace.records("fired")] == [2, 3, 4]  # the engine's pane index
    assert [r.value for r in result.outputs["out"]] == [1, 2, 3, 4, 5]
    answer = wv.why_fired(trace, "a", (0, 1000))
    assert [(f.earlier_firings, f.started_from) for f in answer.claims] == [(0, 1), (1, 1), (2, 1)]
    assert answer.sentence.startswith(
        "It fired 3 time(s) at 'window'. The run started from checkpoint 1 of an earlier run "
        "(restore_from): that run's firings are not in this trace, nor counted here. First "
        "firing in this trace at processing time 20, caused by the element at seq 2"
    )
    firings = answer.table["firing"].tolist()
    assert firings == ["first firing in this trace", "re-firing", "re-firing"]
    assert wv.why_dropped(trace, 2).sentence.endswith(
        "Window [0, 1000) fired at once on it (first firing in this trace)."
    )
    assert wv.why_dropped(trace, 3).sentence.endswith(
        "Window [0, 1000) had fired 1 time(s) in this trace and fired at once on it (re-firing)."
    )
