"""``AppServices``: everything the desktop app needs from the core, behind one Qt-free facade.

It owns the data folder (one SQLite database, settings, lock files), the :class:`AgentClient`,
the provider model built from settings, the in-process simulator for "try it offline", and the
journal that records why requests stop. Its ``stream``/``stream_resume`` wrap the client's so
that every request, however it ends, leaves the app able to explain it at the next launch:

* before the first event: a cross-process lock on the conversation and a running marker;
* while streaming: the on-screen text saved as a draft, throttled;
* at the end: the stop reason in words (Stop pressed, connection dropped, the provider's
  message, output limit, ...), the marker removed, the lock released.

The UI only renders events and calls these methods; it never writes to the database itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from .. import export as _export
from ..agent import Agent, AgentRunConfig, ToolApprover
from ..client import AgentClient
from ..discovery import LocalServer, discover_local_servers
from ..errors import (
    AgentError,
    ContinuumError,
    IncompleteStreamError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
    SessionBusyError,
    StorageCorruptError,
    StorageError,
    ToolRoundLimitError,
)
from ..events import (
    AgentEvent,
    MessageSavedEvent,
    ModelStoppedEvent,
    RunCompletedEvent,
    TextDeltaEvent,
)
from ..locks import SessionLocks
from ..messages import AssistantMessage, Message, StopReason, ToolCall
from ..model import Model
from ..resume import ResumeBlocked, ResumePoint
from ..secrets import DEFAULT_KEY_ENV, get_api_key
from ..settings import Settings, load_settings, save_settings
from ..storage.base import SessionInfo
from ..storage.journal import (
    TOOL_AWAITING_APPROVAL,
    TOOL_STARTED,
    SessionJournal,
    StopKind,
    StopRecord,
)
from ..storage.reserve import RESERVE_FILE, DiskReserve
from ..storage.sqlite import SearchHit, SQLiteSessionExtension
from ..tools import FunctionTool
from ..tools.mcp import McpServerConfig, McpServerError, McpToolSource
from ..tools.workspace import Workspace, WorkspaceError

__all__ = [
    "DATABASE_FILE",
    "AppServices",
    "ApprovalDecision",
    "UIApprover",
    "ResumeInfo",
    "SessionLockedError",
    "describe_failure",
]

log = logging.getLogger(__name__)

DATABASE_FILE = "continuum.sqlite"
DRAFT_SAVE_INTERVAL = 0.5  # seconds between draft saves while streaming
MCP_CLOSE_TIMEOUT = 8.0  # seconds all MCP servers together may take to stop on close


class SessionLockedError(ContinuumError):
    """Another running Continuum is answering in this conversation."""

    def __init__(self) -> None:
        super().__init__(
            "This conversation is busy in another Continuum window. Finish or stop it there "
            "first, or close the other window; then try again."
        )


class ApprovalDecision(enum.StrEnum):
    """The person's answer to "may this tool run?"."""

    ALLOW_ONCE = "allow_once"
    ALLOW_CONVERSATION = "allow_conversation"  # this tool, for the rest of this conversation
    DENY = "deny"


UIApprover = Callable[[str, ToolCall, FunctionTool], Awaitable[ApprovalDecision]]
"""``(session_id, call, tool) -> decision``: asks the person (set by the window)."""


@dataclass(frozen=True, slots=True)
class ResumeInfo:
    """What the Resume bar needs for one conversation."""

    point: ResumePoint | None
    blocked_reason: str | None
    blocked_text: str | None
    stop: StopRecord | None
    draft: str | None
    #: Unanswered calls that were awaiting approval: they provably never started, and Resume
    #: asks again. The other unanswered calls of ``point`` may or may not have run.
    awaiting_approval: tuple[ToolCall, ...] = ()

    @property
    def resumable(self) -> bool:
        return self.point is not None

    @property
    def may_have_run(self) -> tuple[ToolCall, ...]:
        """Unanswered calls that had started (or were not asked about): never run again."""
        if self.point is None:
            return ()
        waiting = {c.id for c in self.awaiting_approval}
        return tuple(c for c in self.point.unanswered_tool_calls if c.id not in waiting)


def describe_failure(error: BaseException) -> tuple[StopKind, str]:
    """Why a request failed, in words for the Resume bar (never a traceback)."""
    if isinstance(error, asyncio.CancelledError):
        return StopKind.STOPPED, "You stopped this answer."
    if isinstance(error, ProviderContextLengthError):
        return StopKind.CONTEXT_FULL, f"The conversation no longer fits the model: {error}"
    if isinstance(error, ProviderTimeoutError):
        return StopKind.CONNECTION, f"The provider stopped responding: {error}"
    if isinstance(
        error,
        ProviderConnectionError | ProviderStreamError | IncompleteStreamError
        | httpx.TransportError | ConnectionError | TimeoutError,
    ):
        detail = str(error) or type(error).__name__
        return StopKind.CONNECTION, f"The connection to the provider dropped: {detail}"
    if isinstance(error, ProviderError):
        return StopKind.PROVIDER_ERROR, f"The provider reported an error: {error}"
    if isinstance(error, ToolRoundLimitError):
        return StopKind.TOOL_LIMIT, str(error)
    if isinstance(error, StorageError):
        return StopKind.STORAGE, str(error)
    if isinstance(error, AgentError):
        return StopKind.PROVIDER_ERROR, str(error)
    return StopKind.PROVIDER_ERROR, (
        f"The request failed unexpectedly ({type(error).__name__}: {error}). "
        "Resume to try again; if it keeps failing, check the provider settings."
    )


_ORDERLY_STOPS: dict[StopReason | str, tuple[StopKind, str]] = {
    StopReason.MAX_OUTPUT: (StopKind.OUTPUT_LIMIT, "The answer reached the model's output limit."),
    StopReason.REFUSAL: (StopKind.REFUSED, "The model refused to answer this request."),
    StopReason.CONTEXT_FULL: (
        StopKind.CONTEXT_FULL, "The conversation filled the model's context window."
    ),
    StopReason.PAUSED: (StopKind.PAUSED, "The provider paused the answer more times than allowed."),
}


class AppServices:
    """The desktop app's services over one data folder (see the module docstring)."""

    def __init__(self, data_dir: Path, *, model_factory: Callable[[Settings], Model] | None = None):
        self.data_dir = Path(data_dir)
        self._model_factory = model_factory
        loaded = load_settings(self.data_dir)
        self.settings = loaded.settings
        self.settings_problem = loaded.problem
        self.storage = SQLiteSessionExtension(self.data_dir / DATABASE_FILE)
        self.journal = SessionJournal(self.storage.storage)
        # The same lock files as the SQLite extension's request claims (and continuum-chat's).
        self.locks = SessionLocks.for_database(self.data_dir / DATABASE_FILE)
        self.client = AgentClient(_NoModel(), extensions=[self.storage],
                                  defaults=AgentRunConfig("default"))
        self._simulator: Any = None
        self._running: set[str] = set()
        #: Asks the person before a tool with side effects runs (the window sets it); without
        #: one such tools run unasked.
        self.approver: UIApprover | None = None
        #: Tool names allowed "for this conversation", per session (in memory only).
        self.allowed_tools: dict[str, set[str]] = {}
        #: Shows a person-facing message (the window sets it to its status bar).
        self.notify: Callable[[str], None] | None = None
        #: The running MCP servers and why configured ones did not start (person-facing).
        self.mcp_sources: list[McpToolSource] = []
        self.mcp_problems: list[str] = []
        self._mcp_configs: tuple[McpServerConfig, ...] = ()
        self._mcp_task: asyncio.Task[None] | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the database (raises :class:`StorageError` with a person-facing message) and
        turn the markers of requests that were running when the app died into stop records."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # Damage found while running: stop writing, keep the file aside, say so (issue 11).
        self.storage.storage.on_damaged = self._database_damaged
        await self.client.open()
        self.journal.reserve = DiskReserve(self.data_dir / RESERVE_FILE)
        self.journal.reserve.ensure()
        for marker in await self.journal.running_markers():
            if marker.session_id in self._running:
                continue
            if self.locks.is_locked_elsewhere(marker.session_id):
                continue  # another live Continuum is answering there right now
            stop = await self.journal.stop_record(marker.session_id)
            if stop is None or stop.created_at < marker.started_at:
                # (A stop record newer than the marker says why already: a full disk saved the
                # reason but had no room left to remove the marker.)
                started = time.strftime("%H:%M", time.localtime(marker.started_at))
                await self.journal.record_stop(
                    marker.session_id, StopKind.CRASHED,
                    "Continuum closed unexpectedly while answering "
                    f"(request started at {started}).",
                )
            await self.journal.clear_running(marker.session_id)

    async def open_recovering(self) -> Path | None:
        """:meth:`open`, but a damaged database is kept aside and a new one started.

        Returns where the damaged file was kept (the app tells the person), or ``None`` when the
        database opened normally. Other storage errors (newer version, read-only, full disk)
        propagate: starting afresh would hide the person's conversations from them.
        """
        try:
            await self.open()
        except StorageCorruptError:
            kept = self.set_aside_damaged_database()
            await self.open()
            return kept
        return None

    def set_aside_damaged_database(self) -> Path:
        """Keep a damaged database aside under a timestamped name and return its new path.

        For startup after :meth:`open` raised :class:`~app.errors.StorageCorruptError`: the
        file (with its ``-wal``/``-shm`` companions) is renamed to
        ``continuum.damaged-YYYYmmdd-HHMMSS.sqlite`` in the data folder — never deleted, never
        overwriting an earlier one — so the next :meth:`open` starts a new, empty database and
        the person can still hand the old file to a recovery tool. The companions move first:
        a stray ``-wal`` beside a new database would be replayed into it.
        """
        if self.storage.storage.is_open:
            raise RuntimeError("the database is open; only a database that failed to open is "
                               "set aside")
        source = self.data_dir / DATABASE_FILE
        if not source.exists():
            raise FileNotFoundError(f"there is no database at {source} to set aside")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for attempt in range(1000):
            name = f"continuum.damaged-{stamp}{f'-{attempt}' if attempt else ''}.sqlite"
            target = self.data_dir / name
            if not any(Path(f"{target}{end}").exists() for end in ("", "-wal", "-shm")):
                break
        else:  # pragma: no cover - a thousand set-asides in one second
            raise FileExistsError(f"cannot find a free name to keep {source} aside")
        for end in ("-wal", "-shm", ""):
            companion = Path(f"{source}{end}")
            if companion.exists():
                os.replace(companion, f"{target}{end}")
        log.warning("kept a damaged database aside as %s", target.name)
        return target

    def _database_damaged(self) -> str:
        """The store found damage while in use and closed the file: keep it aside, say so."""
        try:
            kept = self.set_aside_damaged_database()
        except Exception:
            log.exception("could not keep the damaged database aside")
            done = ("It could not be moved aside: close Continuum, move it away (or restore a "
                    "backup) and start again.")
        else:
            done = (f"It was kept aside as {kept} (nothing was deleted; a recovery tool may "
                    "get more back). Restart Continuum to start a new, empty database.")
        if self.notify is not None:
            with contextlib.suppress(Exception):
                self.notify(f"The conversation database was found damaged, so Continuum "
                            f"stopped writing to it. {done}")
        return done

    async def close(self) -> None:
        try:
            await self._close_mcp()
        finally:
            await self._close_rest()

    async def _close_rest(self) -> None:
        close_model = getattr(self.client.model, "aclose", None)
        if close_model is not None:
            with contextlib.suppress(Exception):
                await close_model()
        if self._simulator is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._simulator.stop(), 5)
            self._simulator = None
        self.locks.release_all()
        await self.client.close()

    # --- settings and models ------------------------------------------------------------------

    # --- MCP servers ---------------------------------------------------------------------------

    def start_mcp_servers(self) -> asyncio.Task[None]:
        """(Re)start the configured MCP servers in the background if the configuration changed.

        Returns the task; :meth:`mcp_ready` waits for it. A server that fails to start is
        described in :attr:`mcp_problems`; the others are used.
        """
        configs = tuple(self.settings.mcp_servers)
        if self._mcp_task is not None and configs == self._mcp_configs:
            return self._mcp_task
        previous = self._mcp_task
        self._mcp_configs = configs
        self._mcp_task = asyncio.ensure_future(self._restart_mcp(previous, configs))
        return self._mcp_task

    async def mcp_ready(self) -> list[str]:
        """Wait until the MCP servers have started (or failed); returns :attr:`mcp_problems`."""
        task = self._mcp_task
        if task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        return list(self.mcp_problems)

    @property
    def mcp_tools(self) -> tuple[FunctionTool, ...]:
        return tuple(tool for source in self.mcp_sources for tool in source.tools)

    async def _restart_mcp(self, previous: asyncio.Task[None] | None,
                           configs: tuple[McpServerConfig, ...]) -> None:
        if previous is not None:
            with contextlib.suppress(BaseException):
                await previous
        old, self.mcp_sources = self.mcp_sources, []
        await self._aclose_sources(old)
        sources = [McpToolSource(config) for config in configs]
        results = await asyncio.gather(*(s.start() for s in sources), return_exceptions=True)
        problems: list[str] = []
        started: list[McpToolSource] = []
        for source, result in zip(sources, results, strict=True):
            if result is None:
                started.append(source)
            elif isinstance(result, McpServerError):
                problems.append(str(result))
            else:
                problems.append(f"The MCP server {source.config.name!r} could not be started "
                                f"({type(result).__name__}: {result}); check it in Settings.")
        self.mcp_sources = started
        self.mcp_problems = problems

    @staticmethod
    async def _aclose_sources(sources: list[McpToolSource]) -> None:
        if sources:
            await asyncio.gather(*(s.aclose() for s in sources), return_exceptions=True)

    async def _close_mcp(self) -> None:
        """Stop every MCP server, bounded by :data:`MCP_CLOSE_TIMEOUT` in all."""
        task, self._mcp_task = self._mcp_task, None
        if task is not None and not task.done():
            task.cancel()
        try:
            async with asyncio.timeout(MCP_CLOSE_TIMEOUT):
                if task is not None:
                    with contextlib.suppress(BaseException):
                        await task
                sources, self.mcp_sources = self.mcp_sources, []
                await self._aclose_sources(sources)
        except TimeoutError:
            log.warning("MCP servers did not stop within %s s", MCP_CLOSE_TIMEOUT)

    # --- workspace folders ---------------------------------------------------------------------

    async def set_workspace(self, session_id: str, path: str | None) -> None:
        """The folder (an absolute path) this conversation's file tools work in (``None``: no
        file tools, whatever the default)."""
        await self.journal.set_workspace(session_id, path or None)

    async def workspace(self, session_id: str | None) -> str | None:
        """This conversation's folder: its own choice, else the settings' default."""
        if session_id is None:
            return self.settings.workspace
        chosen = await self.journal.workspace(session_id)
        if chosen is None:
            return self.settings.workspace
        return chosen or None

    async def workspace_tools(self, session_id: str) -> list[FunctionTool]:
        """File tools for the conversation's folder; none (with a notice) if it is gone."""
        path = await self.workspace(session_id)
        if path is None:
            return []
        try:
            return Workspace(path).tools()
        except (OSError, WorkspaceError):
            message = (f"The workspace folder {path} no longer exists or cannot be opened, so "
                       "this answer has no file tools. Choose another folder in the "
                       "Conversation menu.")
            log.info("workspace folder unavailable: %s", path)
            if self.notify is not None:
                with contextlib.suppress(Exception):
                    self.notify(message)
            return []

    def save_settings(self, settings: Settings) -> None:
        """Save and use ``settings``; on :class:`~app.errors.SettingsSaveError` (a full disk)
        the file and the settings in use stay as they were."""
        save_settings(self.data_dir, settings)
        self.settings = settings

    @property
    def simulator_running(self) -> bool:
        return self._simulator is not None

    async def start_simulator(self, *, tokens_per_second: float = 80.0) -> str:
        """Start the offline provider simulator on a free loopback port; returns its base URL."""
        if self._simulator is None:
            from ..simulator import Simulator

            simulator = Simulator(tokens_per_second=tokens_per_second)
            await simulator.start()
            self._simulator = simulator
        base_url: str = self._simulator.openai_base_url
        self.save_settings(Settings(
            provider_kind="simulator", base_url=base_url, model=self.settings.model or "sim-echo",
            system_prompt=self.settings.system_prompt, workspace=self.settings.workspace,
            mcp_servers=self.settings.mcp_servers,
        ))
        return base_url

    def build_model(self, settings: Settings) -> Model:
        """The provider model for ``settings`` (the API key from the env var or keyring)."""
        if self._model_factory is not None:
            return self._model_factory(settings)
        from ..providers import AnthropicModel, OpenAICompatibleModel

        key = get_api_key(settings.key_service(), settings.api_key_env or DEFAULT_KEY_ENV)
        if settings.provider_kind == "anthropic":
            return AnthropicModel(settings.base_url, settings.model, api_key=key)
        return OpenAICompatibleModel(settings.base_url, settings.model or "default", api_key=key)

    async def configure_model(self) -> Model | None:
        """Build the model from the settings and use it for new requests (``None``: none set).

        Also (re)starts the configured MCP servers in the background (see
        :meth:`start_mcp_servers`); requests wait for them to be up.
        """
        self.start_mcp_servers()
        settings = self.settings
        if not settings.configured:
            return None
        if settings.provider_kind == "simulator":
            await self.start_simulator()
            settings = self.settings
        old = self.client.model
        model = self.build_model(settings)
        self.client.model = model
        close_old = getattr(old, "aclose", None)
        if close_old is not None and old is not model:
            with contextlib.suppress(Exception):
                await close_old()
        return model

    async def list_models(self) -> list[str]:
        lister = getattr(self.client.model, "list_models", None)
        if lister is None:
            return []
        models: list[str] = await lister()
        return models

    async def discover_local_servers(self) -> list[LocalServer]:
        return await discover_local_servers()

    # --- conversations ------------------------------------------------------------------------

    async def list_sessions(self) -> list[SessionInfo]:
        return await self.client.list_sessions()

    async def new_session(self, title: str | None = None) -> SessionInfo:
        return await self.client.create_session(uuid.uuid4().hex, title)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        await self.client.rename_session(session_id, title)

    async def delete_session(self, session_id: str) -> bool:
        if session_id in self._running or self.locks.is_locked_elsewhere(session_id):
            raise SessionLockedError()
        return await self.client.delete_session(session_id)

    async def history(self, session_id: str) -> list[Message]:
        return await self.client.history(session_id)

    async def search(self, query: str, *, limit: int = 50) -> list[SearchHit]:
        return await self.storage.storage.search(query, limit=limit)

    async def resume_info(self, session_id: str) -> ResumeInfo:
        status = await self.client.resume_status(session_id)
        stop = await self.journal.stop_record(session_id)
        draft = await self.journal.draft(session_id)
        if isinstance(status, ResumeBlocked):
            return ResumeInfo(None, status.reason, status.description, stop, draft)
        awaiting: tuple[ToolCall, ...] = ()
        if status.unanswered_tool_calls:
            states = await self.journal.tool_states(session_id)
            awaiting = tuple(c for c in status.unanswered_tool_calls
                             if states.get(c.id) == TOOL_AWAITING_APPROVAL)
        return ResumeInfo(status, None, None, stop, draft, awaiting)

    async def resumable_sessions(self) -> set[str]:
        """Sessions whose Resume bar would offer Resume (for the sidebar's badges)."""
        result = set()
        for info in await self.list_sessions():
            if info.message_count and await self.client.resume_point(info.id) is not None:
                result.add(info.id)
        return result

    async def dismiss_resume(self, session_id: str) -> None:
        """Forget why the last request stopped and its draft (the history is untouched)."""
        await self.journal.clear_stop(session_id)
        await self.journal.clear_draft(session_id)

    def try_lock_session(self, session_id: str) -> bool:
        return self.locks.acquire(session_id)

    def release_session(self, session_id: str) -> None:
        if session_id not in self._running:
            self.locks.release(session_id)

    # --- requests -----------------------------------------------------------------------------

    def stream(self, session_id: str, text: str, *, goal: str | None = None,
               ) -> AsyncIterator[AgentEvent]:
        return self._tracked(session_id, lambda: self._send_events(session_id, text, goal))

    async def _send_events(self, session_id: str, text: str, goal: str | None,
                           ) -> AsyncIterator[AgentEvent]:
        agent = await self._agent(session_id)
        async with contextlib.aclosing(  # type: ignore[type-var]
            agent.stream(text, goal=goal)
        ) as events:
            async for event in events:
                yield event

    def stream_resume(self, session_id: str, *, model: Model | None = None,
                      ) -> AsyncIterator[AgentEvent]:
        """Resume; calls that were awaiting approval when the app stopped are asked again."""
        return self._tracked(session_id, lambda: self._resume_events(session_id, model))

    async def _resume_events(self, session_id: str, model: Model | None,
                             ) -> AsyncIterator[AgentEvent]:
        not_started = await self.not_started_calls(session_id)
        agent = await self._agent(session_id)
        async with contextlib.aclosing(  # type: ignore[type-var]
            agent.stream_resume(model=model, not_started=not_started)
        ) as events:
            async for event in events:
                yield event

    async def not_started_calls(self, session_id: str) -> Collection[str]:
        """Ids of calls recorded as awaiting approval: they never started."""
        states = await self.journal.tool_states(session_id)
        return frozenset(cid for cid, state in states.items() if state == TOOL_AWAITING_APPROVAL)

    async def _agent(self, session_id: str) -> Agent:
        """The request's agent: the client's tools, the MCP servers' and the conversation's
        file tools, asking the person through :meth:`approver_for`, with the system prompt from
        Settings."""
        await self.mcp_ready()
        tools: list[Any] = list(self.client.tools)
        taken = {t.name for t in tools if isinstance(t, FunctionTool)}
        for tool in (*self.mcp_tools, *await self.workspace_tools(session_id)):
            if tool.name not in taken:  # the app's own tools win over same-named ones
                taken.add(tool.name)
                tools.append(tool)
        agent = self.client.agent(session_id, tools=tools)
        agent.approve_tool = self.approver_for(session_id)
        # The system prompt from Settings, read per request (a change applies to the next one);
        # an empty or blank prompt sends none.
        prompt = self.settings.system_prompt
        agent.config = dataclasses.replace(
            agent.config, system_prompt=prompt if prompt and prompt.strip() else None)
        return agent

    def approver_for(self, session_id: str) -> ToolApprover:
        """The core's approval callback for one conversation.

        Order matters for crash survival: ``awaiting_approval`` is durable *before* the person
        is asked, and ``started`` is durable *before* the tool may run — on every path that
        lets it run (asked, allowed for this conversation, no approver) — so a process killed
        in between leaves "awaiting", which truthfully means the tool never ran. States belong
        to the message that asked (see :meth:`SessionJournal.set_tool_state`): a reused call
        id never inherits an earlier turn's state.
        """

        async def approve(call: ToolCall, tool: FunctionTool) -> bool:
            ask = self.approver
            if ask is not None and tool.name not in self.allowed_tools.get(session_id, ()):
                await self.journal.set_tool_state(session_id, call.id, TOOL_AWAITING_APPROVAL)
                decision = ApprovalDecision(await ask(session_id, call, tool))
                if decision is ApprovalDecision.DENY:
                    return False
                if decision is ApprovalDecision.ALLOW_CONVERSATION:
                    self.allowed_tools.setdefault(session_id, set()).add(tool.name)
            await self.journal.set_tool_state(session_id, call.id, TOOL_STARTED)
            return True

        return approve

    async def _tracked(
        self, session_id: str, make: Callable[[], AsyncIterator[AgentEvent]]
    ) -> AsyncIterator[AgentEvent]:
        # The window may already hold this conversation's lock (it holds it while the
        # conversation is open); then the lock stays after the request, else it is released.
        if session_id in self._running:
            # A second request here (a double click, Resume while running) must be refused
            # before it touches the journal: its cleanup would erase the live request's marker.
            raise SessionBusyError(session_id)
        held_before = self.locks.held(session_id)
        if not self.locks.acquire(session_id):
            raise SessionLockedError()
        self._running.add(session_id)
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
                        orderly_stop = stop if stop in _ORDERLY_STOPS else None
                        completed = True
                    yield event
            if orderly_stop is not None and orderly_stop in _ORDERLY_STOPS:
                await journal.record_stop(session_id, *_ORDERLY_STOPS[orderly_stop])
        except GeneratorExit:
            if not completed:  # the consumer left mid-request: that is a Stop
                await self._record_failure(session_id, asyncio.CancelledError(), parts)
            elif orderly_stop is not None and orderly_stop in _ORDERLY_STOPS:
                with contextlib.suppress(Exception):
                    await journal.record_stop(session_id, *_ORDERLY_STOPS[orderly_stop])
            raise
        except BaseException as error:
            await self._record_failure(session_id, error, parts)
            raise
        finally:
            try:
                with contextlib.suppress(Exception):
                    await journal.clear_running(session_id)
            finally:  # even if a second Stop interrupts the line above
                self._running.discard(session_id)
                if not held_before:
                    self.locks.release(session_id)

    async def _record_failure(
        self, session_id: str, error: BaseException, parts: list[str]
    ) -> None:
        """Why the request stopped, and the text that was on screen (never raises)."""
        kind, message = describe_failure(error)
        # Separately, the small stop record first: when the disk is full, a large draft may
        # not fit, and the reason must still reach the Resume bar.
        with contextlib.suppress(Exception):
            await self.journal.record_stop(session_id, kind, message)
        if parts:
            with contextlib.suppress(Exception):
                await self.journal.save_draft(session_id, "".join(parts))

    # --- export -------------------------------------------------------------------------------

    async def export_markdown(self, session_id: str) -> str:
        info = await self.storage.storage.get_session(session_id)
        return _export.export_markdown(info, await self.storage.storage.load_records(session_id))

    async def export_json(self, session_id: str) -> str:
        info = await self.storage.storage.get_session(session_id)
        return _export.export_json(info, await self.storage.storage.load_records(session_id))


class _NoModel:
    """Stands in until a provider is configured: a request says what to do."""

    name = "none"

    def stream(self, request: Any) -> AsyncIterator[Any]:
        return self

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        raise ProviderConnectionError(
            "No model provider is set up yet. Open Settings to choose one, or pick "
            "“Try it offline” to use the built-in simulator.",
            retryable=False,
        )
