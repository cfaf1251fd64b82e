"""Continuum against llama.cpp's own server (the ``xllamacpp`` wheel) on a tiny hand-set model.

Agent → the real :class:`OpenAICompatibleModel` → loopback HTTP → llama.cpp, saved in a real
SQLite file; each test reads the history back through a fresh connection (what a relaunch sees).
The model answers every prompt with :data:`ANSWER` and loops "again and" for a prompt containing
``LOOP`` (see :mod:`tests.llama.model`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    InternalMessage,
    Message,
    ProviderContextLengthError,
    ResumeBlocked,
    ResumeKind,
    ResumePoint,
    RetryPolicy,
    SQLiteSessionExtension,
    StopReason,
    ToolMessage,
    UserMessage,
)
from app.providers import OpenAICompatibleModel
from app.resume import CONTINUE_TEXT
from app.storage import SQLiteSessionStore

from .model import ANSWER, LOOP_TEXT, TOOL_ARGUMENTS, TOOL_NAME
from .server import LlamaServer

BOUND = 30.0  # a guard against hanging, never a measured time
LONG_PROMPT = " ".join(["word"] * 300)  # over 256 tokens
FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01)


class Harness:
    """An agent on a real SQLite file, talking to one llama.cpp server."""

    def __init__(self, server: LlamaServer, db: Path) -> None:
        self.server = server
        self.db = db
        self.extension = SQLiteSessionExtension(db)
        self.model = OpenAICompatibleModel(server.base_url, "tiny-llama", timeout=10.0)
        self.note_runs: list[str] = []

    async def agent(self, *, max_output_tokens: int | None = None, tools: bool = True) -> Agent:
        """The agent; ``tools=False`` leaves out ``read_file`` (its schema alone is ~270 tokens,
        more than the small server's whole context)."""

        def read_file(path: str) -> str:
            """Read a file."""
            self.note_runs.append(path)
            return f"contents of {path}"

        config = AgentRunConfig("s1", retry=FAST, max_output_tokens=max_output_tokens)
        return await Agent.create(
            self.model,
            config=config,
            tools=[read_file] if tools else [],
            extensions=[self.extension],
        )

    async def saved(self) -> list[Message]:
        store = SQLiteSessionStore(self.db)
        try:
            await store.open()
            return await store.load("s1")
        finally:
            await store.close()

    async def close(self) -> None:
        await self.model.aclose()
        await self.extension.storage.close()


def kinds(history: list[Message]) -> list[str]:
    names = {UserMessage: "user", InternalMessage: "internal", AssistantMessage: "assistant",
             ToolMessage: "tool"}  # fmt: skip
    return [names[type(m)] for m in history]


@pytest.fixture
async def harness(llama: LlamaServer, tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(llama, tmp_path / "continuum.sqlite")
    yield h
    await h.close()


@pytest.fixture
async def small_harness(small_llama: LlamaServer, tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(small_llama, tmp_path / "continuum.sqlite")
    yield h
    await h.close()


async def test_plain_answer_is_saved(harness: Harness) -> None:
    agent = await harness.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run("Hi there, who are you?")
    assert reply.content == ANSWER
    assert reply.stop_reason is StopReason.END_TURN
    saved = await harness.saved()
    assert kinds(saved) == ["user", "assistant"]
    assert isinstance(saved[0], UserMessage) and saved[0].content == "Hi there, who are you?"
    assert isinstance(saved[1], AssistantMessage) and saved[1].content == ANSWER
    assert saved[1].stop_reason is StopReason.END_TURN
    assert await agent.resume_point() is None


async def test_output_limit_cut_then_continue_joins_the_text(harness: Harness) -> None:
    agent = await harness.agent(max_output_tokens=8)
    async with asyncio.timeout(BOUND):
        reply = await agent.run("Please say it LOOP")
    assert reply.stop_reason is StopReason.MAX_OUTPUT
    assert reply.content == "again and again and again and again and"
    point = await agent.resume_point()
    assert isinstance(point, ResumePoint) and point.kind is ResumeKind.CONTINUE_RESPONSE
    async with asyncio.timeout(BOUND):
        reply = await agent.resume()
    # the continuation note carries no LOOP marker: the model gives its fixed answer
    assert reply.content == ANSWER and reply.stop_reason is StopReason.END_TURN
    saved = await harness.saved()
    assert kinds(saved) == ["user", "assistant", "internal", "assistant"]
    cut, note, rest = saved[1], saved[2], saved[3]
    assert isinstance(cut, AssistantMessage) and cut.stop_reason is StopReason.MAX_OUTPUT
    assert cut.content == "again and again and again and again and"
    assert isinstance(note, InternalMessage) and note.content == CONTINUE_TEXT
    assert isinstance(rest, AssistantMessage) and rest.content == ANSWER
    assert await agent.resume_point() is None


async def test_tool_call_runs_once_and_the_answer_continues(harness: Harness) -> None:
    agent = await harness.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run("Use the TOOL please")
    assert reply.content == ANSWER and reply.stop_reason is StopReason.END_TURN
    assert harness.note_runs == [TOOL_ARGUMENTS["path"]]
    saved = await harness.saved()
    assert kinds(saved) == ["user", "assistant", "tool", "assistant"]
    call_step, result = saved[1], saved[2]
    assert isinstance(call_step, AssistantMessage)
    assert call_step.stop_reason is StopReason.TOOL_USE
    assert [(c.name, c.arguments) for c in call_step.tool_calls] == [(TOOL_NAME, TOOL_ARGUMENTS)]
    assert isinstance(result, ToolMessage) and "contents of todo.md" in str(result.content)
    assert result.tool_call_id == call_step.tool_calls[0].id
    assert await agent.resume_point() is None


async def test_tool_call_cut_by_the_output_limit_does_not_run(harness: Harness) -> None:
    agent = await harness.agent(max_output_tokens=3)
    async with asyncio.timeout(BOUND):
        reply = await agent.run("Use the TOOL please")
    assert reply.stop_reason is StopReason.MAX_OUTPUT
    assert harness.note_runs == []
    saved = await harness.saved()
    assert kinds(saved) == ["user", "assistant"]
    cut = saved[1]
    assert isinstance(cut, AssistantMessage) and cut.stop_reason is StopReason.MAX_OUTPUT
    # llama.cpp streamed the call's name and half its arguments ({"path":") before the cut
    # (finish_reason "length"); Continuum keeps no half call
    assert cut.tool_calls == () and cut.content == ""
    print("resume after cut tool call:", await agent.resume_status())


async def test_prompt_larger_than_the_context_is_the_typed_context_full_error(
    small_harness: Harness,
) -> None:
    agent = await small_harness.agent(tools=False)
    async with asyncio.timeout(BOUND):
        with pytest.raises(ProviderContextLengthError, match="context"):
            await agent.run(LONG_PROMPT)
    assert kinds(await small_harness.saved()) == ["user", "assistant"]  # empty CONTEXT_FULL


async def fill_the_context(h: Harness) -> Agent:
    """An answer that fills the 256-token context, then Continue (which cannot fit)."""
    agent = await h.agent(tools=False)
    async with asyncio.timeout(BOUND):
        reply = await agent.run("LOOP until the context is full")
    # llama.cpp ends an answer that fills its context with finish_reason "length"
    assert reply.stop_reason is StopReason.MAX_OUTPUT
    assert reply.content.startswith(LOOP_TEXT)
    point = await agent.resume_point()
    assert isinstance(point, ResumePoint) and point.kind is ResumeKind.CONTINUE_RESPONSE
    async with asyncio.timeout(BOUND):
        # the longer request is refused: HTTP 400 exceed_context_size_error
        with pytest.raises(ProviderContextLengthError, match="context"):
            await agent.resume()
    return agent


async def test_answer_that_fills_the_context_then_continue_is_the_typed_error(
    small_harness: Harness,
) -> None:
    await fill_the_context(small_harness)
    saved = await small_harness.saved()
    assert kinds(saved) == ["user", "assistant", "internal", "assistant"]
    cut = saved[1]
    assert isinstance(cut, AssistantMessage) and cut.stop_reason is StopReason.MAX_OUTPUT
    assert isinstance(saved[2], InternalMessage) and saved[2].content == CONTINUE_TEXT


@pytest.mark.parametrize("how", ["prompt too long", "answer filled it"])
async def test_after_the_context_filled_up_resume_is_blocked_as_context_full(
    small_harness: Harness, how: str
) -> None:
    if how == "prompt too long":
        agent = await small_harness.agent(tools=False)
        async with asyncio.timeout(BOUND):
            with pytest.raises(ProviderContextLengthError):
                await agent.run(LONG_PROMPT)
    else:
        agent = await fill_the_context(small_harness)
    status = await agent.resume_status()
    assert isinstance(status, ResumeBlocked) and status.reason == "context_full"
