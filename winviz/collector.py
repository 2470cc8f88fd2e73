"""CPython's cyclic garbage collector around winviz's bulk work: winviz's hot paths make no
cycles, but the collector's passes would visit every container made (young passes) or alive (full
passes). ``paused()`` stops passes during a bulk step; ``fewer_full_collections`` spaces out full
passes while a job runs. Both put the collector back as they found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


def promote_to_oldest() -> None:
    """Move every tracked object to the oldest generation (``gc.freeze`` then ``gc.unfreeze``:
    constant time), unless something else keeps objects frozen (then nothing moves)."""
    if not gc.get_freeze_count():
        gc.freeze()
        gc.unfreeze()


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection during the ``with`` body; then what it made joins the oldest
    generation."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        promote_to_oldest()
        if enabled:
            gc.enable()


@contextmanager
def fewer_full_collections(threshold: int | None) -> Iterator[None]:
    """Raise ``gc``'s third threshold to ``threshold`` for the ``with`` body, then restore it if
    nobody changed it meanwhile; None leaves the collector alone."""
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
