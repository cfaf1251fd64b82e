"""Python's garbage collector kept out of the frames: what the app holds for its whole life
is set aside once the main window is ready, so a full collection no longer walks it.

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
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

__all__ = ["settle_startup_objects"]


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
