"""Watermark alignment (``with_watermark_alignment``), Flink 2.3's rules (``winviz.alignment``).

Every expected value is derived by hand in the comments. Common ground: the default
``auto_watermark_interval`` (200 ms); ``for_monotonous_timestamps`` gives ``max ts - 1`` at
each periodic emission, and a periodic emission at processing time t comes before a record
arriving at t. So a source with one record every 100 ms (record i at 100·i) whose timestamps
are ``ts(i)`` has, after the emission at t (a multiple of 200), the watermark ``ts(t/100 - 1)
- 1``: the *slow* source (ts = 100·i) ``t - 101``, the *fast* one (ts = 1000·i)
``10·t - 1001``. Reports and announcements happen every update interval from the start
(t = 0), reports first; a reader that has read everything reports MAX at once.
"""

from __future__ import annotations

import pytest
from jobs import timestamped

import winviz as wv
from winviz.alignment import (
    AlignmentCoordinator,
    SourceReaderAlignment,
    WatermarkAggregator,
    WatermarkAlignmentParams,
    WatermarkSampler,
    max_allowed_watermark,
)
from winviz.time import MAX, MIN


def _strategy(drift=1000, interval=1000, idle=None):
    s = wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e)
    if idle is not None:
        s = s.with_idleness(idle)
    return s.with_watermark_alignment("g", drift, interval)


def _fast_slow(n_fast, n_slow, *, buffer=3, drift=1000, interval=1000, slow_idle=None, trace=True):
    env = wv.StreamExecutionEnvironment(trace=trace)
    env.set_watermark_alignment_buffer_size(buffer)
    fast = env.from_collection(
        [i * 1000 for i in range(n_fast)],
        arrival_times=[i * 100 for i in range(n_fast)],
        name="fast",
    ).assign_timestamps_and_watermarks(_strategy(drift, interval))
    slow = env.from_collection(
        [i * 100 for i in range(n_slow)],
        arrival_times=[i * 100 for i in range(n_slow)],
        name="slow",
    ).assign_timestamps_and_watermarks(_strategy(drift, interval, slow_idle))
    fast.union(slow).sink_to("out")
    return env.execute()


def _pauses(result):
    return [
        (r.kind, r.proc_time, r.operator, r.ts, r.detail)
        for r in result.trace.records("paused", "resumed")
    ]


def _arrivals(result, source):
    """(processing time, value) of each record of ``source`` as it entered the job."""
    return [(r.proc_time, r.detail[0]) for r in result.trace.records("arrival", operator=source)]


# -- two sources, one fast, one slow ------------------------------------------------------------


def test_fast_source_paused_until_the_slow_one_finishes_buffer_0():
    # Flink before 2.3 (buffer size 0: the latest watermark is checked).
    # t=1000: fast reports 10·1000-1001 = 8999, slow 1000-101 = 899; announced max allowed
    # 899 + 1000 = 1899 < 8999: fast pauses (its records from 1000 on are held back).
    # slow's last record (29) arrives at 2900: it finishes and reports MAX, so at t=3000
    # the group minimum is fast's 8999 (frozen: it read nothing since) and 9999 >= 8999:
    # fast resumes and reads its 20 held records (10..29) at once, at 3000.
    r = _fast_slow(30, 30, buffer=0)
    assert _pauses(r) == [
        ("paused", 1000, "watermarks", 8999, ("fast", 1899, "g")),
        ("resumed", 3000, "watermarks", 8999, ("fast", 9999, "g")),
    ]
    fast = _arrivals(r, "fast")
    assert fast[:10] == [(i * 100, i * 1000) for i in range(10)]
    assert fast[10:] == [(3000, i * 1000) for i in range(10, 30)]
    assert _arrivals(r, "slow") == [(i * 100, i * 100) for i in range(30)]  # never held
    # nothing is lost: every record reaches the sink
    assert sorted(rec.value for rec in r.outputs["out"]) == sorted(
        [i * 1000 for i in range(30)] + [i * 100 for i in range(30)]
    )


def test_flink_2_3_checks_the_oldest_of_three_samples():
    # Buffer size 3 (Flink 2.3's default). fast's samples at 1000, 2000, 3000: 8999, 18999,
    # 28999; the ring starts [MIN, MIN, MIN], so the oldest sample is MIN at 1000 and 2000
    # and 8999 at 3000. Announced at 2000: slow's 1899 + 1000 = 2899. At the sampling of
    # t=3000: 8999 > 2899 -> paused (before 3000's announcement). fast's watermark stays
    # 28999 (nothing read). slow (80 records) finishes at 7900 and reports MAX; at 8000 the
    # group minimum is fast's 28999 -> max allowed 29999 >= its oldest sample 28999: resumed.
    r = _fast_slow(80, 80, buffer=3)
    assert _pauses(r) == [
        ("paused", 3000, "watermarks", 8999, ("fast", 2899, "g")),
        ("resumed", 8000, "watermarks", 28999, ("fast", 29999, "g")),
    ]
    fast = _arrivals(r, "fast")
    assert fast[29] == (2900, 29000)
    assert fast[30:] == [(8000, i * 1000) for i in range(30, 80)]
    # the same job with buffer 0 pauses two update intervals earlier
    assert _pauses(_fast_slow(80, 80, buffer=0))[0] == (
        "paused", 1000, "watermarks", 8999, ("fast", 1899, "g"),
    )  # fmt: skip


def test_a_source_that_never_runs_ahead_is_never_paused():
    # 30 records each: with buffer 3 the fast source has read everything (at 2900) before its
    # oldest sample leaves MIN (t=3000), so it is never paused.
    r = _fast_slow(30, 30, buffer=3)
    assert _pauses(r) == []
    assert _arrivals(r, "fast") == [(i * 100, i * 1000) for i in range(30)]


@pytest.mark.parametrize(("ahead", "paused"), [(0, False), (1, True)])
def test_drift_boundary_is_exclusive(ahead, paused):
    # slow: a record with ts 5001 at 0 (watermark 5000 at t=200) and one at 2500; fast: a
    # record with ts 6001 + ahead at 0 (watermark 6000 + ahead) and one at 2500. Buffer 0,
    # drift 1000: at 1000 the max allowed is 5000 + 1000 = 6000. Flink pauses only when the
    # watermark is *greater* (shouldWaitForAlignment: maxDesired < watermark): 6000 reads on;
    # 6001 pauses, and its record at 2500 is held until slow has read its last record (2500,
    # after fast's held one would have come: equal arrivals go in source order) and reported
    # MAX: resumed at 3000, max allowed 6001 + 1000.
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    fast = env.from_collection(
        [6001 + ahead, 7000], arrival_times=[0, 2500], name="fast"
    ).assign_timestamps_and_watermarks(_strategy())
    slow = env.from_collection(
        [5001, 5002], arrival_times=[0, 2500], name="slow"
    ).assign_timestamps_and_watermarks(_strategy())
    fast.union(slow).sink_to("out")
    r = env.execute()
    if paused:
        assert _pauses(r) == [
            ("paused", 1000, "watermarks", 6001, ("fast", 6000, "g")),
            ("resumed", 3000, "watermarks", 6001, ("fast", 7001, "g")),
        ]
        assert _arrivals(r, "fast") == [(0, 6002), (3000, 7000)]
    else:
        assert _pauses(r) == []
        assert _arrivals(r, "fast") == [(0, 6001), (2500, 7000)]


# -- idleness --------------------------------------------------------------------------------


def _fast_and_quiet(idle):
    # slow: one record (ts 0) at 0, then one at 10000. Its watermark is -1 from t=200 on.
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    fast = env.from_collection(
        [i * 1000 for i in range(50)], arrival_times=[i * 100 for i in range(50)], name="fast"
    ).assign_timestamps_and_watermarks(_strategy())
    slow = env.from_collection(
        [0, 100], arrival_times=[0, 10000], name="slow"
    ).assign_timestamps_and_watermarks(_strategy(idle=idle))
    fast.union(slow).sink_to("out")
    return env.execute()


def test_an_idle_source_reports_max_and_releases_the_group():
    # At 1000: fast 8999, slow -1 -> max allowed 999: fast paused. slow's idleness (1000 ms):
    # its periodic check at 200 sees its record, at 400 starts the timer, and at 1600
    # (1600 - 400 > 1000) marks it idle; an idle reader reports MAX (emitLatestWatermark).
    # At 2000 the group minimum is fast's 8999 -> 9999: fast resumes; its records held since
    # 1000 (10..19) come at 2000. Then fast is alone in the group and runs ahead of its own
    # last report: reading 20 (2000) and 21 (2100), its emission at 2200 gives 20999 > 9999,
    # paused at once (buffer 0: updateCurrentEffectiveWatermark checks); at 3000 it reported
    # 20999 -> 21999: resumed; held 22..29 and 30 (3000), 31 (3100): 30999 at 3200, paused;
    # and so on until its last record (49, held since 4900) is read at 5000.
    r = _fast_and_quiet(idle=1000)
    assert _pauses(r) == [
        ("paused", 1000, "watermarks", 8999, ("fast", 999, "g")),
        ("resumed", 2000, "watermarks", 8999, ("fast", 9999, "g")),
        ("paused", 2200, "watermarks", 20999, ("fast", 9999, "g")),
        ("resumed", 3000, "watermarks", 20999, ("fast", 21999, "g")),
        ("paused", 3200, "watermarks", 30999, ("fast", 21999, "g")),
        ("resumed", 4000, "watermarks", 30999, ("fast", 31999, "g")),
        ("paused", 4200, "watermarks", 40999, ("fast", 31999, "g")),
        ("resumed", 5000, "watermarks", 40999, ("fast", 41999, "g")),
    ]
    idle = [r_.proc_time for r_ in r.trace.records("idle", operator="watermarks_2")]
    assert idle[0] == 1600
    assert _arrivals(r, "fast")[10:20] == [(2000, i * 1000) for i in range(10, 20)]


def test_a_quiet_source_without_idleness_holds_the_fast_one_until_it_finishes():
    # Without idleness slow reports -1 until its last record (10000) finishes it: the tick at
    # 10000 comes before that record (due times go first), so the MAX report is first
    # announced at 11000.
    r = _fast_and_quiet(idle=None)
    assert _pauses(r) == [
        ("paused", 1000, "watermarks", 8999, ("fast", 999, "g")),
        ("resumed", 11000, "watermarks", 8999, ("fast", 9999, "g")),
    ]
    assert _arrivals(r, "fast")[10] == (11000, 10000)


# -- the update interval ----------------------------------------------------------------------


def test_update_interval_sets_when_pauses_start_and_end():
    # Buffer 0, fast 30 records, slow 50 (finishes at 4900).
    # interval 1000: paused at 1000 (8999 > 899 + 1000); fast frozen at 8999, never within
    # slow + 1000 (slow reaches 3899 at 4000) until slow reports MAX (at 4900): resumed at
    # 5000 with 8999 + 1000.
    assert _pauses(_fast_slow(30, 50, buffer=0, interval=1000)) == [
        ("paused", 1000, "watermarks", 8999, ("fast", 1899, "g")),
        ("resumed", 5000, "watermarks", 8999, ("fast", 9999, "g")),
    ]
    # interval 500: at 500 fast reports 2999 (emission at 400), slow 299 -> 1299: paused
    # (fast's record at 500 comes after the tick: held). The emission at 600 still raises
    # fast to 3999 (its record of 400, ts 4000, was read). slow's report at 3500 is 3299
    # (emission at 3400): 3299 + 1000 = 4299 >= 3999: resumed at 3500.
    assert _pauses(_fast_slow(30, 50, buffer=0, interval=500)) == [
        ("paused", 500, "watermarks", 2999, ("fast", 1299, "g")),
        ("resumed", 3500, "watermarks", 3999, ("fast", 4299, "g")),
    ]


# -- split-level alignment (a partitioned source) --------------------------------------------


def test_a_partition_ahead_is_paused_while_the_others_read_on():
    # One source, two partitions: p0 fast (30 records, ts 1000·i), p1 slow (100 records).
    # The reader's watermark is the minimum, p1's, so the reader itself never runs ahead;
    # the report is p1's t - 101. At 1000: max allowed 899 + 1000 = 1899 < p0's 8999:
    # p0 is paused (checkSplitWatermarkAlignment), p1 reads on. At 9000 p1's report 8899
    # gives 9899 >= 8999: p0 resumes and reads its 20 held records at 9000. At 9200 p0's
    # watermark rises to 28999 > 9899: paused at once (maybePauseSplit; buffer 0).
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    src = env.from_partitions(
        [[i * 1000 for i in range(30)], [i * 100 for i in range(100)]],
        arrival_times=[[i * 100 for i in range(30)], [i * 100 for i in range(100)]],
        name="kafka",
    )
    src.assign_timestamps_and_watermarks(_strategy()).sink_to("out")
    r = env.execute()
    assert _pauses(r) == [
        ("paused", 1000, "watermarks", 8999, ("kafka[0]", 1899, "g")),
        ("resumed", 9000, "watermarks", 8999, ("kafka[0]", 9899, "g")),
        ("paused", 9200, "watermarks", 28999, ("kafka[0]", 9899, "g")),
    ]
    p0 = [(t, v) for t, v in _arrivals(r, "kafka") if v % 1000 == 0 and v >= 10000]
    assert p0 == [(9000, i * 1000) for i in range(10, 30)]


def test_a_partition_that_holds_the_minimum_and_stops_stalls_with_a_clear_error():
    # Same, but p1 has 30 records: it stops at 2900 with watermark 2899 and (a partition never
    # finishes before the whole input) keeps holding the reader's watermark at 2899, so p0's
    # 8999 stays > 3899 forever. Real Flink would wait; winviz says why and keeps the trace.
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    src = env.from_partitions(
        [[i * 1000 for i in range(30)], [i * 100 for i in range(30)]],
        arrival_times=[[i * 100 for i in range(30)], [i * 100 for i in range(30)]],
        name="kafka",
    )
    src.assign_timestamps_and_watermarks(_strategy()).sink_to("out")
    with pytest.raises(wv.AlignmentStallError, match=r"kafka: 20 record\(s\).*\[0\]") as err:
        env.execute()
    assert [(r.kind, r.proc_time) for r in err.value.trace.records("paused", "resumed")] == [
        ("paused", 1000)
    ]
    # with idleness p1 goes idle (its idleness clock runs: it is not paused) and the reader's
    # watermark becomes p0's: the group releases p0
    env2 = wv.StreamExecutionEnvironment()
    env2.set_watermark_alignment_buffer_size(0)
    src2 = env2.from_partitions(
        [[i * 1000 for i in range(30)], [i * 100 for i in range(30)]],
        arrival_times=[[i * 100 for i in range(30)], [i * 100 for i in range(30)]],
        name="kafka",
    )
    src2.assign_timestamps_and_watermarks(_strategy(idle=1000)).sink_to("out")
    r = env2.execute()
    assert len(r.outputs["out"]) == 60
    assert _pauses(r)[-1][0] == "resumed"


# -- the state machines alone -------------------------------------------------------------------


def test_sampler_ring():
    s = WatermarkSampler(3)
    assert s.oldest_sample() == MIN
    for w in (10, 20, 30, 40):
        s.add_latest(w)
        s.sample()
    assert s.oldest_sample() == 20  # the latest of two samples ago
    zero = WatermarkSampler(0)
    zero.add_latest(7)
    assert zero.oldest_sample() == 7
    zero.sample()
    assert zero.oldest_sample() == 7


def test_coordinator_minimum_and_overflow():
    store: dict[str, WatermarkAggregator] = {}
    params = WatermarkAlignmentParams("g", 100, 1000)
    a = AlignmentCoordinator("a", params, store)
    b = AlignmentCoordinator("b", params, store)
    assert a.announce() == (MIN + 100, [])  # nobody reported: MIN + drift, sent to no one
    a.report(0, 500)
    a.report(1, 300)
    b.report(0, 400)
    assert a.announce() == (400, [0, 1])  # min(min(500, 300), 400) + 100
    b.report(0, MAX)  # idle / finished
    assert b.announce() == (400, [0])
    a.report(1, MAX)
    a.report(0, MAX)
    assert a.announce() == (MAX, [0, 1])  # MAX + 100 overflows: Long.MAX_VALUE
    assert max_allowed_watermark(MAX - 50, 100) == MAX


def test_reader_idle_split_is_skipped_and_stays_paused():
    r = SourceReaderAlignment(WatermarkAlignmentParams("g", 0, 1000), 0, [0, 1])
    assert r.update_split_watermark(0, 50) == []  # max desired starts at MAX
    assert r.on_alignment_event(10) == [("paused", 0, 50, 10)]
    r.update_split_idle(0, True)
    assert r.on_alignment_event(100) == []  # an idle split is neither paused nor resumed
    assert r.paused_splits == {0}
    assert r.update_split_idle(0, False) == []  # active again: 50 <= 100, already paused
    assert r.on_alignment_event(100) == [("resumed", 0, 50, 100)]
    _, report = r.sample_and_report()
    assert report is None  # no effective watermark yet: nothing reported
    r.update_effective_watermark(60)
    r.update_idle(True)
    assert r.sample_and_report()[1] == MAX


# -- arguments and the trace ------------------------------------------------------------------


def test_arguments_are_checked_as_flink_checks_them():
    s = wv.WatermarkStrategy.for_monotonous_timestamps()
    with pytest.raises(wv.InputError, match="greater than or equal to zero"):
        s.with_watermark_alignment("g", -1)
    with pytest.raises(wv.InputError, match="updateInterval must be positive"):
        s.with_watermark_alignment("g", 10, 0)
    with pytest.raises(wv.InputError, match="watermark group"):
        s.with_watermark_alignment(None, 10)
    assert s.with_watermark_alignment("g", 10).alignment == WatermarkAlignmentParams("g", 10, 1000)
    env = wv.StreamExecutionEnvironment()
    with pytest.raises(wv.InputError) as info:
        env.set_watermark_alignment_buffer_size(-1)
    assert str(info.value) == (
        "field 'buffer_size', value -1: buffer_size must be at least 0 (expected an int >= 0 "
        "(Flink's default 3; 0: check the latest watermark))"
    )


def test_alignment_after_another_operator_is_refused():
    env = wv.StreamExecutionEnvironment()
    env.from_collection([1, 2]).map(lambda x: x).assign_timestamps_and_watermarks(
        _strategy()
    ).sink_to("out")
    with pytest.raises(wv.InputError, match="right after a source"):
        env.execute()


def test_alignment_with_checkpointing_is_refused():
    env = wv.StreamExecutionEnvironment()
    env.enable_checkpointing(at_records=[1])
    timestamped(env, [1, 2], _strategy()).sink_to("out")
    with pytest.raises(wv.InputError, match="checkpointing"):
        env.execute()


def test_without_trace_the_same_outputs():
    traced = _fast_slow(80, 80)
    untraced = _fast_slow(80, 80, trace=False)
    assert [(o.value, o.processing_time) for o in traced.outputs["out"]] == [
        (o.value, o.processing_time) for o in untraced.outputs["out"]
    ]


def test_paused_records_survive_pandas_json_and_files(tmp_path):
    r = _fast_slow(30, 30, buffer=0)
    frame = r.trace.to_pandas()
    rows = frame[frame["kind"].isin(["paused", "resumed"])]
    assert rows[["kind", "proc_time", "ts", "input", "max_allowed", "group"]].values.tolist() == [
        ["paused", 1000, 8999, "fast", 1899, "g"],
        ["resumed", 3000, 8999, "fast", 9999, "g"],
    ]
    path = tmp_path / "t.parquet"
    r.trace.save(path)
    loaded = wv.load_trace(path)
    assert loaded.to_json() == r.trace.to_json()
    assert [x.detail for x in loaded.records("paused")] == [("fast", 1899, "g")]


def test_why_not_fired_names_a_paused_source():
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    fast = env.from_collection(
        [{"k": "a", "t": i * 1000} for i in range(30)],
        arrival_times=[i * 100 for i in range(30)],
        name="fast",
    ).assign_timestamps_and_watermarks(
        wv.WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(lambda e, _: e["t"])
        .with_watermark_alignment("g", 1000, 1000)
    )
    slow = env.from_collection(
        [{"k": "a", "t": i * 100} for i in range(30)],
        arrival_times=[i * 100 for i in range(30)],
        name="slow",
    ).assign_timestamps_and_watermarks(
        wv.WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(lambda e, _: e["t"])
        .with_watermark_alignment("g", 1000, 1000)
    )
    fast.union(slow).key_by(lambda e: e["k"]).window(wv.TumblingEventTimeWindows.of(5000)).reduce(
        lambda a, b: a
    ).sink_to("out")
    r = env.execute()
    # at 2500 fast is paused (since 1000); the window [0, 5000) waits for both inputs (slow
    # holds the minimum) and the answer names the paused source too
    answer = wv.why_not_fired(r.trace.until(2500), "a", (0, 5000))
    assert "The minimum is held by watermarks_2" in answer.sentence
    assert (
        "fast is paused for watermark alignment since processing time 1000 (its watermark "
        "8999 is ahead of 1899, the max allowed in group 'g': the slowest source's watermark "
        "+ max_drift): until an announcement lets it resume, none of its records are read"
        in answer.sentence
    )
    # at the end nothing is paused any more: no such words
    assert "paused" not in wv.why_not_fired(r.trace.until(3500), "a", (5000, 10000)).sentence


def test_why_not_fired_a_window_held_back_by_its_paused_source():
    # A window fed by fast alone: its watermark is fast's, frozen at 8999 while fast is paused
    # (1000..3000, as in the first test), so [5000, 10000) cannot fire before it resumes.
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    fast = env.from_collection(
        [i * 1000 for i in range(30)], arrival_times=[i * 100 for i in range(30)], name="fast"
    ).assign_timestamps_and_watermarks(_strategy())
    timestamped(
        env,
        [i * 100 for i in range(30)],
        _strategy(),
        arrival_times=[i * 100 for i in range(30)],
        name="slow",
    ).sink_to("slow_out")
    fast.key_by(lambda e: 0).window(wv.TumblingEventTimeWindows.of(5000)).reduce(
        lambda a, b: a + b
    ).sink_to("out")
    r = env.execute()
    sentence = wv.why_not_fired(r.trace.until(2500), 0, (5000, 10000)).sentence
    assert sentence.startswith("The watermark of 'window' is stuck at 8999")
    assert "fast is paused for watermark alignment since processing time 1000" in sentence
    # the next window's records (from ts 10000, arriving from 1000 on) are still held back
    sentence = wv.why_not_fired(r.trace.until(2500), 0, (10000, 15000)).sentence
    assert sentence.startswith("It has no contents at 'window': no element of that key")
    assert "fast is paused for watermark alignment since processing time 1000" in sentence


def _paused_strips(chart):
    """(line, paused input, from, until) of the propagation chart's paused strips."""
    spec = chart.to_dict()
    out = []
    for panel in spec.get("vconcat", [spec]):
        for layer in panel["layer"]:
            tips = [t.get("field") for t in layer.get("encoding", {}).get("tooltip", [])]
            if "paused from" in tips:
                rows = spec["datasets"][layer["data"]["name"]]
                out += [(r["line"], r["paused"], r["paused from"], r["paused until"]) for r in rows]
    return out


def test_propagation_chart_draws_paused_spans():
    from winviz.viz.propagation import propagation_chart

    # the union's panel: the fast reader's span on the channel it feeds ("watermarks")
    r = _fast_slow(80, 80)
    assert _paused_strips(propagation_chart(r)) == [("watermarks", "fast", "3,000 ms", "8,000 ms")]
    # a partitioned source: the partition's span on its channel line, still open at the end
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    timestamped(
        env,
        [[i * 1000 for i in range(30)], [i * 100 for i in range(100)]],
        _strategy(),
        partitioned=True,
        arrival_times=[[i * 100 for i in range(30)], [i * 100 for i in range(100)]],
        name="kafka",
    ).sink_to("out")
    assert _paused_strips(propagation_chart(env.execute())) == [
        ("kafka[0]", "kafka[0]", "1,000 ms", "9,000 ms"),
        ("kafka[0]", "kafka[0]", "9,200 ms", "end of trace"),
    ]


def test_two_reader_subtasks_report_to_one_coordinator():
    # from_partitions with parallelism 2: reader #0 reads p0 (fast), #1 p1 (slow, 30 records).
    # The coordinator's minimum is over its subtasks' reports: at 1000, min(8999, 899) + 1000
    # = 1899 goes to both; reader #0 waits (8999 > 1899) and its split p0 is paused too
    # (checkWatermarkAlignment, then checkSplitWatermarkAlignment). #1 reads its last record
    # at 2900 and reports MAX; at 3000 the minimum is #0's 8999 -> 9999: both resume.
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    env.from_partitions(
        [[i * 1000 for i in range(30)], [i * 100 for i in range(30)]],
        arrival_times=[[i * 100 for i in range(30)], [i * 100 for i in range(30)]],
        name="kafka",
    ).set_parallelism(2).assign_timestamps_and_watermarks(_strategy()).sink_to("out")
    r = env.execute()
    assert _pauses(r) == [
        ("paused", 1000, "watermarks#0", 8999, ("kafka#0", 1899, "g")),
        ("paused", 1000, "watermarks#0", 8999, ("kafka[0]", 1899, "g")),
        ("resumed", 3000, "watermarks#0", 8999, ("kafka#0", 9999, "g")),
        ("resumed", 3000, "watermarks#0", 8999, ("kafka[0]", 9999, "g")),
    ]
    assert _arrivals(r, "kafka#0")[10:] == [(3000, i * 1000) for i in range(10, 30)]


def test_same_input_same_trace():
    assert _fast_slow(80, 80).trace.to_json() == _fast_slow(80, 80).trace.to_json()


def _partitions_with_idleness():
    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    timestamped(
        env,
        [[i * 1000 for i in range(30)], [i * 100 for i in range(100)]],
        _strategy(idle=500),
        partitioned=True,
        arrival_times=[[i * 100 for i in range(30)], [i * 100 for i in range(100)]],
        name="kafka",
    ).sink_to("out")
    return env.execute()


def test_a_paused_partition_does_not_go_idle():
    # As in test_a_partition_ahead_is_paused_while_the_others_read_on, with idleness 500 ms:
    # p0 gets no record from 1000 to 9000 (held back) and none after 9000, but its idleness
    # timer reads a PausableRelativeClock that stands still while it is paused, so it is
    # never marked idle (were it, checkSplitWatermarkAlignment would skip it as idle and
    # never resume it: the job would stall). The same pauses as without idleness.
    r = _partitions_with_idleness()
    assert [x.detail for x in r.trace.records("channel_idle")] == []
    assert _pauses(r) == [
        ("paused", 1000, "watermarks", 8999, ("kafka[0]", 1899, "g")),
        ("resumed", 9000, "watermarks", 8999, ("kafka[0]", 9899, "g")),
        ("paused", 9200, "watermarks", 28999, ("kafka[0]", 9899, "g")),
    ]


def test_a_drift_of_max_turns_alignment_off():
    # WatermarkAlignmentParams.isEnabled: maxAllowedWatermarkDrift < Long.MAX_VALUE
    s = wv.WatermarkStrategy.for_monotonous_timestamps().with_watermark_alignment("g", wv.MAX)
    assert not s.alignment.enabled
    env = wv.StreamExecutionEnvironment()
    timestamped(
        env, [5, 1], s.with_timestamp_assigner(lambda e, _: e), arrival_times=[0, 10]
    ).sink_to("out")
    r = env.execute()
    assert r.trace.records("paused") == []
    assert [(x.proc_time, x.detail) for x in r.trace.records("arrival")] == [
        (0, (5, 0)),
        (10, (1, 1)),
    ]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_alignment_that_never_pauses_changes_nothing(parallelism):
    # The aligned reading loop hands records over in the runtime's order (arrival, source,
    # partition): with a drift no watermark exceeds, the trace is the trace without alignment.
    def job(aligned):
        env = wv.StreamExecutionEnvironment()

        def strategy(idle=None):
            s = wv.WatermarkStrategy.for_bounded_out_of_orderness(300).with_timestamp_assigner(
                lambda e, _: e
            )
            s = s if idle is None else s.with_idleness(idle)
            return s.with_watermark_alignment("g", 10**12, 700) if aligned else s

        a = env.from_partitions(
            [[i * 70 for i in range(25)], [i * 10 for i in range(40)], []],
            arrival_times=[[i * 130 for i in range(25)], [i * 60 for i in range(40)], []],
            name="kafka",
        ).set_parallelism(parallelism)
        a = a.assign_timestamps_and_watermarks(strategy(idle=400))
        b = env.from_collection(
            [i * 33 for i in range(50)], arrival_times=[i * 45 for i in range(50)], name="b"
        ).assign_timestamps_and_watermarks(strategy())
        a.union(b).key_by(lambda e: e % 3).window(wv.TumblingEventTimeWindows.of(500)).reduce(
            lambda x, y: x + y
        ).sink_to("out")
        return env.execute()

    aligned, plain = job(True), job(False)
    assert aligned.trace.records("paused") == []
    assert aligned.trace.to_json() == plain.trace.to_json()


def test_batch_mode_has_no_alignment():
    # BATCH generates no watermarks (Flink's NoOpTimestampsAndWatermarks): no reader reports,
    # nothing is paused, records are read at their arrival
    env = wv.StreamExecutionEnvironment()
    env.set_runtime_mode(wv.RuntimeExecutionMode.BATCH)
    env.set_watermark_alignment_buffer_size(0)
    fast = env.from_collection(
        [i * 1000 for i in range(30)], arrival_times=[i * 100 for i in range(30)], name="fast"
    ).assign_timestamps_and_watermarks(_strategy())
    slow = env.from_collection(
        [i * 100 for i in range(30)], arrival_times=[i * 100 for i in range(30)], name="slow"
    ).assign_timestamps_and_watermarks(_strategy())
    fast.union(slow).sink_to("out")
    r = env.execute()
    assert r.trace.records("paused") == []
    assert _arrivals(r, "fast") == [(i * 100, i * 1000) for i in range(30)]


def test_trace_order_of_pauses_and_held_arrivals():
    # schema rule 7: paused / resumed alternate per input; held arrivals follow the resume
    r = _fast_slow(80, 80)
    kinds = [(x.kind, x.seq) for x in r.trace.records("paused", "resumed")]
    assert [k for k, _ in kinds] == ["paused", "resumed"]
    resumed = kinds[1][1]
    held = [x for x in r.trace.records("arrival", operator="fast") if x.proc_time == 8000]
    assert len(held) == 50 and all(x.seq > resumed for x in held)
