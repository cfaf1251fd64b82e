"""What the app records beside the model's history: running markers, drafts, stop records.

The model's history says *what* a request was doing when it stopped, never *why*; a killed
process writes nothing. So the app keeps, per conversation, in the same database:

* a **running marker** while a request is in flight — still there at the next launch means the
  app closed unexpectedly;
* the **draft**: the text on screen for the step in flight, saved throttled while streaming,
  kept apart from the history (it is never sent to the model as if it were complete);
* a **stop record**: why the last request stopped (Stop pressed, connection dropped, provider
  error with its message, ...), in words for the Resume bar.

* a **dismissal**: the person dismissed the Resume bar for the interruption the conversation
  ended with (the newest message and the resume word then), so reopening does not bring the bar
  back while nothing changed; a newer message or stop record is a new interruption.

* **tool states**: for a call that needs approval, whether it is ``awaiting_approval`` (it
  provably never started) or ``started`` (it may have run) — written durably before each step,
  keyed by the assistant message that asked *and* the call id (ids repeat across turns).

The conversation's own choices (its workspace folder, ...) are not records of a request: they
live in :mod:`app.storage.conversation_settings`. These tables are created by the migrations
of :mod:`app.storage.schema` (schema 2; tool states schema 3, keyed by message schema 5); all
access goes through the store's :class:`~app.storage.database.Database`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

import aiosqlite

from ..errors import StorageFullError
from .reserve import DiskReserve
from .schema import ensure_session_row
from .search_index import storable_text
from .sqlite import SQLiteSessionStore

__all__ = [
    "TOOL_AWAITING_APPROVAL",
    "TOOL_STARTED",
    "Dismissal",
    "RunningMarker",
    "SessionJournal",
    "StopKind",
    "StopRecord",
]

TOOL_AWAITING_APPROVAL = "awaiting_approval"
TOOL_STARTED = "started"

log = logging.getLogger(__name__)

# The newest assistant message of a session that has the call ``?2`` (newest first through the
# (session_id, seq) index: it stops at the step whose tools are running, near the end).
_ASKING_MESSAGE = (
    "SELECT m.seq FROM messages m WHERE m.session_id = ? AND m.kind = 'assistant' AND EXISTS ("
    "SELECT 1 FROM json_each(CASE WHEN json_valid(m.data) THEN m.data ELSE '{}' END, "
    "'$.tool_calls') j WHERE json_extract(j.value, '$.id') = ?) ORDER BY m.seq DESC LIMIT 1"
)
# The states of the calls of the current branch's newest assistant message with tool calls
# (the only calls that can be unanswered): up from the leaf through tool results and notes,
# stopping at that message or at a person's message (which closes every call before it), so it
# reads only the end of the current turn.
_ASKS = """m.kind = 'assistant' AND json_array_length(
    CASE WHEN json_valid(m.data) THEN m.data ELSE '{}' END, '$.tool_calls') > 0"""
_NEWEST_STEP_STATES = f"""
    WITH RECURSIVE up(seq, parent, asks, stop) AS (
        SELECT m.seq, m.parent_seq, {_ASKS}, m.kind = 'user'
        FROM messages m JOIN sessions s ON s.id = :s
        WHERE m.session_id = :s AND m.seq = s.leaf_seq
        UNION ALL
        SELECT m.seq, m.parent_seq, {_ASKS}, m.kind = 'user'
        FROM messages m JOIN up ON m.session_id = :s AND m.seq = up.parent
        WHERE NOT up.asks AND NOT up.stop
    )
    SELECT call_id, state FROM tool_states
    WHERE session_id = :s AND asked_seq = (SELECT seq FROM up WHERE asks)
"""


class StopKind(StrEnum):
    STOPPED = "stopped"
    CRASHED = "crashed"
    CONNECTION = "connection"
    PROVIDER_ERROR = "provider_error"
    OUTPUT_LIMIT = "output_limit"
    REFUSED = "refused"
    CONTEXT_FULL = "context_full"
    PAUSED = "paused"
    TOOL_LIMIT = "tool_limit"
    STORAGE = "storage"


@dataclass(frozen=True, slots=True)
class StopRecord:
    session_id: str
    kind: StopKind
    message: str
    created_at: float


@dataclass(frozen=True, slots=True)
class Dismissal:
    """The person dismissed the Resume bar: for which state of the conversation, and when."""

    session_id: str
    #: The current branch's newest message when dismissed, and now (-1: no messages).
    last_seq: int
    #: The resume word the bar was shown for (a ``ResumeKind`` or ``BlockedReason`` value).
    point: str
    dismissed_at: float
    current_seq: int

    def covers(self, point: str, stop: StopRecord | None) -> bool:
        """Whether the conversation is still in the state that was dismissed: no message
        added since, the same resume word, and no request stopped since."""
        return (
            self.current_seq == self.last_seq
            and self.point == point
            and (stop is None or stop.created_at <= self.dismissed_at)
        )


_DISMISSALS = (
    "SELECT d.session_id, d.last_seq, d.point, d.dismissed_at, "
    "(SELECT COALESCE(s.leaf_seq, -1) FROM sessions s WHERE s.id = d.session_id) "
    "FROM resume_dismissals d"
)


@dataclass(frozen=True, slots=True)
class RunningMarker:
    session_id: str
    request_id: str
    pid: int
    started_at: float


class SessionJournal:
    """Markers, drafts and stop records of one store's conversations."""

    def __init__(self, store: SQLiteSessionStore) -> None:
        self.store = store
        self._db = store.database
        #: Room released when the disk is full, so stop records are still saved
        #: (:mod:`app.storage.reserve`); ``None``: no reserve.
        self.reserve: DiskReserve | None = None

    async def mark_running(self, session_id: str, request_id: str) -> None:
        if self.reserve is not None:
            self.reserve.ensure()  # used up by an earlier full disk: take it back if there is room
        await self._write_for_session(
            session_id,
            "INSERT OR REPLACE INTO running_requests(session_id, request_id, pid, started_at) "
            "VALUES (?, ?, ?, ?)",
            (session_id, request_id, os.getpid(), time.time()),
        )

    async def clear_running(self, session_id: str) -> None:
        await self._with_reserve(
            lambda: self._execute(
                "DELETE FROM running_requests WHERE session_id = ?", (session_id,)
            )
        )

    async def running_markers(self) -> list[RunningMarker]:
        async def op(conn: aiosqlite.Connection) -> list[RunningMarker]:
            async with conn.execute(
                "SELECT session_id, request_id, pid, started_at FROM running_requests"
            ) as cursor:
                return [RunningMarker(*row) for row in await cursor.fetchall()]

        return await self._db.read(op)

    async def save_draft(self, session_id: str, text: str) -> None:
        await self._execute(
            "INSERT INTO drafts(session_id, text, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET text = excluded.text, "
            "updated_at = excluded.updated_at",
            (session_id, storable_text(text), time.time()),
        )

    async def draft(self, session_id: str) -> str | None:
        async def op(conn: aiosqlite.Connection) -> str | None:
            async with conn.execute(
                "SELECT text FROM drafts WHERE session_id = ?", (session_id,)
            ) as cursor:
                row = await cursor.fetchone()
            return None if row is None or not row[0] else str(row[0])

        return await self._db.read(op)

    async def clear_draft(self, session_id: str) -> None:
        await self._execute("DELETE FROM drafts WHERE session_id = ?", (session_id,))

    async def record_stop(self, session_id: str, kind: StopKind, message: str) -> None:
        """Record why a request stopped; on a full disk, the reserve makes room for it."""
        params = (session_id, kind.value, storable_text(message), time.time(), session_id)
        await self._with_reserve(
            lambda: self._execute(
                "INSERT OR REPLACE INTO stop_records(session_id, kind, message, created_at, "
                "leaf_seq) VALUES (?, ?, ?, ?, (SELECT leaf_seq FROM sessions WHERE id = ?))",
                params,
            )
        )

    async def _with_reserve(self, write: Callable[[], Awaitable[None]]) -> None:
        """``write()``; if the disk is full, release the reserve and try once more."""
        try:
            await write()
        except StorageFullError:
            if self.reserve is None or not self.reserve.release():
                raise
            await write()

    async def stop_record(self, session_id: str) -> StopRecord | None:
        """Why the current branch's last request stopped (a record made on another branch,
        before the person switched, is not this branch's)."""

        async def op(conn: aiosqlite.Connection) -> StopRecord | None:
            async with conn.execute(
                "SELECT r.session_id, r.kind, r.message, r.created_at FROM stop_records r "
                "LEFT JOIN sessions s ON s.id = r.session_id WHERE r.session_id = ? "
                "AND (r.leaf_seq IS NULL OR r.leaf_seq IS s.leaf_seq)",
                (session_id,),
            ) as cursor:
                row = await cursor.fetchone()
            if row is None:
                return None
            try:
                kind = StopKind(row[1])
            except ValueError:
                kind = StopKind.PROVIDER_ERROR
            return StopRecord(row[0], kind, row[2], row[3])

        return await self._db.read(op)

    async def clear_stop(self, session_id: str) -> None:
        await self._execute("DELETE FROM stop_records WHERE session_id = ?", (session_id,))

    async def record_dismissal(self, session_id: str, point: str) -> None:
        """Remember that the Resume bar was dismissed while the conversation ends as it does
        now (its newest message) with the resume word ``point``."""

        async def op(conn: aiosqlite.Connection) -> None:
            await ensure_session_row(conn, session_id)
            await conn.execute(
                "INSERT OR REPLACE INTO resume_dismissals(session_id, last_seq, point, "
                "dismissed_at) SELECT ?, COALESCE(leaf_seq, -1), ?, ? FROM sessions "
                "WHERE id = ?",
                (session_id, point, time.time(), session_id),
            )

        await self._db.transaction(op)

    async def dismissal(self, session_id: str) -> Dismissal | None:
        async def op(conn: aiosqlite.Connection) -> Dismissal | None:
            async with conn.execute(
                f"{_DISMISSALS} WHERE d.session_id = ?", (session_id,)
            ) as cursor:
                row = await cursor.fetchone()
            return None if row is None else Dismissal(*row)

        return await self._db.read(op)

    async def dismissals(self) -> dict[str, Dismissal]:
        """Every conversation's dismissal (for the sidebar's badges: one read)."""

        async def op(conn: aiosqlite.Connection) -> dict[str, Dismissal]:
            async with conn.execute(_DISMISSALS) as cursor:
                return {row[0]: Dismissal(*row) for row in await cursor.fetchall()}

        return await self._db.read(op)

    async def set_tool_state(
        self, session_id: str, call_id: str, state: str, *, asked_seq: int | None = None
    ) -> None:
        """Record (durably, before it happens) where a tool call got to.

        A state belongs to the call *and the message that asked for it* (``asked_seq``, the
        assistant message's seq): providers reuse ids such as ``call_1`` in later turns, and a
        state left by an earlier turn must never describe a later call. ``asked_seq=None``
        means the newest saved assistant message that has this call — the step whose tools
        are running. If there is none, nothing is recorded (and a warning logged): no state
        reads as "may have run", which never lets a tool run twice.
        """

        async def op(conn: aiosqlite.Connection) -> None:
            seq = asked_seq
            if seq is None:
                async with conn.execute(_ASKING_MESSAGE, (session_id, call_id)) as cursor:
                    row = await cursor.fetchone()
                seq = None if row is None else int(row[0])
            if seq is None:
                log.warning(
                    "no saved message asked for tool call %r; its state %r is not recorded",
                    call_id,
                    state,
                )
                return
            await conn.execute(
                "INSERT INTO tool_states(session_id, asked_seq, call_id, state, "
                "updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(session_id, asked_seq, call_id) DO UPDATE SET "
                "state = excluded.state, updated_at = excluded.updated_at",
                (session_id, seq, call_id, state, time.time()),
            )

        await self._db.transaction(op)

    async def tool_states(self, session_id: str) -> dict[str, str]:
        """``call_id -> state`` of the calls of the current branch's newest assistant message
        with tool calls (the only calls that can be unanswered) that went through approval.

        Reads up from the leaf to that message, or to the person's message before it."""

        async def op(conn: aiosqlite.Connection) -> dict[str, str]:
            async with conn.execute(_NEWEST_STEP_STATES, {"s": session_id}) as cursor:
                return {str(row[0]): str(row[1]) for row in await cursor.fetchall()}

        return await self._db.read(op)

    async def all_tool_states(self, session_id: str) -> dict[tuple[int, str], str]:
        """``(asked_seq, call_id) -> state`` of every recorded call of the conversation."""

        async def op(conn: aiosqlite.Connection) -> dict[tuple[int, str], str]:
            async with conn.execute(
                "SELECT asked_seq, call_id, state FROM tool_states WHERE session_id = ?",
                (session_id,),
            ) as cursor:
                return {(int(row[0]), str(row[1])): str(row[2]) for row in await cursor.fetchall()}

        return await self._db.read(op)

    async def _write_for_session(
        self, session_id: str, sql: str, params: tuple[object, ...]
    ) -> None:
        """One committed statement about a session, creating the session row if needed."""

        async def op(conn: aiosqlite.Connection) -> None:
            await ensure_session_row(conn, session_id)
            await conn.execute(sql, params)

        await self._db.transaction(op)

    async def _execute(self, sql: str, params: tuple[object, ...]) -> None:
        async def op(conn: aiosqlite.Connection) -> None:
            await conn.execute(sql, params)

        await self._db.write(op)
