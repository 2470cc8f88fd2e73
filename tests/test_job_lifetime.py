"""A run's lifetime: once ``execute`` returns, the job holds no reference cycle and its result
none either, so a dropped result (its trace with it) goes by reference counting alone, without
Python's cycle collector (``JobRuntime.close``; the trace writer holds its trace weakly; a
packed entry holds the allowed lateness, not the operator). The explorer relies on it: it
runs jobs one after another and never has to stop for a full collection."""

from __future__ import annotations

import gc
import random
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from chart_jobs import JOBS
from jobs import aligned_job, build, engine_paths, explorer_job, kafka_readers, union_all_idle
from trace_hashes import random_job

import winviz as wv


@contextmanager
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def garbage_of(*runs: Callable[[], object]) -> int:
    """How many objects Python's cycle collector finds after each of ``runs`` ran and its
    result was dropped (the collector off meanwhile: reference counting alone frees
    everything else)."""
    with collector_off():
        for run in runs:
            assert run() is not None  # (dropped at once)
        return gc.collect()


def checkpointed_with_failure() -> wv.JobExecutionResult:
    env = build(random_job(random.Random(3)), True)
    return env.enable_checkpointing(at_records=[2, 5]).execute(fail_at=4)


RUNS: dict[str, Callable[[], object]] = {
    **{name: job for name, job in JOBS.items() if name != "kernel_binned"},  # (kernel's, larger)
    "explorer": lambda: explorer_job([("a", i * 37 % 5000) for i in range(300)], 1000),
    "kafka_readers": lambda: kafka_readers(2, idle=300),
    "aligned": aligned_job,
    "union_all_idle": union_all_idle,
    "checkpointed_with_failure": checkpointed_with_failure,
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_dropped_result_leaves_no_garbage(name: str) -> None:
    assert garbage_of(RUNS[name]) == 0


def test_random_jobs_leave_no_garbage_on_every_path() -> None:
    rng = random.Random(26)
    runs = []
    for job in [random_job(rng) for _ in range(12)]:
        for trace in (True, False):
            for kernel in (True, False):
                runs.append(lambda job=job, trace=trace, kernel=kernel: on_path(job, trace, kernel))
    assert garbage_of(*runs) == 0


def on_path(job: dict, trace: bool, kernel: bool) -> wv.JobExecutionResult:
    with engine_paths(kernel=kernel):
        return build(job, trace).execute()


def test_the_trace_dies_with_its_result_and_a_failed_run_frees_its_job() -> None:
    with collector_off():
        result = JOBS["kernel"]()
        alive = weakref.ref(result.trace)
        del result
        assert alive() is None  # gone at once, without the collector
        env = wv.StreamExecutionEnvironment()
        env.from_collection([1, "x"]).assign_timestamps_and_watermarks(
            wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e)
        ).sink_to("out")
        with pytest.raises(wv.WinvizError) as failed:
            env.execute()
        trace = weakref.ref(failed.value.trace)  # type: ignore[attr-defined]
        failed = None  # (the exception and its traceback)
        assert trace() is None
        assert gc.collect() == 0
