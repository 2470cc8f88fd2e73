"""The input side of an operator with several input channels (Flink's ``StreamTaskNetworkInput``
/ ``StreamMultipleInputProcessor`` feeding a ``StatusWatermarkValve``).

Records of every channel go straight to the operator. Watermarks and idle/active statuses of a
channel go into the operator's ``StatusWatermarkValve``; only what the valve emits — the minimum
over the active, aligned channels, when it increases, and the valve's own idle/active status —
reaches the operator's ``process_watermark`` / ``process_watermark_status``. An operator with a
single input has no gate: its upstream calls it directly (the fast path stays as it is).

Trace: ``channel_watermark`` for every watermark a channel delivers (``ts`` is the channel's
watermark, the record's ``watermark`` the operator's current one), ``channel_idle`` /
``channel_active`` when a channel's status changes, then the operator's own ``watermark`` when
the valve emits one and ``idle`` / ``active`` when the valve's status changes.
"""

from __future__ import annotations

from winviz.operators.base import StreamOperator
from winviz.valve import StatusWatermarkValve


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
    """The channels of one operator and the valve that combines their watermarks.

    ``inputs`` names the upstream operator of each channel (the ``input`` of trace records).
    ``channel(i)`` is channel ``i``'s ``InputChannel``, made when first asked for: an
    ``Exchange`` hands records to ``op`` and watermarks to ``channel_watermark`` directly, so
    a gate of ``p`` channels behind ``p`` exchanges makes none (``p * p`` objects at
    parallelism ``p`` otherwise).
    """

    def __init__(self, op: StreamOperator, inputs: list[str]) -> None:
        self.op = op
        self.inputs = inputs
        self.valve = StatusWatermarkValve(len(inputs))
        self._channels: dict[int, InputChannel] = {}

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
                op.job.now, op.current_watermark(), op.name, watermark, channel,
                self.inputs[channel],
            )  # fmt: skip
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
            write(op.job.now, op.current_watermark(), op.name, channel, self.inputs[channel])
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
                self.op.trace_status(idle)
                self.op.process_watermark_status(idle)
