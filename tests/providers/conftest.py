"""Fixtures for provider tests: a live simulator on 127.0.0.1 and models pointed at it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.errors import ProviderError
from app.messages import StopReason, ToolCall, UserMessage
from app.model import ModelEvent, ModelRequest, StepBuilder, StepEnd, TextDelta, ToolCallComplete
from app.providers import AnthropicModel, OpenAICompatibleModel, events_from_response
from app.providers.anthropic import AnthropicStreamParser
from app.providers.base import HTTPModel
from app.providers.openai import OpenAIStreamParser
from app.providers.sse import StreamParser
from app.simulator import Simulator

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"
PROTOCOLS = ("openai", "anthropic")
#: Every await in these tests is bounded by this many seconds.
BOUND = 10.0


@dataclass
class StepResult:
    """What one model step produced: its events in order and the error that ended it."""

    events: list[ModelEvent] = field(default_factory=list)
    error: ProviderError | None = None

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    @property
    def calls(self) -> list[ToolCall]:
        return [e.call for e in self.events if isinstance(e, ToolCallComplete)]

    @property
    def end(self) -> StepEnd | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, StepEnd) else None

    @property
    def stop(self) -> StopReason | str | None:
        return self.end.stop_reason if self.end else None

    @property
    def output_before_error(self) -> bool:
        return bool(self.events)


async def collect(events: AsyncIterator[ModelEvent], *, bound: float = BOUND) -> StepResult:
    """Drain a model stream (bounded), checking the event order with StepBuilder."""
    result = StepResult()
    builder = StepBuilder()
    async with asyncio.timeout(bound):
        try:
            async for event in events:
                builder.feed(event)  # raises on an impossible order
                result.events.append(event)
        except ProviderError as err:
            result.error = err
    if result.error is None:
        assert result.end is not None, "a stream that ends without raising must end with StepEnd"
    return result


def request(text: str = "Hello there, simulator!", **kwargs: Any) -> ModelRequest:
    return ModelRequest(messages=[UserMessage(text)], **kwargs)


def parser_for(protocol: str) -> StreamParser:
    return OpenAIStreamParser(model="m") if protocol == "openai" else AnthropicStreamParser()


async def parse_fixture(name: str) -> StepResult:
    """Feed a recorded SSE transcript through the same parsing code a live stream uses."""
    body = (FIXTURES / name).read_bytes()
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    protocol = "openai" if name.startswith("openai") else "anthropic"
    return await collect(events_from_response(response, parser_for(protocol)))


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


ModelFactory = Callable[..., HTTPModel]


@pytest.fixture
async def make_model(sim: Simulator) -> AsyncIterator[ModelFactory]:
    """``make_model(protocol, **options)``: a provider model aimed at the simulator."""
    made: list[HTTPModel] = []

    def factory(protocol: str, **options: Any) -> HTTPModel:
        options.setdefault("timeout", 5.0)
        model: HTTPModel
        if protocol == "openai":
            model = OpenAICompatibleModel(sim.openai_base_url, options.pop("model", "sim-echo"),
                                          **options)  # fmt: skip
        else:
            model = AnthropicModel(sim.base_url, options.pop("model", "sim-claude"), **options)
        made.append(model)
        return model

    yield factory
    async with asyncio.timeout(BOUND):
        for model in made:
            await model.aclose()
