"""What a chart has drawn, in pixels, whether a new box would meet it, and the one placement
rule every chart's labels and moved marks follow (``first_clear``: the timeline's labels and
edge texts, the timers chart's ▼, labels and row above, the propagation chart's restart texts).
A box meets a box it ``overlaps`` and a segment that ``crosses`` it; each segment carries a tag
(a rule, a line, a guide's name).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

Box = tuple[float, float, float, float]  # left, top, right, bottom in pixels
Segment = tuple[float, float, float, float]  # x1, y1, x2, y2 in pixels

CELL_PX = 16  # the side of the cells boxes are filed under
FILED_PX = 1024  # a box wider or taller than this (or not finite) is tested on every question
ASKED = 16  # questions answered by a test over every box added in bulk before it is filed


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def crosses(seg: Segment, box: Box) -> bool:
    """Whether the segment runs through the box (Liang–Barsky clipping; touching its edge is
    crossing: a 2.5 px rule drawn along a box's edge covers it)."""
    x1, y1, x2, y2 = seg
    left, top, right, bottom = box
    lo, hi = 0.0, 1.0
    for p, q in ((x1 - x2, x1 - left), (x2 - x1, right - x1), (y1 - y2, y1 - top),
                 (y2 - y1, bottom - y1)):  # fmt: skip
        if p == 0:
            if q < 0:
                return False
        elif p < 0:
            lo = max(lo, q / p)
        else:
            hi = min(hi, q / p)
    return lo <= hi


def within(box: Box, area: Box) -> bool:
    """Whether ``box`` lies inside ``area`` (edges touching count)."""
    return area[0] <= box[0] and area[1] <= box[1] and box[2] <= area[2] and box[3] <= area[3]


def around(boxes: list[Box]) -> Box:
    """The smallest box around all of ``boxes``."""
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))  # fmt: skip


def _cells(lo: float, hi: float) -> range:
    return range(int(lo // CELL_PX), int(hi // CELL_PX) + 1)


def _fileable(box: Box) -> bool:
    """Whether ``box`` is filed under its cells: its sides finite, at most ``FILED_PX`` apart
    each way, and not inverted (a side not finite makes a difference NaN or infinite)."""
    return 0 <= box[2] - box[0] <= FILED_PX and 0 <= box[3] - box[1] <= FILED_PX


class Taken:
    """Boxes and tagged segments drawn: boxes filed under every (x, y) cell they span (those
    added in bulk, ``add_array``, tested all at once until asked ``ASKED`` times; those not
    ``_fileable`` tested every time), segments tested all at once by their bounding boxes."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []  # boxes added in bulk, n × 4
        self.loose: list[Box] = []  # boxes added one by one
        self.cells: dict[tuple[int, int], list[Box]] = {}
        self.wide: list[Box] = []
        self.filed = 0  # the parts filed
        self.asked = 0
        self.segments: list[tuple[Segment, Any]] = []  # each with its tag
        self.bounds: np.ndarray | None = None  # the segments' bounding boxes, n × 4

    def copy(self) -> Taken:
        out = Taken()
        out.parts, out.loose, out.wide = list(self.parts), list(self.loose), list(self.wide)
        out.cells = {c: list(boxes) for c, boxes in self.cells.items()}
        out.filed, out.asked, out.segments = self.filed, self.asked, list(self.segments)
        out.bounds = self.bounds
        return out

    def _file(self, box: Box) -> None:
        if not _fileable(box):
            self.wide.append(box)
            return
        for i in _cells(box[0], box[2]):
            for j in _cells(box[1], box[3]):
                self.cells.setdefault((i, j), []).append(box)

    def add(self, box: Box) -> None:
        """Add one box (none with a side not finite)."""
        if all(math.isfinite(v) for v in box):
            self.loose.append(box)
            self._file(box)

    def add_array(self, boxes: np.ndarray | list[Box]) -> None:
        """Add boxes in bulk (n × 4)."""
        if len(boxes):
            self.parts.append(np.asarray(boxes, dtype=float).reshape(-1, 4))
            self.asked = 0

    def extend(self, other: Taken) -> None:
        for part in other.parts:
            self.add_array(part)
        for box in other.loose:
            self.add(box)

    def add_segment(self, seg: Segment, tag: Any = True) -> None:
        self.segments.append((seg, tag))
        self.bounds = None

    def _every(self) -> list[Box]:
        return self.loose + [tuple(b) for part in self.parts for b in part.tolist()]

    def _file_parts(self) -> None:
        for part in self.parts[self.filed :]:
            for box in map(tuple, part.tolist()):
                self._file(box)
        self.filed = len(self.parts)

    def near(self, area: Box) -> tuple[list[Box], list[tuple[Segment, Any]]]:
        """The boxes and segments (with their tag) a box inside ``area`` may meet."""
        self._file_parts()
        if not _fileable(area):
            return self._every(), self.segments_near(area)
        cells, (left, top, right, bottom) = self.cells, area
        found = (b for i in _cells(left, right) for j in _cells(top, bottom)
                 for b in cells.get((i, j), ()))  # fmt: skip
        return list(dict.fromkeys(found)) + self.wide, self.segments_near(area)

    def segments_near(self, area: Box) -> list[tuple[Segment, Any]]:
        """The segments (with their tag, in the order added) whose bounding box meets
        ``area`` (edges touching count); all of them when a side of ``area`` is not finite."""
        if not self.segments or not all(math.isfinite(v) for v in area):
            return list(self.segments)
        if self.bounds is None:
            s = np.asarray([seg for seg, _ in self.segments], dtype=float)
            self.bounds = np.column_stack(
                (np.minimum(s[:, 0], s[:, 2]), np.minimum(s[:, 1], s[:, 3]),
                 np.maximum(s[:, 0], s[:, 2]), np.maximum(s[:, 1], s[:, 3]))
            )  # fmt: skip
        left, top, right, bottom = area
        b = self.bounds
        meet = (b[:, 0] <= right) & (left <= b[:, 2]) & (b[:, 1] <= bottom) & (top <= b[:, 3])
        return [self.segments[at] for at in np.flatnonzero(meet).tolist()]

    def hits(self, box: Box) -> Box | None:
        """A box ``box`` overlaps, else None."""
        if not _fileable(box):
            return next((b for b in self._every() if overlaps(b, box)), None)
        if len(self.parts) > self.filed:
            self.asked += 1
            if self.asked > ASKED:
                self._file_parts()
            else:
                rest = self.parts[self.filed :]
                a = rest[0] if len(rest) == 1 else np.concatenate(rest)
                at = np.flatnonzero(
                    (a[:, 0] < box[2])
                    & (box[0] < a[:, 2])
                    & (a[:, 1] < box[3])
                    & (box[1] < a[:, 3])
                )
                if len(at):
                    return tuple(a[at[0]].tolist())
        cells = self.cells
        for i in _cells(box[0], box[2]):
            for j in _cells(box[1], box[3]):
                for b in cells.get((i, j), ()):
                    if overlaps(b, box):
                        return b
        return next((b for b in self.wide if overlaps(b, box)), None)

    def crossing(self, box: Box, tags: Any = None) -> Any:
        """The tag of the first segment (of those tagged one of ``tags``; None: any) crossing
        ``box``, else None."""
        for seg, tag in self.segments_near(box):
            if (tags is None or tag in tags) and crosses(seg, box):
                return tag
        return None


def first_clear(
    tries: Iterable[tuple[Any, Iterable[Box]]],
    taken: Taken,
    *,
    inside: Box | None = None,
    lines: tuple[Any, ...] = (None,),
    add: bool = True,
    near: Box | None = None,
    passed: Callable[[Box, list[Box], list[tuple[Segment, Any]]], int] | None = None,
) -> tuple[Any, list[Box]] | None:
    """The placement rule (no mark hides another; nothing here is Flink's): the first of
    ``tries`` (a place and the boxes drawn there, in order of preference) whose every box lies
    inside ``inside``, overlaps no box ``taken`` and is crossed by no segment tagged one of
    ``lines[i]`` (box ``i``, the last entry for the rest; None: any, (): none), its boxes added
    to ``taken`` (``add``); None when none is: the caller's fallback says what then. ``near``:
    an area every try lies in, what is taken there fetched once, and ``passed(box, boxes,
    segments)`` how many tries on the next that may be clear is (what met ``box`` first)."""
    last, skip = len(lines) - 1, 0
    fetched = None if near is None else taken.near(near)
    for place, boxes in tries:  # (read as far as needed: ``tries`` may be endless)
        if skip:
            skip -= 1
            continue
        drawn, step = [], 0
        for i, box in enumerate(boxes):
            tags = lines[min(i, last)]
            if inside is not None and not within(box, inside):
                step = 1
            elif fetched is None:
                met = taken.hits(box) or (tags != () and taken.crossing(box, tags) is not None)
                step = int(bool(met))
            elif not clear(box, *fetched, tags):
                step = 1 if passed is None else passed(box, *fetched)
            if step:
                break
            drawn.append(box)
        if not step:
            for box in drawn if add else ():
                taken.add(box)
            return place, drawn
        skip = step - 1
    return None


def clear(
    box: Box, boxes: list[Box], segments: list[tuple[Segment, Any]], tags: Any = None
) -> bool:
    """Whether ``box`` overlaps none of ``boxes`` and none of ``segments`` (those tagged one of
    ``tags``; None: any) crosses it. One that meets it is moved first in its list (the next
    box tried likely meets it too)."""
    for at, b in enumerate(boxes):
        if overlaps(box, b):
            boxes[0], boxes[at] = b, boxes[0]
            return False
    for at, (s, tag) in enumerate(segments):
        if (tags is None or tag in tags) and crosses(s, box):
            segments[0], segments[at] = segments[at], segments[0]
            return False
    return True
