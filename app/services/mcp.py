"""The configured MCP servers' lifecycle: start in the background, wait until ready, restart
when the configuration changes, stop (bounded) on close. Servers that fail to start are
described in :attr:`McpServers.problems`, with what the person should know about the others'
tools (those not offered, and why); the others are used."""

from __future__ import annotations

import asyncio
import logging

from ..tools import FunctionTool
from ..tools.mcp import McpServerConfig, McpServerError, McpToolSource
from ..tools.mcp_names import prefix_clash, server_prefix, server_prefixes

__all__ = ["MCP_CLOSE_TIMEOUT", "McpServers", "prefix_clash", "server_prefix"]

log = logging.getLogger(__name__)

MCP_CLOSE_TIMEOUT = 8.0  # seconds all MCP servers together may take to stop on close


class McpServers:
    """The running MCP servers and why configured ones did not start (person-facing)."""

    def __init__(self) -> None:
        self.sources: list[McpToolSource] = []
        self.problems: list[str] = []
        self._configs: tuple[McpServerConfig, ...] = ()
        self._task: asyncio.Task[None] | None = None

    def start(self, configs: tuple[McpServerConfig, ...]) -> asyncio.Task[None]:
        """(Re)start ``configs`` in the background if they changed; returns the task."""
        if self._task is not None and configs == self._configs:
            return self._task
        previous = self._task
        self._configs = configs
        self._task = asyncio.ensure_future(self._restart(previous, configs))
        return self._task

    async def ready(self) -> list[str]:
        """Wait until the servers have started (or failed); returns :attr:`problems`."""
        task = self._task
        if task is not None:
            # Shielded: a request cancelled while waiting does not stop the servers starting.
            # The task logs and describes its own failures (see :meth:`_restart`).
            await asyncio.shield(task)
        return list(self.problems)

    @property
    def tools(self) -> tuple[FunctionTool, ...]:
        return tuple(tool for source in self.sources for tool in source.tools)

    async def _restart(
        self, previous: asyncio.Task[None] | None, configs: tuple[McpServerConfig, ...]
    ) -> None:
        """Wait for the previous (re)start, stop its servers, start ``configs``. Never raises
        but ``CancelledError``: a bug is logged with its traceback and described in
        :attr:`problems`."""
        try:
            if previous is not None:
                await _settled(previous)
            await self._replace(configs)
        except Exception as error:
            log.exception("MCP servers could not be (re)started")
            self.problems = [
                f"The MCP servers could not be started (internal error: "
                f"{type(error).__name__}); the details are in the log."
            ]

    async def _replace(self, configs: tuple[McpServerConfig, ...]) -> None:
        old, self.sources = self.sources, []
        await _aclose_sources(old)
        prefixes = server_prefixes([config.name for config in configs])
        sources = [McpToolSource(config, prefix=prefixes[config.name]) for config in configs]
        results = await asyncio.gather(*(s.start() for s in sources), return_exceptions=True)
        problems: list[str] = []
        started: list[McpToolSource] = []
        for source, result in zip(sources, results, strict=True):
            if result is None:
                started.append(source)
            elif isinstance(result, McpServerError):
                problems.append(str(result))
            else:
                problems.append(
                    f"The MCP server {source.config.name!r} could not be started "
                    f"({type(result).__name__}: {result}); check it in Settings."
                )
        self.sources = started
        self.problems = problems + [note for source in started for note in source.notes]

    async def close(self) -> None:
        """Stop every MCP server, bounded by :data:`MCP_CLOSE_TIMEOUT` in all."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        try:
            async with asyncio.timeout(MCP_CLOSE_TIMEOUT):
                if task is not None:
                    await _settled(task)
                sources, self.sources = self.sources, []
                await _aclose_sources(sources)
        except TimeoutError:
            log.warning("MCP servers did not stop within %s s", MCP_CLOSE_TIMEOUT)


async def _settled(task: asyncio.Task[None]) -> None:
    """Wait until ``task`` has ended, however it ends, without taking on its outcome: being
    cancelled here raises ``CancelledError`` here (and leaves ``task`` alone)."""
    await asyncio.wait([task])
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("an MCP server task failed", exc_info=error)


async def _aclose_sources(sources: list[McpToolSource]) -> None:
    if not sources:
        return
    results = await asyncio.gather(*(s.aclose() for s in sources), return_exceptions=True)
    for source, result in zip(sources, results, strict=True):
        if isinstance(result, BaseException):
            log.error("the MCP server %r did not stop cleanly", source.config.name, exc_info=result)
