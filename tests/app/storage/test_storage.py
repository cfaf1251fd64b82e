"""The session stores, through real SQLite files (no mocks of sqlite3 or aiosqlite).

The shared behaviour runs against both :class:`SQLiteSessionStore` and
:class:`InMemorySessionStore`; the rest checks what only a file on disk can get wrong: WAL and
fsync settings, the tail's query plan, atomic batches, refusing files that are not ours (leaving
their bytes untouched), disk full, read-only, busy, cancellation during a commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from app.errors import (
    StorageBusyError,
    StorageCorruptError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
    StorageVersionError,
)
from app.messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    StopReason,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from app.storage import (
    SCHEMA_VERSION,
    InMemorySessionStore,
    SessionStore,
    SQLiteSessionExtension,
    SQLiteSessionStore,
)
from app.storage.branches import TAIL_RANGE
from app.storage.sqlite import APPLICATION_ID, translate_sqlite_error

StoreFactory = Callable[..., SQLiteSessionStore]

WEIRD_TEXTS = [
    pytest.param("plain text", id="ascii"),
    pytest.param("Grüße · 日本語 · Ελληνικά · ñ", id="unicode"),
    pytest.param("👩‍👩‍👧 🚀 \U0001f600 🏳️‍🌈", id="emoji"),
    pytest.param("مرحبا بالعالم \u202eevil\u202c עברית", id="rtl"),
    pytest.param("before\x00after\x00", id="nul"),
    pytest.param("\ud800", id="lone-high-surrogate"),
    pytest.param("a\udfffb\ud83d", id="lone-surrogates-mixed"),
    pytest.param("\r\n\t\x1b[31m\x7f", id="control"),
    pytest.param('{"v": 99, "type": "nope"}', id="json-lookalike"),
    pytest.param("'); DROP TABLE messages; --", id="sql-lookalike"),
    pytest.param("", id="empty"),
]


def all_kinds(text: str) -> list[Message]:
    """One message of each of the four types, carrying ``text`` everywhere a string can go."""
    return [
        UserMessage(text),
        InternalMessage(text),
        AssistantMessage(
            content=text,
            tool_calls=(
                ToolCall("call-1", "lookup", {"q": text, "nested": [text, {"k": text}], "n": 1}),
                ToolCall("call-2", "noop", {}),
            ),
            stop_reason=StopReason.MAX_OUTPUT,
            model=text,
            usage=Usage(12, 34),
        ),
        AssistantMessage(content=text, stop_reason="some_future_reason"),
        ToolMessage("call-1", "lookup", text, success=False),
    ]


def sha256(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_file(path: str | os.PathLike[str], content: bytes) -> None:
    Path(path).write_bytes(content)


def read_file(path: str | os.PathLike[str]) -> bytes:
    return Path(path).read_bytes()


def file_size(path: str | os.PathLike[str]) -> int:
    return Path(path).stat().st_size


def wal_is_empty(path: str | os.PathLike[str]) -> bool:
    wal = Path(f"{os.fspath(path)}-wal")
    return not wal.exists() or wal.stat().st_size == 0


@contextlib.contextmanager
def plain(path: str | os.PathLike[str]) -> Iterator[sqlite3.Connection]:
    """A separate, ordinary sqlite3 connection (autocommit), closed on exit."""
    conn = sqlite3.connect(os.fspath(path), isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def row_count(path: str | os.PathLike[str], sql: str = "SELECT count(*) FROM messages") -> int:
    with plain(path) as conn:
        return int(conn.execute(sql).fetchone()[0])


async def conn_scalar(store: SQLiteSessionStore, sql: str) -> object:
    conn = await store._connection()
    async with conn.execute(sql) as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return row[0]


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture
async def make_store() -> AsyncIterator[StoreFactory]:
    """Build SQLite stores; every one is closed at teardown (an open one would warn)."""
    made: list[SQLiteSessionStore] = []

    def make(path: str | os.PathLike[str], **options: object) -> SQLiteSessionStore:
        store = SQLiteSessionStore(path, **options)  # type: ignore[arg-type]
        made.append(store)
        return store

    yield make
    for store in made:
        await store.close()


@pytest.fixture
async def sqlite_store(make_store: StoreFactory, db_path: str) -> SQLiteSessionStore:
    store = make_store(db_path)
    await store.open()
    return store


@pytest.fixture(params=["memory", "sqlite"])
async def store(
    request: pytest.FixtureRequest, make_store: StoreFactory, db_path: str
) -> AsyncIterator[SessionStore]:
    if request.param == "memory":
        memory = InMemorySessionStore()
        yield memory
        await memory.close()
    else:
        yield make_store(db_path)


# --- shared behaviour (both stores) ---------------------------------------------------------


async def test_both_stores_satisfy_the_protocol(store: SessionStore) -> None:
    assert isinstance(store, SessionStore)
    assert store.lock_key == store.lock_key and store.lock_key


async def test_append_returns_contiguous_seqs_from_one(store: SessionStore) -> None:
    seqs = [await store.append("s1", "r1", UserMessage(f"m{i}")) for i in range(5)]
    assert seqs == [1, 2, 3, 4, 5]
    assert await store.append_many("s1", "r2", [UserMessage("a"), UserMessage("b")]) == [6, 7]
    # Sequences are per session.
    assert await store.append("s2", "r3", UserMessage("other")) == 1
    assert [m.content for m in await store.load("s1")] == [  # type: ignore[union-attr]
        "m0",
        "m1",
        "m2",
        "m3",
        "m4",
        "a",
        "b",
    ]


async def test_concurrent_appends_get_unique_seqs_in_commit_order(store: SessionStore) -> None:
    seqs = await asyncio.wait_for(
        asyncio.gather(*(store.append("s", "r", UserMessage(str(i))) for i in range(40))), 30
    )
    assert sorted(seqs) == list(range(1, 41))
    records = await store.load_records("s")
    assert [r.seq for r in records] == list(range(1, 41))
    by_seq = {seq: str(i) for i, seq in enumerate(seqs)}
    assert [r.message.content for r in records] == [  # type: ignore[union-attr]
        by_seq[r.seq] for r in records
    ]


@pytest.mark.parametrize("text", WEIRD_TEXTS)
async def test_every_message_type_round_trips_exactly(store: SessionStore, text: str) -> None:
    messages = all_kinds(text)
    for message in messages:
        await store.append("s", "r", message)
    loaded = await store.load("s")
    assert loaded == messages
    assert [type(m) for m in loaded] == [type(m) for m in messages]
    assert await store.tail("s", len(messages)) == messages
    assistant = loaded[2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.stop_reason is StopReason.MAX_OUTPUT
    assert assistant.tool_calls[0].arguments_dict() == {
        "q": text,
        "nested": [text, {"k": text}],
        "n": 1,
    }
    assert loaded[3].stop_reason == "some_future_reason"  # type: ignore[union-attr]


async def test_append_many_round_trips_every_type(store: SessionStore) -> None:
    messages = all_kinds("batch ✓ \ud800 \x00")
    seqs = await store.append_many("s", "r", messages)
    assert seqs == list(range(1, len(messages) + 1))
    assert await store.load("s") == messages


async def test_ten_megabyte_message_round_trips(store: SessionStore) -> None:
    unit = "résumé 😀 \x00 "
    big = (unit * (10 * 1024 * 1024 // len(unit) + 1))[: 10 * 1024 * 1024]
    assert len(big) == 10 * 1024 * 1024
    await store.append("s", "r", UserMessage("first"))
    await store.append("s", "r", UserMessage(big))
    await store.append("s", "r", UserMessage("last"))
    loaded = await store.load("s")
    assert loaded[1] == UserMessage(big)
    assert await store.tail("s", 2) == [UserMessage(big), UserMessage("last")]


async def test_tail_returns_the_last_n_in_order(store: SessionStore) -> None:
    messages: list[Message] = [UserMessage(f"m{i}") for i in range(30)]
    await store.append_many("s", "r", messages)
    await store.append("other", "r", UserMessage("not mine"))
    assert await store.tail("s", 3) == messages[-3:]
    assert await store.tail("s", 1) == messages[-1:]
    assert await store.tail("s", 30) == messages
    assert await store.tail("s", 1000) == messages
    assert await store.tail("s", 0) == []
    assert await store.tail("s", -5) == []
    assert await store.tail("nobody", 5) == []


async def test_load_records_pages_through_the_history(store: SessionStore) -> None:
    await store.append_many("s", "req-a", [UserMessage(str(i)) for i in range(10)])
    await store.append("s", "req-b", UserMessage("10"))
    records = await store.load_records("s")
    assert [r.seq for r in records] == list(range(1, 12))
    assert [r.request_id for r in records] == ["req-a"] * 10 + ["req-b"]
    assert all(a.created_at <= b.created_at for a, b in zip(records, records[1:], strict=False))
    page = await store.load_records("s", after_seq=4, limit=3)
    assert [r.seq for r in page] == [5, 6, 7]
    assert [r.message for r in page] == [UserMessage("4"), UserMessage("5"), UserMessage("6")]
    assert await store.load_records("s", after_seq=11) == []
    assert await store.load_records("s", limit=0) == []
    assert await store.load_records("nobody") == []


async def test_session_is_created_on_first_append(store: SessionStore) -> None:
    assert await store.get_session("fresh") is None
    assert await store.load("fresh") == []
    await store.append("fresh", "r", UserMessage("hello"))
    info = await store.get_session("fresh")
    assert info is not None
    assert info.id == "fresh"
    assert info.title is None
    assert info.message_count == 1
    assert info.created_at <= info.updated_at
    await store.append_many("fresh", "r", [UserMessage("a"), UserMessage("b")])
    later = await store.get_session("fresh")
    assert later is not None and later.message_count == 3
    assert later.updated_at > info.updated_at
    assert later.created_at == info.created_at


async def test_append_many_of_nothing_saves_and_creates_nothing(store: SessionStore) -> None:
    assert await store.append_many("s", "r", []) == []
    assert await store.get_session("s") is None
    assert await store.list_sessions() == []


async def test_create_session_with_and_without_id(store: SessionStore) -> None:
    generated = await store.create_session(title="Trip plans")
    assert len(generated.id) == 32 and generated.title == "Trip plans"
    assert generated.message_count == 0
    named = await store.create_session("named", title="First title")
    again = await store.create_session("named", title="Second title")
    assert again.id == "named" and again.title == "First title"  # never silently renamed
    assert named.created_at == again.created_at
    assert {s.id for s in await store.list_sessions()} == {generated.id, "named"}


async def test_list_sessions_newest_first(store: SessionStore) -> None:
    await store.append("a", "r", UserMessage("1"))
    await store.append("b", "r", UserMessage("2"))
    await store.append("c", "r", UserMessage("3"))
    assert [s.id for s in await store.list_sessions()] == ["c", "b", "a"]
    await store.append("a", "r", UserMessage("4"))  # touching a session moves it to the top
    sessions = await store.list_sessions()
    assert [s.id for s in sessions] == ["a", "c", "b"]
    assert [s.message_count for s in sessions] == [2, 1, 1]
    assert all(x.updated_at > y.updated_at for x, y in zip(sessions, sessions[1:], strict=False))


async def test_rename_session(store: SessionStore) -> None:
    await store.append("s", "r", UserMessage("hi"))
    await store.rename_session("s", "Renamed ✓ «quotes»")
    info = await store.get_session("s")
    assert info is not None and info.title == "Renamed ✓ «quotes»"
    assert info.message_count == 1
    await store.rename_session("s", None)
    cleared = await store.get_session("s")
    assert cleared is not None and cleared.title is None
    await store.rename_session("ghost", "x")  # renaming nothing creates nothing
    assert await store.get_session("ghost") is None


async def test_delete_session_removes_it_and_its_messages(store: SessionStore) -> None:
    await store.append_many("doomed", "r", [UserMessage("1"), UserMessage("2")])
    await store.append("kept", "r", UserMessage("stay"))
    assert await store.delete_session("doomed") is True
    assert await store.delete_session("doomed") is False
    assert await store.get_session("doomed") is None
    assert await store.load("doomed") == []
    assert await store.tail("doomed", 5) == []
    assert [s.id for s in await store.list_sessions()] == ["kept"]
    assert await store.load("kept") == [UserMessage("stay")]
    # The id can be used again and starts over.
    assert await store.append("doomed", "r", UserMessage("new life")) == 1
    assert await store.load("doomed") == [UserMessage("new life")]


# --- SQLite: settings and schema ------------------------------------------------------------


async def test_wal_mode_is_on_as_seen_by_another_connection(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    await sqlite_store.append("s", "r", UserMessage("x"))
    with plain(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_synchronous_full_by_default(sqlite_store: SQLiteSessionStore) -> None:
    assert await conn_scalar(sqlite_store, "PRAGMA synchronous") == 2  # FULL
    assert await conn_scalar(sqlite_store, "PRAGMA foreign_keys") == 1


async def test_synchronous_normal_when_asked(make_store: StoreFactory, db_path: str) -> None:
    store = make_store(db_path, synchronous="normal")
    assert await conn_scalar(store, "PRAGMA synchronous") == 1  # NORMAL


async def test_extension_exposes_a_configured_store(db_path: str) -> None:
    extension = SQLiteSessionExtension(db_path, synchronous="normal")
    try:
        assert isinstance(extension.storage, SQLiteSessionStore)
        assert extension.storage.path == db_path
        assert db_path in repr(extension)
        await extension.storage.append("s", "r", UserMessage("via extension"))
        assert await conn_scalar(extension.storage, "PRAGMA synchronous") == 1
        assert await extension.storage.load("s") == [UserMessage("via extension")]
    finally:
        await extension.storage.close()


async def test_schema_version_and_application_id_are_set(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    assert SCHEMA_VERSION >= 1
    with plain(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"sessions", "messages"} <= tables


async def test_integrity_check_is_ok(sqlite_store: SQLiteSessionStore) -> None:
    await sqlite_store.append_many("s", "r", all_kinds("check"))
    assert await sqlite_store.integrity_check() == ["ok"]


async def test_stored_json_is_valid_utf8_even_with_lone_surrogates(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    await sqlite_store.append("s", "r", UserMessage("x\ud800y"))
    with plain(db_path) as conn:
        conn.text_factory = bytes
        raw = conn.execute("SELECT data, kind FROM messages").fetchone()
    raw[0].decode("utf-8")  # strict: raises if a surrogate reached the file unescaped
    assert b"\\ud800" in raw[0]
    assert raw[1] == b"user"


# --- SQLite: the tail reads only the end ------------------------------------------------------


def query_plan(path: str, sql: str, params: tuple[object, ...]) -> list[str]:
    with plain(path) as conn:
        return [str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]


def reads_only_the_index_end(plan: list[str]) -> bool:
    return (
        any("USING INDEX" in step and "(session_id=?" in step for step in plan)
        and not any(step.startswith("SCAN") for step in plan)
        and not any("TEMP B-TREE" in step for step in plan)
    )


async def test_tail_query_uses_the_session_seq_index_backwards(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    for session in ("a", "b"):
        await sqlite_store.append_many(session, "r", [UserMessage(str(i)) for i in range(200)])
    plan = query_plan(db_path, TAIL_RANGE, ("a", 200, 5))
    assert reads_only_the_index_end(plan), plan
    with plain(db_path) as conn:
        index_of = {
            r[0]: r[1]
            for r in conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type='index'")
        }
        used = next(step for step in plan if "USING INDEX" in step)
        index_name = used.split("USING INDEX ")[1].split()[0]
        columns = [r[2] for r in conn.execute(f"PRAGMA index_info({index_name})")]
    assert index_of[index_name] == "messages"
    assert columns == ["session_id", "seq"]
    # The checks above can fail: the same query ordered by a column without an index sorts.
    control = query_plan(
        db_path, TAIL_RANGE.replace("ORDER BY m.seq", "ORDER BY m.created_at"), ("a", 200, 5)
    )
    assert not reads_only_the_index_end(control), control
    assert [m.content for m in await sqlite_store.tail("a", 3)] == [  # type: ignore[union-attr]
        "197",
        "198",
        "199",
    ]


# --- SQLite: atomic batches -----------------------------------------------------------------


def add_failing_trigger(path: str, marker: str, action: str = "ABORT") -> None:
    with plain(path) as conn:
        conn.execute(
            f"CREATE TRIGGER fail_on_marker BEFORE INSERT ON messages "
            f"WHEN instr(NEW.data, '{marker}') > 0 "
            f"BEGIN SELECT RAISE({action}, 'refused by test trigger'); END"
        )


async def test_append_many_is_all_or_nothing(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    await sqlite_store.append("s", "r", UserMessage("before"))
    add_failing_trigger(db_path, "POISON")
    batch: list[Message] = [UserMessage("one"), UserMessage("POISON two"), UserMessage("three")]
    with pytest.raises(sqlite3.IntegrityError, match="refused by test trigger"):
        await sqlite_store.append_many("s", "r", batch)
    conn = await sqlite_store._connection()
    assert not conn.in_transaction
    assert await sqlite_store.load("s") == [UserMessage("before")]
    assert row_count(db_path) == 1
    info = await sqlite_store.get_session("s")
    assert info is not None and info.message_count == 1
    # The store still works and the sequence has no gap.
    assert await sqlite_store.append_many("s", "r", [UserMessage("x"), UserMessage("y")]) == [2, 3]
    assert await sqlite_store.append("s", "r", UserMessage("z")) == 4
    assert row_count(db_path) == 4


async def test_append_many_in_a_new_session_leaves_no_session_behind(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    add_failing_trigger(db_path, "POISON")
    with pytest.raises(sqlite3.IntegrityError):
        await sqlite_store.append_many("new", "r", [UserMessage("a"), UserMessage("POISON")])
    assert await sqlite_store.get_session("new") is None
    assert row_count(db_path, "SELECT count(*) FROM sessions") == 0


async def test_append_many_keeps_the_real_error_when_sqlite_already_rolled_back(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    # RAISE(ROLLBACK) ends the transaction inside SQLite; a blind ROLLBACK afterwards would fail
    # with "no transaction is active" and hide this error.
    add_failing_trigger(db_path, "POISON", action="ROLLBACK")
    with pytest.raises(sqlite3.IntegrityError, match="refused by test trigger"):
        await sqlite_store.append_many("s", "r", [UserMessage("a"), UserMessage("POISON")])
    assert not (await sqlite_store._connection()).in_transaction
    assert row_count(db_path) == 0
    assert await sqlite_store.append("s", "r", UserMessage("ok")) == 1


# --- SQLite: files that are not ours, or not healthy ----------------------------------------


async def test_newer_schema_is_refused_and_left_byte_for_byte(
    make_store: StoreFactory, db_path: str
) -> None:
    first = make_store(db_path)
    await first.append("s", "r", UserMessage("from the future"))
    await first.close()
    with plain(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = sha256(db_path)
    store = make_store(db_path)
    with pytest.raises(StorageVersionError) as info:
        await store.open()
    text = str(info.value)
    assert "newer" in text and "untouched" in text and "update" in text.lower()
    with pytest.raises(StorageVersionError):
        await store.load("s")  # every later use refuses too; nothing half-opened
    await store.close()
    assert sha256(db_path) == before
    assert wal_is_empty(db_path)
    with plain(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def make_foreign_database(path: str, user_version: int) -> None:
    with plain(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes(body) VALUES ('somebody else''s data')")
        conn.execute(f"PRAGMA user_version = {user_version}")


@pytest.mark.parametrize("user_version", [0, 1, SCHEMA_VERSION + 5])
async def test_another_programs_database_is_refused_untouched(
    make_store: StoreFactory, db_path: str, user_version: int
) -> None:
    make_foreign_database(db_path, user_version)
    before = sha256(db_path)
    store = make_store(db_path)
    with pytest.raises(StorageCorruptError) as info:
        await store.open()
        await store.append("s", "r", UserMessage("must not land"))
    assert "untouched" in str(info.value)
    assert "another program" in str(info.value)
    await store.close()
    assert sha256(db_path) == before
    assert wal_is_empty(db_path)
    with plain(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched
        assert conn.execute("SELECT body FROM notes").fetchall() == [("somebody else's data",)]


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(os.urandom(64 * 1024), id="random-64k"),
        pytest.param(os.urandom(100), id="random-100b"),
        pytest.param(b"hello, I am a text file\n", id="text"),
    ],
)
async def test_garbage_file_is_refused_untouched(
    make_store: StoreFactory, db_path: str, content: bytes
) -> None:
    write_file(db_path, content)
    store = make_store(db_path)
    with pytest.raises(StorageCorruptError) as info:
        await store.open()
        await store.load("s")
    assert "untouched" in str(info.value)
    assert db_path in str(info.value)
    await store.close()
    assert read_file(db_path) == content
    assert wal_is_empty(db_path)


async def test_truncated_database_is_refused_untouched(
    make_store: StoreFactory, db_path: str
) -> None:
    first = make_store(db_path)
    for i in range(200):
        await first.append("s", "r", UserMessage(f"message number {i} " * 10))
    await first.close()
    assert wal_is_empty(db_path)  # checkpointed on close: the data is all in the main file
    size = file_size(db_path)
    os.truncate(db_path, size // 2)
    before = sha256(db_path)
    store = make_store(db_path)
    with pytest.raises(StorageCorruptError) as info:
        await store.open()
        await store.load("s")
    assert "untouched" in str(info.value)
    await store.close()
    assert sha256(db_path) == before
    assert file_size(db_path) == size // 2


async def test_an_unreadable_message_row_is_reported_as_corrupt(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    await sqlite_store.append("s", "r", UserMessage("fine"))
    with plain(db_path) as conn:
        conn.execute("UPDATE messages SET data = '{not json' WHERE seq = 1")
    with pytest.raises(StorageCorruptError, match="Message 1"):
        await sqlite_store.load("s")
    with pytest.raises(StorageCorruptError):
        await sqlite_store.tail("s", 1)


async def test_empty_file_is_migrated_to_the_current_schema(
    make_store: StoreFactory, db_path: str
) -> None:
    write_file(db_path, b"")
    store = make_store(db_path)
    assert await store.append("s", "r", UserMessage("first")) == 1
    with plain(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert await store.load("s") == [UserMessage("first")]


async def test_empty_version_zero_database_is_migrated(
    make_store: StoreFactory, db_path: str
) -> None:
    with plain(db_path) as conn:  # a real SQLite file with no tables and user_version 0
        conn.execute("CREATE TABLE scratch (x)")
        conn.execute("DROP TABLE scratch")
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    assert file_size(db_path) > 0
    store = make_store(db_path)
    await store.open()
    with plain(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert await store.append("s", "r", UserMessage("works")) == 1
    assert await store.integrity_check() == ["ok"]


async def test_reopening_keeps_everything_and_does_not_migrate_again(
    make_store: StoreFactory, db_path: str
) -> None:
    first = make_store(db_path)
    await first.append_many("s", "r", all_kinds("kept"))
    await first.rename_session("s", "Title")
    await first.close()
    second = make_store(db_path)
    assert await second.load("s") == all_kinds("kept")
    info = await second.get_session("s")
    assert info is not None and info.title == "Title" and info.message_count == 5
    assert await second.append("s", "r", UserMessage("more")) == 6


# --- SQLite: environment failures -------------------------------------------------------------


async def test_disk_full_is_reported_and_nothing_half_written(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    await sqlite_store.append("s", "r", UserMessage("committed before the disk filled"))
    conn = await sqlite_store._connection()
    pages = await conn_scalar(sqlite_store, "PRAGMA page_count")
    await conn.execute(f"PRAGMA max_page_count = {pages}")
    big = UserMessage("x" * 2_000_000)
    with pytest.raises(StorageFullError) as info:
        await sqlite_store.append("s", "r", big)
    text = str(info.value)
    assert "full" in text and "Free some disk space" in text and db_path in text
    assert not conn.in_transaction
    with pytest.raises(StorageFullError):
        await sqlite_store.append_many("s", "r", [UserMessage("small"), big])
    assert not conn.in_transaction
    assert await sqlite_store.tail("s", 1) == [UserMessage("committed before the disk filled")]
    assert row_count(db_path) == 1
    info_after = await sqlite_store.get_session("s")
    assert info_after is not None and info_after.message_count == 1
    # Space comes back: the next append works and continues the sequence.
    await conn.execute("PRAGMA max_page_count = 1073741823")
    assert await sqlite_store.append("s", "r", UserMessage("after")) == 2
    assert await sqlite_store.integrity_check() == ["ok"]


def test_translate_readonly_error_from_a_real_readonly_connection(tmp_path: Path) -> None:
    path = tmp_path / "ro.sqlite"
    with plain(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    ro = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError) as raised:
            ro.execute("INSERT INTO t VALUES (1)")
    finally:
        ro.close()
    error = translate_sqlite_error(raised.value, str(path))
    assert isinstance(error, StorageReadOnlyError)
    assert str(path) in str(error) and "permissions" in str(error)


def permissions_are_enforced(folder: Path) -> bool:
    """False when this process may write a read-only file anyway (root with CAP_DAC_OVERRIDE)."""
    probe = folder / "probe"
    probe.write_bytes(b"")
    probe.chmod(0o444)
    try:
        with open(probe, "ab"):
            return False
    except PermissionError:
        return True
    finally:
        probe.chmod(0o644)
        probe.unlink()


async def test_readonly_file_in_readonly_folder(
    make_store: StoreFactory, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if not permissions_are_enforced(tmp_path):
        # Root with CAP_DAC_OVERRIDE writes anyway (CI runs as root): run this very test again
        # in a child without capabilities, where file permissions apply as for a user.
        assert shutil.which("setpriv"), "setpriv (util-linux) is needed to drop root's capabilities"
        result = subprocess.run(
            [
                "setpriv",
                "--bounding-set=-all",
                "--inh-caps=-all",
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"{request.node.path}::{request.node.name}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=request.config.rootpath,
        )
        assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout[-3000:]
        return
    folder = tmp_path / "locked"
    folder.mkdir()
    path = folder / "conversations.sqlite"
    first = make_store(path)
    await first.append("s", "r", UserMessage("saved"))
    await first.close()
    before = sha256(path)
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        store = make_store(path)
        with pytest.raises(StorageReadOnlyError) as info:
            await store.open()
            await store.append("s", "r", UserMessage("cannot be saved"))
        assert str(path) in str(info.value)
        await store.close()
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)
    assert sha256(path) == before


async def test_missing_parent_folder_is_a_readonly_error(
    make_store: StoreFactory, tmp_path: Path
) -> None:
    path = tmp_path / "does-not-exist" / "conversations.sqlite"
    store = make_store(path)
    with pytest.raises(StorageReadOnlyError) as info:
        await store.append("s", "r", UserMessage("x"))
    assert "does not exist" in str(info.value) and str(path.parent) in str(info.value)
    assert not path.parent.exists()


async def test_busy_database_is_reported_and_recovers(
    make_store: StoreFactory, db_path: str
) -> None:
    store = make_store(db_path, busy_timeout=0.05)
    await store.append("s", "r", UserMessage("before"))
    with plain(db_path) as other:
        other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        with pytest.raises(StorageBusyError) as info:
            await asyncio.wait_for(store.append("s", "r", UserMessage("blocked")), 10)
        assert "locked" in str(info.value)
        assert not (await store._connection()).in_transaction
        other.execute("ROLLBACK")
    assert await store.append("s", "r", UserMessage("after")) == 2
    assert await store.load("s") == [UserMessage("before"), UserMessage("after")]


def real_sqlite_error(statement: Callable[[sqlite3.Connection], object]) -> sqlite3.Error:
    with plain(":memory:") as conn:
        conn.execute("CREATE TABLE t (x PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")
        try:
            statement(conn)
        except sqlite3.Error as err:
            return err
    raise AssertionError("the statement did not fail")


def test_programming_errors_are_not_translated() -> None:
    duplicate = real_sqlite_error(lambda c: c.execute("INSERT INTO t VALUES (1)"))
    syntax = real_sqlite_error(lambda c: c.execute("SELEC nonsense"))
    missing = real_sqlite_error(lambda c: c.execute("SELECT * FROM nowhere"))
    for err in (duplicate, syntax, missing):
        assert translate_sqlite_error(err, "x.sqlite") is None, err
    assert translate_sqlite_error(ValueError("database or disk is full"), "x") is None


def test_not_a_database_error_is_translated(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"\x01" * 4096)
    with plain(path) as conn, pytest.raises(sqlite3.DatabaseError) as raised:
        conn.execute("SELECT * FROM sqlite_master")
    error = translate_sqlite_error(raised.value, str(path))
    assert isinstance(error, StorageCorruptError)
    assert "untouched" in str(error)


# --- SQLite: cancellation, sharing, closing ---------------------------------------------------


async def cancel_right_after_start(operation: Callable[[], Awaitable[object]]) -> None:
    started = asyncio.Event()

    async def run() -> object:
        started.set()
        return await operation()

    task = asyncio.create_task(run())
    await started.wait()
    assert task.cancel()  # the operation was still in flight
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert task.cancelled()


async def test_cancelled_append_still_commits(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    await cancel_right_after_start(
        lambda: sqlite_store.append("s", "r", UserMessage("stop pressed"))
    )
    # The next write queues behind the shielded one, so it sees it committed.
    assert await asyncio.wait_for(sqlite_store.append("s", "r", UserMessage("next")), 10) == 2
    assert not (await sqlite_store._connection()).in_transaction
    assert await sqlite_store.load("s") == [UserMessage("stop pressed"), UserMessage("next")]
    assert row_count(db_path) == 2


async def test_cancelled_append_many_commits_the_whole_batch(
    sqlite_store: SQLiteSessionStore, db_path: str
) -> None:
    batch: list[Message] = [UserMessage(str(i)) for i in range(50)]
    await cancel_right_after_start(lambda: sqlite_store.append_many("s", "r", batch))
    assert await asyncio.wait_for(sqlite_store.append("s", "r", UserMessage("next")), 10) == 51
    assert not (await sqlite_store._connection()).in_transaction
    assert await sqlite_store.load("s") == [*batch, UserMessage("next")]
    assert row_count(db_path) == 51


async def test_two_store_objects_on_one_file_see_each_others_writes(
    make_store: StoreFactory, db_path: str, tmp_path: Path
) -> None:
    a = make_store(db_path)
    b = make_store(tmp_path / "." / Path(db_path).name)  # another spelling of the same file
    assert a.lock_key == b.lock_key
    await a.append("s", "r", UserMessage("from a"))
    assert await b.load("s") == [UserMessage("from a")]
    assert await b.append("s", "r", UserMessage("from b")) == 2
    assert await a.tail("s", 2) == [UserMessage("from a"), UserMessage("from b")]
    await b.rename_session("s", "named by b")
    info = await a.get_session("s")
    assert info is not None and info.title == "named by b" and info.message_count == 2
    assert await a.delete_session("s") is True
    assert await b.load("s") == []


async def test_memory_stores_have_distinct_lock_keys(make_store: StoreFactory) -> None:
    assert InMemorySessionStore().lock_key != InMemorySessionStore().lock_key
    one, two = make_store(":memory:"), make_store(":memory:")
    assert one.lock_key != two.lock_key
    await one.append("s", "r", UserMessage("only in one"))
    assert await two.load("s") == []
    assert await one.load("s") == [UserMessage("only in one")]


async def test_use_after_close_raises_storage_error(make_store: StoreFactory, db_path: str) -> None:
    store = make_store(db_path)
    await store.append("s", "r", UserMessage("x"))
    await store.close()
    await store.close()  # closing twice is harmless
    with pytest.raises(StorageError, match="closed"):
        await store.append("s", "r", UserMessage("late"))
    with pytest.raises(StorageError, match="closed"):
        await store.load("s")
    with pytest.raises(StorageError, match="closed"):
        await store.open()
    assert row_count(db_path) == 1


async def test_close_before_first_use_then_use_raises(
    make_store: StoreFactory, db_path: str
) -> None:
    store = make_store(db_path)
    await store.close()
    with pytest.raises(StorageError, match="closed"):
        await store.list_sessions()
    assert not Path(db_path).exists()  # noqa: ASYNC240 - never opened, never created


async def test_close_during_open_does_not_leak_the_connection(
    make_store: StoreFactory, db_path: str
) -> None:
    store = make_store(db_path)
    opening = asyncio.create_task(store.open())
    started = asyncio.Event()
    asyncio.get_running_loop().call_soon(started.set)
    await started.wait()  # open() is now in flight
    await store.close()
    with pytest.raises(StorageError, match="closed"):
        await asyncio.wait_for(opening, 10)
    assert not store.is_open
