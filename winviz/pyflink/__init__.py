"""winviz.pyflink — run PyFlink DataStream programs unchanged, on winviz's engine, traced.

``python -m winviz.pyflink job.py [args]`` runs a PyFlink program as it is: its
``pyflink`` imports resolve to this package (``winviz.pyflink.finder``), it prints what
PyFlink prints, and ``--trace run.parquet`` / ``--html run.html`` keep its trace and a page
of its charts. In a notebook, ``winviz.pyflink.install()`` does the same for the cells that
follow; ``winviz.pyflink.last_result()`` is the last run's ``JobExecutionResult``, with its
trace, so ``wv.why_fired`` & co. and every chart work on it.

The modules mirror PyFlink 2.3's layout (``common``, ``common.typeinfo``,
``common.watermark_strategy``, ``datastream``, ``datastream.window``,
``datastream.state``, ``datastream.functions``, ``datastream.connectors.file_system``,
``datastream.connectors.number_seq``) over winviz's public API. Where PyFlink's Python
operators differ from Java Flink, Java Flink decides (docs/pyflink.md).
"""

from __future__ import annotations

from typing import Any

from winviz.pyflink import _runs
from winviz.pyflink.errors import PyFlinkFeatureNotSupported
from winviz.pyflink.finder import install, installed, uninstall


def last_result() -> Any:
    """The ``JobExecutionResult`` of the last job run through ``winviz.pyflink`` (None
    before the first), with its trace."""
    return _runs.last()


def results() -> list[Any]:
    """Every run's result so far (oldest first): a program that calls ``execute()`` twice
    has two."""
    return _runs.results()


__all__ = [
    "PyFlinkFeatureNotSupported",
    "install",
    "installed",
    "last_result",
    "results",
    "uninstall",
]
