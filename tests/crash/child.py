"""A real agent on a real database file, run as a child process that the test kills with SIGKILL.

Usage: python child.py DB SIDE_EFFECT_LOG SCENARIO

It prints one line per milestone and flushes, so the parent can kill it at exactly that point:
``STREAMING`` (text is on the wire, the step not finished) and ``IN_TOOL <name>`` (a tool's
side effect is durable and the tool is still running). It then blocks until killed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

from app import (
    Agent,
    AgentRunConfig,
    EventType,
    ModelRequest,
    SQLiteSessionExtension,
    StepEnd,
    TextDelta,
    ToolCall,
    ToolCallComplete,
)
from app.model import ModelEvent


def milestone(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class ChildModel:
    name = "child"

    def __init__(self, scenario: str) -> None:
        self.scenario = scenario

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self.scenario == "mid_stream":
            yield TextDelta("This answer is being written when")
            milestone("STREAMING")
            await asyncio.Event().wait()
        # mid_tool: two calls; the first finishes, the second is killed while running.
        yield TextDelta("Writing both files.")
        yield ToolCallComplete(ToolCall("call_a", "write_note", {"name": "a"}))
        yield ToolCallComplete(ToolCall("call_b", "write_note", {"name": "b"}))
        yield StepEnd("tool_use")


def make_tool(log_path: str, a_saved: asyncio.Event):  # type: ignore[no-untyped-def]
    async def write_note(name: str) -> str:
        """Write a note (a side effect recorded in a log)."""
        if name == "b":
            await a_saved.wait()  # so the kill lands with a's result durable and b running
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(name + "\n")
            log.flush()
            os.fsync(log.fileno())
        if name == "b":
            milestone("IN_TOOL b")
            await asyncio.Event().wait()
        return f"wrote {name}"

    return write_note


async def main(db: str, log_path: str, scenario: str) -> None:
    storage = SQLiteSessionExtension(db)
    a_saved = asyncio.Event()
    agent = await Agent.create(
        ChildModel(scenario),
        AgentRunConfig("crash"),
        tools=[make_tool(log_path, a_saved)],
        extensions=[storage],
    )
    async for event in agent.stream("Please write notes a and b"):
        if event.type is EventType.TOOL_RESULT and event.call.id == "call_a":
            a_saved.set()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
