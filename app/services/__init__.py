"""``AppServices``: everything the desktop app needs from the core, behind one Qt-free facade.

It owns the data folder (one SQLite database, settings, lock files) and the
:class:`AgentClient`, and composes the parts that do the work:

* :mod:`.requests` — ``stream``/``stream_resume`` under the conversation's lock, journaled so
  every request, however it ends, can be explained at the next launch;
* :mod:`.failures` — what a failed or stopped request is called (pure);
* :mod:`.approval` — the person's answer to "may this tool run?" and the order it is recorded in;
* :mod:`.mcp` — the configured MCP servers' lifecycle;
* :mod:`.recovery` — requests the app died in, damaged databases, what the Resume bar needs;
* :mod:`.models` — settings → provider model, and the simulator for "try it offline";
* :mod:`.connection` — Settings' "Test connection": tiny requests, and in words what worked;
* :mod:`.setup` — a conversation's own setup (system prompt, provider, model, parameters) over
  the defaults of Settings: what each of its requests uses.

The UI only renders events and calls these methods; it never writes to the database itself.
This package and ``app`` are the UI's declared surface: ``__all__`` re-exports every other name
``ui/`` uses, so ``ui/`` imports nothing else of ``app``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from .. import export as _export
from ..agent import Agent, AgentRunConfig, ToolApprover
from ..client import AgentClient
from ..context_limits import ContextLimit, ContextLimits, context_used
from ..discovery import LocalServer, discover_local_servers
from ..errors import SettingsSaveError, StorageCorruptError
from ..events import AgentEvent
from ..locks import SessionLocks
from ..messages import Message, ToolOutcome, content_text
from ..model import Model
from ..parts import AttachmentError, FilePart, ImagePart, attachment_parts, with_text
from ..profiles import REASONING_EFFORTS, Parameters, ProviderProfile, new_profile_id
from ..resume import CONTINUE_TEXT, RETRY_TEXT, BlockedReason
from ..secrets import (
    DEFAULT_KEY_ENV,
    NoKeyringError,
    delete_api_key,
    keyring_available,
    set_api_key,
)
from ..settings import Settings, load_settings, save_settings, with_profiles
from ..storage.attachments import read_attachments
from ..storage.base import SessionInfo
from ..storage.conversation_settings import ConversationSettings
from ..storage.journal import SessionJournal, StopKind
from ..storage.reserve import RESERVE_FILE, DiskReserve
from ..storage.sqlite import (
    PAGE as SEARCH_PAGE,
)
from ..storage.sqlite import (
    SearchCursor,
    SearchHit,
    SearchPage,
    SQLiteSessionExtension,
)
from ..tools import MAY_STILL_COMPLETE, FunctionTool
from ..tools.mcp import McpServerConfig, McpToolSource
from . import branches as _branches
from . import models as _models
from . import recovery as _recovery
from .approval import ApprovalDecision, Approvals, UIApprover
from .attachments import pasted_image, read_attachment, send_problem
from .branches import BranchView
from .connection import Check, ConnectionReport, test_connection
from .failures import close_logged, describe_failure, is_expected, log_location, tell
from .importing import ImportFormatError, ImportReport
from .importing import import_file as _import_file
from .mcp import DEFAULT_CALL_TIMEOUT as MCP_DEFAULT_CALL_TIMEOUT
from .mcp import MAX_CALL_TIMEOUT as MCP_MAX_CALL_TIMEOUT
from .mcp import (
    McpProgress,
    McpServers,
    McpServerStatus,
    progress_detail,
    progress_words,
    with_server_instructions,
)
from .mcp import delete_secrets as delete_mcp_secrets
from .mcp import is_secret_name as is_secret_variable
from .mcp import parse_env_lines as parse_variables
from .mcp import prefix_clash as mcp_prefix_clash
from .mcp import server_prefix as mcp_server_prefix
from .mcp import store_secrets as store_mcp_secrets
from .models import Models, NoModel, simulator_settings
from .recovery import DATABASE_FILE, ResumeInfo
from .requests import RequestJournaling, SessionLockedError, folder_tools, merge_tools, relay
from .setup import Resolved, Setup, provider_settings, resolve, setup_logged, setup_to_data
from .titles import Titles, TitleTarget, auto_title_on, simulated
from .upkeep import tidy_search_index

__all__ = [
    "DATABASE_FILE",
    "AppServices",
    "ApprovalDecision",
    "UIApprover",
    "ResumeInfo",
    "SessionLockedError",
    "describe_failure",
    "is_expected",
    "log_location",
    # The rest of the UI's declared surface: what ``ui/`` uses beyond ``app``'s own names.
    "CONTINUE_TEXT",
    "DEFAULT_KEY_ENV",
    "MAY_STILL_COMPLETE",
    "RETRY_TEXT",
    "BlockedReason",
    "BranchView",
    "Check",
    "ConnectionReport",
    "ContextLimit",
    "auto_title_on",
    "ImportFormatError",
    "ImportReport",
    "LocalServer",
    "MCP_DEFAULT_CALL_TIMEOUT",
    "MCP_MAX_CALL_TIMEOUT",
    "McpProgress",
    "McpServerConfig",
    "McpServerStatus",
    "NoKeyringError",
    "Parameters",
    "ProviderProfile",
    "REASONING_EFFORTS",
    "Resolved",
    "Setup",
    "new_profile_id",
    "delete_api_key",
    "delete_mcp_secrets",
    "is_secret_variable",
    "mcp_prefix_clash",
    "mcp_server_prefix",
    "parse_variables",
    "progress_detail",
    "store_mcp_secrets",
    "with_profiles",
    "Settings",
    "SettingsSaveError",
    "StopKind",
    "ToolOutcome",
    "keyring_available",
    "set_api_key",
    "test_connection",
    "AttachmentError",
    "FilePart",
    "ImagePart",
    "attachment_parts",
    "content_text",
    "pasted_image",
    "read_attachment",
    "SEARCH_PAGE",
    "SearchCursor",
    "SearchPage",
]


class AppServices:
    """The desktop app's services over one data folder (see the module docstring)."""

    def __init__(self, data_dir: Path, *, model_factory: Callable[[Settings], Model] | None = None):
        self.data_dir = Path(data_dir)
        loaded = load_settings(self.data_dir)
        self.settings = loaded.settings
        self.settings_problem = loaded.problem
        self.storage = SQLiteSessionExtension(self.data_dir / DATABASE_FILE)
        self.journal = SessionJournal(self.storage.storage)
        self.conversation_settings = ConversationSettings(self.storage.storage.database)
        # The same lock files as the SQLite extension's request claims (and continuum-chat's).
        self.locks = SessionLocks.for_database(self.data_dir / DATABASE_FILE)
        self.client = AgentClient(
            NoModel(), extensions=[self.storage], defaults=AgentRunConfig("default")
        )
        self._running: set[str] = set()
        self._requests = RequestJournaling(self.journal, self.locks, self._running)
        self._approvals = Approvals(self.journal)
        self._mcp = McpServers()
        self._models = Models(model_factory)
        #: Model-made titles after a first answer (never saved in the history: .titles).
        self.titles = Titles(self.storage.storage, self._title_target, lambda: self.settings)
        #: Context windows found so far, per (base URL, model) (app.context_limits).
        self.context_limits = ContextLimits()
        #: Shows a person-facing message (the window sets it to its status bar).
        self.notify: Callable[[str], None] | None = None
        #: Shows a running MCP tool's progress (the window may set it; else :attr:`notify`
        #: gets it in words).
        self.tool_progress: Callable[[McpProgress], None] | None = None
        self._mcp.on_progress = self._tool_progress

    @property
    def approver(self) -> UIApprover | None:
        """Asks the person before a tool with side effects runs (the window sets it); without
        one such tools run unasked."""
        return self._approvals.approver

    @approver.setter
    def approver(self, approver: UIApprover | None) -> None:
        self._approvals.approver = approver

    @property
    def allowed_tools(self) -> dict[str, set[str]]:
        """Tool names allowed "for this conversation", per session (in memory only)."""
        return self._approvals.allowed_tools

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
        await _recovery.settle_interrupted_requests(self.journal, self.locks, self._running)

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
        """Keep a damaged database aside (see :func:`.recovery.set_aside_damaged_database`)."""
        return _recovery.set_aside_damaged_database(
            self.data_dir, is_open=self.storage.storage.is_open
        )

    def _database_damaged(self) -> str:
        return _recovery.database_damaged(self.set_aside_damaged_database, self.notify)

    async def close(self) -> None:
        try:
            await self._mcp.close()
        finally:
            await self._close_rest()

    async def _close_rest(self) -> None:
        await self._models.forget_built()
        close_model = getattr(self.client.model, "aclose", None)
        if close_model is not None:
            await close_logged("the provider model", close_model)
        await self._models.stop_simulator()
        self.locks.release_all()
        await self.client.close()

    # --- MCP servers ---------------------------------------------------------------------------

    def start_mcp_servers(self) -> asyncio.Task[None]:
        """(Re)start the configured MCP servers in the background if the configuration changed.

        Returns the task; :meth:`mcp_ready` waits for it. A server that fails to start is
        described in :attr:`mcp_problems`; the others are used.
        """
        return self._mcp.start(tuple(self.settings.mcp_servers))

    async def mcp_ready(self) -> list[str]:
        """Wait until the MCP servers have started (or failed); returns :attr:`mcp_problems`."""
        return await self._mcp.ready()

    @property
    def mcp_sources(self) -> list[McpToolSource]:
        """The running MCP servers."""
        return self._mcp.sources

    @property
    def mcp_problems(self) -> list[str]:
        """Why configured MCP servers did not start (person-facing)."""
        return self._mcp.problems

    @property
    def mcp_tools(self) -> tuple[FunctionTool, ...]:
        return self._mcp.tools

    def _tool_progress(self, report: McpProgress) -> None:
        if self.tool_progress is not None:
            self.tool_progress(report)
        else:
            tell(self.notify, progress_words(report))

    def mcp_statuses(self) -> list[McpServerStatus]:
        """Each configured MCP server's state, tools and last error output (for Settings)."""
        return self._mcp.statuses()

    def restart_mcp_server(self, name: str) -> asyncio.Task[None] | None:
        """Restart the MCP server ``name`` now, forgetting its failures (Settings' Restart)."""
        return self._mcp.restart(name)

    # --- workspace folders ---------------------------------------------------------------------

    async def set_workspace(self, session_id: str, path: str | None) -> None:
        """The folder (an absolute path) this conversation's file tools work in (``None``: no
        file tools, whatever the default)."""
        await self.conversation_settings.set_workspace(session_id, path or None)

    async def workspace(self, session_id: str | None) -> str | None:
        """This conversation's folder: its own choice, else the settings' default."""
        if session_id is None:
            return self.settings.workspace
        chosen = await self.conversation_settings.workspace(session_id)
        if chosen is None:
            return self.settings.workspace
        return chosen or None

    async def workspace_tools(self, session_id: str) -> list[FunctionTool]:
        """File tools for the conversation's folder; none (with a notice) if it is gone."""
        return folder_tools(await self.workspace(session_id), self.notify)

    # --- settings and models ------------------------------------------------------------------

    def save_settings(self, settings: Settings) -> None:
        """Save and use ``settings``; on :class:`~app.errors.SettingsSaveError` (a full disk)
        the file and the settings in use stay as they were."""
        save_settings(self.data_dir, settings)
        self.settings = settings

    @property
    def _simulator(self) -> Any:
        """The running offline simulator, if any (tests drive it directly)."""
        return self._models.simulator

    @property
    def simulator_running(self) -> bool:
        return self._models.simulator is not None

    async def start_simulator(self, *, tokens_per_second: float = 80.0) -> str:
        """Start the offline provider simulator on a free loopback port; returns its base URL."""
        base_url = await self._models.start_simulator(tokens_per_second=tokens_per_second)
        self.save_settings(simulator_settings(self.settings, base_url))
        return base_url

    def build_model(self, settings: Settings) -> Model:
        """The provider model for ``settings`` (the API key from the env var or keyring)."""
        return self._models.build(settings)

    async def configure_model(self) -> Model | None:
        """Build the model from the settings and use it for new requests (``None``: none set).

        Also (re)starts the configured MCP servers in the background (see
        :meth:`start_mcp_servers`); a request uses those running by then and says which are not.
        """
        self.start_mcp_servers()
        await self._models.forget_built()  # conversations' models follow the new settings
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
            await close_logged("the previous provider model", close_old)
        return model

    async def list_models(self) -> list[str]:
        return await _models.list_models(self.client.model)

    # --- each conversation's setup (.setup) -----------------------------------------------------

    async def conversation_setup(self, session_id: str | None) -> Setup:
        """What the conversation set itself (empty: the defaults; problems are logged)."""
        if session_id is None:
            return Setup()
        return setup_logged(await self.conversation_settings.setup(session_id), session_id)

    async def set_conversation_setup(self, session_id: str, setup: Setup) -> None:
        """Store the conversation's setup; its next request uses it."""
        await self.conversation_settings.set_setup(session_id, setup_to_data(setup))

    async def resolved_setup(self, session_id: str | None) -> Resolved:
        """What the conversation's requests use: its setup over the defaults of Settings."""
        return resolve(await self.conversation_setup(session_id), self.settings)

    async def use_model(self, session_id: str | None, name: str) -> None:
        """The person picked ``name`` for the conversation (none open: as the default)."""
        name = name.strip()
        if not name:
            return
        settings = self.settings
        recent = (name, *[m for m in settings.recent_models if m != name])[:20]
        if session_id is None:
            self.save_settings(dataclasses.replace(settings, model=name, recent_models=recent))
            await self.configure_model()
            return
        setup = await self.conversation_setup(session_id)
        await self.set_conversation_setup(session_id, dataclasses.replace(setup, model=name))
        if recent != settings.recent_models:
            self.save_settings(dataclasses.replace(settings, recent_models=recent))

    async def profile_models(self, profile: ProviderProfile, key: str | None = None) -> list[str]:
        """The model names ``profile``'s server offers (``key``: one typed, not yet saved)."""
        if profile.kind == "simulator":
            url = await self._models.start_simulator(tokens_per_second=80.0)
            profile = dataclasses.replace(profile, base_url=url)
        view = provider_settings(
            self.settings, Resolved(profile, profile.model, None, Parameters())
        )
        model = self._models.build(view, key)
        try:
            return await _models.list_models(model)
        finally:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close_logged("a model list's provider model", close)

    async def _conversation_model(self, resolved: Resolved) -> Model | None:
        """The provider model for ``resolved``: ``None`` when it is the default's (the
        client's model), else one built for the conversation's profile, model and parameters."""
        if resolved.profile is None or resolved.same_model(resolve(Setup(), self.settings)):
            return None
        profile = resolved.profile
        if profile.kind == "simulator":  # its address is the running simulator's
            url = await self._models.start_simulator(tokens_per_second=80.0)
            resolved = dataclasses.replace(
                resolved, profile=dataclasses.replace(profile, base_url=url)
            )
        return self._models.for_setup(provider_settings(self.settings, resolved))

    async def discover_local_servers(self) -> list[LocalServer]:
        return await discover_local_servers()

    # --- conversations ------------------------------------------------------------------------

    async def list_sessions(self) -> list[SessionInfo]:
        return await self.client.list_sessions()

    async def new_session(self, title: str | None = None) -> SessionInfo:
        return await self.client.create_session(uuid.uuid4().hex, title)

    async def rename_session(self, session_id: str, title: str | None) -> None:
        await self.client.rename_session(session_id, title)

    async def pin_session(self, session_id: str, pinned: bool) -> None:
        """Pin the conversation to the top of the sidebar (``False``: unpin it)."""
        await self.storage.storage.pin_session(session_id, pinned)

    async def title_after_answer(self, session_id: str) -> bool:
        """After an answer: ask the model for the conversation's title if it has none of the
        person's (see :mod:`.titles`); whether it was renamed. Failures are only logged."""
        return await self.titles.after_answer(session_id)

    async def _title_target(self, session_id: str) -> TitleTarget:
        """The model the conversation's requests use (its setup's, else the default)."""
        resolved = await self.resolved_setup(session_id)
        model = await self._conversation_model(resolved) or self.client.model
        return model, resolved.profile.kind if resolved.profile else None, resolved.model

    async def context_where(self, session_id: str | None) -> tuple[str, str] | None:
        """(base URL, model) whose context window counts for the conversation (its setup's
        provider and model); ``None``: no provider, or the simulator (it has no window)."""
        resolved = await self.resolved_setup(session_id)
        profile = resolved.profile
        if profile is None or simulated(profile.kind, resolved.model):
            return None
        return profile.base_url, resolved.model

    async def context_limit(self, session_id: str | None = None) -> ContextLimit | None:
        """The context window of the conversation's model (``None``: unknown; the simulator
        has none). Asks a local server once per model (cached), in a few seconds at most."""
        where = await self.context_where(session_id)
        return None if where is None else await self.context_limits.limit(*where)

    async def context_used(self, session_id: str) -> int | None:
        """The newest answer's input + output tokens on the current branch, as the provider
        reported them (``None``: not reported)."""
        return context_used(await self.storage.storage.tail(session_id, 64))

    async def delete_session(self, session_id: str) -> bool:
        if session_id in self._running or self.locks.is_locked_elsewhere(session_id):
            raise SessionLockedError()
        return await self.client.delete_session(session_id)

    async def history(self, session_id: str) -> list[Message]:
        return await self.client.history(session_id)

    # --- branches -------------------------------------------------------------------------

    async def branch(self, session_id: str) -> BranchView:
        """The current branch (records with seqs) and the versions it can switch between."""
        return await _branches.read_branch(self.client, session_id)

    async def branch_tail(self, session_id: str) -> BranchView:
        """The current branch's end (what a conversation opens with; ``earlier`` says whether
        older messages remain, read with :meth:`branch_before`)."""
        return await _branches.read_tail(self.client, session_id)

    async def branch_before(self, session_id: str, seq: int) -> BranchView:
        """The current branch's older part just above message ``seq`` (a scroll to the top)."""
        return await _branches.read_tail(
            self.client, session_id, _branches.EARLIER_CHUNK, before=seq
        )

    async def branch_until(self, session_id: str, seq: int, *, keep: bool = True) -> BranchView:
        """The branch down to message ``seq`` (or the one before it: ``keep=False``)."""
        return await _branches.read_until(self.client, session_id, seq, keep=keep)

    async def versions(self, session_id: str) -> list[tuple[int, ...]]:
        return await self.client.versions(session_id)

    async def select_branch(self, session_id: str, seq: int) -> int:
        """Show the version through message ``seq``; refused while the conversation answers
        (here or in another window). Returns the branch's newest message."""
        if session_id in self._running or self.locks.is_locked_elsewhere(session_id):
            raise SessionLockedError()
        return await self.client.select_branch(session_id, seq)

    async def tidy_search_index(self) -> int:
        """Merge the search index's segments (idle housekeeping, see :mod:`.upkeep`); returns
        the steps that merged."""
        return await tidy_search_index(self.storage.storage.database)

    async def search(self, query: str, *, limit: int = 50) -> list[SearchHit]:
        return await self.storage.storage.search(query, limit=limit)

    async def search_page(
        self, query: str, *, limit: int = SEARCH_PAGE, after: SearchCursor | None = None
    ) -> SearchPage:
        """A page of :meth:`search` (the sidebar's): ``after`` is the previous page's ``more``."""
        return await self.storage.storage.search_page(query, limit=limit, after=after)

    async def resume_info(self, session_id: str) -> ResumeInfo:
        return await _recovery.resume_info(self.client, self.journal, session_id)

    async def resumable_sessions(self) -> set[str]:
        """Sessions whose Resume bar would offer Resume (for the sidebar's badges); a bar the
        person dismissed for the conversation's current state gets no badge."""
        result = set()
        dismissals = await self.journal.dismissals()
        for info in await self.list_sessions():
            if not info.message_count:
                continue
            point = await self.client.resume_point(info.id)
            if point is None:
                continue
            dismissal = dismissals.get(info.id)
            if dismissal is not None and dismissal.covers(
                point.kind.value, await self.journal.stop_record(info.id)
            ):
                continue
            result.add(info.id)
        return result

    async def dismiss_resume(self, session_id: str) -> None:
        """The person dismissed the Resume bar: remember it for the conversation's current state
        (reopening does not show the bar again until a new message or stop), then forget why the
        last request stopped and its draft. The history is untouched, so what Resume would do
        is unchanged."""
        word = _recovery.resume_word(await self.client.resume_status(session_id))
        await self.journal.record_dismissal(session_id, word)
        await self.journal.clear_stop(session_id)
        await self.journal.clear_draft(session_id)

    def try_lock_session(self, session_id: str) -> bool:
        return self.locks.acquire(session_id)

    def release_session(self, session_id: str) -> None:
        if session_id not in self._running:
            self.locks.release(session_id)

    # --- requests -----------------------------------------------------------------------------

    def stream(
        self,
        session_id: str,
        text: str,
        *,
        goal: str | None = None,
        attachments: Sequence[ImagePart | FilePart] = (),
    ) -> AsyncIterator[AgentEvent]:
        content = with_text(text, attachments)  # no attachments: the plain string

        async def open_stream() -> AsyncIterator[AgentEvent]:
            return (await self._agent(session_id)).stream(content, goal=goal)

        return self._requests.tracked(session_id, lambda: relay(open_stream))

    def stream_resume(
        self,
        session_id: str,
        *,
        model: Model | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Resume; calls that were awaiting approval when the app stopped are asked again."""

        async def open_stream() -> AsyncIterator[AgentEvent]:
            not_started = await self.not_started_calls(session_id)
            agent = await self._agent(session_id)
            return agent.stream_resume(model=model, not_started=not_started)

        return self._requests.tracked(session_id, lambda: relay(open_stream))

    def stream_edit(
        self,
        session_id: str,
        seq: int,
        text: str,
        *,
        attachments: Sequence[ImagePart | FilePart] = (),
    ) -> AsyncIterator[AgentEvent]:
        """Send ``text`` (and ``attachments``) as a new version of the person's message
        ``seq`` (a new branch; the old version stays)."""
        content = with_text(text, attachments)

        async def open_stream() -> AsyncIterator[AgentEvent]:
            return (await self._agent(session_id)).stream_edit(seq, content)

        return self._requests.tracked(session_id, lambda: relay(open_stream))

    def stream_regenerate(
        self, session_id: str, seq: int, *, model: Model | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Answer again the question message ``seq`` belongs to (a new version; the old answer
        stays); ``model``: another model than the conversation's."""

        async def open_stream() -> AsyncIterator[AgentEvent]:
            return (await self._agent(session_id)).stream_regenerate(seq, model=model)

        return self._requests.tracked(session_id, lambda: relay(open_stream))

    async def not_started_calls(self, session_id: str) -> Collection[str]:
        """Ids of calls recorded as awaiting approval: they never started."""
        return await _recovery.not_started_calls(self.journal, session_id)

    async def attachment_problem(
        self, session_id: str | None, attachments: Sequence[ImagePart | FilePart]
    ) -> str | None:
        """Why the conversation's model cannot take ``attachments`` (an image for a model known
        not to read images), asked before anything is saved or sent; ``None``: send them."""
        if not attachments:
            return None
        resolved = await self.resolved_setup(session_id)
        return send_problem(resolved.model, attachments)

    async def _agent(self, session_id: str) -> Agent:
        """The request's agent: the client's tools, the MCP servers' and the conversation's
        file tools, asking the person through :meth:`approver_for`, with the conversation's
        provider model, system prompt and parameters (:meth:`resolved_setup`)."""
        # The MCP servers running now, without waiting for those still starting (named).
        mcp_tools, missing = self._mcp.for_request()
        if missing:
            tell(self.notify, missing)
        tools = merge_tools(self.client.tools, mcp_tools, await self.workspace_tools(session_id))
        # The conversation's setup over Settings' defaults, read per request (a change applies
        # to the next one): its provider model, system prompt (blank: none) and output limit.
        resolved = await self.resolved_setup(session_id)
        model = await self._conversation_model(resolved)
        agent = self.client.agent(session_id, tools=tools, model=model)
        agent.approve_tool = self.approver_for(session_id)
        agent.config = dataclasses.replace(
            agent.config,
            system_prompt=with_server_instructions(
                resolved.system_prompt, self._mcp.instructions()
            ),
            max_output_tokens=resolved.parameters.max_output_tokens
            or agent.config.max_output_tokens,
        )
        return agent

    def approver_for(self, session_id: str) -> ToolApprover:
        """The core's approval callback for one conversation (see :meth:`Approvals.for_session`:
        "awaiting" is durable before the person is asked, "started" before the tool runs)."""
        return self._approvals.for_session(session_id)

    # --- export -------------------------------------------------------------------------------

    async def export_markdown(self, session_id: str) -> str:
        """The branch on screen as Markdown (the other versions are counted, not shown)."""
        store = self.storage.storage
        info = await store.get_session(session_id)
        others = sum(len(group) - 1 for group in await store.versions(session_id))
        records = await store.load_records(session_id)
        return _export.export_markdown(info, records, other_versions=others)

    async def export_json(self, session_id: str) -> str:
        """The whole tree as JSON (version 2, see :mod:`app.export`)."""
        store = self.storage.storage
        info = await store.get_session(session_id)
        tree = await store.tree(session_id)
        blobs = await read_attachments(store.database, _export.attachment_digests(tree))
        return _export.export_json(info, tree, leaf=await store.leaf(session_id), attachments=blobs)

    async def import_file(self, path: Path) -> ImportReport:
        """Import the conversations of a Continuum export or ChatGPT's conversations.json (see
        :mod:`.importing`); :class:`ImportFormatError` when the file cannot be imported."""
        return await _import_file(self.storage.storage, Path(path))
