"""Each conversation's own choices, kept in its database: the workspace folder and the setup.

A conversation remembers the folder its file tools work in (the ``session_settings`` table,
schema 4 of :mod:`app.storage.schema`) and its setup — system prompt, provider profile, model
and parameters — as one JSON object in the same row (``setup``, schema 8; ``NULL``: the
defaults). They are the conversation's settings, not records of a request (those are in
:mod:`app.storage.journal`). This module stores the JSON as given; what it means and which
values are valid is :mod:`app.services.setup`'s.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import aiosqlite

from .database import Database
from .schema import ensure_session_row

__all__ = ["ConversationSettings"]

log = logging.getLogger(__name__)


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
            # NULL: a row made for the setup alone (set_workspace always writes text).
            return None if row is None or row[0] is None else str(row[0])

        return await self.database.read(op)

    async def set_setup(self, session_id: str, data: dict[str, Any] | None) -> None:
        """Store the conversation's setup (``None`` or ``{}``: follow the defaults again)."""
        text = json.dumps(data, ensure_ascii=False, allow_nan=False) if data else None

        async def op(conn: aiosqlite.Connection) -> None:
            await ensure_session_row(conn, session_id)
            await conn.execute(
                "INSERT INTO session_settings(session_id, workspace, setup) VALUES (?, NULL, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET setup = excluded.setup",
                (session_id, text),
            )

        await self.database.transaction(op)

    async def setup(self, session_id: str) -> Any:
        """The stored setup as parsed JSON; ``None`` when none (or unreadable: logged)."""

        async def op(conn: aiosqlite.Connection) -> str | None:
            async with conn.execute(
                "SELECT setup FROM session_settings WHERE session_id = ?", (session_id,)
            ) as cursor:
                row = await cursor.fetchone()
            return None if row is None or row[0] is None else str(row[0])

        text = await self.database.read(op)
        if text is None:
            return None
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            log.warning("conversation %s: its stored setup is not JSON; defaults used", session_id)
            return None
