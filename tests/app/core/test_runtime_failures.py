"""A save that fails while a request is being stopped is logged with its traceback (it used
to vanish in ``suppress(Exception)``); the Stop still goes through and resume still works."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    EventType,
    SQLiteSessionExtension,
    StorageFullError,
    ToolCall,
)
from app.resume import ResumeKind
from app.testing import ScriptedModel, tool_step
from tests.app.helpers import Gate


@pytest.fixture
async def storage(db_path: str) -> AsyncIterator[SQLiteSessionExtension]:
    ext = SQLiteSessionExtension(db_path)
    yield ext
    await ext.storage.close()


def break_writes(storage: SQLiteSessionExtension, monkeypatch: pytest.MonkeyPatch) -> None:
    async def full(*args: Any, **kwargs: Any) -> Any:
        raise StorageFullError("The disk is full.")

    monkeypatch.setattr(storage.storage, "append", full)
    monkeypatch.setattr(storage.storage, "append_many", full)


def logged_failures(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.exc_info is not None and isinstance(r.exc_info[1], StorageFullError)
    ]


async def test_failed_answers_after_stop_during_tools_are_logged(
    storage: SQLiteSessionExtension,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = Gate()

    async def slow() -> str:
        """Slow."""
        gate.started.set()
        await gate.release.wait()
        return "late"

    agent = await Agent.create(
        ScriptedModel([tool_step(ToolCall("s1", "slow", {}))]),
        AgentRunConfig("s"),
        tools=[slow],
        extensions=[storage],
    )

    async def consume() -> None:
        async for _ in agent.stream("go"):
            pass

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(gate.started.wait(), 5)
    break_writes(storage, monkeypatch)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    failures = logged_failures(caplog)
    assert len(failures) == 1 and failures[0].name == "app.tool_round"
    monkeypatch.undo()
    point = await agent.resume_point()  # unanswered: resume recovers it, never re-runs it
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS


async def test_failed_not_started_answers_are_logged(
    storage: SQLiteSessionExtension,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def work() -> str:
        """Work."""
        return "done"

    model = ScriptedModel([tool_step(ToolCall("c1", "work", {}), ToolCall("c2", "work", {}))])
    agent = await Agent.create(model, AgentRunConfig("s"), tools=[work], extensions=[storage])
    stream = agent.stream("go")
    async for event in stream:
        if event.type is EventType.MESSAGE_SAVED and isinstance(event.message, AssistantMessage):
            break
    break_writes(storage, monkeypatch)
    await stream.aclose()  # type: ignore[attr-defined]
    failures = logged_failures(caplog)
    assert len(failures) == 1 and failures[0].name == "app.step"
    monkeypatch.undo()
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
