"""The watermark kinds: ``valve``, ``bounded_out_of_orderness`` and ``watermark_generator``."""

from __future__ import annotations

from winviz.conformance.kinds.driver import Driver, TranscriptError, drain, parse_int_like
from winviz.operators.base import CollectingOutput
from winviz.time import MIN
from winviz.valve import StatusWatermarkValve
from winviz.watermarks import (
    AscendingTimestampsWatermarks,
    BoundedOutOfOrdernessWatermarks,
    WatermarksWithIdleness,
)


class ValveDriver(Driver):
    """Kind ``valve``: a StatusWatermarkValve with ``channels`` inputs."""

    OPERATOR_KEYS = frozenset({"kind", "channels"})
    STEP_KEYS = frozenset({"channel", "watermark", "idle", "active"})
    OUTPUTS = Driver.WATERMARK_OUTPUTS

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.valve = StatusWatermarkValve(self.option(spec, "channels"))

    def step(self, step, index):
        channel = self.channel(index, step, len(self.valve.channels), None, "")
        if "watermark" in step:
            self.valve.input_watermark(self.int_in(index, step, "watermark"), channel)
        if step.get("idle"):
            self.valve.input_idle(channel)
        if step.get("active"):
            self.valve.input_active(channel)
        out = self.valve.drain()
        return {
            "watermarks": [v for k, v in out if k == "watermark"],
            "status": [v for k, v in out if k == "status"],
        }


class _GeneratorOutput(CollectingOutput):
    """A generator's ``WatermarkOutput``: its watermarks and idle/active changes collected."""

    idle = False

    def emit_watermark(self, watermark: int) -> None:
        self.mark_active()
        super().emit_watermark(watermark)

    def mark_idle(self) -> None:
        if not self.idle:
            self.idle = True
            self.emit_watermark_status(True)

    def mark_active(self) -> None:
        if self.idle:
            self.idle = False
            self.emit_watermark_status(False)


class WatermarkGeneratorDriver(Driver):
    """Kind ``watermark_generator``: a strategy's generator (``WatermarkGenerator``), optionally
    with idleness (``WatermarksWithIdleness``); the processing time is a step's, else the last."""

    OPERATOR_KEYS = frozenset({"kind", "strategy", "idleness"})
    STEP_KEYS = frozenset({"event_ts", "periodic_emit", "processing_time"})
    OUTPUTS = Driver.WATERMARK_OUTPUTS

    def __init__(self, spec, where):
        super().__init__(spec, where)
        self.clock = MIN
        self.generator = self._make(spec, where)
        self.output = _GeneratorOutput()  # idleness is a property of the output across steps

    def _make(self, spec, where):
        strategy = spec.get("strategy") or {}
        kind = strategy.get("type")
        if kind == "bounded_out_of_orderness":
            gen = BoundedOutOfOrdernessWatermarks(
                parse_int_like(
                    strategy.get("max_out_of_orderness"), f"{where}: strategy.max_out_of_orderness"
                )
            )
        elif kind == "monotonous":
            gen = AscendingTimestampsWatermarks()
        else:
            raise TranscriptError(
                f"{where}: strategy.type {kind!r} is not bounded_out_of_orderness or monotonous"
            )
        if "idleness" in spec:
            gen = WatermarksWithIdleness(gen, self.option(spec, "idleness"), lambda: self.clock)
        return gen

    def step(self, step, index):
        """The processing time first (idleness reads it), then an event, then a periodic
        emit."""
        out = self.output
        self.clock = self.int_in(index, step, "processing_time", self.clock)
        if "event_ts" in step:
            self.generator.on_event(None, self.int_in(index, step, "event_ts"), out)
        if step.get("periodic_emit"):
            self.generator.on_periodic_emit(out)
        return drain(out)


class BoundedOutOfOrdernessDriver(WatermarkGeneratorDriver):
    """Kind ``bounded_out_of_orderness``: ``BoundedOutOfOrdernessWatermarks`` alone."""

    OPERATOR_KEYS = frozenset({"kind", "max_out_of_orderness"})
    STEP_KEYS = frozenset({"event_ts", "periodic_emit"})
    OUTPUTS = Driver.WATERMARK_OUTPUTS[:1]

    def _make(self, spec, where):
        return BoundedOutOfOrdernessWatermarks(self.option(spec, "max_out_of_orderness"))
