"""The record of runs: every job run through ``winviz.pyflink`` is kept here, so
``winviz.pyflink.last_result()`` (and the runner's ``--trace`` / ``--html``) can reach its
trace."""

from __future__ import annotations

from typing import Any

_RESULTS: list[Any] = []


def record(result: Any) -> None:
    _RESULTS.append(result)


def results() -> list[Any]:
    """Every result so far, oldest first."""
    return list(_RESULTS)


def last() -> Any:
    return _RESULTS[-1] if _RESULTS else None


def clear() -> None:
    _RESULTS.clear()
