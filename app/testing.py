"""Test doubles that ship with the library: :class:`ScriptedModel` replays scripted steps.

``ScriptedModel(steps)``: each item of ``steps`` serves one model request, in order. An item is
either a list of model events (``TextDelta``, ``ToolCallComplete``, ``StepEnd``; an exception
instance in the list is raised at that point of the step, i.e. after the events before it) or an
exception instance (raised when that request is made, before any output). Every request is
recorded in ``.requests``, including those that fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import TypeAlias

from .messages import StopReason, ToolCall, Usage
from .model import ModelEvent, ModelRequest, StepEnd, TextDelta, ToolCallComplete

__all__ = [
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedStep",
    "text_step",
    "tool_step",
]

ScriptedStep: TypeAlias = Sequence[ModelEvent | BaseException] | BaseException


class ScriptExhaustedError(AssertionError):
    """The model was asked for more steps than the script has."""


class ScriptedModel:
    """A model that replays ``steps`` (see the module docstring)."""

    def __init__(
        self,
        steps: Iterable[ScriptedStep] = (),
        *,
        name: str = "scripted",
        gate: asyncio.Event | None = None,
    ) -> None:
        self.name = name
        self._steps: list[ScriptedStep] = list(steps)
        self.requests: list[ModelRequest] = []
        # When set, each event waits for the gate: lets a test hold a stream mid-way.
        self.gate = gate

    def __repr__(self) -> str:
        return f"ScriptedModel(name={self.name!r}, remaining={len(self._steps)})"

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def add(self, *steps: ScriptedStep) -> None:
        self._steps.extend(steps)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if not self._steps:
            raise ScriptExhaustedError(
                f"ScriptedModel {self.name!r} got request {len(self.requests)} but its script "
                "has no more steps"
            )
        step = self._steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        for item in step:
            if self.gate is not None:
                await self.gate.wait()
            if isinstance(item, BaseException):
                raise item
            yield item
            await asyncio.sleep(0)  # a real stream gives the loop a turn between chunks


def text_step(
    text: str,
    stop: StopReason | str | None = StopReason.END_TURN,
    *,
    chunk: int = 0,
    usage: Usage | None = None,
) -> list[ModelEvent]:
    """A step that says ``text`` (in pieces of ``chunk`` characters if given) and stops."""
    pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)] if chunk else [text]
    events: list[ModelEvent] = [TextDelta(p) for p in pieces if p]
    events.append(StepEnd(stop, usage))
    return events


def tool_step(*calls: ToolCall, text: str = "") -> list[ModelEvent]:
    """A step that asks for ``calls`` (after optional ``text``)."""
    events: list[ModelEvent] = [TextDelta(text)] if text else []
    events.extend(ToolCallComplete(c) for c in calls)
    events.append(StepEnd(StopReason.TOOL_USE))
    return events
