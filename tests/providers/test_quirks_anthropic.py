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
from pathlib import Path

import httpx
import pytest

from app import (
    Agent,
    AgentEvent,
    AgentRunConfig,
    AssistantMessage,
    Message,
    Reasoning,
    ReasoningDeltaEvent,
    RetryPolicy,
    SQLiteSessionExtension,
    StopReason,
    ToolMessage,
    UserMessage,
)
from app.errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderContextLengthError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderServerError,
)
from app.model import ReasoningComplete, ReasoningDelta, StepBuilder
from app.providers import AnthropicModel, events_from_response
from app.providers.anthropic import AnthropicStreamParser
from app.simulator import Simulator
from app.storage import SQLiteSessionStore

from .conftest import BOUND, FIXTURES, collect, request
from .recorded import QUIRKS, RecordedServer

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


@pytest.fixture
async def playback() -> AsyncIterator[RecordedServer]:
    item = RecordedServer(repeat_last=False)
    await item.start()
    yield item
    async with asyncio.timeout(BOUND):
        await item.stop()


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
    playback: RecordedServer,
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
    assert [(s.method, s.path.split("?")[0]) for s in playback.requests] == [
        ("POST" if route == "messages" else "GET", f"/v1/{route}")
    ]
    assert type(err) is expected, err
    assert err.status_code == status and err.retryable is retryable
    assert message[:40] in str(err)
    assert "OpenAI" not in str(err)  # hints name Anthropic's base URL forms, not OpenAI's


# --- thinking blocks are kept and sent back ---------------------------------------------------

TEXT_ANSWER = (FIXTURES / "anthropic_text.sse").read_bytes()
FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=1.0)


def corpus(name: str) -> bytes:
    return (QUIRKS / name).read_bytes()


def signature_in(name: str, index: int) -> str:
    """The signature_delta of block ``index`` in a corpus file, read from its bytes."""
    for line in corpus(name).decode().splitlines():
        if line.startswith("data: "):
            data = json.loads(line.removeprefix("data: "))
            delta = data.get("delta") or {}
            if data.get("index") == index and delta.get("type") == "signature_delta":
                return str(delta["signature"])
    raise AssertionError(f"no signature for block {index} in {name}")


async def run_agent(playback: RecordedServer, db: Path) -> tuple[list[AgentEvent], list[Message]]:
    """One turn through Agent + a real SQLite file; the history as a fresh connection reads it."""
    notes: list[str] = []

    def read_note(path: str) -> str:
        """Read a note."""
        notes.append(path)
        return f"contents of {path}"

    model = AnthropicModel(playback.url, "claude-sonnet-4-5", "sk-ant-test-0123456789", timeout=5)
    extension = SQLiteSessionExtension(db)
    events: list[AgentEvent] = []
    try:
        agent = await Agent.create(
            model,
            config=AgentRunConfig("s1", retry=FAST),
            tools=[read_note],
            extensions=[extension],
        )
        async with asyncio.timeout(BOUND):
            async for event in agent.stream("What is on my to-do list?"):
                events.append(event)
    finally:
        await model.aclose()
        await extension.storage.close()
    assert len(notes) == 1  # the tool ran once: the thinking block did not disturb the call
    store = SQLiteSessionStore(db)
    try:
        await store.open()
        return events, await store.load("s1")
    finally:
        await store.close()


def thinking_deltas(events: list[AgentEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDeltaEvent))


async def test_thinking_signature_saved_and_sent_back(
    playback: RecordedServer, tmp_path: Path
) -> None:
    name = "anthropic-2023-06-01-thinking-signature-tool-use.sse"
    playback.queue(corpus(name))
    playback.queue(TEXT_ANSWER)
    events, history = await run_agent(playback, tmp_path / "continuum.sqlite")

    thought = "The user asks what is on the to-do list. I should read todo.txt with read_note — « first »."
    signature = signature_in(name, 0)
    assert [type(m) for m in history] == [UserMessage, AssistantMessage, ToolMessage,
                                          AssistantMessage]  # fmt: skip
    step = history[1]
    assert isinstance(step, AssistantMessage)
    assert step.reasoning == (Reasoning(thought, signature=signature),)
    assert step.reasoning[0].signature == signature  # byte for byte, after a restart
    assert step.content == ""  # thinking is not the answer's text
    assert [c.name for c in step.tool_calls] == ["read_note"]
    assert step.stop_reason is StopReason.TOOL_USE
    assert thinking_deltas(events) == thought  # shown as it streamed, apart from the text

    # The request that carries the tool result sends the block back unchanged, first.
    assert len(playback.requests) == 2
    turn = playback.requests[1].json()["messages"][1]
    assert turn["role"] == "assistant"
    assert turn["content"][0] == {"type": "thinking", "thinking": thought, "signature": signature}
    assert [b["type"] for b in turn["content"]] == ["thinking", "tool_use"]


async def test_redacted_thinking_saved_and_sent_back(
    playback: RecordedServer, tmp_path: Path
) -> None:
    name = "anthropic-2023-06-01-redacted-thinking-tool-use.sse"
    playback.queue(corpus(name))
    playback.queue(TEXT_ANSWER)
    events, history = await run_agent(playback, tmp_path / "continuum.sqlite")

    start = next(
        json.loads(line.removeprefix("data: "))
        for line in corpus(name).decode().splitlines()
        if '"redacted_thinking"' in line
    )
    data = start["content_block"]["data"]
    signature = signature_in(name, 0)
    step = history[1]
    assert isinstance(step, AssistantMessage)
    assert step.reasoning == (
        Reasoning("Let me look at the note first.", signature=signature),
        Reasoning(redacted=data),
    )
    assert step.content == "" and [c.name for c in step.tool_calls] == ["read_note"]
    assert thinking_deltas(events) == "Let me look at the note first."

    turn = playback.requests[1].json()["messages"][1]
    assert turn["content"][:2] == [
        {"type": "thinking", "thinking": "Let me look at the note first.", "signature": signature},
        {"type": "redacted_thinking", "data": data},
    ]
    assert [b["type"] for b in turn["content"]] == ["thinking", "redacted_thinking", "tool_use"]


async def test_thinking_cut_by_max_tokens_is_kept_unsigned() -> None:
    """A thinking block left open by max_tokens has no signature: kept, never sent back."""
    body = b"".join(
        f"event: {json.loads(data)['type']}\ndata: {data}\n\n".encode()
        for data in (
            '{"type":"message_start","message":{"id":"msg_1","type":"message","role":'
            '"assistant","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}',
            '{"type":"content_block_start","index":0,"content_block":{"type":"thinking",'
            '"thinking":""}}',
            '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta",'
            '"thinking":"First, the"}}',
            '{"type":"message_delta","delta":{"stop_reason":"max_tokens"},'
            '"usage":{"output_tokens":16}}',
            '{"type":"message_stop"}',
        )
    )
    response = httpx.Response(200, headers={"content-type": SSE}, content=body)
    result = await collect(events_from_response(response, AnthropicStreamParser()))
    assert result.events[0] == ReasoningDelta("First, the")
    assert not any(isinstance(e, ReasoningComplete) for e in result.events)
    assert result.stop is StopReason.MAX_OUTPUT
    builder = StepBuilder()
    for event in result.events:
        builder.feed(event)
    assert builder.reasoning == (Reasoning("First, the"),)
    assert not builder.reasoning[0].signed
