"""The one loopback HTTP server that plays the quirk corpus's recorded bytes.

It owns: reading ``tests/providers/quirks/`` files into the exact bytes a server sent
(``.http`` whole responses, CRLF head; ``.sse`` bodies sent chunked, one HTTP chunk per
event), framing a plain body as a whole response, serving queued answers on 127.0.0.1 in
order, and recording every request it was sent (method, path, raw body).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

QUIRKS = Path(__file__).resolve().parent / "quirks"
SSE = "text/event-stream"


def sse_response(body: str) -> bytes:
    """``body`` (SSE text) as a chunked 200 response, one HTTP chunk per event."""
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    )
    chunks = [
        f"{len(part.encode()):x}\r\n".encode() + part.encode() + b"\r\n"
        for part in (event + "\n\n" for event in body.split("\n\n") if event)
    ]
    return head + b"".join(chunks) + b"0\r\n\r\n"


def whole_response(body: bytes, *, status: int = 200, content_type: str = SSE) -> bytes:
    """``body`` as one response with a ``Content-Length`` (not chunked)."""
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def recorded(name: str) -> bytes:
    """The answer for ``quirks/<name>``: an ``.sse`` body, or an ``.http`` whole response.

    A name with neither suffix means ``<name>.http``.
    """
    if not name.endswith((".sse", ".http")):
        name += ".http"
    raw = (QUIRKS / name).read_bytes()
    if name.endswith(".sse"):
        return sse_response(raw.decode("utf-8"))
    head, _, body = raw.partition(b"\n\n")
    return b"\r\n".join(head.split(b"\n")) + b"\r\n\r\n" + body


@dataclass
class Sent:
    """One request as the server received it."""

    method: str
    path: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class RecordedServer:
    """Answers each request with the next queued response, and records what it was sent.

    ``repeat_last`` (the default) answers every request past the queue with its last entry;
    without it each answer is used once. ``refuse_stream_options`` (a response) answers every
    request whose body has ``stream_options`` without using up the queue, like a server that
    rejects the field.
    """

    def __init__(self, *, repeat_last: bool = True) -> None:
        self.repeat_last = repeat_last
        self.answers: list[bytes] = []
        self.refuse_stream_options: bytes | None = None
        self.requests: list[Sent] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """Each request's JSON body (``{}`` when it had none)."""
        return [sent.json() if sent.body else {} for sent in self.requests]

    def serve(self, *answers: str | bytes) -> None:
        """Queue these answers (names in the corpus, or whole responses as bytes)."""
        self.answers = [a if isinstance(a, bytes) else recorded(a) for a in answers]

    def queue(self, body: bytes, *, status: int = 200, content_type: str = SSE) -> None:
        """Add ``body`` to the queue as one whole response."""
        self.answers.append(whole_response(body, status=status, content_type=content_type))

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        length = next(
            (int(line.split(":", 1)[1]) for line in lines[1:]
             if line.lower().startswith("content-length:")),
            0,
        )  # fmt: skip
        body = await reader.readexactly(length) if length else b""
        self.requests.append(Sent(method, path, body))
        if self.refuse_stream_options is not None and "stream_options" in (
            json.loads(body) if body else {}
        ):
            answer = self.refuse_stream_options
        elif self.repeat_last:
            answer = self.answers[min(len(self.requests) - 1, len(self.answers) - 1)]
        else:
            answer = self.answers.pop(0)
        writer.write(answer)
        await writer.drain()
        writer.close()
        await writer.wait_closed()
