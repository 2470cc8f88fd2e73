"""Flink's ``WatermarkOutputMultiplexer`` (with ``CombinedWatermarkStatus``): how a source
combines the watermarks of its splits (Kafka partitions) into one.

Each split has its own watermark generator writing to its own *partial* output. The combined
watermark is the minimum over the splits that are not idle, and it is emitted only when it
increases. When every split is idle, the combined watermark is the maximum over all splits
(flushed if it increased) and then the source is marked idle (Flink 2.3's
``CombinedWatermarkStatus``; checked against the Flink jar by ``tests/flink``).
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
        with its result: the combined watermark is the minimum over the active splits — the
        maximum over all of them when every split is idle — emitted when it increased; then,
        if every split is idle, the source is marked idle."""
        active = [p.watermark for p in self.partials if not p.idle]
        candidate = min(active) if active else max(p.watermark for p in self.partials)
        if candidate > self.combined:
            self.combined = candidate
            self.emitted.append(("watermark", self.combined))
        if not active:
            self.emitted.append(("idle", None))

    def drain(self) -> list[tuple[str, int | None]]:
        out, self.emitted = self.emitted, []
        return out
