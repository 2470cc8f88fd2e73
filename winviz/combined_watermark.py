"""Flink's ``CombinedWatermarkStatus``: one watermark out of several partial ones that may each go
idle (a source's splits, the two inputs of a two-input operator). ``updateCombinedWatermark`` takes
the **minimum over the active partials**, or, when every partial is idle, the **maximum over all**
(Flink 2.3), and keeps it only when it rises. A partial that receives a watermark is active again at
once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

from winviz.time import MIN


@dataclass
class PartialWatermark:
    """One input's watermark and idleness (``CombinedWatermarkStatus.PartialWatermark``)."""

    watermark: int = MIN
    idle: bool = False

    def set_watermark(self, watermark: int) -> bool:
        """Any watermark makes the input active; only a higher one is kept. True: it rose."""
        self.idle = False
        if watermark > self.watermark:
            self.watermark = watermark
            return True
        return False


@dataclass
class CombinedWatermarkStatus:
    """The partial watermarks of ``n`` inputs and the combined watermark they give."""

    partials: list[PartialWatermark]
    combined: int = MIN

    @classmethod
    def of(cls, n: int) -> Self:
        return cls([PartialWatermark() for _ in range(n)])

    def is_idle(self) -> bool:
        """Every input is idle (``CombinedWatermarkStatus.isIdle``)."""
        return all(p.idle for p in self.partials)

    def update_combined_watermark(self) -> bool:
        """``updateCombinedWatermark``: the minimum over the active inputs, or the maximum over
        all when every input is idle; kept only when it rises. True: the combined watermark
        rose (the caller emits it)."""
        active = [p.watermark for p in self.partials if not p.idle]
        candidate = min(active) if active else max(p.watermark for p in self.partials)
        if candidate > self.combined:
            self.combined = candidate
            return True
        return False


@dataclass
class WatermarkOutputMultiplexer(CombinedWatermarkStatus):
    """Flink's ``WatermarkOutputMultiplexer``: a source combines its splits' watermarks, and is
    marked idle when every split is; ``emitted`` collects ("watermark", w) and ("idle", None).
    Generators write at once (``on_event``) or deferred (``on_periodic_emit``: every split
    first, then ``update_combined()``)."""

    emitted: list[tuple[str, int | None]] = field(default_factory=list)

    def update_combined(self) -> None:
        """Emit an increase of the combined watermark; mark the source idle when every split is."""
        if self.update_combined_watermark():
            self.emitted.append(("watermark", self.combined))
        if self.is_idle():
            self.emitted.append(("idle", None))

    def drain(self) -> list[tuple[str, int | None]]:
        out, self.emitted = self.emitted, []
        return out
