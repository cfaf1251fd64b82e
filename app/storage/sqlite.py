"""The durable session store: sessions and their messages in one SQLite file.

Durability: the database runs in WAL mode and every message is its own committed transaction,
written when the message completes, so a ``kill -9`` loses nothing that was complete. With the
default ``synchronous="full"`` each commit is also fsynced, which makes it power-loss safe (tested
at every sync point by ``tests/power``). ``synchronous="normal"`` is faster, but a power cut loses
every commit since the last checkpoint (the ``-wal`` reaching 1,000 pages, or the store closing),
possibly everything since the app started; a killed process still loses nothing.

The file itself — opening it safely, refusing a newer, foreign, damaged or read-only one and
leaving it byte-for-byte untouched, translating SQLite's environment errors, closing it for good
when damage is found while in use, writes that survive a cancelled caller — is
:class:`~app.storage.database.Database`'s job; the tables are in :mod:`app.storage.schema`.
This module holds the history's queries: append, load, tail, list, rename, delete (search:
:mod:`app.storage.search`).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Literal

import aiosqlite

from ..errors import StorageCorruptError, StorageError, StorageFullError, StorageReadOnlyError
from ..messages import (
    Message,
    MessageFormatError,
    message_to_json,
)
from .attachments import fill_messages, fill_records, has_attachments, save_attachments
from .base import (
    LEAF,
    Leaf,
    Parent,
    SessionInfo,
    StoredMessage,
    increasing_time,
    new_session_id,
)
from .branches import (
    Row,
    as_row,
    branch_data,
    branch_rows,
    leaf_under,
    linear_branch_data,
    position,
    sibling_groups,
    tail_rows,
    validate_seq,
)
from .database import Database, scalar, translate_sqlite_error
from .decode import decode
from .schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from .search import PAGE, SearchCursor, SearchHit, SearchPage, fts_query
from .search import search as _search
from .search import search_page as _search_page
from .search_index import index_pending, repaired_index_text, set_index_text, storable_text

log = logging.getLogger(__name__)

__all__ = [
    "PAGE",
    "APPLICATION_ID",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SQLiteSessionExtension",
    "SQLiteSessionStore",
    "SearchCursor",
    "SearchHit",
    "SearchPage",
    "fts_query",
    "storable_text",
    "translate_sqlite_error",
]

# After the current leaf (the trigger ``messages_count`` makes the new message the leaf).
_INSERT: Final = """
    INSERT INTO messages(session_id, seq, parent_seq, request_id, kind, data, created_at)
    VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?1),
            (SELECT leaf_seq FROM sessions WHERE id = ?1), ?2, ?3, ?4, ?5)
    RETURNING seq
"""
# After a given message (or as a new first message: ``?6`` NULL).
_INSERT_AFTER: Final = """
    INSERT INTO messages(session_id, seq, parent_seq, request_id, kind, data, created_at)
    VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?1),
            ?6, ?2, ?3, ?4, ?5)
    RETURNING seq
"""


class SQLiteSessionStore:
    """Sessions and their messages in one SQLite file (see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["full", "normal"] = "full",
        busy_timeout: float = 5.0,
    ) -> None:
        #: The file, its connection and its safety rules (:mod:`app.storage.database`).
        self.database = Database(path, synchronous=synchronous, busy_timeout=busy_timeout)

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"

    @property
    def path(self) -> str:
        return self.database.path

    @property
    def is_open(self) -> bool:
        """Whether a connection to the file is open now."""
        return self.database.is_open

    @property
    def on_damaged(self) -> Callable[[], str] | None:
        """Called once when damage is found while in use (see :class:`Database`)."""
        return self.database.on_damaged

    @on_damaged.setter
    def on_damaged(self, handler: Callable[[], str] | None) -> None:
        self.database.on_damaged = handler

    @property
    def lock_key(self) -> str:
        if self.database.memory:
            return f"sqlite-memory:{id(self)}"
        return f"sqlite:{os.path.realpath(self.path)}"

    async def open(self) -> None:
        """Open (and if needed create or migrate) the database. Called on first use."""
        await self.database.open()

    async def _connection(self) -> aiosqlite.Connection:
        """The open connection, for tests that look at it (the store itself never uses it)."""
        return await self.database._connection()

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

        await self.database.write(op)
        info = await self.get_session(session_id)
        assert info is not None
        return info

    async def get_session(self, session_id: str) -> SessionInfo | None:
        async def op(conn: aiosqlite.Connection) -> SessionInfo | None:
            async with conn.execute(
                "SELECT id, title, created_at, updated_at, message_count, pinned_at "
                "FROM sessions WHERE id = ?",
                (session_id,),
            ) as cursor:
                row = await cursor.fetchone()
            return None if row is None else SessionInfo(*row)

        return await self.database.read(op)

    async def append(
        self, session_id: str, request_id: str, message: Message, *, parent: Parent = LEAF
    ) -> int:
        """Commit one message after ``parent`` (the current leaf by default); it becomes the
        leaf. Returns its sequence number."""
        data = message_to_json(message)
        kind = _kind(message)
        now = increasing_time()
        index_text = repaired_index_text(message)
        sql = _INSERT if isinstance(parent, Leaf) else _INSERT_AFTER
        params: tuple[object, ...] = (session_id, request_id, kind, data, now)
        if not isinstance(parent, Leaf):
            params += (parent,)

        if index_text is None and isinstance(parent, Leaf) and not has_attachments(message):
            # The hot path: one statement, one thread hop (execute and fetch together).
            [(seq,)] = await self.database.write_statement(sql, params)
            return int(seq)

        async def op_checked(conn: aiosqlite.Connection) -> int:
            if isinstance(parent, int):
                await validate_seq(conn, session_id, parent)
            await save_attachments(conn, [message])  # in the message's transaction
            [(seq,)] = await conn.execute_fetchall(sql, params)
            if index_text is not None:
                await set_index_text(conn, session_id, seq, index_text)
            return int(seq)

        return await self.database.transaction(op_checked)

    async def append_many(
        self,
        session_id: str,
        request_id: str,
        messages: Sequence[Message],
        *,
        parent: Parent = LEAF,
    ) -> list[int]:
        """Commit several messages in one transaction, each after the one before (the first
        after ``parent``): all of them are saved, or none."""
        if not messages:
            return []
        rows = [(message_to_json(m), m) for m in messages]
        now = increasing_time()

        async def op(conn: aiosqlite.Connection) -> list[int]:
            after: int | None
            if isinstance(parent, Leaf):
                after = (await position(conn, session_id)).leaf
            else:
                after = parent
                if parent is not None:
                    await validate_seq(conn, session_id, parent)
            first = await scalar(
                conn,
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?",
                (session_id,),
            )
            seqs = list(range(first, first + len(rows)))
            await save_attachments(conn, messages)
            parents = [after, *seqs[:-1]]
            await conn.executemany(
                "INSERT INTO messages(session_id, seq, parent_seq, request_id, kind, data, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (session_id, seq, up, request_id, _kind(m), data, now)
                    for seq, up, (data, m) in zip(seqs, parents, rows, strict=True)
                ],
            )
            for seq, (_data, m) in zip(seqs, rows, strict=True):
                index_text = repaired_index_text(m)
                if index_text is not None:
                    await set_index_text(conn, session_id, seq, index_text)
            return seqs

        return await self.database.transaction(op)

    async def import_tree(
        self,
        session_id: str,
        title: str | None,
        times: tuple[float, float],
        rows: Sequence[tuple[int | None, str, Message, float]],
        leaf: int | None,
    ) -> None:
        """Save a whole conversation tree as a new session, in one transaction (all or none).

        ``rows`` are ``(parent, request_id, message, created_at)`` in the order to save: row
        ``i`` gets seq ``i + 1`` and its parent is an earlier row's seq (``None``: a first
        message); ``leaf`` is the current branch's newest message, ``times`` the session's
        ``(created_at, updated_at)``. Every message keeps its own time; the bytes of its
        attachments (at hand in its parts, or stored already) are saved with it. A session
        ``session_id`` that exists already, a parent or leaf out of range, or an attachment
        without its bytes is a :class:`ValueError` (nothing saved).
        """
        for seq, (parent, *_rest) in enumerate(rows, start=1):
            if parent is not None and not 1 <= parent < seq:
                raise ValueError(f"message {seq}'s parent {parent} is not an earlier message")
        if leaf is not None and not 1 <= leaf <= len(rows):
            raise ValueError(f"the leaf {leaf} is not one of the {len(rows)} messages")
        title = storable_text(title) if title is not None else None

        async def op(conn: aiosqlite.Connection) -> None:
            if await scalar(conn, "SELECT COUNT(*) FROM sessions WHERE id = ?", (session_id,)):
                raise ValueError(f"a conversation {session_id!r} exists already")
            await conn.execute(
                "INSERT INTO sessions(id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (session_id, title, times[0], times[0]),
            )
            await conn.executemany(
                "INSERT INTO messages(session_id, seq, parent_seq, request_id, kind, data, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (session_id, seq, up, rid, _kind(m), message_to_json(m), at)
                    for seq, (up, rid, m, at) in enumerate(rows, start=1)
                ],
            )
            await save_attachments(conn, [m for _up, _rid, m, _at in rows])
            for seq, (_up, _rid, m, _at) in enumerate(rows, start=1):
                index_text = repaired_index_text(m)
                if index_text is not None:
                    await set_index_text(conn, session_id, seq, index_text)
            await conn.execute(
                "UPDATE sessions SET leaf_seq = ?, updated_at = ? WHERE id = ?",
                (leaf, times[1], session_id),
            )

        await self.database.transaction(op)

    async def load(self, session_id: str) -> list[Message]:
        """The current branch's messages, oldest first (only their data is read)."""

        async def op(conn: aiosqlite.Connection) -> list[Message]:
            linear = await linear_branch_data(conn, session_id)  # one statement: most loads
            if linear:
                messages = self._decode_linear(linear)
            else:
                at = await position(conn, session_id)
                rows = await branch_data(conn, session_id, at.leaf, at.forked)
                messages = self._decode_rows(rows)
            return await fill_messages(conn, messages)

        return await self.database.read(op)

    async def load_records(
        self, session_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredMessage]:
        """The current branch's records with ``seq > after_seq``, oldest first."""

        async def op(conn: aiosqlite.Connection) -> list[StoredMessage]:
            at = await position(conn, session_id)
            rows = await branch_rows(
                conn, session_id, at.leaf, at.forked, after_seq=after_seq, limit=limit
            )
            return await fill_records(conn, [self._record(r) for r in rows])

        return await self.database.read(op)

    async def load_branch(self, session_id: str, leaf: int | None) -> list[StoredMessage]:
        """The branch from the first message down to ``leaf`` (``None``: empty)."""

        async def op(conn: aiosqlite.Connection) -> list[StoredMessage]:
            if leaf is not None:
                await validate_seq(conn, session_id, leaf)
            at = await position(conn, session_id)
            # The unforked range is right for any message of a conversation that never forked.
            rows = await branch_rows(conn, session_id, leaf, at.forked)
            return await fill_records(conn, [self._record(r) for r in rows])

        return await self.database.read(op)

    async def tail(self, session_id: str, n: int) -> list[Message]:
        """The current branch's last ``n`` messages, oldest first; reads only those rows."""
        if n <= 0:
            return []

        async def op(conn: aiosqlite.Connection) -> list[Message]:
            at = await position(conn, session_id)
            rows = await tail_rows(conn, session_id, at.leaf, at.forked, n)
            return await fill_messages(conn, [self._decode(r[0], r[2]) for r in reversed(rows)])

        return await self.database.read(op)

    async def tail_records(
        self, session_id: str, n: int, *, before: int | None = None
    ) -> list[StoredMessage]:
        """The current branch's last ``n`` records, oldest first (``before``: the last ``n``
        above message ``before``); reads only those rows."""
        if n <= 0:
            return []

        async def op(conn: aiosqlite.Connection) -> list[StoredMessage]:
            at = await position(conn, session_id)
            leaf = at.leaf if before is None else await validate_seq(conn, session_id, before)
            rows = await tail_rows(conn, session_id, leaf, at.forked, n)
            return await fill_records(conn, [self._record(r) for r in reversed(rows)])

        return await self.database.read(op)

    async def leaf(self, session_id: str) -> int | None:
        async def op(conn: aiosqlite.Connection) -> int | None:
            return (await position(conn, session_id)).leaf

        return await self.database.read(op)

    async def parent_of(self, session_id: str, seq: int) -> int | None:
        async def op(conn: aiosqlite.Connection) -> int | None:
            return await validate_seq(conn, session_id, seq)

        return await self.database.read(op)

    async def select_branch(self, session_id: str, seq: int) -> int:
        """Make the branch through ``seq`` current, down to the newest message under it."""

        async def op(conn: aiosqlite.Connection) -> int:
            leaf = await leaf_under(conn, session_id, seq)
            # A leaf that is not the newest message reads as a range only if it never forked.
            await conn.execute("UPDATE sessions SET leaf_seq = ? WHERE id = ?", (leaf, session_id))
            return leaf

        return await self.database.transaction(op)

    async def versions(self, session_id: str) -> list[tuple[int, ...]]:
        """Each group of messages sharing a parent (two or more), oldest first."""

        async def op(conn: aiosqlite.Connection) -> list[tuple[int, ...]]:
            return await sibling_groups(conn, session_id)

        return await self.database.read(op)

    async def tree(self, session_id: str) -> list[StoredMessage]:
        """Every message of every branch, in the order they were saved."""

        async def op(conn: aiosqlite.Connection) -> list[StoredMessage]:
            rows = await conn.execute_fetchall(
                "SELECT seq, request_id, data, created_at, parent_seq FROM messages "
                "WHERE session_id = ? ORDER BY seq",
                (session_id,),
            )
            return await fill_records(conn, [self._record(as_row(r)) for r in rows])

        return await self.database.read(op)

    async def list_sessions(self) -> list[SessionInfo]:
        """All sessions: pinned ones first (most recently pinned first), then the rest most
        recently updated first (as :func:`~app.storage.base.listing_order`)."""

        async def op(conn: aiosqlite.Connection) -> list[SessionInfo]:
            async with conn.execute(
                "SELECT id, title, created_at, updated_at, message_count, pinned_at "
                "FROM sessions ORDER BY pinned_at IS NULL, pinned_at DESC, updated_at DESC, id"
            ) as cursor:
                rows = await cursor.fetchall()
            return [SessionInfo(*row) for row in rows]

        return await self.database.read(op)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        title = storable_text(title) if title is not None else None

        async def op(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))

        await self.database.write(op)

    async def pin_session(self, session_id: str, pinned: bool) -> None:
        """Pin a conversation to the top of the list (now), or unpin it (schema 10)."""
        when = increasing_time() if pinned else None

        async def op(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE sessions SET pinned_at = ? WHERE id = ?", (when, session_id))

        await self.database.write(op)

    async def delete_session(self, session_id: str) -> bool:
        """Delete a session and all its messages; returns whether it existed."""

        async def op(conn: aiosqlite.Connection) -> bool:
            cursor = await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return cursor.rowcount > 0

        return await self.database.write(op)

    async def search(self, text: str, *, limit: int = 50) -> list[SearchHit]:
        """Messages of every session matching ``text`` (all words; the last as a prefix), newest
        first (see :mod:`app.storage.search`)."""
        return await _search(self.database, text, limit=limit)

    async def search_page(
        self, text: str, *, limit: int = PAGE, after: SearchCursor | None = None
    ) -> SearchPage:
        """A page of :meth:`search`: ``limit`` conversations, after ``after`` (the previous
        page's ``more``) or the first (see :mod:`app.storage.search`)."""
        return await _search_page(self.database, text, limit=limit, after=after)

    async def integrity_check(self) -> list[str]:
        """SQLite's ``PRAGMA integrity_check`` result lines (``["ok"]`` when healthy)."""

        async def op(conn: aiosqlite.Connection) -> list[str]:
            async with conn.execute("PRAGMA integrity_check") as cursor:
                return [str(row[0]) for row in await cursor.fetchall()]

        return await self.database.read(op)

    async def close(self) -> None:
        """Close the connection (bounded: a stuck disk cannot hang the app's exit).

        The newest messages not in the search index yet are indexed first, so a closed file's
        index is whole (best effort: a search indexes them anyway)."""
        if self.database.is_open:
            try:
                await asyncio.wait_for(index_pending(self.database), timeout=5)
            except (StorageError, TimeoutError) as err:
                log.warning("newest messages not indexed before closing: %s", err)
        await self.database.close()

    def _record(self, row: Row) -> StoredMessage:
        seq, request_id, data, created, parent = row
        return StoredMessage(seq, request_id, self._decode(seq, data), created, parent)

    def _decode(self, seq: int, data: str) -> Message:
        try:
            return decode(data)
        except MessageFormatError as err:
            raise StorageCorruptError(
                f"Message {seq} in {self.path} cannot be read: {err}."
            ) from err

    def _decode_linear(self, rows: list[tuple[str]]) -> list[Message]:
        """The messages of a never-forked branch's ``(data,)`` rows (the n-th is seq n)."""
        try:
            return [decode(data) for (data,) in rows]
        except MessageFormatError:
            return self._decode_rows([(seq, data) for seq, (data,) in enumerate(rows, 1)])

    def _decode_rows(self, rows: list[tuple[int, str]]) -> list[Message]:
        """The messages of ``(seq, data)`` rows (the first that cannot be read is named)."""
        try:
            return [decode(data) for _seq, data in rows]
        except MessageFormatError:
            return [self._decode(seq, data) for seq, data in rows]  # raises, naming the row


def _kind(message: Message) -> str:
    return type(message).__name__.removesuffix("Message").lower()


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
        return StorageFullError(
            f"Cannot create {where}: the disk is full. Free some space, then try again."
        )
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return StorageReadOnlyError(
            f"Cannot create {where} ({reason}): the folder cannot be "
            "written. Make it writable or choose another data folder."
        )
    return StorageError(f"Cannot create {where} ({reason}). Check the data folder, then try again.")
