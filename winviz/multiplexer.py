"""Flink's ``WatermarkOutputMultiplexer``: a source combines its splits' watermarks with a
``CombinedWatermarkStatus``, and is marked idle when every split is. Generators write at once
(``on_event``) or deferred (``on_periodic_emit``: every split first, then ``update_combined()``)."""

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
