"""Behaviour only one protocol has: Anthropic pause_turn and context-window stop reasons."""

from __future__ import annotations

from app.messages import StopReason
from app.simulator import Reply, Simulator

from .conftest import ModelFactory, collect, request


async def test_pause_turn(sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Reply(text="Searching…", stop="paused"))
    result = await collect(make_model("anthropic").stream(request()))
    assert result.text == "Searching…" and result.stop is StopReason.PAUSED


async def test_context_window_exceeded_stop_reason(
    sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Reply(text="Partial", stop="context_full"))
    result = await collect(make_model("anthropic").stream(request()))
    assert result.stop is StopReason.CONTEXT_FULL and result.error is None


async def test_openai_has_no_pause_and_ends_the_turn(
    sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Reply(text="Searching…", stop="paused"))
    result = await collect(make_model("openai").stream(request()))
    assert result.stop is StopReason.END_TURN
