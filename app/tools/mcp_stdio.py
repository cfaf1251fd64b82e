"""The stdio transport to an MCP server: its process, and its messages read line by line in
linear time with a bound on a line's length.

The ``mcp`` package's own stdio client joins its whole read buffer with each new chunk and splits
it again, so one answer of N bytes costs O(N²) and parsing it blocks the shared event loop (a
50 MB answer: 37 s and a 549 ms pause; calls behind it time out). Here:

* :class:`LineSplitter` finds line ends only in the new chunk and joins a line's chunks once;
* a line longer than :data:`MAX_LINE_BYTES` is never joined or parsed: its bytes are counted and
  dropped as they come, only its first and last few kB are kept, and the request it answers (its
  ``id`` is read from those ends, :func:`oversized_answer`) gets an error saying how big the
  answer was and what to do; the server's later answers are read as usual.

:func:`stdio_transport` starts the server (its own process group, an environment made of a few
inherited variables plus the configured ones) and yields the ``(read, write)`` streams
``mcp.ClientSession`` takes. Leaving it stops the server as the MCP specification says: stdin
closed, a grace period, SIGTERM to its process group, SIGKILL; every wait bounded, shielded from
cancellation so a cancelled caller never leaks a process. POSIX only; on Windows the ``mcp``
package's client is used.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any, Final

import anyio
import anyio.lowlevel

__all__ = [
    "MAX_LINE_BYTES",
    "LineSplitter",
    "Oversized",
    "oversized_answer",
    "stdio_transport",
]

logger = logging.getLogger(__name__)

#: The longest message read from a server. Parsing holds the event loop (about 7.5 ms per MB,
#: the GIL is not released), so 8 MB is at most a ~60 ms pause; what the model sees of a result
#: is cut at 100,000 characters anyway (:mod:`.mcp_results`).
MAX_LINE_BYTES: Final = 8_000_000
#: How much of each end of an oversized line is kept to find the request's id.
_END_BYTES: Final = 4_096
_READ_BYTES: Final = 1 << 20
_STDIN_CLOSE_GRACE: Final = 2.0
_TERM_GRACE: Final = 2.0
_KILL_GRACE: Final = 2.0
_WRITER_FLUSH: Final = 0.5
#: Codes of the error an oversized answer gets (JSON-RPC's "server error" range).
OVERSIZED_CODE: Final = -32_001


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the bound: its size, and its first and last bytes."""

    size: int
    head: bytes
    tail: bytes


class LineSplitter:
    """Bytes in, complete lines (or :class:`Oversized` records) out; linear in the input."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._head = b""
        self._tail = b""
        self._over = False

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines ``chunk`` completes, in order (without their line ends)."""
        out: list[bytes | Oversized] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._take(chunk[start:end])
            out.append(self._finish())
            start = end + 1
        if start < len(chunk):
            self._take(chunk[start:])
        return out

    def _take(self, piece: bytes) -> None:
        if not piece:
            return
        self._size += len(piece)
        if self._over:
            self._tail = (self._tail + piece)[-_END_BYTES:]
            return
        self._parts.append(piece)
        if self._size > self.limit:
            whole = b"".join(self._parts)  # once per oversized line, at most limit + one chunk
            self._head, self._tail = whole[:_END_BYTES], whole[-_END_BYTES:]
            self._parts, self._over = [], True

    def _finish(self) -> bytes | Oversized:
        if self._over:
            line: bytes | Oversized = Oversized(self._size, self._head, self._tail)
        else:
            line = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        self._parts, self._size, self._head, self._tail, self._over = [], 0, b"", b"", False
        return line


_ID = rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")'
_ID_FIRST = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?' + _ID)
_ID_LAST = re.compile(rb"[,{]\s*" + _ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')


def oversized_id(line: Oversized) -> int | str | None:
    """The JSON-RPC id of an oversized message, when it is the first or last key."""
    for pattern, text in ((_ID_FIRST, line.head), (_ID_LAST, line.tail)):
        found = pattern.search(text)
        if found:
            value = json.loads(found.group(1))
            if isinstance(value, int | str):
                return value
    return None


def oversized_answer(line: Oversized, limit: int = MAX_LINE_BYTES) -> dict[str, Any] | None:
    """The JSON-RPC error that stands for an oversized answer (``None``: no id found, so no
    request can be answered)."""
    message_id = oversized_id(line)
    if message_id is None:
        return None
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "error": {
            "code": OVERSIZED_CODE,
            "message": (
                f"its answer was {_megabytes(line.size)}, more than the {_megabytes(limit)} "
                "Continuum reads from one answer, so none of it was used; ask the tool for a "
                "smaller part (an offset, a range, a narrower query or a filter) if it offers one"
            ),
        },
    }


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _parse(line: bytes | Oversized, limit: int) -> Any:
    """A line as a ``SessionMessage`` (or the exception the session should see; ``None``: skip)."""
    import mcp_types
    from mcp.shared.message import SessionMessage

    if isinstance(line, Oversized):
        answer = oversized_answer(line, limit)
        if answer is None:
            logger.warning(
                "An MCP server sent a message of %d bytes without a readable id; it was dropped",
                line.size,
            )
            return None
        logger.info("An MCP server's answer of %d bytes was dropped (over the bound)", line.size)
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(answer))
    if not line.strip():
        return None
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line))
    except ValueError as err:
        logger.info("An MCP server sent a line that is not a JSON-RPC message: %s", err)
        return err


#: Variables of Continuum's environment a server gets besides the ``mcp`` package's few (PATH,
#: HOME, ...): locale, time zone, temporary and XDG folders, proxies and certificate
#: authorities, so servers work behind a proxy and speak the person's language. Not the rest:
#: it may hold other programs' secrets.
INHERITED: Final = (
    *("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TMPDIR"),
    *("XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"),
    *("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"),
    *("http_proxy", "https_proxy", "no_proxy", "all_proxy"),
    *("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"),
)


def server_environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The environment a server starts with: the ``mcp`` package's few inherited variables,
    :data:`INHERITED`, and the configured ones over them."""
    from mcp.client.stdio import get_default_environment

    inherited = {name: os.environ[name] for name in INHERITED if os.environ.get(name)}
    return get_default_environment() | inherited | dict(extra or {})


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    cwd: str | None,
    errlog: IO[str],
    limit: int = MAX_LINE_BYTES,
    ended: anyio.Event | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server and yield ``(read, write)`` streams for ``mcp.ClientSession``;
    ``ended`` is set when the server closes its output (it exited)."""
    if sys.platform == "win32":  # pragma: no cover - the mcp package's client there
        from mcp import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=command, args=list(args), env=env, cwd=cwd)
        async with stdio_client(params, errlog=errlog) as streams:  # type: ignore[arg-type]
            yield streams
        return
    async with _posix_transport(command, args, env, cwd, errlog, limit, ended) as streams:
        yield streams


@asynccontextmanager
async def _posix_transport(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | None,
    errlog: IO[str],
    limit: int,
    ended: anyio.Event | None,
) -> AsyncIterator[tuple[Any, Any]]:
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [command, *args],
        env=server_environment(env),
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,
    )
    # No await between the spawn and the task group: a cancellation there would leak it.
    to_session, from_server = anyio.create_memory_object_stream[Any](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    closing = False

    async def read_stdout() -> None:
        assert process.stdout is not None
        splitter = LineSplitter(limit)
        delivering = True
        try:
            async with to_session:
                while True:
                    try:
                        chunk = await process.stdout.receive(_READ_BYTES)
                    except (anyio.EndOfStream, anyio.ClosedResourceError):
                        if ended is not None:
                            ended.set()
                        return
                    if not delivering:
                        continue  # the session is gone: drain, so a writing server can exit
                    for line in splitter.feed(chunk):
                        message = _parse(line, limit)
                        if message is None:
                            continue
                        try:
                            await to_session.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            delivering = False
                            break
        except (anyio.BrokenResourceError, OSError):
            if not closing:
                logger.exception("Reading an MCP server's output failed")

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the session sees the connection end, not a hang
        finally:
            writer_done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(write_stdin)
        try:
            yield from_server, to_server
        finally:
            closing = True
            with anyio.CancelScope(shield=True):
                from_server.close()
                to_server.close()
                with anyio.move_on_after(_WRITER_FLUSH):
                    await writer_done.wait()
                await _stop(process)
                for stream in (from_server, to_server, to_session, from_session):
                    await stream.aclose()
                await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()


async def _stop(process: Any) -> None:
    """Stdin closed, then SIGTERM and SIGKILL to the process group; each wait bounded."""
    from mcp.os.posix.utilities import terminate_posix_process_tree

    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, _STDIN_CLOSE_GRACE):
        await terminate_posix_process_tree(process, _TERM_GRACE)
        if not await _exited(process, _KILL_GRACE):
            logger.warning("MCP server process %d survived SIGKILL; abandoning it", process.pid)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):  # else a descendant holding a pipe keeps it open (and warns at GC)
        with suppress(PermissionError):
            close()


async def _exited(process: Any, within: float) -> bool:
    """Whether the process exits within ``within`` seconds (``returncode`` polled: ``wait()``
    also waits for the pipes, which a grandchild may hold)."""
    with anyio.move_on_after(within):
        # Polled on purpose: no event fires when a process exits without closing its pipes.
        while process.returncode is None:  # noqa: ASYNC110
            await anyio.sleep(0.01)
        return True
    return False
