"""Anthropic as people and servers actually use it (issue 13).

- The base URL typed with or without ``/v1`` (and a trailing slash) reaches ``/v1/messages``
  and ``/v1/models``, never ``/v1/v1/…``.
- Anthropic-shaped error replies (``{"type": "error", "error": {...}}``) from both routes
  become the typed errors, with the server's own message.
- Thinking blocks are kept: recorded streams from ``tests/providers/quirks/`` served on
  127.0.0.1, run through ``Agent`` + a real SQLite file; the saved assistant message holds
  the thinking text and the exact signature (or the redacted data).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from app.errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderContextLengthError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderServerError,
)
from app.providers import AnthropicModel
from app.simulator import Simulator

from .conftest import BOUND, collect, request

SSE = "text/event-stream"

# --- the base URL, with or without /v1 ------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "root"),
    [
        ("https://api.anthropic.com", "https://api.anthropic.com"),
        ("https://api.anthropic.com/", "https://api.anthropic.com"),
        ("https://api.anthropic.com/v1", "https://api.anthropic.com"),
        ("https://api.anthropic.com/v1/", "https://api.anthropic.com"),
        ("  https://api.anthropic.com/v1//  ", "https://api.anthropic.com"),
        ("https://gateway.example/anthropic", "https://gateway.example/anthropic"),
        ("https://gateway.example/anthropic/v1", "https://gateway.example/anthropic"),
        ("http://127.0.0.1:4000/v1/", "http://127.0.0.1:4000"),
        # Only a whole last segment "v1" is the API version; these are left as typed.
        ("https://gateway.example/apiv1", "https://gateway.example/apiv1"),
        ("https://gateway.example/v1/team", "https://gateway.example/v1/team"),
        ("http://v1", "http://v1"),
        ("http://v1/v1", "http://v1"),
    ],
)
def test_base_url_forms(typed: str, root: str) -> None:
    model = AnthropicModel(typed, "claude-sonnet-4-5")
    assert model.base_url == root


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_base_url_forms_reach_the_api(sim: Simulator, suffix: str) -> None:
    model = AnthropicModel(sim.base_url + suffix, "sim-claude", timeout=5.0)
    try:
        result = await collect(model.stream(request("hello")))
        async with asyncio.timeout(BOUND):
            listed = await model.list_models()
    finally:
        await model.aclose()
    assert result.error is None and result.text
    assert listed == list(sim.models)
    assert [(r.method, r.path) for r in sim.requests] == [
        ("POST", "/v1/messages"),
        ("GET", "/v1/models"),
    ]


# --- a loopback server that plays recorded bytes and records what it was sent ---------------


@dataclass
class Sent:
    method: str
    path: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Playback:
    """Answers each request with the next queued reply (status, content type, bytes)."""

    url: str = ""
    replies: list[tuple[int, str, bytes]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)

    def queue(self, body: bytes, *, status: int = 200, content_type: str = SSE) -> None:
        self.replies.append((status, content_type, body))

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        length = next(
            (int(line.split(":", 1)[1]) for line in lines[1:]
             if line.lower().startswith("content-length:")),
            0,
        )  # fmt: skip
        self.sent.append(Sent(method, path, await reader.readexactly(length)))
        status, content_type, body = self.replies.pop(0)
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()
        await writer.wait_closed()


@pytest.fixture
async def playback() -> AsyncIterator[Playback]:
    server_state = Playback()
    server = await asyncio.start_server(server_state.handle, "127.0.0.1", 0)
    server_state.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    yield server_state
    server.close()
    async with asyncio.timeout(BOUND):
        await server.wait_closed()


# --- Anthropic-shaped error replies, on both routes -----------------------------------------


def anthropic_error(kind: str, message: str) -> bytes:
    """The body the Messages API sends with an error status (its documented shape)."""
    return json.dumps(
        {"type": "error", "error": {"type": kind, "message": message},
         "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}
    ).encode()  # fmt: skip


ERRORS = [
    (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum",
     ProviderContextLengthError, False),
    (400, "invalid_request_error", "temperature: range: 0..1", ProviderBadRequestError, False),
    (401, "authentication_error", "invalid x-api-key", ProviderAuthError, False),
    (403, "permission_error", "Your API key does not have permission to use the specified "
     "resource.", ProviderAuthError, False),
    (404, "not_found_error", "model: claude-nonexistent", ProviderNotFoundError, False),
    (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate "
     "limit", ProviderRateLimitError, True),
    (500, "api_error", "Internal server error", ProviderServerError, True),
    (529, "overloaded_error", "Overloaded", ProviderServerError, True),
]  # fmt: skip


@pytest.mark.parametrize("route", ["messages", "models"])
@pytest.mark.parametrize(("status", "kind", "message", "expected", "retryable"), ERRORS)
async def test_anthropic_error_replies(
    playback: Playback,
    route: str,
    status: int,
    kind: str,
    message: str,
    expected: type[ProviderError],
    retryable: bool,
) -> None:
    playback.queue(anthropic_error(kind, message), status=status, content_type="application/json")
    model = AnthropicModel(playback.url + "/v1", "claude-sonnet-4-5", timeout=5.0)
    try:
        if route == "messages":
            result = await collect(model.stream(request()))
            assert not result.output_before_error
            err = result.error
        else:
            with pytest.raises(ProviderError) as caught:
                async with asyncio.timeout(BOUND):
                    await model.list_models()
            err = caught.value
    finally:
        await model.aclose()
    assert [(s.method, s.path.split("?")[0]) for s in playback.sent] == [
        ("POST" if route == "messages" else "GET", f"/v1/{route}")
    ]
    assert type(err) is expected, err
    assert err.status_code == status and err.retryable is retryable
    assert message[:40] in str(err)
