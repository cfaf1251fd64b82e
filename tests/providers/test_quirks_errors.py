"""Servers' quirks in errors, SSE plumbing and content types, served from recorded bytes.

Each case serves files of ``tests/providers/quirks/`` (whole HTTP responses, see their ``.md``)
on 127.0.0.1, runs a real :class:`~app.Agent` on a real SQLite file through the real provider
class, and checks what the database holds, what ``resume_point()`` says and how many requests
were made (an error that is not retried is exactly one request).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    Message,
    ProviderContextLengthError,
    ResumeKind,
    RetryPolicy,
    SQLiteSessionExtension,
    StopReason,
    ToolMessage,
    UserMessage,
)
from app.errors import ProviderError, ProviderQuotaError, ProviderRateLimitError
from app.messages import Reasoning
from app.model import ReasoningComplete, StepEnd, TextDelta
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.providers.anthropic import AnthropicStreamParser
from app.providers.base import HTTPModel
from app.providers.errors import error_from_event, error_from_response
from app.providers.sse import SSEDecoder, looks_like_sse, sse_lines
from app.providers.whole import anthropic_events, openai_events
from app.storage import SQLiteSessionStore

from .conftest import BOUND
from .recorded import RecordedServer

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=1.0)


@pytest.fixture
async def server() -> AsyncIterator[RecordedServer]:
    item = RecordedServer()
    await item.start()
    yield item
    async with asyncio.timeout(BOUND):
        await item.stop()


@pytest.fixture
async def run(server: RecordedServer, tmp_path: Path) -> AsyncIterator[Any]:
    """``run(protocol, text)``: the agent's reply (or error) and the saved history."""
    db = tmp_path / "continuum.sqlite"
    extension = SQLiteSessionExtension(db)
    models: list[HTTPModel] = []
    notes: list[str] = []

    def read_note(path: str) -> str:
        """Read a note."""
        notes.append(path)
        return "buy milk"

    async def go(protocol: str, text: str = "hello") -> tuple[Any, list[Message], Agent]:
        model: HTTPModel
        if protocol == "openai":
            model = OpenAICompatibleModel(f"{server.url}/v1", "m", "sk-test-1234567", timeout=5)
        else:
            model = AnthropicModel(server.url, "m", "sk-test-1234567", timeout=5)
        models.append(model)
        agent = await Agent.create(
            model,
            config=AgentRunConfig("s1", retry=FAST),
            tools=[read_note],
            extensions=[extension],
        )
        outcome: Any
        async with asyncio.timeout(BOUND):
            try:
                outcome = await agent.run(text)
            except ProviderError as err:
                outcome = err
        return outcome, await saved(db), agent

    go.notes = notes  # type: ignore[attr-defined]
    yield go
    async with asyncio.timeout(BOUND):
        for model in models:
            await model.aclose()
        await extension.storage.close()


async def saved(db: Path) -> list[Message]:
    """The history as a fresh connection to the file reads it (what a relaunch sees)."""
    store = SQLiteSessionStore(db)
    try:
        await store.open()
        return await store.load("s1")
    finally:
        await store.close()


# --- errors ------------------------------------------------------------------------------


async def test_llama_cpp_exceed_context_size_400_is_context_full(
    server: RecordedServer, run: Any
) -> None:
    server.serve("llama.cpp-b6500-exceed-context-size-400")
    err, history, agent = await run("openai")
    assert isinstance(err, ProviderContextLengthError) and not err.retryable
    assert "no longer fits the context window" in str(err)
    assert "exceeds the available context size" in str(err)
    assert "likely a bug" not in str(err)
    assert len(server.requests) == 1  # not retried
    # Marked as an empty CONTEXT_FULL step: Resume would send what cannot fit again.
    assert [type(m) for m in history] == [UserMessage, AssistantMessage]
    assert history[-1].stop_reason is StopReason.CONTEXT_FULL
    assert await agent.resume_point() is None


async def test_llama_cpp_error_sse_field_is_that_error_not_retried(
    server: RecordedServer, run: Any
) -> None:
    server.serve("llama.cpp-b5000-sse-error-field")
    err, history, agent = await run("openai")
    assert isinstance(err, ProviderContextLengthError) and not err.retryable
    assert "exceeds the available context size" in str(err)
    assert "finish reason" not in str(err)
    assert len(server.requests) == 1  # not retried
    assert [type(m) for m in history] == [UserMessage, AssistantMessage]
    assert history[-1].stop_reason is StopReason.CONTEXT_FULL
    assert await agent.resume_point() is None


async def test_openai_insufficient_quota_is_a_billing_error_not_retried(
    server: RecordedServer, run: Any
) -> None:
    server.serve("openai-2024-429-insufficient-quota")
    err, history, agent = await run("openai")
    assert isinstance(err, ProviderQuotaError) and not err.retryable
    assert not isinstance(err, ProviderRateLimitError)
    text = str(err)
    assert "billing" in text and "quota" in text
    assert "too many requests" not in text.lower() and "wait" not in text.lower()
    assert len(server.requests) == 1  # not retried
    assert [type(m) for m in history] == [UserMessage]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL


# --- content types -----------------------------------------------------------------------

WHOLE = {
    "openai": (
        "proxy-chat-completions-whole-json-tool-calls",
        "proxy-chat-completions-whole-json-text",
        "",
    ),
    "anthropic": (
        "litellm-1.x-v1-messages-whole-json-tool-use",
        "litellm-1.x-v1-messages-whole-json-text",
        "Let me read it.",
    ),
}


@pytest.mark.parametrize("protocol", sorted(WHOLE))
async def test_whole_json_answer_despite_stream_true_is_accepted(
    protocol: str, server: RecordedServer, run: Any
) -> None:
    first, second, first_text = WHOLE[protocol]
    server.serve(first, second)
    reply, history, agent = await run(protocol, "what does my note say?")
    assert isinstance(reply, AssistantMessage), reply
    assert reply.content == "The note says: buy milk." and reply.stop_reason is StopReason.END_TURN
    assert run.notes == ["todo.txt"]  # the tool ran once, with the whole answer's arguments
    assert [type(m) for m in history] == [UserMessage, AssistantMessage, ToolMessage,
                                          AssistantMessage]  # fmt: skip
    call_step = history[1]
    assert isinstance(call_step, AssistantMessage)
    assert call_step.content == first_text and call_step.stop_reason is StopReason.TOOL_USE
    assert [(c.name, c.arguments) for c in call_step.tool_calls] == [
        ("read_note", {"path": "todo.txt"})
    ]
    assert call_step.usage is not None and call_step.usage.input_tokens in (61, 42)
    assert history[-1] == reply
    assert len(server.requests) == 2 and all(body["stream"] for body in server.bodies)
    assert await agent.resume_point() is None


@pytest.mark.parametrize(
    ("protocol", "name"),
    [("openai", "proxy-sse-text-plain"), ("anthropic", "proxy-sse-no-content-type")],
)
async def test_event_stream_without_its_content_type_is_parsed(
    protocol: str, name: str, server: RecordedServer, run: Any
) -> None:
    server.serve(name)
    reply, history, agent = await run(protocol)
    assert isinstance(reply, AssistantMessage), reply
    assert reply.content == "Hello from behind a proxy."
    assert reply.stop_reason is StopReason.END_TURN
    assert reply.usage is not None and reply.usage.input_tokens == 12
    assert [type(m) for m in history] == [UserMessage, AssistantMessage]
    assert history[-1] == reply
    assert len(server.requests) == 1
    assert await agent.resume_point() is None


# --- the pure pieces, by table -----------------------------------------------------------


def _decode(lines: list[str]) -> list[tuple[str, str]]:
    decoder = SSEDecoder()
    events = [decoder.decode(line) for line in lines]
    events.append(decoder.flush())
    return [(e.event, e.data) for e in events if e is not None]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["data: a", "data: b", ""], [("message", "a\nb")]),
        (["event: ping", "data: {}", ""], [("ping", "{}")]),
        ([": keep-alive", "", "data:x", ""], [("message", "x")]),
        (["event: only-a-name", ""], []),  # no data lines: not dispatched
        (["event: only-a-name", "", "data: next", ""], [("message", "next")]),  # and reset
        (["data:  two spaces", "data:", ""], [("message", " two spaces\n")]),  # one space cut
        (["unknown: field", "data: kept", ""], [("message", "kept")]),
        (['error: {"message": "m"}', "", "data: [DONE]", ""],
         [("error", '{"message": "m"}'), ("message", "[DONE]")]),
        (['error: {"message": "m"}'], [("error", '{"message": "m"}')]),  # no blank line at EOF
        (["data: unfinished"], []),  # the spec drops an unfinished event at the end
    ],
)  # fmt: skip
def test_sse_decoder(lines: list[str], expected: list[tuple[str, str]]) -> None:
    assert _decode(lines) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [("data: {}", True), ("event: message_start", True), (": ok", True), ("error: {}", True),
     ("retry: 10", True), ("Not Found", False), ('{"choices": []}', False), ("", False),
     ("<html>", False)],
)  # fmt: skip
def test_looks_like_sse(line: str, expected: bool) -> None:
    assert looks_like_sse(line) is expected


async def test_sse_lines_split_only_at_cr_lf_and_crlf() -> None:
    async def chunks() -> AsyncIterator[str]:
        for piece in ["data: a\u2028b\r", "\ndata: c\rdata: d\n", "\nlast"]:
            yield piece

    assert [line async for line in sse_lines(chunks())] == [
        "data: a\u2028b", "data: c", "data: d", "", "last"
    ]  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [None, [], {"choices": [{"message": {"content": "hi"}}]}, {"choices": "x"},
     {"type": "message", "content": [], "stop_reason": None}, {"type": "error"}],
)  # fmt: skip
def test_whole_bodies_that_are_not_finished_answers(body: Any) -> None:
    assert openai_events(body) is None and anthropic_events(body) is None


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (429, '{"error": {"type": "insufficient_quota", "code": "insufficient_quota"}}',
         ProviderQuotaError),
        (429, '{"error": {"type": "requests", "code": "rate_limit_exceeded"}}',
         ProviderRateLimitError),
        (402, '{"error": {"message": "Insufficient credits"}}', ProviderQuotaError),
        (400, '{"type": "error", "error": {"type": "billing_error", "message": "x"}}',
         ProviderQuotaError),
        (400, '{"error": {"type": "exceed_context_size_error", "message": "x"}}',
         ProviderContextLengthError),
    ],
)  # fmt: skip
def test_quota_and_context_statuses(status: int, body: str, expected: type) -> None:
    err = error_from_response(status, {}, body, provider="P", model="m", url="u")
    assert type(err) is expected
    if expected is ProviderQuotaError:
        assert not err.retryable and "billing" in str(err) and "wait" not in str(err).lower()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"error": {"type": "insufficient_quota", "message": "no credit"}}, ProviderQuotaError),
        ({"code": 400, "message": "the request exceeds the available context size",
          "type": "exceed_context_size_error"}, ProviderContextLengthError),
    ],
)  # fmt: skip
def test_quota_and_context_in_a_stream(data: Any, expected: type) -> None:
    err = error_from_event(data, provider="P", model="m")
    assert type(err) is expected and not err.retryable


def test_whole_anthropic_answer_keeps_thinking_and_its_signature() -> None:
    body = {
        "type": "message",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "hi"},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    parser = AnthropicStreamParser()
    events = [event for sse in anthropic_events(body) or [] for event in parser.feed(sse)]
    events += parser.finish()
    parts = [e.part for e in events if isinstance(e, ReasoningComplete)]
    assert parts == [Reasoning("hmm", signature="sig-1"), Reasoning(redacted="opaque")]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["hi"]
    end = events[-1]
    assert isinstance(end, StepEnd) and end.stop_reason is StopReason.END_TURN
    assert end.usage is not None and (end.usage.input_tokens, end.usage.output_tokens) == (3, 4)
