"""Idle housekeeping in the window (:class:`ui.upkeep.IdleUpkeep`): the search index is merged
when nothing has happened for a while, never while a request runs.

The class with a real Qt timer and a job that records what happens to it; then the real window
over a real SQLite file with many index segments and the simulator: the merge runs once the
window is idle, and a request stops the wait and starts it again when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from app import AssistantMessage, UserMessage
from app.services import DATABASE_FILE
from app.storage import SQLiteSessionStore
from app.storage.search_index import SEGMENTS_KEPT
from tests.ui.helpers import until, window_on_simulator
from ui.upkeep import IDLE_MS, IdleUpkeep


class Job:
    """Records its runs; each run waits for ``release`` (or its cancellation)."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0
        self.finished = 0
        self.release = asyncio.Event()
        self.running = asyncio.Event()

    async def __call__(self) -> None:
        self.started += 1
        self.running.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.finished += 1


def spawn(coro: Any) -> asyncio.Task[Any]:
    return asyncio.ensure_future(coro)


def test_the_job_runs_after_an_idle_spell_and_a_request_cancels_it(run: Any) -> None:
    async def scenario() -> None:
        job = Job()
        upkeep = IdleUpkeep(job, spawn, idle_ms=20)
        assert not upkeep.waiting and job.started == 0  # nothing before it is told it is idle
        upkeep.set_busy(False)
        assert upkeep.waiting
        await asyncio.wait_for(job.running.wait(), 5)
        assert upkeep.running and not upkeep.waiting
        upkeep.set_busy(False)  # idle again while running: no second run
        assert not upkeep.waiting
        upkeep.set_busy(True)  # a request starts: the run is cancelled
        await until(lambda: job.cancelled == 1, what="the run cancelled")
        assert not upkeep.running and not upkeep.waiting
        job.running.clear()
        upkeep.set_busy(False)  # the request ended: the next idle spell runs it again
        await asyncio.wait_for(job.running.wait(), 5)
        job.release.set()
        await until(lambda: job.finished == 1, what="the run finishes")
        assert (job.started, job.cancelled) == (2, 1)
        assert not upkeep.running and not upkeep.waiting  # once per idle spell

    run(scenario())


def test_a_request_starting_stops_the_wait(run: Any) -> None:
    async def scenario() -> None:
        job = Job()
        upkeep = IdleUpkeep(job, spawn, idle_ms=20)
        upkeep.set_busy(False)
        upkeep.set_busy(True)
        assert not upkeep.waiting and not upkeep.running
        upkeep.set_busy(False)
        await asyncio.wait_for(job.running.wait(), 5)
        assert job.started == 1

    run(scenario())


def segments(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0])


def test_the_window_merges_the_index_when_idle_not_while_answering(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        path = tmp_path / DATABASE_FILE
        store = SQLiteSessionStore(path)
        for i in range(40):  # a transaction each: many index segments
            await store.append_many(
                f"old{i}",
                "r",
                [
                    (UserMessage if j % 2 == 0 else AssistantMessage)(f"history{i} item{j}")
                    for j in range(64)
                ],
            )
        await store.close()
        assert segments(path) > SEGMENTS_KEPT
        async with window_on_simulator(tmp_path) as (_sim, window):
            upkeep = window.upkeep
            assert upkeep.waiting  # the start ended idle: the wait began
            assert upkeep._timer.interval() == IDLE_MS
            window.composer.edit.setPlainText("Hello there")
            window.composer.send_button.click()
            await until(lambda: window.controller.busy, what="the request starts")
            assert not upkeep.waiting and not upkeep.running
            await until(lambda: not window.controller.busy, what="the request ends")
            assert upkeep.waiting
            assert segments(path) > SEGMENTS_KEPT  # nothing merged yet
            upkeep._timer.setInterval(10)  # the idle spell, shortened
            upkeep._timer.start()
            # (The outcome, not the run's start: a small merge may begin and end between polls.)
            await until(
                lambda: not upkeep.waiting and not upkeep.running and segments(path) == 1,
                what="the merge when idle",
            )
            hits = await window.services.search("item3 history7")  # the last word: a prefix
            assert [h.session_id for h in hits] == ["old7"]
            assert hits[0].snippet == "[history7] [item3]"

    run(scenario())
