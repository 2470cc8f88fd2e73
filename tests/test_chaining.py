"""Operator chaining is decided once, when the job is built (``winviz.operators.chaining``):
which window operators get the window kernel, and which sources run their traced batches
through the timestamps operator (and the window kernel) chained to them."""

from __future__ import annotations

import pytest
from jobs import engine_paths

import winviz as wv
from winviz.operators.batch import Batch
from winviz.operators.chaining import SourceChain
from winviz.operators.sources import SourceOperator, TimestampsAndWatermarksOperator
from winviz.operators.window_kernel import WindowKernel
from winviz.operators.window_operator import WindowOperator
from winviz.runtime import JobRuntime


def _built(trace: bool, *, before=None, after=None, strategy=None, function="reduce"):
    """The bench's pipeline (source, timestamps, key_by, tumbling window, reduce), built but
    not run; ``before`` / ``after`` may put an operator before / after the timestamps."""
    env = wv.StreamExecutionEnvironment(trace=trace)
    stream = env.from_collection([("a", 1, 1), ("b", 12, 2)], arrival_interval=1)
    if before is not None:
        stream = before(stream)
    stream = stream.assign_timestamps_and_watermarks(
        strategy
        or wv.WatermarkStrategy.for_bounded_out_of_orderness(5).with_timestamp_assigner(
            lambda e, _: e[1]
        )
    )
    if after is not None:
        stream = after(stream)
    windowed = stream.key_by(lambda e: e[0]).window(wv.TumblingEventTimeWindows.of(10))
    if function == "reduce":
        windowed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2])).sink_to("out")
    else:
        windowed.process(lambda k, ctx, els, out: out.collect(len(els))).sink_to("out")
    runtime = JobRuntime(env, "check")
    ops = runtime.order
    source = next(op for op in ops if isinstance(op, SourceOperator))
    window = next(op for op in ops if isinstance(op, WindowOperator))
    return runtime, source, window


def _timestamps(runtime: JobRuntime) -> TimestampsAndWatermarksOperator:
    return next(op for op in runtime.order if type(op) is TimestampsAndWatermarksOperator)


@pytest.mark.parametrize("trace", [True, False])
def test_the_bench_pipeline_chains_source_timestamps_and_window_kernel(trace: bool) -> None:
    runtime, source, window = _built(trace)
    assert isinstance(window.kernel, WindowKernel)
    assert window.timers.fire_due_event_timers == window.kernel.fire_event_timers
    assert source.chain == SourceChain(_timestamps(runtime), window.kernel)
    # chosen when the job is built: the operator's own methods hand over to the kernel (none
    # is replaced on the live object) — with a trace the element loop, without the batch loop
    assert window.kernel.traced is trace
    assert "process_element" not in vars(window) and "process_batch" not in vars(window)
    taken: list[str] = []
    window.kernel.process_element = lambda value, ts: taken.append("element")
    window.kernel.process_batch = lambda batch: taken.append("batch")
    if trace:
        window.process_element(("a", 1, 1), 1)
    else:
        window.process_batch(Batch.of([]))
    assert taken == (["element"] if trace else ["batch"])


def test_without_the_kernel_every_record_takes_flinks_path() -> None:
    with engine_paths(kernel=False):
        runtime, source, window = _built(True)
    assert window.kernel is None and window.timers.fire_due_event_timers is None
    assert window.process_element.__func__ is WindowOperator.process_element
    assert source.chain == SourceChain(_timestamps(runtime), None)


def test_a_window_outside_the_kernels_configuration_gets_no_kernel() -> None:
    runtime, source, window = _built(True, function="process")  # ListState: Flink's path
    assert window.kernel is None
    assert source.chain == SourceChain(_timestamps(runtime), None)


def test_an_operator_in_between_breaks_the_chain_where_it_stands() -> None:
    _, source, window = _built(True, before=lambda s: s.map(lambda e: e))
    assert source.chain is None and isinstance(window.kernel, WindowKernel)
    runtime, source, window = _built(True, after=lambda s: s.filter(lambda e: True))
    assert source.chain == SourceChain(_timestamps(runtime), None)
    assert isinstance(window.kernel, WindowKernel)


def test_a_punctuated_generator_is_not_chained() -> None:
    punctuated = wv.WatermarkStrategy.for_punctuated(lambda e, ts: ts).with_timestamp_assigner(
        lambda e, _: e[1]
    )
    runtime, source, _ = _built(True, strategy=punctuated)
    assert not _timestamps(runtime).fusable and source.chain is None


def test_chained_and_unchained_runs_write_the_same_trace() -> None:
    """The decisions change speed only."""

    def run(kernel: bool):
        with engine_paths(kernel=kernel, batches=kernel):
            runtime, source, _ = _built(True)
            assert (source.chain is not None and source.chain.window is not None) == kernel
            return runtime.run()

    chained, unchained = run(True), run(False)
    assert chained.trace.to_json() == unchained.trace.to_json()
    assert [(r.value, r.timestamp) for r in chained.outputs["out"]] == [
        (("a", 1, 1), 9),
        (("b", 12, 2), 19),
    ]
