"""The runtime may hand operators batches of records that arrive while nothing on the
processing clock is due (and the window operator then runs its inlined loop); with a trace
the source still sends each record of a batch downstream before the next one. Batched and
one-by-one runs (``JobRuntime.use_batches``) must give the same outputs, side outputs,
processing times and metrics — and with a trace the same trace, byte for byte — for any
pipeline: one source, a partitioned source (per-partition watermarks: batches never span two
partitions) or a union of two sources (the window gets two input channels), on one subtask or
several, with checkpoints and failures."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jobs import bounded, build, engine_paths, jobs, keyed_window

import winviz as wv


def run(job, trace: bool):
    return build(job, trace).execute()


def same_run(a: wv.JobExecutionResult, b: wv.JobExecutionResult) -> None:
    """Same outputs, side outputs, metrics, checkpoints, restores and trace (byte for byte)."""
    assert a.outputs == b.outputs
    assert a.side_outputs == b.side_outputs
    assert a.metrics == b.metrics
    assert [c.source_records for c in a.checkpoints] == [c.source_records for c in b.checkpoints]
    assert a.restores == b.restores
    assert (a.trace is None) == (b.trace is None)
    if a.trace is not None:
        assert a.trace.to_json() == b.trace.to_json()


def batched_and_one_by_one(make) -> None:
    """``make()`` gives a fresh environment; run it with batches and without."""
    with engine_paths(batches=True):
        batched = make()
    with engine_paths(batches=False):
        one_by_one = make()
    same_run(batched, one_by_one)


@settings(max_examples=300, deadline=None)
@given(jobs(), st.booleans())
def test_a_batched_run_writes_the_same_trace_as_a_one_by_one_run(job, trace) -> None:
    batched_and_one_by_one(lambda: run(job, trace))


@settings(max_examples=150, deadline=None)
@given(jobs(), st.integers(2, 4), st.booleans())
def test_a_batched_parallel_run_writes_the_same_trace(job, parallelism, trace) -> None:
    batched_and_one_by_one(lambda: build(job, trace).set_parallelism(parallelism).execute())


class _Timers(wv.KeyedProcessFunction):
    """Counts per key; an event-time timer 20 ms after each element (and with
    ``processing`` a processing-time timer 35 ms from now, so no batches); a firing emits."""

    def __init__(self, processing: bool) -> None:
        self.processing = processing

    def process_element(self, value, ctx, out):
        ctx.update_state("n", (ctx.state("n") or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 20)
        if self.processing:
            now = ctx.timer_service().current_processing_time()
            ctx.timer_service().register_processing_time_timer(now + 35)

    def on_timer(self, timestamp, ctx, out):
        out.collect((ctx.get_current_key(), timestamp, ctx.state("n")))


def _timers_branch(timers: str | None):
    if timers is None:
        return None
    return lambda stream: (
        stream.key_by(lambda e: e[0]).process(_Timers(timers == "processing")).sink_to("timers")
    )


@settings(max_examples=200, deadline=None)
@given(
    jobs(),
    st.sampled_from([1, 1, 3]),
    st.sampled_from(["cut", "interval", "none"]),
    st.data(),
)
def test_a_batched_run_with_checkpoints_and_failures_writes_the_same_trace(
    job, parallelism, mode, data
) -> None:
    n = len(job["events"])
    cut = data.draw(st.integers(0, n))
    fail_at = data.draw(st.lists(st.integers(cut if mode == "cut" else 0, n), max_size=2))
    interval = data.draw(st.sampled_from([25, 70, 300]))
    # a KeyedProcessFunction branch with event-time (batch-safe) or processing-time timers
    timers = data.draw(st.sampled_from([None, "event", "processing"]))

    def make() -> wv.JobExecutionResult:
        env = build(job, True, _timers_branch(timers)).set_parallelism(parallelism)
        if mode == "cut":
            env.enable_checkpointing(at_records=[cut])
        elif mode == "interval":
            env.enable_checkpointing(interval)
        return env.execute(fail_at=fail_at)

    batched_and_one_by_one(make)


@settings(max_examples=300, deadline=None)
@given(jobs())
def test_batched_and_one_by_one_runs_agree(job) -> None:
    fast, slow = run(job, trace=False), run(job, trace=True)
    assert fast.outputs == slow.outputs
    assert fast.side_outputs == slow.side_outputs
    assert fast.metrics == slow.metrics


def test_the_benchmark_pipeline_really_takes_the_batched_fast_path() -> None:
    from winviz.operators.window_kernel import WindowKernel
    from winviz.operators.window_operator import WindowOperator
    from winviz.runtime import JobRuntime

    env = wv.StreamExecutionEnvironment(trace=False)
    (
        keyed_window(
            env,
            [("a", 1, 1)] * 5,
            10,
            bounded(5),
            arrival_interval=1,
        )
        .reduce(lambda a, b: a)
        .sink_to("out")
    )
    runtime = JobRuntime(env, "check")
    window = next(op for op in runtime.order if isinstance(op, WindowOperator))
    assert isinstance(window.kernel, WindowKernel) and all(op.takes_batches for op in runtime.order)
    calls = []
    original = window.process_batch
    window.process_batch = lambda batch: (calls.append(len(batch)), original(batch))
    runtime.run()
    assert calls == [5]


def test_batches_of_a_partitioned_source_never_span_two_partitions() -> None:
    from winviz.operators.window_operator import WindowOperator
    from winviz.runtime import JobRuntime

    env = wv.StreamExecutionEnvironment(trace=False)
    (
        env.from_partitions(
            [[("a", 1, 1)] * 3, [("a", 2, 1)] * 2], arrival_times=[[0, 1, 4], [2, 3]]
        )
        .assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_bounded_out_of_orderness(5).with_timestamp_assigner(
                lambda e, _: e[1]
            )
        )
        .key_by(lambda e: e[0])
        .window(wv.TumblingEventTimeWindows.of(10))
        .reduce(lambda a, b: a)
        .sink_to("out")
    )
    runtime = JobRuntime(env, "check")
    window = next(op for op in runtime.order if isinstance(op, WindowOperator))
    calls = []
    original = window.process_batch
    window.process_batch = lambda batch: (
        calls.append([e[1] for _, _, e, _ in batch]),
        original(batch),
    )
    runtime.run()
    assert calls == [[1, 1], [2, 2], [1]]
