"""Small typed helpers shared by the core tests (not a conftest: imported directly)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from app import ModelRequest, StepEnd, TextDelta, ToolCall, ToolCallComplete
from app.model import ModelEvent


class HangingModel:
    """Yields ``events`` then blocks forever (until cancelled); ``reached`` is set there."""

    def __init__(self, *events: ModelEvent, name: str = "hanging") -> None:
        self.name = name
        self.events = events
        self.reached = asyncio.Event()
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        for event in self.events:
            yield event
        self.reached.set()
        await asyncio.Event().wait()


class Gate:
    """A tool body that records its start and waits until released (or cancelled)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.runs: list[str] = []


def tool_call_step(*calls: ToolCall, stop: str | None = "tool_use") -> list[ModelEvent]:
    return [*(ToolCallComplete(c) for c in calls), StepEnd(stop)]


def say(text: str, stop: str | None = "end_turn") -> list[ModelEvent]:
    return [TextDelta(text), StepEnd(stop)]
