"""PyFlink's ``NumberSequenceSource(start, end)``: the numbers ``start..end`` (both
included), type LONG, read with ``env.from_source(source, watermark_strategy, name)``."""

from __future__ import annotations


class NumberSequenceSource:
    def __init__(self, start: int, end: int) -> None:
        if end < start:
            raise ValueError(f"NumberSequenceSource: end ({end}) must be >= start ({start})")
        self.start = start
        self.end = end

    def get_from(self) -> int:
        return self.start

    def get_to(self) -> int:
        return self.end
