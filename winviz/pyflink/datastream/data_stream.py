"""PyFlink's ``DataStream``, ``KeyedStream``, ``WindowedStream``, ``AllWindowedStream``,
``ConnectedStreams`` and ``DataStreamSink``, as a plan over winviz's public API.

A PyFlink stream is a node of a plan: its inputs and how to build it on a winviz
environment (``_build``). Nothing is built until ``env.execute()``: then the environment
builds, on a fresh winviz environment, the streams its sinks added since the previous
``execute()`` need — each stream once (``Job.memo``) — and runs that job. That is
PyFlink's rule: ``execute()`` runs the transformations added since the last one, and a
source used again is read again.

Types: each stream knows its PyFlink type (``get_type()``): the ``type_info`` of its source,
the ``output_type`` of the function that made it, else none (PyFlink's pickled bytes);
``filter``, ``key_by``, ``union``, watermarks and ``reduce`` keep their input's type. The type
decides how ``print()`` writes a value (``typeinfo.text``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import winviz as wv
from winviz.pyflink.common.time import millis
from winviz.pyflink.common.typeinfo import TypeInformation, internal
from winviz.pyflink.common.types import Row
from winviz.pyflink.common.watermark_strategy import WatermarkStrategy
from winviz.pyflink.datastream import functions as fns
from winviz.pyflink.datastream.output_tag import OutputTag
from winviz.pyflink.datastream.window import CountTumblingWindowAssigner
from winviz.pyflink.errors import NotModelled, unsupported

if TYPE_CHECKING:
    from winviz.pyflink.datastream.stream_execution_environment import (
        Job,
        StreamExecutionEnvironment,
    )


class DataStream(NotModelled):
    """PyFlink's ``DataStream``: a node of the plan (see the module doc)."""

    def __init__(
        self,
        env: StreamExecutionEnvironment,
        inputs: tuple[DataStream, ...],
        build: Callable[..., Any],
        type_info: TypeInformation | None = None,
        base_name: str | None = None,
    ) -> None:
        self._env = env
        self._inputs = inputs
        self._build_fn = build
        self._type = type_info
        self._base_name = base_name
        self._name: str | None = None
        self._parallelism: int | None = None
        self._max_parallelism: int | None = None
        if inputs:
            env._operators.append(self)

    # -- building ---------------------------------------------------------------------------

    def _translate(self, job: Job) -> Any:
        """This stream on ``job``'s winviz environment (built once per job)."""
        built = job.memo.get(id(self))
        if built is None:
            ins = [s._translate(job) for s in self._inputs]
            built = self._build_fn(job, *ins)
            stream = _stream(built)
            if self._name is not None or self._base_name is not None:
                job.name(stream, self._name or self._base_name)
            if self._parallelism is not None:
                stream.set_parallelism(self._parallelism)
            if self._max_parallelism is not None:
                stream.set_max_parallelism(self._max_parallelism)
            job.memo[id(self)] = built
            job.keep.append(self)
        return built

    def _then(
        self,
        build: Callable[..., Any],
        type_info: TypeInformation | None,
        base_name: str | None = None,
        *others: DataStream,
    ) -> DataStream:
        return DataStream(self._env, (self, *others), build, type_info, base_name)

    # -- settings ----------------------------------------------------------------------------

    def get_name(self) -> str:
        return self._name or self._base_name or "stream"

    def name(self, name: str) -> DataStream:
        """The operator's name (its name in the trace; a name used twice gets ``_2``…)."""
        self._name = name
        return self

    def uid(self, uid: str) -> DataStream:
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStream:
        return self

    def set_description(self, description: str) -> DataStream:
        return self

    def set_parallelism(self, parallelism: int) -> DataStream:
        self._parallelism = parallelism
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream:
        self._max_parallelism = max_parallelism
        return self

    def force_non_parallel(self) -> DataStream:
        return self.set_parallelism(1).set_max_parallelism(1)

    def get_type(self) -> TypeInformation | None:
        return self._type

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._env

    def get_execution_config(self) -> Any:
        return self._env.get_config()

    def set_buffer_timeout(self, timeout_millis: int) -> DataStream:
        return self

    def start_new_chain(self) -> DataStream:
        return self

    def disable_chaining(self) -> DataStream:
        return self

    def slot_sharing_group(self, slot_sharing_group: Any) -> DataStream:
        return self

    def cache(self) -> DataStream:
        """Caching only saves recomputation; the results are the same without it."""
        return self

    # -- transformations ---------------------------------------------------------------------

    def map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        call = _rich(func, "map", self._env)
        return self._then(
            lambda job, s: _stream(s).map(lambda v: internal(output_type, call.of(job)(v))),
            output_type,
        )

    def flat_map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        call = _rich(func, "flat_map", self._env)

        def each(job: Job) -> Callable[[Any], Any]:
            f = call.of(job)
            return lambda v: [internal(output_type, r) for r in (f(v) or ())]

        return self._then(lambda job, s: _stream(s).flat_map(each(job)), output_type)

    def filter(self, func: Any) -> DataStream:
        call = _rich(func, "filter", self._env)
        return self._then(lambda job, s: _stream(s).filter(call.of(job)), self._type)

    def key_by(self, key_selector: Any, key_type: TypeInformation | None = None) -> KeyedStream:
        return KeyedStream(self, fns.method_of(key_selector, "get_key"))

    def window_all(self, window_assigner: Any) -> AllWindowedStream:
        return AllWindowedStream(self, window_assigner)

    def union(self, *streams: DataStream) -> DataStream:
        return self._then(
            lambda job, s, *others: _stream(s).union(*(_stream(o) for o in others)),
            self._type,
            None,
            *streams,
        )

    def connect(self, ds: DataStream) -> ConnectedStreams:
        if not isinstance(ds, DataStream):
            raise unsupported(
                "connect() with a BroadcastStream (broadcast state)",
                "connect two DataStreams (optionally key_by both) and keep the shared "
                "data in keyed state",
            )
        return ConnectedStreams(self, ds)

    def shuffle(self) -> DataStream:
        """Flink's random partitioning; winviz has no random choice (runs are
        deterministic), so records go round-robin (``rebalance``): the same counts per
        subtask, a fixed order."""
        return self.rebalance()

    def rescale(self) -> DataStream:
        """Round-robin to a subset of the next subtasks in Flink; round-robin to all of
        them here (the same at equal parallelism)."""
        return self.rebalance()

    def rebalance(self) -> DataStream:
        return self._then(lambda job, s: _stream(s).rebalance(), self._type)

    def forward(self) -> DataStream:
        return self._then(lambda job, s: _stream(s).forward(), self._type)

    def broadcast(self, *args: Any) -> Any:
        raise unsupported(
            "DataStream.broadcast (broadcast partitioning and broadcast state)",
            "connect the streams with connect() and key_by(), keeping shared data in keyed state",
        )

    def partition_custom(self, partitioner: Any, key_selector: Any) -> Any:
        raise unsupported(
            "DataStream.partition_custom (custom partitioners)",
            "use key_by(), rebalance() or forward(); winviz routes keys by Flink's "
            "key-group hashing",
        )

    def project(self, *field_indexes: int) -> DataStream:
        return self.map(lambda v: tuple(v[i] for i in field_indexes))

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        """A non-keyed ``ProcessFunction`` (Flink's ``ProcessOperator``). winviz runs it as a
        keyed process over one key in STREAMING mode (timers refused, as Flink refuses them
        on a non-keyed stream); in BATCH mode that would sort the records, so it is
        refused there."""

        def build(job: Job, s: Any) -> Any:
            if job.batch:
                raise unsupported(
                    "a non-keyed ProcessFunction in BATCH mode",
                    "use flat_map (it keeps the records' order), or key_by() first",
                )
            adapter = fns.KeyedProcessAdapter(
                func, output_type, "process", job.parallelism, keyed=False
            )
            return _stream(s).key_by(_one_key).process(adapter)

        return self._then(build, output_type)

    def assign_timestamps_and_watermarks(self, watermark_strategy: WatermarkStrategy) -> DataStream:
        strategy = _strategy(watermark_strategy)
        return self._then(
            lambda job, s: _stream(s).assign_timestamps_and_watermarks(strategy), self._type
        )

    def get_side_output(self, output_tag: OutputTag) -> DataStream:
        return self._then(
            lambda job, s: _stream(s).get_side_output(output_tag.tag), output_tag.type_info
        )

    # -- sinks -------------------------------------------------------------------------------

    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        """Flink's ``PrintSinkFunction``: each record's text on stdout when the job runs
        (prefixed ``sink_identifier> `` when given)."""
        return self._env._add_sink("print", self, sink_identifier)

    def sink_to(self, sink: Any) -> DataStreamSink:
        from winviz.pyflink.datastream.connectors.file_system import FileSink

        if not isinstance(sink, FileSink):
            raise unsupported(
                f"sink_to({type(sink).__name__})",
                "winviz.pyflink writes with print(), execute_and_collect() and "
                "FileSink.for_row_format(...); external systems (Kafka, Elasticsearch, "
                "JDBC…) are not modelled",
            )
        return self._env._add_sink("file", self, sink)

    def add_sink(self, sink_func: Any) -> Any:
        raise unsupported(
            "DataStream.add_sink (a Java SinkFunction)",
            "use print(), execute_and_collect() or sink_to(FileSink.for_row_format(...))",
        )

    def execute_and_collect(
        self, job_execution_name: str | None = None, limit: int | None = None
    ) -> Any:
        """Run the job (with every sink added since the last ``execute()``) and return
        this stream's records: an iterator (``CloseableIterator``), or a list of at most
        ``limit`` records."""
        sink = self._env._add_sink("collect", self, None)
        self._env.execute(job_execution_name or "collect")
        values = sink.collected
        if limit is not None:
            return values[:limit]
        return CloseableIterator(values)


class CloseableIterator:
    """PyFlink's iterator over collected records (also a context manager)."""

    def __init__(self, values: list[Any]) -> None:
        self._it = iter(values)

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def next(self) -> Any:
        return next(self._it)

    def close(self) -> None:
        self._it = iter(())

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class DataStreamSink(NotModelled):
    """What ``print()`` / ``sink_to()`` return."""

    def __init__(self, kind: str, stream: DataStream, target: Any) -> None:
        self.kind = kind
        self.stream = stream
        self.target = target
        self.collected: list[Any] = []
        self._name: str | None = None

    def name(self, name: str) -> DataStreamSink:
        self._name = name
        return self

    def uid(self, uid: str) -> DataStreamSink:
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStreamSink:
        return self

    def set_parallelism(self, parallelism: int) -> DataStreamSink:
        return self

    def set_description(self, description: str) -> DataStreamSink:
        return self

    def disable_chaining(self) -> DataStreamSink:
        return self

    def slot_sharing_group(self, slot_sharing_group: Any) -> DataStreamSink:
        return self


class KeyedStream(DataStream):
    """PyFlink's ``KeyedStream``; on winviz a ``key_by`` (it builds to winviz's
    ``KeyedStream``, whose ``.stream`` is the records themselves)."""

    def __init__(self, stream: DataStream, key: Callable[[Any], Any]) -> None:
        super().__init__(
            stream._env, (stream,), lambda job, s: _stream(s).key_by(key), stream._type
        )
        self._key = key

    def _keyed(self, build: Callable[..., Any], type_info: Any, base: str | None = None):
        return DataStream(self._env, (self,), build, type_info, base)

    def _rich(self, func: Any, method: str, output_type: Any) -> DataStream:
        """PyFlink runs ``KeyedStream.map`` / ``flat_map`` / ``filter`` as a keyed process
        function, so their ``open`` may take keyed state (``RuntimeContext.get_state``)."""

        def build(job: Job, keyed: Any) -> Any:
            adapter = fns.KeyedMapAdapter(func, method, output_type, method, job.parallelism)
            return keyed.process(adapter)

        return self._keyed(build, output_type, method)

    def map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        return self._rich(func, "map", output_type)

    def flat_map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        return self._rich(func, "flat_map", output_type)

    def filter(self, func: Any) -> DataStream:
        return self._rich(func, "filter", self._type)

    def reduce(self, func: Any) -> DataStream:
        """Flink's rolling reduce per key (``StreamGroupedReduceOperator``); in BATCH one
        final result per key (``BatchGroupedReduceOperator``)."""
        fn = fns.method_of(func, "reduce")
        return self._keyed(lambda job, k: k.reduce(fn), self._type)

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        return self.reduce(_field_reducer(position_to_sum, "sum"))

    def min(self, position_to_min: int | str = 0) -> DataStream:
        return self.reduce(_field_reducer(position_to_min, "min"))

    def max(self, position_to_max: int | str = 0) -> DataStream:
        return self.reduce(_field_reducer(position_to_max, "max"))

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        return self.reduce(_field_reducer(position_to_min_by, "min_by"))

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        return self.reduce(_field_reducer(position_to_max_by, "max_by"))

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        def build(job: Job, keyed: Any) -> Any:
            return keyed.process(
                fns.KeyedProcessAdapter(func, output_type, "process", job.parallelism)
            )

        return self._keyed(build, output_type)

    def window(self, window_assigner: Any) -> WindowedStream:
        return WindowedStream(self, window_assigner)

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        return WindowedStream(self, CountTumblingWindowAssigner(size, slide))


class WindowedStream(NotModelled):
    """PyFlink's ``WindowedStream``: the window settings, completed by a window function."""

    _all = False

    def __init__(self, stream: DataStream, assigner: Any) -> None:
        self._stream = stream
        self._assigner = assigner
        self._trigger: Any = None
        self._evictor: Any = None
        self._lateness: int | None = None
        self._late_tag: OutputTag | None = None

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._stream._env

    def get_input_type(self) -> TypeInformation | None:
        return self._stream._type

    def trigger(self, trigger: Any) -> WindowedStream:
        self._trigger = trigger
        return self

    def evictor(self, evictor: Any) -> WindowedStream:
        self._evictor = evictor
        return self

    def allowed_lateness(self, time_ms: Any) -> WindowedStream:
        self._lateness = millis(time_ms, "allowed_lateness")
        return self

    def side_output_late_data(self, output_tag: OutputTag) -> WindowedStream:
        self._late_tag = output_tag
        return self

    def _windowed(self, upstream: Any) -> Any:
        """The winviz ``WindowedStream`` with these settings."""
        if isinstance(self._assigner, CountTumblingWindowAssigner):
            if self._all:
                windowed = _stream(upstream).window_all(wv.GlobalWindows.create())
                windowed = self._assigner.apply(_AllKeyed(windowed))
            else:
                windowed = self._assigner.apply(upstream)
        elif self._all:
            windowed = _stream(upstream).window_all(self._assigner)
        else:
            windowed = upstream.window(self._assigner)
        if self._trigger is not None:
            windowed = windowed.trigger(self._trigger)
        if self._evictor is not None:
            windowed = windowed.evictor(self._evictor)
        if self._lateness is not None:
            windowed = windowed.allowed_lateness(self._lateness)
        if self._late_tag is not None:
            windowed = windowed.side_output_late_data(self._late_tag.tag)
        return windowed

    def _result(self, make: Callable[[Any], Any], type_info: Any) -> DataStream:
        return DataStream(
            self._stream._env, (self._stream,), lambda job, s: make(self._windowed(s)), type_info
        )

    def _window_function(self, fn: Any, output_type: Any) -> Any:
        if fn is None:
            return None
        if callable(getattr(fn, "process", None)):
            kind = "process_all" if self._all else "process"
        else:
            kind = "apply_all" if self._all else "apply"
        return fns.ProcessWindowAdapter(fn, kind, output_type)

    def reduce(
        self,
        reduce_function: Any,
        window_function: Any = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        fn = fns.method_of(reduce_function, "reduce")
        out_type = output_type if window_function is not None else self._stream._type
        return self._result(
            lambda w: w.reduce(fn, self._window_function(window_function, output_type)),
            out_type,
        )

    def aggregate(
        self,
        aggregate_function: Any,
        window_function: Any = None,
        accumulator_type: Any = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream:
        agg = fns.AggregateAdapter(aggregate_function)

        def make(w: Any) -> Any:
            pwf = self._window_function(window_function, output_type)
            if pwf is None and output_type is not None:
                pwf = fns.ProcessWindowAdapter(_PassThrough(), "apply_all", output_type)
            return w.aggregate(agg, pwf)

        return self._result(make, output_type)

    def apply(self, window_function: Any, output_type: TypeInformation | None = None) -> DataStream:
        kind = "apply_all" if self._all else "apply"
        return self._result(
            lambda w: w.process(fns.ProcessWindowAdapter(window_function, kind, output_type)),
            output_type,
        )

    def process(
        self, process_window_function: Any, output_type: TypeInformation | None = None
    ) -> DataStream:
        kind = "process_all" if self._all else "process"
        return self._result(
            lambda w: w.process(
                fns.ProcessWindowAdapter(process_window_function, kind, output_type)
            ),
            output_type,
        )


class AllWindowedStream(WindowedStream):
    """PyFlink's ``AllWindowedStream`` (``window_all``): one window operator for the whole
    stream (Flink runs it in one subtask)."""

    _all = True


class _AllKeyed:
    """Lets a count assigner configure a ``window_all`` stream like a keyed one."""

    def __init__(self, windowed: Any) -> None:
        self._windowed = windowed

    def window(self, assigner: Any) -> Any:
        return self._windowed


class _PassThrough:
    def apply(self, window: Any, inputs: Any) -> Any:
        return inputs


class ConnectedStreams(NotModelled):
    """PyFlink's ``ConnectedStreams``: ``map`` / ``flat_map`` / ``process`` with a
    two-input function (``CoMapFunction``…), keyed after ``key_by(k1, k2)``."""

    def __init__(
        self, first: DataStream, second: DataStream, keys: tuple[Any, Any] | None = None
    ) -> None:
        self._first = first
        self._second = second
        self._keys = keys

    def key_by(self, key_selector1: Any, key_selector2: Any, key_type: Any = None):
        keys = (fns.method_of(key_selector1, "get_key"), fns.method_of(key_selector2, "get_key"))
        return ConnectedStreams(self._first, self._second, keys)

    def _co(self, func: Any, kind: str, output_type: Any) -> DataStream:
        keys = self._keys

        def build(job: Job, a: Any, b: Any) -> Any:
            connected = _stream(a).connect(_stream(b))
            if keys is not None:
                connected = connected.key_by(*keys)
            adapter = _CoAdapter(func, kind, output_type, keys is not None, job.parallelism)
            return connected.process(adapter)

        return DataStream(self._first._env, (self._first, self._second), build, output_type)

    def map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        return self._co(func, "map", output_type)

    def flat_map(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        return self._co(func, "flat_map", output_type)

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream:
        return self._co(func, "process", output_type)


class _CoAdapter(wv.KeyedCoProcessFunction):
    """A PyFlink ``CoMapFunction`` / ``CoFlatMapFunction`` / ``(Keyed)CoProcessFunction`` as
    winviz's ``(Keyed)CoProcessFunction``."""

    def __init__(self, fn: Any, kind: str, output_type: Any, keyed: bool, parallelism: int):
        self.fn = fn
        self.kind = kind
        self.output_type = output_type
        self.context = fns._KeyedContext(keyed)
        self.cells = fns.ValueCells()
        self.runtime_context = fns.RuntimeContext(self.cells, kind, parallelism)
        self.keyed = keyed

    def open(self, ctx: Any) -> None:
        if self.keyed:
            self.cells.ctx = ctx
        fns.call_open(self.fn, self.runtime_context)

    def _call(self, n: int, value: Any, ctx: Any, out: Any) -> None:
        if self.keyed:
            self.cells.ctx = ctx
        self.context._ctx = ctx
        if self.kind == "map":
            out.collect(internal(self.output_type, getattr(self.fn, f"map{n}")(value)))
        elif self.kind == "flat_map":
            fns.emit(getattr(self.fn, f"flat_map{n}")(value), out, self.output_type)
        else:
            result = getattr(self.fn, f"process_element{n}")(value, self.context)
            fns.emit(result, out, self.output_type, ctx.output)

    def process_element1(self, value: Any, ctx: Any, out: Any) -> None:
        self._call(1, value, ctx, out)

    def process_element2(self, value: Any, ctx: Any, out: Any) -> None:
        self._call(2, value, ctx, out)

    def on_timer(self, timestamp: int, ctx: Any, out: Any) -> None:
        on_timer = getattr(self.fn, "on_timer", None)
        if on_timer is not None:
            self.cells.ctx = self.context._ctx = ctx
            fns.emit(on_timer(timestamp, self.context), out, self.output_type, ctx.output)


# -- helpers -------------------------------------------------------------------------------


def _stream(built: Any) -> Any:
    """The winviz ``DataStream`` of a built node (a ``KeyedStream``'s records)."""
    return built.stream if isinstance(built, wv.KeyedStream) else built


def _one_key(_: Any) -> int:
    return 0


def _strategy(watermark_strategy: Any) -> wv.WatermarkStrategy:
    if isinstance(watermark_strategy, WatermarkStrategy):
        return watermark_strategy.strategy
    raise wv.InputError(
        "assign_timestamps_and_watermarks takes a WatermarkStrategy",
        field="watermark_strategy",
        value=watermark_strategy,
        expected="e.g. WatermarkStrategy.for_monotonous_timestamps()"
        ".with_timestamp_assigner(MyTimestampAssigner())",
    )


class _Rich:
    """A non-keyed map / flat_map / filter function: a ``MapFunction``… (opened once per
    job, before its first record) or a plain function."""

    def __init__(self, func: Any, method: str, env: StreamExecutionEnvironment) -> None:
        self.func = func
        self.method = method
        self.env = env

    def of(self, job: Job) -> Callable[[Any], Any]:
        func, method = self.func, self.method
        call = fns.method_of(func, method)
        if call is func:
            return func
        opened = []

        def run(value: Any) -> Any:
            if not opened:
                opened.append(True)
                fns.call_open(func, fns.RuntimeContext(fns.ValueCells(), method, job.parallelism))
            return call(value)

        return run


def _rich(func: Any, method: str, env: StreamExecutionEnvironment) -> _Rich:
    if not callable(func) and not callable(getattr(func, method, None)):
        raise TypeError(f"{method}() takes a function or a {method.title()}Function, not {func!r}")
    return _Rich(func, method, env)


def _field_reducer(position: int | str, how: str) -> Callable[[Any, Any], Any]:
    """Flink's ``SumAggregator`` / ``ComparableAggregator``: ``sum``/``min``/``max`` keep the
    first record's other fields and combine one field; ``min_by``/``max_by`` keep the
    whole record with the smallest / largest field (the earlier one on a tie)."""

    def get(v: Any) -> Any:
        if isinstance(v, tuple | list | Row | dict):
            return v[position]
        return v

    def put(v: Any, x: Any) -> Any:
        if isinstance(v, tuple):
            return (*v[:position], x, *v[position + 1 :])  # type: ignore[misc]
        if isinstance(v, list | dict):
            c = v.copy()
            c[position] = x
            return c
        if isinstance(v, Row):
            c = Row(*v)
            if getattr(v, "_fields", None) is not None:
                c.set_field_names(v._fields)
            c[position] = x
            return c
        return x

    def reduce(a: Any, b: Any) -> Any:
        x, y = get(a), get(b)
        if how == "sum":
            return put(a, x + y)
        if how == "min":
            return put(a, min(x, y))
        if how == "max":
            return put(a, max(x, y))
        if how == "min_by":
            return b if y < x else a
        return b if y > x else a

    return reduce
