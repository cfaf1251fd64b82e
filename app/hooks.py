"""Extensions: objects with optional async hooks around each request.

An extension may define any of ``before_run(ctx)``, ``on_message(ctx)`` (a new user message
arrived), ``after_run(ctx, reply)`` and ``on_error(ctx, error)``. On a resumed request there is
no new user message: ``on_message`` is not called and ``ctx.input_message`` is ``None``, while
``ctx.resume_kind`` says what the resume did. An extension with a ``storage`` attribute provides
the session store (e.g. :class:`~app.storage.SQLiteSessionExtension`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .messages import Message, UserMessage
from .resume import ResumeKind

__all__ = ["RunContext", "call_error_hooks", "call_hooks"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RunContext:
    """What a hook knows about the request it runs for."""

    session_id: str
    request_id: str
    input_message: UserMessage | None
    resume_kind: ResumeKind | None
    goal: str | None = None
    #: The message this request makes a new version of (an edited user message's seq, or
    #: the first message of a regenerated answer); ``None`` for a request after the leaf.
    new_version_of: int | None = None
    _history: Sequence[Message] = field(default=(), repr=False)

    def _bind(self, messages: Sequence[Message]) -> None:
        """Show ``messages`` (the runtime's live list, which only the runtime writes)."""
        self._history = messages

    @property
    def history(self) -> tuple[Message, ...]:
        """The session's messages as the runtime knows them now (a snapshot)."""
        return tuple(self._history)

    def turn_messages(self) -> tuple[Message, ...]:
        """The current turn: from the last user message to the end of the history."""
        history = self._history
        for index in range(len(history) - 1, -1, -1):
            if isinstance(history[index], UserMessage):
                return tuple(history[index:])
        return tuple(history)


async def call_hooks(extensions: Sequence[Any], name: str, *args: Any) -> None:
    """Await ``name(*args)`` on every extension that defines it, in order."""
    for extension in extensions:
        hook = getattr(extension, name, None)
        if hook is not None:
            await hook(*args)


async def call_error_hooks(
    extensions: Sequence[Any], ctx: RunContext, error: BaseException
) -> None:
    """Run ``on_error`` hooks; a failing hook is logged, never hides the original error."""
    for extension in extensions:
        hook = getattr(extension, "on_error", None)
        if hook is None:
            continue
        try:
            await hook(ctx, error)
        except Exception:
            log.exception("on_error hook of %r failed", type(extension).__name__)
