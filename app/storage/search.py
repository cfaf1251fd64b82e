"""Finding text: the search over the full-text index, a page of conversations at a time.

:func:`search_page` answers what the person typed (every word; the last as a prefix) with the
conversations that have a matching message, newest match first, one hit each with a snippet,
``limit`` at a time: the page's :class:`SearchCursor` continues the same walk, so the pages
put together are exactly one longer search (:func:`search`). The index and its upkeep (text
SQLite can hold, the batches, repairs) are :mod:`app.storage.search_index`'s.
"""

from __future__ import annotations

import logging
import sqlite3
import weakref
from dataclasses import dataclass
from typing import Final

import aiosqlite

from ..errors import StorageBusyError, StorageFullError, StorageReadOnlyError
from .database import Database
from .search_index import (
    index_pending,
    is_utf8,
    repair_index,
    repaired_index_text,
    set_index_text,
    storable_text,
)

log = logging.getLogger(__name__)

__all__ = [
    "PAGE",
    "SCANNED",
    "SearchCursor",
    "SearchHit",
    "SearchPage",
    "fts_query",
    "index_pending",
    "repaired_index_text",
    "search",
    "search_page",
    "set_index_text",
    "storable_text",
]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A message matching a search: where it is and a snippet with the match in [brackets]."""

    session_id: str
    seq: int
    snippet: str


@dataclass(frozen=True, slots=True)
class SearchCursor:
    """Where the next page of a search starts: below message id ``below``, past the
    conversations already shown (``shown``), with ``scanned`` of the :data:`SCANNED` matches
    already looked through."""

    text: str
    below: int
    shown: frozenset[str]
    scanned: int


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of a search: its hits, and where the next starts (None: there is no more)."""

    hits: list[SearchHit]
    more: SearchCursor | None


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

#: How many conversations a page holds unless asked otherwise: the sidebar's first page (a
#: screenful, shown while the person types; the next comes when the list is scrolled to it).
PAGE: Final = 15

#: A last word longer than the prefix index ('1 2 3', schema 13) is looked up as the words it
#: starts, when they are at most this many (see _EXPANDED).
_CONTINUATIONS: Final = 16

_FIRST: Final = 2**63 - 1  # the id bound of a first page: every message

# Newest first, one hit per conversation: the newest matching message of each conversation,
# found by walking the index backwards (FTS5 stops where the walk stops). The hits come in the
# sidebar's own order (its conversations are listed newest first), as chat apps list what a
# search finds, and a long conversation full of the word does not take every place. The cost
# is bounded by ``SCANNED``, not by the history's size: a conversation whose newest match is
# older than the newest 2,000 matches is not shown.
# Relevance (bm25) was dropped on purpose: it needs every match's count before it can rank,
# which made a common word cost in proportion to the history (10x from 1k to 100k messages).
#
# The snippet is made only for each conversation's first (newest) row of the walk: CASE runs
# ``snippet()`` only when ``continuum_first_of`` (:class:`_FirstOf`, which remembers the sessions
# this search saw) says the row is the first of its session; every other row's is NULL, and a
# first row's never is. The walk (bounded by SCANNED) runs as a co-routine of the outer query,
# which keeps the first rows only and stops it at the ``limit``-th: no row past the last
# conversation shown is walked, joined or given a snippet, and only the hits reach Python.
# (SQLite neither flattens a subquery with a LIMIT into an outer query with a WHERE nor pushes
# that WHERE down into it, so the snippet is computed once per row, inside the walk.)
# A next page walks on below the last hit (FTS5 seeks to a rowid bound), with the sessions
# already shown given to _FirstOf as seen, and what is left of SCANNED.
# ?1 the query (MATCH), ?2 what is left of SCANNED, ?3 the limit, ?4 the highest id walked.
_WALK: Final = """
    SELECT id, session_id, seq, excerpt FROM (
        SELECT m.id AS id, m.session_id AS session_id, m.seq AS seq,
            CASE WHEN continuum_first_of(m.session_id) THEN
                CAST(COALESCE(snippet(messages_fts, 0, '[', ']', '…', 12), '') AS BLOB)
            END AS excerpt
        FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid
        WHERE messages_fts MATCH {match} AND messages_fts.rowid <= ?4
        ORDER BY messages_fts.rowid DESC LIMIT ?2
    ) WHERE excerpt IS NOT NULL LIMIT ?3
"""
_NEWEST: Final = _WALK.format(match="?1")

# A prefix longer than the prefix index is merged by SQLite 3.40's FTS5 from every word it
# starts, whole, before the walk starts, whatever the rowid bounds: ~1.8 ms for a word in half
# of 100,000 messages, in proportion to the history. So a last word of 4 or more letters and
# digits (ASCII: unicode61 only folds its case) is looked up as the words of the index it
# starts, OR-ed ('"the" "word" OR "the" "words"' ...: each with the words before it, since an
# explicit AND finds nothing beside a word of no letters, which the implicit one ignores), and
# FTS5 walks that lazily. The words are listed from ``temp.continuum_terms`` (fts5vocab,
# 'instance'), one seek each to the first instance of the next word (the 'row' kind counts a
# word's every match first, which costs as much as the merge); more than _CONTINUATIONS: the
# prefix, as before. The same statement lists them: the index's words in the walk's snapshot.
# ?5 the words before the last, quoted, each followed by a space, ?6 the last word (folded),
# ?7 it + U+10FFFF, ?8 the most words to list. A message holding two of these words may get
# another fragment as its snippet than the prefix's (each word counts as a phrase when
# fragments are scored); the words marked are the same.
_EXPANDED: Final = _WALK.format(
    match="""(
        WITH RECURSIVE words(word, n) AS (
            SELECT (SELECT term FROM temp.continuum_terms
                WHERE term >= ?6 || char(1) AND term <= ?7 LIMIT 1), 1
            UNION ALL
            SELECT (SELECT term FROM temp.continuum_terms
                WHERE term >= words.word || char(1) AND term <= ?7 LIMIT 1), n + 1
            FROM words WHERE words.word IS NOT NULL AND n <= ?8
        )
        SELECT CASE WHEN count(word) > ?8 THEN ?1 ELSE
            ?5 || '"' || ?6 || '"' || COALESCE(
                group_concat(' OR ' || ?5 || '"' || replace(word, '"', '""') || '"', ''), '')
        END FROM words
    )"""
)
_TERMS: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.continuum_terms "
    "USING fts5vocab(main, messages_fts, instance)"
)


def _statement(text: str, query: str) -> tuple[str, tuple[object, ...]]:
    """The walk's statement for ``text`` (its FTS5 ``query``) and its parameters after ?4:
    :data:`_EXPANDED` for a last word of 4 or more ASCII letters and digits, else the prefix."""
    words = [w for w in storable_text(text).replace("\x00", " ").split() if w.strip('"')]
    last = words[-1].lower() if words else ""
    if len(last) <= 3 or not (last.isascii() and last.isalnum()):
        return _NEWEST, ()
    before = "".join('"' + w.replace('"', '""') + '" ' for w in words[:-1])
    return _EXPANDED, (before, last, last + "\U0010ffff", _CONTINUATIONS)


class _FirstOf:
    """``continuum_first_of``: 1 the first time a search gives it a session id, else 0.

    Registered once per connection (SQLite refuses to replace a function while a statement of
    the connection is running, and a replacement re-prepares its cached statements); each
    search starts it afresh with :meth:`reset` (given the sessions a previous page showed),
    under the database's lock. ``walked`` counts the rows it was asked about."""

    def __init__(self) -> None:
        self._seen: set[object] = set()
        self.walked = 0

    def reset(self, seen: frozenset[str] = frozenset()) -> None:
        self._seen = set(seen)
        self.walked = 0

    def __call__(self, session_id: object) -> int:
        self.walked += 1
        if session_id in self._seen:
            return 0
        self._seen.add(session_id)
        return 1


# The function of each open connection (a connection opened again registers it again), and
# the connections that have ``temp.continuum_terms``.
_REGISTERED: weakref.WeakKeyDictionary[aiosqlite.Connection, _FirstOf] = weakref.WeakKeyDictionary()
_WITH_TERMS: weakref.WeakSet[aiosqlite.Connection] = weakref.WeakSet()


async def _first_of(conn: aiosqlite.Connection, seen: frozenset[str]) -> _FirstOf:
    """``conn``'s ``continuum_first_of``, registered on first use, started afresh."""
    first_of = _REGISTERED.get(conn)
    if first_of is None:
        first_of = _REGISTERED[conn] = _FirstOf()
        await conn.create_function("continuum_first_of", 1, first_of)
    first_of.reset(seen)
    return first_of


async def _has_terms(conn: aiosqlite.Connection) -> bool:
    """Whether ``conn`` has ``temp.continuum_terms``, made on first use. A connection that may
    not write (``PRAGMA query_only``) cannot make it: the search uses the prefix then."""
    if conn not in _WITH_TERMS:
        try:
            await conn.execute(_TERMS)
        except sqlite3.OperationalError as err:
            log.debug("search by prefix only: %s", err)
            return False
        _WITH_TERMS.add(conn)
    return True


async def search(database: Database, text: str, *, limit: int = 50) -> list[SearchHit]:
    """The conversations with a message matching ``text`` (all words; the last as a prefix),
    newest first: the newest matching message of each, up to ``limit`` conversations, among
    the newest :data:`SCANNED` matches."""
    return (await search_page(database, text, limit=limit)).hits


async def search_page(
    database: Database, text: str, *, limit: int = PAGE, after: SearchCursor | None = None
) -> SearchPage:
    """A page of :func:`search`: the next ``limit`` conversations after ``after`` (a previous
    page's ``more``, for the same ``text``), or the first ones."""
    query = fts_query(text)
    if query is None or limit <= 0 or (after is not None and after.scanned >= SCANNED):
        return SearchPage([], None)
    if after is not None and after.text != text:
        raise ValueError("a search cursor continues the search it came from")
    try:
        await index_pending(database)
    except (StorageFullError, StorageReadOnlyError, StorageBusyError) as err:
        # As for a repair (below): the search still runs, over every message but the newest
        # few not indexed yet, and the next search or append indexes them.
        log.warning("newest messages not indexed for search: %s", err)
    statement, extra = _statement(text, query)
    shown = after.shown if after is not None else frozenset()
    scanned = after.scanned if after is not None else 0
    params = (query, SCANNED - scanned, limit, after.below - 1 if after else _FIRST)
    walked = 0

    async def op(conn: aiosqlite.Connection) -> list[tuple[int, str, int, bytes]]:
        # The snippet as bytes: an index row written before lone surrogates were repaired
        # holds bytes that are not UTF-8, and decoding them must not fail the whole search.
        # One hop to the database thread: the statement stops by itself (see _WALK).
        nonlocal walked
        first_of = await _first_of(conn, shown)
        if statement is _NEWEST or await _has_terms(conn):
            rows = await conn.execute_fetchall(statement, (*params, *extra))
        else:
            rows = await conn.execute_fetchall(_NEWEST, params)
        walked = first_of.walked
        return [(int(r[0]), str(r[1]), int(r[2]), bytes(r[3])) for r in rows]

    rows = await database.read(op)
    broken = [row[0] for row in rows if not is_utf8(row[3])]
    if broken:
        try:
            await repair_index(database, broken)
        except (StorageFullError, StorageReadOnlyError, StorageBusyError) as err:
            # A search must not fail because its repair could not be written: the hits are
            # shown with U+FFFD anyway, and the repair is tried again by the next search.
            log.warning("search index repair not saved: %s", err)
        else:
            rows = await database.read(op)
    hits = [
        SearchHit(session_id, seq, bytes(snippet).decode("utf-8", "replace"))
        for _id, session_id, seq, snippet in rows
    ]
    more = None
    if len(rows) == limit and scanned + walked < SCANNED:
        shown = shown | {hit.session_id for hit in hits}
        more = SearchCursor(text, rows[-1][0], shown, scanned + walked)
    return SearchPage(hits, more)
