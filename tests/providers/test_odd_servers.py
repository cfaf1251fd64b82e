"""Servers that answer 200 with something other than an event stream (gateways, portals)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from app.errors import ProviderRateLimitError, ProviderStreamError
from app.providers import OpenAICompatibleModel

from .conftest import BOUND, collect, request


@pytest.fixture
async def fixed_server() -> AsyncIterator[Callable[[str, bytes], str]]:
    """``fixed_server(content_type, body)``: a loopback server answering every request so."""
    answer: dict[str, bytes] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(
            next(
                (line.split(b":")[1] for line in head.split(b"\r\n")
                 if line.lower().startswith(b"content-length:")),
                b"0",
            )
        )  # fmt: skip
        await reader.readexactly(length)
        writer.write(answer["response"])
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]

    def configure(content_type: str, body: bytes) -> str:
        answer["response"] = (
            f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body
        return f"http://127.0.0.1:{port}/v1"

    yield configure
    server.close()
    async with asyncio.timeout(BOUND):
        await server.wait_closed()


async def _run(base_url: str) -> ProviderStreamError | ProviderRateLimitError | None:
    model = OpenAICompatibleModel(base_url, "m", timeout=5.0)
    try:
        result = await collect(model.stream(request()))
    finally:
        await model.aclose()
    assert not result.output_before_error
    assert isinstance(result.error, ProviderStreamError | ProviderRateLimitError)
    return result.error


async def test_json_error_with_status_200(fixed_server: Callable[[str, bytes], str]) -> None:
    url = fixed_server(
        "application/json", b'{"error": {"type": "rate_limit_error", "message": "Slow down"}}'
    )
    err = await _run(url)
    assert isinstance(err, ProviderRateLimitError) and "Slow down" in str(err)


async def test_html_portal_with_status_200(fixed_server: Callable[[str, bytes], str]) -> None:
    url = fixed_server("text/html", b"<html><title>Hotel Wi-Fi login</title></html>")
    err = await _run(url)
    assert isinstance(err, ProviderStreamError) and not err.retryable
    assert "HTML page" in str(err) and "<" not in str(err)


async def test_plain_json_completion_is_refused_clearly(
    fixed_server: Callable[[str, bytes], str],
) -> None:
    url = fixed_server("application/json", b'{"choices": [{"message": {"content": "hi"}}]}')
    err = await _run(url)
    assert isinstance(err, ProviderStreamError) and "supports streaming" in str(err)
