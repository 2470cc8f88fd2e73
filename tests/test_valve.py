"""``StatusWatermarkValve`` keeps the minimum of its aligned channels in O(1) per channel
watermark (``winviz.valve``); here it is checked against the plain rule — the minimum over
a pass of every channel, as Flink's ``StatusWatermarkValve`` defines it — on random
sequences of watermarks and idle/active statuses, and after ``set_channels``."""

from __future__ import annotations

import random

import pytest

from winviz.time import MIN
from winviz.valve import InputChannelStatus, StatusWatermarkValve


class _Reference:
    """The valve's rule, one pass over all channels per input (the former implementation)."""

    def __init__(self, n: int) -> None:
        self.wm, self.act, self.al = [MIN] * n, [True] * n, [True] * n
        self.last, self.active, self.emitted = MIN, True, []

    def _min(self) -> None:
        aligned = [w for w, a in zip(self.wm, self.al, strict=True) if a]
        if aligned and min(aligned) > self.last:
            self.last = min(aligned)
            self.emitted.append(("watermark", self.last))

    def input_watermark(self, w: int, c: int) -> None:
        if self.active and self.act[c] and w > self.wm[c]:
            self.wm[c] = w
            if not self.al[c] and w >= self.last:
                self.al[c] = True
            self._min()

    def input_idle(self, c: int) -> None:
        if not self.act[c]:
            return
        self.act[c] = self.al[c] = False
        if not any(self.act):
            if self.wm[c] == self.last and max(self.wm) > self.last:
                self.last = max(self.wm)
                self.emitted.append(("watermark", self.last))
            self.active = False
            self.emitted.append(("status", "idle"))
        elif self.wm[c] == self.last:
            self._min()

    def input_active(self, c: int) -> None:
        if self.act[c]:
            return
        self.act[c] = True
        if self.wm[c] >= self.last:
            self.al[c] = True
        if not self.active:
            self.active = True
            self.emitted.append(("status", "active"))


@pytest.mark.parametrize("seed", range(40))
def test_the_valve_emits_what_the_plain_rule_emits(seed):
    rnd = random.Random(seed)
    n = rnd.choice([2, 3, 5, 8])
    valve, ref = StatusWatermarkValve(n), _Reference(n)
    for _ in range(300):
        c = rnd.randrange(n)
        roll = rnd.random()
        if roll < 0.7:
            w = rnd.randrange(0, 60)  # small range: many ties and non-increasing inputs
            valve.input_watermark(w, c)
            ref.input_watermark(w, c)
        elif roll < 0.85:
            valve.input_idle(c)
            ref.input_idle(c)
        else:
            valve.input_active(c)
            ref.input_active(c)
        assert valve.drain() == ref.emitted
        ref.emitted = []
        assert valve.channels == [
            InputChannelStatus(w, a, al) for w, a, al in zip(ref.wm, ref.act, ref.al, strict=True)
        ]


def test_set_channels_restores_the_minimum():
    valve = StatusWatermarkValve(3)
    valve.set_channels([(10, True, True), (5, False, False), (7, True, True)])
    valve.last_output_watermark = 5
    valve.input_watermark(8, 2)  # the minimum of the aligned channels is now 8 (10 and 8)
    assert valve.drain() == [("watermark", 8)]
    with pytest.raises(ValueError, match="2 channel states for 3 channels"):
        valve.set_channels([(1, True, True)] * 2)
