"""What a session store is (:class:`SessionStore`), and the in-memory one.

The runtime needs little from a store: append a message (durably, when it completes), read the
tail, load the history. The SQLite store (:mod:`app.storage.sqlite`) is the durable one; the
in-memory store serves library users who do not need persistence.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final, Protocol, runtime_checkable

from ..messages import Message

__all__ = [
    "LEAF",
    "InMemorySessionStore",
    "Leaf",
    "SessionInfo",
    "SessionStore",
    "StoredMessage",
    "increasing_time",
    "listing_order",
    "new_session_id",
]


class Leaf(Enum):
    """Where an append goes by default: after the conversation's current leaf."""

    CURRENT = "current"


#: ``parent=LEAF``: append after the current leaf (the default).
LEAF: Final = Leaf.CURRENT

#: What an append may follow: a message's seq, ``None`` (a new first message), or the leaf.
Parent = int | None | Leaf


def new_session_id() -> str:
    return uuid.uuid4().hex


_clock_lock = threading.Lock()
_last_time = 0.0


def increasing_time() -> float:
    """``time.time()``, but strictly increasing within this process.

    Sessions are listed newest first by their update time; the wall clock can return the same
    value twice (it ticks every ~16 ms on Windows) or step back, which would list two sessions
    updated one after the other in the wrong order.
    """
    global _last_time
    with _clock_lock:
        now = time.time()
        if now <= _last_time:
            now = _last_time + 1e-6
        _last_time = now
        return now


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One conversation as listed in a sidebar."""

    id: str
    title: str | None
    created_at: float
    updated_at: float
    message_count: int
    #: When it was pinned to the top of the sidebar (``None``: not pinned).
    pinned_at: float | None = None


def listing_order(info: SessionInfo) -> tuple[bool, float, float, str]:
    """The sort key of the sidebar's order: pinned first (most recently pinned first), then
    the rest most recently updated first (the SQLite store's ``ORDER BY`` says the same)."""
    pinned = info.pinned_at is not None
    return (not pinned, -(info.pinned_at or 0.0), -info.updated_at, info.id)


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message with where and when it was saved."""

    seq: int
    request_id: str
    message: Message
    created_at: float
    #: The message this one follows in the conversation tree (``None``: a first message).
    parent_seq: int | None = None


@runtime_checkable
class SessionStore(Protocol):
    """The durable history of many sessions. Messages are ordered by a per-session sequence."""

    @property
    def lock_key(self) -> str:
        """Identifies the underlying data, so two store objects on one file share busy locks."""
        ...

    async def create_session(
        self, session_id: str | None = None, title: str | None = None
    ) -> SessionInfo: ...

    async def get_session(self, session_id: str) -> SessionInfo | None: ...

    async def append(
        self, session_id: str, request_id: str, message: Message, *, parent: Parent = LEAF
    ) -> int:
        """Commit one message after ``parent`` (by default the current leaf); it becomes the
        leaf. Returns its sequence number."""
        ...

    async def append_many(
        self,
        session_id: str,
        request_id: str,
        messages: Sequence[Message],
        *,
        parent: Parent = LEAF,
    ) -> list[int]: ...

    async def load(self, session_id: str) -> list[Message]:
        """The current branch, oldest first."""
        ...

    async def load_records(
        self, session_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredMessage]:
        """The current branch's records with ``seq > after_seq``, oldest first."""
        ...

    async def load_branch(self, session_id: str, leaf: int | None) -> list[StoredMessage]:
        """The branch from the first message down to ``leaf`` (``None``: empty)."""
        ...

    async def tail(self, session_id: str, n: int) -> list[Message]:
        """The last ``n`` messages of the current branch, oldest first."""
        ...

    async def tail_records(
        self, session_id: str, n: int, *, before: int | None = None
    ) -> list[StoredMessage]:
        """The last ``n`` records of the current branch, oldest first; ``before``: the last
        ``n`` above message ``before`` (the part of the branch not yet read). Reads only
        those rows: a long conversation opens from its end."""
        ...

    async def leaf(self, session_id: str) -> int | None:
        """The current branch's newest message (``None``: no message)."""
        ...

    async def parent_of(self, session_id: str, seq: int) -> int | None:
        """The message ``seq`` follows; :class:`LookupError` when there is no message ``seq``."""
        ...

    async def select_branch(self, session_id: str, seq: int) -> int:
        """Make the branch through message ``seq`` current, down to the newest message under
        it; returns the new leaf. Nothing is deleted or changed but which branch is shown."""
        ...

    async def versions(self, session_id: str) -> list[tuple[int, ...]]:
        """Each group of messages sharing a parent (two or more), oldest first."""
        ...

    async def tree(self, session_id: str) -> list[StoredMessage]:
        """Every message of every branch, in the order they were saved."""
        ...

    async def list_sessions(self) -> list[SessionInfo]: ...

    async def rename_session(self, session_id: str, title: str | None) -> None: ...

    async def delete_session(self, session_id: str) -> bool: ...

    async def close(self) -> None: ...


class InMemorySessionStore:
    """A store that keeps everything in this process (lost when it exits)."""

    def __init__(self) -> None:
        self._sessions: dict[str, SessionInfo] = {}
        self._messages: dict[str, list[StoredMessage]] = {}
        self._leaves: dict[str, int | None] = {}
        self._key = f"memory:{uuid.uuid4().hex}"

    @property
    def lock_key(self) -> str:
        return self._key

    async def create_session(
        self, session_id: str | None = None, title: str | None = None
    ) -> SessionInfo:
        session_id = session_id or new_session_id()
        existing = self._sessions.get(session_id)
        if existing is not None:
            return existing
        now = increasing_time()
        info = SessionInfo(session_id, title, now, now, 0)
        self._sessions[session_id] = info
        self._messages[session_id] = []
        return info

    async def get_session(self, session_id: str) -> SessionInfo | None:
        return self._sessions.get(session_id)

    async def append(
        self, session_id: str, request_id: str, message: Message, *, parent: Parent = LEAF
    ) -> int:
        return (await self.append_many(session_id, request_id, [message], parent=parent))[0]

    async def append_many(
        self,
        session_id: str,
        request_id: str,
        messages: Sequence[Message],
        *,
        parent: Parent = LEAF,
    ) -> list[int]:
        if not messages:  # like the SQLite store: nothing to save creates nothing
            return []
        if isinstance(parent, int):
            self._record(session_id, parent)
        info = await self.create_session(session_id)
        rows = self._messages[session_id]
        after = self._leaves.get(session_id) if isinstance(parent, Leaf) else parent
        now = increasing_time()
        seqs = []
        for message in messages:
            seq = len(rows) + 1
            rows.append(StoredMessage(seq, request_id, message, now, after))
            seqs.append(seq)
            after = seq
        self._leaves[session_id] = seqs[-1]
        self._sessions[session_id] = SessionInfo(
            info.id, info.title, info.created_at, now, len(rows), info.pinned_at
        )
        return seqs

    async def load(self, session_id: str) -> list[Message]:
        return [r.message for r in await self.load_records(session_id)]

    async def load_records(
        self, session_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredMessage]:
        branch = await self.load_branch(session_id, self._leaves.get(session_id))
        rows = [r for r in branch if r.seq > after_seq]
        return rows if limit is None else rows[:limit]

    async def load_branch(self, session_id: str, leaf: int | None) -> list[StoredMessage]:
        branch: list[StoredMessage] = []
        seq = leaf
        while seq is not None:
            record = self._record(session_id, seq)
            branch.append(record)
            seq = record.parent_seq
        return branch[::-1]

    async def tail(self, session_id: str, n: int) -> list[Message]:
        rows = await self.load_records(session_id)
        return [r.message for r in rows[-n:]] if n > 0 else []

    async def tail_records(
        self, session_id: str, n: int, *, before: int | None = None
    ) -> list[StoredMessage]:
        leaf = self._leaves.get(session_id) if before is None else None
        if before is not None:
            leaf = self._record(session_id, before).parent_seq
        rows = await self.load_branch(session_id, leaf)
        return rows[-n:] if n > 0 else []

    async def leaf(self, session_id: str) -> int | None:
        return self._leaves.get(session_id)

    async def parent_of(self, session_id: str, seq: int) -> int | None:
        return self._record(session_id, seq).parent_seq

    async def select_branch(self, session_id: str, seq: int) -> int:
        self._record(session_id, seq)
        under = {seq}
        for record in self._messages[session_id]:  # children come after their parent
            if record.parent_seq in under:
                under.add(record.seq)
        self._leaves[session_id] = max(under)
        return max(under)

    async def versions(self, session_id: str) -> list[tuple[int, ...]]:
        groups: dict[int | None, list[int]] = {}
        for record in self._messages.get(session_id, []):
            groups.setdefault(record.parent_seq, []).append(record.seq)
        return [tuple(g) for g in groups.values() if len(g) > 1]

    async def tree(self, session_id: str) -> list[StoredMessage]:
        return list(self._messages.get(session_id, []))

    def _record(self, session_id: str, seq: int) -> StoredMessage:
        rows = self._messages.get(session_id, [])
        if not 1 <= seq <= len(rows):
            raise LookupError(f"The conversation has no message {seq}.")
        return rows[seq - 1]

    async def list_sessions(self) -> list[SessionInfo]:
        """Pinned ones first (most recently pinned first), then the rest newest first."""
        return sorted(self._sessions.values(), key=listing_order)

    async def pin_session(self, session_id: str, pinned: bool) -> None:
        """Pin a conversation to the top of the list (now), or unpin it."""
        info = self._sessions.get(session_id)
        if info is not None:
            when = increasing_time() if pinned else None
            self._sessions[session_id] = dataclasses.replace(info, pinned_at=when)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        info = self._sessions.get(session_id)
        if info is not None:
            self._sessions[session_id] = dataclasses.replace(info, title=title)

    async def delete_session(self, session_id: str) -> bool:
        self._messages.pop(session_id, None)
        self._leaves.pop(session_id, None)
        return self._sessions.pop(session_id, None) is not None

    async def close(self) -> None:
        return None
