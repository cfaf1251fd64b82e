"""What an append writes (schemas 12, 14): few pages per commit, and the tree still walks down."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from app import AssistantMessage, UserMessage
from app.storage import SQLiteSessionStore
from app.storage.branches import CHILDREN
from app.storage.schema import MIGRATIONS

WAL_HEADER, FRAME = 32, 24 + 4096


def wal_frames(path: Path) -> float:
    return (os.path.getsize(f"{path}-wal") - WAL_HEADER) / FRAME


async def test_a_linear_append_writes_few_pages(tmp_path: Path) -> None:
    """Schema 11 wrote ~11.8 pages per append (an FTS copy of the text, sessions_by_update,
    messages_children); schema 12 wrote ~8.7, schema 13 (prefix indexes) more; schema 14, which
    indexes for search once per 64 messages, ~3.4: the message's table and index pages and its
    session's row, as the Agents SDK's ``SQLiteSession`` writes. Counted in the WAL,
    checkpoints off, over 128 appends (two batches)."""
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    try:
        text = "lorem ipsum dolor sit amet " * 8
        for i in range(50):  # the b-trees past their first pages
            await store.append("s", "r", UserMessage(text) if i % 2 else AssistantMessage(text))
        conn = await store._connection()
        await conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        await conn.execute("PRAGMA wal_autocheckpoint=0")
        n = 128
        for i in range(n):
            await store.append("s", "r", UserMessage(text) if i % 2 else AssistantMessage(text))
        frames = wal_frames(path)
    finally:
        await store.close()
    assert frames / n < 4.5, frames / n


def test_walking_down_uses_the_seq_and_the_partial_fork_index() -> None:
    conn = sqlite3.connect(":memory:")
    for step in MIGRATIONS:
        for statement in step:
            conn.execute(statement)
    plan = [
        r[3]
        for r in conn.execute(f"EXPLAIN QUERY PLAN {CHILDREN} SELECT MAX(seq) FROM down", ("s", 1))
    ]
    assert any("USING INDEX messages_forks (session_id=? AND parent_seq=?)" in p for p in plan)
    assert any(
        "USING INDEX sqlite_autoindex_messages_1 (session_id=? AND seq=?)" in p for p in plan
    )
    assert not any(p.startswith("SCAN m") for p in plan), plan


async def test_the_newest_message_under_one_is_found_across_forks(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        await store.append("s", "r", UserMessage("q1"))  # 1
        await store.append("s", "r", AssistantMessage("a2"))  # 2, after 1
        await store.append("s", "r", AssistantMessage("a3"), parent=1)  # 3: a fork of 1
        await store.append("s", "r", UserMessage("q4"))  # 4: after 3 (the seq before it)
        await store.append("s", "r", UserMessage("q5"), parent=2)  # 5: under 2, not next
        await store.append("s", "r", UserMessage("q0"), parent=None)  # 6: another first
        assert await store.select_branch("s", 2) == 5  # 3 follows 2 but is not its child
        assert await store.select_branch("s", 3) == 4
        assert await store.select_branch("s", 1) == 5  # the newest under 1, through 2
        assert await store.select_branch("s", 6) == 6
        assert await store.select_branch("s", 4) == 4
        assert [m.content for m in await store.load("s")] == ["q1", "a3", "q4"]
    finally:
        await store.close()
