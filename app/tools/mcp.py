"""Tools from MCP servers: a stdio MCP server's tools, exposed as :class:`FunctionTool` s.

``McpToolSource(config)`` starts the server (a child process speaking MCP over stdin/stdout,
with the ``mcp`` package), lists its tools and offers each as a tool the agent can register::

    async with McpToolSource(McpServerConfig("files", "npx", ("-y", "some-server"))) as source:
        agent = await Agent.create(model, tools=[*builtin_tools, *source.tools], ...)

Each tool is named ``<prefix>__<tool>`` (see :mod:`.mcp_names`) and has side effects
by default, so the app asks the person before it runs. A call never hangs and never raises: a
server that exits, or neither answers nor reports progress within ``call_timeout``, gives a
failed result saying so; an error the tool reports (``isError``) gives a failed result with the
server's text. The configuration is :mod:`.mcp_config`, the transport :mod:`.mcp_stdio`, what
the model gets of a result (text and images) :mod:`.mcp_results`, the helpers around the
``mcp`` package :mod:`.mcp_wire`.

The ``mcp`` client keeps anyio task groups that must be entered and left by the same task, so the
whole connection lives in one background task that waits for :meth:`McpToolSource.aclose`;
calls from other tasks only send requests through the session. Closing stops the server
(stdin closed, then SIGTERM, then SIGKILL of its process group, each bounded) and reaps it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, Final

from ..errors import McpServerError, ToolArgumentError
from ..messages import ToolCall
from .functions import FunctionTool, ToolResult
from .mcp_config import DEFAULT_CALL_TIMEOUT, McpServerConfig
from .mcp_names import mcp_tool_name, server_prefix
from .mcp_progress import CURRENT_CALL, McpProgress, ProgressListener
from .mcp_results import result_content
from .mcp_stdio import stdio_transport
from .mcp_wire import (
    client_info,
    connection_closed,
    error_text,
    load_mcp,
    needs_task,
    read_only,
    settle,
)

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "McpServerConfig",
    "McpServerError",
    "McpTool",
    "McpToolSource",
    "mcp_tool_name",
]

logger = logging.getLogger(__name__)

#: How long the server may take to start and list its tools.
CONNECT_TIMEOUT: Final = 30.0
#: How long closing may take before the background task is abandoned (the mcp client's own
#: shutdown is bounded at about 6.5 s: stdin close 2 s, SIGTERM 2 s, SIGKILL 2 s).
CLOSE_TIMEOUT: Final = 10.0
_STDERR_TAIL: Final = 600


@dataclass(frozen=True, slots=True)
class McpTool(FunctionTool):
    """A tool of an MCP server; ``invoke`` answers with the server's result, never raises."""

    async def invoke(self, call: ToolCall) -> ToolResult:
        try:
            arguments = self._bind(call.arguments_dict())
        except ToolArgumentError as err:
            return ToolResult(f"Invalid arguments for {self.name}: {err}", success=False)
        token = CURRENT_CALL.set((call.id, self.name))  # progress reports name this call
        try:
            result = await self.function(**arguments)
        except Exception as err:  # pragma: no cover - _call answers every failure itself
            logger.exception("MCP tool %s failed unexpectedly", self.name)
            return ToolResult(f"{type(err).__name__}: {err}", success=False)
        finally:
            CURRENT_CALL.reset(token)
        assert isinstance(result, ToolResult)
        return result


class McpToolSource:
    """One running MCP server and its tools (see the module docstring)."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        close_timeout: float = CLOSE_TIMEOUT,
        prefix: str | None = None,
        route: Callable[[str, Mapping[str, Any]], Awaitable[ToolResult]] | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self._secrets = dict(secrets or {})  # secret variables' values (see McpServerConfig)
        #: Where its tools send their calls (default :meth:`call`; the app's services route
        #: them through the server's handle, which restarts a server that exited).
        self._route = route or self.call
        #: Told each progress report of a running call (the app shows it).
        self.on_progress: ProgressListener | None = None
        self._last_output = ""
        #: What its tools' names start with (unique among the servers: see :mod:`.mcp_names`).
        self.prefix = prefix or server_prefix(config.name)
        self.connect_timeout = connect_timeout
        self.close_timeout = close_timeout
        self._tools: tuple[McpTool, ...] = ()
        #: The server's ``instructions`` from its start (how to use its tools; "" if none).
        self.instructions = ""
        #: What the person should know about this server's tools (person-facing sentences):
        #: tools it lists that are not offered, and why.
        self.notes: list[str] = []
        self._session: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._failure: BaseException | None = None
        self._closed = False
        self._connecting = False  # start() is waiting for the server to answer
        self._stderr: IO[str] | None = None

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running" if self.alive else "not running"
        return f"McpToolSource({self.config.name!r}, {state}, tools={len(self._tools)})"

    @property
    def tools(self) -> tuple[McpTool, ...]:
        """The server's tools as listed at start (empty before :meth:`start`)."""
        return self._tools

    @property
    def alive(self) -> bool:
        """Whether the connection is up (false once the server exited or after closing)."""
        return (
            self._session is not None
            and self._runner is not None
            and not self._runner.done()
            and not self._stop.is_set()
        )

    async def __aenter__(self) -> McpToolSource:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the server and list its tools; :class:`McpServerError` if that fails."""
        if self._closed:
            raise McpServerError(f"The MCP server {self.config.name!r} connection was closed.")
        if self._runner is not None:
            return
        await load_mcp()
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._runner = asyncio.create_task(self._run(), name=f"mcp:{self.config.name}")
        self._connecting = True
        waiter = asyncio.ensure_future(self._ready.wait())
        try:
            done, _ = await asyncio.wait(
                {waiter, self._runner},
                timeout=self.connect_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        except BaseException:
            waiter.cancel()
            await self.aclose()
            raise
        waiter.cancel()
        if self._ready.is_set() and not self._runner.done():
            self._connecting = False
            return
        if not done:
            problem = f"did not start within {self.connect_timeout:g} seconds"
        else:
            problem = f"could not be started ({self._describe_failure()})"
        await self.aclose()
        raise McpServerError(
            f"The MCP server {self.config.name!r} {problem}; check its command in Settings."
            + self._stderr_hint()
        )

    async def aclose(self) -> None:
        """Stop the server and wait (bounded) until its process is gone. Safe to repeat."""
        self._closed = True
        runner = self._runner
        if runner is None or runner.done():
            self._close_stderr()
            return
        self._stop.set()
        if self._connecting:
            # Still starting (it waits for the server, not for _stop): cancel it; the
            # transport stops the process all the same (shielded, bounded).
            runner.cancel()
        what = f"MCP server {self.config.name!r} connection"
        try:
            await settle(runner, self.close_timeout, what)
            if not runner.done():
                logger.warning(
                    "MCP server %r did not stop in time; abandoning it", self.config.name
                )
                runner.cancel()
                await settle(runner, 1.0, what)
        finally:
            self._close_stderr()

    async def _run(self) -> None:
        import anyio
        from mcp import ClientSession
        from mcp import types as mcp_types

        assert self._stderr is not None
        ended = anyio.Event()
        try:
            async with (
                stdio_transport(
                    self.config.command,
                    self.config.args,
                    env={**(self.config.env or {}), **self._secrets},
                    cwd=self.config.cwd,
                    errlog=self._stderr,
                    ended=ended,
                ) as (read, write),
                ClientSession(read, write, client_info=client_info()) as session,
            ):
                started = await session.initialize()
                self.instructions = (getattr(started, "instructions", None) or "").strip()
                listed: list[Any] = []
                cursor: str | None = None
                while True:
                    page = await session.list_tools(
                        params=mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
                    )
                    listed.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self._tools = self._make_tools(listed)
                self._session = session
                self._ready.set()
                async with anyio.create_task_group() as group:  # until closed, or it exits

                    async def stop_when(event: Any) -> None:
                        await event.wait()
                        group.cancel_scope.cancel()

                    group.start_soon(stop_when, self._stop)
                    group.start_soon(stop_when, ended)
        except Exception as err:
            self._failure = err
            logger.info("MCP server %r connection ended: %r", self.config.name, err)
        finally:
            self._session = None

    def _make_tools(self, listed: Sequence[Any]) -> tuple[McpTool, ...]:
        tools: list[McpTool] = []
        taken: set[str] = set()
        tasks_only = [remote.name for remote in listed if needs_task(remote)]
        if tasks_only:
            self.notes.append(
                f"The MCP server {self.config.name!r} has {len(tasks_only)} tool(s) that only "
                "run as tasks, which Continuum cannot run yet, so the model is not offered "
                f"them: {', '.join(tasks_only)}."
            )
            logger.info("MCP server %r: task-only tools hidden: %s", self.config.name, tasks_only)
        for remote in listed:
            if needs_task(remote):
                continue
            name = mcp_tool_name(self.config.name, remote.name, taken, prefix=self.prefix)
            taken.add(name)
            schema = dict(remote.input_schema or {})
            schema.setdefault("type", "object")
            schema.setdefault("properties", {})
            description = (remote.description or "").strip() or remote.name
            tools.append(
                McpTool(
                    name=name,
                    description=f"{description} (from the MCP server {self.config.name!r})",
                    parameters=schema,
                    function=self._caller(remote.name),
                    side_effects=self.config.side_effects
                    and not (self.config.trust_read_only and read_only(remote)),
                    timeout=None,  # the call bounds itself, with a clearer message
                )
            )
        return tuple(tools)

    def _caller(self, remote_name: str) -> Any:
        route = self._route

        async def call(**arguments: Any) -> ToolResult:
            return await route(remote_name, arguments)

        call.__name__ = remote_name
        return call

    # --- calls --------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call the server's tool ``tool``; every failure is a failed result, never raised."""
        server = self.config.name
        session = self._session
        if session is None or not self.alive:
            return ToolResult(
                f"The MCP server {server!r} is not running, so {tool!r} was not called. "
                "Check its command in Settings.",
                success=False,
            )
        timeout = self.config.call_timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        current = CURRENT_CALL.get()

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            nonlocal deadline
            deadline = loop.time() + timeout  # working, not hung: the deadline moves
            listener = self.on_progress
            if listener is not None and current is not None:
                report = McpProgress(current[0], current[1], progress, total, message)
                try:
                    listener(report)
                except Exception:
                    logger.exception("showing the progress of %r failed", tool)

        # Both the session and our deadline: whichever notices first, the call ends.
        call = asyncio.ensure_future(
            session.call_tool(tool, dict(arguments), progress_callback=progressed)
        )
        assert self._runner is not None
        try:
            while True:
                done, _ = await asyncio.wait(
                    {call, self._runner},
                    timeout=max(0.0, deadline - loop.time()),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if done or loop.time() >= deadline:
                    break
        except asyncio.CancelledError:
            call.cancel()
            raise
        if call not in done:
            call.cancel()
            await settle(call, None, f"abandoned MCP call {tool!r} of {server!r}")
            if self._runner.done():
                return ToolResult(
                    self._stopped_text(tool, "it exited or closed its connection", hint=True),
                    success=False,
                )
            return ToolResult(
                self._stopped_text(tool, f"no answer within {timeout:g} seconds"),
                success=False,
            )
        try:
            result = call.result()
        except Exception as err:
            if connection_closed(err) or self._runner.done():
                self._stop.set()  # the runner shuts the transport down and reaps the process
                return ToolResult(
                    self._stopped_text(tool, "it exited or closed its connection", hint=True),
                    success=False,
                )
            return ToolResult(
                f"The MCP server {server!r} could not run {tool!r}: {error_text(err)}",
                success=False,
            )
        got = result_content(result, server=server, tool=tool, limit=self.config.max_result_chars)
        if getattr(result, "is_error", False):
            return ToolResult(
                got.text or f"The MCP server {server!r} reported an error in {tool!r}.",
                success=False,
                images=got.images,
            )
        return ToolResult(got.text, images=got.images)

    def _stopped_text(self, tool: str, why: str, *, hint: bool = False) -> str:
        return (
            f"The MCP server {self.config.name!r} stopped responding while running {tool!r} "
            f"({why}); the call may or may not have taken effect. Check its command in "
            "Settings." + (self._stderr_hint() if hint else "")
        )

    # --- diagnostics --------------------------------------------------------------------------

    def _describe_failure(self) -> str:
        err = self._failure
        if err is None:
            return "it exited"
        return error_text(err)

    def last_output(self) -> str:
        """The end of what the server wrote to stderr (kept after it stopped)."""
        handle = self._stderr
        if handle is None or handle.closed:
            return self._last_output
        try:
            handle.flush()
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 4 * _STDERR_TAIL))
            return handle.read().strip()[-_STDERR_TAIL:]
        except (OSError, ValueError):
            return self._last_output

    def _stderr_hint(self) -> str:
        tail = self.last_output()
        return f" Its last output: {tail}" if tail else ""

    def _close_stderr(self) -> None:
        if self._stderr is not None and not self._stderr.closed:
            self._last_output = self.last_output()
            self._stderr.close()

    async def ended(self) -> None:
        """Wait until the connection has ended (the server exited, or :meth:`aclose`)."""
        runner = self._runner
        if runner is not None:
            await asyncio.wait({runner})

    def exit_reason(self) -> str:
        """Why the connection ended, in a few words (person-facing)."""
        return self._describe_failure()
