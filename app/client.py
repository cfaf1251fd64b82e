"""``AgentClient``: one object over one store serving many sessions (what the desktop app uses)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from typing import Any

from .agent import Agent, AgentRunConfig, ToolApprover, find_store, read_resume_status
from .events import AgentEvent
from .messages import AssistantMessage, Message
from .model import Model
from .parts import Content
from .resume import ResumeBlocked, ResumePoint
from .storage.base import InMemorySessionStore, SessionInfo, SessionStore, StoredMessage
from .tools import FunctionTool

__all__ = ["AgentClient"]


class AgentClient:
    """Run and resume requests on any session of one store.

    ``defaults`` gives the settings every session's requests use (its ``session_id`` is
    replaced per call). ``model`` may be changed at any time (e.g. from a model picker); a
    call can also pass its own.
    """

    def __init__(
        self,
        model: Model,
        *,
        extensions: Sequence[Any] = (),
        store: SessionStore | None = None,
        tools: Sequence[Callable[..., Any] | FunctionTool] = (),
        defaults: AgentRunConfig | None = None,
        approve_tool: ToolApprover | None = None,
    ) -> None:
        self.model = model
        self.extensions = tuple(extensions)
        self.store: SessionStore = store or find_store(extensions) or InMemorySessionStore()
        self.tools = tuple(tools)
        self.defaults = defaults or AgentRunConfig("default")
        self.approve_tool = approve_tool

    def __repr__(self) -> str:
        return f"AgentClient(model={getattr(self.model, 'name', '?')!r}, store={self.store!r})"

    async def open(self) -> None:
        """Open the store now (surfacing a damaged or too-new database early)."""
        opener = getattr(self.store, "open", None)
        if opener is not None:
            await opener()

    def agent(
        self,
        session_id: str,
        *,
        model: Model | None = None,
        tools: Sequence[Callable[..., Any] | FunctionTool] | None = None,
    ) -> Agent:
        """An agent for one request; ``tools`` (default: :attr:`tools`) replaces the set."""
        config = dataclasses.replace(self.defaults, session_id=session_id)
        return Agent(
            model or self.model,
            config,
            tools=self.tools if tools is None else tools,
            extensions=self.extensions,
            store=self.store,
            approve_tool=self.approve_tool,
        )

    # --- reading ------------------------------------------------------------------------------

    async def resume_point(self, session_id: str) -> ResumePoint | None:
        outcome = await read_resume_status(self.store, session_id)
        return outcome if isinstance(outcome, ResumePoint) else None

    async def resume_status(self, session_id: str) -> ResumePoint | ResumeBlocked:
        """The resume point, or the reason word (and sentence) when there is none."""
        return await read_resume_status(self.store, session_id)

    async def history(self, session_id: str) -> list[Message]:
        """The current branch's messages, oldest first."""
        return await self.store.load(session_id)

    async def branch(self, session_id: str) -> list[StoredMessage]:
        """The current branch's records (with their seqs), oldest first."""
        return await self.store.load_records(session_id)

    async def versions(self, session_id: str) -> list[tuple[int, ...]]:
        """Each group of messages that are versions of one another (they share a parent)."""
        return await self.store.versions(session_id)

    async def select_branch(self, session_id: str, seq: int) -> int:
        """Show the branch through message ``seq`` (down to the newest message under it);
        returns its leaf. Resume then applies to that branch."""
        return await self.store.select_branch(session_id, seq)

    async def list_sessions(self) -> list[SessionInfo]:
        return await self.store.list_sessions()

    async def create_session(
        self, session_id: str | None = None, title: str | None = None
    ) -> SessionInfo:
        return await self.store.create_session(session_id, title)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        await self.store.rename_session(session_id, title)

    async def delete_session(self, session_id: str) -> bool:
        return await self.store.delete_session(session_id)

    # --- running ------------------------------------------------------------------------------

    def stream(
        self, session_id: str, text: str, *, model: Model | None = None, goal: str | None = None
    ) -> AsyncIterator[AgentEvent]:
        return self.agent(session_id, model=model).stream(text, goal=goal)

    def stream_resume(
        self, session_id: str, *, model: Model | None = None, not_started: Collection[str] = ()
    ) -> AsyncIterator[AgentEvent]:
        return self.agent(session_id).stream_resume(model=model, not_started=not_started)

    def stream_edit(
        self, session_id: str, seq: int, text: str | Content, *, model: Model | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Send ``text`` as a new version of user message ``seq`` (:meth:`Agent.stream_edit`)."""
        return self.agent(session_id, model=model).stream_edit(seq, text)

    def stream_regenerate(
        self, session_id: str, seq: int, *, model: Model | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Answer again the question message ``seq`` belongs to, as a new version."""
        return self.agent(session_id).stream_regenerate(seq, model=model)

    async def run(
        self, session_id: str, text: str, *, model: Model | None = None, goal: str | None = None
    ) -> AssistantMessage:
        return await self.agent(session_id, model=model).run(text, goal=goal)

    async def resume(
        self, session_id: str, *, model: Model | None = None, not_started: Collection[str] = ()
    ) -> AssistantMessage:
        return await self.agent(session_id).resume(model=model, not_started=not_started)

    async def close(self) -> None:
        await self.store.close()
