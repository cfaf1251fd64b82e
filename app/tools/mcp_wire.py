"""What the MCP connection needs from the ``mcp`` package beyond the session: importing it off
the event loop, how Continuum introduces itself, reading a listed tool's declarations, and how
an abandoned call or connection ended (expected, or a bug to log)."""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from typing import Any, Final

__all__ = [
    "client_info",
    "connection_closed",
    "error_text",
    "load_mcp",
    "needs_task",
    "read_only",
    "settle",
]

logger = logging.getLogger("app.tools.mcp")


#: The ``mcp`` modules the connection uses (imported together: about 1.5-2.5 s here).
_MCP_MODULES: Final = (
    "mcp",
    "mcp_types",
    "mcp.shared.message",
    "mcp.client.stdio",
    "mcp.os.posix.utilities",
)


async def load_mcp() -> None:
    """Import the ``mcp`` package in a worker thread (once), so that the event loop, and the
    window with it, goes on while it loads; only MCP code imports it, always after this."""
    if all(name in sys.modules for name in _MCP_MODULES):
        return
    await asyncio.to_thread(_import_mcp)


def _import_mcp() -> None:
    for name in _MCP_MODULES:
        importlib.import_module(name)


def client_info() -> Any:
    """How Continuum introduces itself to a server (not the ``mcp`` package's default)."""
    from mcp import types as mcp_types

    from .. import __version__

    return mcp_types.Implementation(name="Continuum", version=__version__)


def read_only(remote: Any) -> bool:
    """Whether a listed tool declares it changes nothing (``annotations.readOnlyHint``)."""
    return getattr(getattr(remote, "annotations", None), "read_only_hint", None) is True


def needs_task(remote: Any) -> bool:
    """Whether a listed tool runs only as a task (``execution.taskSupport: "required"``)."""
    execution = getattr(remote, "execution", None)
    return getattr(execution, "task_support", None) == "required"


async def settle(task: asyncio.Future[Any], within: float | None, what: str) -> None:
    """Wait (at most ``within`` seconds) for ``task``, which we cancelled, to end.

    Never raises except the caller's own cancellation (``asyncio.wait`` does not absorb it,
    unlike awaiting the task under ``suppress``). How the task ended is not our answer any
    more: cancelled, or a closed connection, is expected; anything else is logged with its
    traceback.
    """
    done, _ = await asyncio.wait({task}, timeout=within)
    if not done or task.cancelled():
        return
    err = task.exception()
    if err is not None and not _expected_end(err):
        logger.error("%s failed unexpectedly after it was abandoned", what, exc_info=err)


def _expected_end(err: BaseException) -> bool:
    """Whether ``err`` is how an abandoned call or connection normally ends (the server or
    its pipes went away, or it answered with an MCP error just before)."""
    import anyio
    from mcp import MCPError

    if isinstance(err, BaseExceptionGroup):
        return all(_expected_end(e) for e in err.exceptions)
    return isinstance(
        err,
        MCPError
        | OSError
        | anyio.ClosedResourceError
        | anyio.BrokenResourceError
        | anyio.EndOfStream,
    )


def connection_closed(err: BaseException) -> bool:
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(err, BaseExceptionGroup):
        return any(connection_closed(e) for e in err.exceptions)
    return isinstance(err, MCPError) and err.code == CONNECTION_CLOSED


def error_text(err: BaseException) -> str:
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(error_text(e) for e in err.exceptions)
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
