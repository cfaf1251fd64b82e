"""The conversation tree's queries: which messages make a branch, its versions, its leaf.

A conversation is a tree of messages (schema 7, :mod:`app.storage.schema`): each message has a
``parent_seq`` (``NULL`` for a first message) and the session a ``leaf_seq``, the newest message
of the branch the person is on (``NULL``: the empty branch, before any first message). A
message's children always have higher seqs than it has, since they were saved after it; so the
newest message under any message is a leaf.

While ``sessions.forked`` is 0 the branch to the leaf is every message with ``seq <= leaf_seq``:
the queries then read a plain range through the ``(session_id, seq)`` index, exactly as a linear
history did. Once a conversation forks they walk parent links instead, from the leaf up; a tail
of ``n`` messages still reads only ``n`` rows.

Each function takes an open connection and runs inside the caller's read or transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import aiosqlite

from .database import scalar

__all__ = [
    "CHILDREN",
    "Position",
    "TAIL_RANGE",
    "TAIL_UP",
    "Row",
    "as_row",
    "branch_data",
    "branch_rows",
    "leaf_under",
    "linear_branch_data",
    "position",
    "sibling_groups",
    "tail_rows",
    "validate_seq",
]

# Up from ``?2`` through the parent links (the (session_id, seq) index serves each step).
_UP: Final = """
    WITH RECURSIVE up(seq) AS (
        SELECT ?2 WHERE ?2 IS NOT NULL
        UNION ALL
        SELECT m.parent_seq FROM messages m JOIN up ON m.session_id = ?1 AND m.seq = up.seq
        WHERE m.parent_seq IS NOT NULL
        LIMIT ?3
    )
"""

_COLUMNS: Final = "m.seq, m.request_id, m.data, m.created_at, m.parent_seq"

# A tail of a branch that never forked: the index read backwards from the leaf. Of one that
# forked: ``n`` steps up the parent links. Either reads ``n`` rows, whatever the length of the
# conversation (tests check the query plans of both).
TAIL_RANGE: Final = (
    f"SELECT {_COLUMNS} FROM messages m WHERE m.session_id = ?1 AND m.seq <= ?2 "
    "ORDER BY m.seq DESC LIMIT ?3"
)
TAIL_UP: Final = (
    _UP + f"SELECT {_COLUMNS} FROM up JOIN messages m ON m.session_id = ?1 AND m.seq = up.seq "
    "ORDER BY m.seq DESC"
)

# Down from ``?2`` to every message under it. A child is either the message right after its
# parent (found by its seq) or one in the partial index ``messages_forks`` (schema 12), whose
# condition the second step repeats word for word so that SQLite uses it.
CHILDREN: Final = """
    WITH RECURSIVE down(seq) AS (
        SELECT ?2
        UNION ALL
        SELECT m.seq FROM messages m JOIN down
            ON m.session_id = ?1 AND m.seq = down.seq + 1 AND m.parent_seq = down.seq
        UNION ALL
        SELECT m.seq FROM messages m JOIN down ON m.session_id = ?1 AND m.parent_seq = down.seq
            WHERE m.parent_seq IS NOT m.seq - 1
    )
"""

Row = tuple[int, str, str, float, int | None]


@dataclass(frozen=True, slots=True)
class Position:
    """Where a conversation is: its current leaf and whether it ever forked."""

    leaf: int | None
    forked: bool


async def position(conn: aiosqlite.Connection, session_id: str) -> Position:
    rows = list(
        await conn.execute_fetchall(
            "SELECT leaf_seq, forked FROM sessions WHERE id = ?", (session_id,)
        )
    )
    if not rows:
        return Position(None, False)
    leaf, forked = rows[0]
    return Position(None if leaf is None else int(leaf), bool(forked))


async def branch_rows(
    conn: aiosqlite.Connection,
    session_id: str,
    leaf: int | None,
    forked: bool,
    *,
    after_seq: int = 0,
    limit: int | None = None,
) -> list[Row]:
    """The messages from the first one down to ``leaf``, oldest first (``seq > after_seq``)."""
    if leaf is None:
        return []
    if not forked:
        rows = await conn.execute_fetchall(
            f"SELECT {_COLUMNS} FROM messages m WHERE m.session_id = ? AND m.seq > ? "
            "AND m.seq <= ? ORDER BY m.seq LIMIT ?",
            (session_id, after_seq, leaf, -1 if limit is None else limit),
        )
    else:
        rows = await conn.execute_fetchall(
            _UP + f"SELECT {_COLUMNS} FROM up JOIN messages m ON m.session_id = ?1 "
            "AND m.seq = up.seq WHERE m.seq > ?4 ORDER BY m.seq LIMIT ?5",
            (session_id, leaf, -1, after_seq, -1 if limit is None else limit),
        )
    return [as_row(r) for r in rows]


async def branch_data(
    conn: aiosqlite.Connection, session_id: str, leaf: int | None, forked: bool
) -> list[tuple[int, str]]:
    """``(seq, data)`` of every message from the first one down to ``leaf``, oldest first:
    what a whole load needs, and nothing more (the hot path of opening a conversation)."""
    if leaf is None:
        return []
    if not forked:
        rows = await conn.execute_fetchall(
            "SELECT seq, data FROM messages WHERE session_id = ? AND seq <= ? ORDER BY seq",
            (session_id, leaf),
        )
    else:
        rows = await conn.execute_fetchall(
            _UP + "SELECT m.seq, m.data FROM up JOIN messages m ON m.session_id = ?1 "
            "AND m.seq = up.seq ORDER BY m.seq",
            (session_id, leaf, -1),
        )
    return rows  # type: ignore[return-value]  # (INTEGER, TEXT NOT NULL) columns


# The current branch of a conversation that never forked, its leaf read by the same statement
# (one thread hop), only the data (a seq per row costs ~15% more): in such a branch the n-th
# row is seq n. No rows when it forked, or has no messages.
_LINEAR_DATA: Final = """
    SELECT data FROM messages WHERE session_id = ?1
        AND seq <= (SELECT leaf_seq FROM sessions WHERE id = ?1 AND NOT forked)
    ORDER BY seq
"""


async def linear_branch_data(conn: aiosqlite.Connection, session_id: str) -> list[tuple[str]]:
    """``(data,)`` of the current branch's messages, oldest first, if the conversation never
    forked (the n-th is seq n); else none (see :func:`position` and :func:`branch_data`).
    The hot path of opening a conversation."""
    return await conn.execute_fetchall(_LINEAR_DATA, (session_id,))  # type: ignore[return-value]


async def tail_rows(
    conn: aiosqlite.Connection, session_id: str, leaf: int | None, forked: bool, n: int
) -> list[Row]:
    """The last ``n`` messages of the branch ending at ``leaf``, newest first.

    Reads only those rows: a range read backwards, or ``n`` steps up the parent links."""
    if leaf is None or n <= 0:
        return []
    if not forked:
        rows = await conn.execute_fetchall(TAIL_RANGE, (session_id, leaf, n))
    else:
        rows = await conn.execute_fetchall(TAIL_UP, (session_id, leaf, n))
    return [as_row(r) for r in rows]


async def validate_seq(conn: aiosqlite.Connection, session_id: str, seq: int) -> int | None:
    """``seq``'s parent; :class:`LookupError` when the conversation has no message ``seq``."""
    async with conn.execute(
        "SELECT parent_seq FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
    ) as cursor:
        row = await cursor.fetchone()
    if row is None:
        raise LookupError(f"The conversation has no message {seq}.")
    return None if row[0] is None else int(row[0])


async def leaf_under(conn: aiosqlite.Connection, session_id: str, seq: int) -> int:
    """The newest message in the subtree of ``seq`` (``seq`` itself when it has no children):
    the branch a person last wrote in, below that message."""
    await validate_seq(conn, session_id, seq)
    newest = await scalar(
        conn,
        CHILDREN + " SELECT MAX(seq) FROM down",
        (session_id, seq),
    )
    return int(newest)


async def sibling_groups(conn: aiosqlite.Connection, session_id: str) -> list[tuple[int, ...]]:
    """Every set of two or more messages that share a parent (the versions of one message),
    each in the order they were written. Nothing to read for a conversation that never forked."""
    if not (await position(conn, session_id)).forked:
        return []
    rows = await conn.execute_fetchall(
        """SELECT COALESCE(parent_seq, 0), seq FROM messages
           WHERE session_id = ?1 AND COALESCE(parent_seq, 0) IN (
               SELECT COALESCE(parent_seq, 0) FROM messages WHERE session_id = ?1
               GROUP BY COALESCE(parent_seq, 0) HAVING COUNT(*) > 1)
           ORDER BY 1, 2""",
        (session_id,),
    )
    groups: dict[int, list[int]] = {}
    for parent, seq in rows:
        groups.setdefault(int(parent), []).append(int(seq))
    return [tuple(g) for g in groups.values()]


def as_row(r: Sequence[Any]) -> Row:
    """A fetched ``seq, request_id, data, created_at, parent_seq`` row, typed."""
    parent = r[4]
    return (int(r[0]), str(r[1]), str(r[2]), float(r[3]), None if parent is None else int(parent))
