"""The configured MCP servers' lifecycle: start in the background, wait until ready, restart
when the configuration changes, stop (bounded) on close. Servers that fail to start are
described in :attr:`McpServers.problems`; the others are used."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ..tools import FunctionTool
from ..tools.mcp import McpServerConfig, McpServerError, McpToolSource

__all__ = ["MCP_CLOSE_TIMEOUT", "McpServers"]

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
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        return list(self.problems)

    @property
    def tools(self) -> tuple[FunctionTool, ...]:
        return tuple(tool for source in self.sources for tool in source.tools)

    async def _restart(self, previous: asyncio.Task[None] | None,
                       configs: tuple[McpServerConfig, ...]) -> None:
        if previous is not None:
            with contextlib.suppress(BaseException):
                await previous
        old, self.sources = self.sources, []
        await _aclose_sources(old)
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
        self.sources = started
        self.problems = problems

    async def close(self) -> None:
        """Stop every MCP server, bounded by :data:`MCP_CLOSE_TIMEOUT` in all."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        try:
            async with asyncio.timeout(MCP_CLOSE_TIMEOUT):
                if task is not None:
                    with contextlib.suppress(BaseException):
                        await task
                sources, self.sources = self.sources, []
                await _aclose_sources(sources)
        except TimeoutError:
            log.warning("MCP servers did not stop within %s s", MCP_CLOSE_TIMEOUT)


async def _aclose_sources(sources: list[McpToolSource]) -> None:
    if sources:
        await asyncio.gather(*(s.aclose() for s in sources), return_exceptions=True)
