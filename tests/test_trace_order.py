"""The record-order rules of ``winviz.trace.schema`` (what readers such as the charts and
``winviz.why`` rely on), checked on jobs of every window kind."""

from __future__ import annotations

import pytest

import winviz as wv
from winviz.trace import Trace

EVENTS = [("a", 1_000), ("b", 2_500), ("a", 5_000), ("a", 3_000), ("b", 900), ("a", 20_000)]
EVENTS += [("b", 7_000), ("a", 4_000), ("a", 21_000), ("b", 300)]


def _run(window: object, lateness: int = 0, parallelism: int = 1, mode: str = "STREAMING") -> Trace:
    env = wv.StreamExecutionEnvironment()
    env.set_parallelism(parallelism)
    env.set_runtime_mode(mode)
    (
        env.from_collection(EVENTS, arrival_interval=150)
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(400).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(window)
        .allowed_lateness(lateness)
        .side_output_late_data(wv.OutputTag("late"))
        .aggregate(wv.CountAggregate())
        .sink_to("out")
    )
    return env.execute().trace


JOBS = {
    "tumbling": lambda: _run(wv.TumblingEventTimeWindows.of(5_000)),
    "sliding+lateness": lambda: _run(wv.SlidingEventTimeWindows.of(5_000, 2_500), 1_000),
    "session+lateness": lambda: _run(wv.EventTimeSessionWindows.with_gap(2_500), 2_000),
    "tumbling, 2 subtasks": lambda: _run(wv.TumblingEventTimeWindows.of(5_000), 0, 2),
    # BATCH (winviz.batch_execution): records grouped by key, a MAX watermark at each key end
    "session+lateness, BATCH": lambda: _run(
        wv.EventTimeSessionWindows.with_gap(2_500), 2_000, mode="BATCH"
    ),
    "sliding, 2 subtasks, BATCH": lambda: _run(
        wv.SlidingEventTimeWindows.of(5_000, 2_500), 0, 2, mode="BATCH"
    ),
}
ELEMENT_GROUP = ("assigned", "skipped_late_window", "late_dropped", "side_output")


@pytest.mark.parametrize("name", JOBS)
def test_record_order_rules(name: str) -> None:
    trace = JOBS[name]()
    records = list(trace)
    assert [r.seq for r in records] == list(range(len(records)))  # rule 1
    last_element: dict[str, object] = {}
    arrived: set[int] = set()
    last_watermark: dict[str, int] = {}
    merged_at: dict[tuple[str, object], int] = {}
    for r in records:
        if r.kind == "arrival":
            arrived.add(id(r.detail[0]))
        elif r.kind == "element":
            last_element[r.operator] = r.detail
            if r.operator.startswith("window"):  # rule 2: its source record came first
                assert id(r.detail) in arrived, r
        elif r.kind in ELEMENT_GROUP:  # rule 3: belongs to its operator's latest element
            value = r.detail if r.kind != "side_output" else r.detail[1]
            assert last_element.get(r.operator) == value, r
        elif r.kind == "watermark":
            last_watermark[r.operator] = r.ts
        elif r.kind == "timer_fired" and r.detail[0] == "event":  # rule 4
            assert last_watermark[r.operator] >= r.ts, r
        elif r.kind == "merged":
            merged_at[(r.operator, r.key)] = r.seq
    # rule 4: every firing follows a trigger call on its window that said FIRE
    for f in trace.records("fired"):
        calls = [
            r
            for r in trace.records("trigger", operator=f.operator, key=f.key, window=f.window)
            if r.seq < f.seq
        ]
        assert calls and "FIRE" in calls[-1].detail[1], f
    # rule 5: a merge comes before the assignment of the element that caused it, and before
    # the deletion of the absorbed windows' timers
    for m in trace.records("merged"):
        later = [r for r in records[m.seq + 1 :] if r.operator == m.operator]
        assert next(r.kind for r in later if r.kind in ("assigned", "element")) == "assigned"
        absorbed = [w for w in m.detail[0] if w != m.window]
        for w in absorbed:
            deletions = [r.seq for r in later if r.kind == "timer_deleted" and r.window == w]
            assert deletions, (m, w)
    assert not name.startswith("session+lateness") or merged_at  # the session job does merge
