"""An explorer's controls (``winviz.viz.explore``): the ipywidgets slider or dropdown made for
each of a pipeline's parameters, their labels, and the check of a value a control is set to
from Python."""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import traitlets

from winviz.errors import InputError
from winviz.viz import value_texts

# readable labels of the usual engine parameters (any other name is shown as it is)
LABELS: dict[str, str] = {
    "bound": "out-of-orderness bound (ms)",
    "out_of_orderness": "out-of-orderness bound (ms)",
    "lateness": "allowed lateness (ms)",
    "allowed_lateness": "allowed lateness (ms)",
    "size": "window size (ms)",
    "slide": "window slide (ms)",
    "gap": "session gap (ms)",
    "idleness": "idleness timeout (ms)",
    "interval": "watermark interval (ms)",
}


def make_control(name: str, spec: Any, default: Any = inspect.Parameter.empty) -> widgets.Widget:
    """The widget for one control: ``(min, max, step)`` or ``(min, max, step, value)`` → an
    integer slider (a float slider if any of them is a float); a list of values or of
    ``(label, value)`` pairs, or a dict label → value → a dropdown; an ipywidgets widget is
    used as it is. ``default``: the pipeline's default for this parameter (the initial value
    when it is in range / among the options). Sliders update on release, not while dragged."""
    style, layout = {"description_width": "initial"}, widgets.Layout(width="420px")
    common = {"description": LABELS.get(name, name), "style": style, "layout": layout}
    if isinstance(spec, widgets.Widget):
        if not hasattr(spec, "value"):
            raise ControlSpecError(
                f"control {name!r}: a widget without a value ({type(spec).__name__})"
            )
        return spec
    if isinstance(spec, tuple):
        if len(spec) not in (3, 4) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in spec
        ):
            raise ControlSpecError(
                f"control {name!r}: a slider is (min, max, step) or (min, max, step, value) "
                f"of numbers, got {spec!r}"
            )
        lo, hi, step = spec[:3]
        if not lo <= hi or step <= 0:
            raise ControlSpecError(
                f"control {name!r}: expected min <= max and step > 0, got {spec!r}"
            )
        value = spec[3] if len(spec) == 4 else default
        if value is inspect.Parameter.empty or not isinstance(value, (int, float)):
            value = lo
        if not lo <= value <= hi:
            raise ControlValueError(f"control {name!r}: value {value!r} is outside [{lo}, {hi}]")
        cls = widgets.FloatSlider if any(isinstance(v, float) for v in spec) else widgets.IntSlider
        return cls(min=lo, max=hi, step=step, value=value, continuous_update=False, **common)
    if isinstance(spec, Mapping):
        options = [(str(k), v) for k, v in spec.items()]
    elif isinstance(spec, list):
        options = [
            (str(o[0]), o[1])
            if isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], str)
            else (option_label(o), o)
            for o in spec
        ]
    else:
        raise ControlSpecError(
            f"control {name!r}: expected (min, max, step) for a slider, a list or dict of "
            f"options for a dropdown, or an ipywidgets widget; got {type(spec).__name__} "
            f"{spec!r}"
        )
    if not options:
        raise ControlSpecError(f"control {name!r}: a dropdown needs at least one option")
    values = [v for _, v in options]
    among = default is not inspect.Parameter.empty and option_index(values, default) is not None
    return Dropdown(options=options, value=default if among else values[0], **common)


class Dropdown(widgets.Dropdown):
    """ipywidgets' ``Dropdown`` whose options may hold the value ``None`` (an idleness of
    "none"): ipywidgets reads a value of None as "nothing selected" and blanks the dropdown;
    here it selects the option that holds None."""

    @traitlets.observe("value")
    def _propagate_value(self, change: dict[str, Any]) -> None:
        at = [i for i, o in enumerate(self._options_values) if o is None]
        if change["new"] is None and at:
            self.index = at[0]
        else:
            super()._propagate_value(change)


class ControlSpecError(InputError):
    """A control's spec that makes no widget (``bound=(10, 0, 1)``: min above max…)."""


class ControlValueError(InputError):
    """A value a control cannot take: outside its slider's range, not of its kind, or not
    among its options."""


def check_control_value(name: str, widget: widgets.Widget, value: Any) -> None:
    """Raise ``ControlValueError`` when ``widget`` (a slider or a dropdown) cannot take
    ``value`` as it is (ipywidgets would clamp a slider's value silently)."""
    if is_dropdown(widget):
        if option_index(option_values(widget), value) is None:
            choices = ", ".join(repr(v) for v in option_values(widget))
            raise ControlValueError(
                f"control {name!r}: value {value!r} is not among its options ({choices})"
            )
        return
    lo, hi = getattr(widget, "min", None), getattr(widget, "max", None)
    if lo is None or hi is None:
        return  # another kind of widget: it validates its own values
    whole = isinstance(widget, (widgets.IntSlider, widgets.BoundedIntText))
    kind = "an int" if whole else "a number"
    if isinstance(value, bool) or not isinstance(
        value, numbers.Integral if whole else numbers.Real
    ):
        raise ControlValueError(
            f"control {name!r}: value {value!r} is not {kind} (expected {kind} in [{lo}, {hi}])"
        )
    if not lo <= value <= hi:
        raise ControlValueError(
            f"control {name!r}: value {value!r} is outside the slider's range [{lo}, {hi}] "
            "(ipywidgets would clamp it silently)"
        )


def is_dropdown(widget: widgets.Widget) -> bool:
    """Whether ``widget`` is a dropdown / selection: its values are its ``options``."""
    return getattr(widget, "options", None) is not None and hasattr(widget, "index")


def option_values(widget: widgets.Widget) -> list[Any]:
    """A dropdown's values, as ipywidgets reads its ``options``."""
    return list(widget._options_values)


def option_index(values: Sequence[Any], value: Any) -> int | None:
    """The index of ``value`` among a dropdown's ``values``: the same object first, else an
    equal one (``==`` giving a plain True); None when it is none of them."""
    for i, o in enumerate(values):
        if o is value:
            return i
    for i, o in enumerate(values):
        try:
            if bool(o == value):
                return i
        except (TypeError, ValueError):  # == gives no plain bool (arrays...): not equal
            pass
    return None


def option_label(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, (int, float, str)):
        return str(value)
    return value_texts.short(getattr(value, "__name__", None) or repr(value), 50)
