"""The timer-loop guard (``winviz.timers``): a timer that re-registers itself at the time it
fires with nothing changing would keep a run going for ever (real Flink hangs: FLINK-35069).
The guard raises ``TimerLoopError`` — and only then: jobs whose timers re-register themselves
but change something on the way, and user code, are left alone."""

from __future__ import annotations

import html
from typing import Any

import pytest
from jobs import bounded, global_sums

import winviz as wv
from winviz.errors import IllegalStateError, InputError, TimerLoopError
from winviz.timers import InternalTimer, InternalTimerService


def _job(trigger: wv.Trigger, data, arrivals, assigner=None, trace: bool = True):
    env = wv.StreamExecutionEnvironment(trace=trace)
    (
        env.from_collection(data, arrival_times=arrivals)
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(assigner or wv.TumblingEventTimeWindows.of(5000))
        .trigger(trigger)
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .sink_to("out")
    )
    return env


def _outputs(result) -> list[tuple[Any, int, int]]:
    return [(r.value, r.timestamp, r.processing_time) for r in result.outputs["out"]]


def test_flink_35069_continuous_processing_time_trigger_on_an_event_time_window_is_caught():
    env = _job(
        wv.ContinuousProcessingTimeTrigger.of(2000),
        [("A", 500), ("A", 1200), ("A", 6000)],
        [0, 1000, 5000],
    )
    with pytest.raises(TimerLoopError) as info:
        env.execute()
    err = info.value
    assert isinstance(err, IllegalStateError)
    message = str(err)
    assert message == (
        "timer loop in operator 'window': trigger ContinuousProcessingTimeTrigger(2000) keeps "
        "firing the processing-time timers of key 'A', window [0, 5000) in one advance of the "
        "processing time to 4999: the one at 4999 registers itself again each time it fires, "
        "and nothing else changes, so it would fire for ever and the processing time could "
        "never move on. Real Flink hangs here too (FLINK-35069): at the window's max timestamp "
        "(4999) "
        "ContinuousProcessingTimeTrigger registers its next fire time min(time + interval, max "
        "timestamp), the same time again; the window is cleaned up only when the watermark "
        "passes it, which cannot happen while the timer keeps firing. Use "
        "ContinuousEventTimeTrigger on event-time windows, or processing-time windows (their "
        "cleanup timer removes the trigger's timer). The firing budget: 100000 firings per key "
        "and window in one advance (env.set_timer_firing_budget(n))."
    )
    assert (err.operator, err.domain, err.key, err.timestamp) == ("window", "processing", "A", 4999)
    assert (err.namespace.start, err.namespace.end) == (0, 5000)
    # what happened before the loop is kept: fires at 2000, 4000, then twice at 4999
    assert _outputs(err.partial_result) == [
        (("A", 1700), 4999, 2000),
        (("A", 1700), 4999, 4000),
        (("A", 1700), 4999, 4999),
        (("A", 1700), 4999, 4999),
    ]
    trace = err.trace
    assert trace[-1].kind == "error" and trace[-1].detail == message
    fired = [(r.ts, r.proc_time) for r in trace.records("timer_fired")]
    assert fired == [(2000, 2000), (4000, 4000), (4999, 4999), (4999, 4999)]
    assert len(trace) == 42


def test_the_guard_also_stops_a_run_without_a_trace():
    env = _job(
        wv.ContinuousProcessingTimeTrigger.of(2000),
        [("A", 500), ("A", 1200), ("A", 6000)],
        [0, 1000, 5000],
        trace=False,
    )
    with pytest.raises(TimerLoopError) as info:
        env.execute()
    assert info.value.trace is None
    assert len(info.value.partial_result.outputs["out"]) == 4


def test_two_keys_looping_at_the_same_time_are_caught():
    # A and B take turns at 4999 (their timers interleave): A's configuration comes back first
    env = _job(
        wv.ContinuousProcessingTimeTrigger.of(2000),
        [("A", 500), ("B", 700), ("A", 6000)],
        [0, 10, 5000],
    )
    with pytest.raises(TimerLoopError) as info:
        env.execute()
    assert info.value.key == "A"
    fired_at_end = [r.key for r in info.value.trace.records("timer_fired") if r.ts == 4999]
    assert fired_at_end == ["A", "B", "A"]


def test_a_purging_trigger_is_caught_too():
    # 1200 arrives at 4500: the first fire at 4999 emits and purges it, the second finds the
    # key's configuration (no contents, fire time 4999, the timer at 4999) as the first left it
    env = _job(
        wv.PurgingTrigger.of(wv.ContinuousProcessingTimeTrigger.of(2000)),
        [("A", 500), ("A", 1200), ("A", 6000)],
        [0, 4500, 5000],
    )
    with pytest.raises(TimerLoopError) as info:
        env.execute()
    assert "trigger PurgingTrigger(ContinuousProcessingTimeTrigger(2000))" in str(info.value)
    assert "FLINK-35069" in str(info.value)
    assert _outputs(info.value.partial_result) == [
        (("A", 500), 4999, 2000),
        (("A", 1200), 4999, 4999),
    ]
    fired = [r.ts for r in info.value.trace.records("timer_fired")]
    assert fired == [2000, 4000, 4999, 4999]


def test_processing_time_windows_with_the_same_trigger_finish():
    # the window's cleanup timer (processing time 4999) deletes the trigger's timer: no loop
    # (the input ends at 5000, before any processing timer of [5000, 10000) is due)
    result = _job(
        wv.ContinuousProcessingTimeTrigger.of(2000),
        [("A", 500), ("A", 1200), ("A", 6000)],
        [0, 1000, 5000],
        assigner=wv.TumblingProcessingTimeWindows.of(5000),
    ).execute()
    assert _outputs(result) == [
        (("A", 1700), 4999, 2000),
        (("A", 1700), 4999, 4000),
        (("A", 1700), 4999, 4999),
    ]


def test_continuous_event_time_trigger_finishes():
    result = _job(
        wv.ContinuousEventTimeTrigger.of(2000),
        [("A", 500), ("A", 1200), ("A", 6000)],
        [0, 1000, 5000],
    ).execute()
    # watermark 5999 fires 2000, 4000 and 4999 of [0, 5000); MAX fires 8000 and 9999
    assert _outputs(result) == [(("A", 1700), 4999, 5000)] * 3 + [(("A", 6000), 9999, 5000)] * 2


# -- the criterion, on the timer service itself ----------------------------------------------


class _Keyed:
    """A minimal key context and target: ``callback(op, timer)`` runs on every firing."""

    def __init__(self, callback) -> None:
        self.current_key: Any = None
        self.state: dict[tuple[Any, str], Any] = {}
        self.callback = callback
        self.fired: list[tuple[Any, Any, int]] = []
        self.service = InternalTimerService("t", self, self)
        self.service.loop_guard = True

    def on_processing_time(self, timer: InternalTimer) -> None:
        self.fired.append((timer.key, timer.namespace, timer.timestamp))
        self.callback(self, timer)

    on_event_time = on_processing_time

    def key_state(self, key: Any) -> dict[str, Any]:
        return {name: v for (k, name), v in self.state.items() if k == key}

    def loop_note(self, timer: InternalTimer, domain: str) -> str:
        return f"(note on {timer.timestamp}, {domain})"


def _loop(domain: str, key: str, namespace: str, ts: int, now: int) -> str:
    """The exact ``TimerLoopError`` text of a timer of ``_Keyed`` found re-registering
    itself with nothing changing (no operator name, no code: the service's own)."""
    clock = "watermark" if domain == "event" else "processing time"
    return (
        f"^timer loop in operator 't': keeps firing the {domain}-time timers of key {key!r}, "
        f"namespace {namespace!r} in one advance of the {clock} to {now}: the one at {ts} "
        "registers itself again each time it fires, and nothing else changes, so it would fire "
        f"for ever and the {clock} could never move on. \\(note on {ts}, {domain}\\) The firing "
        "budget: 100000 firings per key and namespace in one advance "
        "\\(env.set_timer_firing_budget\\(n\\)\\).$"
    )


def test_a_timer_that_re_registers_itself_while_its_state_changes_is_no_loop():
    def callback(op, timer):
        n = op.state.get((timer.key, "n"), 0) + 1
        op.state[(timer.key, "n")] = n
        if n < 5:
            op.service.register_processing_time_timer(timer.namespace, timer.timestamp)

    op = _Keyed(callback)
    op.current_key = "k"
    op.service.register_processing_time_timer("w", 10)
    op.service.advance_processing_time(10)
    assert op.fired == [("k", "w", 10)] * 5
    assert op.state == {("k", "n"): 5}


def test_a_timer_that_re_registers_itself_unchanged_is_a_loop_in_both_domains():
    def callback(op, timer):
        op.state[(timer.key, "seen")] = True
        if timer.namespace == "event":
            op.service.register_event_time_timer(timer.namespace, timer.timestamp)
        else:
            op.service.register_processing_time_timer(timer.namespace, timer.timestamp)

    op = _Keyed(callback)
    op.current_key = "k"
    op.service.register_processing_time_timer("processing", 7)
    with pytest.raises(TimerLoopError, match=_loop("processing", "k", "processing", 7, 9)):
        op.service.advance_processing_time(9)
    # first firing changes the state (seen), the second does not: caught after the second
    assert op.fired == [("k", "processing", 7)] * 2

    op = _Keyed(callback)
    op.current_key = "k"
    op.service.register_event_time_timer("event", 3)
    with pytest.raises(TimerLoopError, match=_loop("event", "k", "event", 3, 100)):
        op.service.advance_watermark(100)
    assert op.fired == [("k", "event", 3)] * 2


def test_two_timers_of_one_key_taking_turns_are_a_loop():
    # x flips between the two timers; after each one the key's configuration repeats
    def callback(op, timer):
        op.state[(timer.key, "x")] = timer.namespace
        op.service.register_processing_time_timer(timer.namespace, timer.timestamp)

    op = _Keyed(callback)
    op.current_key = "k"
    op.service.register_processing_time_timer("a", 5)
    op.service.register_processing_time_timer("b", 5)
    with pytest.raises(TimerLoopError, match=_loop("processing", "k", "a", 5, 5)):
        op.service.advance_processing_time(5)
    assert op.fired == [("k", "a", 5), ("k", "b", 5), ("k", "a", 5)]


def test_another_key_changing_its_state_does_not_hide_a_loop():
    def callback(op, timer):
        if timer.key == "counter":
            n = op.state.get(("counter", "n"), 0) + 1
            op.state[("counter", "n")] = n
            if n < 50:
                op.service.register_processing_time_timer(timer.namespace, timer.timestamp)
        else:
            op.service.register_processing_time_timer(timer.namespace, timer.timestamp)

    op = _Keyed(callback)
    for key in ("counter", "stuck"):
        op.current_key = key
        op.service.register_processing_time_timer("w", 1)
    with pytest.raises(TimerLoopError, match=_loop("processing", "stuck", "w", 1, 1)):
        op.service.advance_processing_time(1)
    assert op.fired == [("counter", "w", 1), ("stuck", "w", 1)] * 2


def test_user_code_is_never_guarded():
    # a KeyedProcessFunction keeping its count in a Python attribute re-registers the same
    # timer with unchanged keyed state three times, then stops: legitimate, and it finishes
    class Refire(wv.KeyedProcessFunction):
        def __init__(self) -> None:
            self.count = 0

        def process_element(self, value, ctx, out):
            ctx.timer_service().register_processing_time_timer(100)

        def on_timer(self, timestamp, ctx, out):
            self.count += 1
            out.collect(self.count)
            if self.count < 4:
                ctx.timer_service().register_processing_time_timer(100)

    env = wv.StreamExecutionEnvironment()
    env.from_collection([("A", 1)], arrival_times=[0]).key_by(lambda e: e[0]).process(
        Refire()
    ).sink_to("out")
    result = env.execute(until_processing_time=200)
    assert [(r.value, r.processing_time) for r in result.outputs["out"]] == [
        (1, 100),
        (2, 100),
        (3, 100),
        (4, 100),
    ]


def test_a_user_trigger_is_never_guarded():
    class Thrice(wv.Trigger):
        """Re-fires at the same processing time three times, counting in an attribute."""

        def __init__(self) -> None:
            self.fires = 0

        def on_element(self, element, timestamp, window, ctx):
            ctx.register_processing_time_timer(100)
            return wv.TriggerResult.CONTINUE

        def on_processing_time(self, time, window, ctx):
            self.fires += 1
            if self.fires < 3:
                ctx.register_processing_time_timer(100)
            return wv.TriggerResult.FIRE

    result = _job(Thrice(), [("A", 500)], [0]).execute(until_processing_time=200)
    assert _outputs(result) == [(("A", 500), 4999, 100)] * 3


# -- chains of firings that re-arm a later due timer: the proof and the firing budget ---------


def _global(trigger: wv.Trigger, trace: bool = True, budget: int | None = None, n: int = 3):
    """The first ``n`` of [("A", 500) at 0, ("A", 1200) at 1000, ("A", 6000) at 5000] into
    GlobalWindows: the periodic watermarks are 499, 1199, 5999, then MAX at the end."""
    data, arrivals = [("A", 500), ("A", 1200), ("A", 6000)][:n], [0, 1000, 5000][:n]
    return global_sums(trigger, data, arrivals, budget=budget, trace=trace)


def test_continuous_event_time_trigger_on_global_windows_is_proved_endless_at_max():
    with pytest.raises(TimerLoopError) as info:
        _global(wv.ContinuousEventTimeTrigger.of(1000)).execute()
    err = info.value
    message = str(err)
    assert message == (
        "timer loop in operator 'window': trigger ContinuousEventTimeTrigger(1000) would fire "
        "at least 9223372036854769 more event-time timers of key 'A', window GlobalWindow in "
        "one advance of the watermark to MAX: the next one (at 7000) is due already, and each "
        "firing registers the next one 1000 ms later, up to min(watermark, the window's max "
        "timestamp MAX), more than the firing budget. Real Flink does the same: its timer "
        "service fires every timer at or before the watermark, including the ones these "
        "firings register, so it would fire this window about 9.2·10^15 times (emitting its "
        "contents each time) before the watermark could move on, and the job does not finish "
        "in practice. A window whose max timestamp is MAX (GlobalWindows) never stops "
        "re-arming at the end-of-input watermark MAX; give the window an end (e.g. "
        "TumblingEventTimeWindows), or fire on a count or once at the end of input "
        "(GlobalWindows.create_with_end_of_stream_trigger()). The firing budget: 100000 "
        "firings per key and window in one advance (env.set_timer_firing_budget(n))."
    )
    assert (err.operator, err.domain, err.key, err.timestamp) == ("window", "event", "A", 7000)
    assert err.namespace is wv.GLOBAL_WINDOW
    # 1000 fires at 1199; 2000..5000 at 5999; 6000 at MAX, then the chain is proved endless
    assert (
        _outputs(err.partial_result)
        == [(("A", 1700), wv.MAX, 1200)] + [(("A", 7700), wv.MAX, 5000)] * 5
    )
    fired = [(r.ts, r.watermark) for r in err.trace.records("timer_fired")]
    at_5999 = [(t, 5999) for t in (2000, 3000, 4000, 5000)]
    assert fired == [(1000, 1199), *at_5999, (6000, wv.MAX)]
    assert err.trace[-1].kind == "error" and err.trace[-1].detail == message


def test_a_purging_continuous_event_time_trigger_is_proved_endless_too():
    with pytest.raises(TimerLoopError) as info:
        _global(wv.PurgingTrigger.of(wv.ContinuousEventTimeTrigger.of(1000)), trace=False).execute()
    message = str(info.value)
    assert message.startswith(
        "timer loop in operator 'window': trigger PurgingTrigger(ContinuousEventTimeTrigger("
        "1000)) would fire at least 9223372036854769 more event-time timers of key 'A', window "
        "GlobalWindow in one advance of the watermark to MAX: the next one (at 7000) is due "
        "already"
    )
    assert "emitting its contents once and nothing after the purge each time" in message
    assert info.value.trace is None
    # each fire emits what came since the last one: 1700 at 1199, 6000 at 2000 (5999), MAX
    assert _outputs(info.value.partial_result) == [
        (("A", 1700), wv.MAX, 1200),
        (("A", 6000), wv.MAX, 5000),
    ]


def test_a_chain_within_the_budget_runs_and_one_past_it_is_refused():
    # TumblingEventTimeWindows.of(10000) + ContinuousEventTimeTrigger.of(1000): at 5999 the
    # timer at 2000 (registered at 1199) fires and chains 3000, 4000, 5000; at MAX 6000
    # (registered at 5999) chains 7000, 8000, 9000, and 9999 was registered by the elements:
    # at most 3 chained firings per advance
    def job(budget: int):
        env = wv.StreamExecutionEnvironment().set_timer_firing_budget(budget)
        (
            env.from_collection(
                [("A", 500), ("A", 1200), ("A", 6000)], arrival_times=[0, 1000, 5000]
            )
            .assign_timestamps_and_watermarks(bounded(0))
            .key_by(lambda e: e[0])
            .window(wv.TumblingEventTimeWindows.of(10000))
            .trigger(wv.ContinuousEventTimeTrigger.of(1000))
            .reduce(lambda a, b: (a[0], a[1] + b[1]))
            .sink_to("out")
        )
        return env.execute()

    result = job(3)
    assert [r.processing_time for r in result.outputs["out"]] == [1200] + [5000] * 9
    with pytest.raises(TimerLoopError) as info:
        job(2)
    assert (
        "would fire at least 3 more event-time timers of key 'A', window [0, 10000) in one "
        "advance of the watermark to 5999: the next one (at 3000) is due already, and each "
        "firing registers the next one 1000 ms later, up to min(watermark, the window's max "
        "timestamp 9999), more than the firing budget."
    ) in str(info.value)
    assert str(info.value).endswith(
        "The firing budget: 2 firings per key and window in one advance "
        "(env.set_timer_firing_budget(n))."
    )
    assert len(info.value.partial_result.outputs["out"]) == 2  # fired at 1000 and 2000


class _Creep(wv.Trigger):
    """A user trigger that fires at every event-time timer and registers the next one 1 ms
    later: at the watermark MAX it would run ~9.2·10^18 times."""

    def on_element(self, element, timestamp, window, ctx):
        ctx.register_event_time_timer(timestamp + 1)
        return wv.TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        ctx.register_event_time_timer(time + 1)
        return wv.TriggerResult.FIRE

    def __repr__(self) -> str:
        return "Creep()"


def test_the_budget_stops_a_user_trigger_that_re_arms_a_due_timer():
    with pytest.raises(TimerLoopError) as info:
        _global(_Creep(), budget=50, n=1).execute()
    err = info.value
    message = str(err)
    # the element registers 501; at MAX it fires, then 502..551 (50 firings of timers the
    # firings registered) and the next, 552, is refused
    assert message == (
        "timer loop in operator 'window': trigger Creep() fired 50 event-time timers of key "
        "'A', window GlobalWindow in one advance of the watermark to MAX: each was registered "
        "by an earlier firing of the same advance, and the next one (at 552) is due too. The "
        "chain may never end, and the watermark cannot move on until it does. Real Flink keeps "
        "firing the same way (its timer service fires every timer at or before the new time, "
        "including ones the firings register), so the job would hang there. If the chain is "
        "meant to be this long, raise the budget. The firing budget: 50 firings per key and "
        "window in one advance (env.set_timer_firing_budget(n))."
    )
    assert (err.key, err.timestamp, err.domain) == ("A", 552, "event")
    fired = [(r.ts, r.watermark) for r in err.trace.records("timer_fired")]
    assert fired == [(t, wv.MAX) for t in range(501, 552)]
    assert _outputs(err.partial_result) == [(("A", 500), wv.MAX, 0)] * 51


class _CreepToTheEnd(_Creep):
    """``_Creep`` that stops at the window's max timestamp."""

    def on_event_time(self, time, window, ctx):
        if time < window.max_timestamp():
            ctx.register_event_time_timer(time + 1)
        return wv.TriggerResult.FIRE


def test_a_user_trigger_re_arming_up_to_the_window_end_finishes_within_the_budget():
    def job(budget: int):
        env = wv.StreamExecutionEnvironment(trace=False).set_timer_firing_budget(budget)
        (
            env.from_collection([("A", 500)], arrival_times=[0])
            .assign_timestamps_and_watermarks(bounded(0))
            .key_by(lambda e: e[0])
            .window(wv.TumblingEventTimeWindows.of(1000))
            .trigger(_CreepToTheEnd())
            .reduce(lambda a, b: a)
            .sink_to("out")
        )
        return env.execute()

    # at MAX: 501 (registered by the element), then 502..998 (497 chained firings), then 999
    # (the cleanup timer, registered by the element too)
    assert len(job(497).outputs["out"]) == 499
    with pytest.raises(TimerLoopError, match=r"fired 496 event-time timers .* next one \(at 998\)"):
        job(496)


class _Tick(wv.KeyedProcessFunction):
    """Emits at every timer and registers the next one a second later."""

    def process_element(self, value, ctx, out):
        ctx.timer_service().register_event_time_timer(ctx.timestamp())

    def on_timer(self, timestamp, ctx, out):
        out.collect(timestamp)
        ctx.timer_service().register_event_time_timer(timestamp + 1000)


class _Again(wv.KeyedProcessFunction):
    """Registers the processing-time timer that is firing again, for ever."""

    def process_element(self, value, ctx, out):
        ctx.timer_service().register_processing_time_timer(100)

    def on_timer(self, timestamp, ctx, out):
        out.collect(timestamp)
        ctx.timer_service().register_processing_time_timer(timestamp)


def _process(function, budget: int, until: int | None = None):
    env = wv.StreamExecutionEnvironment().set_timer_firing_budget(budget)
    (
        env.from_collection([("A", 500), ("B", 700)], arrival_times=[0, 10])
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .process(function)
        .sink_to("out")
    )
    return env.execute(until_processing_time=until)


def test_the_budget_stops_a_keyed_process_function_re_arming_an_event_time_timer():
    with pytest.raises(TimerLoopError) as info:
        _process(_Tick(), budget=5)
    err = info.value
    assert str(err).startswith(
        "timer loop in operator 'process': _Tick.on_timer fired 5 event-time timers of key "
        "'B' in one advance of the watermark to MAX: each was registered by an earlier firing "
        "of the same advance, and the next one (at 6700) is due too."
    )
    assert str(err).endswith(
        "The firing budget: 5 firings per key and namespace in one advance "
        "(env.set_timer_firing_budget(n))."
    )
    assert (err.key, err.namespace, err.timestamp) == ("B", None, 6700)
    # the watermark 699 fires A's 500; at MAX B's 700 and A's 1500 (registered before), then
    # the chains interleave by time: A 2500..6500 and B 1700..5700 (5 each), B's 6700 refused
    values = [r.value for r in err.partial_result.outputs["out"]]
    assert values == [500, 700, 1500, 1700, 2500, 2700, 3500, 3700, 4500, 4700, 5500, 5700, 6500]


def test_the_budget_stops_a_keyed_process_function_re_registering_the_same_timer():
    # user code is not under the exact criterion (it may count in attributes), but the
    # budget still ends a chain that would never stop
    with pytest.raises(TimerLoopError) as info:
        _process(_Again(), budget=3, until=200)
    err = info.value
    assert str(err).startswith(
        "timer loop in operator 'process': _Again.on_timer fired 3 processing-time timers of "
        "key 'A' in one advance of the processing time to 100"
    )
    assert (err.domain, err.key, err.timestamp) == ("processing", "A", 100)
    # A and B take turns at 100: both first timers, then three chained each; A's 4th refused
    assert [r.value for r in err.partial_result.outputs["out"]] == [100] * 8
    assert err.trace[-1].kind == "error"


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (0, "timer_firing_budget must be at least 1"),
        (-1, "timer_firing_budget must be at least 1"),
        (1.5, "timer_firing_budget must be an int, got float"),
        (True, "timer_firing_budget must be an int, got bool"),
        ("10", "timer_firing_budget must be an int, got str"),
    ],
)
def test_the_budget_must_be_a_positive_int(budget, message):
    with pytest.raises(InputError) as info:
        wv.StreamExecutionEnvironment().set_timer_firing_budget(budget)
    assert str(info.value) == (
        f"field 'timer_firing_budget', value {budget!r}: {message} (expected an int >= 1)"
    )
    assert info.value.field == "timer_firing_budget" and info.value.value == budget


def test_an_explorer_shows_the_loop_in_place():
    from winviz.viz.explore import explore

    def pipeline(kind="tumbling"):
        env = wv.StreamExecutionEnvironment()
        assigner = (
            wv.GlobalWindows.create() if kind == "global" else wv.TumblingEventTimeWindows.of(5000)
        )
        (
            env.from_collection([("A", 500), ("A", 6000)], arrival_times=[0, 100])
            .assign_timestamps_and_watermarks(bounded(0))
            .key_by(lambda e: e[0])
            .window(assigner)
            .trigger(wv.ContinuousEventTimeTrigger.of(1000))
            .reduce(lambda a, b: (a[0], a[1] + b[1]))
            .sink_to("out")
        )
        return env.execute()

    ex = explore(pipeline, kind=["tumbling", "global"], charts=("timeline",))
    assert ex.error is None
    ex.controls["kind"].value = "global"
    assert isinstance(ex.error, TimerLoopError)
    assert "pipeline(kind='global') raised TimerLoopError" in html.unescape(ex.status.value)
    assert str(ex.error) in html.unescape(ex.status.value)
    ex.controls["kind"].value = "tumbling"
    assert ex.error is None
