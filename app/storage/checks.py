"""Whether a file is one we may open, found out without writing a byte to it.

Before SQLite opens the file: :func:`damaged_file` (a header that is not SQLite's, a file cut
short — unless a hot ``-journal`` or a ``-wal`` beside it lets SQLite recover it),
:func:`check_writable` (a read-only file is refused at open, not at the first send),
:func:`has_wal`, :func:`has_hot_journal`. Once it is open: :func:`check` reads the mark
(``PRAGMA application_id``) and version (``PRAGMA user_version``) and runs
``PRAGMA quick_check``; :func:`check_read_only` does the same on a read-only connection, which
never checkpoints a ``-wal`` into the file.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import aiosqlite

from ..errors import StorageCorruptError, StorageReadOnlyError, StorageVersionError
from .schema import CONVERSATIONS, Schema
from .translate import translated

__all__ = [
    "check",
    "check_read_only",
    "check_writable",
    "connect_read_only",
    "damaged_file",
    "has_hot_journal",
    "has_wal",
    "judged_header",
    "scalar",
]

_SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_JOURNAL_MAGIC: Final = bytes.fromhex("d9d505f920a163d7")
_WAL_MAGICS: Final = (bytes.fromhex("377f0682"), bytes.fromhex("377f0683"))


def damaged_file(path: Path) -> str | None:
    """Why the file at ``path`` is visibly not a usable database, read before SQLite opens it.

    SQLite itself would report such a file as corrupt too, but only after opening it — and on
    closing, it checkpoints and deletes a ``-wal`` file beside it, which may hold the latest
    committed messages. Files that fail these two cheap checks are never handed to SQLite:
    a header that is not SQLite's, or a file shorter than the size its header records.

    Only what SQLite cannot recover is judged here (:func:`judged_header`, a pure table): with a
    hot ``-journal`` beside the file (a power cut while the database was first created) SQLite
    rolls the file back before reading it, and with a ``-wal`` beside it (a power cut during a
    checkpoint) the newest page 1 is read from the ``-wal``, so a torn or garbage first page
    in the file is no damage then. The checks after opening still judge the result.
    """
    try:
        size = path.stat().st_size
        if size == 0:
            return None  # a new, empty database
        with open(path, "rb") as handle:
            header = handle.read(100)
    except FileNotFoundError:
        return None
    except OSError:
        return None  # let SQLite report what it cannot open, in its own words
    name = str(path)
    return judged_header(header, size, hot_journal=has_hot_journal(name), wal=_wal_has_header(name))


def judged_header(header: bytes, size: int, *, hot_journal: bool, wal: bool) -> str | None:
    """Why a file of ``size`` bytes starting with ``header`` (its first 100 bytes) is damaged
    beyond what SQLite recovers, given what lies beside it; ``None`` when it is not."""
    if hot_journal:
        return None  # SQLite rolls the file back to the journal's copy first
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        if wal:
            return None  # page 1 may be in the -wal: the read-only check reads it from there
        return "it does not start like an SQLite database"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    size_is_valid = header[24:28] == header[92:96]  # the header's own validity marker
    if size_is_valid and size < pages * page_size and not wal:
        return f"it is cut short: {size} of {pages * page_size} bytes"
    return None


def has_hot_journal(path: str) -> bool:
    """Whether a rollback ``-journal`` beside ``path`` may be hot: it starts with SQLite's
    journal header, so SQLite rolls the file back to the journal's copy before reading it. (A
    journal zeroed at commit, or one that is not SQLite's, has nothing to roll back.)"""
    return _starts_with(f"{path}-journal", (_JOURNAL_MAGIC,))


def _wal_has_header(path: str) -> bool:
    """Whether a ``-wal`` beside ``path`` starts with SQLite's WAL header (it may hold page 1)."""
    return _starts_with(f"{path}-wal", _WAL_MAGICS)


def _starts_with(path: str, magics: tuple[bytes, ...]) -> bool:
    try:
        with open(path, "rb") as handle:
            start = handle.read(8)
    except OSError:
        return False
    return start.startswith(magics)


def check_writable(path: str) -> None:
    """A read-only database file (in a writable folder) is refused now, not at a send."""
    for name in (path, f"{path}-wal", f"{path}-shm"):
        try:
            fd = os.open(name, os.O_RDWR)
        except FileNotFoundError:
            continue
        except OSError as err:
            if err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                continue  # let SQLite report it in its own words
            raise StorageReadOnlyError(
                f"The conversation database {name} is read-only, so Continuum could not "
                "save anything to it. Make it writable again (check its permissions and "
                "owner, for example `chmod u+w` on it) or choose another data folder, then "
                "start Continuum again. Nothing was changed."
            ) from err
        os.close(fd)


def has_wal(path: str) -> bool:
    """Whether a non-empty ``-wal`` lies beside ``path`` (it may hold committed changes)."""
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except OSError:
        return False


def connect_read_only(path: str) -> sqlite3.Connection:
    """A read-only connection: it reads the ``-wal`` too but never checkpoints it."""
    return sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True)


def _refuse_unless_ours(path: str, schema: Schema, version: int, app_id: int, tables: int) -> None:
    # Ours carries our application_id (set by the first migration, in the same transaction
    # as user_version); the only unmarked file we adopt is a brand-new, empty one. Another
    # program's database may use user_version too, so that alone proves nothing.
    if app_id != schema.application_id and (app_id != 0 or version != 0 or tables):
        raise StorageCorruptError(
            f"{path} is an SQLite database of another program, not Continuum's. "
            "It was left untouched; choose another file or data folder."
        )
    if version > schema.version:
        raise StorageVersionError(
            f"The conversation database {path} was written by a newer version of "
            f"Continuum (schema {version}; this version knows up to {schema.version}). "
            "It was left untouched: update Continuum to open it."
        )


def _refuse_if_damaged(path: str, quick_check: list[str]) -> None:
    """``PRAGMA quick_check`` found damage inside the file (pages, b-trees, records)."""
    if quick_check != ["ok"]:
        first = quick_check[0] if quick_check else "no answer"
        raise StorageCorruptError(
            f"The conversation database {path} is damaged (SQLite's check found: "
            f"{first[:200]}). It was left untouched: move it aside (or restore a backup) "
            "and start again."
        )


async def check(
    conn: aiosqlite.Connection,
    path: str,
    schema: Schema = CONVERSATIONS,
    *,
    quick_check: bool = True,
) -> int:
    """Refuse a file that is not ours, newer than ``schema`` or damaged; its schema version.

    Only reads: nothing is written to a file that is refused. ``quick_check=False`` skips
    SQLite's check of the pages (for an in-memory database, which cannot be damaged on disk).
    """
    try:
        version = await scalar(conn, "PRAGMA user_version")
        app_id = await scalar(conn, "PRAGMA application_id")
        tables = await scalar(conn, "SELECT count(*) FROM sqlite_master")
    except sqlite3.Error as err:
        raise translated(err, path) from err
    _refuse_unless_ours(path, schema, version, app_id, tables)
    if tables and quick_check:
        try:
            async with conn.execute("PRAGMA quick_check") as cursor:
                found = [str(row[0]) for row in await cursor.fetchall()]
        except sqlite3.Error as err:
            raise translated(err, path) from err
        _refuse_if_damaged(path, found)
    return version


def check_read_only(path: str, schema: Schema = CONVERSATIONS) -> None:
    """:func:`check` on a read-only connection (blocking: run it in a thread).

    A read-only connection never checkpoints: the file and its ``-wal`` keep every byte
    (only the ``-shm`` index, rebuilt from the ``-wal``, may change).
    """
    try:
        conn = connect_read_only(path)
    except sqlite3.Error as err:
        raise translated(err, path) from err
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        tables = int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])
        _refuse_unless_ours(path, schema, version, app_id, tables)
        _refuse_if_damaged(path, [str(row[0]) for row in conn.execute("PRAGMA quick_check")])
    except sqlite3.Error as err:
        raise translated(err, path) from err
    finally:
        conn.close()


async def scalar(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> int:
    """The integer in the first column of the first row of ``sql``."""
    async with conn.execute(sql, tuple(params)) as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])
