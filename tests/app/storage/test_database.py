"""The database primitive (:mod:`app.storage.database`) on real SQLite files.

Tables of file states for ``open``/``check``/``migrate`` (what is refused, what is left
byte-for-byte untouched, what is migrated), then the semantics of ``read``/``write``/
``transaction``: commit, rollback on an error and on cancellation, a cancelled caller's write
that still lands, reads that never see another coroutine's open transaction, error
translation, damage found while in use.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import aiosqlite
import pytest

from app.errors import (
    StorageCorruptError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
    StorageVersionError,
)
from app.storage.database import Database, check, check_read_only, migrate, scalar
from app.storage.schema import APPLICATION_ID, CONVERSATIONS, SCHEMA_VERSION, Schema

# A small schema of our own for the migration table: two steps.
TWO_STEPS = Schema(
    APPLICATION_ID,
    (
        ("CREATE TABLE a (x INTEGER)",),
        ("CREATE TABLE b (y INTEGER)", "INSERT INTO a(x) VALUES (1)"),
    ),
)


@contextlib.contextmanager
def plain(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "missing"


def pragmas(path: Path) -> tuple[int, int]:
    with plain(path) as conn:
        return (
            int(conn.execute("PRAGMA user_version").fetchone()[0]),
            int(conn.execute("PRAGMA application_id").fetchone()[0]),
        )


def tables(path: Path) -> set[str]:
    with plain(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


# --- file states ------------------------------------------------------------------------------


def no_file(path: Path) -> None:
    pass


def empty_file(path: Path) -> None:
    path.write_bytes(b"")


def not_sqlite(path: Path) -> None:
    path.write_bytes(b"hello, this is a text file and not a database at all\n" * 10)


def foreign_database(path: Path) -> None:
    with plain(path) as conn:
        conn.execute("CREATE TABLE contacts (name TEXT)")


def ours_at(version: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        with plain(path) as conn:
            conn.execute("BEGIN")
            for step in CONVERSATIONS.migrations[:version]:
                for statement in step:
                    conn.execute(statement)
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version={version}")
            conn.execute("COMMIT")

    return make


def newer_than_ours(path: Path) -> None:
    ours_at(SCHEMA_VERSION)(path)
    with plain(path) as conn:
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")


def cut_short(path: Path) -> None:
    ours_at(SCHEMA_VERSION)(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def damaged_page(path: Path) -> None:
    """A real database whose last index leaf page (deep in a b-tree) is overwritten with
    noise: opening it reads nothing there; only ``PRAGMA quick_check`` finds it."""
    ours_at(SCHEMA_VERSION)(path)
    with plain(path) as conn:
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO sessions(id, created_at, updated_at) VALUES (?, 0, 0)",
            [(f"session-{i:05d}",) for i in range(2000)],
        )
        conn.execute("COMMIT")
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        page = int(
            conn.execute(
                "SELECT MAX(pageno) FROM dbstat WHERE name = 'sqlite_autoindex_sessions_1'"
            ).fetchone()[0]
        )
    with open(path, "r+b") as handle:
        handle.seek((page - 1) * page_size)
        handle.write(b"\xa5" * page_size)


OPEN_TABLE = [
    # (file state, error expected at open or None, the text the error has)
    pytest.param(no_file, None, "", id="no-file-created"),
    pytest.param(empty_file, None, "", id="empty-file-adopted"),
    pytest.param(ours_at(1), None, "", id="schema-1-migrated"),
    pytest.param(ours_at(4), None, "", id="schema-4-migrated"),
    pytest.param(ours_at(SCHEMA_VERSION), None, "", id="current"),
    pytest.param(not_sqlite, StorageCorruptError, "does not start like", id="not-sqlite"),
    pytest.param(foreign_database, StorageCorruptError, "another program", id="foreign"),
    pytest.param(newer_than_ours, StorageVersionError, "newer version", id="newer"),
    pytest.param(cut_short, StorageCorruptError, "cut short", id="cut-short"),
    pytest.param(damaged_page, StorageCorruptError, "check found", id="damaged-page"),
]


@pytest.mark.parametrize(("make", "error", "text"), OPEN_TABLE)
async def test_open_on_each_kind_of_file(
    tmp_path: Path, make: Callable[[Path], None], error: type[StorageError] | None, text: str
) -> None:
    path = tmp_path / "conversations.sqlite"
    make(path)
    before = digest(path)
    db = Database(path)
    try:
        if error is None:
            await db.open()
            assert db.is_open
        else:
            with pytest.raises(error, match=text) as caught:
                await db.open()
            assert str(path) in str(caught.value)
            assert not db.is_open
    finally:
        await db.close()
    if error is None:
        assert pragmas(path) == (SCHEMA_VERSION, APPLICATION_ID)
        assert {"sessions", "messages", "tool_states", "session_settings"} <= tables(path)
    else:
        assert digest(path) == before  # a refused file keeps every byte


async def test_open_refuses_a_missing_folder_saying_which(tmp_path: Path) -> None:
    path = tmp_path / "gone" / "conversations.sqlite"
    db = Database(path)
    with pytest.raises(StorageReadOnlyError, match="does not exist") as caught:
        await db.open()
    assert str(tmp_path / "gone") in str(caught.value)
    assert not path.parent.exists()


CHECK_TABLE = [
    # (file state, version check() returns, or the error it raises)
    pytest.param(empty_file, 0, id="empty"),
    pytest.param(ours_at(2), 2, id="ours-2"),
    pytest.param(ours_at(SCHEMA_VERSION), SCHEMA_VERSION, id="ours-current"),
    pytest.param(foreign_database, StorageCorruptError, id="foreign"),
    pytest.param(newer_than_ours, StorageVersionError, id="newer"),
    pytest.param(damaged_page, StorageCorruptError, id="damaged-page"),
]


@pytest.mark.parametrize(("make", "expected"), CHECK_TABLE)
async def test_check_only_reads(
    tmp_path: Path, make: Callable[[Path], None], expected: int | type[StorageError]
) -> None:
    path = tmp_path / "db.sqlite"
    make(path)
    before = digest(path)
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        if isinstance(expected, int):
            assert await check(conn, str(path)) == expected
        else:
            with pytest.raises(expected):
                await check(conn, str(path))
    assert digest(path) == before


@pytest.mark.parametrize(("make", "expected"), CHECK_TABLE[1:])
def test_check_read_only_leaves_the_wal_in_place(
    tmp_path: Path, make: Callable[[Path], None], expected: int | type[StorageError]
) -> None:
    """With a ``-wal`` beside the file, the check runs read-only: the -wal keeps every byte."""
    path = tmp_path / "db.sqlite"
    make(path)
    keep = sqlite3.connect(path, isolation_level=None)  # holds the -wal open while we check
    try:
        keep.execute("PRAGMA journal_mode=WAL")
        keep.execute("PRAGMA wal_autocheckpoint=0")
        keep.execute("CREATE TABLE IF NOT EXISTS extra (x)")
        wal = Path(f"{path}-wal")
        before = (digest(path), digest(wal))
        assert wal.stat().st_size > 0
        if isinstance(expected, int):
            check_read_only(str(path))
        else:
            with pytest.raises(expected):
                check_read_only(str(path))
        assert (digest(path), digest(wal)) == before
    finally:
        keep.close()


MIGRATE_TABLE = [
    # (version of the file before, tables after, rows in a)
    pytest.param(0, {"a", "b"}, 1, id="from-0"),
    pytest.param(1, {"a", "b"}, 1, id="from-1"),
    pytest.param(2, {"a"}, 0, id="already-current"),
]


@pytest.mark.parametrize(("version", "expected_tables", "rows"), MIGRATE_TABLE)
async def test_migrate_applies_the_missing_steps_in_one_transaction(
    tmp_path: Path, version: int, expected_tables: set[str], rows: int
) -> None:
    path = tmp_path / "db.sqlite"
    with plain(path) as conn:
        if version:
            conn.execute("CREATE TABLE a (x INTEGER)")
            conn.execute(f"PRAGMA user_version={version}")
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        await migrate(conn, str(path), TWO_STEPS)
        assert not conn.in_transaction
        assert await scalar(conn, "SELECT count(*) FROM a") == rows
    assert tables(path) == expected_tables
    assert pragmas(path) == (2, APPLICATION_ID)


async def test_migrate_rolls_back_everything_when_a_step_fails(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    broken = Schema(APPLICATION_ID, (("CREATE TABLE a (x)",), ("CREATE TABLE a (again)",)))
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        with pytest.raises(sqlite3.OperationalError, match="already exists"):
            await migrate(conn, str(path), broken)
        assert not conn.in_transaction
    assert tables(path) == set()
    assert pragmas(path) == (0, 0)


async def test_migrate_refuses_a_file_another_process_upgraded_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with plain(path) as conn:
        conn.execute("PRAGMA user_version=7")
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        with pytest.raises(StorageVersionError, match="newer Continuum"):
            await migrate(conn, str(path), TWO_STEPS)
        assert not conn.in_transaction
    assert pragmas(path) == (7, 0)


# --- read / write / transaction ---------------------------------------------------------------


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(tmp_path / "db.sqlite", schema=TWO_STEPS)
    yield database
    await database.close()


def count(path: str, table: str = "b") -> int:
    with plain(Path(path)) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


async def insert(conn: aiosqlite.Connection, value: int = 1) -> None:
    await conn.execute("INSERT INTO b(y) VALUES (?)", (value,))


async def test_write_commits_and_read_returns_what_the_function_returns(db: Database) -> None:
    await db.write(insert)
    assert count(db.path) == 1  # visible to another connection: committed

    async def total(conn: aiosqlite.Connection) -> int:
        return await scalar(conn, "SELECT count(*) FROM b")

    assert await db.read(total) == 1


class Boom(Exception):
    pass


async def fails_after_insert(conn: aiosqlite.Connection) -> None:
    await insert(conn)
    raise Boom


async def cancelled_after_insert(conn: aiosqlite.Connection) -> None:
    await insert(conn)
    raise asyncio.CancelledError


async def sqlite_error_after_insert(conn: aiosqlite.Connection) -> None:
    await insert(conn)
    await conn.execute("INSERT INTO nowhere VALUES (1)")


ROLLBACK_TABLE = [
    # (the transaction's function, the exception it ends with)
    pytest.param(fails_after_insert, Boom, id="exception"),
    pytest.param(cancelled_after_insert, asyncio.CancelledError, id="cancellation"),
    pytest.param(sqlite_error_after_insert, sqlite3.OperationalError, id="sqlite-bug"),
]


@pytest.mark.parametrize(("fn", "error"), ROLLBACK_TABLE)
async def test_transaction_rolls_back_on_any_exception(
    db: Database, fn: Callable[[aiosqlite.Connection], object], error: type[BaseException]
) -> None:
    await db.transaction(insert)
    with pytest.raises(error):
        await db.transaction(fn)  # type: ignore[arg-type]
    assert count(db.path) == 1  # only the first transaction's row

    async def in_transaction(conn: aiosqlite.Connection) -> bool:
        return conn.in_transaction

    assert not await db.read(in_transaction)
    await db.transaction(insert)  # the connection is usable again
    assert count(db.path) == 2


async def test_a_cancelled_caller_s_transaction_still_commits(db: Database) -> None:
    entered = asyncio.Event()
    release = asyncio.Event()

    async def slow(conn: aiosqlite.Connection) -> str:
        await insert(conn)
        entered.set()
        await release.wait()
        await insert(conn, 2)
        return "done"

    caller = asyncio.create_task(db.transaction(slow))
    await entered.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    release.set()
    # The next write queues behind the shielded one, so it sees both rows committed.
    await db.write(lambda conn: insert(conn, 3))
    assert count(db.path) == 3


@pytest.mark.parametrize("state", ["closed", "open", "locked"])
async def test_a_cancelled_caller_s_statement_still_commits(db: Database, state: str) -> None:
    """``write_statement`` in each of its ways: the file not open yet (through ``write``),
    open and free (queued before anything can suspend), the lock held by another write."""
    release = asyncio.Event()
    holder = None
    if state != "closed":
        await db.open()
    if state == "locked":

        async def hold(conn: aiosqlite.Connection) -> None:
            await release.wait()

        holder = asyncio.create_task(db.write(hold))
        await asyncio.sleep(0)
    started = asyncio.Event()

    async def caller_fn() -> list[object]:
        started.set()
        return await db.write_statement("INSERT INTO b(y) VALUES (?) RETURNING y", (7,))

    caller = asyncio.create_task(caller_fn())
    await started.wait()
    assert caller.cancel()  # still in flight
    with pytest.raises(asyncio.CancelledError):
        await caller
    release.set()
    if holder is not None:
        await holder
    # The next write queues behind it, so it sees the row committed.
    assert await db.write_statement("SELECT count(*) FROM b WHERE y = 7", ()) == [(1,)]
    assert count(db.path) == 1


async def test_a_statement_s_error_is_translated(db: Database) -> None:
    await db.open()
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        await db.write_statement("INSERT INTO nowhere VALUES (1)", ())
    assert await db.write_statement("INSERT INTO b(y) VALUES (1) RETURNING y", ()) == [(1,)]


async def test_a_read_never_sees_another_coroutine_s_open_transaction(db: Database) -> None:
    inside = asyncio.Event()
    release = asyncio.Event()

    async def insert_then_fail(conn: aiosqlite.Connection) -> None:
        await insert(conn)
        inside.set()
        await release.wait()
        raise Boom

    async def total(conn: aiosqlite.Connection) -> int:
        return await scalar(conn, "SELECT count(*) FROM b")

    writer = asyncio.create_task(db.transaction(insert_then_fail))
    await inside.wait()
    reader = asyncio.create_task(db.read(total))
    release.set()
    with pytest.raises(Boom):
        await writer
    assert await reader == 0  # it waited for the rollback; it never saw the uncommitted row


async def test_an_environment_error_is_translated_and_a_bug_is_not(db: Database) -> None:
    async def fill(conn: aiosqlite.Connection) -> None:
        pages = await scalar(conn, "PRAGMA page_count")
        await conn.execute(f"PRAGMA max_page_count = {pages}")

    await db.write(fill)

    async def big(conn: aiosqlite.Connection) -> None:
        await conn.execute("INSERT INTO b(y) VALUES (?)", ("x" * 1_000_000,))

    with pytest.raises(StorageFullError, match="Free some disk space") as caught:
        await db.transaction(big)
    assert db.path in str(caught.value)
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        await db.read(lambda conn: conn.execute("SELECT * FROM nowhere"))
    assert db.is_open  # neither closed the database


async def test_damage_found_while_in_use_closes_for_good_and_reports_once(db: Database) -> None:
    await db.write(insert)
    handled: list[str] = []

    def on_damaged() -> str:
        handled.append("kept aside")
        return "It was kept aside."

    db.on_damaged = on_damaged

    async def malformed(conn: aiosqlite.Connection) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    with pytest.raises(StorageCorruptError, match="damaged while in use") as first:
        await db.write(malformed)
    assert "It was kept aside." in str(first.value)
    assert not db.is_open
    with pytest.raises(StorageCorruptError) as later:
        await db.read(lambda conn: scalar(conn, "SELECT 1"))
    assert later.value is first.value
    assert handled == ["kept aside"]
    assert count(db.path) == 1


async def test_a_closed_database_says_so_and_is_not_reopened(tmp_path: Path) -> None:
    db = Database(tmp_path / "db.sqlite", schema=TWO_STEPS)
    await db.write(insert)
    await db.close()
    with pytest.raises(StorageError, match="already closed"):
        await db.read(lambda conn: scalar(conn, "SELECT 1"))
    assert not db.is_open


async def test_an_in_memory_database_needs_no_file(tmp_path: Path) -> None:
    db = Database(":memory:", schema=TWO_STEPS)
    try:
        await db.transaction(insert)
        assert await db.read(lambda conn: scalar(conn, "SELECT count(*) FROM b")) == 1
    finally:
        await db.close()
    assert files_in(tmp_path) == []


def files_in(folder: Path) -> list[Path]:
    return list(folder.iterdir())


def test_malformed_json_from_a_json_function_is_a_bug_not_damage() -> None:
    """SQLite's JSON functions say "malformed JSON": that must never make a healthy database
    count as damaged (damage closes it for good and keeps it aside)."""
    import sqlite3

    from app.errors import StorageCorruptError
    from app.storage.translate import translate_sqlite_error

    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("SELECT json_extract('not json', '$.a')")
    assert "malformed" in str(caught.value)
    assert translate_sqlite_error(caught.value, "x.sqlite") is None
    damaged = sqlite3.DatabaseError("database disk image is malformed")
    assert isinstance(translate_sqlite_error(damaged, "x.sqlite"), StorageCorruptError)
