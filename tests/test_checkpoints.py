"""Timers survive failures (Flink's fourth promise about timers), watermarks do not: a
checkpoint snapshots source positions, keyed state, merging-window sets, both timer queues,
the clock, metrics and the outputs so far; after a failure the job restarts from it with every
watermark at MIN (operators, valves, generators: Flink checkpoints none of them) and replays
the input from the saved positions.

* Restarted from the beginning (no checkpoint yet, or one at cut 0) a run gives exactly the
  outputs, side outputs and metrics of an uninterrupted run.
* When the replay has no late data (timestamps in arrival order) every window gets the
  contents it gets in an uninterrupted run: the same outputs and metrics (firings may come
  later: the watermark starts again at MIN) — except sessions that touch, which the replay
  may merge (``touching_sessions``), as Flink does.
* A record that was late before the failure is on time in the replay: accepted, its window
  fires again, nothing reaches the late side output — as in Flink.

The property tests reuse tests/test_batching.py's random jobs (tumbling / sliding / session
windows, triggers, lateness, side output, reduce / aggregate / process, bounded
out-of-orderness, periodic intervals, one source / partitions / a union) and may add a
KeyedProcessFunction with event- and processing-time timers on the same stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise
from types import MappingProxyType

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from jobs import ASSIGNERS, bounded, build, jobs, keyed_window

import winviz as wv
from winviz.checkpoints import CompletedCheckpoint
from winviz.errors import (
    ArgumentTypeError,
    DamagedSnapshotError,
    InputError,
    SnapshotMismatchError,
)
from winviz.functions import KeyedProcessFunction, OutputTag

ECHO = OutputTag("echo")


class Timers(KeyedProcessFunction):
    """Counts per key; every element sets an event-time timer 30 ms after it (and, with
    ``processing``, a processing-time timer 45 ms from now); a firing emits the count and
    sometimes sets one more timer from ``on_timer`` (at an odd time: no endless chain at the
    final watermark MAX)."""

    def __init__(self, processing: bool) -> None:
        self.processing = processing

    def process_element(self, value, ctx, out):
        n = (ctx.state("n") or 0) + 1
        ctx.update_state("n", n)
        timers = ctx.timer_service()
        timers.register_event_time_timer(ctx.timestamp() + 30)
        if self.processing:
            timers.register_processing_time_timer(timers.current_processing_time() + 45)
        if n % 4 == 0:
            ctx.output(ECHO, (ctx.get_current_key(), n))

    def on_timer(self, timestamp, ctx, out):
        n = ctx.state("n") or 0
        out.collect((ctx.get_current_key(), timestamp, ctx.time_domain(), n))
        if ctx.time_domain() == wv.TimeDomain.EVENT_TIME and n % 3 == 0 and timestamp % 2 == 0:
            ctx.timer_service().register_event_time_timer(timestamp + 7)


def pipeline(job, trace: bool, timers: str | None) -> wv.StreamExecutionEnvironment:
    def extra(stream):
        stream.key_by(lambda e: e[0]).process(Timers(timers == "processing")).sink_to("timers")

    return build(job, trace, extra if timers else None)


def same_run(a: wv.JobExecutionResult, b: wv.JobExecutionResult) -> None:
    assert a.outputs == b.outputs
    assert a.side_outputs == b.side_outputs
    assert a.metrics == b.metrics


def _multiset(outputs: dict[str, list[wv.Record]]) -> dict[str, Counter]:
    return {name: Counter((repr(r.value), r.timestamp) for r in rs) for name, rs in outputs.items()}


def same_windows(a: wv.JobExecutionResult, b: wv.JobExecutionResult) -> None:
    """The same records (value and timestamp) in every sink and side output, in any order and
    at any processing time, and the same metrics."""
    assert _multiset(a.outputs) == _multiset(b.outputs)
    assert _multiset(a.side_outputs) == _multiset(b.side_outputs)
    assert a.metrics == b.metrics


@st.composite
def failures(draw, from_the_start: bool = False):
    """A random job with failures: ``from_the_start`` restarts from the beginning (no
    checkpoint, or one at cut 0); otherwise checkpoints at a cut or periodically."""
    job = draw(jobs())
    n = len(job["events"])
    modes = ["none", "cut"] if from_the_start else ["cut", "cut", "interval", "none"]
    mode = draw(st.sampled_from(modes))
    cut = 0 if from_the_start else draw(st.integers(0, n))
    first = draw(st.integers(cut if mode == "cut" else 0, n))
    more = draw(st.lists(st.integers(first, n), max_size=2))
    return {
        "job": job,
        "trace": draw(st.booleans()),
        "timers": draw(st.sampled_from([None, None, "event", "processing"])),
        "mode": mode,
        "cut": cut,
        "interval": draw(st.sampled_from([25, 70, 300])),
        "fail_at": [first, *more],
    }


def in_order(job: dict) -> dict:
    """The job with its timestamps sorted into arrival order: no record is ever late, in
    any run (a watermark stays below the largest timestamp seen, restored or not)."""
    stamps = sorted(ts for _, ts, _ in job["events"])
    events = [(k, ts, i) for (k, _, i), ts in zip(job["events"], stamps, strict=True)]
    return {**job, "events": events}


def touching_sessions(job: dict) -> bool:
    """Session windows where one of a key's timestamps is exactly the gap after the key's
    previous one: the later element's window ``[t, t + gap)`` touches the earlier session
    ``[s, t)``, and touching windows merge (Flink's ``TimeWindow.intersects``: ``start <=
    other.end && end >= other.start``). Whether they do depends on when the watermark passes
    ``t - 1``: if the session fired and was purged before the element came, it starts a new
    one; after a restore the watermark starts again at MIN and the restored, unfired session
    takes it in (``test_a_restored_unfired_session_merges_with_a_session_touching_it``). With
    no late data this is the only case where a replay changes a window's contents (a closer
    element arrives before the watermark can pass the session's end)."""
    if job["assigner"] != "session":
        return False
    gap = ASSIGNERS["session"]().gap
    stamps: dict[str, list[int]] = {}
    for key, ts, _ in job["events"]:
        stamps.setdefault(key, []).append(ts)
    return any(b - a == gap for ts in stamps.values() for a, b in pairwise(sorted(ts)))


def checkpointed(case, parallelism: int = 1) -> tuple[wv.JobExecutionResult, ...]:
    """The case's job run without and with its checkpoints and failures."""
    job, trace, timers = case["job"], case["trace"], case["timers"]
    expected = pipeline(job, trace, timers).set_parallelism(parallelism).execute()
    env = pipeline(job, trace, timers).set_parallelism(parallelism)
    if case["mode"] == "cut":
        env.enable_checkpointing(at_records=[case["cut"]])
    elif case["mode"] == "interval":
        env.enable_checkpointing(case["interval"])
    result = env.execute(fail_at=case["fail_at"])
    assert len(result.restores) == len(set(case["fail_at"]))
    return expected, result


@settings(max_examples=250, deadline=None)
@given(failures(from_the_start=True), st.integers(1, 3))
def test_a_restart_from_the_beginning_changes_nothing(case, parallelism) -> None:
    """No checkpoint yet (or one at cut 0): the restart is a fresh run; late data and both
    kinds of timers included, the outputs, side outputs and metrics are exact."""
    expected, result = checkpointed(case, parallelism)
    same_run(result, expected)
    if case["mode"] == "none":
        assert all(r.checkpoint_id is None for r in result.restores)


@settings(max_examples=300, deadline=None)
@given(failures(), st.sampled_from([1, 1, 2, 3]))
def test_a_replay_without_late_data_gives_every_window_its_contents(case, parallelism) -> None:
    """Exactly once where the replay has no late data: timestamps in arrival order, triggers
    whose firings do not depend on when the watermark passes (not ``continuous``), window
    functions and timers that do not emit the watermark. Each window fires with the contents
    of an uninterrupted run, once; the side outputs and metrics are the same. Not for
    sessions that touch (``touching_sessions``): the replay may merge them."""
    job = in_order(case["job"])
    assume(not touching_sessions(job))
    if job["trigger"] == "continuous":
        job = {**job, "trigger": "default"}
    if job["function"] in ("reduce_process", "aggregate_process"):  # Annotate: the watermark
        job = {**job, "function": job["function"].removesuffix("_process")}
    case = {**case, "job": job, "timers": None}
    expected, result = checkpointed(case, parallelism)
    same_windows(result, expected)
    assert result.num_late_records_dropped == expected.num_late_records_dropped == 0
    if case["mode"] == "cut":
        assert {r.source_records for r in result.restores} == {case["cut"]}
        assert all(r.checkpoint_id is not None for r in result.restores)


TOUCHING = {
    "events": [("a", 0, i) for i in range(38)]
    + [("b", 15, 38)]
    + [("a", 15, i) for i in range(39, 58)],
    "arrivals": [0] * 39 + [25] * 19,
    "assigner": "session",
    "trigger": "default",
    "lateness": 0,
    "side": False,
    "function": "reduce",
    "bound": 0,
    "interval": 7,
    "layout": "single",
    "parts": [0] * 58,
    "idle": None,
}
"""Sessions (gap 15), sums per key: key a's 38 records at 0 ms (ts 0, values 0..37, sum 703),
b@15 (38) at 0 ms, then a's 19 records at 25 ms (ts 15, values 39..57, sum 912); watermarks
every 7 ms (bound 0). Uninterrupted, the watermark 14 at 7 ms fires and purges a's [0, 15)
before a@15 comes: a@15 opens [15, 30). (Hypothesis found it; the failure after 39 records.)"""


def touching(mode: str) -> dict:
    """``TOUCHING`` failing after 39 records, restored from a checkpoint at that cut (``mode``
    "cut") or from the periodic one triggered at 25 ms (``mode`` "interval")."""
    return {
        "job": TOUCHING,
        "trace": True,
        "timers": None,
        "mode": mode,
        "cut": 39,
        "interval": 25,
        "fail_at": [39],
    }


def sums(result: wv.JobExecutionResult) -> list[tuple[tuple, int]]:
    """The sink's (value, timestamp) pairs in emission order."""
    return [(r.value, r.timestamp) for r in result.outputs["out"]]


def test_a_restored_unfired_session_merges_with_a_session_touching_it() -> None:
    """The checkpoint after 39 records is taken at 0 ms, before the watermark 14 (7 ms): a's
    session [0, 15) is in it, not fired. After the restore the watermark starts again at MIN
    and the new generator has seen no timestamp (Flink checkpoints neither), so [0, 15) is
    still unfired when a@15 comes at 25 ms; [15, 30) touches it and Flink merges them
    (``TimeWindow.intersects``: ``start <= other.end && end >= other.start``;
    ``MergingWindowSet.addWindow``): one session [0, 30) with all 57 of a's records, 703 + 912
    = 1615, fired at the end. Not the uninterrupted run's contents, and right."""
    expected, result = checkpointed(touching("cut"))
    assert sums(expected) == [(("a", 0, 703), 14), (("b", 15, 38), 29), (("a", 15, 912), 29)]
    assert sums(result) == [(("b", 15, 38), 29), (("a", 0, 1615), 29)]
    merged = [
        (r.proc_time, r.watermark, r.key, str(r.window), repr(r.detail))
        for r in result.trace.records()
        if r.kind == "merged"
    ]
    assert merged == [(25, wv.MIN, "a", "[0, 30)", "([[0, 15)], [0, 15))")]
    assert [(c.source_records, c.processing_time) for c in result.checkpoints] == [(39, 0)]


def test_a_periodic_checkpoint_runs_the_clock_to_its_trigger_time_first() -> None:
    """Checkpoints every 25 ms: the one triggered at 25 ms goes in before the records arriving
    at 25 ms (cut 39), and — as in Flink, where the trigger comes at 25 ms — after what the
    clock had due by then: the watermark 14 at 7 ms fired a's [0, 15) (703) before the
    snapshot, so the restore does not bring it back unfired (it did when the snapshot was
    taken at the last record's 0 ms) and the replay gives the uninterrupted run's outputs."""
    expected, result = checkpointed(touching("interval"))
    assert sums(result) == sums(expected)
    assert sums(result) == [(("a", 0, 703), 14), (("b", 15, 38), 29), (("a", 15, 912), 29)]
    assert [(c.source_records, c.processing_time) for c in result.checkpoints] == [(39, 25)]
    steps = [
        (r.kind, r.proc_time, r.key)
        for r in result.trace.records()
        if r.kind in ("fired", "checkpoint", "restore")
    ]
    assert steps == [
        ("fired", 7, "a"),
        ("checkpoint", 25, None),
        ("restore", 25, None),
        ("fired", 25, "b"),
        ("fired", 25, "a"),
    ]


SMALL = {
    "events": [("a", 5, 0), ("b", 12, 1), ("a", 18, 2), ("a", 60, 3), ("b", 2, 4)],
    "arrivals": [0, 10, 20, 30, 90],
    "assigner": "session",
    "trigger": "default",
    "lateness": 0,
    "side": True,
    "function": "process",
    "bound": 10,
    "interval": 7,
    "layout": "single",
    "parts": [0] * 5,
    "idle": None,
}
"""Sessions (gap 15), both kinds of timers, and a late record: b@2 arrives last (at 90 ms),
when the watermark is 49 (a@60 arrived at 30 ms)."""


def small_outcome(cut: int, parallelism: int = 1) -> Callable[[wv.JobExecutionResult], None]:
    """What a run of ``SMALL`` restored from a checkpoint at ``cut`` must give. b@2 is late
    when a replayed record (a@60) raised the watermark before it came: every window and
    timer then has the contents of the uninterrupted run. From cut 4 (taken at 30 ms, when
    the watermark was still 7) b@2 is the first record replayed, at watermark MIN: on time.
    It joins b's session [12, 27) (restored, not fired yet), which fires as [2, 27) with
    both records; nothing goes to the late side output; the timer at 42 of b, which fired
    at watermark 49 before b@2 came in the uninterrupted run, now fires at the end with the
    count 2. With 3 subtasks the source subtask that reads b@2 saw no a@60: b@2 is on time
    in every run, and every window has the contents of the uninterrupted run."""
    expected = pipeline(SMALL, True, "processing").set_parallelism(parallelism).execute()
    late = [r.value for r in expected.side_outputs.get("late", [])]
    assert late == ([("b", 2, 4)] if parallelism == 1 else [])
    if cut != 4 or not late:
        return lambda result: same_windows(result, expected)

    def accepted(result: wv.JobExecutionResult) -> None:
        assert sorted((r.timestamp, r.value) for r in result.outputs["out"]) == [
            (26, ("b", wv.TimeWindow(2, 27), [1, 4])),
            (32, ("a", wv.TimeWindow(5, 33), [0, 2])),
            (74, ("a", wv.TimeWindow(60, 75), [3])),
        ]
        assert sorted((r.timestamp, r.value) for r in expected.outputs["out"])[0] == (
            26,
            ("b", wv.TimeWindow(12, 27), [1]),
        )
        fired = {r.value for r in result.outputs["timers"]}
        assert fired == {r.value for r in expected.outputs["timers"]} - {
            ("b", 42, "EVENT_TIME", 1)
        } | {("b", 42, "EVENT_TIME", 2)}
        assert result.side_outputs == {}
        assert result.num_late_records_dropped == 0

    return accepted


def test_a_failure_at_every_cut_after_the_checkpoint() -> None:
    """``SMALL`` checkpointed at every cut, failing at every later cut."""
    for cut in range(6):
        check = small_outcome(cut)
        for fail in range(cut, 6):
            env = pipeline(SMALL, True, "processing").enable_checkpointing(at_records=[cut])
            check(env.execute(fail_at=fail))


def tumbling(trace: bool = True) -> wv.StreamExecutionEnvironment:
    env = wv.StreamExecutionEnvironment(trace=trace)
    (
        keyed_window(
            env,
            [("a", 100), ("a", 400), ("b", 700), ("a", 1_200)],
            1_000,
            arrival_times=[0, 300, 600, 1_300],
        )
        .process(lambda k, ctx, els, out: out.collect((k, sorted(e[1] for e in els))))
        .sink_to("out")
    )
    return env


def test_a_timer_registered_before_the_checkpoint_fires_after_the_restore() -> None:
    """Window [0, 1000) of key "a" registers its timer (999) with its first record. The
    checkpoint after two records keeps it; the job fails after three; the restore brings the
    timer back and the end of the input (watermark MAX at 1300 ms) fires it — with the
    contents from before the checkpoint, exactly once. (No replayed record is late: the
    outputs are those of the run without the failure.)"""
    expected = tumbling().execute()
    result = tumbling().enable_checkpointing(at_records=[2]).execute(fail_at=3)
    same_run(result, expected)
    assert result.outputs["out"][:2] == [
        wv.Record(("a", [100, 400]), 999, 1_300),
        wv.Record(("b", [700]), 999, 1_300),
    ]

    checkpoint = result.checkpoints[0]
    assert (checkpoint.checkpoint_id, checkpoint.source_records) == (1, 2)
    assert dict(checkpoint.positions) == {"source": 2}
    window = wv.TimeWindow(0, 1_000)
    timers = checkpoint.operator_states["window"]["timers"]["window-timers"]
    assert timers["event"] == [(999, "a", window)]
    assert checkpoint.operator_states["window"]["state"] == {
        ("window-contents", "a", window): [("a", 100), ("a", 400)]
    }
    assert result.restores == [wv.Restore(failed_at=3, checkpoint_id=1, source_records=2)]

    trace = result.trace
    kinds = [r.kind for r in trace.records("checkpoint", "restore")]
    assert kinds == ["checkpoint", "restore"]
    restore = trace.records("restore")[0]
    assert restore.details() == {
        "checkpoint_id": 1,
        "source_records": 2,
        "positions": {"source": 2},
        "failed_at": 3,
    }
    assert restore.proc_time == 300  # the clock went back to the checkpoint's
    registered = trace.records("timer_registered", operator="window")[0]
    fired = trace.records("timer_fired", operator="window")[0]
    checkpoint_seq = trace.records("checkpoint")[0].seq
    assert registered.seq < checkpoint_seq < restore.seq < fired.seq
    assert (registered.ts, fired.ts, fired.key) == (999, 999, "a")


LATE = wv.OutputTag("late")


def late_after_a_firing(trace: bool = True) -> wv.StreamExecutionEnvironment:
    """a@100 (0 ms), a@1200 (100 ms), b@1300 (500 ms), a@500 (700 ms); bounded
    out-of-orderness 0, a watermark every 200 ms: at 200 ms the watermark 1199 fires a's
    window [0, 1000) and cleans it up, so a@500 is late (side output "late")."""
    env = wv.StreamExecutionEnvironment(trace=trace)
    (
        keyed_window(
            env,
            [("a", 100), ("a", 1_200), ("b", 1_300), ("a", 500)],
            1_000,
            late=LATE,
            arrival_times=[0, 100, 500, 700],
        )
        .process(lambda k, ctx, els, out: out.collect((k, sorted(e[1] for e in els))))
        .sink_to("out")
    )
    return env


def test_a_record_late_before_the_failure_is_on_time_after_the_restore() -> None:
    """As in Flink: the checkpoint after three records (at 500 ms: a's window [0, 1000) has
    fired, its output is in the sink) holds no watermark. After the failure the job restarts
    at MIN; a@500 is the first record replayed, so it is on time: a new window [0, 1000) gets
    it and fires at the end of the input — the window fires a second time — and nothing
    reaches the late side output."""
    uninterrupted = late_after_a_firing().execute()
    assert [r.value for r in uninterrupted.side_outputs["late"]] == [("a", 500)]
    assert [r.value for r in uninterrupted.outputs["out"]] == [
        ("a", [100]),
        ("a", [1_200]),
        ("b", [1_300]),
    ]
    result = late_after_a_firing().enable_checkpointing(at_records=[3]).execute(fail_at=4)
    assert [(r.value, r.timestamp) for r in result.outputs["out"]] == [
        (("a", [100]), 999),  # before the checkpoint: in the sink's checkpointed contents
        (("a", [500]), 999),  # the same window again, with the record that was late
        (("a", [1_200]), 1_999),
        (("b", [1_300]), 1_999),
    ]
    assert result.side_outputs == {}
    assert result.num_late_records_dropped == 0
    assert result.restores == [wv.Restore(failed_at=4, checkpoint_id=1, source_records=3)]

    trace = result.trace
    restore = trace.records("restore")[0]
    # every operator that had a watermark starts again at MIN, written right after the restore
    at_min = [r for r in trace.records("watermark") if r.details() == {"input": "restore"}]
    assert [(r.operator, r.ts, r.watermark, r.proc_time) for r in at_min] == [
        ("watermarks", wv.MIN, wv.MIN, 500),
        ("window", wv.MIN, wv.MIN, 500),
    ]
    assert [r.seq for r in at_min] == [restore.seq + 1, restore.seq + 2]
    elements = trace.records("element", operator="window")
    late, replayed = elements[-2], elements[-1]
    assert (late.ts, late.watermark) == (500, 1_299)  # before the failure: late
    assert late.seq < restore.seq < replayed.seq
    assert (replayed.ts, replayed.watermark) == (500, wv.MIN)  # after it: on time
    fired = [r for r in trace.records("fired", key="a") if r.window == wv.TimeWindow(0, 1_000)]
    assert len(fired) == 2 and fired[0].seq < restore.seq < fired[1].seq


def test_a_run_from_a_snapshot_starts_its_watermarks_at_min() -> None:
    """``execute(restore_from=...)`` is a new execution from the checkpoint: the same as the
    restart after a failure, a@500 is on time and fires a's window [0, 1000) again."""
    snapshot = late_after_a_firing().enable_checkpointing(at_records=[3]).execute().checkpoints[0]
    assert "watermark" not in snapshot.operator_states["window"]
    restored = late_after_a_firing().execute(restore_from=snapshot)
    assert [r.value for r in restored.outputs["out"]] == [
        ("a", [100]),
        ("a", [500]),
        ("a", [1_200]),
        ("b", [1_300]),
    ]
    assert restored.side_outputs == {}
    kinds = [r.kind for r in restored.trace.records()[:3]]
    assert kinds == ["restore", "arrival", "element"]  # nothing had a watermark to lose yet
    assert restored.trace.records("element")[0].watermark == wv.MIN


def test_a_checkpoint_is_a_deep_copy_that_running_on_never_changes() -> None:
    result = tumbling().enable_checkpointing(at_records=[1, 2]).execute()
    first, second = result.checkpoints
    window = wv.TimeWindow(0, 1_000)
    assert first.operator_states["window"]["state"] == {
        ("window-contents", "a", window): [("a", 100)]
    }  # the live list went on to hold both records
    assert second.operator_states["window"]["state"][("window-contents", "a", window)] == [
        ("a", 100),
        ("a", 400),
    ]
    assert first.operator_states["out"]["records"] == []
    with pytest.raises(TypeError):
        first.operator_states["window"] = {}  # type: ignore[index]


def test_one_checkpoint_restored_twice_and_checkpoints_after_a_restore() -> None:
    expected = tumbling(trace=False).execute()
    twice = tumbling(trace=False).enable_checkpointing(at_records=[1]).execute(fail_at=[2, 3])
    same_run(twice, expected)
    assert [(r.failed_at, r.checkpoint_id) for r in twice.restores] == [(2, 1), (3, 1)]
    assert len(twice.checkpoints) == 1  # the restored cut is not checkpointed again

    env = tumbling(trace=False).enable_checkpointing(at_records=[1, 3])
    later = env.execute(fail_at=[2, 4])
    same_run(later, expected)
    assert [(r.failed_at, r.checkpoint_id) for r in later.restores] == [(2, 1), (4, 2)]
    assert [c.source_records for c in later.checkpoints] == [1, 3]


def test_periodic_checkpoints_on_the_simulated_clock() -> None:
    """Every 500 ms from the start (0): triggered at 500 and 1000, the barriers go in before
    the records arriving at 600 and 1300 (cuts 2 and 3); each snapshot is taken at its
    trigger time, the clock at 500 and 1000 (not at the last record's 300 and 600)."""
    result = tumbling().enable_checkpointing(500).execute(fail_at=4)
    assert [(c.source_records, c.processing_time) for c in result.checkpoints] == [
        (2, 500),
        (3, 1000),
    ]
    assert result.restores == [wv.Restore(failed_at=4, checkpoint_id=2, source_records=3)]
    same_run(result, tumbling().execute())


def test_a_partitioned_source_keeps_the_offset_of_each_partition() -> None:
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions(
            [[("p0", 100), ("p0", 600)], [("p1", 200), ("p1", 700)]],
            arrival_times=[[0, 500], [100, 400]],
            name="kafka",
        )
        .assign_timestamps_and_watermarks(bounded(0))
        .map(lambda e: e[1])
        .sink_to("out")
    )
    result = env.enable_checkpointing(at_records=[3]).execute(fail_at=4)
    assert dict(result.checkpoints[0].positions) == {"kafka": 3, "kafka[0]": 1, "kafka[1]": 2}
    assert [r.value for r in result.outputs["out"]] == [100, 200, 700, 600]


def test_failures_and_checkpoints_must_be_cuts_of_the_input() -> None:
    with pytest.raises(InputError, match="fail_at"):
        tumbling().execute(fail_at=5)
    with pytest.raises(InputError, match="at_records"):
        tumbling().enable_checkpointing(at_records=[-1]).execute()
    with pytest.raises(InputError, match="interval"):
        tumbling().enable_checkpointing(0)


# -- a public restore: execute(restore_from=snapshot) ------------------------------------------


def test_a_new_run_restored_from_a_snapshot_continues_exactly_once() -> None:
    """Every cut of the tumbling job: a run checkpointed there, then the job built anew and
    started from that snapshot, gives the outputs, side outputs and metrics of an
    uninterrupted run — no record lost, none counted twice."""
    expected = tumbling().execute()
    for cut in range(5):
        snapshot = tumbling().enable_checkpointing(at_records=[cut]).execute().checkpoints[0]
        restored = tumbling().execute(restore_from=snapshot)
        same_run(restored, expected)
        assert restored.restores == [
            wv.Restore(failed_at=None, checkpoint_id=1, source_records=cut)
        ]
        assert restored.trace.records()[0].kind == "restore"
        assert restored.trace.records("restore")[0].details() == {
            "checkpoint_id": 1,
            "source_records": cut,
            "positions": {"source": cut},
            "failed_at": None,
        }
        # only the records after the cut are read again
        assert len(restored.trace.records("arrival")) == 4 - cut


def test_a_restored_run_checkpoints_on_and_fails_back_to_its_snapshot() -> None:
    """Checkpoint ids go on from the snapshot's (Flink restores the id counter); a failure
    before the next checkpoint restarts from the snapshot the run started from."""
    expected = tumbling(trace=False).execute()
    snapshot = tumbling(trace=False).enable_checkpointing(at_records=[1]).execute().checkpoints[0]
    env = tumbling(trace=False).enable_checkpointing(at_records=[3])
    result = env.execute(restore_from=snapshot, fail_at=[2, 4])
    same_run(result, expected)
    assert [(c.checkpoint_id, c.source_records) for c in result.checkpoints] == [(2, 3)]
    assert [(r.failed_at, r.checkpoint_id, r.source_records) for r in result.restores] == [
        (None, 1, 1),
        (2, 1, 1),
        (4, 2, 3),
    ]
    with pytest.raises(InputError, match="field 'fail_at', value 0: fail_at is a cut before"):
        tumbling().execute(restore_from=snapshot, fail_at=0)


@pytest.mark.parametrize("parallelism", [1, 3])
def test_a_parallel_job_with_timers_restored_from_every_cut(parallelism) -> None:
    """``SMALL`` started from a snapshot at every cut: as after a failure, the watermarks
    start at MIN, so b@2 is on time when the snapshot is the one at cut 4."""
    for cut in range(6):
        env = pipeline(SMALL, True, "processing").set_parallelism(parallelism)
        snapshot = env.enable_checkpointing(at_records=[cut]).execute().checkpoints[0]
        fresh = pipeline(SMALL, True, "processing").set_parallelism(parallelism)
        small_outcome(cut, parallelism)(fresh.execute(restore_from=snapshot))


def _snapshot(cut: int = 2) -> CompletedCheckpoint:
    return tumbling().enable_checkpointing(at_records=[cut]).execute().checkpoints[0]


def _mapped() -> wv.StreamExecutionEnvironment:
    """The tumbling job with a map before the window."""
    env = wv.StreamExecutionEnvironment()
    (
        env.from_collection(
            [("a", 100), ("a", 400), ("b", 700), ("a", 1_200)], arrival_times=[0, 300, 600, 1_300]
        )
        .map(lambda e: e)
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(1_000))
        .process(lambda k, ctx, els, out: out.collect((k, sorted(e[1] for e in els))))
        .sink_to("out")
    )
    return env


def test_another_jobs_snapshot_is_refused_naming_what_differs() -> None:
    snapshot = _snapshot()
    with pytest.raises(SnapshotMismatchError) as info:
        _mapped().execute(restore_from=snapshot)
    assert str(info.value) == (
        "checkpoint 1 is not a snapshot of this job: the job has operator(s) the snapshot "
        "lacks: 'map'"
    )
    assert info.value.partial_result.outputs == {"out": []}  # nothing ran, nothing made up

    with pytest.raises(SnapshotMismatchError) as info:
        tumbling().set_parallelism(2).execute(restore_from=snapshot)
    assert str(info.value) == (
        "checkpoint 1 is not a snapshot of this job: the job has operator(s) the snapshot "
        "lacks: 'out#0', 'out#1', 'watermarks#0', 'watermarks#1', 'window#0', 'window#1'; "
        "the snapshot has state for operator(s) the job lacks: 'out', 'watermarks', 'window'"
    )

    with pytest.raises(SnapshotMismatchError) as info:
        tumbling().set_max_parallelism(256).execute(restore_from=snapshot)
    assert str(info.value) == (
        "checkpoint 1 is not a snapshot of this job: operator 'window' is WindowOperator "
        "(1 subtask(s), 256 key groups) in the job, WindowOperator (1 subtask(s), 128 key "
        "groups) in the snapshot"
    )

    with pytest.raises(SnapshotMismatchError) as info:
        tumbling().execute(restore_from=replace(snapshot, version=0))
    assert str(info.value) == ("checkpoint 1 has format version 0; this winviz restores version 2")

    short = wv.StreamExecutionEnvironment()
    (
        keyed_window(short, [("a", 100)], 1_000)
        .process(lambda k, ctx, els, out: out.collect(k))
        .sink_to("out")
    )
    with pytest.raises(SnapshotMismatchError) as info:
        short.execute(restore_from=snapshot)
    assert str(info.value) == (
        "checkpoint 1 read 2 record(s) of source 'source', which has 1 in this job: not the "
        "input it was taken on"
    )


def windowed(assigner, function: str, evictor: bool = False) -> wv.StreamExecutionEnvironment:
    """The tumbling job's input keyed into ``assigner`` windows with a count (``aggregate``),
    a sum (``reduce``) or a list of timestamps (``process``)."""
    env = wv.StreamExecutionEnvironment()
    stream = (
        env.from_collection(
            [("a", 100), ("a", 400), ("b", 700), ("a", 1_200)], arrival_times=[0, 300, 600, 1_300]
        )
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(assigner)
    )
    if evictor:
        stream = stream.evictor(wv.CountEvictor.of(10))
    if function == "aggregate":
        out = stream.aggregate(wv.CountAggregate())
    elif function == "reduce":
        out = stream.reduce(lambda a, b: (a[0], a[1] + b[1]))
    else:
        out = stream.process(lambda k, ctx, els, out: out.collect(sorted(e[1] for e in els)))
    out.sink_to("out")
    return env


def test_a_snapshot_whose_state_the_job_registers_differently_is_refused() -> None:
    """What Flink's state backend checks on a restore: a state of the snapshot registered
    again under its name with another type (``window-contents``: AGGREGATING for a count,
    REDUCING for a reduce, LIST for a ProcessWindowFunction or with an evictor) or another
    namespace serializer (the window type: ``GlobalWindows`` has its own), and the timer
    service's namespace serializer."""
    tumbling_count = windowed(wv.TumblingEventTimeWindows.of(1_000), "aggregate")
    snapshot = tumbling_count.enable_checkpointing(at_records=[2]).execute().checkpoints[0]
    assert dict(snapshot.state_descriptors["window"]) == {
        "state 'window-contents'": "AGGREGATING state of TimeWindow.Serializer",
        "timer service 'window-timers'": "timers of TimeWindow.Serializer",
    }
    session_reduce = windowed(wv.EventTimeSessionWindows.with_gap(500), "reduce")
    with pytest.raises(SnapshotMismatchError) as info:
        session_reduce.execute(restore_from=snapshot)
    assert str(info.value) == (
        "checkpoint 1 is not a snapshot of this job: operator 'window' registers state "
        "'window-contents' as REDUCING state of TimeWindow.Serializer in the job, "
        "AGGREGATING state of TimeWindow.Serializer in the snapshot"
    )
    assert info.value.partial_result.outputs == {"out": []}

    global_list = windowed(wv.GlobalWindows.create_with_end_of_stream_trigger(), "process")
    with pytest.raises(SnapshotMismatchError) as info:
        global_list.execute(restore_from=snapshot)
    assert str(info.value) == (
        "checkpoint 1 is not a snapshot of this job: operator 'window' registers state "
        "'window-contents' as LIST state of GlobalWindow.Serializer in the job, AGGREGATING "
        "state of TimeWindow.Serializer in the snapshot; operator 'window' registers timer "
        "service 'window-timers' as timers of GlobalWindow.Serializer in the job, timers of "
        "TimeWindow.Serializer in the snapshot"
    )

    evicting = windowed(wv.TumblingEventTimeWindows.of(1_000), "aggregate", evictor=True)
    with pytest.raises(SnapshotMismatchError, match=r"as LIST state of TimeWindow\.Serializer"):
        evicting.execute(restore_from=snapshot)


def test_a_snapshot_whose_state_fits_is_restored_as_flink_restores_it() -> None:
    """Flink checks state types and serializers, not the assigner, trigger or lateness: a
    count in 2 s tumbling windows (the same AGGREGATING state of TimeWindow) loads the 1 s
    job's snapshot. The restored window [0, 1000) of a (count 2) fires by its restored
    timer at 999; the records after the cut go to 2 s windows."""
    snapshot = (
        windowed(wv.TumblingEventTimeWindows.of(1_000), "aggregate")
        .enable_checkpointing(at_records=[2])
        .execute()
        .checkpoints[0]
    )
    wider = windowed(wv.TumblingEventTimeWindows.of(2_000), "aggregate")
    restored = wider.execute(restore_from=snapshot)
    assert sorted((r.value, r.timestamp) for r in restored.outputs["out"]) == [
        (1, 1_999),
        (1, 1_999),
        (2, 999),
    ]

    # Session windows with the same count: the same state, accepted as Flink accepts it. The
    # merging-window set is operator state the snapshot lacks (empty), so the restored
    # timer 999 finds no session window for [0, 1000) and does nothing (Flink's
    # WindowOperator.onEventTime: "Timer firing for non-existent window"): a's count 2 is
    # lost, b@700 and a@1200 open sessions of their own.
    sessions = windowed(wv.EventTimeSessionWindows.with_gap(500), "aggregate")
    restored = sessions.execute(restore_from=snapshot)
    assert [(r.value, r.timestamp) for r in restored.outputs["out"]] == [(1, 1_199), (1, 1_699)]


def _without(mapping, name):
    return MappingProxyType({k: v for k, v in mapping.items() if k != name})


def test_a_damaged_snapshot_is_refused_naming_the_missing_part() -> None:
    snapshot = _snapshot()
    states = snapshot.operator_states
    window = dict(states["window"])
    cases = [
        (
            replace(snapshot, operator_states=_without(states, "window")),
            "checkpoint 1 is damaged: its operator_states lack(s) 'window'",
        ),
        (
            replace(
                snapshot,
                operator_states=MappingProxyType({**states, "window": _without(window, "timers")}),
            ),
            "checkpoint 1 is damaged: the state of operator 'window' lack(s) 'timers'",
        ),
        (
            replace(snapshot, positions=MappingProxyType({})),
            "checkpoint 1 is damaged: its positions lack(s) 'source'",
        ),
        (
            replace(snapshot, positions=MappingProxyType({"source": 1})),
            "checkpoint 1 is damaged: source 'source' is at position 1 in its positions but 2 "
            "in its operator state",
        ),
        (
            replace(snapshot, operators=MappingProxyType({})),
            "checkpoint 1 has no list of the operators it was taken of (its 'operators')",
        ),
        (
            replace(
                snapshot,
                operator_states=MappingProxyType(
                    {**states, "window": {**window, "timers": {"window-timers": None}}}
                ),
            ),
            "checkpoint 1 is damaged: the state of operator 'window' cannot be loaded (TypeError: ",
        ),
    ]
    for damaged, message in cases:
        with pytest.raises(DamagedSnapshotError) as info:
            tumbling().execute(restore_from=damaged)
        assert str(info.value).startswith(message)
    # the snapshot itself is intact: it still restores
    same_run(tumbling().execute(restore_from=snapshot), tumbling().execute())


def test_restore_from_takes_a_snapshot() -> None:
    result = tumbling().enable_checkpointing(at_records=[2]).execute()
    with pytest.raises(ArgumentTypeError) as info:
        tumbling().execute(restore_from=result)
    assert "restore_from takes a snapshot of this job" in str(info.value)
    assert "(expected a CompletedCheckpoint, e.g. result.checkpoints[-1] of an earlier run)" in (
        str(info.value)
    )
