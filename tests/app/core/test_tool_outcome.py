"""ToolOutcome: every tool result the runtime, resume and the tools write says what became of
the call, and the outcome survives the message JSON and a real SQLite file (old rows: None)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator

import pytest

import app.tools.functions
from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    EventType,
    FunctionTool,
    MessageFormatError,
    SQLiteSessionExtension,
    ToolCall,
    ToolMessage,
    UserMessage,
    tool,
)
from app.messages import ToolOutcome, message_from_dict, message_from_json, message_to_json
from app.testing import ScriptedModel, text_step, tool_step
from app.tools import as_tool
from tests.app.helpers import Gate


@pytest.fixture
async def storage(db_path: str) -> AsyncIterator[SQLiteSessionExtension]:
    ext = SQLiteSessionExtension(db_path)
    yield ext
    await ext.storage.close()


async def make(model: object, storage: SQLiteSessionExtension, **kwargs: object) -> Agent:
    return await Agent.create(
        model,
        AgentRunConfig("s"),
        extensions=[storage],
        **kwargs,  # type: ignore[arg-type]
    )


async def reopened_results(db_path: str) -> dict[str, ToolMessage]:
    """The tool results as a fresh store reads them back from the file."""
    ext = SQLiteSessionExtension(db_path)
    try:
        history = await ext.storage.load("s")
    finally:
        await ext.storage.close()
    return {m.tool_call_id: m for m in history if isinstance(m, ToolMessage)}


# --- the JSON form -------------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", list(ToolOutcome))
def test_outcome_round_trips_through_json(outcome: ToolOutcome) -> None:
    message = ToolMessage("c", "t", "text", success=False, outcome=outcome)
    back = message_from_json(message_to_json(message))
    assert isinstance(back, ToolMessage) and back.outcome is outcome
    assert json.loads(message_to_json(message))["outcome"] == outcome.value


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ({}, None),  # written before outcomes existed
        ({"outcome": None}, None),
        ({"outcome": "denied"}, ToolOutcome.DENIED),
        ({"outcome": "some_future_word"}, None),  # a newer word: fall back to the text
    ],
)
def test_outcome_decoding(stored: dict[str, object], expected: ToolOutcome | None) -> None:
    data = {
        "v": 1,
        "type": "tool",
        "tool_call_id": "c",
        "name": "t",
        "content": "x",
        "success": True,
        **stored,
    }
    message = message_from_dict(data)
    assert isinstance(message, ToolMessage) and message.outcome == expected


def test_outcome_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(MessageFormatError, match="outcome"):
        message_from_dict(
            {"v": 1, "type": "tool", "tool_call_id": "c", "name": "t", "content": "x", "outcome": 3}
        )


def test_outcome_is_not_part_of_equality_and_accepts_its_word() -> None:
    assert ToolMessage("c", "t", "x") == ToolMessage("c", "t", "x", outcome=ToolOutcome.DONE)
    assert ToolMessage("c", "t", "x", outcome="failed").outcome is ToolOutcome.FAILED  # type: ignore[arg-type]


async def test_outcome_survives_a_real_sqlite_file(db_path: str) -> None:
    ext = SQLiteSessionExtension(db_path)
    try:
        await ext.storage.append("s", "r", UserMessage("hi"))
        await ext.storage.append("s", "r", AssistantMessage("", (ToolCall("c", "t", {}),)))
        await ext.storage.append(
            "s", "r", ToolMessage("c", "t", "no", success=False, outcome=ToolOutcome.DENIED)
        )
    finally:
        await ext.storage.close()
    assert (await reopened_results(db_path))["c"].outcome is ToolOutcome.DENIED


# --- what the runtime writes ----------------------------------------------------------------------


async def test_runtime_results_say_done_failed_or_denied(
    storage: SQLiteSessionExtension, db_path: str
) -> None:
    def ok() -> str:
        """Fine."""
        return "fine"

    def boom() -> str:
        """Fails."""
        raise RuntimeError("broken")

    @tool(side_effects=True)
    def risky() -> str:
        """Needs approval."""
        return "ran"

    async def deny(call: ToolCall, spec: FunctionTool) -> bool:
        return False

    calls = (
        ToolCall("a", "ok", {}),
        ToolCall("b", "boom", {}),
        ToolCall("c", "nope", {}),
        ToolCall("d", "ok", {"extra": 1}),
        ToolCall("e", "risky", {}),
    )
    model = ScriptedModel([tool_step(*calls), text_step("done")])
    agent = await make(model, storage, tools=[ok, boom, risky], approve_tool=deny)
    await agent.run("go")
    results = await reopened_results(db_path)
    assert {k: m.outcome for k, m in results.items()} == {
        "a": ToolOutcome.DONE,
        "b": ToolOutcome.FAILED,
        "c": ToolOutcome.FAILED,
        "d": ToolOutcome.FAILED,
        "e": ToolOutcome.DENIED,
    }


async def test_stop_during_tools_says_cancelled(
    storage: SQLiteSessionExtension, db_path: str
) -> None:
    gate = Gate()

    async def slow() -> str:
        """Slow."""
        gate.started.set()
        await gate.release.wait()
        return "late"

    model = ScriptedModel([tool_step(ToolCall("s1", "slow", {}))])
    agent = await make(model, storage, tools=[slow])

    async def consume() -> None:
        async for _ in agent.stream("go"):
            pass

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(gate.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await reopened_results(db_path))["s1"].outcome is ToolOutcome.CANCELLED


async def test_stop_before_tools_start_says_not_started(
    storage: SQLiteSessionExtension, db_path: str
) -> None:
    def work() -> str:
        """Work."""
        return "done"

    model = ScriptedModel([tool_step(ToolCall("c1", "work", {}))])
    agent = await make(model, storage, tools=[work])
    stream = agent.stream("go")
    async for event in stream:
        if event.type is EventType.MESSAGE_SAVED and isinstance(event.message, AssistantMessage):
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert (await reopened_results(db_path))["c1"].outcome is ToolOutcome.NOT_STARTED


async def test_recovered_calls_say_may_have_run_and_not_started_ones_run(
    storage: SQLiteSessionExtension, db_path: str
) -> None:
    """A history left by a killed process: one call may have run, one provably never started."""
    await storage.storage.append("s", "r", UserMessage("go"))
    await storage.storage.append(
        "s",
        "r",
        AssistantMessage("", (ToolCall("ran", "work", {}), ToolCall("waited", "work", {}))),
    )

    def work() -> str:
        """Work."""
        return "worked"

    agent = await make(ScriptedModel([text_step("ok")]), storage, tools=[work])
    await agent.resume(not_started={"waited"})
    results = await reopened_results(db_path)
    assert results["ran"].outcome is ToolOutcome.MAY_HAVE_RUN
    assert results["waited"].outcome is ToolOutcome.DONE


async def test_a_new_message_after_a_kill_answers_dangling_calls_as_may_have_run(
    storage: SQLiteSessionExtension, db_path: str
) -> None:
    await storage.storage.append("s", "r", UserMessage("go"))
    await storage.storage.append("s", "r", AssistantMessage("", (ToolCall("x", "work", {}),)))
    agent = await make(ScriptedModel([text_step("ok")]), storage)
    await agent.run("next question")
    assert (await reopened_results(db_path))["x"].outcome is ToolOutcome.MAY_HAVE_RUN


# --- a sync tool that outlives Stop ---------------------------------------------------------------


async def test_sync_tool_outliving_stop_says_may_have_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app.tools.functions, "STOP_GRACE", 0.0)
    entered, release = threading.Event(), threading.Event()

    def blocking() -> str:
        """Blocks."""
        entered.set()
        release.wait(10)
        return "finished"

    spec = as_tool(blocking)
    task = asyncio.ensure_future(spec.invoke(ToolCall("c", "blocking", {})))
    assert await asyncio.to_thread(entered.wait, 10)
    task.cancel()
    result = await task
    release.set()
    assert result.success is False and result.outcome is ToolOutcome.MAY_HAVE_RUN
