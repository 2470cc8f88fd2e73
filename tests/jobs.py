"""Shared by the tests: the jobs they run, built here once (issue 30: a test calls a builder
with its numbers instead of spelling a pipeline out). The builders, one Flink concept each:
``timestamped`` (a source and its ``TimestampsAndWatermarksOperator``), ``window_of`` and
``keyed_window`` (``key_by`` then a ``WindowedStream`` with its trigger, allowed lateness and
late side output), ``count_windows`` / ``count_pipeline`` (a count per key and window) and
``sum_pipeline`` (a ``ReduceFunction`` per window). Also: the random windowed jobs that
several test modules run through different paths of the engine, the switches between those
paths, the usual watermark strategy, and the explorers' pipeline (``counts`` over
``RECORDS``). tests/test_jobs_used.py checks that no pipeline shape is spelled out more than
twice in tests/. (tests/conftest.py puts this folder on ``sys.path``: ``import jobs``.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st

import winviz as wv
from winviz.operators.window_kernel import WindowKernel
from winviz.runtime import JobRuntime


def bounded(bound: int, ts: Callable[[Any], int] = lambda e: e[1]) -> wv.WatermarkStrategy:
    """``for_bounded_out_of_orderness(bound)`` with ``ts(record)`` as the timestamp (the
    record's second field unless told otherwise)."""
    return wv.WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(
        lambda e, _: ts(e)
    )


# two partitions of a "kafka" topic, four elements each, and when each element arrives
KAFKA_PARTITIONS = [
    [("p0", 100), ("p0", 600), ("p0", 1200), ("p0", 1800)],
    [("p1", 200), ("p1", 700), ("p1", 1300), ("p1", 1900)],
]
KAFKA_ARRIVALS = [[0, 500, 1000, 1500], [100, 400, 1100, 1600]]


def kafka_readers(readers: int, idle: int | None = None) -> wv.JobExecutionResult:
    """Two partitions read by ``readers`` source subtasks (bound 0, idleness ``idle``); one
    key, counted per second by a window with 2 subtasks, each with one input channel per
    source subtask."""
    strategy = bounded(0)
    env = wv.StreamExecutionEnvironment()
    (
        env.from_partitions(KAFKA_PARTITIONS, arrival_times=KAFKA_ARRIVALS, name="kafka")
        .assign_timestamps_and_watermarks(strategy.with_idleness(idle) if idle else strategy)
        .set_parallelism(readers)
        .key_by(lambda e: 0)
        .window(wv.TumblingEventTimeWindows.of(1000))
        .aggregate(wv.CountAggregate())
        .set_parallelism(2)
        .sink_to("counts")
    )
    return env.execute()


@contextmanager
def engine_paths(*, kernel: bool | None = None, batches: bool | None = None) -> Iterator[None]:
    """Run the body with the window kernel (``WindowKernel.enabled``) and/or batches of
    records (``JobRuntime.use_batches``) switched on or off; None leaves a switch as it is.
    Both are put back afterwards."""
    before = WindowKernel.enabled, JobRuntime.use_batches
    if kernel is not None:
        WindowKernel.enabled = kernel
    if batches is not None:
        JobRuntime.use_batches = batches
    try:
        yield
    finally:
        WindowKernel.enabled, JobRuntime.use_batches = before


ASSIGNERS = {
    "tumbling": lambda: wv.TumblingEventTimeWindows.of(50),
    "tumbling_offset": lambda: wv.TumblingEventTimeWindows.of(40, -15),
    "sliding": lambda: wv.SlidingEventTimeWindows.of(60, 20),
    "session": lambda: wv.EventTimeSessionWindows.with_gap(15),
}
TRIGGERS = {
    "default": lambda: None,
    "event_time": lambda: wv.EventTimeTrigger(),  # the default, given explicitly
    "count": lambda: wv.CountTrigger.of(3),
    "continuous": lambda: wv.ContinuousEventTimeTrigger.of(20),
    "purging_event": lambda: wv.PurgingTrigger.of(wv.EventTimeTrigger()),
}


KERNEL_FUNCTIONS = ["reduce", "aggregate", "reduce_process", "aggregate_process"]
"""The window functions of jobs the window kernel takes: reduce and aggregate, each alone and
with a ProcessWindowFunction (``Annotate``)."""


class Annotate(wv.ProcessWindowFunction):
    """A ProcessWindowFunction after a reduce or aggregate (as lessons 00, 02 and 07 use one):
    emits the key, the window, its element, the watermark and the how-manieth firing of the
    window it is, and on the window's first firing a side output. The firings are counted per
    window in the key's global state (per-window state is refused on session windows, as in
    Flink), and ``clear`` drops the window's count at its cleanup."""

    def process(self, key, ctx, elements, out):
        fired = ctx.global_state()
        counts = dict(fired.get() or {})
        count = counts[ctx.window()] = counts.get(ctx.window(), 0) + 1
        fired.update(counts)
        if count == 1:
            ctx.output(FIRST_FIRING, (key, ctx.window()))
        out.collect((key, ctx.window(), list(elements), ctx.current_watermark(), count))

    def clear(self, ctx):
        fired = ctx.global_state()
        counts = dict(fired.get() or {})
        counts.pop(ctx.window(), None)
        fired.update(counts or None)


FIRST_FIRING = wv.OutputTag("first-firing")


def two_keys_run(n: int) -> wv.Trace:
    """A small traced run: keys "a" and "b" (two records in three "a"), timestamps scattered
    over [0, 900), bounded out-of-orderness 50, tumbling 100 ms windows, a reduce."""
    env = wv.StreamExecutionEnvironment(trace=True)
    events = [("a" if i % 3 else "b", i * 7 % 900, i) for i in range(n)]
    return sum_pipeline(env, events, 100, bounded(50), arrival_interval=1).execute().trace


MONOTONOUS = wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
    lambda e, _: e[1]
)


def two_keys_restored(interval: int = 200) -> wv.JobExecutionResult:
    """Keys a and b in [0, 1000) (arriving at 100 and 200 ms), a checkpoint after the second
    record (at 200 ms), a failure after the fifth (arrived at 3,000 ms): the job restores
    checkpoint 1 and replays; monotonous watermarks emitted every ``interval`` ms."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=interval)
    env.enable_checkpointing(at_records=[2])
    events = [("a", 100), ("b", 200), ("a", 1_500), ("b", 1_600), ("a", 3_000), ("b", 3_100)]
    (
        timestamped(env, events, MONOTONOUS, arrival_times=[t for _, t in events])
        .key_by(first)
        .window(wv.TumblingEventTimeWindows.of(wv.seconds(1)))
        .process(lambda key, ctx, elements, out: out.collect((key, len(list(elements)))))
        .sink_to("out")
    )
    return env.execute(fail_at=5)


def step_at_arrival_job() -> wv.JobExecutionResult:
    """a@10 at 0 ms (watermark 5000 emitted right after it, at 0 ms), a@20 at 10 ms (late:
    dropped); 100 ms tumbling windows."""
    env = wv.StreamExecutionEnvironment(auto_watermark_interval=0)
    strategy = wv.WatermarkStrategy.for_punctuated(lambda e, ts: 5000).with_timestamp_assigner(
        lambda e, _: e[1]
    )
    events = [("a", 10), ("a", 20)]
    return count_pipeline(env, events, 100, strategy, arrival_times=[0, 10]).execute()


BOUND_0 = bounded(0)
"""Bounded out-of-orderness 0 on the record's second field: the watermark follows the largest
timestamp seen (minus 1), so every element behind it is late."""


def first(e: Any) -> Any:
    """The key selector of most test jobs: the record's first field."""
    return e[0]


def timestamped(
    env: wv.StreamExecutionEnvironment,
    events: list[Any],
    strategy: wv.WatermarkStrategy | None = BOUND_0,
    *,
    partitioned: bool = False,
    **source: Any,
) -> Any:
    """A test job's source: ``events`` read by ``env.from_collection`` (``partitioned``: a
    list of partitions, ``env.from_partitions``, one source subtask's split each) with
    ``source``'s keywords (``arrival_times``, ``arrival_interval``, ``name``), given
    timestamps and watermarks by ``strategy`` — Flink's ``TimestampsAndWatermarksOperator``;
    None: no timestamps (a processing-time job)."""
    read = env.from_partitions if partitioned else env.from_collection
    stream = read(events, **source)
    return stream if strategy is None else stream.assign_timestamps_and_watermarks(strategy)


def window_of(
    stream: Any,
    window: int | Any,
    *,
    key: Callable[[Any], Any] = first,
    trigger: Any = None,
    lateness: int | None = None,
    late: wv.OutputTag | None = None,
) -> Any:
    """Flink's ``WindowedStream`` of a test job, not yet given its window function:
    ``stream.key_by(key).window(window)`` (an int: ``TumblingEventTimeWindows.of(window)``,
    else the assigner itself), then, where given, a ``trigger``, ``allowed_lateness(lateness)``
    and ``side_output_late_data(late)``."""
    assigner = wv.TumblingEventTimeWindows.of(window) if isinstance(window, int) else window
    windowed = stream.key_by(key).window(assigner)
    if trigger is not None:
        windowed = windowed.trigger(trigger)
    if lateness is not None:
        windowed = windowed.allowed_lateness(lateness)
    if late is not None:
        windowed = windowed.side_output_late_data(late)
    return windowed


def keyed_window(
    env: wv.StreamExecutionEnvironment,
    events: list[Any],
    window: int | Any,
    strategy: wv.WatermarkStrategy | None = BOUND_0,
    *,
    key: Callable[[Any], Any] = first,
    trigger: Any = None,
    lateness: int | None = None,
    late: wv.OutputTag | None = None,
    **source: Any,
) -> Any:
    """``window_of`` a ``timestamped`` source: the keyed window of a test job whose events come
    from ``env``, not yet given its window function (``source``: ``timestamped``'s keywords)."""
    stream = timestamped(env, events, strategy, **source)
    return window_of(stream, window, key=key, trigger=trigger, lateness=lateness, late=late)


def count_windows(stream: Any, window: int | Any, *, sink: str = "out", **options: Any) -> Any:
    """Records of ``stream`` counted per key and window (``CountAggregate``, Flink's
    ``AggregateFunction`` applied as each element is added), into the sink ``sink``;
    ``options``: ``window_of``'s."""
    return window_of(stream, window, **options).aggregate(wv.CountAggregate()).sink_to(sink)


def count_pipeline(
    env: wv.StreamExecutionEnvironment,
    events: list[Any],
    window: int | Any,
    strategy: wv.WatermarkStrategy | None = BOUND_0,
    *,
    sink: str = "out",
    **options: Any,
) -> wv.StreamExecutionEnvironment:
    """Adds to ``env`` the job most tests run: records counted per key and window
    (``CountAggregate``) — by default in tumbling event-time windows of ``window`` ms, with
    watermarks of bounded out-of-orderness 0 — into the sink ``sink``. ``options`` as
    ``keyed_window``'s (partitions, key, trigger, allowed lateness, late side output, arrivals).
    Returns ``env``: ``count_pipeline(env, ...).execute()``."""
    windowing = {k: options.pop(k) for k in ("key", "trigger", "lateness", "late") if k in options}
    count_windows(timestamped(env, events, strategy, **options), window, sink=sink, **windowing)
    return env


def sum_pipeline(
    env: wv.StreamExecutionEnvironment,
    events: list[Any],
    window: int | Any,
    strategy: wv.WatermarkStrategy = BOUND_0,
    *,
    sink: str = "out",
    **options: Any,
) -> wv.StreamExecutionEnvironment:
    """Adds to ``env`` an incremental window aggregation: (key, ts, value) records reduced per
    key and window to (key, first ts, sum of values) — a ``ReduceFunction`` that Flink's
    ``WindowOperator`` applies as each element is added (one value in state per window, not a
    list); by default in tumbling event-time windows of ``window`` ms, bound 0. ``options`` as
    ``keyed_window``'s. Returns ``env``."""
    keyed_window(env, events, window, strategy, **options).reduce(add_values).sink_to(sink)
    return env


def add_values(a: Any, b: Any) -> Any:
    """The reduce of ``sum_pipeline``: keeps ``a``'s key and timestamp, adds the values."""
    return (a[0], a[1], a[2] + b[2])


def count_per_key(
    events: list[tuple[Any, int]],
    size: int,
    strategy: wv.WatermarkStrategy | None = None,
    **arrivals: Any,
) -> wv.JobExecutionResult:
    """(key, ts) events counted per key in ``size`` ms tumbling event-time windows (sink
    "out"); watermarks by ``strategy`` (bounded out-of-orderness 0 unless told otherwise);
    ``arrivals``: ``from_collection``'s ``arrival_interval`` or ``arrival_times``."""
    env = wv.StreamExecutionEnvironment()
    return count_pipeline(env, events, size, strategy or BOUND_0, **arrivals).execute()


def explorer_job(events: list[tuple[str, int]], bound: int) -> wv.JobExecutionResult:
    """bench/explore_bench.py's pipeline: bounded out-of-orderness, tumbling 5 s windows,
    allowed lateness 1 s, late data to a side output, a count per key (events: (key, ts),
    10 ms apart)."""
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    options = {"lateness": 1000, "late": late, "arrival_interval": 10}
    return count_pipeline(env, events, 5000, bounded(bound), **options).execute()


@st.composite
def jobs(draw):
    n = draw(st.integers(0, 60))
    keys = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    ts = draw(st.lists(st.integers(-50, 400), min_size=n, max_size=n))
    gaps = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    arrivals, t = [], 0
    for g in gaps:
        t += g
        arrivals.append(t)
    return {
        "events": [(k, x, i) for i, (k, x) in enumerate(zip(keys, ts, strict=True))],
        "arrivals": arrivals,
        "assigner": draw(st.sampled_from(sorted(ASSIGNERS))),
        "trigger": draw(st.sampled_from(sorted(TRIGGERS))),
        "lateness": draw(st.sampled_from([0, 0, 25, 100])),
        "side": draw(st.booleans()),
        "function": draw(st.sampled_from([*KERNEL_FUNCTIONS, "process"])),
        "bound": draw(st.sampled_from([0, 10, 40])),
        "interval": draw(st.sampled_from([0, 7, 50, 200])),
        "layout": draw(st.sampled_from(["single", "partitions", "union"])),
        "parts": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
        "idle": draw(st.sampled_from([None, 30, 100])),
    }


def build(job, trace: bool, extra=None) -> wv.StreamExecutionEnvironment:
    """The job's pipeline (not run yet); ``extra(stream)`` may add a branch on the
    timestamped stream (tests/test_checkpoints.py adds a KeyedProcessFunction)."""
    env = wv.StreamExecutionEnvironment(trace=trace, auto_watermark_interval=job["interval"])
    late = wv.OutputTag("late")
    strategy = bounded(job["bound"])
    if job["idle"] is not None:
        strategy = strategy.with_idleness(job["idle"])
    split = [
        [
            (e, a)
            for e, a, p in zip(job["events"], job["arrivals"], job["parts"], strict=True)
            if p == q
        ]
        for q in (0, 1)
    ]
    if job["layout"] == "single":
        stream = env.from_collection(
            job["events"], arrival_times=job["arrivals"]
        ).assign_timestamps_and_watermarks(strategy)
    elif job["layout"] == "partitions":
        stream = env.from_partitions(
            [[e for e, _ in part] for part in split],
            arrival_times=[[a for _, a in part] for part in split],
        ).assign_timestamps_and_watermarks(strategy)
    else:
        a, b = (
            env.from_collection(
                [e for e, _ in part], arrival_times=[a for _, a in part]
            ).assign_timestamps_and_watermarks(strategy)
            for part in split
        )
        stream = a.union(b)
    if extra is not None:
        extra(stream)
    windowed = stream.key_by(lambda e: e[0]).window(ASSIGNERS[job["assigner"]]())
    trigger = TRIGGERS[job["trigger"]]()
    if trigger is not None and not (job["assigner"] == "session" and job["trigger"] == "never"):
        windowed.trigger(trigger)
    windowed.allowed_lateness(job["lateness"])
    if job["side"]:
        windowed.side_output_late_data(late)
    if job["function"] == "reduce":
        out = windowed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
    elif job["function"] == "aggregate":
        out = windowed.aggregate(wv.SumAggregate(lambda e: e[2]))
    elif job["function"] == "reduce_process":
        out = windowed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]), Annotate())
    elif job["function"] == "aggregate_process":
        out = windowed.aggregate(wv.SumAggregate(lambda e: e[2]), Annotate())
    else:
        out = windowed.process(
            lambda k, ctx, els, o: o.collect((k, ctx.window(), sorted(e[2] for e in els)))
        )
    out.sink_to("out")
    return env


# -- the explorers' pipeline (tests/test_viz_explore.py, tests/test_viz_grid.py) ----------

RECORDS = [("a", 1000), ("a", 2500), ("a", 6000), ("a", 4000), ("a", 12000), ("a", 3000)]
ARRIVALS = [0, 100, 200, 300, 400, 500]


def counts(records, bound=1000, lateness=0, size=5000):
    """Counts per key in tumbling windows, late data to a side output: the pipeline the
    explorer tests slide through (records arrive at ``ARRIVALS``)."""
    env = wv.StreamExecutionEnvironment()
    late = wv.OutputTag("late")
    options = {"lateness": lateness, "late": late, "arrival_times": ARRIVALS, "sink": "counts"}
    return count_pipeline(env, records, size, bounded(bound), **options).execute()


def aligned_job() -> wv.JobExecutionResult:
    """Watermark alignment (group "g", drift 1000, buffer 0): "fast" (ts i·1000) and "slow"
    (ts i·100), 30 records each every 100 ms, windowed after their union. At 1000 fast's
    watermark 8999 is ahead of 899 + 1000: paused until slow finishes (resumed at 3000), as
    test_alignment's buffer-0 case. (test_viz_cues, test_viz_palette.)"""

    def strategy() -> wv.WatermarkStrategy:
        return (
            wv.WatermarkStrategy.for_monotonous_timestamps()
            .with_timestamp_assigner(lambda e, _: e[1])
            .with_watermark_alignment("g", 1000, 1000)
        )

    env = wv.StreamExecutionEnvironment()
    env.set_watermark_alignment_buffer_size(0)
    arrivals = [i * 100 for i in range(30)]
    fast = env.from_collection(
        [("f", i * 1000) for i in range(30)], arrival_times=arrivals, name="fast"
    ).assign_timestamps_and_watermarks(strategy())
    slow = env.from_collection(
        [("s", i * 100) for i in range(30)], arrival_times=arrivals, name="slow"
    ).assign_timestamps_and_watermarks(strategy())
    count_windows(fast.union(slow), 2000)
    return env.execute()


def global_sums(
    trigger: Any,
    events: list[tuple[Any, int]],
    arrival_times: list[int],
    *,
    budget: int | None = None,
    trace: bool = True,
) -> wv.StreamExecutionEnvironment:
    """(key, ts) events keyed by key into ``GlobalWindows`` under ``trigger``, reduced to
    (key, sum of ts) into the sink "out" (bound 0); ``budget``: the timer firing budget, where
    given. Returns ``env``, not run (the trigger-loop tests run it)."""
    env = wv.StreamExecutionEnvironment(trace=trace)
    if budget is not None:
        env.set_timer_firing_budget(budget)
    windowed = keyed_window(
        env, events, wv.GlobalWindows.create(), trigger=trigger, arrival_times=arrival_times
    )
    windowed.reduce(lambda a, b: (a[0], a[1] + b[1])).sink_to("out")
    return env


def union_all_idle() -> wv.JobExecutionResult:
    """Two streams into map "m": a idle at 800 ms, b at 1000 ms, then m itself is idle until
    the end of input at 3000 ms (test_parallel_inputs.py's last test, test_viz_propagation)."""
    env = wv.StreamExecutionEnvironment()
    a = env.from_collection([1_000], arrival_times=[0], name="a")
    b = env.from_collection([5_000, 6_000], arrival_times=[0, 3_000], name="b")
    s = wv.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e)
    a = a.assign_timestamps_and_watermarks(s.with_idleness(300))
    b = b.assign_timestamps_and_watermarks(s.with_idleness(500))
    a.union(b).map(lambda e: e).name("m").sink_to("out")
    return env.execute()


MERGE_CHAIN_EVENTS = [("a", 1000), ("a", 2500), ("a", 1800), ("a", 4000), ("a", 3300)]
MERGE_CHAIN_EVENTS += [("a", 5500), ("a", 4800)]


def merge_chain_job() -> wv.JobExecutionResult:
    """A session (gap 1000 ms, allowed lateness 500 ms, watermark bound 5000 ms: nothing fires
    before the end of input) grown by three merges, elements 10 ms apart: at 20 ms a@1800 joins
    [1000, 2000) and [2500, 3500) into [1000, 3500); at 40 ms a@3300 joins that and
    [4000, 5000) into [1000, 5000); at 60 ms a@4800 joins that and [5500, 6500) into
    [1000, 6500) — [1000, 2000)'s contents pass through all three merge results."""
    env = wv.StreamExecutionEnvironment()
    count_pipeline(
        env,
        MERGE_CHAIN_EVENTS,
        wv.EventTimeSessionWindows.with_gap(1000),
        bounded(5000),
        lateness=500,
        arrival_interval=10,
    )
    return env.execute()


def spark_and_model(run: Callable[..., Any], predict: Callable[..., Any], *inputs: Any) -> Any:
    """A Spark twin run on real Spark (``run``: ``run_twin``, ``run_state_twin`` or
    ``run_join_twin``) and on its model (``predict``) with the same ``inputs`` (rows, arrival
    times, spec): both must give the same micro-batches, and the same trace where the twin has
    one. Returns the real run."""
    ran, modelled = run(*inputs), predict(*inputs)
    assert (ran.source, modelled.source) == ("spark", "model")
    assert ran.summary() == modelled.summary(), inputs[-1:]
    assert ran.batches == modelled.batches
    if ran.trace is not None:
        assert ran.trace.to_json() == modelled.trace.to_json()
    return ran


def restored_after_idle() -> wv.JobExecutionResult:
    """Two partitions, idleness 300: partition 1 (b@1500 at 0) is idle at 800; the checkpoint
    after three records (900 ms), the failure at the fourth (a@5000, 1100 ms). The restore
    (clock back to 900) starts both channels again active at MIN: partition 0 replays a@5000
    (4999 at 1300, seq 65) while partition 1 holds the watermark at MIN until the idleness
    timeout marks it idle again at 1500 (seq 66: the watermark rises to 4999)."""
    env = wv.StreamExecutionEnvironment().enable_checkpointing(at_records=[3])
    count_pipeline(
        env,
        [[("a", 1_000), ("a", 3_000), ("a", 5_000), ("a", 9_000)], [("b", 1_500)]],
        2_000,
        bounded(0).with_idleness(300),
        partitioned=True,
        arrival_times=[[0, 900, 1_100, 2_500], [0]],
    )
    return env.execute(fail_at=4)
