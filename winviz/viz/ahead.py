"""Drawing ahead in the kernel: the runs an explorer's learner is likely to ask for next.

After each change the explorer computes, while the kernel is idle, the runs of the
*neighbouring* control values (``neighbours``) and keeps each in a small cache keyed on the
full control values (``Ahead``); a change to one of them shows the cached run. The result is
exact: the pipeline is deterministic, and the one part of a chart that depends on the learner,
the scrubber's start time *t*, is redrawn when it moved since (``Run.keep``).

The work runs on the kernel's event loop, one neighbour per callback, so a learner's change is
served before the next neighbour starts; a change empties the queue. Without a running loop
``Explorer.work_ahead()`` does it. The cyclic collector is paused while a run is made and shown
(``winviz.collector.paused``); a run leaves no reference cycle (``JobRuntime.close``), so a
dropped run is freed by reference counting, once the kernel is idle (``Ahead.spent``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import Any

import ipywidgets as widgets

from winviz.viz.controls import is_dropdown, option_index, option_values

AHEAD_GAP_S = 0.02  # before each neighbour's run: the event loop polls its sockets meanwhile
KEPT_RUNS = 2  # runs kept besides the neighbours: the one shown and the one before it

ControlKey = tuple[tuple[str, Hashable], ...]


def control_key(
    controls: Mapping[str, widgets.Widget], values: Mapping[str, Any]
) -> ControlKey | None:
    """The cache key of these control values: per control its name and, for a dropdown, the
    index of the option (options need not be hashable), else the value; None when a value is
    unhashable (the run is not cached)."""
    key = []
    for name, widget in controls.items():
        value = values[name]
        if is_dropdown(widget):
            index = option_index(option_values(widget), value)
            if index is None:
                return None
            key.append((name, ("option", index)))
            continue
        try:
            hash(value)
        except TypeError:
            return None
        key.append((name, (type(value).__name__, value)))
    return tuple(key)


def neighbours(
    controls: Mapping[str, widgets.Widget],
    values: Mapping[str, Any],
    moved: str | None = None,
    direction: int = 1,
) -> list[dict[str, Any]]:
    """The control values one step from ``values``: each slider one ``step`` down and up
    within ``[min, max]``, each dropdown its previous and next option; the control ``moved``
    last comes first, its ``direction`` (+1 up, -1 down) first. Other widgets have none."""
    order = sorted(controls, key=lambda name: name != moved)
    found: list[dict[str, Any]] = []
    for name in order:
        widget = controls[name]
        steps = (direction, -direction) if name == moved else (1, -1)
        for step in steps:
            found.extend({**values, name: v} for v in _step(widget, values[name], step))
    return found


def _step(widget: widgets.Widget, value: Any, step: int) -> list[Any]:
    """The value of ``widget`` one step from ``value`` (none past an end)."""
    if is_dropdown(widget):
        values = option_values(widget)
        index = option_index(values, value)
        at = -1 if index is None else index + step
        return values[at : at + 1] if at >= 0 else []
    if isinstance(widget, (widgets.IntSlider, widgets.FloatSlider)):
        new = value + step * widget.step
        if isinstance(widget, widgets.FloatSlider):  # as the browser's slider steps: on the grid
            new = widget.min + round((new - widget.min) / widget.step) * widget.step
        return [new] if widget.min <= new <= widget.max else []
    return []


def direction(widget: widgets.Widget | None, change: Mapping[str, Any]) -> int:
    """+1 when a control moved up (a larger value, a later option), else -1."""
    old, new = change.get("old"), change.get("new")
    if widget is not None and is_dropdown(widget):
        values = option_values(widget)
        old, new = option_index(values, old) or 0, option_index(values, new) or 0
    try:
        return 1 if new > old else -1
    except TypeError:
        return 1


class Ahead:
    """The explorer's cache of runs by control values (``control_key``), least recently used
    first, holding at most ``limit`` runs, and the queue of values still to compute."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ready: OrderedDict[ControlKey, Any] = OrderedDict()  # explore.Run by key
        self.queue: list[dict[str, Any]] = []
        self.spent: list[Any] = []  # runs dropped from the cache or from view: freed when idle
        self.computed = 0  # runs put so far (the last one's ``Run.number``)

    def get(self, key: ControlKey | None) -> Any:
        if key is None or key not in self.ready:
            return None
        self.ready.move_to_end(key)
        return self.ready[key]

    def put(self, key: ControlKey, run: Any, wanted: set[ControlKey]) -> Any:
        """Keep ``run`` under ``key``, numbered after the runs before it, and return it; drop
        the least recently used runs not ``wanted`` while there are more than ``limit``."""
        self.computed += 1
        run = self.ready[key] = replace(run, number=self.computed)
        self.ready.move_to_end(key)
        for old in list(self.ready):
            if len(self.ready) <= self.limit:
                break
            if old not in wanted:
                self.spent.append(self.ready.pop(old))
        return run

    def clear(self) -> None:
        self.ready.clear()
        self.queue.clear()
        self.spent.clear()
