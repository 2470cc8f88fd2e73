"""Interval joins and window joins / coGroups (``winviz.joins``), with expectations worked out
by hand from Flink 2.3's rules: ``IntervalJoinOperator`` (bounds moved by one when exclusive,
``isLate`` is ``timestamp < watermark``, cleanup timers at ``ts + upper`` / ``ts - lower`` when
positive, else ``ts``; output at ``max(left, right)``) and ``JoinedStreams`` /
``CoGroupedStreams`` (a window operator over the tagged union of both inputs, output at the
window's max timestamp). Random cases against brute-force models; the charts draw a join run."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import winviz as wv
from winviz.viz.fates import element_fates
from winviz.viz.trace_view import open_trace, window_operators

KEY = 0  # a record is (key, ts, value); "w" records carry a watermark in ts


def _strategy() -> wv.WatermarkStrategy:
    return wv.WatermarkStrategy.for_punctuated(
        lambda e, _: e[1] if e[0] == "w" else None
    ).with_timestamp_assigner(lambda e, _: e[1])


def _inputs(events: list[tuple]) -> tuple[wv.StreamExecutionEnvironment, wv.DataStream, ...]:
    """``events``: (side "L" / "R", key or "w", ts, value) in arrival order (arrival = index)."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=0)
    streams = []
    for side in ("L", "R"):
        records = [(k, ts, v) for s, k, ts, v in events if s == side]
        arrivals = [i for i, e in enumerate(events) if e[0] == side]
        streams.append(
            env.from_collection(records, arrival_times=arrivals, name=f"in{side}")
            .assign_timestamps_and_watermarks(_strategy())
            .filter(lambda e: e[0] != "w")
        )
    return env, streams[0], streams[1]


class Pairs(wv.ProcessJoinFunction):
    """Emits (left value, right value, left ts, right ts, ctx ts)."""

    def process_element(self, left, right, ctx, out):
        out.collect(
            (left[2], right[2], ctx.left_timestamp(), ctx.right_timestamp(), ctx.timestamp())
        )


def interval(
    events: list[tuple],
    lower: int,
    upper: int,
    *,
    lower_exclusive: bool = False,
    upper_exclusive: bool = False,
    late_left: bool = False,
    late_right: bool = False,
) -> wv.JobExecutionResult:
    env, a, b = _inputs(events)
    joined = a.key_by(lambda e: e[0]).interval_join(b.key_by(lambda e: e[0])).between(lower, upper)
    if lower_exclusive:
        joined = joined.lower_bound_exclusive()
    if upper_exclusive:
        joined = joined.upper_bound_exclusive()
    if late_left:
        joined = joined.side_output_left_late_data(wv.OutputTag("late-left"))
    if late_right:
        joined = joined.side_output_right_late_data(wv.OutputTag("late-right"))
    out = joined.process(Pairs())
    out.sink_to("pairs")
    if late_left:
        out.get_side_output(wv.OutputTag("late-left")).sink_to("late_left")
    if late_right:
        out.get_side_output(wv.OutputTag("late-right")).sink_to("late_right")
    return env.execute()


def pairs(result: wv.JobExecutionResult) -> Counter:
    """The (left, right) value pairs with the output's timestamp, as a multiset."""
    got = Counter()
    for r in result.outputs["pairs"]:
        left, right, lts, rts, ts = r.value
        assert r.timestamp == ts == max(lts, rts)
        got[(left, right, ts)] += 1
    return got


# L: 0, 5, 10; R: -2, 3, 6, 8, 12 (values = the timestamps); no watermarks: nothing is late
BASIC = [("L", "k", 0, 0), ("L", "k", 5, 5), ("L", "k", 10, 10)] + [
    ("R", "k", t, t) for t in (-2, 3, 6, 8, 12)
]


def test_inclusive_bounds_join_each_pair_within_them_at_the_larger_timestamp():
    # between(-2, 3): right ∈ [l - 2, l + 3]. L0: -2, 3; L5: 3, 6, 8; L10: 8, 12
    assert pairs(interval(BASIC, -2, 3)) == Counter(
        {(0, -2, 0): 1, (0, 3, 3): 1, (5, 3, 5): 1, (5, 6, 6): 1, (5, 8, 8): 1, (10, 8, 10): 1,
         (10, 12, 12): 1}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("lower_exclusive", "upper_exclusive", "expected"),
    [
        # (-2, 3) open is [-1, 2]: L5: 6; L10: 12
        (True, True, {(5, 6, 6), (10, 12, 12)}),
        # (-2, 3]: [-1, 3]: L0: 3; L5: 6, 8; L10: 12
        (True, False, {(0, 3, 3), (5, 6, 6), (5, 8, 8), (10, 12, 12)}),
        # [-2, 3): [-2, 2]: L0: -2; L5: 3, 6; L10: 8, 12
        (False, True, {(0, -2, 0), (5, 3, 5), (5, 6, 6), (10, 8, 10), (10, 12, 12)}),
    ],
)
def test_exclusive_bounds_move_by_one(lower_exclusive, upper_exclusive, expected):
    got = pairs(
        interval(BASIC, -2, 3, lower_exclusive=lower_exclusive, upper_exclusive=upper_exclusive)
    )
    assert got == Counter(expected)


def test_negative_bounds_and_their_cleanup_timers():
    # between(-5, -1): right ∈ [l - 5, l - 1]. L0: -2; L5: 3; L10: 6, 8
    result = interval(BASIC, -5, -1)
    assert pairs(result) == Counter({(0, -2, 0): 1, (5, 3, 5): 1, (10, 6, 10): 1, (10, 8, 10): 1})
    timers = [
        (r.detail[1], r.ts)
        for r in result.trace.records("timer_registered", operator="interval_join")
    ]
    # left: upper -1 <= 0, so at ts; right: -lower = 5 > 0, so at ts + 5
    assert timers == [("CLEANUP_LEFT", t) for t in (0, 5, 10)] + [
        ("CLEANUP_RIGHT", t + 5) for t in (-2, 3, 6, 8, 12)
    ]


def test_positive_bounds_cleanup_timers_and_buckets_removed():
    # between(2, 4): left at ts + 4; right: lower 2 > 0, so at ts; at MAX all fire
    result = interval(BASIC, 2, 4)
    trace = result.trace
    registered = [(r.detail[1], r.ts) for r in trace.records("timer_registered")]
    assert registered == [("CLEANUP_LEFT", t + 4) for t in (0, 5, 10)] + [
        ("CLEANUP_RIGHT", t) for t in (-2, 3, 6, 8, 12)
    ]
    removed = sorted((r.detail[0], r.ts, r.detail[1]) for r in trace.records("buffer_removed"))
    # left bucket = timer - upper; right bucket = timer (lower > 0)
    assert removed == sorted(
        [("left", t, 1) for t in (0, 5, 10)] + [("right", t, 1) for t in (-2, 3, 6, 8, 12)]
    )
    # L0: [2, 4]: 3; L5: [7, 9]: 8; L10: [12, 14]: 12
    assert pairs(result) == Counter({(0, 3, 3): 1, (5, 8, 8): 1, (10, 12, 12): 1})


@pytest.mark.parametrize(("watermark", "joined"), [(12, True), (13, False)])
def test_cleanup_fires_when_the_watermark_reaches_ts_plus_upper(watermark, joined):
    # between(-2, 3): L10's cleanup timer is at 13. A right element at 13 arriving when the
    # watermark is 13 is not late (13 < 13 is false) but L10's bucket is gone: no pair. At
    # watermark 12 the timer has not fired, and they join.
    events = [
        ("L", "k", 10, "l10"),
        ("L", "w", watermark, None),
        ("R", "w", watermark, None),
        ("R", "k", 13, "r13"),
    ]
    result = interval(events, -2, 3)
    assert pairs(result) == (Counter({("l10", "r13", 13): 1}) if joined else Counter())
    fired = [r.ts for r in result.trace.records("timer_fired") if r.watermark == watermark]
    assert fired == ([] if joined else [13])


def test_late_elements_of_either_side_are_dropped_or_sent_to_their_side_output():
    events = [
        ("L", "w", 10, None),
        ("R", "w", 10, None),
        ("L", "k", 9, "l9"),  # 9 < 10: late, dropped (no left tag)
        ("L", "k", 10, "l10"),  # at the watermark: not late, buffered
        ("R", "k", 9, "r9"),  # late: the right side output, at its own timestamp
        ("R", "k", 11, "r11"),  # joins l10 (11 ∈ [10 - 2, 10 + 3])
    ]
    result = interval(events, -2, 3, late_right=True)
    assert pairs(result) == Counter({("l10", "r11", 11): 1})
    assert [(r.value, r.timestamp) for r in result.outputs["late_right"]] == [(("k", 9, "r9"), 9)]
    trace = result.trace
    assert [(r.ts, r.detail) for r in trace.records("late_dropped")] == [(9, ("k", 9, "l9"))]
    assert [(r.detail[0], r.ts) for r in trace.records("buffered")] == [("left", 10), ("right", 11)]
    fates = element_fates(open_trace(trace), "interval_join")
    # l10 and r11: ts <= watermark 10? l10 is (late in the kit's words, accepted); r11 on time
    assert list(fates["fate"]) == ["dropped", "late, accepted", "side output", "on time"]
    left = interval(events, -2, 3, late_left=True)
    assert [(r.value, r.timestamp) for r in left.outputs["late_left"]] == [(("k", 9, "l9"), 9)]
    assert [r.ts for r in left.trace.records("late_dropped")] == [9]  # r9 dropped now


def test_the_join_watermark_is_the_minimum_of_both_inputs():
    events = [
        ("L", "w", 20, None),  # left at 20, right still at MIN: the join's watermark is MIN
        ("L", "k", 5, "l5"),  # not late
        ("R", "k", 6, "r6"),  # joins l5 (between(0, 5))
        ("R", "w", 20, None),  # now 20
        ("L", "k", 19, "l19"),  # 19 < 20: late, dropped
        ("R", "k", 20, "r20"),  # not late; l19 was never buffered
    ]
    result = interval(events, 0, 5)
    assert pairs(result) == Counter({("l5", "r6", 6): 1})
    marks = [r.ts for r in result.trace.records("watermark", operator="interval_join")]
    assert marks == [20, wv.MAX]
    assert [r.detail[2] for r in result.trace.records("late_dropped")] == ["l19"]


def test_an_empty_exclusive_interval_joins_nothing():
    # (5, 5] is empty, checked only before moving the bound (as Flink): no error, no pairs
    # (the join's argument errors are in tests/test_bad_inputs.py)
    assert pairs(interval(BASIC, 5, 5, lower_exclusive=True)) == Counter()


def test_interval_join_trace_kinds_in_order():
    result = interval([("L", "k", 0, "l0"), ("R", "k", 1, "r1")], 0, 2)
    kinds = [
        (r.kind, r.ts)
        for r in result.trace.records(operator="interval_join")
        if r.kind not in ("channel_watermark", "watermark")
    ]
    assert kinds == [
        ("element", 0),
        ("buffered", 0),
        ("timer_registered", 2),  # left: 0 + upper 2
        ("element", 1),
        ("buffered", 1),
        ("joined", 1),
        ("emitted", 1),
        ("timer_registered", 1),  # right: lower 0 is not < 0, so at ts
        ("timer_fired", 1),  # at the end of input (MAX)
        ("buffer_removed", 1),
        ("timer_fired", 2),
        ("buffer_removed", 0),
    ]


def test_interval_join_survives_a_failure_from_its_checkpoint():
    def run(**kw):
        env, a, b = _inputs(BASIC)
        env.enable_checkpointing(at_records=[3])
        a.key_by(lambda e: e[0]).interval_join(b.key_by(lambda e: e[0])).between(-2, 3).process(
            Pairs()
        ).sink_to("pairs")
        return env.execute(**kw)

    assert pairs(run(fail_at=6)) == pairs(run()) == pairs(interval(BASIC, -2, 3))


def test_parallel_interval_join_routes_both_inputs_by_key():
    events = [(("L", "R")[i % 2], "abc"[i % 3], i, i) for i in range(30)]

    def run(parallelism):
        env, a, b = _inputs(events)
        a.key_by(lambda e: e[0]).interval_join(b.key_by(lambda e: e[0])).between(-4, 4).process(
            Pairs()
        ).set_parallelism(parallelism).sink_to("pairs")
        return env.execute()

    assert pairs(run(3)) == pairs(run(1))
    assert sum(pairs(run(1)).values()) > 10


# -- random cases against a brute-force model --------------------------------------------------


def model_interval(events, lower, upper, lower_exclusive, upper_exclusive):
    """An element-by-element formulation, no timers: an element is buffered unless its
    timestamp is below the join's watermark (min of both inputs' highest); it joins the other
    side's live elements of its key within the bounds; it dies at the first rise of the
    watermark to its cleanup time (ts + upper / ts - lower when positive, else ts)."""
    lo = lower + 1 if lower_exclusive else lower
    hi = upper - 1 if upper_exclusive else upper
    marks = {"L": wv.MIN, "R": wv.MIN}
    wm = wv.MIN
    alive: list[tuple[str, str, int, object, int]] = []
    got, late = Counter(), []
    for side, key, ts, value in events:
        if key == "w":
            marks[side] = max(marks[side], ts)
            if min(marks.values()) > wm:
                wm = min(marks.values())
                alive = [e for e in alive if e[4] > wm]
            continue
        if ts < wm:
            late.append((side, value))
            continue
        for s, k, t, v, _ in alive:
            if s != side and k == key:
                left_ts, right_ts = (ts, t) if side == "L" else (t, ts)
                if left_ts + lo <= right_ts <= left_ts + hi:
                    pair = (value, v) if side == "L" else (v, value)
                    got[(*pair, max(ts, t))] += 1
        cleanup = ts + (hi if side == "L" else -lo)
        alive.append((side, key, ts, value, cleanup if cleanup > ts else ts))
    return got, late


def check_record_order(trace) -> None:
    """The trace schema's rule 6: after an interval join's element, either one late record, or
    buffered, (joined, emitted)* and its cleanup timer; a cleanup timer's firing, then its
    bucket's removal."""
    kinds = [
        r.kind
        for r in trace.records(operator="interval_join")
        if r.kind not in ("channel_watermark", "watermark")
    ]
    i = 0
    while i < len(kinds):
        if kinds[i] == "element":
            if kinds[i + 1] in ("late_dropped", "side_output"):
                i += 2
                continue
            assert kinds[i + 1] == "buffered"
            i += 2
            while kinds[i] == "joined":
                assert kinds[i + 1] == "emitted"
                i += 2
            assert kinds[i] == "timer_registered"
            i += 1
        else:
            assert kinds[i : i + 2] == ["timer_fired", "buffer_removed"], kinds[i : i + 2]
            i += 2


def random_events(rnd: random.Random) -> list[tuple]:
    marks = {"L": 0, "R": 0}
    events = []
    for i in range(rnd.randint(5, 40)):
        side = rnd.choice("LR")
        if rnd.random() < 0.25:
            marks[side] += rnd.choice((0, 1, 2, 4))
            events.append((side, "w", marks[side], None))
        else:
            ts = min(marks.values()) + rnd.randint(-3, 8)
            events.append((side, rnd.choice("ab"), ts, i))
    return events


def test_random_interval_joins_match_the_model():
    rnd = random.Random(28)
    total = 0
    for _ in range(150):
        events = random_events(rnd)
        lower = rnd.randint(-6, 4)
        upper = lower + rnd.choice((0, 1, 3, 6))
        lx, ux = rnd.random() < 0.3, rnd.random() < 0.3
        result = interval(
            events, lower, upper, lower_exclusive=lx, upper_exclusive=ux, late_right=True
        )
        expected, late = model_interval(events, lower, upper, lx, ux)
        assert pairs(result) == expected, (events, lower, upper, lx, ux)
        check_record_order(result.trace)
        dropped = [("L", r.detail[2]) for r in result.trace.records("late_dropped")]
        side = [("R", r.value[2]) for r in result.outputs.get("late_right", [])]
        assert sorted(dropped + side, key=repr) == sorted(late, key=repr)
        total += sum(expected.values())
    assert total > 300  # the cases join a fair number of pairs


# -- window join / coGroup ---------------------------------------------------------------------


def window_join(events, assigner, *, co_group=False, lateness=0) -> wv.JobExecutionResult:
    env, a, b = _inputs(events)
    two = a.co_group(b) if co_group else a.join(b)
    two = two.where(lambda e: e[0]).equal_to(lambda e: e[0]).window(assigner)
    two = two.allowed_lateness(lateness)
    if co_group:
        out = two.apply(
            lambda first, second, out: out.collect(
                (sorted(e[2] for e in first), sorted(e[2] for e in second))
            )
        )
    else:
        out = two.apply(lambda x, y: (x[2], y[2]))
    out.sink_to("out")
    return env.execute()


def outputs(result) -> Counter:
    return Counter((repr(r.value), r.timestamp) for r in result.outputs["out"])


JOIN_EVENTS = [
    ("L", "k", 1, "l1"),
    ("L", "k", 4, "l4"),
    ("L", "j", 2, "j2"),
    ("R", "k", 3, "r3"),
    ("R", "k", 12, "r12"),
]


def test_window_join_pairs_each_window_at_its_max_timestamp():
    result = window_join(JOIN_EVENTS, wv.TumblingEventTimeWindows.of(10))
    # [0, 10) of k: l1, l4 × r3 at 9; j has no right side; [10, 20) of k has no left side
    assert outputs(result) == Counter({(repr(("l1", "r3")), 9): 1, (repr(("l4", "r3")), 9): 1})


def test_co_group_calls_the_function_for_every_window_even_with_one_side_empty():
    result = window_join(JOIN_EVENTS, wv.TumblingEventTimeWindows.of(10), co_group=True)
    assert outputs(result) == Counter(
        {
            (repr((["l1", "l4"], ["r3"])), 9): 1,
            (repr((["j2"], [])), 9): 1,
            (repr(([], ["r12"])), 19): 1,
        }
    )


def test_session_window_join_merges_across_both_inputs():
    events = [("L", "k", 1, "l1"), ("R", "k", 3, "r3"), ("L", "k", 10, "l10")]
    result = window_join(events, wv.EventTimeSessionWindows.with_gap(3), co_group=True)
    # l1 [1, 4) and r3 [3, 6) merge into [1, 6): fires at 5; l10 alone in [10, 13): at 12
    assert outputs(result) == Counter(
        {(repr((["l1"], ["r3"])), 5): 1, (repr((["l10"], [])), 12): 1}
    )


@pytest.mark.parametrize(("lateness", "expected"), [
    # allowed lateness 0: l5 arrives at watermark 15 past [0, 10)'s cleanup (9): dropped
    (0, {(repr(("l1", "r3")), 9): 1}),
    # 10: cleanup 19 > 15: accepted, and the window fires again with all its pairs
    (10, {(repr(("l1", "r3")), 9): 2, (repr(("l5", "r3")), 9): 1}),
])  # fmt: skip
def test_window_join_late_element_within_allowed_lateness_fires_the_window_again(
    lateness, expected
):
    events = [
        ("L", "k", 1, "l1"),
        ("R", "k", 3, "r3"),
        ("L", "w", 15, None),
        ("R", "w", 15, None),
        ("L", "k", 5, "l5"),
    ]
    result = window_join(events, wv.TumblingEventTimeWindows.of(10), lateness=lateness)
    assert outputs(result) == Counter(expected)
    answer = wv.why_dropped(result.trace, 2, source="inL")
    assert ("Dropped" if lateness == 0 else "Late but accepted") in answer.sentence


def test_random_window_joins_without_late_data_pair_every_window():
    rnd = random.Random(7)
    for _ in range(40):
        size = rnd.randint(2, 9)
        events = [(rnd.choice("LR"), rnd.choice("ab"), rnd.randint(0, 30), i) for i in range(30)]
        expected = Counter()
        for s1, k1, t1, v1 in events:
            for s2, k2, t2, v2 in events:
                if s1 == "L" and s2 == "R" and k1 == k2 and t1 // size == t2 // size:
                    expected[(repr((v1, v2)), t1 // size * size + size - 1)] += 1
        result = window_join(events, wv.TumblingEventTimeWindows.of(size))
        assert outputs(result) == expected


# -- the trace and the charts ------------------------------------------------------------------


LATE_EVENTS = [
    ("L", "k", 0, "l0"),
    ("R", "k", 3, "r3"),
    ("L", "k", 5, "l5"),
    ("R", "w", 9, None),
    ("L", "w", 8, None),
    ("R", "k", 6, "r6"),  # late (6 < 8): dropped
    ("L", "k", 3, "l3"),  # late: side output
    ("R", "k", 12, "r12"),
    ("L", "k", 10, "l10"),
]


def test_charts_draw_an_interval_join_run():
    result = interval(LATE_EVENTS, -2, 3, late_left=True)
    view = open_trace(result.trace)
    fates = element_fates(view, "interval_join")
    assert list(fates["fate"]) == [
        "on time", "on time", "on time", "dropped", "side output", "on time", "on time",
    ]  # fmt: skip
    chart = wv.timeline(result, operator="interval_join", view="timeline")
    spec = chart.to_dict()
    text = repr(spec)
    for word in ("on time", "dropped", "side output"):
        assert word in text
    # the pairs at the output's timestamp (the larger of the two), the removed buckets at theirs
    marks = [
        (row["what"], row["x"])
        for rows in spec["datasets"].values()
        for row in rows
        if row.get("what") in ("joined", "buffer removed")
    ]
    # l0 x r3 at 3, l5 x r3 at 5, l10 x r12 at 12 (between(-2, 3)); buckets: left 0, 5 at
    # watermark 8 (timers 3, 8), right 3 (timer 5); at MAX left 10, right 12
    assert sorted(marks) == sorted(
        [("joined", 3), ("joined", 5), ("joined", 12)]
        + [("buffer removed", t) for t in (0, 3, 5, 10, 12)]
    )
    assert "3 pairs joined (at the output's timestamp)" in text
    timers = repr(wv.timers_chart(result, operator="interval_join").to_dict())
    assert "CLEANUP_LEFT" in timers and "CLEANUP_RIGHT" in timers
    assert "nothing to draw" in repr(wv.window_lanes(result, operator="interval_join").to_dict())
    answer = wv.why_dropped(result.trace, 2, source="inR")  # r6
    assert answer.sentence.startswith("Late at 'interval_join' (timestamp 6, watermark 8")
    assert "dropped" in answer.sentence
    buffered = wv.why_dropped(result.trace, 1, source="inL")  # l5: joined r3
    assert "joined with 1 buffered element(s)" in buffered.sentence
    assert "cleanup timer at 8" in buffered.sentence
    late = wv.why_dropped(result.trace, 3, source="inL")  # l3
    assert late.sentence.startswith("Late at 'interval_join' (timestamp 3, watermark 8")
    assert late.sentence.endswith("joined with nothing and sent to the side output 'late-left'.")


def test_charts_and_why_read_a_window_join_as_a_window_operator():
    result = window_join(LATE_EVENTS, wv.TumblingEventTimeWindows.of(10), co_group=True)
    assert "window" in window_operators(open_trace(result.trace))
    for chart in (wv.timeline, wv.window_lanes, wv.timers_chart):
        assert "nothing to draw" not in repr(chart(result, operator="window").to_dict())
    answer = wv.why_fired(result.trace, "k", (0, 10))
    assert "event-time timer at 9" in answer.sentence


def test_the_same_join_gives_the_same_trace():
    one = interval(LATE_EVENTS, -2, 3, late_left=True).trace.to_json()
    two = interval(LATE_EVENTS, -2, 3, late_left=True).trace.to_json()
    assert one == two


BIG = wv.MAX


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        # the left element probes [ts, ts + 10]: ts + 10 wraps to MIN + 4, so nothing is in it
        ([("R", "k", BIG - 3, "r"), ("L", "k", BIG - 5, "l")], Counter()),
        # the right element probes [ts - 10, ts]: no wrap, the pair is found
        ([("L", "k", BIG - 5, "l"), ("R", "k", BIG - 3, "r")], Counter({("l", "r", BIG - 3): 1})),
        # the left cleanup timer wraps to MIN + 4 and fires at watermark 0: the bucket is gone
        (
            [("L", "k", BIG - 5, "l"), ("L", "w", 0, None), ("R", "w", 0, None),
             ("R", "k", BIG - 5, "r")],
            Counter(),
        ),
    ],
)  # fmt: skip
def test_bounds_near_max_wrap_as_javas_long(events, expected):
    # Flink 2.3.0 gives exactly these (tests/flink/joins.py edge cases, run in real Flink)
    result = interval(events, 0, 10)
    assert pairs(result) == expected
    left_timers = [
        r.ts for r in result.trace.records("timer_registered") if r.detail[1] == "CLEANUP_LEFT"
    ]
    assert left_timers == [wv.MIN + 4]


def test_window_join_graph_is_flinks_taggers_union_keyed_window():
    _env, a, b = _inputs(JOIN_EVENTS)
    a.set_parallelism(1)
    out = (
        a.join(b)
        .where(lambda e: e[0])
        .equal_to(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(10))
        .apply(lambda x, y: (x[2], y[2]))
    )
    window = out.node
    union = window.inputs[0]
    assert (window.kind, union.kind) == ("window", "union")
    taggers = union.inputs
    assert [t.kind for t in taggers] == ["map", "map"]
    assert [t.inputs[0] for t in taggers] == [a.node, b.node]
    assert [t.parallelism for t in taggers] == [a.node.parallelism, b.node.parallelism]
    assert window.spec.function_kind == "apply"
    assert window.spec.key_selector(wv.TaggedUnion(two=("j", 1, "x"), is_one=False)) == "j"


def test_parallel_window_join_gives_the_same_pairs():
    events = [(("L", "R")[i % 2], "abcd"[i % 4], i % 23, i) for i in range(40)]

    def run(parallelism):
        env, a, b = _inputs(events)
        two = a.co_group(b).where(lambda e: e[0]).equal_to(lambda e: e[0])
        out = two.window(wv.SlidingEventTimeWindows.of(10, 5)).apply(
            lambda f, s, out: out.collect((sorted(e[2] for e in f), sorted(e[2] for e in s)))
        )
        out.set_parallelism(parallelism).sink_to("out")
        return env.execute()

    assert outputs(run(3)) == outputs(run(1))
    assert len(run(1).outputs["out"]) > 10
