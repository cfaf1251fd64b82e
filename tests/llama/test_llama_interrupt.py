"""Stop, and a llama.cpp server killed mid-answer, then Resume, through Agent + real SQLite.

Each test has its own server (one is SIGKILLed). The prompt contains ``LOOP``, so the model would
write "again and again …" until its 4096-token context is full; the answer is cut on its first
streamed piece, with thousands of tokens still to come.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import (
    AssistantMessage,
    EventType,
    InternalMessage,
    ProviderConnectionError,
    ProviderStreamError,
    ResumeKind,
    ResumePoint,
    StopReason,
    UserMessage,
)
from app.resume import RETRY_TEXT

from .model import ANSWER
from .server import LlamaServer
from .test_llama_server import BOUND, Harness, kinds


@pytest.fixture
async def own_harness(own_llama: LlamaServer, tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(own_llama, tmp_path / "continuum.sqlite")
    yield h
    await h.close()


async def _resume_finishes(h: Harness, agent_partial: str) -> None:
    agent = await h.agent(tools=False)
    point = await agent.resume_point()
    assert isinstance(point, ResumePoint) and point.kind is ResumeKind.RETRY_RESPONSE
    async with asyncio.timeout(BOUND):
        reply = await agent.resume()
    # the retry note carries no LOOP marker: the model gives its fixed answer, to the end
    assert reply.content == ANSWER and reply.stop_reason is StopReason.END_TURN
    saved = await h.saved()
    assert kinds(saved) == ["user", "assistant", "internal", "assistant"]
    assert isinstance(saved[1], AssistantMessage) and saved[1].content == agent_partial
    assert isinstance(saved[2], InternalMessage) and saved[2].content == RETRY_TEXT
    assert await agent.resume_point() is None


def _check_partial(saved: list[object]) -> str:
    assert [type(m) for m in saved] == [UserMessage, AssistantMessage]
    partial = saved[1]
    assert isinstance(partial, AssistantMessage)
    assert partial.stop_reason is StopReason.INTERRUPTED
    text = partial.content
    assert text.startswith("again") and ("again" + " and again" * 2000).startswith(text)
    return text


async def test_stop_mid_answer_then_resume_asks_again(own_harness: Harness) -> None:
    """Stop (the request task cancelled) after the first streamed piece: the Agent saves no
    partial for a cancelled request, so Resume sends the question again."""
    agent = await own_harness.agent(tools=False)
    seen = asyncio.Event()

    async def consume() -> None:
        async for event in agent.stream("LOOP for a long time"):
            if event.type is EventType.TEXT_DELTA:
                seen.set()

    task = asyncio.ensure_future(consume())
    async with asyncio.timeout(BOUND):
        await seen.wait()
    task.cancel()  # what Stop does
    with pytest.raises(asyncio.CancelledError):
        await task
    assert kinds(await own_harness.saved()) == ["user"]
    point = await agent.resume_point()
    assert isinstance(point, ResumePoint) and point.kind is ResumeKind.CALL_MODEL
    agent = await own_harness.agent(tools=False, max_output_tokens=8)
    async with asyncio.timeout(BOUND):
        reply = await agent.resume()
    assert reply.content == "again and again and again and again and"
    assert reply.stop_reason is StopReason.MAX_OUTPUT
    saved = await own_harness.saved()
    assert kinds(saved) == ["user", "assistant"]
    assert saved[1].content == reply.content


async def test_server_killed_mid_answer_then_restarted_resume_finishes(
    own_harness: Harness,
) -> None:
    agent = await own_harness.agent(tools=False)
    async with asyncio.timeout(BOUND):
        with pytest.raises((ProviderConnectionError, ProviderStreamError)):
            async for event in agent.stream("LOOP for a long time"):
                if event.type is EventType.TEXT_DELTA:
                    own_harness.server.kill()  # SIGKILL, mid-stream
    partial = _check_partial(await own_harness.saved())
    own_harness.server.start()  # the same port again
    await _resume_finishes(own_harness, partial)
