"""The configured MCP servers together: each started in the background on its own (a slow one
delays no other), restarted when the configuration changes, stopped (bounded) on close. A request
takes the tools of the servers running at that moment and is told which are still starting or
not running (:meth:`McpServers.for_request`); each server's own lifecycle (restart after it
exits, with back-off) is :mod:`.mcp_server`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..mcp_env import delete_secrets, is_secret_name, parse_env_lines, store_secrets
from ..settings_mcp import MAX_CALL_TIMEOUT
from ..tools import FunctionTool
from ..tools.mcp import DEFAULT_CALL_TIMEOUT, McpServerConfig, McpToolSource
from ..tools.mcp_names import prefix_clash, server_prefix, server_prefixes
from ..tools.mcp_progress import McpProgress, ProgressListener, progress_detail, progress_words
from .mcp_server import McpServer, McpServerStatus, ServerState, restart_delay

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "MAX_CALL_TIMEOUT",
    "MCP_CLOSE_TIMEOUT",
    "McpProgress",
    "McpServerStatus",
    "McpServers",
    "ServerState",
    "delete_secrets",
    "is_secret_name",
    "parse_env_lines",
    "progress_detail",
    "progress_words",
    "prefix_clash",
    "server_prefix",
    "store_secrets",
    "with_server_instructions",
]

log = logging.getLogger(__name__)

MCP_CLOSE_TIMEOUT = 8.0  # seconds all MCP servers together may take to stop on close


class McpServers:
    """The configured servers, by name, in the configured order."""

    def __init__(self, *, delay: Callable[[int], float] = restart_delay) -> None:
        self.servers: list[McpServer] = []
        self._configs: tuple[McpServerConfig, ...] | None = None
        self._delay = delay
        self._stopping: set[asyncio.Task[None]] = set()
        #: Told each progress report of a running MCP call (the app shows it).
        self.on_progress: ProgressListener | None = None

    def start(self, configs: tuple[McpServerConfig, ...]) -> asyncio.Task[None]:
        """(Re)start ``configs`` in the background if they changed; returns a task that ends
        when every server has started or failed (:meth:`ready`)."""
        if configs != self._configs:
            self._configs = configs
            old, self.servers = self.servers, []
            if old:
                task = asyncio.ensure_future(_aclose_all(old))
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)
            prefixes = server_prefixes([config.name for config in configs])
            self.servers = [
                McpServer(
                    config, prefixes[config.name], delay=self._delay, on_progress=self._progress
                )
                for config in configs
            ]
            for server in self.servers:
                server.start()
        return asyncio.ensure_future(self._started())

    def _progress(self, report: McpProgress) -> None:
        if self.on_progress is not None:
            self.on_progress(report)

    async def _started(self) -> None:
        await asyncio.gather(*(server.started() for server in self.servers))

    async def ready(self) -> list[str]:
        """Wait until every server has started (or failed); returns :attr:`problems`."""
        # Shielded: a caller cancelled while waiting does not stop the servers starting.
        await asyncio.shield(self._started())
        return self.problems

    @property
    def problems(self) -> list[str]:
        """What the person should know: servers not running and why, tools not offered."""
        problems = [s.problem for s in self.servers if s.problem and not s.tools]
        return problems + [note for s in self.servers for note in s.notes]

    @property
    def sources(self) -> list[McpToolSource]:
        """The running servers' connections."""
        return [s.source for s in self.servers if s.source is not None and s.tools]

    @property
    def tools(self) -> tuple[FunctionTool, ...]:
        """The running servers' tools."""
        return tuple(tool for server in self.servers for tool in server.tools)

    def for_request(self) -> tuple[tuple[FunctionTool, ...], str | None]:
        """The tools a request gets now (running servers only, never waiting) and a sentence
        naming the servers whose tools are missing from it, if any. Servers that exited are
        restarted here when their back-off allows (for the requests after this one)."""
        for server in self.servers:
            if server.may_restart():
                server.start()
        starting = [s.config.name for s in self.servers if s.starting]
        down = [s.config.name for s in self.servers if not s.starting and not s.tools]
        parts = []
        if starting:
            parts.append(f"still starting: {_names(starting)}")
        if down:
            parts.append(f"not running: {_names(down)} (see Settings → MCP servers)")
        notice = (
            f"This answer is without the tools of some MCP servers ({'; '.join(parts)})."
            if parts
            else None
        )
        return self.tools, notice

    def instructions(self) -> list[tuple[str, str]]:
        """``(server name, instructions)`` of the running servers that gave some."""
        return [
            (s.config.name, s.source.instructions)
            for s in self.servers
            if s.source is not None and s.tools and s.source.instructions
        ]

    def statuses(self) -> list[McpServerStatus]:
        return [server.status() for server in self.servers]

    def restart(self, name: str) -> asyncio.Task[None] | None:
        """Restart the server named ``name`` (Settings' Restart); ``None`` if there is none."""
        server = next((s for s in self.servers if s.config.name == name), None)
        return server.restart() if server is not None else None

    async def close(self) -> None:
        """Stop every MCP server, bounded by :data:`MCP_CLOSE_TIMEOUT` in all."""
        servers, self.servers = self.servers, []
        self._configs = None
        try:
            async with asyncio.timeout(MCP_CLOSE_TIMEOUT):
                await _aclose_all(servers)
                if self._stopping:
                    await asyncio.wait(set(self._stopping))
        except TimeoutError:
            log.warning("MCP servers did not stop within %s s", MCP_CLOSE_TIMEOUT)


#: The most characters of one server's instructions put in the system prompt.
MAX_INSTRUCTIONS = 4_000


def with_server_instructions(prompt: str | None, instructions: list[tuple[str, str]]) -> str | None:
    """The system prompt with each server's instructions after it, marked as the server's
    (what a server says is not the person's instruction), each cut at
    :data:`MAX_INSTRUCTIONS` characters."""
    blocks = []
    for name, text in instructions:
        if len(text) > MAX_INSTRUCTIONS:
            text = text[:MAX_INSTRUCTIONS] + " […cut]"
        blocks.append(
            f"Instructions from the MCP server {name!r} about its tools (written by that "
            f"server, not by the person):\n{text}"
        )
    if not blocks:
        return prompt
    return "\n\n".join([*([prompt] if prompt and prompt.strip() else []), *blocks])


def _names(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names)


async def _aclose_all(servers: list[McpServer]) -> None:
    if not servers:
        return
    results = await asyncio.gather(*(s.aclose() for s in servers), return_exceptions=True)
    for server, result in zip(servers, results, strict=True):
        if isinstance(result, BaseException):
            log.error("the MCP server %r did not stop cleanly", server.config.name, exc_info=result)
