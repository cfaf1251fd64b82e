"""The simulator's minimal HTTP/1.1: reading one request, writing responses and chunks.

Only what a loopback provider needs: a request head (bounded by the stream reader's limit), a
``Content-Length`` or chunked body (bounded by ``max_body``), fixed-length responses and the
chunked framing of a streamed (SSE) body. What to answer is :mod:`app.simulator.server`'s
business; this module knows nothing of the provider protocols.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from http import HTTPStatus
from typing import Final

__all__ = [
    "LAST_CHUNK",
    "MAX_HEAD",
    "BadRequest",
    "Request",
    "chunk",
    "event_stream_head",
    "head",
    "phrase",
    "read_request",
    "send_bytes",
    "send_simple",
]

MAX_HEAD: Final = 64 * 1024
#: The zero-length chunk that ends a chunked body (no trailers).
LAST_CHUNK: Final = b"0\r\n\r\n"


class BadRequest(Exception):
    """A request that cannot be read; answered with ``status`` and the connection closed.

    ``path`` and ``headers`` are set when the head was read (a bad body), so the answer can
    be in the route's error format."""

    def __init__(
        self,
        status: int,
        message: str,
        path: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.path = path
        self.headers = headers or {}


@dataclass(slots=True)
class Request:
    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


async def read_request(
    reader: asyncio.StreamReader, *, idle_seconds: float, max_body: int
) -> Request | None:
    """The next request on a connection; None when the client ends it or stays idle."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), idle_seconds)
    except (asyncio.IncompleteReadError, TimeoutError):
        return None
    except asyncio.LimitOverrunError:
        raise BadRequest(431, "request head too large") from None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "not an HTTP/1.x request")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(400, "malformed header line")
        headers[name.strip().lower()] = _header_text(value.strip())
    try:
        body = await _read_body(reader, headers, max_body)
    except BadRequest as err:
        raise BadRequest(err.status, str(err), parts[1], headers) from None
    return Request(parts[0].upper(), parts[1], parts[2], headers, body)


def _header_text(value: str) -> str:
    """A header value read as latin-1, as UTF-8 when its bytes are valid UTF-8 (what clients
    send for non-ASCII text, e.g. ``X-Sim-Fault: text=héllo``)."""
    if value.isascii():
        return value
    raw = value.encode("latin-1")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return value


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str], max_body: int) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        size_total = 0
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise BadRequest(400, "malformed chunked body") from None
            if size == 0:
                await reader.readuntil(b"\r\n")  # no trailers are supported
                return b"".join(chunks)
            size_total += size
            if size_total > max_body:
                raise BadRequest(413, "request body too large for the simulator")
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise BadRequest(400, "bad Content-Length") from None
    if length < 0 or length > max_body:
        raise BadRequest(413, "request body too large for the simulator")
    return await reader.readexactly(length) if length else b""


def phrase(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def head(status: int, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {phrase(status)}", "Server: continuum-sim"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def event_stream_head(content_type: str | None = "text/event-stream; charset=utf-8") -> bytes:
    """The head of a 200 response whose body is an SSE stream in chunks (``content_type``
    None: no Content-Type header at all, as some proxies do)."""
    headers = [("Content-Type", content_type)] if content_type is not None else []
    headers += [("Cache-Control", "no-cache"), ("Transfer-Encoding", "chunked")]
    return head(200, headers)


def chunk(data: bytes) -> bytes:
    """``data`` framed as one chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


async def send_bytes(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes,
    content_type: str,
    extra: list[tuple[str, str]],
    keep_alive: bool,
) -> bool:
    """Send a whole response; returns ``keep_alive`` (whether the connection may be reused)."""
    headers = [("Content-Type", content_type), ("Content-Length", str(len(body))), *extra]
    if not keep_alive:
        headers.append(("Connection", "close"))
    writer.write(head(status, headers) + body)
    await writer.drain()
    return keep_alive


async def send_simple(
    writer: asyncio.StreamWriter, status: int, body: bytes, keep_alive: bool
) -> bool:
    return await send_bytes(writer, status, body, "text/plain", [], keep_alive)
