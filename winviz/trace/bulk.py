"""Helpers for converting a whole trace at once (``to_pandas``, ``save``, ``load_trace``).

A trace of a 1M-event run holds millions of Python objects; a bulk conversion makes hundreds
of thousands more, with the cyclic garbage collector paused (``winviz.collector.paused``).
These helpers keep it at C speed:

* ``object_ids``: the identities of an object array's elements as ``uint64`` without a Python
  call per element. Readers tell a trace's values apart by identity where the engine shares
  one object among many records (a window's timer details, an element's payload in its
  ``arrival``, ``element`` and ``assigned`` records), as ``id()`` would.
* ``object_pointers``: the same, read in place (a read-only view of the array's pointers, no
  copy) where the array is contiguous, for readers that gather from it while it lives.
* ``first_of_each``: codes of values numbered in order of first appearance, and where each
  code first appears.
* ``distinct_objects``: an object array's distinct objects (by identity) and each element's
  number among them — to compute something once per shared object (a detail tuple's fields).
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

# An object array holds one pointer per element, and in CPython ``id(x)`` is that pointer.
_POINTERS = sys.implementation.name == "cpython" and ctypes.sizeof(ctypes.c_void_p) == 8


def object_ids(values: np.ndarray) -> np.ndarray:
    """``id()`` of each element of a 1-d object array, as ``uint64`` (equal exactly where the
    elements are the same object). In CPython the array's own pointers are read (a copy of
    its data buffer; the array keeps the objects alive meanwhile); elsewhere ``id`` is called
    per element."""
    if values.dtype != object or values.ndim != 1:
        raise TypeError(f"expected a 1-d object array, got {values.dtype} of shape {values.shape}")
    n = len(values)
    if _POINTERS and n:
        values = np.ascontiguousarray(values)
        buffer = (ctypes.c_uint64 * n).from_address(values.ctypes.data)
        return np.frombuffer(buffer, dtype=np.uint64, count=n).copy()
    return np.fromiter(map(id, values.tolist()), dtype=np.uint64, count=n)


def object_pointers(values: np.ndarray) -> np.ndarray:
    """``object_ids(values)`` read in place: in CPython, for a contiguous 1-d object array, a
    read-only ``uint64`` view of the array's own pointers (no copy), valid while the array
    lives unchanged; else ``object_ids``' copy."""
    if not (
        _POINTERS
        and values.dtype == object
        and values.ndim == 1
        and len(values)
        and values.flags.c_contiguous
    ):
        return object_ids(values)
    buffer = (ctypes.c_uint64 * len(values)).from_address(values.ctypes.data)
    view = np.frombuffer(buffer, dtype=np.uint64)
    view.flags.writeable = False
    return view


def first_of_each(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` (numbered in order of first appearance) and the position of each
    code's first value."""
    import pandas as pd

    codes, uniques = pd.factorize(values)
    first = np.zeros(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return codes, first


def distinct_objects(values: np.ndarray) -> tuple[np.ndarray, list[object]]:
    """The number of each element of a 1-d object array among its distinct objects (by
    identity, numbered in order of first appearance) and those objects, in that order: a
    reader of a field of values the trace shares (a window's timer details, a trigger call's
    detail) reads each shared object once, without touching every element."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), []
    codes, first = first_of_each(object_ids(values))
    return codes, values[first].tolist()
