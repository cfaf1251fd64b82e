"""Reasoning in the runtime (issue 13), on real SQLite files: streamed as REASONING_DELTA,
saved with its step (also a cut or output-limited one), kept across a restart and a resume,
and given back to Anthropic unchanged — checked in the bytes the simulator received.

A :class:`ScriptedModel` plays the thinking step (the events a provider yields); the next turn
goes through the real provider classes over HTTP to the simulator on 127.0.0.1, which checks
each thinking block's signature as Anthropic does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app import (
    Agent,
    AgentEvent,
    AgentRunConfig,
    AssistantMessage,
    EventType,
    InternalMessage,
    JSONLExtension,
    Message,
    ProviderAuthError,
    Reasoning,
    ReasoningComplete,
    ReasoningDelta,
    ReasoningDeltaEvent,
    ResumeKind,
    RetryPolicy,
    SQLiteSessionExtension,
    StepEnd,
    StopReason,
    TextDelta,
    ToolCall,
    ToolCallComplete,
    ToolMessage,
    UserMessage,
)
from app.model import Model
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.resume import CONTINUE_TEXT, RETRY_TEXT
from app.simulator import Simulator
from app.simulator.wire import redacted_data, thinking_signature
from app.storage import SQLiteSessionStore
from app.testing import ScriptedModel, text_step

BOUND = 10.0
ONE_TRY = RetryPolicy(max_attempts=1)
# Signed as the simulator signs; it refuses (HTTP 400) a thinking or redacted_thinking block
# not sent back unchanged.
THOUGHT = "I should read the note first."
SIGNED = Reasoning(THOUGHT, signature=thinking_signature(THOUGHT))
REDACTED = Reasoning(redacted=redacted_data())
CALL = ToolCall("toolu_01A", "read_note", {"path": "plan.txt"})


def thinking_step() -> list[Any]:
    """What the Anthropic provider yields for: thinking, redacted thinking, a tool call."""
    return [
        ReasoningDelta("I should read "),
        ReasoningDelta("the note first."),
        ReasoningComplete(SIGNED),
        ReasoningComplete(REDACTED),
        ToolCallComplete(CALL),
        StepEnd(StopReason.TOOL_USE),
    ]


def read_note(path: str) -> str:
    """Read a note."""
    return f"contents of {path}"


async def agent_on(db: Path, model: Model, *extensions: Any) -> Agent:
    return await Agent.create(
        model,
        AgentRunConfig("s1", retry=ONE_TRY),
        tools=[read_note],
        extensions=[SQLiteSessionExtension(db), *extensions],
    )


async def close(agent: Agent) -> None:
    await agent.store.close()  # type: ignore[attr-defined]


async def saved(db: Path) -> list[Message]:
    """The history as a fresh connection to the file reads it (what a relaunch sees)."""
    store = SQLiteSessionStore(db)
    try:
        await store.open()
        return await store.load("s1")
    finally:
        await store.close()


async def drain(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    async with asyncio.timeout(BOUND):
        return [event async for event in events]


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with asyncio.timeout(BOUND):
        simulator = Simulator()
        await simulator.start()
    try:
        yield simulator
    finally:
        async with asyncio.timeout(BOUND):
            await simulator.stop()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "continuum.sqlite"


def anthropic(sim: Simulator) -> AnthropicModel:
    return AnthropicModel(sim.base_url, "sim-claude", "sk-test-1234567", timeout=5.0)


def openai(sim: Simulator) -> OpenAICompatibleModel:
    return OpenAICompatibleModel(sim.openai_base_url, "sim-echo", "sk-test-1234567", timeout=5.0)


# --- streamed and saved ------------------------------------------------------------------------


async def test_reasoning_streams_apart_from_the_text_and_survives_a_restart(
    db: Path, tmp_path: Path
) -> None:
    log = tmp_path / "turns.jsonl"
    model = ScriptedModel(
        [[ReasoningDelta("Two plus "), ReasoningDelta("two..."), TextDelta("4."), StepEnd()]]
    )
    agent = await agent_on(db, model, JSONLExtension(log))
    events = await drain(agent.stream("2+2?"))
    await close(agent)

    kinds = [e.type for e in events if e.type in (EventType.REASONING_DELTA, EventType.TEXT_DELTA)]
    assert kinds == [EventType.REASONING_DELTA, EventType.REASONING_DELTA, EventType.TEXT_DELTA]
    pieces = [e.text for e in events if isinstance(e, ReasoningDeltaEvent)]
    assert pieces == ["Two plus ", "two..."]

    history = await saved(db)
    reply = history[-1]
    assert isinstance(reply, AssistantMessage)
    assert reply.content == "4."  # the thinking is not the answer
    assert reply.reasoning == (Reasoning("Two plus two..."),)
    seconds = reply.reasoning[0].seconds
    assert seconds is not None and seconds >= 0.0  # measured, and saved with the message
    line = json.loads(log.read_text(encoding="utf-8"))
    assert line["messages"][-1]["reasoning"] == [{"text": "Two plus two...", "seconds": seconds}]


async def test_a_stream_cut_while_thinking_saves_the_thought_and_a_retry_keeps_it(
    db: Path,
) -> None:
    model = ScriptedModel([[ReasoningDelta("Let me check the "), ConnectionResetError("reset")]])
    agent = await agent_on(db, model)
    with pytest.raises(ConnectionResetError):
        await drain(agent.stream("What is in plan.txt?"))
    await close(agent)

    partial = AssistantMessage(
        "",
        stop_reason=StopReason.INTERRUPTED,
        model="scripted",
        reasoning=(Reasoning("Let me check the "),),
    )
    assert await saved(db) == [UserMessage("What is in plan.txt?"), partial]

    # A relaunch: a new agent on the same file resumes the cut response.
    again = ScriptedModel([[ReasoningDelta("Checking."), TextDelta("It says hi."), StepEnd()]])
    agent = await agent_on(db, again)
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    reply = await agent.resume()
    await close(agent)
    assert reply.reasoning == (Reasoning("Checking."),)
    expected = [
        UserMessage("What is in plan.txt?"),
        partial,  # what was already thought is kept
        InternalMessage(RETRY_TEXT),
        reply,
    ]
    assert list(again.requests[0].messages) == expected[:3]
    assert await saved(db) == expected


# --- given back to Anthropic -------------------------------------------------------------------


def assistant_blocks(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [t["content"] for t in body["messages"] if t["role"] == "assistant"]


async def test_signed_thinking_goes_back_to_anthropic_unchanged_after_a_restart(
    db: Path, sim: Simulator
) -> None:
    model = ScriptedModel([thinking_step(), ProviderAuthError("offline for the test")])
    agent = await agent_on(db, model)
    with pytest.raises(ProviderAuthError):
        await drain(agent.stream("Plan my day."))
    await close(agent)
    history = await saved(db)
    assert [type(m).__name__ for m in history] == ["UserMessage", "AssistantMessage", "ToolMessage"]
    step = history[1]
    assert isinstance(step, AssistantMessage) and step.reasoning == (SIGNED, REDACTED)
    assert step.reasoning[0].signature == SIGNED.signature

    provider = anthropic(sim)
    try:
        agent = await agent_on(db, provider)
        point = await agent.resume_point()
        assert point is not None and point.kind is ResumeKind.CALL_MODEL
        await agent.resume()
        await close(agent)
    finally:
        await provider.aclose()
    body = sim.model_requests()[-1].json()
    assert assistant_blocks(body) == [
        [
            {"type": "thinking", "thinking": SIGNED.text, "signature": SIGNED.signature},
            {"type": "redacted_thinking", "data": REDACTED.redacted},
            {"type": "tool_use", "id": CALL.id, "name": CALL.name, "input": {"path": "plan.txt"}},
        ]
    ]
    assert body["messages"][-1]["content"][0]["type"] == "tool_result"


async def test_openai_compatible_servers_get_no_reasoning_back(db: Path, sim: Simulator) -> None:
    model = ScriptedModel([thinking_step(), ProviderAuthError("offline for the test")])
    agent = await agent_on(db, model)
    with pytest.raises(ProviderAuthError):
        await drain(agent.stream("Plan my day."))
    await close(agent)

    provider = openai(sim)
    try:
        agent = await agent_on(db, provider)
        await agent.resume()
        await close(agent)
    finally:
        await provider.aclose()
    body = sim.model_requests()[-1].json()
    turns = [t for t in body["messages"] if t["role"] == "assistant"]
    assert len(turns) == 1 and set(turns[0]) == {"role", "content", "tool_calls"}
    raw = sim.model_requests()[-1].body.decode()
    assert SIGNED.text not in raw and "thinking" not in raw and "reasoning" not in raw


async def test_output_limit_keeps_the_thought_and_continue_sends_it_signed(
    db: Path, sim: Simulator
) -> None:
    model = ScriptedModel(
        [
            [
                ReasoningDelta(SIGNED.text),
                ReasoningComplete(SIGNED),
                TextDelta("Step one: read the"),
                StepEnd(StopReason.MAX_OUTPUT),
            ]
        ]
    )
    agent = await agent_on(db, model)
    await drain(agent.stream("Plan my day."))
    await close(agent)
    cut = (await saved(db))[-1]
    assert isinstance(cut, AssistantMessage) and cut.stop_reason is StopReason.MAX_OUTPUT
    assert cut.reasoning == (SIGNED,)

    provider = anthropic(sim)
    try:
        agent = await agent_on(db, provider)
        point = await agent.resume_point()
        assert point is not None and point.kind is ResumeKind.CONTINUE_RESPONSE
        await agent.resume()
        await close(agent)
    finally:
        await provider.aclose()
    body = sim.model_requests()[-1].json()
    assert assistant_blocks(body)[0] == [
        {"type": "thinking", "thinking": SIGNED.text, "signature": SIGNED.signature},
        {"type": "text", "text": "Step one: read the"},
    ]
    assert body["messages"][-1]["content"][-1] == {"type": "text", "text": CONTINUE_TEXT}
    history = await saved(db)
    assert history[1] == cut  # the continued answer keeps what was already thought
    assert history[2] == InternalMessage(CONTINUE_TEXT)


async def test_a_later_turn_still_carries_the_earlier_thinking(db: Path, sim: Simulator) -> None:
    model = ScriptedModel([thinking_step(), text_step("Done.")])
    agent = await agent_on(db, model)
    await agent.run("Plan my day.")
    await close(agent)
    provider = anthropic(sim)
    try:
        agent = await agent_on(db, provider)
        await agent.run("And tomorrow?")
        await close(agent)
    finally:
        await provider.aclose()
    body = sim.model_requests()[-1].json()
    first = assistant_blocks(body)[0]
    assert first[0] == {"type": "thinking", "thinking": SIGNED.text, "signature": SIGNED.signature}
    history = await saved(db)
    assert isinstance(history[2], ToolMessage) and history[2].content == "contents of plan.txt"
