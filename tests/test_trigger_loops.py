"""The timer-loop guard (``winviz.timers``): a timer that re-registers itself at the time it
fires with nothing changing would keep a run going for ever (real Flink hangs: FLINK-35069).
The guard raises ``TimerLoopError`` — and only then: jobs whose timers re-register themselves
but change something on the way, and user code, are left alone."""

from __future__ import annotations

from typing import Any

import pytest

import winviz as wv
from winviz.errors import IllegalStateError, TimerLoopError
from winviz.timers import InternalTimer, InternalTimerService


def _job(trigger: wv.windows.Trigger, data, arrivals, assigner=None, trace: bool = True):
    env = wv.StreamExecutionEnvironment(trace=trace)
    (
        env.from_collection(data, arrival_times=arrivals)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(0).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
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
    assert message.startswith(
        "timer loop in operator 'window': trigger ContinuousProcessingTimeTrigger(2000) "
        "registers its processing-time timer at 4999 again each time it fires, for key 'A', "
        "window [0, 5000), at processing time 4999"
    )
    assert "FLINK-35069" in message
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

    def timer_loop_error(self, timer: InternalTimer, domain: str, now: int) -> TimerLoopError:
        return TimerLoopError(
            f"loop {timer.key} {timer.namespace} {timer.timestamp} {domain} {now}",
            operator="op",
            domain=domain,
            key=timer.key,
            namespace=timer.namespace,
            timestamp=timer.timestamp,
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
    with pytest.raises(TimerLoopError, match=r"^loop k processing 7 processing 9$"):
        op.service.advance_processing_time(9)
    # first firing changes the state (seen), the second does not: caught after the second
    assert op.fired == [("k", "processing", 7)] * 2

    op = _Keyed(callback)
    op.current_key = "k"
    op.service.register_event_time_timer("event", 3)
    with pytest.raises(TimerLoopError, match=r"^loop k event 3 event 100$"):
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
    with pytest.raises(TimerLoopError, match=r"^loop k a 5 processing 5$"):
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
    with pytest.raises(TimerLoopError, match=r"^loop stuck w 1 processing 1$"):
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
    class Thrice(wv.windows.Trigger):
        """Re-fires at the same processing time three times, counting in an attribute."""

        def __init__(self) -> None:
            self.fires = 0

        def on_element(self, element, timestamp, window, ctx):
            ctx.register_processing_time_timer(100)
            return wv.windows.TriggerResult.CONTINUE

        def on_processing_time(self, time, window, ctx):
            self.fires += 1
            if self.fires < 3:
                ctx.register_processing_time_timer(100)
            return wv.windows.TriggerResult.FIRE

    result = _job(Thrice(), [("A", 500)], [0]).execute(until_processing_time=200)
    assert _outputs(result) == [(("A", 500), 4999, 100)] * 3
