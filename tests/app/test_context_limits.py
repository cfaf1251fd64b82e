"""Context windows (app/context_limits.py): what each server's answer means (tables), and the
real HTTP path against loopback servers that answer as Ollama and llama.cpp do — asked once per
(base URL, model), never blocking for long, unknown (``None``) rather than a guess."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from app.context_limits import (
    ContextLimit,
    ContextLimits,
    asks_server,
    context_used,
    llamacpp_limit,
    ollama_limit,
    published_limit,
    server_root,
)
from app.messages import AssistantMessage, Message, ToolMessage, Usage, UserMessage

# What Ollama answers (shapes from its API docs; ollama/ollama#11331 added context_length).
PS = {"models": [{"name": "qwen3:8b", "model": "qwen3:8b", "context_length": 8192}]}
SHOW = {
    "parameters": 'temperature 0.7\nnum_ctx             16384\nstop "<|im_end|>"',
    "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
}
SHOW_TRAINED = {"parameters": "temperature 0.7", "model_info": SHOW["model_info"]}


@pytest.mark.parametrize(
    ("model", "ps", "show", "expected", "settled"),
    [
        ("qwen3:8b", PS, SHOW, 8192, True),  # loaded: what the server allocated wins
        ("qwen3", {"models": [{"name": "qwen3:latest", "context_length": 4096}]}, None, 4096, True),
        ("qwen3:8b", {"models": []}, SHOW, 16384, True),  # num_ctx in its parameters
        ("qwen3:8b", None, SHOW_TRAINED, 40960, False),  # trained: may be less when loaded
        ("qwen3:8b", {"models": [{"name": "qwen3:8b", "context_length": 0}]}, None, None, None),
        ("qwen3:8b", None, {"model_info": {"general.architecture": 7}}, None, None),
        ("qwen3:8b", "not json", ["odd"], None, None),
        ("qwen3:8b", None, None, None, None),
    ],
)
def test_ollama_limit(
    model: str, ps: Any, show: Any, expected: int | None, settled: bool | None
) -> None:
    found = ollama_limit(model, ps, show)
    assert (found.tokens if found else None) == expected
    assert (found.settled if found else None) == settled


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"default_generation_settings": {"n_ctx": 32768, "params": {}}}, 32768),
        ({"default_generation_settings": {"n_ctx": 0}}, None),  # router mode: a placeholder
        ({"default_generation_settings": {"n_ctx": True}}, None),
        ({"default_generation_settings": "x"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_llamacpp_limit(props: Any, expected: int | None) -> None:
    found = llamacpp_limit(props)
    assert (found.tokens if found else None) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", 128_000),
        ("gpt-4o-2024-08-06", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-nano", 1_047_576),
        ("o4-mini", 200_000),
        ("gpt-5-mini", 400_000),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-3-5-haiku-latest", 200_000),
        ("openai/gpt-4o", 128_000),  # through a router
        ("GPT-4o", 128_000),
        ("llama3.2", None),
        ("sim-echo", None),
        ("", None),
    ],
)
def test_published_limit(model: str, expected: int | None) -> None:
    found = published_limit(model)
    assert (found.tokens if found else None) == expected
    if found:
        assert found.source.startswith("the published limit of ")


@pytest.mark.parametrize(
    ("url", "asked", "root"),
    [
        ("http://localhost:11434/v1", True, "http://localhost:11434"),
        ("http://127.0.0.1:8080/v1/", True, "http://127.0.0.1:8080"),
        ("http://gpu-box.lan:8080", True, "http://gpu-box.lan:8080"),  # plain http: local
        ("https://192.168.1.20/v1", True, "https://192.168.1.20"),
        ("https://api.openai.com/v1", False, "https://api.openai.com"),
        ("https://api.anthropic.com", False, "https://api.anthropic.com"),
        ("https://studio.local/v1", True, "https://studio.local"),
        ("not a url", False, "not a url"),
    ],
)
def test_which_servers_are_asked(url: str, asked: bool, root: str) -> None:
    assert asks_server(url) is asked
    assert server_root(url) == root


@pytest.mark.parametrize(
    ("messages", "used"),
    [
        ([], None),
        ([UserMessage("hi")], None),
        ([UserMessage("hi"), AssistantMessage("yo", usage=Usage(100, 20))], 120),
        ([UserMessage("hi"), AssistantMessage("yo", usage=Usage(100, None))], 100),
        ([UserMessage("hi"), AssistantMessage("yo")], None),  # not reported: never a guess
        (  # the newest answer counts, even without usage (an older one would understate)
            [AssistantMessage("a", usage=Usage(100, 20)), UserMessage("b"), AssistantMessage("c")],
            None,
        ),
        (
            [
                AssistantMessage("", usage=Usage(50, 5)),
                ToolMessage("t1", "read", "x"),
                AssistantMessage("done", usage=Usage(80, 7)),
                UserMessage("and?"),  # a question not answered yet: the last answer still counts
            ],
            87,
        ),
    ],
)
def test_context_used(messages: list[Message], used: int | None) -> None:
    assert context_used(messages) == used


# --- through HTTP, against loopback servers -----------------------------------------------------

Handler = Callable[[str, str, bytes], tuple[int, Any]]


@asynccontextmanager
async def _server(handler: Handler) -> AsyncIterator[tuple[str, list[str]]]:
    """A tiny HTTP/1.1 server on loopback: ``handler(method, path, body)`` → (status, JSON)."""
    seen: list[str] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        method, path, _ = head.split(" ", 2)
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
        body = await reader.readexactly(length) if length else b""
        seen.append(f"{method} {path}")
        status, data = handler(method, path, body)
        payload = json.dumps(data).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
            + payload
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        server.close()
        await server.wait_closed()


def _ollama(method: str, path: str, body: bytes) -> tuple[int, Any]:
    if (method, path) == ("GET", "/api/ps"):
        return 200, {"models": []}  # not loaded yet
    if (method, path) == ("POST", "/api/show"):
        assert json.loads(body) == {"model": "qwen3:8b"}
        return 200, SHOW
    return 404, {"error": "not found"}


def _llamacpp(method: str, path: str, _body: bytes) -> tuple[int, Any]:
    if (method, path) == ("GET", "/props"):
        return 200, {"default_generation_settings": {"n_ctx": 32768}, "total_slots": 1}
    return 404, {"error": {"code": 404, "message": "File Not Found"}}


async def test_ollama_over_http_is_asked_once() -> None:
    async with _server(_ollama) as (url, seen):
        limits = ContextLimits()
        found = await limits.limit(url, "qwen3:8b")
        assert found == ContextLimit(16384, "num_ctx in the model's Ollama parameters")
        asked = len(seen)
        assert await limits.limit(url, "qwen3:8b") == found  # cached
        assert limits.cached(url, "qwen3:8b") == found
        assert len(seen) == asked
        assert "POST /api/show" in seen


async def test_llamacpp_over_http_and_concurrent_callers_share_one_question() -> None:
    async with _server(_llamacpp) as (url, seen):
        limits = ContextLimits()
        results = await asyncio.gather(*(limits.limit(url, "any") for _ in range(5)))
        assert {r.tokens for r in results if r} == {32768} and all(results)
        assert seen.count("GET /props") == 1


async def test_a_server_with_no_answer_is_unknown_then_the_published_table() -> None:
    async with _server(lambda *_: (404, {})) as (url, seen):
        limits = ContextLimits()
        assert await limits.limit(url, "my-local-model") is None
        asked = len(seen)
        assert await limits.limit(url, "my-local-model") is None  # not asked again at once
        assert len(seen) == asked
        # A model with a published window behind a local proxy: the table answers.
        found = await limits.limit(url, "gpt-4o")
        assert found is not None and found.tokens == 128_000


async def test_a_closed_port_is_unknown_quickly() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    limits = ContextLimits()
    assert await asyncio.wait_for(limits.limit(f"http://127.0.0.1:{port}/v1", "m"), 5) is None


async def test_hosted_apis_are_not_asked() -> None:
    # The test network guard refuses anything but loopback: asking would fail loudly.
    limits = ContextLimits()
    found = await limits.limit("https://api.openai.com/v1", "gpt-4.1-mini")
    assert found is not None and found.tokens == 1_047_576
    assert await limits.limit("https://api.example.com/v1", "unknown-model") is None
