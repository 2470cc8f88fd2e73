"""A pytest plugin that fingerprints every job the tests run, to check that a refactoring
keeps every byte of output: ``python -m pytest -p trace_corpus tests/test_x.py
--hypothesis-seed=0`` writes, per test, the SHA-256 of each executed job's ``to_json()`` (when
traced), outputs, side outputs and metrics to ``$TRACE_CORPUS`` (default
``trace_corpus.txt``). Run it on two checkouts and ``diff`` the files."""

from __future__ import annotations

import hashlib
import os
from typing import Any

import pytest

import winviz as wv

_lines: list[str] = []
_current = ["<collect>"]


def _digest(result: Any) -> str:
    h = hashlib.sha256()
    trace = getattr(result, "trace", None)
    if trace is not None:
        h.update(trace.to_json().encode())
    for part in (result.outputs, result.side_outputs, result.metrics):
        h.update(repr(sorted(part.items(), key=lambda kv: str(kv[0]))).encode())
    return h.hexdigest()[:16]


_original = wv.StreamExecutionEnvironment.execute


def _execute(self: Any, *args: Any, **kwargs: Any) -> Any:
    result = _original(self, *args, **kwargs)
    _lines.append(f"{_current[0]} {_digest(result)}")
    return result


def pytest_configure(config: pytest.Config) -> None:
    """Fingerprint jobs only when loaded as a plugin (``-p trace_corpus``): a module that
    imports ``_digest`` (tests/trace_hashes.py, and the tests importing it) changes nothing."""
    wv.StreamExecutionEnvironment.execute = _execute  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    _current[0] = item.nodeid
    yield


def pytest_sessionfinish(session: pytest.Session) -> None:
    with open(os.environ.get("TRACE_CORPUS", "trace_corpus.txt"), "w") as f:
        f.write("\n".join(_lines) + "\n")
