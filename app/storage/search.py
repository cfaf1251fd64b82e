"""Finding text: what SQLite can hold, the full-text index, and the search over it.

Python strings may hold lone surrogates (a broken paste), which have no UTF-8 form:
:func:`storable_text` repairs them for the short texts stored as plain columns, and a message
whose content has one is indexed with U+FFFD in its place (:func:`repaired_index_text`, applied
by the store's appends). Index rows written before that repair are fixed when a search meets
them (:func:`search`). The index itself (``messages_fts``, external content read from the view
``messages_text``, schema 12) is kept by triggers in :mod:`app.storage.schema`; a message
indexed by other text than its content has that text in ``messages_index_text``. A message
of parts (text, images, files) is indexed by its text and its attachments' names
(:func:`~app.parts.index_text`), never by the JSON of its parts nor a file's contents.

Since schema 14 the index is fed in batches: the messages above ``messages_indexed.upto`` (at
most 64, the newest) are not in it yet. A search indexes them first (:func:`index_pending`),
so it finds every saved message, as before; one that cannot write (a full disk, another
process holding the write lock) answers from the index as it is, without those few.
"""

from __future__ import annotations

import json
import logging
import weakref
from dataclasses import dataclass
from typing import Final

import aiosqlite

from ..errors import StorageBusyError, StorageFullError, StorageReadOnlyError
from ..messages import Message
from ..parts import index_text, part_from_dict
from .database import Database

log = logging.getLogger(__name__)

__all__ = [
    "SearchHit",
    "fts_query",
    "index_pending",
    "SCANNED",
    "repaired_index_text",
    "search",
    "set_index_text",
    "storable_text",
]


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


#: How many of the newest matching messages a search looks through for conversations.
SCANNED: Final = 2_000

# Newest first, one hit per conversation: the newest matching message of each conversation,
# found by walking the index backwards (FTS5 stops where the walk stops). The hits come in the
# sidebar's own order (its conversations are listed newest first), as chat apps list what a
# search finds, and a long conversation full of the word does not take every place. The cost
# is bounded by ``SCANNED``, not by the history's size: a conversation whose newest match is
# older than the newest 2,000 matches is not shown.
# Relevance (bm25) was dropped on purpose: it needs every match's count before it can rank,
# which made a common word cost in proportion to the history (10x from 1k to 100k messages).
# One cost stays proportional: a last word longer than the prefix index ('1 2 3') is merged
# from every word it starts by SQLite itself, whole, before the walk starts (~1.8 ms for a word
# in half of 100,000 messages, with SQLite 3.40: the merge ignores rowid bounds, and listing
# the words it starts through ``fts5vocab`` costs as much, since that counts every match).
#
# The snippet is made only for each conversation's first (newest) row of the walk: CASE runs
# ``snippet()`` only when ``continuum_first_of`` (:class:`_FirstOf`, which remembers the sessions
# this search saw) says the row is the first of its session; every other row's is NULL, and a
# first row's never is. The walk (bounded by SCANNED) runs as a co-routine of the outer query,
# which keeps the first rows only and stops it at the ``limit``-th: no row past the last
# conversation shown is walked, joined or given a snippet, and only the hits reach Python.
# (SQLite neither flattens a subquery with a LIMIT into an outer query with a WHERE nor pushes
# that WHERE down into it, so the snippet is computed once per row, inside the walk.)
# ?1 the query, ?2 SCANNED, ?3 the limit.
_NEWEST: Final = """
    SELECT id, session_id, seq, excerpt FROM (
        SELECT m.id AS id, m.session_id AS session_id, m.seq AS seq,
            CASE WHEN continuum_first_of(m.session_id) THEN
                CAST(COALESCE(snippet(messages_fts, 0, '[', ']', '…', 12), '') AS BLOB)
            END AS excerpt
        FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid
        WHERE messages_fts MATCH ?1 ORDER BY messages_fts.rowid DESC LIMIT ?2
    ) WHERE excerpt IS NOT NULL LIMIT ?3
"""


class _FirstOf:
    """``continuum_first_of``: 1 the first time a search gives it a session id, else 0.

    Registered once per connection (SQLite refuses to replace a function while a statement of
    the connection is running, and a replacement re-prepares its cached statements); each
    search starts it afresh with :meth:`reset`, under the database's lock."""

    def __init__(self) -> None:
        self._seen: set[object] = set()

    def reset(self) -> None:
        self._seen = set()

    def __call__(self, session_id: object) -> int:
        if session_id in self._seen:
            return 0
        self._seen.add(session_id)
        return 1


# The function of each open connection (a connection opened again registers it again).
_REGISTERED: weakref.WeakKeyDictionary[aiosqlite.Connection, _FirstOf] = weakref.WeakKeyDictionary()


async def _first_of(conn: aiosqlite.Connection) -> _FirstOf:
    """``conn``'s ``continuum_first_of``, registered on first use, started afresh."""
    first_of = _REGISTERED.get(conn)
    if first_of is None:
        first_of = _REGISTERED[conn] = _FirstOf()
        await conn.create_function("continuum_first_of", 1, first_of)
    first_of.reset()
    return first_of


async def search(database: Database, text: str, *, limit: int = 50) -> list[SearchHit]:
    """The conversations with a message matching ``text`` (all words; the last as a prefix),
    newest first: the newest matching message of each, up to ``limit`` conversations, among
    the newest :data:`SCANNED` matches."""
    query = fts_query(text)
    if query is None:
        return []
    try:
        await index_pending(database)
    except (StorageFullError, StorageReadOnlyError, StorageBusyError) as err:
        # As for a repair (below): the search still runs, over every message but the newest
        # few not indexed yet, and the next search or append indexes them.
        log.warning("newest messages not indexed for search: %s", err)

    async def op(conn: aiosqlite.Connection) -> list[tuple[int, str, int, bytes]]:
        # The snippet as bytes: an index row written before lone surrogates were repaired
        # holds bytes that are not UTF-8, and decoding them must not fail the whole search.
        # One hop to the database thread: the statement stops by itself (see _NEWEST).
        await _first_of(conn)
        rows = await conn.execute_fetchall(_NEWEST, (query, SCANNED, max(limit, 0)))
        return [(int(r[0]), str(r[1]), int(r[2]), bytes(r[3])) for r in rows]

    rows = await database.read(op)
    broken = [row[0] for row in rows if not _is_utf8(row[3])]
    if broken:
        try:
            await _repair_index(database, broken)
        except (StorageFullError, StorageReadOnlyError, StorageBusyError) as err:
            # A search must not fail because its repair could not be written: the hits are
            # shown with U+FFFD anyway, and the repair is tried again by the next search.
            log.warning("search index repair not saved: %s", err)
        else:
            rows = await database.read(op)
    return [
        SearchHit(session_id, seq, bytes(snippet).decode("utf-8", "replace"))
        for _id, session_id, seq, snippet in rows
    ]


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


async def _repair_index(database: Database, message_ids: list[int]) -> None:
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


def _is_utf8(data: bytes) -> bool:
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
