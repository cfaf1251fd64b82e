"""Reads never see another coroutine's uncommitted transaction on the shared connection."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app import AssistantMessage, ResumeKind, SQLiteSessionStore, ToolCall, ToolMessage, UserMessage
from app.agent import read_resume_status


async def test_a_read_does_not_see_rows_a_failed_commit_rolls_back(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "db.sqlite")
    calls = (ToolCall("c0", "t", {}), ToolCall("c1", "t", {}))
    await store.append("s", "r", UserMessage("hi"))
    await store.append("s", "r", AssistantMessage("", calls))
    conn = await store._connection()
    original = conn.execute

    def failing_commit(sql: str, *args: Any, **kwargs: Any) -> Any:
        if sql == "COMMIT":  # what a full disk does at commit time

            async def fail() -> None:
                raise sqlite3.OperationalError("database or disk is full")

            return fail()
        return original(sql, *args, **kwargs)

    conn.execute = failing_commit  # type: ignore[method-assign]
    seen: list[Any] = []
    started = asyncio.Event()

    async def reader() -> None:
        started.set()
        for _ in range(50):
            seen.append((await read_resume_status(store, "s")).kind)  # type: ignore[union-attr]

    task = asyncio.ensure_future(reader())
    await started.wait()
    with pytest.raises(Exception, match="full"):
        await store.append_many("s", "r", [ToolMessage(c.id, c.name, "ok") for c in calls])
    await task
    conn.execute = original  # type: ignore[method-assign]
    # The batch never committed: every read must have seen the committed truth only.
    assert set(seen) == {ResumeKind.RECOVER_TOOLS}
    assert (await read_resume_status(store, "s")).kind is ResumeKind.RECOVER_TOOLS  # type: ignore[union-attr]
    await store.close()
