"""Flink's ``StatusWatermarkValve``: one watermark out of many input channels, the **minimum**
over the aligned active channels, emitted when it rises. Idle channels drop out; when all are
idle the largest watermark seen is flushed and the valve reports IDLE; a channel active again
rejoins ("is aligned") once it has caught up with the output. The valve keeps the minimum and how
many channels are at it (O(1) a watermark), and looks again only when the last one leaves."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from winviz.time import MAX, MIN, count_arg

_NOT_ALIGNED = MAX + 1
"""A channel's ``_aligned`` entry while not aligned: above every watermark, never the minimum."""


@dataclass(frozen=True, slots=True)
class InputChannelStatus:
    """One channel's state: watermark, active, aligned (in the minimum)."""

    watermark: int = MIN
    active: bool = True
    aligned: bool = True


class StatusWatermarkValve:
    """Feed it channel watermarks and idle/active statuses; read what it emits."""

    def __init__(self, num_channels: int) -> None:
        count_arg(num_channels, what="num_channels")  # a valve needs an input channel
        self._watermarks = [MIN] * num_channels
        self._active = [True] * num_channels
        self._aligned = [MIN] * num_channels  # the watermark while aligned, else _NOT_ALIGNED
        self._num_active = num_channels
        self._low, self._at_low = MIN, num_channels  # the minimum of _aligned, how many at it
        self.last_output_watermark = MIN
        self.active = True
        self.emitted: list[tuple[str, int | str]] = []  # ("watermark", w) | ("status", s)

    # -- the channels' states ---------------------------------------------------------------

    @property
    def channels(self) -> list[InputChannelStatus]:
        """Every channel's state, in order (a copy)."""
        return [
            InputChannelStatus(w, a, al != _NOT_ALIGNED)
            for w, a, al in zip(self._watermarks, self._active, self._aligned, strict=True)
        ]

    def is_active(self, channel: int) -> bool:
        return self._active[channel]

    def set_channels(self, states: Iterable[tuple[int, bool, bool]]) -> None:
        """Set every channel's (watermark, active, aligned), e.g. from a snapshot."""
        states = list(states)
        if len(states) != len(self._watermarks):
            raise ValueError(f"{len(states)} channel states for {len(self._watermarks)} channels")
        self._watermarks = [w for w, _, _ in states]
        self._active = [a for _, a, _ in states]
        self._aligned = [w if al else _NOT_ALIGNED for w, _, al in states]
        self._num_active = sum(self._active)
        self._find_min()

    def _find_min(self) -> None:
        aligned = self._aligned
        self._low = low = min(aligned)
        self._at_low = aligned.count(low)

    def _set_aligned(self, channel: int, watermark: int) -> None:
        """Channel ``channel``'s entry in the minimum becomes ``watermark`` (``_NOT_ALIGNED``
        to leave it)."""
        old = self._aligned[channel]
        self._aligned[channel] = watermark
        low = self._low
        if watermark < low:
            self._low, self._at_low = watermark, 1
        elif watermark == low:
            if old != low:
                self._at_low += 1
        elif old == low:
            self._at_low -= 1
            if not self._at_low:
                self._find_min()

    # -- emitting ---------------------------------------------------------------------------

    def _emit_watermark(self, wm: int) -> None:
        self.last_output_watermark = wm
        self.emitted.append(("watermark", wm))

    def _emit_status(self, active: bool) -> None:
        self.active = active
        self.emitted.append(("status", "active" if active else "idle"))

    # -- inputs -----------------------------------------------------------------------------

    def input_watermark(self, watermark: int, channel: int) -> None:
        # ignored when the channel (or the whole valve) is idle, or when it does not increase
        if watermark <= self._watermarks[channel] or not (self.active and self._active[channel]):
            return
        self._watermarks[channel] = watermark
        if self._aligned[channel] != _NOT_ALIGNED or watermark >= self.last_output_watermark:
            self._set_aligned(channel, watermark)  # (now) aligned
        low = self._low
        if low != _NOT_ALIGNED and low > self.last_output_watermark:
            self._emit_watermark(low)

    def input_idle(self, channel: int) -> None:
        if not self._active[channel]:
            return
        self._active[channel] = False
        self._set_aligned(channel, _NOT_ALIGNED)
        self._num_active -= 1
        watermark = self._watermarks[channel]
        if watermark == self.last_output_watermark:  # it may have held the output back
            # all idle: flush the largest watermark seen; else the minimum of the aligned
            out = max(self._watermarks) if not self._num_active else self._low
            if out != _NOT_ALIGNED and out > self.last_output_watermark:
                self._emit_watermark(out)
        if not self._num_active:
            self._emit_status(False)

    def input_active(self, channel: int) -> None:
        if self._active[channel]:
            return
        self._active[channel] = True
        self._num_active += 1
        watermark = self._watermarks[channel]
        if watermark >= self.last_output_watermark:
            self._set_aligned(channel, watermark)
        if not self.active:
            self._emit_status(True)

    def drain(self) -> list[tuple[str, int | str]]:
        """What the valve emitted since the last drain."""
        out, self.emitted = self.emitted, []
        return out
