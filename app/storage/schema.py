"""The conversation database's schema: its tables, and the migrations that build them.

A database file carries our mark in ``PRAGMA application_id`` (:data:`APPLICATION_ID`) and its
schema version in ``PRAGMA user_version`` (:data:`SCHEMA_VERSION`, the number of migrations
applied). :mod:`app.storage.database` reads both before writing anything and applies the
missing steps of :data:`MIGRATIONS` in one transaction.

Tables: ``sessions`` and ``messages`` (the history, :mod:`app.storage.sqlite`), the app's records
beside it — ``running_requests``, ``drafts``, ``stop_records``, ``tool_states``,
``resume_dismissals`` (:mod:`app.storage.journal`) — ``session_settings``
(:mod:`app.storage.conversation_settings`), ``attachments`` (:mod:`app.storage.attachments`) and
the full-text index ``messages_fts`` (since schema 12 it reads the text it shows from the view
``messages_text``: the content, or the row of ``messages_index_text`` where the indexed text is
another; since schema 13 it indexes words' first 1-3 characters too; since schema 14 it is fed
in batches of 64 messages, ``messages_indexed`` marking how far; :mod:`app.storage.search`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

import aiosqlite

__all__ = [
    "APPLICATION_ID",
    "CONVERSATIONS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Schema",
    "ensure_session_row",
]


@dataclass(frozen=True, slots=True)
class Schema:
    """What :class:`~app.storage.database.Database` builds: the file's mark and its steps."""

    application_id: int
    #: Each entry upgrades the schema from version (index) to version (index + 1).
    migrations: tuple[tuple[str, ...], ...]

    @property
    def version(self) -> int:
        return len(self.migrations)


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
    (
        # Schema 6: the person dismissed the Resume bar for the interruption the conversation
        # ended with: the newest message's seq then (-1: none) and the resume word shown
        # (a ResumeKind or a BlockedReason). A newer message or stop record is a new one.
        """CREATE TABLE resume_dismissals (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            last_seq INTEGER NOT NULL,
            point TEXT NOT NULL,
            dismissed_at REAL NOT NULL
        )""",
    ),
    (
        # Schema 7: a conversation is a tree. Each message knows its parent (``parent_seq``;
        # NULL: a first message) and the conversation its current leaf (``leaf_seq``; NULL: the
        # empty branch). ``forked`` stays 0 while the history is one chain of every seq up to
        # the leaf, so reading a branch that never forked is a plain range over the index.
        # Today's linear histories become that chain: each message's parent is the one before.
        "ALTER TABLE messages ADD COLUMN parent_seq INTEGER",
        "ALTER TABLE sessions ADD COLUMN leaf_seq INTEGER",
        "ALTER TABLE sessions ADD COLUMN forked INTEGER NOT NULL DEFAULT 0",
        """UPDATE messages SET parent_seq = (
            SELECT MAX(p.seq) FROM messages p
            WHERE p.session_id = messages.session_id AND p.seq < messages.seq)""",
        """UPDATE sessions SET leaf_seq = (
            SELECT MAX(m.seq) FROM messages m WHERE m.session_id = sessions.id)""",
        "CREATE INDEX messages_children ON messages(session_id, parent_seq)",
        "DROP TRIGGER messages_count",
        # An appended message becomes the leaf; a parent other than the newest message forks.
        """CREATE TRIGGER messages_count AFTER INSERT ON messages BEGIN
            UPDATE sessions SET updated_at = NEW.created_at, message_count = message_count + 1,
                leaf_seq = NEW.seq,
                forked = forked OR NOT (NEW.parent_seq IS NEW.seq - 1
                                        OR (NEW.parent_seq IS NULL AND NEW.seq = 1))
            WHERE id = NEW.session_id;
        END""",
    ),
    (
        # Schema 8: a conversation's own setup (system prompt, provider profile, model and
        # parameters) as one JSON object (see app/storage/conversation_settings.py); NULL:
        # the defaults of Settings.
        "ALTER TABLE session_settings ADD COLUMN setup TEXT",
    ),
    (
        # Schema 9: attachments, stored once by the SHA-256 of their bytes; messages refer to
        # them by digest (see app/storage/attachments.py).
        """CREATE TABLE attachments (
            digest TEXT PRIMARY KEY,
            media_type TEXT NOT NULL,
            size INTEGER NOT NULL,
            data BLOB NOT NULL,
            created_at REAL NOT NULL
        )""",
    ),
    (
        # Schema 10: conversations pinned to the top of the sidebar (when; NULL: not pinned).
        "ALTER TABLE sessions ADD COLUMN pinned_at REAL",
    ),
    (
        # Schema 11: a stop record belongs to the branch it ended (the leaf then): switching
        # to another branch does not show a reason that is not its own. NULL (older records):
        # the history was linear, so the record is the current branch's.
        "ALTER TABLE stop_records ADD COLUMN leaf_seq INTEGER",
    ),
    (
        # Schema 12: cheaper appends (fewer pages written by each commit). The full-text index
        # no longer keeps its own copy of every message's text: it reads it from the messages
        # (external content, the view ``messages_text``). Its text is the message's content;
        # ``messages_index_text`` holds the few where it is not (a message of parts: its words
        # and attachments' names; a lone surrogate repaired), keyed by messages.id. Triggers
        # keep the index right on insert, delete and an update of a message's data. The
        # ``sessions_by_update`` index is dropped: every append rewrote a page of it, and the
        # list sorts its few rows (pinned first) without it. ``messages_children`` becomes
        # the partial ``messages_forks`` (below).
        "CREATE TABLE messages_index_text (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",
        # What the old index holds that is not the content (a row set by the store's repair).
        """INSERT INTO messages_index_text(id, text)
            SELECT f.rowid, f.text FROM messages_fts f JOIN messages m ON m.id = f.rowid
            WHERE f.text IS NOT COALESCE(
                CASE WHEN json_valid(m.data) THEN json_extract(m.data, '$.content') END, '')""",
        "DROP TRIGGER messages_fts_insert",
        "DROP TRIGGER messages_fts_delete",
        "DROP TABLE messages_fts",
        """CREATE VIEW messages_text(id, text) AS
            SELECT m.id, COALESCE(
                o.text, CASE WHEN json_valid(m.data) THEN json_extract(m.data, '$.content') END, '')
            FROM messages m LEFT JOIN messages_index_text o ON o.id = m.id""",
        """CREATE VIRTUAL TABLE messages_fts USING fts5(
            text, content = 'messages_text', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        )""",
        "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
        # A new message has no row in messages_index_text yet: its text is its content (the
        # store replaces it in the same transaction where that is not right).
        """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, text)
            VALUES (NEW.id, COALESCE(json_extract(NEW.data, '$.content'), ''));
        END""",
        # An external-content index forgets a row only when told its exact indexed text. A row
        # whose data is not JSON (damaged by hand) reads as '' everywhere, so it can go.
        """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', OLD.id,
                COALESCE((SELECT text FROM messages_index_text WHERE id = OLD.id),
                    CASE WHEN json_valid(OLD.data) THEN json_extract(OLD.data, '$.content') END,
                    ''));
            DELETE FROM messages_index_text WHERE id = OLD.id;
        END""",
        """CREATE TRIGGER messages_fts_update AFTER UPDATE OF data ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', OLD.id,
                COALESCE((SELECT text FROM messages_index_text WHERE id = OLD.id),
                    CASE WHEN json_valid(OLD.data) THEN json_extract(OLD.data, '$.content') END,
                    ''));
            DELETE FROM messages_index_text WHERE id = OLD.id;
            INSERT INTO messages_fts(rowid, text)
            VALUES (NEW.id, COALESCE(
                CASE WHEN json_valid(NEW.data) THEN json_extract(NEW.data, '$.content') END, ''));
        END""",
        "DROP INDEX sessions_by_update",
        # Children are found by parent through an index only where the parent is not the
        # message just before (a fork, or another version of a first message); the child
        # right after its parent is found by its seq. A linear append no longer writes a page
        # of this index.
        "DROP INDEX messages_children",
        """CREATE INDEX messages_forks ON messages(session_id, parent_seq)
            WHERE parent_seq IS NOT seq - 1""",
    ),
    (
        # Schema 13: the search index also keeps every word's first 1, 2 and 3 characters,
        # so the word being typed (searched as a prefix) is one lookup instead of a merge
        # of every word it starts: over 100,000 messages a two-letter prefix took ~2 s, now
        # ~30 ms. The index is ~2.4x larger; the triggers (schema 12) are unchanged.
        "DROP TABLE messages_fts",
        """CREATE VIRTUAL TABLE messages_fts USING fts5(
            text, content = 'messages_text', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2', prefix = '1 2 3'
        )""",
        "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
    ),
    (
        # Schema 14: the search index is fed in batches. FTS5 pays a fixed cost per
        # transaction that writes to it (a new segment, its structure record and the merges
        # after it: ~10 of the ~15 pages an append wrote, and ~40% of its CPU), whatever the
        # text. So an append no longer indexes its message: every 64th message's insert (by
        # id) indexes all those not yet indexed, in the same transaction, and a search first
        # indexes the few still waiting (:func:`app.storage.search.index_pending`). The
        # messages themselves are written and committed exactly as before.
        # ``messages_indexed.upto``: every message with ``id <= upto`` is in the index and
        # none above it. Deleting the newest messages lowers it (their ids can be reused).
        "CREATE TABLE messages_indexed (upto INTEGER NOT NULL)",
        "INSERT INTO messages_indexed(upto) SELECT COALESCE(MAX(id), 0) FROM messages",
        "DROP TRIGGER messages_fts_insert",
        """CREATE TRIGGER messages_fts_batch AFTER INSERT ON messages WHEN NEW.id % 64 = 0
        BEGIN
            INSERT INTO messages_fts(rowid, text) SELECT id, text FROM messages_text
                WHERE id > (SELECT upto FROM messages_indexed);
            UPDATE messages_indexed SET upto = (SELECT MAX(id) FROM messages);
        END""",
        "DROP TRIGGER messages_fts_delete",
        """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) SELECT 'delete', OLD.id,
                COALESCE((SELECT text FROM messages_index_text WHERE id = OLD.id),
                    CASE WHEN json_valid(OLD.data) THEN json_extract(OLD.data, '$.content') END,
                    '')
                WHERE OLD.id <= (SELECT upto FROM messages_indexed);
            DELETE FROM messages_index_text WHERE id = OLD.id;
            UPDATE messages_indexed SET upto = (SELECT COALESCE(MAX(id), 0) FROM messages)
                WHERE upto > (SELECT COALESCE(MAX(id), 0) FROM messages);
        END""",
        "DROP TRIGGER messages_fts_update",
        """CREATE TRIGGER messages_fts_update AFTER UPDATE OF data ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) SELECT 'delete', OLD.id,
                COALESCE((SELECT text FROM messages_index_text WHERE id = OLD.id),
                    CASE WHEN json_valid(OLD.data) THEN json_extract(OLD.data, '$.content') END,
                    '')
                WHERE OLD.id <= (SELECT upto FROM messages_indexed);
            DELETE FROM messages_index_text WHERE id = OLD.id;
            INSERT INTO messages_fts(rowid, text) SELECT NEW.id, COALESCE(
                CASE WHEN json_valid(NEW.data) THEN json_extract(NEW.data, '$.content') END, '')
                WHERE NEW.id <= (SELECT upto FROM messages_indexed);
        END""",
    ),
)
SCHEMA_VERSION: Final = len(MIGRATIONS)

#: The conversation database's schema.
CONVERSATIONS: Final = Schema(APPLICATION_ID, MIGRATIONS)


async def ensure_session_row(conn: aiosqlite.Connection, session_id: str) -> None:
    """Create the ``sessions`` row of ``session_id`` if it is missing (inside a transaction).

    Records about a conversation (a running marker, its workspace) may come before its first
    message, which would otherwise create the row (trigger ``messages_create_session``).
    """
    now = time.time()
    await conn.execute(
        "INSERT OR IGNORE INTO sessions(id, title, created_at, updated_at) VALUES (?, NULL, ?, ?)",
        (session_id, now, now),
    )
