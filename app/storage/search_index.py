"""Keeping the full-text index right: text SQLite can hold, the batches, and repairs.

Python strings may hold lone surrogates (a broken paste), which have no UTF-8 form:
:func:`storable_text` repairs them for the short texts stored as plain columns, and a message
whose content has one is indexed with U+FFFD in its place (:func:`repaired_index_text`, applied
by the store's appends). Index rows written before that repair are fixed when a search meets
them (:func:`repair_index`, called by :func:`app.storage.search.search`). The index itself
(``messages_fts``, external content read from the view ``messages_text``, schema 12) is kept
by triggers in :mod:`app.storage.schema`; a message indexed by other text than its content has
that text in ``messages_index_text`` (:func:`set_index_text`). A message of parts (text,
images, files) is indexed by its text and its attachments' names
(:func:`~app.parts.index_text`), never by the JSON of its parts nor a file's contents.

Since schema 14 the index is fed in batches: the messages above ``messages_indexed.upto`` (at
most 64, the newest) are not in it yet. A search indexes them first (:func:`index_pending`),
so it finds every saved message, as before; one that cannot write (a full disk, another
process holding the write lock) answers from the index as it is, without those few.

Each batch is a new segment of the index (FTS5 merges four of a size into one), and a search
walks every segment: over 100,000 messages a two-word search took ~1.5x as long from 9
segments as from one. :func:`tidy_index` merges them, a short step at a time, when the app is
idle (:class:`app.services.upkeep.SearchUpkeep`).
"""

from __future__ import annotations

import json
from typing import Final

import aiosqlite

from ..messages import Message
from ..parts import index_text, part_from_dict
from .database import Database, scalar

__all__ = [
    "index_pending",
    "is_utf8",
    "repair_index",
    "repaired_index_text",
    "set_index_text",
    "storable_text",
    "tidy_index",
]


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


# The messages not in the index yet (schema 14), and the statements that index them: the same
# as the trigger ``messages_fts_batch`` runs for every 64th message.
_PENDING: Final = "SELECT (SELECT MAX(id) FROM messages) > (SELECT upto FROM messages_indexed)"
_INDEX_PENDING: Final = (
    """INSERT INTO messages_fts(rowid, text) SELECT id, text FROM messages_text
        WHERE id > (SELECT upto FROM messages_indexed)""",
    "UPDATE messages_indexed SET upto = (SELECT MAX(id) FROM messages)",
)


async def index_pending(database: Database) -> bool:
    """Index the messages not in the full-text index yet (the newest few, see the module
    docstring), in one transaction; returns whether there were any. Reads only when none."""

    async def waiting(conn: aiosqlite.Connection) -> bool:
        rows = list(await conn.execute_fetchall(_PENDING))
        return bool(rows and rows[0][0])

    async def op(conn: aiosqlite.Connection) -> bool:
        if not await waiting(conn):  # another connection may have indexed them meanwhile
            return False
        for statement in _INDEX_PENDING:
            await conn.execute(statement)
        return True

    if not await database.read(waiting):
        return False
    return await database.transaction(op)


#: The most segments :func:`tidy_index` leaves the index with: more, and it merges them all
#: into one. Six come back after ~1,000 new messages (FTS5 merges four of a size into one:
#: 1 + the base-4 digit sum of the batches since), so a whole merge runs about that often.
SEGMENTS_KEPT: Final = 6

#: Pages (~4 KB each) one step of :func:`tidy_index` writes: ~10-30 ms, so a write that
#: arrives meanwhile (an append) waits at most that long.
TIDY_PAGES: Final = 100

# The index's segments: each has rows in the shadow table %_idx (its b-tree's interior); an
# FTS5 without that table would fail here, and the upkeep only stops (nothing depends on it).
_SEGMENTS: Final = "SELECT count(DISTINCT segid) FROM messages_fts_idx"
_MERGE: Final = "INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ?)"


async def tidy_index(database: Database, pages: int = TIDY_PAGES) -> bool:
    """One step of merging the full-text index's segments, in its own transaction; returns
    whether more steps are wanted.

    With more than :data:`SEGMENTS_KEPT` segments, FTS5's ``merge`` command with a negative
    page count puts them all on one level and merges them, writing about ``pages`` pages per
    step; the next steps continue that merge (they do not start over) until it is done. Each
    step is a whole transaction: an interrupted merge leaves a correct index, and the next
    step (or FTS5's own merging on writes) goes on with it. The search results never change,
    only how many segments a search walks."""

    async def many(conn: aiosqlite.Connection) -> bool:
        return await scalar(conn, _SEGMENTS) > SEGMENTS_KEPT

    async def op(conn: aiosqlite.Connection) -> bool:
        if not await many(conn):  # another connection may have merged them meanwhile
            return False
        before = conn.total_changes
        await conn.execute(_MERGE, (-max(1, pages),))
        # A step that merged wrote pages and the structure record; one that found nothing to
        # merge wrote at most that record.
        return conn.total_changes - before >= 2

    if not await database.read(many):  # no write lock taken when there is nothing to do
        return False
    return await database.transaction(op)


async def repair_index(database: Database, message_ids: list[int]) -> None:
    """Re-index messages whose index text is not valid UTF-8 (see :func:`storable_text`)."""

    async def op(conn: aiosqlite.Connection) -> None:
        for message_id in message_ids:
            rows = list(
                await conn.execute_fetchall("SELECT data FROM messages WHERE id = ?", (message_id,))
            )
            if not rows:
                continue
            text = _index_text_of(str(rows[0][0]))
            if text is not None:
                await _replace_index_text(conn, message_id, text)

    await database.transaction(op)


def repaired_index_text(message: Message) -> str | None:
    """The text to index for ``message`` when SQLite's own would not be valid UTF-8, else None.

    The index trigger takes ``json_extract(data, '$.content')``, which turns the ``\\ud800``
    escape of a lone surrogate into bytes that are not UTF-8; every search whose snippet
    touched them failed. Such messages are indexed with U+FFFD in place of each surrogate.
    """
    content = getattr(message, "content", None)
    if isinstance(content, tuple):  # parts: the trigger indexed their JSON; index their words
        return storable_text(index_text(content))
    if not isinstance(content, str):
        return None
    repaired = storable_text(content)
    return None if repaired is content else repaired


def _index_text_of(data: str) -> str | None:
    """:func:`repaired_index_text` for a stored row's JSON (None: nothing to repair)."""
    try:
        content = json.loads(data).get("content")
    except (ValueError, AttributeError):
        return None
    if isinstance(content, list):
        try:
            return storable_text(index_text(tuple(part_from_dict(raw) for raw in content)))
        except (ValueError, TypeError):
            return None
    return storable_text(content) if isinstance(content, str) else None


async def set_index_text(conn: aiosqlite.Connection, session_id: str, seq: int, text: str) -> None:
    """Index message ``seq`` of ``session_id`` by ``text`` instead of its content."""
    rows = list(
        await conn.execute_fetchall(
            "SELECT id FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
        )
    )
    if rows:
        await _replace_index_text(conn, int(rows[0][0]), text)


async def _replace_index_text(conn: aiosqlite.Connection, message_id: int, text: str) -> None:
    """The index reads its text from the view ``messages_text`` (schema 12): forget what it
    holds for the message (told exactly), keep ``text`` as its own, and index that. A message
    not indexed yet (schema 14) only gets its text: the batch that indexes it reads it."""
    await conn.execute(
        "INSERT INTO messages_fts(messages_fts, rowid, text) "
        "SELECT 'delete', id, text FROM messages_text "
        "WHERE id = ?1 AND ?1 <= (SELECT upto FROM messages_indexed)",
        (message_id,),
    )
    await conn.execute(
        "INSERT OR REPLACE INTO messages_index_text(id, text) VALUES (?, ?)", (message_id, text)
    )
    await conn.execute(
        "INSERT INTO messages_fts(rowid, text) SELECT ?1, ?2 "
        "WHERE ?1 <= (SELECT upto FROM messages_indexed)",
        (message_id, text),
    )


def is_utf8(data: bytes) -> bool:
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
