"""The start-up objects are set aside from garbage collection; later garbage is still freed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from ui.collector import settle_startup_objects


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


@pytest.fixture
def unfrozen() -> Iterator[None]:
    try:
        yield
    finally:
        gc.unfreeze()  # the rest of the test run collects as before


def test_objects_alive_at_settling_are_no_longer_visited(unfrozen: None) -> None:
    before = Node()
    assert any(o is before for o in gc.get_objects())
    frozen = settle_startup_objects()
    assert frozen == gc.get_freeze_count() > 0
    assert not any(o is before for o in gc.get_objects())  # a full collection skips it
    after = Node()
    assert any(o is after for o in gc.get_objects())


def test_garbage_made_after_settling_is_still_collected(unfrozen: None) -> None:
    settle_startup_objects()
    node = Node()
    gone = weakref.ref(node)
    del node
    gc.collect()
    assert gone() is None
