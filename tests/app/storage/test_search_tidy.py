"""Merging the search index while idle (:func:`app.storage.search_index.tidy_index` and the
services' run of it, :func:`app.services.upkeep.tidy_search_index`), on real SQLite files.

Each batch of 64 messages is a new index segment and a search walks them all; the idle merge
leaves one. What must hold: the searches find exactly the same messages before and after, FTS5's
own integrity check passes after every step (and after a run cancelled midway), an index with
few segments is left alone without a write, appends made while a run goes on are saved and
found, a merge goes on (does not start over) when a batch adds a segment between its steps,
the whole index is rewritten only once the small segments are worth it, and a database
another process holds locked stops the run quietly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import AssistantMessage, UserMessage
from app.services.upkeep import tidy_search_index
from app.storage import SQLiteSessionStore
from app.storage.search import search
from app.storage.search_index import SEGMENTS_KEPT, tidy_index

from .test_search_batches import fts_ok

QUERIES = ("alpha3", "beta1", "common", "gamma alpha", "alph", "be", "common beta12", "zzz")


def segments(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0])


@contextlib.contextmanager
def unwritten(path: Path) -> Iterator[None]:
    """Asserts that nothing was committed to ``path`` inside the block: SQLite's
    ``data_version`` of a connection held open across it moves with every commit of another
    connection (the WAL included, which the file's own change counter does not see)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        before = conn.execute("PRAGMA data_version").fetchone()[0]
        yield
        assert conn.execute("PRAGMA data_version").fetchone()[0] == before


async def fill(store: SQLiteSessionStore, conversations: int, start: int = 0) -> None:
    """``conversations`` of 64 messages each, one transaction each (a segment each, about)."""
    for i in range(start, start + conversations):
        messages = [
            (UserMessage if j % 2 == 0 else AssistantMessage)(
                f"alpha{j % 7} beta{(i * j) % 13} gamma common {i}x{j}"
            )
            for j in range(64)
        ]
        await store.append_many(f"s{i:03d}", "r", messages)


async def every_hit(store: SQLiteSessionStore) -> dict[str, list[tuple[str, int, str]]]:
    return {
        q: [(h.session_id, h.seq, h.snippet) for h in await search(store.database, q, limit=500)]
        for q in QUERIES
    }


@pytest.fixture
async def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = SQLiteSessionStore(tmp_path / "c.sqlite")
    yield s
    await s.close()


async def test_a_merge_leaves_one_segment_and_the_same_answers(store: SQLiteSessionStore) -> None:
    path = Path(store.path)
    await fill(store, 40)
    before = await every_hit(store)  # (a search also indexes the newest messages waiting)
    assert segments(path) > SEGMENTS_KEPT  # the state the idle merge is for
    steps = 0
    while await tidy_index(store.database, pages=8, first=steps == 0):  # many small steps
        steps += 1
        fts_ok(path)  # every step is a whole, correct index
    assert steps > 3
    assert segments(path) == 1
    assert await every_hit(store) == before
    assert before["common"] and before["zzz"] == []


async def test_few_segments_are_left_alone_without_a_write(store: SQLiteSessionStore) -> None:
    path = Path(store.path)
    await fill(store, 3)
    await every_hit(store)
    assert 1 <= segments(path) <= SEGMENTS_KEPT
    with unwritten(path):
        assert await tidy_search_index(store.database) == 0


async def test_the_services_run_merges_then_stops(store: SQLiteSessionStore) -> None:
    await fill(store, 40)
    before = await every_hit(store)
    assert await tidy_search_index(store.database) > 0
    assert segments(Path(store.path)) == 1
    assert await tidy_search_index(store.database) == 0  # nothing left to do
    assert await every_hit(store) == before


async def test_appends_during_a_run_are_saved_and_found(store: SQLiteSessionStore) -> None:
    path = Path(store.path)
    await fill(store, 40)
    await every_hit(store)
    run = asyncio.ensure_future(tidy_search_index(store.database))
    for i in range(30):  # interleaved with the run's steps (its lock serves waiters in order)
        await store.append("late", "r", UserMessage(f"latecomer{i} common"))
    await run
    found = {h.seq for h in await search(store.database, "latecomer", limit=500)}
    assert len(found) == 1  # one hit per conversation: the newest
    fts_ok(path)  # (after the search indexed the newest few, which wait for a batch)
    assert len(await store.load("late")) == 30
    from .test_search_batches import matching

    assert len(matching(path, "latecomer")) == 30  # every one of them is in the index


async def test_a_cancelled_run_leaves_a_correct_index(store: SQLiteSessionStore) -> None:
    path = Path(store.path)
    await fill(store, 40)
    before = await every_hit(store)
    started = asyncio.Event()

    async def one_step_then_cancel() -> None:
        first = True
        while await tidy_index(store.database, pages=4, first=first):
            first = False
            started.set()
            await asyncio.sleep(0)

    run = asyncio.ensure_future(one_step_then_cancel())
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    fts_ok(path)
    assert segments(path) > 1  # the merge stopped midway
    assert await every_hit(store) == before
    assert await tidy_search_index(store.database) > 0  # and the next run goes on with it
    assert segments(path) == 1
    assert await every_hit(store) == before


async def _steps(store: SQLiteSessionStore, *, batch_after: int | None = None) -> int:
    """Merge steps of 2 pages until done; with ``batch_after``, a 64-message batch (a new
    segment) is saved after that many steps, as a request or an import does meanwhile."""
    steps = 0
    while await tidy_index(store.database, pages=2, first=steps == 0):
        steps += 1
        if steps == batch_after:
            await fill(store, 1, start=500)
            await search(store.database, "common")  # indexes the few still waiting
    return steps


async def test_a_segment_added_between_steps_does_not_start_the_merge_over(
    tmp_path: Path,
) -> None:
    counts = []
    for name, batch_after in (("a", None), ("b", 3)):
        store = SQLiteSessionStore(tmp_path / f"{name}.sqlite")
        try:
            await fill(store, 40)
            await every_hit(store)
            counts.append(await _steps(store, batch_after=batch_after))
            fts_ok(Path(store.path))
            assert segments(Path(store.path)) <= (1 if batch_after is None else 3)
        finally:
            await store.close()
    plain, interrupted = counts
    assert plain > 6
    # Before, the next step's negative merge put the new segment beside the merge under way
    # and started over: ~1.8x the steps (and the writes) for one batch in between.
    assert interrupted <= plain + 2


async def test_the_largest_segment_is_rewritten_only_when_the_rest_is_worth_it(
    store: SQLiteSessionStore,
) -> None:
    path = Path(store.path)
    await fill(store, 40)
    await every_hit(store)
    assert await tidy_search_index(store.database) > 0
    assert segments(path) == 1
    added = 0
    while segments(path) <= SEGMENTS_KEPT:  # small segments, one batch each, until too many
        await fill(store, 1, start=100 + added)
        await every_hit(store)
        added += 1
    before = await every_hit(store)
    # They hold far less than half of the large one: no merge of them all (and no write).
    with unwritten(path):
        assert not await tidy_index(store.database, share=0.5)
    # Worth it (any share): merged into one, the same answers.
    first = True
    while await tidy_index(store.database, share=0.0, first=first):
        first = False
    assert segments(path) == 1
    assert await every_hit(store) == before


async def test_a_locked_database_stops_the_run_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path, busy_timeout=0.05)
    try:
        await fill(store, 40)
        await every_hit(store)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # another process writing
            with caplog.at_level(logging.INFO, logger="app.services.upkeep"):
                assert await tidy_search_index(store.database) == 0
            assert "search index not merged now" in caplog.text
            other.execute("ROLLBACK")
        finally:
            other.close()
        assert await tidy_search_index(store.database) > 0  # the next idle run does it
    finally:
        await store.close()
