"""The system prompt from Settings reaches the provider, on a new message and on Resume.

Real data folder, real providers over HTTP to the simulator on 127.0.0.1; the assertions read
the request body the simulator recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app import EventType, UserMessage
from app.services import AppServices
from app.settings import Settings
from app.simulator import Simulator

PROMPT = "Answer like a ship's captain.\nNever use emoji."


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    simulator = Simulator()
    await simulator.start()
    yield simulator
    await simulator.stop()


async def services_for(
    tmp_path: Path, sim: Simulator, kind: str, prompt: str, monkeypatch: pytest.MonkeyPatch
) -> AppServices:
    # A key from a variable of the test's own: the keyring is never consulted.
    monkeypatch.setenv("CONTINUUM_TEST_SYSTEM_PROMPT_KEY", "sk-test-not-a-real-key")
    services = AppServices(tmp_path / "data")
    await services.open()
    base_url = sim.openai_base_url if kind == "openai" else sim.base_url
    services.save_settings(
        Settings(
            provider_kind=kind,
            base_url=base_url,
            model="sim-echo",  # type: ignore[arg-type]
            system_prompt=prompt,
            api_key_env="CONTINUUM_TEST_SYSTEM_PROMPT_KEY",
        )
    )
    await services.configure_model()
    return services


def system_of(body: dict[str, Any], kind: str) -> str | None:
    """The system prompt a recorded request carried, per protocol."""
    if kind == "anthropic":
        assert all(m["role"] != "system" for m in body["messages"])
        system = body.get("system")
        return system if isinstance(system, str) or system is None else str(system)
    systems = [m for m in body["messages"] if m["role"] == "system"]
    assert systems in ([], [body["messages"][0]])  # one system message, first
    return systems[0]["content"] if systems else None


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_settings_system_prompt_is_sent_on_send_and_on_resume(
    kind: str,
    sim: Simulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services = await services_for(tmp_path, sim, kind, PROMPT, monkeypatch)
    try:
        session = (await services.new_session()).id
        events = [e async for e in services.stream(session, "hello")]
        assert events[-1].type is EventType.RUN_COMPLETED
        assert system_of(sim.model_requests()[-1].json(), kind) == PROMPT

        # Resume (the model never answered the last message): the same system prompt.
        await services.storage.storage.append(session, "r2", UserMessage("are you there?"))
        events = [e async for e in services.stream_resume(session)]
        assert events[-1].type is EventType.RUN_COMPLETED
        body = sim.model_requests()[-1].json()
        assert system_of(body, kind) == PROMPT
        assert "are you there?" in str(body["messages"][-1])
    finally:
        await services.close()


async def test_a_changed_prompt_is_used_by_the_next_request_and_an_empty_one_sends_none(
    sim: Simulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services = await services_for(tmp_path, sim, "openai", "First prompt.", monkeypatch)
    try:
        session = (await services.new_session()).id
        [e async for e in services.stream(session, "one")]
        assert system_of(sim.model_requests()[-1].json(), "openai") == "First prompt."
        services.save_settings(
            Settings(
                provider_kind="openai",
                base_url=sim.openai_base_url,
                model="sim-echo",
                system_prompt="   ",
                api_key_env="CONTINUUM_TEST_SYSTEM_PROMPT_KEY",
            )
        )
        [e async for e in services.stream(session, "two")]
        assert system_of(sim.model_requests()[-1].json(), "openai") is None
    finally:
        await services.close()
