"""The slider grid: an explorer's runs precomputed for a page without a kernel (``make lessons``).

Every point of a grid over the explorer's controls is run (``Explorer.compute``) and the page's
controls switch between those runs. A slider offers ``min, min + step, …, max`` (and the lesson's
value if off that grid), a dropdown its options, any other widget its current value; the grid is
their product (the first control varies slowest). Above ``MAX_RUNS`` runs it is thinned:

1. dropdowns keep every option; if they alone make more than ``MAX_RUNS`` runs, the page keeps
   the explorer at the lesson's values, with a note saying so;
2. sliders give up values one at a time (the one with the most values left, the later one on a
   tie) until the product is at most ``MAX_RUNS``;
3. a slider left with ``k`` of its ``n`` values keeps ``k`` evenly spaced positions, both ends
   included (``round(j·(n−1)/(k−1))``), the lesson's value in place of the nearest inner one;
   at ``k = 1`` it is fixed at the lesson's value.

Each run (specs and status line) is gzip-compressed JSON in base64, identical runs stored once.
Past ``MAX_BYTES`` the run limit is scaled down by the overshoot (at least one run fewer) and the
grid thinned again; below 2 runs the page keeps the lesson's values with a note giving the sizes.
"""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from winviz.viz.controls import LABELS, is_dropdown, option_values

if TYPE_CHECKING:
    from winviz.viz.explore import Explorer

MAX_RUNS = 64  # engine runs per explorer on a page, at most
MAX_BYTES = 3_000_000  # bytes of precomputed runs (compressed, base64) per page, at most
FORMAT = 1  # version of the explorer block a page carries (``export_grid``)


@dataclass(frozen=True)
class Control:
    """One control as a page shows it: its kind ("slider", "dropdown" or "fixed"), the text
    of each value (``labels``), the values and the index of the lesson's value."""

    name: str
    label: str
    kind: str
    labels: tuple[str, ...]
    values: tuple[Any, ...]
    initial: int

    def keep(self, positions: Sequence[int]) -> Control:
        """The control with only the values at ``positions`` (sorted)."""
        return replace(
            self,
            labels=tuple(self.labels[i] for i in positions),
            values=tuple(self.values[i] for i in positions),
            initial=list(positions).index(self.initial),
        )


def control_of(name: str, widget: widgets.Widget, label: str) -> Control:
    """The values a control's widget can take (module docstring)."""
    if is_dropdown(widget):
        labels = tuple(str(x) for x in widget._options_labels)
        values = tuple(option_values(widget))
        index = widget.index if widget.index is not None else 0
        return Control(name, label, "dropdown", labels, values, index)
    lo, hi, step = (getattr(widget, a, None) for a in ("min", "max", "step"))
    value = widget.value
    if None in (lo, hi, step) or not step or step <= 0:
        return Control(name, label, "fixed", (_label(value),), (value,), 0)
    count = math.floor((hi - lo) / step + 1e-9) + 1
    whole = isinstance(widget, widgets.IntSlider)
    values = [lo + i * step if whole else round(lo + i * step, 12) for i in range(count)]
    if value not in values:  # the lesson's value off the step grid: one more position
        values = sorted([*values, value])
    labels = tuple(_label(v) for v in values)
    return Control(name, label, "slider", labels, tuple(values), values.index(value))


def _label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def thin(n: int, initial: int, k: int) -> list[int]:
    """The ``k`` positions of ``n`` a thinned slider keeps (module docstring, rule 3)."""
    if k >= n:
        return list(range(n))
    if k <= 1:
        return [initial]
    positions = sorted({round(j * (n - 1) / (k - 1)) for j in range(k)})
    if initial not in positions:
        between = positions[1:-1] if len(positions) >= 3 else positions
        nearest = min(between, key=lambda p: (abs(p - initial), p))
        positions = sorted((set(positions) - {nearest}) | {initial})
    return positions


def plan(controls: Sequence[Control], max_runs: int) -> list[list[int]] | None:
    """The positions each control keeps so that the grid has at most ``max_runs`` points
    (rules 1–3), or None when the dropdowns alone make more."""
    fixed = math.prod(len(c.values) for c in controls if c.kind != "slider")
    if fixed > max_runs:
        return None
    counts = {i: len(c.values) for i, c in enumerate(controls) if c.kind == "slider"}
    while fixed * math.prod(counts.values()) > max_runs:
        most = max(counts, key=lambda i: (counts[i], i))
        counts[most] -= 1
    return [
        thin(len(c.values), c.initial, counts[i]) if i in counts else list(range(len(c.values)))
        for i, c in enumerate(controls)
    ]


def encode(value: Any) -> str:
    """``value`` as gzip-compressed JSON in base64 (no timestamp: the same bytes each time)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(text.encode("utf-8"), mtime=0)).decode("ascii")


def decode(blob: str) -> Any:
    """The value ``encode`` wrote."""
    return json.loads(gzip.decompress(base64.b64decode(blob, validate=True)).decode("utf-8"))


def _run_blob(explorer: Explorer, values: dict[str, Any]) -> str:
    """A run's charts (``Run.specs`` without ``$schema``: identical runs, identical blobs) and
    status line, as a page reads them."""
    run = explorer.compute(values)
    specs = [{k: v for k, v in spec.items() if k != "$schema"} for spec in run.specs]
    return encode({"specs": specs, "status": run.status(), "error": run.error is not None})


def export_grid(
    explorer: Explorer, *, max_runs: int = MAX_RUNS, max_bytes: int = MAX_BYTES
) -> dict[str, Any]:
    """Precompute ``explorer``'s runs on its slider grid (module docstring): the explorer block
    its page carries, as plain JSON data (``pages.script_json`` writes it)."""
    controls = [control_of(n, w, LABELS.get(n, n)) for n, w in explorer.controls.items()]
    initial = {c.name: c.values[c.initial] for c in controls}
    first = _run_blob(explorer, initial)
    combinations = math.prod(len(c.values) for c in controls)

    def payload(
        kept: list[Control], runs: list[int], blobs: list[str], fallback: str = ""
    ) -> dict[str, Any]:
        """The block: ``runs`` the blob of each grid point (first control slowest), or the
        lesson's run alone (``blobs[0]``) and why (``fallback``)."""
        return {
            "format": FORMAT,
            "call": explorer.call(initial),
            "controls": [  # (each field but the values: the page shows their labels)
                {k: list(v) if k == "labels" else v for k, v in vars(c).items() if k != "values"}
                for c in kept
            ],
            "runs": runs,
            "blobs": blobs,
            "combinations": combinations,
            "fallback": fallback,
        }

    cache = {tuple(c.initial for c in controls): first}
    limit = min(max_runs, max(1, max_bytes // max(1, len(first))))
    tried = (1, len(first))  # (runs, bytes) of the last grid that was too large
    while (positions := plan(controls, limit) if limit >= 2 else None) is not None:
        index: dict[str, int] = {}  # each distinct blob's number, in order of first use
        runs: list[int] = []
        for point in itertools.product(*positions):
            blob = cache.get(point)
            if blob is None:
                values = {c.name: c.values[i] for c, i in zip(controls, point, strict=True)}
                blob = cache[point] = _run_blob(explorer, values)
            runs.append(index.setdefault(blob, len(index)))
        blobs = list(index)
        size = sum(map(len, blobs))  # (bytes on the page: base64 text)
        if size <= max_bytes:
            thinned = [c.keep(p) for c, p in zip(controls, positions, strict=True)]
            return payload(thinned, runs, blobs)
        tried = (len(runs), size)
        limit = min(len(runs) - 1, int(len(runs) * max_bytes / size))
    dropdowns = math.prod(len(c.values) for c in controls if c.kind != "slider")
    if dropdowns > MAX_RUNS:
        why = (
            f"its dropdowns alone make {dropdowns} combinations, more than the {MAX_RUNS} "
            "runs a page may precompute"
        )
    else:
        why = (
            f"its grid has {combinations} combinations and one run takes "
            f"{len(first) / 1e6:.2f} MB compressed ({tried[0]} run(s): {tried[1] / 1e6:.2f} "
            f"MB), so not even 2 runs fit in the {max_bytes / 1e6:g} MB a page may hold"
        )
    lesson = [c.keep([c.initial]) for c in controls]
    return payload(lesson, [0], [first], why)
