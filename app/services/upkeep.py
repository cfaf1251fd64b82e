"""Housekeeping while the app is idle: merging the full-text search index.

Every 64 saved messages become a new segment of the search index, and a search walks every
segment (see :mod:`app.storage.search_index`). :func:`tidy_search_index` merges them, one short
transaction at a time, until few are left; the window runs it when nothing has happened for a
while and cancels it when a request starts. Between steps other work on the database goes
first (its lock serves waiters in order), so an append waits at most one step.
"""

from __future__ import annotations

import logging
from typing import Final

from ..errors import StorageBusyError, StorageError
from ..storage.database import Database
from ..storage.search_index import tidy_index

log = logging.getLogger(__name__)

__all__ = ["MAX_STEPS", "tidy_search_index"]

#: The most steps one idle run takes (~100 pages each: 1,000,000 pages, far more than an
#: index of a million messages; a larger merge goes on in the next idle run).
MAX_STEPS: Final = 10_000


async def tidy_search_index(database: Database, *, max_steps: int = MAX_STEPS) -> int:
    """Merge the search index's segments while there are many; returns the steps that merged.

    Housekeeping only: the search finds the same messages either way, so a database that
    cannot be written now (full, read-only, busy with another process, damaged) stops the
    run with a line in the log and nothing shown; the next idle run tries again."""
    steps = 0
    try:
        while steps < max_steps and await tidy_index(database, first=steps == 0):
            steps += 1
    except StorageBusyError as err:  # another process is writing: expected, try later
        log.info("search index not merged now (%d steps done): %s", steps, err)
    except StorageError as err:  # full, read-only, damaged: the person hears of it elsewhere
        log.warning("search index not merged (%d steps done): %s", steps, err)
    if steps:
        log.debug("search index merged in %d steps", steps)
    return steps
