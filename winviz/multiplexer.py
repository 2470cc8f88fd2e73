"""Flink's ``WatermarkOutputMultiplexer`` (with ``CombinedWatermarkStatus``): how a source
combines the watermarks of its splits (Kafka partitions) into one.

Each split has its own watermark generator writing to its own *partial* output. The combined
watermark is the minimum over the splits that are not idle, and it is emitted only when it
increases. When every split is idle, the source is marked idle (no watermark is flushed).
A split that becomes active again counts in the minimum at once — it can hold the combined
watermark back, though never move it backwards.

Generators write either *immediately* (``on_event`` of a punctuated generator: the combined
watermark is recomputed at once) or *deferred* (``on_periodic_emit``: all splits are asked
first, then ``update_combined()`` recomputes once, as Flink's ``onPeriodicEmit()`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from winviz.time import MIN


@dataclass
class PartialWatermark:
    """One split's watermark and idleness."""

    watermark: int = MIN
    idle: bool = False

    def set_watermark(self, watermark: int) -> bool:
        """Flink: any watermark makes the split active; only a higher one is kept."""
        self.idle = False
        if watermark > self.watermark:
            self.watermark = watermark
            return True
        return False


@dataclass
class WatermarkOutputMultiplexer:
    """Combines ``n`` partial watermarks; ``emitted`` collects what goes downstream as
    ("watermark", w) and ("idle", None) events."""

    partials: list[PartialWatermark]
    combined: int = MIN
    emitted: list[tuple[str, int | None]] = field(default_factory=list)

    @classmethod
    def of(cls, n: int) -> WatermarkOutputMultiplexer:
        return cls([PartialWatermark() for _ in range(n)])

    def update_combined(self) -> None:
        """``CombinedWatermarkStatus.updateCombinedWatermark`` and what the multiplexer does
        with its result: emit an increased watermark unless all are idle; mark idle if so."""
        active = [p.watermark for p in self.partials if not p.idle]
        if not active:
            self.emitted.append(("idle", None))
        elif min(active) > self.combined:
            self.combined = min(active)
            self.emitted.append(("watermark", self.combined))

    def drain(self) -> list[tuple[str, int | None]]:
        out, self.emitted = self.emitted, []
        return out
