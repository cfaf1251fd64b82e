"""Requests that always leave an explanation: :class:`RequestJournaling` wraps a request's
event stream so that, however it ends, the app can explain it at the next launch:

* before the first event: a cross-process lock on the conversation and a running marker;
* while streaming: the on-screen text saved as a draft, throttled;
* at the end: the stop reason in words (Stop pressed, connection dropped, the provider's
  message, output limit, ...; see :mod:`.failures`), the marker removed, the lock released.

Also here: how a request's tool list is assembled (:func:`merge_tools`, :func:`folder_tools`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from ..errors import ContinuumError, SessionBusyError, StorageError
from ..events import (
    AgentEvent,
    MessageSavedEvent,
    ModelStoppedEvent,
    RunCompletedEvent,
    TextDeltaEvent,
)
from ..locks import SessionLocks
from ..messages import AssistantMessage, StopReason
from ..storage.journal import SessionJournal
from ..tools import FunctionTool
from ..tools.workspace import Workspace, WorkspaceError
from .failures import ORDERLY_STOPS, describe_failure, is_expected, log_location, tell

__all__ = [
    "DRAFT_SAVE_INTERVAL",
    "RequestJournaling",
    "SessionLockedError",
    "folder_tools",
    "merge_tools",
    "relay",
]

log = logging.getLogger(__name__)

DRAFT_SAVE_INTERVAL = 0.5  # seconds between draft saves while streaming


class SessionLockedError(ContinuumError):
    """Another running Continuum is answering in this conversation."""

    def __init__(self) -> None:
        super().__init__(
            "This conversation is busy in another Continuum window. Finish or stop it there "
            "first, or close the other window; then try again."
        )


class RequestJournaling:
    """Runs each request under the conversation's lock and records how it ended."""

    def __init__(self, journal: SessionJournal, locks: SessionLocks, running: set[str]) -> None:
        self.journal = journal
        self.locks = locks
        #: Conversations with a request running in this process (shared with the facade).
        self.running = running

    async def tracked(
        self, session_id: str, make: Callable[[], AsyncIterator[AgentEvent]]
    ) -> AsyncIterator[AgentEvent]:
        # The window may already hold this conversation's lock (it holds it while the
        # conversation is open); then the lock stays after the request, else it is released.
        if session_id in self.running:
            # A second request here (a double click, Resume while running) must be refused
            # before it touches the journal: its cleanup would erase the live request's marker.
            raise SessionBusyError(session_id)
        held_before = self.locks.held(session_id)
        if not self.locks.acquire(session_id):
            raise SessionLockedError()
        self.running.add(session_id)
        journal = self.journal
        completed = False
        parts: list[str] = []
        saved_draft = False
        last_save = 0.0
        orderly_stop: StopReason | str | None = None
        try:
            await journal.clear_stop(session_id)
            await journal.clear_draft(session_id)
            await journal.mark_running(session_id, uuid.uuid4().hex)
            async with contextlib.aclosing(make()) as events:  # type: ignore[type-var]
                async for event in events:
                    if isinstance(event, TextDeltaEvent):
                        parts.append(event.text)
                        now = time.monotonic()
                        if now - last_save >= DRAFT_SAVE_INTERVAL:
                            last_save = now
                            await journal.save_draft(session_id, "".join(parts))
                            saved_draft = True
                    elif isinstance(event, MessageSavedEvent) and isinstance(
                        event.message, AssistantMessage
                    ):
                        parts.clear()  # that text is history now, not a draft
                        if saved_draft:
                            await journal.clear_draft(session_id)
                            saved_draft = False
                    elif isinstance(event, ModelStoppedEvent):
                        orderly_stop = event.stop_reason
                    elif isinstance(event, RunCompletedEvent):
                        stop = event.reply.stop_reason
                        orderly_stop = stop if stop in ORDERLY_STOPS else None
                        completed = True
                    yield event
            if orderly_stop is not None and orderly_stop in ORDERLY_STOPS:
                await journal.record_stop(session_id, *ORDERLY_STOPS[orderly_stop])
        except GeneratorExit:
            if not completed:  # the consumer left mid-request: that is a Stop
                await self.record_failure(session_id, asyncio.CancelledError(), parts)
            elif orderly_stop is not None and orderly_stop in ORDERLY_STOPS:
                await _journal_logged(
                    "record why the request stopped",
                    journal.record_stop(session_id, *ORDERLY_STOPS[orderly_stop]),
                )
            raise
        except BaseException as error:
            await self.record_failure(session_id, error, parts)
            raise
        finally:
            try:
                await _journal_logged(
                    "remove the running marker", journal.clear_running(session_id)
                )
            finally:  # even if a second Stop interrupts the line above
                self.running.discard(session_id)
                if not held_before:
                    self.locks.release(session_id)

    async def record_failure(self, session_id: str, error: BaseException, parts: list[str]) -> None:
        """Why the request stopped, and the text that was on screen (raises only if cancelled).

        An expected failure (Stop, provider, storage, ...) keeps its friendly words; a bug is
        logged with its traceback here and recorded as an internal error that names the log.
        """
        if not is_expected(error):
            log.error("request in %s failed with an internal error", session_id, exc_info=error)
        kind, message = describe_failure(error, log_at=log_location())
        # Separately, the small stop record first: when the disk is full, a large draft may
        # not fit, and the reason must still reach the Resume bar.
        await _journal_logged(
            "record why the request stopped", self.journal.record_stop(session_id, kind, message)
        )
        if parts:
            await _journal_logged(
                "keep the draft", self.journal.save_draft(session_id, "".join(parts))
            )


async def _journal_logged(what: str, write: Awaitable[object]) -> None:
    """A journal write on a path that is already ending: a failure is logged, not raised
    (storage errors say what happened; anything else with a traceback). Cancellation
    propagates."""
    try:
        await write
    except StorageError as error:
        log.warning("could not %s: %s", what, error)
    except Exception:
        log.exception("could not %s", what)


async def relay(
    open_stream: Callable[[], Awaitable[AsyncIterator[AgentEvent]]],
) -> AsyncIterator[AgentEvent]:
    """The events of the stream ``open_stream`` opens (when first iterated), closed after."""
    async with contextlib.aclosing(  # type: ignore[type-var]
        await open_stream()
    ) as events:
        async for event in events:
            yield event


AnyTool = Callable[..., Any] | FunctionTool


def merge_tools(own: Iterable[AnyTool], *others: Iterable[FunctionTool]) -> list[AnyTool]:
    """``own`` tools, then each of ``others`` whose name is not taken yet (the app's own
    tools win over same-named MCP or file tools)."""
    tools: list[AnyTool] = list(own)
    taken = {t.name for t in tools if isinstance(t, FunctionTool)}
    for group in others:
        for tool in group:
            if tool.name not in taken:
                taken.add(tool.name)
                tools.append(tool)
    return tools


def folder_tools(path: str | None, notify: Callable[[str], None] | None) -> list[FunctionTool]:
    """File tools for the folder ``path``; none (with a notice) if it is gone."""
    if path is None:
        return []
    try:
        return Workspace(path).tools()
    except (OSError, WorkspaceError):
        message = (
            f"The workspace folder {path} no longer exists or cannot be opened, so "
            "this answer has no file tools. Choose another folder in the "
            "Conversation menu."
        )
        log.info("workspace folder unavailable: %s", path)
        tell(notify, message)
        return []
