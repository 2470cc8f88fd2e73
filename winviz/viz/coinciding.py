"""Coinciding lines: where step lines lie exactly on each other, all of them in sight.

Two watermark lines with the same values at the same times would be drawn over the same
pixels, only the last one seen. Each line is cut into *runs*, maximal stretches where the
same set of lines coincides (``runs``, found exactly from the vertices); a run shared by *n*
lines is drawn by each with the dash ``[DASH_PX, (n − 1) · DASH_PX]`` offset by its place
among them (``dash``), so their colours take turns along it, one dash each.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Sequence
from itertools import pairwise
from typing import Any, NamedTuple

DASH_PX = 5  # the length of one line's dash where lines coincide

Point = tuple[float, float]
Piece = tuple[Point, Point]
Cut = tuple[Point, Point, bool]  # a piece, and whether another path may share it


class Runs(NamedTuple):
    """A set of paths cut into runs: ``rows`` per (n, k) — the vertices (``path``, ``run``,
    ``i``, ``x``, ``y``) of the runs where a path is the k-th (0-based) of n paths lying on
    each other; ``shared`` — per tuple of coinciding paths, how far they run together in x."""

    rows: dict[tuple[int, int], list[dict[str, Any]]]
    shared: dict[tuple[Hashable, ...], float]


def _pieces(points: Sequence[Point], cuts_h: dict[float, list[float]],
            cuts_v: dict[float, list[float]]) -> list[Cut]:  # fmt: skip
    """A path's segments, each horizontal (vertical) one cut at the x (y) of every step on its
    row (column) in ``cuts_h`` (``cuts_v``), each piece with whether another path may share
    it (not on a row or column of its own only); a diagonal segment stays whole."""
    out: list[Cut] = []
    for a, b in pairwise(points):
        if a == b:
            continue
        if a[1] == b[1]:
            if a[1] not in cuts_h:
                out.append((a, b, False))
                continue
            axis, cuts, at = 0, cuts_h[a[1]], a[1]
        elif a[0] == b[0]:
            if a[0] not in cuts_v:
                out.append((a, b, False))
                continue
            axis, cuts, at = 1, cuts_v[a[0]], a[0]
        else:
            out.append((a, b, True))
            continue
        lo, hi = sorted((a[axis], b[axis]))
        inner = cuts[bisect_right(cuts, lo) : bisect_right(cuts, hi)]
        stops = [a[axis], *(inner if a[axis] < b[axis] else reversed(inner))]
        stops = [s for s in stops if s != b[axis]] + [b[axis]]
        ends = [(s, at) if axis == 0 else (at, s) for s in stops]
        out += [(p, q, True) for p, q in pairwise(ends) if p != q]
    return out


def runs(paths: dict[Hashable, Sequence[Point]]) -> Runs | None:
    """``paths`` (in drawing order, each its vertices in order) cut into runs; None when no
    two paths share a piece."""
    cuts_h: dict[float, set[float]] = {}
    cuts_v: dict[float, set[float]] = {}
    on_h: dict[float, set[Hashable]] = {}  # the paths with a step on each row (column)
    on_v: dict[float, set[Hashable]] = {}
    for path, points in paths.items():
        for a, b in pairwise(points):
            if a[1] == b[1]:
                cuts_h.setdefault(a[1], set()).update((a[0], b[0]))
                on_h.setdefault(a[1], set()).add(path)
            elif a[0] == b[0]:
                cuts_v.setdefault(a[0], set()).update((a[1], b[1]))
                on_v.setdefault(a[0], set()).add(path)
    # (a row or column of one path's steps only: nothing to cut, nothing shared)
    sorted_h = {k: sorted(v) for k, v in cuts_h.items() if len(on_h[k]) > 1}
    sorted_v = {k: sorted(v) for k, v in cuts_v.items() if len(on_v[k]) > 1}
    cut = {path: _pieces(points, sorted_h, sorted_v) for path, points in paths.items()}
    order = {path: i for i, path in enumerate(paths)}
    on: dict[Piece, set[Hashable]] = {}
    for path, pieces in cut.items():
        for p, q, shared in pieces:
            if shared:
                on.setdefault((min(p, q), max(p, q)), set()).add(path)
    across: dict[tuple[Hashable, ...], float] = {}  # per set of paths: their shared x length
    for (p, q), who in on.items():
        if len(who) > 1:
            key = tuple(sorted(who, key=order.__getitem__))
            across[key] = across.get(key, 0.0) + (q[0] - p[0])  # (a vertical piece: 0)
    if not across:
        return None
    out = Runs({}, across)
    for path, pieces in cut.items():
        stretches: list[tuple[tuple[Hashable, ...], list[Point]]] = []
        for p, q, shared in pieces:
            who = (
                tuple(sorted(on[(min(p, q), max(p, q))], key=order.__getitem__))
                if shared
                else (path,)
            )
            if stretches and stretches[-1][0] == who and stretches[-1][1][-1] == p:
                stretches[-1][1].append(q)
            else:
                stretches.append((who, [p, q]))
        for n_run, (who, points) in enumerate(stretches):
            out.rows.setdefault((len(who), who.index(path)), []).extend(
                {"path": path, "run": n_run, "i": i, "x": x, "y": y}
                for i, (x, y) in enumerate(points)
            )
    return out


def dash(n: int, k: int) -> dict[str, Any]:
    """The mark properties of the k-th (0-based) of n coinciding lines."""
    return {"strokeDash": [DASH_PX, (n - 1) * DASH_PX], "strokeDashOffset": (n - k) % n * DASH_PX}
