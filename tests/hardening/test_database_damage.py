"""Damage inside the database (issue 11, item 12): a corrupt page, a truncated file with a
``-wal`` beside it, a newer version's ``-wal``, and corruption found while running. Each is
noticed, refused or closed without writing a byte, kept aside, and the person is told. The
damaged files are built for real: a real database with a page overwritten, a real writer
process killed with SIGKILL so its ``-wal`` stays beside the file."""

from __future__ import annotations

import contextlib
import hashlib
import random
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app import UserMessage
from app.errors import StorageCorruptError, StorageVersionError
from app.services import DATABASE_FILE, AppServices

MESSAGES = 600  # ~500 bytes each: a few hundred pages, none of them overflow pages


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files(data: Path) -> dict[str, str]:
    """The data folder's files and their hashes; the ``-shm`` index (rebuilt from the
    ``-wal`` by SQLite), an empty ``-wal`` (no data) and the disk reserve are not part of what
    must not change."""
    return {
        p.name: digest(p)
        for p in sorted(data.iterdir())
        if p.is_file()
        and not p.name.endswith("-shm")
        and p.name != "continuum.reserve"
        and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


async def build(data: Path) -> None:
    """A real data folder holding one long conversation, closed cleanly."""
    services = AppServices(data)
    await services.open()
    await services.storage.storage.append_many(
        "old", "r", [UserMessage(f"message {i} " + "lorem ipsum " * 40) for i in range(MESSAGES)]
    )
    await services.close()


def message_leaf_pages(db: Path) -> list[int]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return [
            row[0]
            for row in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' "
                "ORDER BY pageno"
            )
        ]


def overwrite_page(db: Path, pageno: int, page_size: int = 4096) -> None:
    junk = random.Random(pageno).randbytes(page_size)
    with open(db, "r+b") as handle:
        handle.seek((pageno - 1) * page_size)
        handle.write(junk)
        handle.flush()


def killed_writer(db: Path, *statements: str) -> None:
    """Run ``statements`` in a real process that is then killed: its -wal stays unmerged."""
    code = textwrap.dedent("""
        import os, signal, sqlite3, sys
        conn = sqlite3.connect(sys.argv[1], isolation_level=None)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        for statement in sys.argv[2:]:
            conn.execute(statement)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code, str(db), *statements], capture_output=True, timeout=30
    )
    assert proc.returncode == -9, proc.stderr
    assert Path(f"{db}-wal").stat().st_size > 0


NEW_ROWS = (
    "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
    "SELECT 'new', value, 'r', 'user', "
    '\'{"v":1,"type":"user","content":"late \' || value || \'"}\', 1 '
    "FROM generate_series(1, 50)"
)


def new_rows() -> str:
    # generate_series is not in every build: a recursive CTE does the same.
    return (
        "WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n "
        "WHERE value < 50) " + NEW_ROWS.replace("FROM generate_series(1, 50)", "FROM n")
    )


async def test_a_corrupt_page_in_the_middle_is_noticed_at_open(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await build(data)
    db = data / DATABASE_FILE
    pages = message_leaf_pages(db)
    overwrite_page(db, pages[len(pages) // 2])
    before = files(data)

    services = AppServices(data)
    with pytest.raises(StorageCorruptError, match="damaged") as caught:
        await services.open()
    assert "Traceback" not in str(caught.value)
    await services.close()
    assert files(data) == before  # not a byte written

    services = AppServices(data)
    kept = await services.open_recovering()
    try:
        assert kept is not None and digest(kept) == before[DATABASE_FILE]
        assert await services.list_sessions() == []  # a new, empty database
    finally:
        await services.close()


async def test_a_truncated_file_with_a_wal_beside_it_is_refused_and_its_wal_never_merged(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    await build(data)
    db = data / DATABASE_FILE
    killed_writer(db, new_rows())
    with open(db, "r+b") as handle:
        handle.truncate(db.stat().st_size // 2)
    before = files(data)
    assert set(before) == {DATABASE_FILE, f"{DATABASE_FILE}-wal"}

    services = AppServices(data)
    with pytest.raises(StorageCorruptError, match="damaged"):
        await services.open()
    await services.close()
    assert files(data) == before  # the -wal was not checkpointed into the file, nor deleted

    services = AppServices(data)
    kept = await services.open_recovering()
    try:
        assert kept is not None and digest(kept) == before[DATABASE_FILE]
        assert digest(Path(f"{kept}-wal")) == before[f"{DATABASE_FILE}-wal"]  # kept together
    finally:
        await services.close()


async def test_a_newer_versions_wal_is_never_checkpointed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await build(data)
    db = data / DATABASE_FILE
    killed_writer(db, new_rows(), "PRAGMA user_version = 99")
    before = files(data)

    services = AppServices(data)
    with pytest.raises(StorageVersionError, match="newer version"):
        await services.open()
    await services.close()
    assert files(data) == before
    # What the newer version committed is still there for it.
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (99,)
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (MESSAGES + 50,)


async def test_damage_found_while_running_stops_writing_keeps_the_file_and_says_so(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    await build(data)
    db = data / DATABASE_FILE
    services = AppServices(data)
    notices: list[str] = []
    services.notify = notices.append
    await services.open()
    try:
        fresh = await services.new_session("written before the damage")
        pages = message_leaf_pages(db)
        overwrite_page(db, pages[len(pages) // 3])
        # Another process commits: this process's page cache is dropped, as in real use.
        with contextlib.closing(sqlite3.connect(db)) as other:
            other.execute("UPDATE sessions SET title = 'touched' WHERE id = ?", (fresh.id,))
            other.commit()
        before = files(data)

        with pytest.raises(StorageCorruptError) as caught:
            await services.history("old")
        message = str(caught.value)
        assert "damaged" in message and "stopped" in message, message
        assert "continuum.damaged-" in message and "untouched" not in message
        assert notices and "continuum.damaged-" in notices[-1]
        # Nothing more is written: every later write is refused with the same explanation.
        with pytest.raises(StorageCorruptError, match="damaged"):
            await services.new_session("after")
        [kept] = data.glob("continuum.damaged-*.sqlite")
        assert digest(kept) == before[DATABASE_FILE]  # not checkpointed into, byte for byte
        assert digest(Path(f"{kept}-wal")) == before[f"{DATABASE_FILE}-wal"]
        assert not db.exists()
    finally:
        await services.close()
    assert digest(kept) == before[DATABASE_FILE]  # closing wrote nothing either
    # The next start is a clean one on a new database.
    services = AppServices(data)
    try:
        assert await services.open_recovering() is None
        assert await services.list_sessions() == []
    finally:
        await services.close()
