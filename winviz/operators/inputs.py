"""The input side of an operator with several input channels (Flink's
``StreamTaskNetworkInput`` feeding a ``StatusWatermarkValve``): records go straight to the
operator, watermarks and statuses into the valve, and only what the valve emits reaches the
operator. Trace: ``channel_watermark`` for every watermark a channel delivers,
``channel_idle`` / ``channel_active``, then the operator's own ``watermark`` and ``idle`` /
``active``.
"""

from __future__ import annotations

from typing import Any

from winviz.operators.base import StreamOperator
from winviz.valve import StatusWatermarkValve


class OperatorInput:
    """What is wired in front of an operator ``op`` (an input of a two-input operator, a BATCH
    sorting input): an ``InputGate`` reads the operator's name, trace, job and watermark
    through it, and a batch goes through it record by record."""

    op: StreamOperator

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def trace(self) -> Any:
        return self.op.trace

    @property
    def job(self) -> Any:
        return self.op.job

    def current_watermark(self) -> int:
        return self.op.current_watermark()

    process_batch = StreamOperator.process_batch


class InputChannel:
    """One input channel of a gate: what an upstream ``Output`` calls."""

    __slots__ = ("gate", "index", "process_batch", "process_element")

    def __init__(self, gate: InputGate, index: int) -> None:
        self.gate = gate
        self.index = index
        # records are not combined: bind the operator's methods (no extra call per record)
        self.process_element = gate.op.process_element
        self.process_batch = gate.op.process_batch

    def process_watermark(self, watermark: int) -> None:
        self.gate.channel_watermark(self.index, watermark)

    def process_watermark_status(self, idle: bool) -> None:
        self.gate.channel_status(self.index, idle)


class InputGate:
    """The channels of one operator (``inputs``: each one's upstream) and the valve that
    combines their watermarks; ``channel(i)`` is made when first asked for (an ``Exchange``
    calls the gate directly)."""

    traces_status = True

    def __init__(self, op: StreamOperator, inputs: list[str]) -> None:
        self.op = op
        self.inputs = inputs
        self.valve = StatusWatermarkValve(len(inputs))
        self._channels: dict[int, InputChannel] = {}
        self.name = op.name  # what its channels' records are written under

    def watermark(self) -> int:
        """The watermark its channels' records carry: the operator's."""
        return self.op.current_watermark()

    def channel(self, index: int) -> InputChannel:
        made = self._channels.get(index)
        if made is None:
            made = self._channels[index] = InputChannel(self, index)
        return made

    @property
    def channels(self) -> list[InputChannel]:
        """Every channel's ``InputChannel``, in order."""
        return [self.channel(i) for i in range(len(self.inputs))]

    def channel_watermark(self, channel: int, watermark: int) -> None:
        op = self.op
        if op.trace is not None:
            op.trace.channel_watermark(
                op.job.now, self.watermark(), self.name, watermark, channel, self.inputs[channel]
            )
        valve = self.valve
        valve.input_watermark(watermark, channel)
        if valve.emitted:
            self._forward()

    def channel_status(self, channel: int, idle: bool) -> None:
        if self.valve.is_active(channel) != idle:  # no change
            return
        op = self.op
        if op.trace is not None:
            write = op.trace.channel_idle if idle else op.trace.channel_active
            write(op.job.now, self.watermark(), self.name, channel, self.inputs[channel])
        if idle:
            self.valve.input_idle(channel)
        else:
            self.valve.input_active(channel)
        self._forward()

    def _forward(self) -> None:
        """Hand what the valve emitted to the operator, in order."""
        for what, value in self.valve.drain():
            if what == "watermark":
                self.op.process_watermark(value)  # type: ignore[arg-type]
            else:
                idle = value == "idle"
                if self.traces_status:
                    self.op.trace_status(idle)
                self.op.process_watermark_status(idle)
