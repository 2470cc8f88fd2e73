"""Helpers for converting a whole trace at once (``to_pandas``, ``save``, ``load_trace``).

* ``first_of_each``: codes of values numbered in order of first appearance, and where each
  code first appears (pandas' hash table: no Python call per value).
* ``shared_objects``: an object array's distinct objects, as the engine shares them (one
  tuple for a window's timer details, one key object for a key's records): each element's
  number among them and the first position of each. A reader computes something once per
  shared object (a detail tuple's fields, a value's text) and gathers it by those numbers;
  what it computes is a function of the value alone, so the result is the same as
  computing it per element — sharing only saves the work. Identities are read with ``id``
  (``map``: C speed, no raw pointers); ``is None`` tests use ``is_none``.
"""

from __future__ import annotations

from itertools import repeat
from operator import is_

import numpy as np


def first_of_each(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` (numbered in order of first appearance) and the position of each
    code's first value."""
    import pandas as pd

    codes, uniques = pd.factorize(values)
    first = np.zeros(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return codes, first


def object_ids(values: np.ndarray) -> np.ndarray:
    """``id()`` of each element of a 1-d object array, as ``uint64`` (equal exactly where the
    elements are the same object; the array keeps them alive meanwhile)."""
    if values.dtype != object or values.ndim != 1:
        raise TypeError(f"expected a 1-d object array, got {values.dtype} of shape {values.shape}")
    return np.fromiter(map(id, values), dtype=np.uint64, count=len(values))


def shared_objects(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The number of each element of a 1-d object array among its distinct objects (numbered
    in order of first appearance) and the position of each one's first element."""
    return first_of_each(object_ids(values))


def distinct_objects(values: np.ndarray) -> tuple[np.ndarray, list[object]]:
    """``shared_objects``' numbers and the distinct objects themselves, in that order."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), []
    codes, first = shared_objects(values)
    return codes, values[first].tolist()


def is_none(values: np.ndarray | list[object]) -> np.ndarray:
    """Where the values are None, as a bool array (``is``: C speed, no value compared)."""
    return np.fromiter(map(is_, values, repeat(None)), dtype=bool, count=len(values))


def same_objects(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where ``a[i] is b[i]`` (the same object is the same value), as a bool array."""
    return np.fromiter(map(is_, a, b), dtype=bool, count=len(a))
