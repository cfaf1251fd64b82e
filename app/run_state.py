"""One request in flight: its identity, the session's messages as saved so far, and the one
way to add to them (:meth:`RunState.save`, which commits before the in-memory copy grows).

The hooks' :class:`~app.hooks.RunContext` reads the same messages; only the runtime writes them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from .events import AgentEvent, MessageSavedEvent
from .hooks import RunContext
from .messages import Message
from .storage.base import SessionStore

__all__ = ["RunState"]

log = logging.getLogger(__name__)


class RunState:
    """The running request's state; ``ctx`` is what hooks see of it."""

    def __init__(
        self,
        store: SessionStore,
        ctx: RunContext,
        history: list[Message],
        *,
        after: int | None,
    ) -> None:
        self.store = store
        self.ctx = ctx
        self.messages = history
        #: The seq of the newest message of this request's branch (``None``: none yet). Each
        #: save goes after it, so the request's messages stay one chain even if the person
        #: switches the conversation to another branch while it runs.
        self.after = after
        ctx._bind(history)

    @property
    def session_id(self) -> str:
        return self.ctx.session_id

    @property
    def request_id(self) -> str:
        return self.ctx.request_id

    def ends_with(self, message: Message) -> bool:
        """Whether ``message`` (this very object) is the last one saved."""
        return bool(self.messages) and self.messages[-1] is message

    async def save(self, messages: Sequence[Message]) -> list[AgentEvent]:
        """Commit ``messages`` together (all or none) and return their MESSAGE_SAVED events."""
        if not messages:
            return []
        task = asyncio.ensure_future(self._commit(messages))
        try:
            seqs = await asyncio.shield(task)
        except asyncio.CancelledError:
            # Stop during a commit: the commit completes (it is shielded); keep the in-memory
            # history in step with the database before letting the cancellation through.
            try:
                seqs = await task
            except Exception:
                log.exception(
                    "saving %d message(s) failed while the request was being stopped", len(messages)
                )
            else:
                self.after = seqs[-1]
                self.messages.extend(messages)
            raise
        self.after = seqs[-1]
        self.messages.extend(messages)
        return [MessageSavedEvent(m, s) for m, s in zip(messages, seqs, strict=True)]

    async def _commit(self, messages: Sequence[Message]) -> list[int]:
        if len(messages) == 1:
            seq = await self.store.append(
                self.session_id, self.request_id, messages[0], parent=self.after
            )
            return [seq]
        return await self.store.append_many(
            self.session_id, self.request_id, messages, parent=self.after
        )
