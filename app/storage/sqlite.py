"""The durable session store: one SQLite file through aiosqlite.

Durability: the database runs in WAL mode and every message is its own committed transaction,
written when the message completes, so a ``kill -9`` loses nothing that was complete. With the
default ``synchronous="full"`` each commit is also fsynced, which makes it power-loss safe; pass
``synchronous="normal"`` to trade the last few commits on power loss for speed (a killed process
still loses nothing).

Safety of the user's file:

* The schema version lives in ``PRAGMA user_version`` and the file is marked with
  ``PRAGMA application_id``. Both are read *before anything is written*, so a database from a
  newer Continuum (:class:`~app.errors.StorageVersionError`) or a file that is not ours or is
  damaged (:class:`~app.errors.StorageCorruptError`) is refused and left byte-for-byte untouched.
  Damage inside the file is looked for at open with ``PRAGMA quick_check`` (about 20 ms warm,
  170 ms cold for 10,000 messages). With a ``-wal`` beside the file these checks run on a
  read-only connection, which never checkpoints: a refused file and its ``-wal`` keep every byte.
* ``SQLITE_CORRUPT`` at any later time closes the file for good (without merging its ``-wal``:
  :func:`_close_without_checkpoint`), every later call raises the same error, and
  ``on_damaged`` lets the app keep the file aside. A read-only database file is refused at open.
* SQLite's environment errors (disk full, read-only, busy, I/O, corrupt) become
  :class:`~app.errors.StorageError` subclasses with a message a person can act on; any other
  SQLite error is a bug and propagates unchanged.
* Every write runs shielded from cancellation: a Stop pressed during a commit lets the commit
  finish, so a transaction is never left half-open on the shared connection.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import aiosqlite

from ..errors import (
    StorageBusyError,
    StorageCorruptError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
    StorageVersionError,
)
from ..messages import (
    Message,
    MessageFormatError,
    message_from_json,
    message_to_json,
)
from .base import SessionInfo, StoredMessage, increasing_time, new_session_id

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "SQLiteSessionExtension",
    "SQLiteSessionStore",
    "SearchHit",
    "fts_query",
    "storable_text",
    "translate_sqlite_error",
]

APPLICATION_ID: Final = 0x436F6E74  # "Cont"

# Each entry upgrades the schema from version (index) to version (index + 1). Append only:
# never edit a released step, add a new one.
MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX sessions_by_update ON sessions(updated_at)",
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (session_id, seq)
        )""",
        # A message for a session that does not exist yet creates it (sessions are created on
        # first use); the counters stay right without a second statement per append.
        """CREATE TRIGGER messages_create_session BEFORE INSERT ON messages BEGIN
            INSERT OR IGNORE INTO sessions(id, title, created_at, updated_at)
            VALUES (NEW.session_id, NULL, NEW.created_at, NEW.created_at);
        END""",
        """CREATE TRIGGER messages_count AFTER INSERT ON messages BEGIN
            UPDATE sessions SET updated_at = NEW.created_at, message_count = message_count + 1
            WHERE id = NEW.session_id;
        END""",
    ),
    (
        # The app's records beside the history (see app/storage/journal.py).
        """CREATE TABLE running_requests (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            request_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started_at REAL NOT NULL
        )""",
        """CREATE TABLE drafts (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            text TEXT NOT NULL,
            updated_at REAL NOT NULL
        )""",
        """CREATE TABLE stop_records (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            message TEXT NOT NULL,
            created_at REAL NOT NULL
        )""",
        # Full-text search over every message's text; rowid = messages.id.
        """CREATE VIRTUAL TABLE messages_fts USING fts5(
            text, tokenize = 'unicode61 remove_diacritics 2'
        )""",
        """INSERT INTO messages_fts(rowid, text)
            SELECT id, COALESCE(json_extract(data, '$.content'), '') FROM messages""",
        """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, text)
            VALUES (NEW.id, COALESCE(json_extract(NEW.data, '$.content'), ''));
        END""",
        """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            DELETE FROM messages_fts WHERE rowid = OLD.id;
        END""",
    ),
    (
        # Schema 3: where each tool call that needs approval got to (``awaiting_approval``,
        # ``started``), so a pending approval is told apart from a tool that may have run.
        """CREATE TABLE tool_states (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            call_id TEXT NOT NULL,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (session_id, call_id)
        )""",
    ),
    (
        # Schema 4: per-conversation choices. ``workspace``: the folder its file tools work in
        # ('' = none chosen on purpose; no row = the settings' default).
        """CREATE TABLE session_settings (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            workspace TEXT
        )""",
    ),
    (
        # Schema 5: tool states keyed by the message that asked (``asked_seq``, the assistant
        # message's seq) as well as the call id: providers reuse ids such as "call_1" in later
        # turns. An old row moves to the newest assistant message that has its call; when the
        # id is in more than one, "awaiting_approval" cannot be placed for sure and becomes
        # "started" (may have run: never run again by itself); a row whose call is in no
        # message is dropped.
        """CREATE TABLE tool_states_by_message (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            asked_seq INTEGER NOT NULL,
            call_id TEXT NOT NULL,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (session_id, asked_seq, call_id)
        )""",
        """INSERT INTO tool_states_by_message(session_id, asked_seq, call_id, state, updated_at)
            SELECT session_id, asked_seq, call_id,
                   CASE WHEN askers > 1 AND state = 'awaiting_approval' THEN 'started'
                        ELSE state END,
                   updated_at
            FROM (
                SELECT t.session_id, t.call_id, t.state, t.updated_at,
                       MAX(m.seq) AS asked_seq, COUNT(DISTINCT m.seq) AS askers
                FROM tool_states t
                JOIN messages m ON m.session_id = t.session_id AND m.kind = 'assistant'
                JOIN json_each(CASE WHEN json_valid(m.data) THEN m.data ELSE '{}' END,
                               '$.tool_calls') j
                  ON json_extract(j.value, '$.id') = t.call_id
                GROUP BY t.session_id, t.call_id
            )""",
        "DROP TABLE tool_states",
        "ALTER TABLE tool_states_by_message RENAME TO tool_states",
    ),
)
SCHEMA_VERSION: Final = len(MIGRATIONS)

_INSERT: Final = """
    INSERT INTO messages(session_id, seq, request_id, kind, data, created_at)
    VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?), ?, ?, ?, ?)
    RETURNING seq
"""

# The newest rows of a session through the (session_id, seq) index, read backwards: the cost of
# a tail does not grow with the length of the session (tests check the query plan of this SQL).
_TAIL: Final = "SELECT seq, data FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?"

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A message matching a search: where it is and a snippet with the match in [brackets]."""

    session_id: str
    seq: int
    snippet: str


def storable_text(text: str) -> str:
    """``text`` as SQLite can bind it: lone surrogates (a broken paste) become U+FFFD.

    Python strings may hold lone surrogates, which have no UTF-8 form, so binding one raises
    ``UnicodeEncodeError``. Messages keep them exactly (their JSON escapes them); the short
    texts stored as plain columns — titles, drafts, stop messages, search words — are repaired
    instead of making the operation fail.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def fts_query(text: str) -> str | None:
    """The person's words as an FTS5 query: every word must match, the last as a prefix."""
    text = storable_text(text)
    words = [w for w in text.replace("\x00", " ").split() if w.strip('"')]
    if not words:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def translate_sqlite_error(err: BaseException, path: str) -> StorageError | None:
    """The person-facing error for an SQLite environment failure, or ``None`` for a bug."""
    if not isinstance(err, sqlite3.Error):
        return None
    name = getattr(err, "sqlite_errorname", "") or ""
    text = str(err).lower()
    where = f"the conversation database {path}"
    if name.startswith("SQLITE_FULL") or "database or disk is full" in text:
        return StorageFullError(
            f"The disk holding {where} is full, so the last change was not saved. "
            "Free some disk space and try again; everything saved before is intact."
        )
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return StorageReadOnlyError(
            f"Cannot write to {where}: the file or its folder is read-only. "
            "Check its permissions (or choose another data folder) and try again."
        )
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text or (
        "not a database" in text
    ):
        return StorageCorruptError(
            f"{where[0].upper()}{where[1:]} is damaged or is not a Continuum database. "
            "It was left untouched: move it aside (or restore a backup) and start again."
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in text:
        return StorageBusyError(
            f"{where[0].upper()}{where[1:]} stayed locked by another program. "
            "Close other copies of Continuum using this data folder and try again."
        )
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        return StorageReadOnlyError(
            f"Cannot open {where}. Check that its folder exists and can be written."
        )
    if name.startswith("SQLITE_IOERR") or "disk i/o error" in text:
        return StorageError(
            f"A disk error occurred while using {where}, so the last change may not be saved. "
            "Check the disk, then try again; everything saved before is intact."
        )
    return None


class SQLiteSessionStore:
    """Sessions and their messages in one SQLite file (see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["full", "normal"] = "full",
        busy_timeout: float = 5.0,
    ) -> None:
        self._path = os.fspath(path)
        self._memory = self._path == ":memory:" or self._path.startswith("file::memory:")
        self._synchronous = synchronous
        self._busy_timeout_ms = int(busy_timeout * 1000)
        self._conn: aiosqlite.Connection | None = None
        self._open_lock = asyncio.Lock()
        self._write_lock = asyncio.Lock()
        self._closed = False
        #: Set when SQLite reported the file damaged while in use: nothing is written any more.
        self._damaged: StorageCorruptError | None = None
        #: Called once when damage is found while in use, after the connection was closed
        #: without merging the ``-wal``; returns a sentence saying what was done with the file.
        self.on_damaged: Callable[[], str] | None = None

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self._path!r})"

    @property
    def path(self) -> str:
        return self._path

    @property
    def is_open(self) -> bool:
        """Whether a connection to the file is open now."""
        return self._conn is not None

    @property
    def lock_key(self) -> str:
        if self._memory:
            return f"sqlite-memory:{id(self)}"
        return f"sqlite:{os.path.realpath(self._path)}"

    # --- opening ------------------------------------------------------------------------------

    async def open(self) -> None:
        """Open (and if needed create or migrate) the database. Called on first use."""
        await self._connection()

    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is not None:
            return self._conn
        async with self._open_lock:
            self._check_not_closed()
            if self._conn is None:
                conn = await self._open()
                try:  # close() may have run while we were opening: do not leak the connection
                    self._check_not_closed()
                except StorageError:
                    await conn.close()
                    raise
                self._conn = conn
            return self._conn

    def _check_not_closed(self) -> None:
        if self._damaged is not None:
            raise self._damaged
        if self._closed:
            raise StorageError(f"The conversation database {self._path} was already closed.")

    async def _open(self) -> aiosqlite.Connection:
        if not self._memory:
            parent = Path(self._path).parent
            if not parent.is_dir():
                raise StorageReadOnlyError(
                    f"Cannot open the conversation database {self._path}: the folder {parent} "
                    "does not exist. Create it or choose another data folder."
                )
            problem = _damaged_file(Path(self._path))
            if problem is not None:
                raise StorageCorruptError(
                    f"The conversation database {self._path} is damaged ({problem}). "
                    "It was left untouched: move it aside (or restore a backup) and start again."
                )
            self._check_writable()
            if _has_wal(self._path):
                # A -wal holds committed changes. Closing a read-write connection merges it
                # into the file (a checkpoint), so a file we refuse is checked read-only first.
                await asyncio.to_thread(self._check_read_only)
        connector = aiosqlite.connect(self._path, isolation_level=None)
        # aiosqlite's worker thread is not a daemon: a process that ends without closing the
        # store (Qt calls exit() when the display connection breaks) hangs at interpreter exit
        # waiting for it. Everything committed is already durable, so let the exit proceed.
        worker = getattr(connector, "_thread", None)
        if worker is not None and not worker.is_alive():
            worker.daemon = True
        try:
            conn = await connector
        except sqlite3.Error as err:
            raise self._translate(err) from err
        try:
            await self._check_and_prepare(conn)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _check_and_prepare(self, conn: aiosqlite.Connection) -> None:
        try:
            # Read-only checks first: nothing may be written to a file we will refuse.
            version = await _scalar(conn, "PRAGMA user_version")
            app_id = await _scalar(conn, "PRAGMA application_id")
            tables = await _scalar(conn, "SELECT count(*) FROM sqlite_master")
        except sqlite3.Error as err:
            raise self._translate(err) from err
        self._refuse_unless_ours(version, app_id, tables)
        if tables and not self._memory:
            try:
                async with conn.execute("PRAGMA quick_check") as cursor:
                    check = [str(row[0]) for row in await cursor.fetchall()]
            except sqlite3.Error as err:
                raise self._translate(err) from err
            self._refuse_if_damaged(check)
        try:
            if not self._memory:
                await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute(f"PRAGMA synchronous={self._synchronous.upper()}")
            await conn.execute("PRAGMA foreign_keys=ON")
            await conn.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")
            if version < SCHEMA_VERSION:
                await self._migrate(conn)
        except sqlite3.Error as err:
            raise self._translate(err) from err

    async def _migrate(self, conn: aiosqlite.Connection) -> None:
        await conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated between our check and the write lock.
            version = await _scalar(conn, "PRAGMA user_version")
            if version > SCHEMA_VERSION:
                raise StorageVersionError(
                    f"The conversation database {self._path} was upgraded by a newer Continuum "
                    "while opening it; update Continuum to open it."
                )
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    await conn.execute(statement)
            await conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            await conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            await conn.execute("COMMIT")
        except BaseException:
            await _rollback(conn)
            raise

    def _refuse_unless_ours(self, version: int, app_id: int, tables: int) -> None:
        # Ours carries our application_id (set by the first migration, in the same transaction
        # as user_version); the only unmarked file we adopt is a brand-new, empty one. Another
        # program's database may use user_version too, so that alone proves nothing.
        if app_id != APPLICATION_ID and (app_id != 0 or version != 0 or tables):
            raise StorageCorruptError(
                f"{self._path} is an SQLite database of another program, not Continuum's. "
                "It was left untouched; choose another file or data folder."
            )
        if version > SCHEMA_VERSION:
            raise StorageVersionError(
                f"The conversation database {self._path} was written by a newer version of "
                f"Continuum (schema {version}; this version knows up to {SCHEMA_VERSION}). "
                "It was left untouched: update Continuum to open it."
            )

    def _refuse_if_damaged(self, quick_check: list[str]) -> None:
        """``PRAGMA quick_check`` found damage inside the file (pages, b-trees, records)."""
        if quick_check != ["ok"]:
            first = quick_check[0] if quick_check else "no answer"
            raise StorageCorruptError(
                f"The conversation database {self._path} is damaged (SQLite's check found: "
                f"{first[:200]}). It was left untouched: move it aside (or restore a backup) "
                "and start again."
            )

    def _check_read_only(self) -> None:
        """The checks of :meth:`_check_and_prepare`, on a read-only connection (in a thread).

        A read-only connection never checkpoints: the file and its ``-wal`` keep every byte
        (only the ``-shm`` index, rebuilt from the ``-wal``, may change).
        """
        try:
            conn = _connect_read_only(self._path)
        except sqlite3.Error as err:
            raise self._translate(err) from err
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
            tables = int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])
            self._refuse_unless_ours(version, app_id, tables)
            check = [str(row[0]) for row in conn.execute("PRAGMA quick_check")]
            self._refuse_if_damaged(check)
        except sqlite3.Error as err:
            raise self._translate(err) from err
        finally:
            conn.close()

    def _check_writable(self) -> None:
        """A read-only database file (in a writable folder) is refused now, not at a send."""
        for path in (self._path, f"{self._path}-wal", f"{self._path}-shm"):
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                continue
            except OSError as err:
                if err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                    continue  # let SQLite report it in its own words
                raise StorageReadOnlyError(
                    f"The conversation database {path} is read-only, so Continuum could not "
                    "save anything to it. Make it writable again (check its permissions and "
                    "owner, for example `chmod u+w` on it) or choose another data folder, then "
                    "start Continuum again. Nothing was changed."
                ) from err
            os.close(fd)

    def _translate(self, err: sqlite3.Error) -> Exception:
        return translate_sqlite_error(err, self._path) or err

    async def _failed(self, conn: aiosqlite.Connection, err: sqlite3.Error) -> Exception:
        """The error to raise for ``err`` while in use; damage closes the file for good."""
        error = self._translate(err)
        if not isinstance(error, StorageCorruptError) or self._memory:
            return error
        if self._damaged is None:
            self._damaged = StorageCorruptError(
                f"The conversation database {self._path} was found damaged while in use "
                f"(SQLite: {err}), so Continuum stopped writing to it."
            )
            if self._conn is conn:
                self._conn = None
            await _close_without_checkpoint(conn, self._path)
            done = "Restart Continuum to keep it aside and start a new, empty database."
            if self.on_damaged is not None:
                try:
                    done = self.on_damaged()
                except Exception:  # the damage is still reported; how it was handled is logged
                    log.exception("handling a damaged database failed")
            self._damaged = StorageCorruptError(f"{self._damaged} {done}")
        return self._damaged

    # --- running statements -------------------------------------------------------------------

    async def _read(self, fn: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        conn = await self._connection()
        # The connection is shared: without the lock a read could land inside another
        # coroutine's BEGIN ... COMMIT and see rows that are then rolled back.
        async with self._write_lock:
            try:
                return await fn(conn)
            except sqlite3.Error as err:
                raise await self._failed(conn, err) from err

    async def _write(self, fn: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """Run ``fn`` as one write, to completion even if the caller is cancelled."""

        async def run() -> T:
            conn = await self._connection()
            async with self._write_lock:
                try:
                    return await fn(conn)
                except sqlite3.Error as err:
                    raise await self._failed(conn, err) from err

        return await asyncio.shield(asyncio.ensure_future(run()))

    # --- the store API ------------------------------------------------------------------------

    async def create_session(
        self, session_id: str | None = None, title: str | None = None
    ) -> SessionInfo:
        session_id = session_id or new_session_id()
        title = storable_text(title) if title is not None else None
        now = increasing_time()

        async def op(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "INSERT OR IGNORE INTO sessions(id, title, created_at, updated_at) "
                "VALUES (?, ?, ?, ?)",
                (session_id, title, now, now),
            )

        await self._write(op)
        info = await self.get_session(session_id)
        assert info is not None
        return info

    async def get_session(self, session_id: str) -> SessionInfo | None:
        async def op(conn: aiosqlite.Connection) -> SessionInfo | None:
            async with conn.execute(
                "SELECT id, title, created_at, updated_at, message_count FROM sessions "
                "WHERE id = ?",
                (session_id,),
            ) as cursor:
                row = await cursor.fetchone()
            return None if row is None else SessionInfo(*row)

        return await self._read(op)

    async def append(self, session_id: str, request_id: str, message: Message) -> int:
        """Commit one message at the end of the session; returns its sequence number."""
        data = message_to_json(message)
        kind = _kind(message)
        now = increasing_time()
        index_text = _repaired_index_text(message)
        params = (session_id, session_id, request_id, kind, data, now)

        async def op(conn: aiosqlite.Connection) -> int:
            # One thread hop per append (execute and fetch together): it is the hot path.
            rows = await conn.execute_fetchall(_INSERT, params)
            row = next(iter(rows), None)
            assert row is not None
            return int(row[0])

        async def op_repairing_index(conn: aiosqlite.Connection) -> int:
            await conn.execute("BEGIN IMMEDIATE")
            try:
                rows = list(await conn.execute_fetchall(_INSERT, params))
                seq = int(rows[0][0])
                await _set_index_text(conn, session_id, seq, index_text or "")
                await conn.execute("COMMIT")
            except BaseException:
                await _rollback(conn)
                raise
            return seq

        return await self._write(op if index_text is None else op_repairing_index)

    async def append_many(
        self, session_id: str, request_id: str, messages: Sequence[Message]
    ) -> list[int]:
        """Commit several messages in one transaction: all of them are saved, or none."""
        if not messages:
            return []
        rows = [(message_to_json(m), m) for m in messages]
        now = increasing_time()

        async def op(conn: aiosqlite.Connection) -> list[int]:
            await conn.execute("BEGIN IMMEDIATE")
            try:
                first = await _scalar(
                    conn,
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?",
                    (session_id,),
                )
                seqs = list(range(first, first + len(rows)))
                await conn.executemany(
                    "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (session_id, seq, request_id, _kind(m), data, now)
                        for seq, (data, m) in zip(seqs, rows, strict=True)
                    ],
                )
                for seq, (_data, m) in zip(seqs, rows, strict=True):
                    index_text = _repaired_index_text(m)
                    if index_text is not None:
                        await _set_index_text(conn, session_id, seq, index_text)
                await conn.execute("COMMIT")
            except BaseException:
                await _rollback(conn)
                raise
            return seqs

        return await self._write(op)

    async def load(self, session_id: str) -> list[Message]:
        return [r.message for r in await self.load_records(session_id)]

    async def load_records(
        self, session_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredMessage]:
        async def op(conn: aiosqlite.Connection) -> list[StoredMessage]:
            rows = await conn.execute_fetchall(
                "SELECT seq, request_id, data, created_at FROM messages "
                "WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (session_id, after_seq, -1 if limit is None else limit),
            )
            return [
                StoredMessage(seq, request_id, self._decode(seq, data), created)
                for seq, request_id, data, created in rows
            ]

        return await self._read(op)

    async def tail(self, session_id: str, n: int) -> list[Message]:
        """The last ``n`` messages, oldest first. Reads only those rows (index, descending)."""
        if n <= 0:
            return []

        async def op(conn: aiosqlite.Connection) -> list[Message]:
            rows = await conn.execute_fetchall(_TAIL, (session_id, n))
            return [self._decode(seq, data) for seq, data in reversed(list(rows))]

        return await self._read(op)

    async def list_sessions(self) -> list[SessionInfo]:
        """All sessions, most recently updated first."""

        async def op(conn: aiosqlite.Connection) -> list[SessionInfo]:
            async with conn.execute(
                "SELECT id, title, created_at, updated_at, message_count FROM sessions "
                "ORDER BY updated_at DESC, id"
            ) as cursor:
                rows = await cursor.fetchall()
            return [SessionInfo(*row) for row in rows]

        return await self._read(op)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        title = storable_text(title) if title is not None else None
        async def op(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))

        await self._write(op)

    async def delete_session(self, session_id: str) -> bool:
        """Delete a session and all its messages; returns whether it existed."""

        async def op(conn: aiosqlite.Connection) -> bool:
            cursor = await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return cursor.rowcount > 0

        return await self._write(op)

    async def search(self, text: str, *, limit: int = 50) -> list[SearchHit]:
        """Messages of every session matching ``text`` (all words; the last as a prefix)."""
        query = fts_query(text)
        if query is None:
            return []

        async def op(conn: aiosqlite.Connection) -> list[tuple[int, str, int, bytes]]:
            # The snippet as bytes: an index row written before lone surrogates were repaired
            # holds bytes that are not UTF-8, and decoding them must not fail the whole search.
            async with conn.execute(
                "SELECT m.id, m.session_id, m.seq, "
                "CAST(snippet(messages_fts, 0, '[', ']', '…', 12) AS BLOB) "
                "FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid "
                "WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?",
                (query, limit),
            ) as cursor:
                return [(int(r[0]), str(r[1]), int(r[2]), bytes(r[3]))
                        for r in await cursor.fetchall()]

        rows = await self._read(op)
        broken = [row[0] for row in rows if not _is_utf8(row[3])]
        if broken:
            await self._repair_index(broken)
            rows = await self._read(op)
        return [SearchHit(session_id, seq, bytes(snippet).decode("utf-8", "replace"))
                for _id, session_id, seq, snippet in rows]

    async def _repair_index(self, message_ids: list[int]) -> None:
        """Re-index messages whose index text is not valid UTF-8 (see :func:`storable_text`)."""

        async def op(conn: aiosqlite.Connection) -> None:
            await conn.execute("BEGIN IMMEDIATE")
            try:
                for message_id in message_ids:
                    rows = list(await conn.execute_fetchall(
                        "SELECT data FROM messages WHERE id = ?", (message_id,)))
                    if not rows:
                        continue
                    text = _index_text_of(str(rows[0][0]))
                    if text is not None:
                        await conn.execute(
                            "UPDATE messages_fts SET text = ? WHERE rowid = ?",
                            (text, message_id))
                await conn.execute("COMMIT")
            except BaseException:
                await _rollback(conn)
                raise

        await self._write(op)

    async def integrity_check(self) -> list[str]:
        """SQLite's ``PRAGMA integrity_check`` result lines (``["ok"]`` when healthy)."""

        async def op(conn: aiosqlite.Connection) -> list[str]:
            async with conn.execute("PRAGMA integrity_check") as cursor:
                return [str(row[0]) for row in await cursor.fetchall()]

        return await self._read(op)

    async def close(self) -> None:
        """Close the connection (bounded: a stuck disk cannot hang the app's exit)."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            async with self._write_lock:
                await asyncio.wait_for(conn.close(), timeout=10)

    def _decode(self, seq: int, data: str) -> Message:
        try:
            return message_from_json(data)
        except MessageFormatError as err:
            raise StorageCorruptError(
                f"Message {seq} in {self._path} cannot be read: {err}."
            ) from err


_SQLITE_MAGIC: Final = b"SQLite format 3\x00"


def _damaged_file(path: Path) -> str | None:
    """Why the file at ``path`` is visibly not a usable database, read before SQLite opens it.

    SQLite itself would report such a file as corrupt too, but only after opening it — and on
    closing, it checkpoints and deletes a ``-wal`` file beside it, which may hold the latest
    committed messages. Files that fail these two cheap checks are never handed to SQLite:
    a header that is not SQLite's, or (with no ``-wal`` to complete it) a file shorter than
    the size its header records.
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
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        return "it does not start like an SQLite database"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    size_is_valid = header[24:28] == header[92:96]  # the header's own validity marker
    wal = Path(f"{path}-wal")
    if size_is_valid and size < pages * page_size and not (
        wal.exists() and wal.stat().st_size > 0
    ):
        return f"it is cut short: {size} of {pages * page_size} bytes"
    return None


def _repaired_index_text(message: Message) -> str | None:
    """The text to index for ``message`` when SQLite's own would not be valid UTF-8, else None.

    The index trigger takes ``json_extract(data, '$.content')``, which turns the ``\\ud800``
    escape of a lone surrogate into bytes that are not UTF-8; every search whose snippet
    touched them failed. Such messages are indexed with U+FFFD in place of each surrogate.
    """
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        return None
    repaired = storable_text(content)
    return None if repaired is content else repaired


def _index_text_of(data: str) -> str | None:
    """:func:`_repaired_index_text` for a stored row's JSON (None: nothing to repair)."""
    try:
        content = json.loads(data).get("content")
    except (ValueError, AttributeError):
        return None
    return storable_text(content) if isinstance(content, str) else None


async def _set_index_text(
    conn: aiosqlite.Connection, session_id: str, seq: int, text: str
) -> None:
    await conn.execute(
        "UPDATE messages_fts SET text = ? WHERE rowid = "
        "(SELECT id FROM messages WHERE session_id = ? AND seq = ?)",
        (text, session_id, seq),
    )


def _is_utf8(data: bytes) -> bool:
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _connect_read_only(path: str) -> sqlite3.Connection:
    """A read-only connection: it reads the ``-wal`` too but never checkpoints it."""
    return sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True)


def _has_wal(path: str) -> bool:
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except OSError:
        return False


async def _close_without_checkpoint(conn: aiosqlite.Connection, path: str) -> None:
    """Close a read-write connection without merging the ``-wal`` into a damaged file.

    SQLite checkpoints when the last connection to a file closes, which needs an exclusive
    lock. A read-only connection that has read the file holds a shared lock meanwhile, so the
    checkpoint cannot happen; and a read-only connection never checkpoints itself.
    """
    guard: sqlite3.Connection | None = None
    try:
        guard = _connect_read_only(path)
        guard.execute("PRAGMA user_version").fetchone()
    except sqlite3.Error:
        log.warning("could not hold %s open while closing it; its -wal may be merged", path)
    try:
        await asyncio.wait_for(conn.close(), timeout=10)
    except Exception:
        log.exception("closing the damaged database %s failed", path)
    finally:
        if guard is not None:
            guard.close()


def _kind(message: Message) -> str:
    return type(message).__name__.removesuffix("Message").lower()


async def _rollback(conn: aiosqlite.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already done so itself.

    Some errors (``RAISE(ROLLBACK)``, an interrupt, some disk-full and I/O errors) end the
    transaction automatically; a second ROLLBACK would then fail with "no transaction is active"
    and hide the error that matters.
    """
    if conn.in_transaction:
        await conn.execute("ROLLBACK")


async def _scalar(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> int:
    async with conn.execute(sql, tuple(params)) as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


class SQLiteSessionExtension:
    """The durable store as an agent extension: ``extensions=[SQLiteSessionExtension(path)]``.

    It also claims each request's conversation across processes (:meth:`claim_session`, see
    :mod:`app.locks`): another process running or resuming the same conversation of the same
    database file gets :class:`~app.errors.SessionBusyError` at once, and a claim dies with
    its holder, ``kill -9`` included. The desktop app and ``continuum-chat`` use the same claim.
    The lock files live in a ``locks/`` folder created beside the database file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["full", "normal"] = "full",
    ) -> None:
        self.storage = SQLiteSessionStore(path, synchronous=synchronous)

    def __repr__(self) -> str:
        return f"SQLiteSessionExtension({self.storage.path!r})"

    def claim_session(self, session_id: str) -> Callable[[], None]:
        """Claim ``session_id`` for one request; returns the function that ends the claim.

        Raises :class:`~app.errors.SessionBusyError` (``other_process=True``) when another
        process holds it, and a :class:`~app.errors.StorageError` when the lock file beside the
        database cannot be created. An in-memory database needs no claim.
        """
        from ..errors import SessionBusyError
        from ..locks import CLAIMS, claim_file

        if self.storage.lock_key.startswith("sqlite-memory:"):
            return lambda: None
        lock = claim_file(self.storage.path, session_id)
        try:
            claimed = CLAIMS.claim(lock)
        except OSError as err:
            raise _lock_file_error(lock, err) from err
        if not claimed:
            raise SessionBusyError(session_id, other_process=True)
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                CLAIMS.unclaim(lock)

        return release


def _lock_file_error(lock: Path, err: OSError) -> StorageError:
    reason = err.strerror or type(err).__name__
    where = f"the conversation lock file {lock}"
    if err.errno == errno.ENOSPC:
        return StorageFullError(f"Cannot create {where}: the disk is full. Free some space, "
                                "then try again.")
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return StorageReadOnlyError(f"Cannot create {where} ({reason}): the folder cannot be "
                                    "written. Make it writable or choose another data folder.")
    return StorageError(f"Cannot create {where} ({reason}). Check the data folder, then try "
                        "again.")
