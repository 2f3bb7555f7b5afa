"""`settle()` takes the import heap out of every later full collection and leaks nothing made
afterwards (#15)."""

from __future__ import annotations

import gc

import pytest

from agentui.gcpolicy import settle


@pytest.fixture
def unfrozen():
    before = gc.get_threshold()
    yield
    gc.unfreeze()  # the test process goes on with its usual collector
    gc.set_threshold(*before)


def test_settle_freezes_the_heap_and_later_cycles_are_still_collected(unfrozen) -> None:
    gc.collect()
    tracked = len(gc.get_objects())
    frozen = settle()
    assert frozen >= tracked * 0.9  # what existed is in the permanent generation now
    assert len(gc.get_objects()) < tracked * 0.1  # ... so a full collection no longer walks it
    young, middle, full = gc.get_threshold()
    assert middle >= 100  # a deferred burst is freed before the middle generation walks it
    assert middle * full >= 1000  # and full collections are spaced out (young passes per full one)

    class Node:
        def __init__(self) -> None:
            self.me = self  # a cycle: only the collector frees it

    import weakref

    probe = weakref.ref(Node())
    assert probe() is not None
    gc.collect()
    assert probe() is None  # objects made after settle() are collected as before
