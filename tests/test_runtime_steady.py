"""The runtime's shortcuts for a batch-and-watermark cycle (issue 11): batches between two
clock steps (without processing-time timers, the next due time looked up once per step) must
give the same outputs, side outputs, metrics and trace, byte for byte, as one-by-one runs; an
output's
watermark fan-out bound to its one target (or to none) must still reach side-output
consumers when there are some; a traced batch chained into the window kernel starts with both
cached windows (``WindowKernel.process_source_batch``), as one-by-one."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from jobs import bounded, build, count_pipeline, engine_paths, explorer_job, jobs
from test_batching import batched_and_one_by_one, same_run

import winviz as wv
from winviz.operators.sources import SourceOperator

BATCHES = (100, 2000)
"""The explorer job's source batches and records: 2,000 records 10 ms apart, a periodic
watermark every 200 ms."""


@settings(max_examples=200, deadline=None)
@given(jobs(), st.booleans(), st.sampled_from([1, 1, 3]))
def test_batches_between_clock_steps_write_the_same_trace_as_one_by_one(job, trace, parallelism):
    batched_and_one_by_one(lambda: build(job, trace).set_parallelism(parallelism).execute())


def test_the_explorer_benchmark_job_reads_batches_between_clock_steps(monkeypatch) -> None:
    """Without processing-time timers the next due time is looked up once per clock step: a
    batch runs up to the next periodic watermark, and the runs agree with one-by-one runs."""
    rnd = random.Random(7)
    events = [(f"k{i % 20}", i * 10 - rnd.randrange(0, 3000)) for i in range(2000)]
    batches: list[int] = []
    process_batch = SourceOperator.process_batch

    def counted(self, batch):
        batches.append(len(batch))
        process_batch(self, batch)

    monkeypatch.setattr(SourceOperator, "process_batch", counted)
    late = []
    for bound in (0, 300, 2900):
        batches.clear()
        with engine_paths(batches=True):
            result = explorer_job(events, bound)
        assert (len(batches), sum(batches)) == BATCHES
        with engine_paths(batches=False):
            same_run(result, explorer_job(events, bound))
        assert result.metrics["window"]["num_records_in"] == 2000
        late.append(len(result.side_outputs.get("late", [])))
    # the larger the bound, the fewer records come too late for the window (3 s disorder)
    assert late[0] > late[1] > late[2] == 0


def test_watermarks_reach_a_side_output_consumer() -> None:
    """A window's output has a side target (a map over its late data): the window's
    watermarks reach the map as they reach the sink of the main output."""
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    events = [("a", 100), ("a", 700), ("a", 50), ("a", 1500), ("a", 20), ("a", 3000)]
    windowed = (
        env.from_collection(events, arrival_interval=100)
        .assign_timestamps_and_watermarks(bounded(0))
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(500))
        .side_output_late_data(late)
        .aggregate(wv.CountAggregate())
    )
    windowed.sink_to("counts")
    windowed.get_side_output(late).map(lambda e: e[1]).sink_to("late")
    result = env.execute()
    assert [r.value for r in result.outputs["late"]] == [50, 20]
    trace = result.trace

    def watermarks(operator: str) -> list[int]:
        return [r.ts for r in trace.records("watermark", operator=operator)]

    assert watermarks("window") == [699, 1499, 2999, wv.MAX]
    assert watermarks("side:late") == watermarks("window")
    assert watermarks("map") == watermarks("window")


def test_a_batch_takes_both_open_windows_on_the_short_way(monkeypatch) -> None:
    """Records alternate between two open tumbling windows across many batches (a periodic
    watermark every 5 records, no window fires before the end): only the first record of
    each window takes the kernel's general steps (``WindowKernel.process_element``), every
    batch starts with both windows cached (``process_source_batch``), and the trace is the
    one-by-one run's, byte for byte."""
    from winviz.operators.window_kernel import WindowKernel

    events = [("k", 90 - i % 50 if i % 2 == 0 else 110 + i % 50) for i in range(60)]

    def make() -> wv.JobExecutionResult:
        env = wv.StreamExecutionEnvironment(auto_watermark_interval=50)
        count_pipeline(env, events, 100, bounded(1000), lateness=20, arrival_interval=10)
        return env.execute()

    general: list[int] = []
    process_element = WindowKernel.process_element

    def counted(self, value, ts):
        general.append(ts)
        process_element(self, value, ts)

    monkeypatch.setattr(WindowKernel, "process_element", counted)
    with engine_paths(batches=True):
        result = make()
    assert general == [90, 111]  # the first record of each window
    assert [r.value for r in result.outputs["out"]] == [30, 30]
    batched_and_one_by_one(make)
