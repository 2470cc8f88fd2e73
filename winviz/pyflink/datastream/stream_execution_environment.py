"""PyFlink's ``StreamExecutionEnvironment`` over winviz's.

``execute()`` builds a fresh winviz environment with the sinks added since the previous
``execute()`` (PyFlink clears its transformations on every execute), runs it, then does
what the sinks do: ``print()`` writes each record's text to stdout, a ``FileSink`` writes
its part file, ``execute_and_collect()`` hands the records back. Every run is recorded
(``winviz.pyflink.last_result()``), with its trace.

Defaults that differ from a local PyFlink run, on purpose: the parallelism is 1 (local
PyFlink uses one subtask per CPU core, and ``print()`` then prefixes ``k> ``); the source's
records all arrive at processing time 0 (``from_collection``), so the periodic watermark
generator emits nothing while they go in (once more at the end of input, then MAX), as
happens in a PyFlink run over a small collection, which ends before the first 200 ms tick.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import winviz as wv
from winviz.pyflink import _runs
from winviz.pyflink.common.configuration import Configuration
from winviz.pyflink.common.job_execution_result import JobExecutionResult
from winviz.pyflink.common.typeinfo import TypeInformation, Types, internal, text
from winviz.pyflink.common.watermark_strategy import WatermarkStrategy
from winviz.pyflink.datastream.data_stream import DataStream, DataStreamSink
from winviz.pyflink.errors import NotModelled, unsupported


@dataclass
class Job:
    """One ``execute()``: the winviz environment being built and the streams built on it."""

    env: wv.StreamExecutionEnvironment
    parallelism: int
    batch: bool
    memo: dict[int, Any] = field(default_factory=dict)
    keep: list[Any] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)

    def name(self, stream: Any, base: str) -> None:
        """Give ``stream``'s operator the name ``base`` (``base_2``… when taken): PyFlink
        lets two operators share a name, winviz's trace keys operators by name."""
        n = self.names.get(base, 0)
        while True:
            candidate = base if n == 0 else f"{base}_{n + 1}"
            n += 1
            try:
                stream.name(candidate)
            except wv.InputError as error:
                if "is taken" not in str(error):  # only a clash tries the next name
                    raise
                continue
            self.names[base] = n
            return


class ExecutionConfig(NotModelled):
    """The parts of Flink's ``ExecutionConfig`` winviz reads: the periodic watermark
    interval (``set_auto_watermark_interval``, ms of simulated processing time)."""

    def __init__(self) -> None:
        self.auto_watermark_interval = 200
        self.parallelism: int | None = None

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        self.auto_watermark_interval = interval
        return self

    def get_auto_watermark_interval(self) -> int:
        return self.auto_watermark_interval

    def enable_object_reuse(self) -> ExecutionConfig:
        return self

    def disable_object_reuse(self) -> ExecutionConfig:
        return self

    def set_global_job_parameters(self, params: Any) -> ExecutionConfig:
        return self


class StreamExecutionEnvironment(NotModelled):
    """PyFlink's ``StreamExecutionEnvironment`` (``get_execution_environment()``)."""

    def __init__(self, configuration: Configuration | None = None) -> None:
        self._config = ExecutionConfig()
        self._configuration = configuration or Configuration()
        self._parallelism = 1
        self._max_parallelism: int | None = None
        self._mode = wv.RuntimeExecutionMode.STREAMING
        self._checkpoint_interval: int | None = None
        self._sinks: list[DataStreamSink] = []
        self._operators: list[DataStream] = []
        """The operators added since the last ``execute()`` (Flink's transformations; a
        source is none: it runs when an operator reads it)."""

    @staticmethod
    def get_execution_environment(
        configuration: Configuration | None = None,
    ) -> StreamExecutionEnvironment:
        return StreamExecutionEnvironment(configuration)

    # -- settings -------------------------------------------------------------------------

    def get_config(self) -> ExecutionConfig:
        return self._config

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        self._parallelism = parallelism
        return self

    def get_parallelism(self) -> int:
        return self._parallelism

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        self._max_parallelism = max_parallelism
        return self

    def get_max_parallelism(self) -> int:
        return self._max_parallelism or -1

    def set_runtime_mode(self, execution_mode: Any) -> StreamExecutionEnvironment:
        """STREAMING, BATCH or AUTOMATIC (winviz's ``RuntimeExecutionMode``; see
        docs/batch.md for what BATCH changes)."""
        self._mode = execution_mode
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> StreamExecutionEnvironment:
        return self

    def get_buffer_timeout(self) -> int:
        return 100

    def enable_checkpointing(self, interval: int, mode: Any = None) -> StreamExecutionEnvironment:
        """Checkpoints every ``interval`` ms of simulated processing time (winviz's
        ``enable_checkpointing``; they change no result of a run without failures)."""
        self._checkpoint_interval = interval
        return self

    def get_checkpoint_interval(self) -> int:
        return -1 if self._checkpoint_interval is None else self._checkpoint_interval

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        """Chaining changes no result (winviz chains what Flink chains)."""
        return self

    def is_chaining_enabled(self) -> bool:
        return True

    def get_default_local_parallelism(self) -> int:
        return 1

    def set_default_local_parallelism(self, parallelism: int) -> None:
        self._parallelism = parallelism

    def register_slot_sharing_group(self, slot_sharing_group: Any) -> StreamExecutionEnvironment:
        return self

    def register_cached_file(self, file_path: str, name: str, executable: bool = False) -> None:
        pass

    def configure(self, configuration: Configuration) -> StreamExecutionEnvironment:
        self._configuration = configuration
        return self

    def get_configuration(self) -> Configuration:
        return self._configuration

    # Python dependencies: the program runs in this interpreter, nothing to ship.
    def add_python_file(self, file_path: str) -> None:
        pass

    def set_python_requirements(self, requirements_file_path: str, *args: Any) -> None:
        pass

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> None:
        pass

    def set_python_executable(self, python_exec: str) -> None:
        pass

    def add_jars(self, *jars_path: str) -> None:
        pass

    def add_classpaths(self, *classpaths: str) -> None:
        pass

    def set_stream_time_characteristic(self, characteristic: Any) -> None:
        raise unsupported(
            "set_stream_time_characteristic (removed in Flink 2.x)",
            "event time comes from assign_timestamps_and_watermarks(WatermarkStrategy...)",
        )

    # -- sources ----------------------------------------------------------------------------

    def from_collection(
        self, collection: Iterable[Any], type_info: TypeInformation | None = None
    ) -> DataStream:
        """A bounded source of ``collection`` (Flink's ``fromCollection``); with
        ``type_info`` each element becomes what PyFlink hands on (a ``Row`` for a row type,
        32-bit floats for ``Types.FLOAT()``)."""
        values = [internal(type_info, v) for v in collection]
        return DataStream(
            self, (), lambda job: job.env.from_collection(values), type_info, "source"
        )

    def from_source(
        self,
        source: Any,
        watermark_strategy: WatermarkStrategy,
        source_name: str,
        type_info: TypeInformation | None = None,
    ) -> DataStream:
        """Flink's ``fromSource``: a ``NumberSequenceSource`` (the numbers ``start..end``,
        type LONG) with the given watermark strategy."""
        from winviz.pyflink.datastream.connectors.file_system import FileSource
        from winviz.pyflink.datastream.connectors.number_seq import NumberSequenceSource

        if isinstance(source, FileSource):
            return self._with_strategy(
                source.lines(), watermark_strategy, source_name, type_info or Types.STRING()
            )
        if not isinstance(source, NumberSequenceSource):
            raise unsupported(
                f"from_source({type(source).__name__})",
                "winviz.pyflink reads from_collection(...) and "
                "from_source(NumberSequenceSource(start, end), ...); read a file's lines "
                "with read_text_file(path) or load them into a list",
            )
        values = list(range(source.start, source.end + 1))
        return self._with_strategy(values, watermark_strategy, source_name, type_info)

    def _with_strategy(
        self, values: list[Any], watermark_strategy: Any, source_name: str, type_info: Any
    ) -> DataStream:
        """A source whose watermarks come from ``watermark_strategy`` (Flink generates them
        in the source reader; here right after it)."""
        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise wv.InputError(
                "from_source takes a WatermarkStrategy",
                field="watermark_strategy",
                value=watermark_strategy,
                expected="e.g. WatermarkStrategy.no_watermarks()",
            )
        strategy = watermark_strategy.strategy

        def build(job: Job) -> Any:
            # a source record has no timestamp: the assigner sees Flink's NO_TIMESTAMP
            # (Long.MIN_VALUE), and without an assigner the record keeps it
            # (SourceOutputWithWatermarks, RecordTimestampAssigner)
            stream = job.env.from_collection(
                values, timestamps=[wv.MIN] * len(values), name=source_name
            )
            return stream.assign_timestamps_and_watermarks(strategy)

        return DataStream(self, (), build, type_info or Types.LONG(), None)

    def add_source(self, source_func: Any, *args: Any, **kwargs: Any) -> Any:
        raise unsupported(
            "add_source (a Java SourceFunction)",
            "use from_collection(...) or from_source(NumberSequenceSource(...), ...)",
        )

    # -- running ----------------------------------------------------------------------------

    def _add_sink(self, kind: str, stream: DataStream, target: Any) -> DataStreamSink:
        sink = DataStreamSink(kind, stream, target)
        self._sinks.append(sink)
        return sink

    def execute(self, job_name: str | None = None) -> JobExecutionResult:
        """Run what the sinks added since the previous ``execute()`` need; print, write
        and collect what they got; return the result (with its trace)."""
        if not self._sinks and not self._operators:  # Flink's getStreamGraph refuses it
            raise wv.IllegalStateError(
                "No operators defined in streaming topology. Cannot execute."
            )
        sinks, self._sinks = self._sinks, []
        operators, self._operators = self._operators, []
        job_name = job_name or "Flink Streaming Job"
        env = wv.StreamExecutionEnvironment(
            auto_watermark_interval=self._config.auto_watermark_interval
        )
        env.set_parallelism(self._parallelism)
        if self._max_parallelism is not None:
            env.set_max_parallelism(self._max_parallelism)
        env.set_runtime_mode(self._mode)
        if self._checkpoint_interval is not None:
            env.enable_checkpointing(self._checkpoint_interval)
        batch = env.get_runtime_mode() != wv.RuntimeExecutionMode.STREAMING
        job = Job(env, self._parallelism, batch)
        for stream in operators:  # an operator without a sink runs too, as in Flink
            stream._translate(job)
        names = []
        for i, sink in enumerate(sinks):
            built = sink.stream._translate(job)
            name = f"{sink._name or sink.kind}#{i + 1}"
            (built.stream if isinstance(built, wv.KeyedStream) else built).sink_to(name)
            names.append(name)
        try:
            result = env.execute(job_name)
        except wv.WinvizError as error:
            partial = error.partial_result
            if partial is not None:
                failed = JobExecutionResult.of(partial, 0)
                _runs.record(failed)
                # Flink's print sink writes each record as it comes: what reached it
                # before the failure is printed (file sinks commit nothing, collect fails)
                self._deliver(sinks, names, failed, only_print=True)
            raise
        end = max(
            (r.processing_time for records in result.outputs.values() for r in records),
            default=0,
        )
        result = JobExecutionResult.of(result, end)
        _runs.record(result)
        self._deliver(sinks, names, result)
        return result

    def _deliver(
        self,
        sinks: list[DataStreamSink],
        names: list[str],
        result: JobExecutionResult,
        only_print: bool = False,
    ) -> None:
        """Hand each sink its records: print sinks print them (in processing-time order),
        collect sinks keep them, file sinks write them; ``only_print``: the print sinks
        only (a run that failed)."""
        printed = []
        for i, (sink, name) in enumerate(zip(sinks, names, strict=True)):
            if only_print and sink.kind != "print":
                continue
            records = result.outputs.get(name, [])
            type_info = sink.stream.get_type()
            if sink.kind == "print":
                prefix = "" if sink.target is None else f"{sink.target}> "
                printed.extend(
                    (r.processing_time, i, n, prefix + text(type_info, r.value))
                    for n, r in enumerate(records)
                )
            elif sink.kind == "collect":
                sink.collected = [r.value for r in records]
            else:
                sink.target.write([text(type_info, r.value) for r in records], records)
        out = sys.stdout
        for *_, line in sorted(printed):
            out.write(line + "\n")
        out.flush()

    def execute_async(self, job_name: str | None = None) -> Any:
        return _JobClient(self.execute(job_name))

    def get_execution_plan(self) -> str:
        kinds = [f"{s.kind} of {s.stream.get_name()}" for s in self._sinks]
        return "winviz plan: " + ", ".join(kinds)

    def close(self) -> None:
        self._sinks = []
        self._operators = []


class _JobClient:
    """``execute_async()``'s client: the job has already run (simulated time)."""

    def __init__(self, result: JobExecutionResult) -> None:
        self._result = result

    def get_job_id(self) -> str:
        return self._result.get_job_id()

    def get_job_execution_result(self) -> Any:
        from concurrent.futures import Future

        future: Future = Future()
        future.set_result(self._result)
        return future

    def cancel(self) -> None:
        pass
