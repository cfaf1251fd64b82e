"""What a session store is (:class:`SessionStore`), and the in-memory one.

The runtime needs little from a store: append a message (durably, when it completes), read the
tail, load the history. The SQLite store (:mod:`app.storage.sqlite`) is the durable one; the
in-memory store serves library users who do not need persistence.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..messages import Message

__all__ = [
    "InMemorySessionStore",
    "SessionInfo",
    "SessionStore",
    "StoredMessage",
    "increasing_time",
    "new_session_id",
]


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


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message with where and when it was saved."""

    seq: int
    request_id: str
    message: Message
    created_at: float


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

    async def append(self, session_id: str, request_id: str, message: Message) -> int: ...

    async def append_many(
        self, session_id: str, request_id: str, messages: Sequence[Message]
    ) -> list[int]: ...

    async def load(self, session_id: str) -> list[Message]: ...

    async def load_records(
        self, session_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredMessage]: ...

    async def tail(self, session_id: str, n: int) -> list[Message]: ...

    async def list_sessions(self) -> list[SessionInfo]: ...

    async def rename_session(self, session_id: str, title: str | None) -> None: ...

    async def delete_session(self, session_id: str) -> bool: ...

    async def close(self) -> None: ...


class InMemorySessionStore:
    """A store that keeps everything in this process (lost when it exits)."""

    def __init__(self) -> None:
        self._sessions: dict[str, SessionInfo] = {}
        self._messages: dict[str, list[StoredMessage]] = {}
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

    async def append(self, session_id: str, request_id: str, message: Message) -> int:
        return (await self.append_many(session_id, request_id, [message]))[0]

    async def append_many(
        self, session_id: str, request_id: str, messages: Sequence[Message]
    ) -> list[int]:
        if not messages:  # like the SQLite store: nothing to save creates nothing
            return []
        info = await self.create_session(session_id)
        rows = self._messages[session_id]
        now = increasing_time()
        seqs = []
        for message in messages:
            seq = len(rows) + 1
            rows.append(StoredMessage(seq, request_id, message, now))
            seqs.append(seq)
        self._sessions[session_id] = SessionInfo(
            info.id, info.title, info.created_at, now, len(rows)
        )
        return seqs

    async def load(self, session_id: str) -> list[Message]:
        return [r.message for r in self._messages.get(session_id, [])]

    async def load_records(
        self, session_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredMessage]:
        rows = [r for r in self._messages.get(session_id, []) if r.seq > after_seq]
        return rows if limit is None else rows[:limit]

    async def tail(self, session_id: str, n: int) -> list[Message]:
        rows = self._messages.get(session_id, [])
        return [r.message for r in rows[-n:]] if n > 0 else []

    async def list_sessions(self) -> list[SessionInfo]:
        return sorted(self._sessions.values(), key=lambda s: s.updated_at, reverse=True)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        info = self._sessions.get(session_id)
        if info is not None:
            self._sessions[session_id] = SessionInfo(
                info.id, title, info.created_at, info.updated_at, info.message_count
            )

    async def delete_session(self, session_id: str) -> bool:
        self._messages.pop(session_id, None)
        return self._sessions.pop(session_id, None) is not None

    async def close(self) -> None:
        return None
