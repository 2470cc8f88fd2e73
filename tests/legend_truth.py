"""A chart's legends against its data: each legend names only values drawn, and each value
drawn on a legend's scale is in it (a chart label is a claim about the trace). Shared by
tests/test_viz_legend_truth.py. (tests/conftest.py puts this folder on ``sys.path``.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from winviz.viz import spec

LEGEND_CHANNELS = ("color", "fill", "stroke", "shape", "strokeDash", "opacity", "size")
"""The channels Vega-Lite draws a legend for."""

Unit = tuple[tuple[int, ...], str]
"""One legend: the path of the views it belongs to (per independent scale) and its channel."""


def _leaves(
    view: dict[str, Any], data: Any, path: tuple[int, ...], independent: dict[str, tuple[int, ...]]
) -> Iterator[tuple[dict[str, Any], list[Any], dict[str, tuple[int, ...]]]]:
    """Each mark layer under ``view`` with its rows (its own data or the one it inherits)
    and, per channel, the path of the nearest view that resolves that channel's scale
    independently (its legends are apart from the rest's)."""
    data = view.get("data", data)
    for key in ("layer", "vconcat", "hconcat", "concat"):
        if key in view:
            own = view.get("resolve", {}).get("scale", {})
            for i, child in enumerate(view[key]):
                at = (*path, i)
                apart = {c: (-1, *path) for c, how in own.items() if how == "independent"}
                scopes = independent | apart
                yield from _leaves(child, data, at, scopes)
            return
    if "mark" in view:
        yield view, (data or {}).get("values", []), independent


def legend_truth(chart: Any) -> dict[Unit, tuple[list[Any], set[Any]]]:
    """Per legend whose scale has a fixed domain (a nominal or ordinal field): (its domain,
    the values of that field in the rows of the layers that use it). Scales are shared
    across layers and sub-charts unless resolved independent (Vega-Lite's default)."""
    whole = spec.inline_datasets(spec.chart_dict(chart))
    found: dict[Unit, tuple[list[Any], set[Any]]] = {}
    shown: set[Unit] = set()
    for leaf, rows, independent in _leaves(whole, None, (), {}):
        made = {step.get("as") for step in leaf.get("transform", []) if "calculate" in step}
        for channel, enc in leaf.get("encoding", {}).items():
            if channel not in LEGEND_CHANNELS or "field" not in enc:
                continue
            if enc.get("type") not in ("nominal", "ordinal") or enc["field"] in made:
                continue  # (a field made in the browser, e.g. the scrubber's as-of-t state)
            unit = (independent.get(channel, ()), channel)
            if unit[0]:  # apart: one legend per field and title (each layer's own scale)
                title = enc.get("title")
                unit = (unit[0], enc["field"] + ("" if title is None else f" ({title})"))
            domain, present = found.setdefault(unit, ([], set()))
            present.update(row.get(enc["field"]) for row in rows)
            if enc.get("legend", {}) is None:
                continue
            shown.add(unit)
            for value in enc.get("scale", {}).get("domain", []):
                if value not in domain:
                    domain.append(value)
    return {unit: found[unit] for unit in found if unit in shown and found[unit][0]}


def legends(chart: Any) -> dict[str, list[Any]]:
    """Each legend's entries by channel (by field and title where the chart resolves that
    channel's scale independently; prefixed by the sub-chart's path when nested), having
    checked each against the data (``legend_truth``): an entry naming nothing drawn, or a
    value drawn that no entry names, fails."""
    out: dict[str, list[Any]] = {}
    for (path, channel), (domain, present) in legend_truth(chart).items():
        name = "/".join([*map(str, path[1:]), channel])
        false = [value for value in domain if value not in present]
        missing = sorted(map(str, present - set(domain)))
        assert not false and not missing, f"legend {name}: not drawn {false}, unnamed {missing}"
        out[name] = domain
    return out
