"""What every operator shares: an output, a watermark, the job context (Flink's
``AbstractStreamOperator`` and ``Output``). ``output.collect(value, ts)`` calls the next
operator's ``process_element`` directly (Flink's ``ChainingOutput``); a watermark follows the
records emitted because of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from winviz.errors import UserFunctionError, WinvizError, returned_value_error
from winviz.functions import OutputTag
from winviz.keygroups import user_key
from winviz.operators.batch import Batch
from winviz.time import MIN
from winviz.timers import DEFAULT_FIRING_BUDGET
from winviz.trace import TraceWriter


@dataclass
class JobContext:
    """Run-wide facts operators read: the trace writer (None when off), the source record being
    processed (for errors) and its partition, the processing clock, the firing budget."""

    trace: TraceWriter | None = None
    record_index: int | None = None
    partition: int | None = None
    now: int = MIN  # the job's one simulated processing clock
    metrics: dict[str, dict[str, int]] = field(default_factory=dict)
    timer_firing_budget: int = DEFAULT_FIRING_BUDGET
    chain_watch: Any = None
    """Set while the runtime runs the clock to MAX: one advance for the firing budget."""


class Output:
    """Where an operator sends records, side outputs and watermarks."""

    def collect_batch(self, batch: Batch) -> None:
        """Several records at once (see ``StreamOperator.process_batch``)."""
        for _, _, value, ts in batch:
            self.collect(value, ts)

    def collect(self, value: Any, ts: int | None) -> None:
        raise NotImplementedError

    def collect_side(self, tag: OutputTag, value: Any, ts: int | None) -> None:
        raise NotImplementedError

    def emit_watermark(self, watermark: int) -> None:
        raise NotImplementedError

    def emit_watermark_status(self, idle: bool) -> None:
        """Flink's ``Output.emitWatermarkStatus``: the stream became idle / active."""


class CollectingOutput(Output):
    """Keeps everything (used by the conformance harness and tests)."""

    def __init__(self) -> None:
        self.records: list[tuple[Any, int | None]] = []
        self.side: dict[str, list[tuple[Any, int | None]]] = {}
        self.watermarks: list[int] = []
        self.statuses: list[str] = []

    def collect(self, value, ts):
        self.records.append((value, ts))

    def collect_side(self, tag, value, ts):
        self.side.setdefault(tag.id, []).append((value, ts))

    def emit_watermark(self, watermark):
        self.watermarks.append(watermark)

    def emit_watermark_status(self, idle):
        self.statuses.append("idle" if idle else "active")


class StreamOperator:
    """Base operator: forwards watermarks, keeps per-operator metrics."""

    is_keyed = False
    # records go one by one to an operator that may register processing-time timers or emit
    # a watermark on any record (punctuated)
    registers_processing_timers = False
    emits_watermarks_per_record = False
    traces_watermarks = True  # (a sink has no ``watermark`` records)

    @property
    def takes_batches(self) -> bool:
        """Whether the runtime may hand this operator a batch (``process_batch``)."""
        return not (self.registers_processing_timers or self.emits_watermarks_per_record)

    def __init__(self, name: str) -> None:
        self.name = name
        # parallel subtasks: the runtime names subtask i of operator "op" "op#i" and sets these
        self.logical_name = name
        self.subtask = 0
        self.parallelism = 1
        self.output: Output = CollectingOutput()
        self.job = JobContext()
        self.trace: TraceWriter | None = None
        self.current_key: Any = None
        self._watermark = MIN
        self.metrics: dict[str, int] = {"num_records_in": 0, "num_records_out": 0}

    # -- life cycle -----------------------------------------------------------------------

    def open(self, job: JobContext) -> None:
        self.job = job
        self.trace = job.trace
        job.metrics[self.name] = self.metrics

    def finish(self) -> None:
        """End of input (after the final watermark)."""

    # -- time -----------------------------------------------------------------------------

    def current_watermark(self) -> int:
        return self._watermark

    def current_processing_time(self) -> int:
        """The job's one simulated processing clock (``JobContext.now``)."""
        return self.job.now

    def process_watermark(self, watermark: int) -> None:
        """Advance this operator's watermark (only forward: an older one is ignored), fire
        what it makes due, then pass it downstream."""
        if watermark <= self._watermark:
            return
        self._watermark = watermark
        if self.trace is not None:
            self.trace_watermark(watermark)
        self.output.emit_watermark(watermark)

    def trace_watermark(self, watermark: int) -> None:
        """The trace's ``watermark`` record (before anything the watermark makes due)."""
        self.trace.watermark(  # type: ignore[union-attr]
            self.current_processing_time(), watermark, self.name, None, watermark, "input"
        )

    def trace_status(self, idle: bool) -> None:
        """The trace's ``idle`` / ``active`` record: this operator's status changed."""
        if self.trace is not None:
            write = self.trace.idle if idle else self.trace.active
            write(self.current_processing_time(), self.current_watermark(), self.name, self.name)

    def trace_channel_status(self, idle: bool, channel: int, input_name: str) -> None:
        """The trace's ``channel_idle`` / ``channel_active`` record of input ``channel``."""
        if self.trace is not None:
            write = self.trace.channel_idle if idle else self.trace.channel_active
            write(
                self.current_processing_time(), self.current_watermark(), self.name, channel,
                input_name,
            )  # fmt: skip

    def process_watermark_status(self, idle: bool) -> None:
        """Flink's ``processWatermarkStatus`` of a one-input operator: pass the status on
        (an operator with several inputs gets it through its ``InputGate``'s valve)."""
        self.output.emit_watermark_status(idle)

    def advance_processing_time(self, now: int) -> None:
        """Move this operator's processing clock to ``now`` (firing due timers)."""
        if now > self.job.now:
            self.job.now = now

    def next_processing_timer(self) -> int | None:
        return None

    # -- processing -----------------------------------------------------------------------

    def process_element(self, value: Any, ts: int | None) -> None:
        raise NotImplementedError

    def process_batch(self, batch: Batch) -> None:
        """One ``process_element`` per record, the clock and record index set as the runtime
        would."""
        job = self.job
        for arrival, index, value, ts in batch:
            job.now = arrival
            job.record_index = index
            self.process_element(value, ts)

    def emit(self, value: Any, ts: int | None) -> None:
        self.metrics["num_records_out"] += 1
        if self.trace is not None:
            self.trace.emitted(
                self.current_processing_time(),
                self._watermark,
                self.name,
                user_key(self.current_key),
                None,
                ts,
                value,
            )
        self.output.collect(value, ts)

    def side_output(self, tag: OutputTag, value: Any, ts: int | None) -> None:
        """Flink's ``Context.output(tag, value)``: ``value`` to the side output ``tag``."""
        if self.trace is not None:
            self.trace.side_output(
                self.current_processing_time(), self.current_watermark(), self.name,
                user_key(self.current_key), ts, tag.id, value,
            )  # fmt: skip
        self.output.collect_side(tag, value, ts)

    def call_user(
        self,
        what: str,
        fn: Any,
        *args: Any,
        key: Any = None,
        window: Any = None,
        record: Any = None,
    ) -> Any:
        """Call a user function; re-raise its exception with operator, key, window, record."""
        try:
            return fn(*args)
        except WinvizError:
            raise
        except Exception as exc:
            raise UserFunctionError(
                function=what,
                operator=self.name,
                key=key,
                window=window,
                record=record,
                index=self.job.record_index,
                cause=exc,
            ) from exc

    # -- checkpoints ----------------------------------------------------------------------

    def state_descriptors(self) -> dict[str, str]:
        """The state this operator registers, by name → its type and namespace serializer,
        as Flink checks them on a restore (``winviz.checkpoints.check_snapshot``)."""
        return {}

    def snapshot(self) -> dict[str, Any]:
        """This operator's part of a checkpoint (Flink's ``snapshotState``); not the clock nor
        the watermark (a restored operator starts at MIN, as in Flink)."""
        return {
            "metrics": dict(self.metrics),
            "current_key": self.current_key,
        }

    def restore(self, snap: dict[str, Any]) -> None:
        """Load a snapshot into a freshly built operator (Flink's ``initializeState``)."""
        self.metrics.clear()  # the same dict object: the job's metrics table points at it
        self.metrics.update(snap["metrics"])
        self.current_key = snap.get("current_key")


class FunctionOperator(StreamOperator):
    """An operator that runs a user's process function ``function`` with a context ``ctx``
    (Flink's ``AbstractUdfStreamOperator``): opens the function with the operator and calls
    its ``void`` methods."""

    function: Any
    ctx: Any

    def open(self, job: JobContext) -> None:
        """Flink's ``FunctionUtils.openFunction``: the function's ``open(ctx)``, if it has one,
        once the operator is open."""
        super().open(job)
        opener = getattr(self.function, "open", None)
        if opener is not None:
            opener(self.ctx)

    def call_function(
        self,
        method: str,
        args: tuple[Any, ...],
        *,
        key: Any,
        record: Any,
        index: int | None,
        when: str = "",
    ) -> None:
        """Call the user function's ``method``, one of Flink's ``void`` process methods
        (``process_element``, ``on_timer``): an exception is re-raised as ``UserFunctionError``,
        a returned value raises ``returned_value_error``, each naming ``key``, the record
        ``index`` and ``record`` (None: no record); ``when`` says in words what was being
        processed (then the returned value's error does not repeat ``record``)."""
        function = self.function
        try:
            returned = getattr(function, method)(*args)
        except WinvizError:
            raise
        except Exception as exc:
            raise UserFunctionError(
                function=method,
                operator=self.name,
                key=key,
                record=record,
                index=index,
                cause=exc,
            ) from exc
        if returned is not None:
            raise returned_value_error(
                f"{type(function).__name__}.{method}",
                self.name,
                returned,
                when=when,
                key=key,
                index=index,
                record=... if when or record is None else record,
            )
