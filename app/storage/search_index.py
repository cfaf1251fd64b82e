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
idle (:func:`app.services.upkeep.tidy_search_index`, which the window runs: ``ui.upkeep``).
"""

from __future__ import annotations

import json
from typing import Final

import aiosqlite

from ..messages import Message
from ..parts import index_text, part_from_dict
from .database import Database

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


#: More segments than this, and :func:`tidy_index` merges them (when worth it, see
#: :data:`REWRITE_SHARE`). FTS5's own merging (four segments of a size into one) leaves
#: 1 + the base-4 digit sum of the batches since a whole merge: six after ~1,000 messages.
SEGMENTS_KEPT: Final = 6

#: A merge of every segment rewrites the largest one too, so it starts only once the others
#: hold this share of the largest one's pages: the index is rewritten once per ~2% of growth
#: (the merges write ~50 bytes per byte newly indexed, whatever the history's size; a rule on
#: the count alone rewrote a 1,000,000-message index every ~1,000 messages).
REWRITE_SHARE: Final = 0.02

#: Pages (~4 KB each) one step of :func:`tidy_index` asks FTS5 to write. FTS5 ends a step at
#: a word's end, so a word in every message (the prefix index's one-letter words) makes a
#: longer step: ~10-50 ms over 100,000 messages, and a write that arrives meanwhile (an
#: append) waits for it.
TIDY_PAGES: Final = 100

# Each segment's size: the shadow table %_idx holds a row per leaf page that starts a word,
# its page number doubled (the low bit is a flag), so the largest is about twice the pages.
# (An FTS5 without that table would fail here; the upkeep then only stops.)
_SEGMENTS: Final = (
    "SELECT count(*), COALESCE(SUM(size), 0), COALESCE(MAX(size), 0) "
    "FROM (SELECT MAX(pgno) AS size FROM messages_fts_idx GROUP BY segid)"
)
_MERGE: Final = "INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ?)"


async def tidy_index(
    database: Database,
    pages: int = TIDY_PAGES,
    *,
    first: bool = True,
    share: float = REWRITE_SHARE,
) -> bool:
    """One step of merging the full-text index's segments into one, in its own transaction;
    returns whether more steps are wanted (then call again with ``first=False``).

    A ``first`` step starts a merge of every segment, if there are more than
    :data:`SEGMENTS_KEPT` and the segments besides the largest hold ``share`` of its size:
    FTS5's ``merge`` command with a negative page count puts them all on one level and
    merges them. The next steps go on with that merge (a positive count: FTS5 takes the
    level being merged first, so segments saved meanwhile wait instead of making it start
    over). About ``pages`` pages are written per step. Each step is a whole transaction: an
    interrupted merge leaves a correct index, and FTS5's own merging on writes, or the next
    run (starting over, with whatever was added since), goes on with it. The search results
    never change, only how many segments a search walks."""

    async def shape(conn: aiosqlite.Connection) -> tuple[int, int, int]:
        rows = list(await conn.execute_fetchall(_SEGMENTS))
        count, total, largest = rows[0] if rows else (0, 0, 0)
        return int(count), int(total), int(largest)

    async def worth_it(conn: aiosqlite.Connection) -> bool:
        count, total, largest = await shape(conn)
        return count > SEGMENTS_KEPT and total - largest >= share * largest

    async def op(conn: aiosqlite.Connection) -> bool:
        if first and not await worth_it(conn):  # (another connection may have merged)
            return False
        before = conn.total_changes
        await conn.execute(_MERGE, (-max(1, pages) if first else max(1, pages),))
        # A step that merged wrote pages and the structure record; one that found nothing to
        # merge wrote at most that record.
        return conn.total_changes - before >= 2

    if first and not await database.read(worth_it):  # no write lock taken for nothing
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
