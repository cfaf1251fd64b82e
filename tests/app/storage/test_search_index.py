"""Schema 12's full-text index: external content read from the messages, migrated from 11."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from app import AssistantMessage, UserMessage
from app.messages import message_to_json
from app.parts import TextPart
from app.storage import SQLiteSessionStore
from app.storage.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION


def fts_ok(path: Path) -> None:
    """FTS5's own check of the index against its content (raises when they disagree)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


def make_v11_database(path: Path) -> None:
    """Schema 11 as the store wrote it: a plain chat and a message of parts whose index text
    the store had set to its words (not the JSON of its parts)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for step in MIGRATIONS[:11]:
        for statement in step:
            conn.execute(statement)
    rows = [
        ("a", 1, None, UserMessage("an apple question")),
        ("a", 2, 1, AssistantMessage("a banana answer")),
        ("b", 1, None, UserMessage((TextPart("cherry parts"),))),
    ]
    for session, seq, parent, message in rows:
        conn.execute(
            "INSERT INTO messages(session_id, seq, parent_seq, request_id, kind, data, "
            "created_at) VALUES (?, ?, ?, 'r', 'user', ?, 1.0)",
            (session, seq, parent, message_to_json(message)),
        )
    conn.execute(
        "UPDATE messages_fts SET text = 'cherry parts' WHERE rowid = "
        "(SELECT id FROM messages WHERE session_id = 'b')"
    )
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    conn.execute("PRAGMA user_version=11")
    conn.execute("COMMIT")
    conn.close()


async def test_schema_11_migrates_with_every_message_searchable(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    make_v11_database(path)
    store = SQLiteSessionStore(path)
    try:
        assert [(h.session_id, h.seq) for h in await store.search("apple")] == [("a", 1)]
        assert [(h.session_id, h.seq) for h in await store.search("banana")] == [("a", 2)]
        [parts] = await store.search("cherry")
        assert (parts.session_id, parts.snippet) == ("b", "[cherry] parts")
        assert await store.search("type") == []  # the parts' JSON is still not indexed
        assert await store.integrity_check() == ["ok"]
    finally:
        await store.close()
    fts_ok(path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema")}
        assert "sessions_by_update" not in names and "messages_fts_content" not in names
        assert conn.execute("SELECT id, text FROM messages_index_text").fetchall() == [
            (3, "cherry parts")
        ]


async def test_the_index_follows_appends_deletes_and_changed_data(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    try:
        await store.append("s", "r", UserMessage("alpha words"))
        await store.append("s", "r", UserMessage((TextPart("beta parts"),)))
        await store.append("s", "r", UserMessage("gamma \ud800 broken"))
        await store.append_many("t", "r", [UserMessage("alpha again"), AssistantMessage("delta")])
        assert sorted(h.session_id for h in await store.search("alpha")) == ["s", "t"]
        assert [h.snippet for h in await store.search("beta")] == ["[beta] parts"]
        assert [h.snippet for h in await store.search("gamma")] == ["[gamma] \ufffd broken"]
        fts_ok(path)
        assert await store.delete_session("s")
        assert [h.session_id for h in await store.search("alpha")] == ["t"]
        assert await store.search("beta") == [] and await store.search("gamma") == []
        fts_ok(path)
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM messages_index_text").fetchone() == (0,)
        conn.execute(
            "UPDATE messages SET data = ? WHERE session_id = 't' AND seq = 2",
            (message_to_json(AssistantMessage("epsilon")),),
        )
        conn.execute("UPDATE messages SET data = '{damaged' WHERE session_id = 't' AND seq = 1")
        conn.commit()
    fts_ok(path)
    store = SQLiteSessionStore(path)
    try:
        assert [h.seq for h in await store.search("epsilon")] == [2]
        assert await store.search("delta") == [] and await store.search("alpha") == []
        assert await store.delete_session("t")  # a damaged row can still be deleted
    finally:
        await store.close()
    fts_ok(path)


async def test_loading_reads_only_seq_and_data_and_names_a_damaged_row(tmp_path: Path) -> None:
    from app.errors import StorageCorruptError

    path = tmp_path / "c.sqlite"
    store = SQLiteSessionStore(path)
    try:
        for i in range(5):
            await store.append(
                "s", "r", UserMessage(f"q{i}") if i % 2 == 0 else AssistantMessage(f"a{i}")
            )
        assert await store.load("s") == [
            UserMessage("q0"),
            AssistantMessage("a1"),
            UserMessage("q2"),
            AssistantMessage("a3"),
            UserMessage("q4"),
        ]
    finally:
        await store.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE messages SET data = '{\"v\":1}' WHERE seq = 4")
        conn.commit()
    store = SQLiteSessionStore(path)
    try:
        with pytest.raises(StorageCorruptError, match="Message 4 "):
            await store.load("s")
    finally:
        await store.close()


async def test_search_lists_conversations_by_their_newest_match(tmp_path: Path) -> None:
    """Newest first, whatever the rank, one hit per conversation: its newest matching message."""
    from app.storage.search import search

    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        await store.append_many("old", "r", [UserMessage("needle " * 5 + str(i)) for i in range(5)])
        await store.append_many("new", "r", [UserMessage(f"needle and hay {i}") for i in range(5)])
        await store.append("other", "r", UserMessage("hay only"))
        hits = await search(store.database, "needle")
        assert [(h.session_id, h.seq) for h in hits] == [("new", 5), ("old", 5)]
        assert hits[0].snippet == "[needle] and hay 4"
        assert [h.session_id for h in await search(store.database, "needle", limit=1)] == ["new"]
        assert await search(store.database, "absent") == []
        # A message saved later in an older conversation brings it first.
        await store.append("old", "r", UserMessage("one more needle"))
        hits = await search(store.database, "needle")
        assert [(h.session_id, h.seq, h.snippet) for h in hits] == [
            ("old", 6, "one more [needle]"),
            ("new", 5, "[needle] and hay 4"),
        ]
    finally:
        await store.close()


async def test_a_long_conversation_does_not_crowd_out_the_others(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        for n in range(5):
            await store.append(f"earlier{n}", "r", UserMessage(f"python question {n}"))
        await store.append_many("long", "r", [UserMessage(f"python {i}") for i in range(300)])
        hits = await store.search("python")
        assert [h.session_id for h in hits] == ["long"] + [f"earlier{n}" for n in range(4, -1, -1)]
        assert hits[0].seq == 300
    finally:
        await store.close()


async def test_search_looks_through_the_newest_matches_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.storage import search as search_module

    monkeypatch.setattr(search_module, "SCANNED", 10)
    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        await store.append("first", "r", UserMessage("word"))
        await store.append_many("busy", "r", [UserMessage(f"word {i}") for i in range(10)])
        assert [h.session_id for h in await store.search("word")] == ["busy"]
        await store.append("first", "r", UserMessage("word again"))
        assert [h.session_id for h in await store.search("word")] == ["first", "busy"]
    finally:
        await store.close()


async def test_the_walk_stops_at_the_last_conversation_shown(tmp_path: Path) -> None:
    """No row past the ``limit``-th conversation is walked: none gets a snippet, none is even
    given to ``continuum_first_of`` (which remembers every session it was given)."""
    import asyncio

    from app.storage import search as search_module

    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        for n in range(40):  # one match each: rows and conversations are the same
            await store.append(f"s{n:02d}", "r", UserMessage(f"needle {n}"))
        hits = await search_module.search(store.database, "needle", limit=3)
        assert [(h.session_id, h.snippet) for h in hits] == [
            ("s39", "[needle] 39"),
            ("s38", "[needle] 38"),
            ("s37", "[needle] 37"),
        ]
        first_of = await store.database.read(
            lambda conn: asyncio.sleep(0, search_module._REGISTERED[conn])
        )
        assert first_of._seen == {"s39", "s38", "s37"}
        assert await search_module.search(store.database, "needle", limit=0) == []
        assert len(await search_module.search(store.database, "needle")) == 40
        assert len(first_of._seen) == 40
    finally:
        await store.close()


def test_first_of_says_which_row_is_the_first_of_its_conversation() -> None:
    from app.storage.search import _FirstOf

    first_of = _FirstOf()
    assert [first_of(s) for s in ["a", "b", "a", "c", "b", "a"]] == [1, 1, 0, 1, 0, 0]
    first_of.reset()  # each search starts afresh
    assert [first_of(s) for s in ["a", "a"]] == [1, 0]


async def test_a_search_after_a_cancelled_one_still_answers(tmp_path: Path) -> None:
    """The function is registered once per connection; a search cut off mid-walk leaves
    nothing that breaks the next one."""
    import asyncio

    store = SQLiteSessionStore(tmp_path / "c.sqlite")
    try:
        for n in range(30):
            await store.append_many(f"s{n:02d}", "r", [UserMessage(f"word {i}") for i in range(40)])
        expected = [(h.session_id, h.seq) for h in await store.search("word")]
        assert len(expected) == 30 and expected[0] == ("s29", 40)
        for _ in range(5):
            task = asyncio.ensure_future(store.search("word"))
            await asyncio.sleep(0)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            assert [(h.session_id, h.seq) for h in await store.search("word")] == expected
    finally:
        await store.close()


def make_v12_database(path: Path, texts: list[str]) -> None:
    """Schema 12 as the store wrote it, with ``texts`` as the messages of two sessions."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for step in MIGRATIONS[:12]:
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
    conn.execute("PRAGMA user_version=12")
    conn.execute("COMMIT")
    conn.close()


async def test_schema_13_indexes_prefixes_and_finds_the_same(tmp_path: Path) -> None:
    """The prefix index (schema 13) changes how fast, never what a search finds."""
    words = ["apple", "apricot", "banana", "band", "bandana", "cherry", "été", "ça", "a", "b"]
    texts = [" ".join(words[(n * k) % len(words)] for k in range(1, 6)) for n in range(60)]
    path = tmp_path / "v12.sqlite"
    make_v12_database(path, texts)
    queries = ["a", "ap", "apr", "ban", "banda", "band", "e", "été", "c", "ça b", "z", "apple b"]
    with contextlib.closing(sqlite3.connect(path)) as conn:
        before = {q: _search_rows(conn, q) for q in queries}
    assert any(len(rows) > 1 for rows in before.values())
    store = SQLiteSessionStore(path)
    try:
        after = {
            q: [(h.session_id, h.seq, h.snippet) for h in await store.search(q)] for q in queries
        }
        assert await store.integrity_check() == ["ok"]
        await store.append("s9", "r", UserMessage("apricots after the upgrade"))
        assert [h.session_id for h in await store.search("apricots")] == ["s9"]
    finally:
        await store.close()
    assert after == before
    fts_ok(path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 13
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_schema WHERE name = 'messages_fts'"
        ).fetchone()
        assert "prefix = '1 2 3'" in sql


def _search_rows(conn: sqlite3.Connection, text: str) -> list[tuple[str, int, str]]:
    """What the store's search returns, asked of a database the store has not opened."""
    from app.storage.search import _FIRST, _NEWEST, SCANNED, _FirstOf, fts_query

    conn.create_function("continuum_first_of", 1, _FirstOf())
    rows = conn.execute(_NEWEST, (fts_query(text), SCANNED, 50, _FIRST)).fetchall()
    return [(str(r[1]), int(r[2]), bytes(r[3]).decode("utf-8")) for r in rows]
