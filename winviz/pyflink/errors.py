"""The one error of ``winviz.pyflink`` for what it does not model: it names the PyFlink
feature and says what to do instead (never an ``AttributeError`` or a bare traceback)."""

from __future__ import annotations

from typing import Any

import winviz as wv


class PyFlinkFeatureNotSupported(wv.UnsupportedOperationError, ImportError):
    """A PyFlink feature winviz does not model (the Table API, Kafka and other connectors,
    state TTL…). It is an ``ImportError`` too, so ``from pyflink.table import …`` fails the
    way a missing module does — with this message."""

    def __init__(self, feature: str, instead: str) -> None:
        self.feature = feature
        self.instead = instead
        super().__init__(f"{feature} is not supported by winviz.pyflink: {instead}")


class PyFlinkArgumentError(wv.InputError, TypeError):
    """An argument of the wrong type for a PyFlink call (e.g. a number where PyFlink takes a
    ``Time``): names the argument, the value and what was expected."""


def unsupported(feature: str, instead: str) -> PyFlinkFeatureNotSupported:
    return PyFlinkFeatureNotSupported(feature, instead)


def module_getattr(module: str, known: dict[str, str] | None = None, default: str = "") -> Any:
    """A module-level ``__getattr__`` for a PyFlink module: a name PyFlink has there but
    winviz does not model raises ``PyFlinkFeatureNotSupported`` naming it (``known`` maps
    names to what to do instead); any other name is an ``AttributeError`` as usual."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        instead = (known or {}).get(name, default)
        if instead:
            raise unsupported(f"{module}.{name}", instead)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


class NotModelled:
    """A base for PyFlink's classes: a public method PyFlink has and winviz.pyflink does not
    model raises ``PyFlinkFeatureNotSupported`` naming it (never an ``AttributeError``)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise unsupported(
            f"{type(self).__name__}.{name}",
            "winviz.pyflink models PyFlink's DataStream API over winviz's engine and not this "
            "call; see docs/pyflink.md for what it covers",
        )
