"""winviz.collector: the cyclic garbage collector paused around bulk work and put back as it
was; what a paused step made joins the oldest generation without a collection pass."""

from __future__ import annotations

import gc

from winviz.collector import fewer_full_collections, paused


def test_paused_stops_collections_and_restores_the_collector() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()


def test_what_a_paused_step_made_joins_the_oldest_generation() -> None:
    with paused():
        made = tuple([i] for i in range(1000))
    young = {id(o) for o in gc.get_objects(0)}
    oldest = {id(o) for o in gc.get_objects(2)}
    assert id(made) not in young and id(made) in oldest
    assert all(id(item) in oldest for item in made)
    assert gc.get_freeze_count() == 0


def test_objects_frozen_by_someone_else_stay_frozen() -> None:
    kept = [["frozen"]]
    gc.freeze()
    try:
        with paused():
            made = [[i] for i in range(10)]
        tracked = {id(o) for g in range(3) for o in gc.get_objects(g)}
        assert id(kept) not in tracked  # still frozen: not thawed into a generation
        assert id(made) in {id(o) for o in gc.get_objects(0)}  # left where it was made
    finally:
        gc.unfreeze()


def test_paused_restores_the_collector_when_the_step_fails() -> None:
    try:
        with paused():
            raise ValueError("bad")
    except ValueError:
        pass
    assert gc.isenabled()


def test_fewer_full_collections_raises_the_third_threshold_and_puts_it_back() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_full_collections(100):
            assert gc.get_threshold() == (700, 10, 100)
        assert gc.get_threshold() == (700, 10, 10)
        with fewer_full_collections(5):  # already higher: left alone
            assert gc.get_threshold() == (700, 10, 10)
        with fewer_full_collections(None):
            assert gc.get_threshold() == (700, 10, 10)
        with fewer_full_collections(100):
            gc.set_threshold(1000, 10, 50)  # changed meanwhile: not put back
        assert gc.get_threshold() == (1000, 10, 50)
    finally:
        gc.set_threshold(*before)
