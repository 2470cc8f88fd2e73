"""Flink's ``StatusWatermarkValve``: one watermark out of many input channels.

An operator with several inputs (channels) can only promise what *all* of them promise: its
watermark is the **minimum** over its channels, emitted only when it increases. Idle channels
drop out of the minimum, so one silent partition does not hold everything back; when every
channel is idle the valve flushes the largest watermark it has seen and reports IDLE itself. A
channel that becomes active again only rejoins the minimum ("is aligned") once its watermark
has caught up with the valve's output.
"""

from __future__ import annotations

from dataclasses import dataclass

from winviz.time import MIN


@dataclass
class InputChannelStatus:
    watermark: int = MIN
    active: bool = True
    aligned: bool = True


class StatusWatermarkValve:
    """Feed it channel watermarks and idle/active statuses; read what it emits."""

    def __init__(self, num_channels: int) -> None:
        if num_channels < 1:
            raise ValueError("a valve needs at least one input channel")
        self.channels = [InputChannelStatus() for _ in range(num_channels)]
        self.last_output_watermark = MIN
        self.active = True
        self.emitted: list[tuple[str, int | str]] = []  # ("watermark", w) | ("status", s)

    def _emit_watermark(self, wm: int) -> None:
        self.last_output_watermark = wm
        self.emitted.append(("watermark", wm))

    def _emit_status(self, active: bool) -> None:
        self.active = active
        self.emitted.append(("status", "active" if active else "idle"))

    def input_watermark(self, watermark: int, channel: int) -> None:
        status = self.channels[channel]
        # ignored when the channel (or the whole valve) is idle, or when it does not increase
        if self.active and status.active and watermark > status.watermark:
            status.watermark = watermark
            if not status.aligned and watermark >= self.last_output_watermark:
                status.aligned = True
            self._output_min_of_aligned()

    def input_idle(self, channel: int) -> None:
        status = self.channels[channel]
        if not status.active:
            return
        status.active = False
        status.aligned = False
        if not any(c.active for c in self.channels):
            if status.watermark == self.last_output_watermark:
                self._output_max_of_all()
            self._emit_status(False)
        elif status.watermark == self.last_output_watermark:
            self._output_min_of_aligned()

    def input_active(self, channel: int) -> None:
        status = self.channels[channel]
        if status.active:
            return
        status.active = True
        if status.watermark >= self.last_output_watermark:
            status.aligned = True
        if not self.active:
            self._emit_status(True)

    def _output_min_of_aligned(self) -> None:
        aligned = [c.watermark for c in self.channels if c.aligned]
        if aligned and min(aligned) > self.last_output_watermark:
            self._emit_watermark(min(aligned))

    def _output_max_of_all(self) -> None:
        top = max(c.watermark for c in self.channels)
        if top > self.last_output_watermark:
            self._emit_watermark(top)

    def drain(self) -> list[tuple[str, int | str]]:
        """What the valve emitted since the last drain."""
        out, self.emitted = self.emitted, []
        return out
