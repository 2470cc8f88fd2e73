"""CPython's cyclic garbage collector around winviz's bulk work.

Reference counting frees almost everything winviz makes the moment it is no longer used; the
cyclic collector exists for reference cycles, and winviz's hot paths make none. Its passes
still visit objects: a young-generation pass visits every container made since the last pass,
and a full pass visits every container alive — a 1M-event trace's millions of slots, or a
collection's million records, again and again. Two tools keep those passes off winviz's
bulk work, and both put the collector back as they found it:

* ``paused()`` — no pass while a bulk step runs (turning a 1M-record collection into a
  tuple, a trace's first read, a conversion to pandas or Parquet). What the step made then
  joins the oldest generation at once (``gc.freeze`` then ``gc.unfreeze``: constant time)
  instead of being visited by the next young pass, unless something else keeps objects frozen
  (then nothing is moved). A cycle made meanwhile is collected by a later full pass.
* ``fewer_full_collections(threshold)`` — while a job runs, full passes come after at least
  ``threshold`` young passes instead of CPython's 10.

Results and traces never depend on either.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection during the ``with`` body; what it made joins the oldest generation
    (see the module docstring). The collector is enabled afterwards only if it was before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


@contextmanager
def fewer_full_collections(threshold: int | None) -> Iterator[None]:
    """Raise ``gc``'s third threshold (young passes between two full ones) to ``threshold``
    (when lower) for the ``with`` body, then restore it if nobody changed it meanwhile.
    None leaves the collector alone."""
    before = gc.get_threshold()
    if threshold is None or before[2] >= threshold:
        yield
        return
    raised = (before[0], before[1], threshold)
    gc.set_threshold(*raised)
    try:
        yield
    finally:
        if gc.get_threshold() == raised:
            gc.set_threshold(*before)
