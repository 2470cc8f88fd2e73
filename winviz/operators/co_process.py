"""Two-input operators: ``a.connect(b).process(...)`` (Flink's ``CoProcessOperator``) and
``a.connect(b).key_by(k1, k2).process(...)`` (``KeyedCoProcessOperator``). Records of input 1
go to ``process_element1``, of input 2 to ``process_element2``; the two inputs' watermarks and
statuses combine as in Flink's ``AbstractStreamOperator.processWatermark1/2`` (an
``IndexedCombinedWatermarkStatus``): idle while both inputs are. Trace: ``channel_watermark`` /
``channel_idle`` / ``channel_active`` with ``channel`` 0 or 1 and ``input`` ``"input1"`` /
``"input2"``, then the operator's own ``watermark`` and ``idle`` / ``active``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from winviz.combined_watermark import CombinedWatermarkStatus
from winviz.errors import UnsupportedOperationError
from winviz.functions import Collector, CoProcessFunction, KeyedCoProcessFunction
from winviz.operators.base import FunctionOperator, StreamOperator
from winviz.operators.inputs import InputGate, OperatorInput
from winviz.operators.keyed_process import Context, KeyedProcessOperator

INPUT_NAMES = ("input1", "input2")
INPUT_METHODS = ("process_element1", "process_element2")


class IndexedCombinedWatermarkStatus:
    """Flink's ``IndexedCombinedWatermarkStatus``: a ``CombinedWatermarkStatus`` whose inputs
    are addressed by index (0 and 1 for ``processWatermark1`` / ``processWatermark2``)."""

    def __init__(self, inputs: int = 2) -> None:
        self.status = CombinedWatermarkStatus.of(inputs)

    @property
    def combined(self) -> int:
        return self.status.combined

    @property
    def all_idle(self) -> bool:
        return self.status.is_idle()

    def is_input_idle(self, index: int) -> bool:
        return self.status.partials[index].idle

    def update_watermark(self, index: int, watermark: int) -> bool:
        """``updateWatermark``: the input is active again; True: the combined watermark rose."""
        self.status.partials[index].set_watermark(watermark)
        return self.status.update_combined_watermark()

    def update_status(self, index: int, idle: bool) -> bool:
        """``updateStatus``; True: the combined watermark rose (all idle: the maximum)."""
        self.status.partials[index].idle = idle
        return self.status.update_combined_watermark()


class _TwoInputs:
    """The combination of the two inputs' watermarks and statuses (a ``StreamOperator``
    mixin)."""

    combined_status: IndexedCombinedWatermarkStatus

    def _process(self, index: int, value: Any, ts: int | None) -> None:  # pragma: no cover
        raise NotImplementedError

    def process_element1(self, value: Any, ts: int | None) -> None:
        self._process(0, value, ts)

    def process_element2(self, value: Any, ts: int | None) -> None:
        self._process(1, value, ts)

    def process_element(self, value: Any, ts: int | None) -> None:  # pragma: no cover
        raise UnsupportedOperationError("a two-input operator takes records through an input")

    def input_watermark(self, index: int, watermark: int) -> None:
        """``processWatermark1`` / ``processWatermark2``."""
        op: Any = self
        if op.trace is not None:
            op.trace.channel_watermark(
                op.current_processing_time(), op.current_watermark(), op.name, watermark, index,
                INPUT_NAMES[index],
            )  # fmt: skip
        status = self.combined_status
        if status.update_watermark(index, watermark):
            self.process_watermark(status.combined)  # type: ignore[attr-defined]

    def input_status(self, index: int, idle: bool) -> None:
        """``processWatermarkStatus1`` / ``processWatermarkStatus2``."""
        status = self.combined_status
        if status.is_input_idle(index) == idle:
            return
        self.trace_channel_status(idle, index, INPUT_NAMES[index])  # type: ignore[attr-defined]
        was_idle = status.all_idle
        if status.update_status(index, idle):
            self.process_watermark(status.combined)  # type: ignore[attr-defined]
        if status.all_idle != was_idle:
            self.trace_status(status.all_idle)  # type: ignore[attr-defined]
            self.output.emit_watermark_status(status.all_idle)  # type: ignore[attr-defined]


class CoInput(OperatorInput):
    """One input of a two-input operator, as its upstream (or its input gate) sees it."""

    def __init__(self, op: Any, index: int) -> None:
        self.op = op
        self.index = index
        self.process_element = op.process_element1 if index == 0 else op.process_element2

    def process_watermark(self, watermark: int) -> None:
        self.op.input_watermark(self.index, watermark)

    def process_watermark_status(self, idle: bool) -> None:
        self.op.input_status(self.index, idle)


class CoInputGate(InputGate):
    """The valve of one input of a two-input operator (Flink's ``StreamTwoInputProcessorFactory``
    builds a ``StatusWatermarkValve`` per input gate). Its channels' records are written under
    the gate's name ``"op/input1"`` / ``"op/input2"`` with the gate's watermark (what its valve
    last emitted, the operator's ``inputk`` record); the operator traces the input's idle /
    active, so the gate does not."""

    traces_status = False

    def __init__(self, receiver: CoInput, inputs: list[str]) -> None:
        super().__init__(receiver, inputs)  # type: ignore[arg-type]
        self.name = f"{receiver.op.name}/{INPUT_NAMES[receiver.index]}"

    def watermark(self) -> int:
        return self.valve.last_output_watermark


class _NoTimers:
    """The timer service of a non-keyed ``CoProcessFunction``: clocks only (Flink's
    ``CoProcessOperator.ContextImpl``)."""

    def __init__(self, op: StreamOperator) -> None:
        self._op = op

    def current_watermark(self) -> int:
        return self._op.current_watermark()

    def current_processing_time(self) -> int:
        return self._op.current_processing_time()

    def _refuse_set(self, *_: Any) -> None:
        raise UnsupportedOperationError("Setting timers is only supported on a keyed streams.")

    def _refuse_delete(self, *_: Any) -> None:
        raise UnsupportedOperationError("Deleting timers is only supported on a keyed streams.")

    register_event_time_timer = _refuse_set
    register_processing_time_timer = _refuse_set
    delete_event_time_timer = _refuse_delete
    delete_processing_time_timer = _refuse_delete


class CoProcessOperator(_TwoInputs, FunctionOperator):
    """Flink's ``CoProcessOperator``: a ``CoProcessFunction`` over two non-keyed inputs."""

    def __init__(self, name: str, function: CoProcessFunction) -> None:
        super().__init__(name)
        self.function = function
        self.combined_status = IndexedCombinedWatermarkStatus()
        self.ctx = Context(self, _NoTimers(self))  # (non-keyed: clocks only)
        self.collector = Collector(self.emit)

    def _process(self, index: int, value: Any, ts: int | None) -> None:
        method = INPUT_METHODS[index]
        self.metrics["num_records_in"] += 1
        if self.trace is not None:
            self.trace.element(
                self.current_processing_time(), self._watermark, self.name, None, ts, value
            )
        self.ctx._timestamp = ts
        self.collector.timestamp = ts
        args = (value, self.ctx, self.collector)
        self.call_function(method, args, key=None, record=value, index=self.job.record_index)


class KeyedCoProcessOperator(_TwoInputs, KeyedProcessOperator):
    """Flink's ``KeyedCoProcessOperator``: a ``KeyedCoProcessFunction`` over two keyed inputs
    sharing each key's state and timers."""

    def __init__(
        self,
        name: str,
        key_selector1: Callable[[Any], Any],
        key_selector2: Callable[[Any], Any],
        function: KeyedCoProcessFunction,
    ) -> None:
        super().__init__(name, key_selector1, function)  # type: ignore[arg-type]
        self.key_selectors = (key_selector1, key_selector2)
        self.combined_status = IndexedCombinedWatermarkStatus()

    def _process(self, index: int, value: Any, ts: int | None) -> None:
        self._process_keyed(self.key_selectors[index], INPUT_METHODS[index], value, ts)
