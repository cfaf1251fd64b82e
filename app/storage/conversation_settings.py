"""Each conversation's own choices, kept in its database: today the workspace folder.

A conversation remembers the folder its file tools work in (the ``session_settings`` table,
schema 4 of :mod:`app.storage.schema`). The choices that come next — its system prompt, model
and parameters — belong here too, as columns of the same row: they are the conversation's
settings, not records of a request (those are in :mod:`app.storage.journal`).
"""

from __future__ import annotations

import aiosqlite

from .database import Database
from .schema import ensure_session_row

__all__ = ["ConversationSettings"]


class ConversationSettings:
    """The per-conversation choices stored in ``database``."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def __repr__(self) -> str:
        return f"ConversationSettings({self.database.path!r})"

    async def set_workspace(self, session_id: str, path: str | None) -> None:
        """The conversation's workspace folder; ``None`` records "no folder" on purpose."""

        async def op(conn: aiosqlite.Connection) -> None:
            await ensure_session_row(conn, session_id)
            await conn.execute(
                "INSERT INTO session_settings(session_id, workspace) VALUES (?, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET workspace = excluded.workspace",
                (session_id, path or ""),
            )

        await self.database.transaction(op)

    async def workspace(self, session_id: str) -> str | None:
        """The recorded folder, ``""`` for "none on purpose", ``None`` when never chosen."""

        async def op(conn: aiosqlite.Connection) -> str | None:
            async with conn.execute(
                "SELECT workspace FROM session_settings WHERE session_id = ?", (session_id,)
            ) as cursor:
                row = await cursor.fetchone()
            return None if row is None else str(row[0] or "")

        return await self.database.read(op)
