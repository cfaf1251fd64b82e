"""Python's garbage collector kept out of the frames and on the GUI thread: what the app holds
for its whole life is set aside once the main window is ready, so a full collection no longer
walks it, and collections run only on the GUI thread.

CPython's collector visits every tracked object of the generation it collects; after start-up
that is ~60,000 long-lived objects (modules, classes, functions, Qt wrappers, the Markdown
parser), so each full collection paused the GUI thread for 17–23 ms and a second-generation
one for ~11 ms — measured as the slowest frame of a stream of list lines (42 ms, of which the
collector 23) in ``bench/markdown_worst``. :func:`settle_startup_objects` moves everything
alive at that point into the permanent generation (``gc.freeze``): later collections visit
only what was made since (a conversation's messages and documents), and still free it.

The cost: an object alive at that moment that later becomes part of an unreachable cycle is
never freed. What exists then is the app's own machinery, meant to live until exit (the start
window handed over at that point stays referenced by ``ui.main.main`` until exit anyway).

On the GUI thread only (:class:`MainThreadCollector`): CPython collects in whichever thread
allocates when a threshold is crossed — often an aiosqlite worker starting or running — and a
cycle holding a Qt object freed there destroys it off its thread: the test suite segfaulted
that way ("Garbage-collecting" in a new thread's start). Automatic collection is turned off and
a timer on the GUI thread collects what is due (:func:`collect_due`: the generation CPython
itself would collect, by the same counts and thresholds).
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QObject, QTimer

log = logging.getLogger(__name__)

__all__ = ["COLLECT_EVERY_MS", "MainThreadCollector", "collect_due", "settle_startup_objects"]

#: How often the GUI thread collects what is due.
COLLECT_EVERY_MS = 250


def settle_startup_objects() -> int:
    """Exclude every object alive now from future collections; returns how many there are
    (all frozen so far). Call when start-up is done; calling again adds what was made since.

    The young generations are collected first (~0.6 ms), so the garbage most likely to wait
    then is freed rather than kept for good; a full collection first would pause the hand-over
    ~27 ms, and none was found waiting in the old generation there (61,000 objects alive)."""
    gc.collect(1)
    gc.freeze()
    count = gc.get_freeze_count()
    log.debug("%d start-up objects left out of garbage collection", count)
    return count


def due_generation(counts: tuple[int, int, int], thresholds: tuple[int, int, int]) -> int | None:
    """The oldest generation whose count reached its threshold (CPython's own rule), else
    ``None``. Pure."""
    for generation in (2, 1, 0):
        threshold = thresholds[generation]
        if threshold and counts[generation] >= threshold:
            return generation
    return None


def collect_due() -> int | None:
    """Collect the generation that is due now (see :func:`due_generation`); which one."""
    generation = due_generation(gc.get_count(), gc.get_threshold())
    if generation is not None:
        gc.collect(generation)
    return generation


class MainThreadCollector(QObject):
    """Automatic collection off; a timer on this (the GUI) thread collects what is due."""

    def __init__(self, parent: QObject | None = None, every_ms: int = COLLECT_EVERY_MS) -> None:
        super().__init__(parent)
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(every_ms)
        self._timer.timeout.connect(collect_due)
        self._timer.start()

    def stop(self) -> None:
        """Stop the timer and give collection back to CPython."""
        self._timer.stop()
        gc.enable()
