"""Deliberate bugs for the crash matrix's children, to prove the matrix can fail.

``CONTINUUM_MATRIX_MUTATION=NAME`` (set by ``python -m tests.crash.matrix --mutation NAME``)
makes :func:`apply_from_env` patch one production function, at runtime, in every process the
matrix starts (the killed one and the recovering ones) — never in the checking parent. Each
models a real bug the matrix once missed:

=====================  =====================================================================
``half_text``          the store saves every assistant text cut in half (``append`` and
                       ``append_many`` of :class:`app.storage.sqlite.SQLiteSessionStore`)
``drop_started``       the journal never records ``started`` for an approved tool
                       (:meth:`app.storage.journal.SessionJournal.set_tool_state` drops it), so
                       a tool killed while running still reads "awaiting approval"
``lost_parent``        tool results are saved as new first messages instead of after the
                       message that asked (:meth:`app.run_state.RunState._commit` forgets its
                       ``after``), so the conversation's chain breaks
``rerun_unanswered``   resume treats every unanswered call as never started, so it runs them
                       again (:meth:`app.services.AppServices.not_started_calls`)
=====================  =====================================================================
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Collection, Sequence
from typing import Any

ENV = "CONTINUUM_MATRIX_MUTATION"


def _half_text() -> None:
    from app.messages import AssistantMessage, Message
    from app.storage.sqlite import SQLiteSessionStore

    def halve(message: Message) -> Message:
        if isinstance(message, AssistantMessage):
            return dataclasses.replace(
                message, content=message.content[: len(message.content) // 2]
            )
        return message

    append, append_many = SQLiteSessionStore.append, SQLiteSessionStore.append_many

    async def halved_append(
        self: Any, session_id: str, request_id: str, message: Message, **options: Any
    ) -> int:
        return await append(self, session_id, request_id, halve(message), **options)

    async def halved_append_many(
        self: Any, session_id: str, request_id: str, messages: Sequence[Message], **options: Any
    ) -> list[int]:
        halved = [halve(m) for m in messages]
        return await append_many(self, session_id, request_id, halved, **options)

    SQLiteSessionStore.append = halved_append  # type: ignore[method-assign]
    SQLiteSessionStore.append_many = halved_append_many  # type: ignore[method-assign]


def _drop_started() -> None:
    from app.storage.journal import TOOL_STARTED, SessionJournal

    set_tool_state = SessionJournal.set_tool_state

    async def without_started(
        self: Any, session_id: str, call_id: str, state: str, **options: Any
    ) -> None:
        if state == TOOL_STARTED:
            return
        await set_tool_state(self, session_id, call_id, state, **options)

    SessionJournal.set_tool_state = without_started  # type: ignore[method-assign]


def _rerun_unanswered() -> None:
    from app.services import AppServices

    async def every_unanswered_call(self: Any, session_id: str) -> Collection[str]:
        status = await self.client.resume_status(session_id)
        return frozenset(c.id for c in getattr(status, "unanswered_tool_calls", ()))

    AppServices.not_started_calls = every_unanswered_call  # type: ignore[method-assign]


def _lost_parent() -> None:
    from app.messages import Message, ToolMessage
    from app.run_state import RunState

    commit = RunState._commit

    async def forgetting(self: Any, messages: Sequence[Message]) -> list[int]:
        if any(isinstance(m, ToolMessage) for m in messages):
            self.after = None
        return await commit(self, messages)

    RunState._commit = forgetting  # type: ignore[method-assign]


MUTATIONS: dict[str, Callable[[], None]] = {
    "lost_parent": _lost_parent,
    "half_text": _half_text,
    "drop_started": _drop_started,
    "rerun_unanswered": _rerun_unanswered,
}


def apply_from_env() -> str | None:
    """Apply the mutation named in :data:`ENV` (if any); returns its name."""
    name = os.environ.get(ENV) or None
    if name is not None:
        if name not in MUTATIONS:
            raise SystemExit(f"unknown {ENV}={name!r}; known: {', '.join(MUTATIONS)}")
        MUTATIONS[name]()
    return name
