"""``SyncAgent``: the agent for blocking code (scripts, notebooks without a loop, threads).

It owns one event loop running in a background thread; every call hands a coroutine to that
loop and blocks for its result. ``stream`` returns a plain iterator of events that advances
the request only as events are consumed. Leaving a
``stream`` loop early, or an exception in it, cancels the request the same way Stop does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

from .agent import Agent, AgentRunConfig, ToolApprover
from .events import AgentEvent
from .messages import AssistantMessage, Message
from .model import Model
from .resume import ResumeBlocked, ResumePoint
from .tools import FunctionTool

__all__ = ["SyncAgent"]

T = TypeVar("T")


class SyncAgent:
    """A blocking wrapper over :class:`Agent` (same arguments as :meth:`Agent.create`)."""

    def __init__(
        self,
        model: Model,
        config: AgentRunConfig | None = None,
        *,
        tools: Sequence[Callable[..., Any] | FunctionTool] = (),
        extensions: Sequence[Any] = (),
        approve_tool: ToolApprover | None = None,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="continuum-sync-agent", daemon=True
        )
        self._thread.start()
        try:
            self.agent: Agent = self._call(
                Agent.create(
                    model, config, tools=tools, extensions=extensions, approve_tool=approve_tool
                )
            )
        except BaseException:
            self._stop_loop()
            raise

    def __enter__(self) -> SyncAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SyncAgent({self.agent!r})"

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self._thread:
            raise RuntimeError("SyncAgent cannot be called from inside its own event loop")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result()
        except BaseException:
            # Ctrl+C (or any exception) in the calling thread stops the request like Stop
            # does, instead of leaving it running on the background loop.
            if not future.done():
                future.cancel()
                concurrent.futures.wait([future], timeout=30)
            raise

    def run(self, text: str, *, goal: str | None = None) -> AssistantMessage:
        return self._call(self.agent.run(text, goal=goal))

    def resume(self, *, model: Model | None = None) -> AssistantMessage:
        return self._call(self.agent.resume(model=model))

    def resume_point(self) -> ResumePoint | None:
        return self._call(self.agent.resume_point())

    def resume_status(self) -> ResumePoint | ResumeBlocked:
        return self._call(self.agent.resume_status())

    def history(self) -> list[Message]:
        return self._call(self.agent.history())

    def stream(self, text: str, *, goal: str | None = None) -> Iterator[AgentEvent]:
        return self._iterate(lambda: self.agent.stream(text, goal=goal))

    def stream_resume(self, *, model: Model | None = None) -> Iterator[AgentEvent]:
        return self._iterate(lambda: self.agent.stream_resume(model=model))

    def _iterate(self, make: Callable[[], AsyncIterator[AgentEvent]]) -> Iterator[AgentEvent]:
        # Pull one event per step, so the request advances only as fast as it is consumed and
        # leaving the loop early closes it at that point (like Stop: nothing half-saved).
        events = make()
        finished = False
        try:
            while True:
                try:
                    event = self._call(_next(events))
                except StopAsyncIteration:
                    finished = True
                    return
                except BaseException:
                    finished = True
                    raise
                yield event
        finally:
            if not finished:
                close = getattr(events, "aclose", None)
                if close is not None:
                    self._call(close())

    def close(self) -> None:
        """Close the store and stop the loop thread."""
        if self._loop.is_closed():
            return
        try:
            self._call(self.agent.store.close())
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()


async def _next(events: AsyncIterator[AgentEvent]) -> AgentEvent:
    return await events.__anext__()
