"""Make ``import pyflink…`` resolve to ``winviz.pyflink…`` — only when asked
(``winviz.pyflink.install()`` or the runner ``python -m winviz.pyflink JOB.py``), never on
``import winviz``.

The finder aliases each module: ``pyflink.datastream`` *is* ``winviz.pyflink.datastream``
(the same classes, so ``isinstance`` holds). A PyFlink module winviz does not model
(``pyflink.table``, ``pyflink.datastream.connectors.kafka``…) fails to import with a
``PyFlinkFeatureNotSupported`` that names it and says what to do instead.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

from winviz.pyflink.errors import unsupported

_INSTEAD = {
    "pyflink.table": "the Table API and SQL are not modelled; write the job with the "
    "DataStream API (pyflink.datastream)",
    "pyflink.datastream.connectors": "external connectors are not modelled; read with "
    "from_collection(...) or from_source(NumberSequenceSource(...), ...) and write with "
    "print(), execute_and_collect() or FileSink.for_row_format(...)",
    "pyflink.datastream.formats": "formats (Avro, CSV, JSON, Parquet…) belong to connectors "
    "winviz does not model; parse records in a map (e.g. json.loads)",
    "pyflink.ml": "Flink ML is not modelled",
    "pyflink.metrics": "user metrics are not modelled; read result.metrics",
}


def _instead(fullname: str) -> str:
    best = ""
    for prefix in _INSTEAD:
        if (fullname == prefix or fullname.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    return _INSTEAD.get(
        best,
        "winviz.pyflink models PyFlink's DataStream API; see docs/pyflink.md for what it covers",
    )


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        pass


class PyFlinkFinder(importlib.abc.MetaPathFinder):
    """Finds ``pyflink`` and ``pyflink.*`` as ``winviz.pyflink`` and ``winviz.pyflink.*``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname != "pyflink" and not fullname.startswith("pyflink."):
            return None
        real = "winviz." + fullname
        if importlib.util.find_spec(real) is None:
            raise unsupported(f"The PyFlink module {fullname}", _instead(fullname))
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real), is_package=True)


_FINDER = PyFlinkFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once). Refused when the real PyFlink is
    imported already (its classes would be mixed with winviz's)."""
    loaded = sys.modules.get("pyflink")
    if loaded is not None and not loaded.__name__.startswith("winviz."):
        raise RuntimeError(
            "the real PyFlink is imported already in this interpreter; restart it (or the "
            "notebook kernel) and call winviz.pyflink.install() before importing pyflink"
        )
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Remove the finder and forget the ``pyflink`` aliases."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == "pyflink" or n.startswith("pyflink.")]:
        del sys.modules[name]


def installed() -> bool:
    return _FINDER in sys.meta_path
