"""The database primitive: one SQLite file, opened safely, used through ``read``/``write``.

:class:`Database` owns the connection (aiosqlite: one worker thread, each ``read``/``write`` a
single hop to it) and everything that keeps the person's file safe. The store
(:mod:`app.storage.sqlite`), the journal (:mod:`app.storage.journal`) and the conversation
settings (:mod:`app.storage.conversation_settings`) use only its public calls.

* **open** (on first use): files that are visibly not a database, a read-only file and a missing
  folder are refused before SQLite touches them; then :func:`check` reads the mark
  (``PRAGMA application_id``) and version (``PRAGMA user_version``) *before anything is
  written* and runs ``PRAGMA quick_check``, and :func:`migrate` applies the missing steps of the
  :class:`~app.storage.schema.Schema` in one transaction. With a ``-wal`` beside the file the
  checks run first on a read-only connection (:func:`check_read_only`), which never
  checkpoints: a refused file and its ``-wal`` keep every byte. (The checks themselves are in
  :mod:`app.storage.checks`, re-exported here.)
* **read** / **write** / **transaction** run one function on the connection under one lock
  (the connection is shared: a read must not land inside another coroutine's transaction). A
  write runs shielded from cancellation, so a Stop pressed during a commit lets it finish and
  no transaction is left half-open; ``transaction`` wraps the function in ``BEGIN IMMEDIATE`` /
  ``COMMIT`` and rolls back on any error, cancellation included. ``write_statement`` is a
  write of one statement (an append) that needs no shield when the lock is free.
* **errors**: SQLite's environment errors become :class:`~app.errors.StorageError` subclasses
  with a message a person can act on (:func:`translate_sqlite_error`, in
  :mod:`app.storage.translate`); any other SQLite error is a bug and propagates unchanged.
* **damage** found while in use (``SQLITE_CORRUPT``) closes the file for good without merging
  its ``-wal`` (:func:`close_without_checkpoint`); every later call raises the same error, and
  ``on_damaged`` lets the app keep the file aside.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiosqlite

from ..errors import StorageCorruptError, StorageError, StorageReadOnlyError, StorageVersionError
from .checks import (
    check,
    check_read_only,
    check_writable,
    connect_read_only,
    damaged_file,
    has_wal,
    scalar,
)
from .schema import CONVERSATIONS, Schema
from .translate import translate_sqlite_error, translated

__all__ = [
    "Database",
    "check",
    "check_read_only",
    "close_without_checkpoint",
    "damaged_file",
    "migrate",
    "rollback",
    "scalar",
    "translate_sqlite_error",
]

T = TypeVar("T")

log = logging.getLogger(__name__)


async def migrate(conn: aiosqlite.Connection, path: str, schema: Schema = CONVERSATIONS) -> None:
    """Apply the steps of ``schema`` the file lacks, and mark it, in one transaction."""
    await conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have migrated between our check and the write lock.
        version = await scalar(conn, "PRAGMA user_version")
        if version > schema.version:
            raise StorageVersionError(
                f"The conversation database {path} was upgraded by a newer Continuum "
                "while opening it; update Continuum to open it."
            )
        for step in range(version, schema.version):
            for statement in schema.migrations[step]:
                await conn.execute(statement)
        await conn.execute(f"PRAGMA application_id={schema.application_id}")
        await conn.execute(f"PRAGMA user_version={schema.version}")
        await conn.execute("COMMIT")
    except BaseException:
        await rollback(conn)
        raise


async def rollback(conn: aiosqlite.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already done so itself.

    Some errors (``RAISE(ROLLBACK)``, an interrupt, some disk-full and I/O errors) end the
    transaction automatically; a second ROLLBACK would then fail with "no transaction is active"
    and hide the error that matters.
    """
    if conn.in_transaction:
        await conn.execute("ROLLBACK")


async def close_without_checkpoint(conn: aiosqlite.Connection, path: str) -> None:
    """Close a read-write connection without merging the ``-wal`` into a damaged file.

    SQLite checkpoints when the last connection to a file closes, which needs an exclusive
    lock. A read-only connection that has read the file holds a shared lock meanwhile, so the
    checkpoint cannot happen; and a read-only connection never checkpoints itself.
    """
    guard: sqlite3.Connection | None = None
    try:
        guard = connect_read_only(path)
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


# --- the primitive ----------------------------------------------------------------------------


async def _fetchall(
    conn: aiosqlite.Connection, sql: str, parameters: tuple[object, ...]
) -> list[Any]:
    return list(await conn.execute_fetchall(sql, parameters))


class _Turns:
    """The connection's lock, knowing whether anyone holds it or waits for it."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        #: Coroutines holding or waiting for the lock; 0: taking it does not wait.
        self.users = 0

    async def __aenter__(self) -> None:
        self.users += 1
        try:
            await self._lock.acquire()
        except BaseException:
            self.users -= 1
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._lock.release()
        self.users -= 1


class Database:
    """One SQLite file: opened on first use, then ``read``/``write``/``transaction``.

    See the module docstring for what opening checks and how errors and damage are handled.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        schema: Schema = CONVERSATIONS,
        synchronous: Literal["full", "normal"] = "full",
        busy_timeout: float = 5.0,
    ) -> None:
        self._path = os.fspath(path)
        #: An in-memory database (``":memory:"``): no file checks, no WAL, no damage handling.
        self.memory = self._path == ":memory:" or self._path.startswith("file::memory:")
        self.schema = schema
        self.synchronous = synchronous
        self._busy_timeout_ms = int(busy_timeout * 1000)
        self._conn: aiosqlite.Connection | None = None
        self._open_lock = asyncio.Lock()
        self._lock = _Turns()
        self._closed = False
        #: Set when SQLite reported the file damaged while in use: nothing is written any more.
        self._damaged: StorageCorruptError | None = None
        #: Called once when damage is found while in use, after the connection was closed
        #: without merging the ``-wal``; returns a sentence saying what was done with the file.
        self.on_damaged: Callable[[], str] | None = None

    def __repr__(self) -> str:
        return f"Database({self._path!r})"

    @property
    def path(self) -> str:
        return self._path

    @property
    def is_open(self) -> bool:
        """Whether a connection to the file is open now."""
        return self._conn is not None

    # --- opening ------------------------------------------------------------------------------

    async def open(self) -> None:
        """Open (and if needed create or migrate) the database. Called on first use."""
        await self._connection()

    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is not None:
            return self._conn
        async with self._open_lock:
            self._check_usable()
            if self._conn is None:
                conn = await self._connect()
                try:  # close() may have run while we were opening: do not leak the connection
                    self._check_usable()
                except StorageError:
                    await conn.close()
                    raise
                self._conn = conn
            return self._conn

    def _check_usable(self) -> None:
        if self._damaged is not None:
            raise self._damaged
        if self._closed:
            raise StorageError(f"The conversation database {self._path} was already closed.")

    async def _connect(self) -> aiosqlite.Connection:
        if not self.memory:
            parent = Path(self._path).parent
            if not parent.is_dir():
                raise StorageReadOnlyError(
                    f"Cannot open the conversation database {self._path}: the folder {parent} "
                    "does not exist. Create it or choose another data folder."
                )
            problem = damaged_file(Path(self._path))
            if problem is not None:
                raise StorageCorruptError(
                    f"The conversation database {self._path} is damaged ({problem}). "
                    "It was left untouched: move it aside (or restore a backup) and start again."
                )
            check_writable(self._path)
            if has_wal(self._path):
                # A -wal holds committed changes. Closing a read-write connection merges it
                # into the file (a checkpoint), so a file we refuse is checked read-only first.
                await asyncio.to_thread(check_read_only, self._path, self.schema)
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
            raise translated(err, self._path) from err
        try:
            await self._prepare(conn)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _prepare(self, conn: aiosqlite.Connection) -> None:
        version = await check(conn, self._path, self.schema, quick_check=not self.memory)
        try:
            if not self.memory:
                await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute(f"PRAGMA synchronous={self.synchronous.upper()}")
            await conn.execute("PRAGMA foreign_keys=ON")
            await conn.execute(f"PRAGMA busy_timeout={self._busy_timeout_ms}")
            if version < self.schema.version:
                await migrate(conn, self._path, self.schema)
        except sqlite3.Error as err:
            raise translated(err, self._path) from err

    # --- running statements -------------------------------------------------------------------

    async def read(self, fn: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """``fn(conn)`` under the lock (no transaction of another coroutine is open then)."""
        conn = await self._connection()
        async with self._lock:
            try:
                return await fn(conn)
            except sqlite3.Error as err:
                raise await self._failed(conn, err) from err

    async def write(self, fn: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """``fn(conn)`` as one write, run to completion even if the caller is cancelled.

        ``fn`` commits what it does itself (autocommit, or its own ``BEGIN``/``COMMIT``); see
        :meth:`transaction` for several statements that must be saved together.
        """

        async def run() -> T:
            conn = await self._connection()
            async with self._lock:
                try:
                    return await fn(conn)
                except sqlite3.Error as err:
                    raise await self._failed(conn, err) from err

        return await asyncio.shield(asyncio.ensure_future(run()))

    async def write_statement(self, sql: str, parameters: tuple[object, ...]) -> list[Any]:
        """One statement saved on its own (autocommit); its rows (``RETURNING``).

        As :meth:`write`, it runs to completion even if the caller is cancelled, without the
        task that costs (the hot path: an append). When the file is open and nobody holds or
        waits for the lock, nothing suspends before the statement is queued to the connection's
        thread, which then runs it whatever becomes of the caller; otherwise this goes through
        :meth:`write`. (A cancelled caller does not see the statement's error; damage is then
        found by the next call.)
        """
        conn = self._conn
        if conn is None or self._lock.users:
            return await self.write(lambda c: _fetchall(c, sql, parameters))
        async with self._lock:  # free: taken without suspending
            try:
                return await _fetchall(conn, sql, parameters)
            except sqlite3.Error as err:
                raise await self._failed(conn, err) from err

    async def transaction(self, fn: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """``fn(conn)`` inside ``BEGIN IMMEDIATE`` … ``COMMIT``: all of it is saved, or none.

        Any exception from ``fn`` (cancellation included) rolls back and propagates.
        """

        async def op(conn: aiosqlite.Connection) -> T:
            await conn.execute("BEGIN IMMEDIATE")
            try:
                result = await fn(conn)
                await conn.execute("COMMIT")
            except BaseException:
                await rollback(conn)
                raise
            return result

        return await self.write(op)

    async def _failed(self, conn: aiosqlite.Connection, err: sqlite3.Error) -> Exception:
        """The error to raise for ``err`` while in use; damage closes the file for good."""
        error = translated(err, self._path)
        if not isinstance(error, StorageCorruptError) or self.memory:
            return error
        if self._damaged is None:
            self._damaged = StorageCorruptError(
                f"The conversation database {self._path} was found damaged while in use "
                f"(SQLite: {err}), so Continuum stopped writing to it."
            )
            if self._conn is conn:
                self._conn = None
            await close_without_checkpoint(conn, self._path)
            done = "Restart Continuum to keep it aside and start a new, empty database."
            if self.on_damaged is not None:
                try:
                    done = self.on_damaged()
                except Exception:  # the damage is still reported; how it was handled is logged
                    log.exception("handling a damaged database failed")
            self._damaged = StorageCorruptError(f"{self._damaged} {done}")
        return self._damaged

    async def close(self) -> None:
        """Close the connection (bounded: a stuck disk cannot hang the app's exit)."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            async with self._lock:
                await asyncio.wait_for(conn.close(), timeout=10)
