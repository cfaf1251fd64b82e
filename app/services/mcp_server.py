"""One configured MCP server while the app runs: started in the background, watched, restarted
after it exits (with back-off), and its tools' calls routed to whichever process is current.

States (:class:`ServerState`): ``starting`` → ``running``; a start that fails → ``failed``; a
running server whose process ends → ``exited``. Only a running server's tools are offered. A call
to a server that has exited restarts it first when its back-off allows (:func:`restart_delay`:
at once after one failure, then 1, 2, 4 … 60 s), else answers that it is not running and when it
will be tried again; after :data:`MAX_FAILURES` failures in a row it is left alone until the
person restarts it (Settings → MCP servers → Restart) or changes its configuration. A server
that ran :data:`STABLE_AFTER` seconds before exiting starts its count again.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..mcp_env import secret_values
from ..tools import FunctionTool, ToolResult
from ..tools.mcp import McpServerConfig, McpServerError, McpToolSource
from ..tools.mcp_progress import ProgressListener

__all__ = [
    "MAX_FAILURES",
    "STABLE_AFTER",
    "McpServer",
    "McpServerStatus",
    "ServerState",
    "restart_delay",
]

log = logging.getLogger(__name__)

MAX_FAILURES: Final = 5
STABLE_AFTER: Final = 60.0


def restart_delay(failures: int) -> float:
    """Seconds between the ``failures``-th failure in a row and the next try."""
    if failures <= 1:
        return 0.0
    return min(60.0, 2.0 ** (failures - 2))


class ServerState(enum.StrEnum):
    STARTING = "starting"
    RUNNING = "running"
    FAILED = "could not start"
    EXITED = "exited"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class McpServerStatus:
    """What Settings shows of one server (person-facing)."""

    name: str
    state: ServerState
    tools: int
    problem: str | None
    last_output: str
    restarts: int


class McpServer:
    """One configured server (see the module docstring)."""

    def __init__(
        self,
        config: McpServerConfig,
        prefix: str,
        *,
        delay: Callable[[int], float] = restart_delay,
        clock: Callable[[], float] = time.monotonic,
        source_options: Mapping[str, Any] | None = None,
        on_progress: ProgressListener | None = None,
    ) -> None:
        self.config, self.prefix = config, prefix
        self.state = ServerState.STARTING
        self.problem: str | None = None
        self.last_output = ""
        self.failures = 0
        self.restarts = 0
        self.source: McpToolSource | None = None
        self._delay, self._clock = delay, clock
        self._options = dict(source_options or {})
        self._on_progress = on_progress
        self._retry_at = 0.0
        self._started_at = 0.0
        self._starting: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None
        self._closed = False
        #: Secret variables found neither in Continuum's environment nor in the keyring.
        self.missing_secrets: list[str] = []

    def __repr__(self) -> str:
        return f"McpServer({self.config.name!r}, {self.state.value})"

    # --- what the app asks ------------------------------------------------------------------

    @property
    def tools(self) -> tuple[FunctionTool, ...]:
        """The tools, while it runs (none otherwise)."""
        source = self.source
        if self.state is ServerState.RUNNING and source is not None and source.alive:
            return source.tools
        return ()

    @property
    def notes(self) -> list[str]:
        """What the person should know about a running server (tools not offered, secrets
        missing), person-facing."""
        source = self.source
        notes = list(source.notes) if source is not None and self.tools else []
        if self.missing_secrets:
            names = ", ".join(self.missing_secrets)
            notes.append(
                f"The MCP server {self.config.name!r} started without {names}: not in the "
                "keyring. Enter it again in Settings → MCP servers (or set it in Continuum's "
                "environment)."
            )
        return notes

    def status(self) -> McpServerStatus:
        source = self.source
        output = source.last_output() if source is not None else self.last_output
        return McpServerStatus(
            self.config.name,
            self.state,
            len(self.tools),
            self.problem,
            output or self.last_output,
            self.restarts,
        )

    @property
    def starting(self) -> bool:
        return self._starting is not None and not self._starting.done()

    async def started(self) -> None:
        """Wait until a start under way has ended (started or failed)."""
        starting = self._starting
        if starting is not None:
            await asyncio.wait({starting})

    def may_restart(self) -> bool:
        """Whether an automatic restart may be tried now."""
        return (
            not self._closed
            and self.state in (ServerState.EXITED, ServerState.FAILED)
            and self.failures < MAX_FAILURES
            and self._clock() >= self._retry_at
        )

    def retry_in(self) -> float | None:
        """Seconds until an automatic restart may be tried (``None``: never without Restart)."""
        if self.failures >= MAX_FAILURES:
            return None
        return max(0.0, self._retry_at - self._clock())

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Start (or restart) it in the background unless a start is under way."""
        if self._starting is None or self._starting.done():
            self.restarts += self._starting is not None  # every start after the first
            self.state = ServerState.STARTING
            self._starting = asyncio.ensure_future(self._start())
        return self._starting

    def restart(self) -> asyncio.Task[None]:
        """The person's Restart: forget the failures, stop the process if any, start again."""
        self.failures, self._retry_at = 0, 0.0
        if self.starting:
            assert self._starting is not None
            return self._starting
        old, self.source = self.source, None
        self.state = ServerState.STOPPED

        async def again() -> None:
            if old is not None:
                await old.aclose()
            await self.start()

        return asyncio.ensure_future(again())

    async def _start(self) -> None:
        config = self.config
        secrets: dict[str, str] = {}
        self.missing_secrets = []
        if config.secret_env:  # the keyring may block (D-Bus): not on the event loop
            secrets, self.missing_secrets = await asyncio.to_thread(
                secret_values, config.name, config.secret_env
            )
        source = McpToolSource(
            config, prefix=self.prefix, route=self.call, secrets=secrets, **self._options
        )
        source.on_progress = self._on_progress
        try:
            await source.start()
        except McpServerError as err:
            self._failed(str(err), source.last_output())
            return
        except Exception as err:
            log.exception("MCP server %r could not be started", self.config.name)
            self._failed(
                f"The MCP server {self.config.name!r} could not be started (internal error: "
                f"{type(err).__name__}); the details are in the log.",
                source.last_output(),
            )
            await source.aclose()
            return
        if self._closed:
            await source.aclose()
            return
        self.source, self.state, self.problem = source, ServerState.RUNNING, None
        self._started_at = self._clock()
        self._watching = asyncio.ensure_future(self._watch(source))

    def _failed(self, problem: str, output: str) -> None:
        self.failures += 1
        self.state, self.problem, self.last_output = ServerState.FAILED, problem, output
        self._retry_at = self._clock() + self._delay(self.failures)
        log.info("MCP server %r: %s", self.config.name, problem)

    async def _watch(self, source: McpToolSource) -> None:
        await source.ended()
        await self._exited(source)

    async def _exited(self, source: McpToolSource) -> None:
        """``source`` has ended: unless that was us closing it, the server exited."""
        if self._closed or self.source is not source:
            return
        self.source = None  # before any await: this runs once per source
        ran = self._clock() - self._started_at
        self.failures = 1 if ran >= STABLE_AFTER else self.failures + 1
        self._retry_at = self._clock() + self._delay(self.failures)
        self.state = ServerState.EXITED
        self.problem = f"The MCP server {self.config.name!r} exited ({source.exit_reason()})."
        log.info("MCP server %r exited after %.1f s", self.config.name, ran)
        await source.aclose()
        self.last_output = source.last_output()

    async def aclose(self) -> None:
        """Stop it for good (bounded, see :meth:`McpToolSource.aclose`)."""
        self._closed = True
        starting, watching = self._starting, self._watching
        if starting is not None and not starting.done():
            starting.cancel()
            await asyncio.wait({starting})
        if watching is not None and not watching.done():
            watching.cancel()
        source, self.source = self.source, None
        self.state = ServerState.STOPPED
        if source is not None:
            await source.aclose()

    # --- calls ----------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call ``tool`` on the current process, restarting an exited server first when its
        back-off allows; never raises (but the caller's cancellation)."""
        source = self.source
        if source is not None and not source.alive:
            await self._exited(source)
        if self.source is None:
            if self.may_restart():
                await asyncio.shield(self.start())
            elif self.starting:
                assert self._starting is not None
                await asyncio.shield(self._starting)
        source = self.source
        if source is None or not source.alive:
            return ToolResult(self._unavailable(tool), success=False)
        return await source.call(tool, arguments)

    def _unavailable(self, tool: str) -> str:
        name = self.config.name
        why = self.problem or f"The MCP server {name!r} is not running."
        wait = self.retry_in()
        if wait is None:
            then = (
                f"It failed {self.failures} times in a row, so Continuum stopped restarting "
                "it; the person can restart it in Settings → MCP servers."
            )
        elif wait > 0:
            then = f"Continuum will try to restart it in {wait:.0f} s; try again after that."
        else:
            then = "Try again."
        return f"{why} {tool!r} was not called. {then}"
