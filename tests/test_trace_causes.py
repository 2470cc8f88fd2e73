"""``winviz.trace.causes.firing_causes`` against the rule in its docstring, applied record by
record (issue 11): random jobs with several window operators, session merges,
processing-time timers, and traces whose trigger records are missing."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

import winviz as wv
from winviz.trace import Trace
from winviz.trace.causes import TIMER_CALLS, firing_causes
from winviz.trace.coded import identity
from winviz.trace.columns import TraceColumns
from winviz.viz.trace_view import open_trace


def _strategy(bound: int) -> wv.WatermarkStrategy:
    return wv.WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(
        lambda e, _: e[1]
    )


def _job(seed: int) -> Trace:
    """Three window operators over random input: tumbling event-time windows with a
    continuous event-time trigger, event-time sessions with a count trigger (merges:
    ``on_merge`` calls), and processing-time tumbling windows with a continuous
    processing-time trigger; keys equal in Python and distinct in Java (1, True)."""
    rng = random.Random(seed)
    keys = [1, True, "a", "b", (1, "x")]
    n = rng.randint(80, 200)
    events = [(rng.choice(keys), i * 3 + rng.randint(0, 80), i) for i in range(n)]
    env = wv.StreamExecutionEnvironment()
    stream = env.from_collection(events, arrival_interval=rng.randint(1, 4))
    stream = stream.assign_timestamps_and_watermarks(_strategy(rng.choice([0, 10, 30])))
    (
        stream.key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(rng.choice([40, 90])))
        .trigger(wv.ContinuousEventTimeTrigger.of(rng.choice([7, 25])))
        .reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
        .sink_to("continuous")
    )
    (
        stream.key_by(lambda e: e[0])
        .window(wv.EventTimeSessionWindows.with_gap(rng.choice([5, 12])))
        .trigger(wv.CountTrigger.of(3))
        .allowed_lateness(rng.choice([0, 20]))
        .aggregate(wv.CountAggregate())
        .sink_to("sessions")
    )
    (
        stream.key_by(lambda e: e[0])
        .window(wv.TumblingProcessingTimeWindows.of(rng.choice([30, 55])))
        .trigger(wv.ContinuousProcessingTimeTrigger.of(rng.choice([4, 9])))
        .aggregate(wv.CountAggregate())
        .sink_to("processing")
    )
    return env.execute().trace


def _reference(c: TraceColumns, fired_rows: np.ndarray) -> tuple[list[Any], list[int]]:
    """The docstring's rule, record by record on whole decoded columns."""
    kinds = c.kind.decode().tolist()
    ops = c.operator.decode().tolist()
    keys, windows, details = c.key.decode().tolist(), c.window.decode().tolist(), c.detail
    calls: list[Any] = []
    timers: list[int] = []
    for f in fired_rows.tolist():
        call, timer = None, -1
        t = next(
            (i for i in range(f - 1, -1, -1) if kinds[i] == "trigger" and ops[i] == ops[f]), -1
        )
        if t >= 0:
            call = details[t][0]
            if call in TIMER_CALLS:
                j = next(
                    (
                        i
                        for i in range(t - 1, -1, -1)
                        if kinds[i] == "timer_fired" and ops[i] == ops[f]
                    ),
                    -1,
                )
                if (
                    j >= 0
                    and identity(keys[j]) == identity(keys[f])
                    and identity(windows[j]) == identity(windows[f])
                ):
                    timer = j
        calls.append(call)
        timers.append(timer)
    return calls, timers


def _check(c: TraceColumns, reference: TraceColumns) -> tuple[int, int, int]:
    """firing_causes of ``c`` is the reference's; (firings with a call, with a timer, with
    a timer call but no timer)."""
    fired = np.flatnonzero(reference.kind.decode() == "fired")
    calls, timers = firing_causes(c, fired)
    want_calls, want_timers = _reference(reference, fired)
    assert calls.tolist() == want_calls
    assert timers.tolist() == want_timers
    untimed = sum(c in TIMER_CALLS and t < 0 for c, t in zip(want_calls, want_timers, strict=True))
    return sum(x is not None for x in want_calls), sum(t >= 0 for t in want_timers), untimed


@pytest.mark.parametrize("seed", range(8))
def test_firing_causes_follow_the_rule_record_by_record(seed: int) -> None:
    trace = _job(seed)
    whole = trace.columns()
    for name in ("kind", "operator", "key", "window", "detail"):
        getattr(whole, name)
    # a first read (parts, values of some records only) and the whole columns agree
    called, timed, untimed = _check(_job(seed).columns(), whole)
    assert _check(whole, whole) == (called, timed, untimed)
    ops = set(whole.operator.decode()[whole.kind.decode() == "fired"].tolist())
    assert len(ops) == 3  # every operator fired
    calls = set(whole.detail[whole.kind.decode() == "trigger"].tolist())
    assert {c[0] for c in calls} >= {"on_element", "on_processing_time", "on_event_time"}
    assert 0 < timed < called and untimed == 0


@pytest.mark.parametrize("seed", range(3))
def test_firing_causes_are_the_same_when_the_fired_records_parts_are_read_first(seed: int) -> None:
    """The key and window of the fired records read for the timed firings only
    (``values_at``), or from the parts of the fired records a chart read first: the same
    causes, record by record."""
    whole = _job(seed).columns()
    for name in ("kind", "operator", "key", "window", "detail"):
        getattr(whole, name)
    parts = _job(seed).columns()
    assert parts.part("key", ("fired",)).values and parts.part("window", ("fired",)).values
    assert _check(parts, whole) == _check(_job(seed).columns(), whole)


@pytest.mark.parametrize("seed", range(4))
def test_firing_causes_without_some_trigger_or_timer_records(seed: int) -> None:
    frame = _job(seed).to_pandas()
    rng = np.random.default_rng(seed)
    kind = frame["kind"].to_numpy()
    drop = np.isin(kind, ["trigger", "timer_fired"]) & (rng.random(len(frame)) < 0.4)
    # and every trigger record of one operator: its firings have no call at all
    first = frame["operator"][kind == "fired"].iloc[0]
    drop |= (kind == "trigger") & (frame["operator"] == first).to_numpy()
    view = open_trace(frame[~drop].reset_index(drop=True))
    called, timed, untimed = _check(view.c, view.c)
    fired = int((kind == "fired").sum())
    assert 0 < timed < called < fired  # some firings lost their call,
    assert untimed > 0  # some their timer (the latest timer_fired is another window's)
