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

from winviz.combined_watermark import CombinedWatermarkStatus, PartialWatermark


@dataclass
class WatermarkOutputMultiplexer:
    """Combines ``n`` partial watermarks with a ``CombinedWatermarkStatus``; ``emitted``
    collects what goes downstream as ("watermark", w) and ("idle", None) events."""

    status: CombinedWatermarkStatus
    emitted: list[tuple[str, int | None]] = field(default_factory=list)

    @classmethod
    def of(cls, n: int) -> WatermarkOutputMultiplexer:
        return cls(CombinedWatermarkStatus.of(n))

    @property
    def partials(self) -> list[PartialWatermark]:
        return self.status.partials

    @property
    def combined(self) -> int:
        return self.status.combined

    def update_combined(self) -> None:
        """What the multiplexer does with ``updateCombinedWatermark``'s result: an increase is
        emitted; then, if every split is idle, the source is marked idle."""
        if self.status.update_combined_watermark():
            self.emitted.append(("watermark", self.status.combined))
        if self.status.is_idle():
            self.emitted.append(("idle", None))

    def drain(self) -> list[tuple[str, int | None]]:
        out, self.emitted = self.emitted, []
        return out
