"""Schema 14: the search index fed in batches (every 64th message indexes those waiting).

An append no longer indexes its own message; the newest few wait in ``messages`` (above
``messages_indexed.upto``) until the next batch, a search, or the store closing. Whatever
waits, a search finds exactly what it found when every append indexed its message: these
tests compare against the store's answers and FTS5's own integrity check on real files.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from app import AssistantMessage, UserMessage
from app.errors import StorageBusyError
from app.messages import message_to_json
from app.parts import TextPart
from app.storage import SQLiteSessionStore
from app.storage.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from app.storage.search import index_pending

BATCH = 64


def fts_ok(path: Path) -> None:
    """FTS5's check of the index against the messages (fails if one is missing or extra)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


def indexed(path: Path) -> tuple[int, int]:
    """``(upto, newest id)``: every message up to ``upto`` is in the index, none above."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        (upto,) = conn.execute("SELECT upto FROM messages_indexed").fetchone()
        (newest,) = conn.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()
        return int(upto), int(newest)


def index_rows(path: Path) -> int:
    """How many messages the index holds (its per-document sizes: one row each)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(*) FROM messages_fts_docsize").fetchone()[0])


def matching(path: Path, text: str) -> list[tuple[str, int]]:
    """Every message the index finds for ``text`` (newest first), asked of SQLite itself."""
    from app.storage.search import fts_query

    with contextlib.closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(
            "SELECT m.session_id, m.seq FROM messages_fts JOIN messages m "
            "ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? ORDER BY m.id DESC",
            (fts_query(text),),
        ).fetchall()
    return [(str(session), int(seq)) for session, seq in rows]


async def hits(store: SQLiteSessionStore, text: str) -> list[tuple[str, int]]:
    """Every message found for ``text`` once the store searched it (which indexes what waits);
    the store's own answer is the newest of each conversation among them."""
    found = [(h.session_id, h.seq) for h in await store.search(text)]
    every = matching(Path(store.path), text)
    newest = {}
    for session, seq in every:
        newest.setdefault(session, seq)
    assert found == list(newest.items())
    return sorted(every)


async def test_appends_index_in_batches_and_a_search_finds_the_newest(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    try:
        for i in range(1, BATCH + 6):
            await store.append("s", "r", UserMessage(f"word{i} shared"))
            upto, newest = indexed(path)
            # The batch rides on the 64th message's own commit; the rest wait.
            assert (upto, newest) == ((BATCH, i) if i >= BATCH else (0, i))
        assert index_rows(path) == BATCH
        assert await hits(store, f"word{BATCH + 5}") == [("s", BATCH + 5)]  # not waited for
        assert indexed(path) == (BATCH + 5, BATCH + 5)
        assert len(await hits(store, "shared")) == BATCH + 5
        fts_ok(path)
        assert not await index_pending(store.database)  # nothing waits: nothing written
    finally:
        await store.close()


async def test_closing_indexes_what_waits(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    await store.append_many("s", "r", [UserMessage(f"m{i}") for i in range(10)])
    await store.append("s", "r", AssistantMessage("the last one"))
    assert indexed(path) == (0, 11)
    await store.close()
    assert indexed(path) == (11, 11)
    fts_ok(path)


async def test_deleting_the_newest_messages_keeps_the_index_exact(tmp_path: Path) -> None:
    """Their ids are reused by the next messages, which must be indexed all the same."""
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    try:
        await store.append_many("old", "r", [UserMessage(f"old{i} apple") for i in range(70)])
        await store.append_many("new", "r", [UserMessage(f"new{i} pear") for i in range(20)])
        assert indexed(path) == (BATCH, 90)  # ids 65-90 wait, across both conversations
        assert await store.delete_session("new")  # ids 71-90: none was indexed
        assert indexed(path) == (BATCH, 70)
        assert await store.delete_session("old")  # ids 1-70: the indexed ones leave the index
        assert indexed(path) == (0, 0) and index_rows(path) == 0
        fts_ok(path)
        await store.append_many("again", "r", [UserMessage(f"again{i} plum") for i in range(3)])
        assert await hits(store, "apple") == [] and await hits(store, "pear") == []
        assert await hits(store, "plum") == [("again", 1), ("again", 2), ("again", 3)]
        fts_ok(path)
        # Indexed, then the newest ones deleted: the next ids are below the old mark.
        await store.append_many("more", "r", [UserMessage(f"more{i} fig") for i in range(5)])
        assert await hits(store, "fig") == [("more", s) for s in range(1, 6)]
        assert indexed(path) == (8, 8)
        assert await store.delete_session("more")
        assert indexed(path) == (3, 3)
        await store.append("last", "r", UserMessage("kiwi"))  # id 4 again
        assert await hits(store, "kiwi") == [("last", 1)] and await hits(store, "fig") == []
        fts_ok(path)
    finally:
        await store.close()


async def test_changed_data_and_index_text_of_messages_not_indexed_yet(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    await store.append("s", "r", UserMessage("alpha"))
    await store.append("s", "r", UserMessage((TextPart("beta parts"),)))  # its own index text
    await store.append("s", "r", UserMessage("gamma \ud800 broken"))  # repaired index text
    await store.close()  # indexes the three
    with contextlib.closing(sqlite3.connect(path)) as conn:
        # A message waiting for its batch whose data changes, and one that is indexed.
        conn.execute(
            "INSERT INTO messages(session_id, seq, parent_seq, request_id, kind, data, "
            "created_at) VALUES ('t', 1, NULL, 'r', 'user', ?, 1.0)",
            (message_to_json(UserMessage("delta")),),
        )
        conn.execute(
            "UPDATE messages SET data = ? WHERE session_id = 't'",
            (message_to_json(UserMessage("epsilon")),),
        )
        conn.execute(
            "UPDATE messages SET data = ? WHERE session_id = 's' AND seq = 1",
            (message_to_json(UserMessage("zeta")),),
        )
        conn.commit()
    assert indexed(path) == (3, 4)
    store = SQLiteSessionStore(path)
    try:
        assert await hits(store, "delta") == [] and await hits(store, "alpha") == []
        assert await hits(store, "epsilon") == [("t", 1)]
        assert await hits(store, "zeta") == [("s", 1)]
        assert [h.snippet for h in await store.search("beta")] == ["[beta] parts"]
        assert [h.snippet for h in await store.search("gamma")] == ["[gamma] \ufffd broken"]
        fts_ok(path)
        # A message of parts waiting for its batch gets its words indexed, not its JSON.
        await store.append("u", "r", UserMessage((TextPart("theta words"),)))
        assert indexed(path) == (4, 5)
        assert [h.snippet for h in await store.search("theta")] == ["[theta] words"]
        assert await store.search("type") == []
        fts_ok(path)
    finally:
        await store.close()


async def test_a_search_that_cannot_index_still_answers(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path, busy_timeout=0.05)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        await store.append_many("s", "r", [UserMessage(f"needle {i}") for i in range(BATCH + 2)])
        other.execute("BEGIN IMMEDIATE")  # another process writing: no index write now
        try:
            # Not the newest two: the conversation's newest match is the last one indexed.
            assert [h.seq for h in await store.search("needle")] == [BATCH]
        finally:
            other.execute("ROLLBACK")
        assert [h.seq for h in await store.search("needle")] == [BATCH + 2]
        assert len(matching(path, "needle")) == BATCH + 2
    finally:
        other.close()
        await store.close()
    fts_ok(path)


async def test_index_pending_raises_busy_to_its_caller(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path, busy_timeout=0.05)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        await store.append("s", "r", UserMessage("waiting"))
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StorageBusyError):
                await index_pending(store.database)
        finally:
            other.execute("ROLLBACK")
        assert await index_pending(store.database)
    finally:
        other.close()
        await store.close()


def make_v13_database(path: Path, texts: list[str]) -> None:
    """Schema 13 as the store wrote it: every message indexed by its own commit."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for step in MIGRATIONS[:13]:
        for statement in step:
            conn.execute(statement)
    for n, text in enumerate(texts):
        message = UserMessage(text) if n % 2 == 0 else AssistantMessage(text)
        conn.execute(
            "INSERT INTO messages(session_id, seq, parent_seq, request_id, kind, data, "
            "created_at) VALUES (?, ?, ?, 'r', 'user', ?, 1.0)",
            (f"s{n % 2}", n // 2 + 1, n // 2 or None, message_to_json(message)),
        )
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    conn.execute("PRAGMA user_version=13")
    conn.execute("COMMIT")
    conn.close()


async def test_schema_13_migrates_and_finds_the_same(tmp_path: Path) -> None:
    from tests.app.storage.test_search_index import _search_rows

    words = ["apple", "apricot", "banana", "band", "bandana", "cherry", "été", "ça", "a", "b"]
    texts = [" ".join(words[(n * k) % len(words)] for k in range(1, 6)) for n in range(100)]
    path = tmp_path / "v13.sqlite"
    make_v13_database(path, texts)
    queries = ["a", "ap", "apr", "ban", "banda", "band", "e", "été", "c", "ça b", "z", "apple b"]
    with contextlib.closing(sqlite3.connect(path)) as conn:
        before = {q: _search_rows(conn, q) for q in queries}
    assert any(len(rows) > 1 for rows in before.values())
    store = SQLiteSessionStore(path)
    try:
        await store.open()
        assert indexed(path) == (100, 100)  # everything was indexed already
        after = {
            q: [(h.session_id, h.seq, h.snippet) for h in await store.search(q)] for q in queries
        }
        assert await store.integrity_check() == ["ok"]
        for i in range(30):  # across a batch (id 128)
            await store.append("s9", "r", UserMessage(f"apricots {i} after the upgrade"))
        assert indexed(path) == (128, 130)
        assert len(await hits(store, "apricots")) == 30
    finally:
        await store.close()
    assert after == before
    fts_ok(path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 14
        triggers = {
            r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'trigger'")
        }
        assert "messages_fts_insert" not in triggers and "messages_fts_batch" in triggers
