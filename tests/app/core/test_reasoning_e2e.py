"""Reasoning end to end (issue 13): the simulator thinks, the real providers parse it, the
Agent saves it in a real SQLite file, and the next turn gives Anthropic its thinking back —
the simulator refuses (HTTP 400) a thinking block whose signature or text was changed.
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
    ProviderError,
    ReasoningDeltaEvent,
    ResumeKind,
    RetryPolicy,
    SQLiteSessionExtension,
    StopReason,
)
from app.model import Model
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.providers.base import HTTPModel
from app.simulator import Fault, Reply, SimToolCall, Simulator
from app.storage import SQLiteSessionStore

BOUND = 10.0
FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01)
THOUGHT = "The person wants the plan; reading plan.txt comes first."


def read_note(path: str) -> str:
    """Read a note."""
    return f"contents of {path}"


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
async def models(sim: Simulator) -> AsyncIterator[dict[str, HTTPModel]]:
    made: dict[str, HTTPModel] = {
        "anthropic": AnthropicModel(sim.base_url, "sim-claude", "sk-test-1234567", timeout=5.0),
        "openai": OpenAICompatibleModel(
            sim.openai_base_url, "sim-echo", "sk-test-1234567", timeout=5.0
        ),
    }
    yield made
    async with asyncio.timeout(BOUND):
        for model in made.values():
            await model.aclose()


async def agent_on(db: Path, model: Model) -> Agent:
    return await Agent.create(
        model,
        AgentRunConfig("s1", retry=FAST),
        tools=[read_note],
        extensions=[SQLiteSessionExtension(db)],
    )


async def saved(db: Path) -> list[Message]:
    store = SQLiteSessionStore(db)
    try:
        await store.open()
        return await store.load("s1")
    finally:
        await store.close()


def thinking_then_tool() -> Reply:
    return Reply(
        thinking=THOUGHT,
        redacted_thinking=True,
        tool_calls=(SimToolCall("read_note", {"path": "plan.txt"}),),
    )


async def test_anthropic_thinking_is_saved_signed_and_sent_back_on_the_tool_turn(
    sim: Simulator, models: dict[str, HTTPModel], tmp_path: Path
) -> None:
    db = tmp_path / "continuum.sqlite"
    sim.enqueue(thinking_then_tool(), Reply(text="Your plan is ready."))
    agent = await agent_on(db, models["anthropic"])
    async with asyncio.timeout(BOUND):
        events = [e async for e in agent.stream("Plan my day.")]
    await agent.store.close()  # type: ignore[attr-defined]

    thought = "".join(e.text for e in events if isinstance(e, ReasoningDeltaEvent))
    assert thought == THOUGHT
    step = (await saved(db))[1]  # read back from the file, as a relaunch would
    assert isinstance(step, AssistantMessage) and step.tool_calls
    assert THOUGHT not in step.content
    redacted, part = step.reasoning  # the simulator sends redacted_thinking first
    assert redacted.redacted and not redacted.text
    assert part.text == THOUGHT and part.signature
    assert redacted.seconds is not None  # the step's thinking time is on its first part

    requests = sim.model_requests()
    assert len(requests) == 2  # the second was accepted: both went back unchanged
    blocks = [t for t in requests[1].json()["messages"] if t["role"] == "assistant"][0]["content"]
    assert blocks[:2] == [
        {"type": "redacted_thinking", "data": redacted.redacted},
        {"type": "thinking", "thinking": THOUGHT, "signature": part.signature},
    ]
    assert blocks[-1]["type"] == "tool_use"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_openai_compatible_reasoning_is_saved_unsigned_and_not_sent_back(
    sim: Simulator, models: dict[str, HTTPModel], tmp_path: Path, field: str
) -> None:
    db = tmp_path / "continuum.sqlite"
    first = Reply(
        thinking=THOUGHT,
        reasoning_field=field,
        tool_calls=(SimToolCall("read_note", {"path": "plan.txt"}),),
    )
    sim.enqueue(first, Reply(text="Your plan is ready."))
    agent = await agent_on(db, models["openai"])
    await agent.run("Plan my day.")
    await agent.store.close()  # type: ignore[attr-defined]

    step = (await saved(db))[1]
    assert isinstance(step, AssistantMessage) and step.tool_calls
    assert [(p.text, p.signature) for p in step.reasoning] == [(THOUGHT, None)]
    second = sim.model_requests()[1]
    assert THOUGHT not in second.body.decode()


async def test_a_cut_while_thinking_keeps_the_thought_through_a_restart_and_retry(
    sim: Simulator, models: dict[str, HTTPModel], tmp_path: Path
) -> None:
    db = tmp_path / "continuum.sqlite"
    # Cut after a few events: inside the thinking, before any text.
    sim.enqueue(Reply(thinking=THOUGHT, text="Plan.", fault=Fault.drop_after(4)))
    agent = await agent_on(db, models["anthropic"])
    with pytest.raises(ProviderError):
        async with asyncio.timeout(BOUND):
            await agent.run("Plan my day.")
    await agent.store.close()  # type: ignore[attr-defined]
    partial = (await saved(db))[-1]
    assert isinstance(partial, AssistantMessage)
    assert partial.stop_reason is StopReason.INTERRUPTED and partial.content == ""
    assert partial.reasoning and THOUGHT.startswith(partial.reasoning[0].text)

    sim.enqueue(Reply(text="Here is the plan."))
    agent = await agent_on(db, models["anthropic"])
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    async with asyncio.timeout(BOUND):
        reply = await agent.resume()
    await agent.store.close()  # type: ignore[attr-defined]
    assert reply.content == "Here is the plan."
    history: list[Any] = await saved(db)
    assert history[1] == partial  # what was already thought is kept
