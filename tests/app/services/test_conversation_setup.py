"""Each conversation's setup: validation (pure tables), what a request then uses, the stored
JSON through a real SQLite file, and requests against the simulator that carry the
conversation's model, system prompt and parameters — also after switching its provider from an
OpenAI-compatible profile to an Anthropic one, its history kept."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app import EventType, UserMessage
from app.profiles import Parameters, ProviderProfile
from app.providers.options import anthropic_fields, openai_fields
from app.services import AppServices
from app.services.setup import Resolved, Setup, resolve, setup_from_data, setup_to_data
from app.settings import Settings, with_profiles
from app.simulator import Simulator

KEY_ENV = "CONTINUUM_TEST_SETUP_KEY"

# (what, stored data, the setup, words of each problem)
SETUPS: list[tuple[str, Any, Setup, list[str]]] = [
    ("nothing stored", None, Setup(), []),
    ("not an object", [1], Setup(), ["not a JSON object"]),
    ("everything", {"system_prompt": "Be brief.", "profile": "a", "model": "m",
     "temperature": 0.2, "top_p": 0.9, "max_output_tokens": 64, "reasoning_effort": "low",
     "thinking_budget": 4096},
     Setup("Be brief.", "a", "m", Parameters(0.2, 0.9, 64, "low", 4096)), []),
    ("an empty prompt is a choice", {"system_prompt": ""}, Setup(system_prompt=""), []),
    ("a model name is trimmed", {"model": "  gpt-4o "}, Setup(model="gpt-4o"), []),
    ("a blank model is dropped", {"model": "  "}, Setup(), ["model"]),
    ("a prompt of the wrong type", {"system_prompt": 5, "model": "m"}, Setup(model="m"),
     ["system_prompt"]),
    ("a profile of the wrong type", {"profile": ["a"]}, Setup(), ["profile"]),
    ("temperature out of range, the rest kept", {"temperature": 2.01, "top_p": 0.5},
     Setup(parameters=Parameters(top_p=0.5)), ["temperature"]),
    ("top-p out of range", {"top_p": -1}, Setup(), ["top_p"]),
    ("a bool is not a number", {"max_output_tokens": True}, Setup(), ["max_output_tokens"]),
]  # fmt: skip


@pytest.mark.parametrize(("what", "data", "setup", "problems"), SETUPS, ids=[s[0] for s in SETUPS])
def test_setup_from_data(what: str, data: Any, setup: Setup, problems: list[str]) -> None:
    got, found = setup_from_data(data)
    assert got == setup
    assert len(found) == len(problems), found
    assert all(word in problem for word, problem in zip(problems, found, strict=True))
    assert setup_from_data(setup_to_data(got)) == (got, [])  # round trip


def test_unknown_keys_are_kept_and_written_back() -> None:
    setup, problems = setup_from_data({"model": "m", "future_field": {"x": [1]}})
    assert problems == [] and setup.extra == {"future_field": {"x": [1]}}
    assert setup_to_data(dataclasses.replace(setup, model="n")) == {
        "future_field": {"x": [1]},
        "model": "n",
    }


def test_only_what_was_set_is_stored() -> None:
    assert setup_to_data(Setup()) == {}
    assert setup_to_data(Setup(parameters=Parameters(temperature=0.0))) == {"temperature": 0.0}


OPENAI = ProviderProfile("o", "OpenAI", "openai", "https://api.openai.com/v1", "gpt-4o")
CLAUDE = ProviderProfile("a", "Anthropic", "anthropic", "https://api.anthropic.com", "claude-x")
DEFAULTS = dataclasses.replace(
    with_profiles(Settings(system_prompt="Default prompt"), (OPENAI, CLAUDE), "o"),
    parameters=Parameters(temperature=0.5, max_output_tokens=1000),
)

# (what, setup, profile id, model, system prompt, parameters)
RESOLVE: list[tuple[str, Setup, str | None, str, str | None, Parameters]] = [
    ("nothing set: the defaults", Setup(), "o", "gpt-4o", "Default prompt",
     Parameters(temperature=0.5, max_output_tokens=1000)),
    ("another profile: its own model", Setup(profile="a"), "a", "claude-x", "Default prompt",
     Parameters(temperature=0.5, max_output_tokens=1000)),
    ("another profile and model", Setup(profile="a", model="claude-y"), "a", "claude-y",
     "Default prompt", Parameters(temperature=0.5, max_output_tokens=1000)),
    ("the default profile named", Setup(profile="o"), "o", "gpt-4o", "Default prompt",
     Parameters(temperature=0.5, max_output_tokens=1000)),
    ("a removed profile: the default", Setup(profile="gone"), "o", "gpt-4o", "Default prompt",
     Parameters(temperature=0.5, max_output_tokens=1000)),
    ("no system prompt on purpose", Setup(system_prompt=""), "o", "gpt-4o", None,
     Parameters(temperature=0.5, max_output_tokens=1000)),
    ("parameters field by field", Setup(parameters=Parameters(temperature=0.0, top_p=0.3)),
     "o", "gpt-4o", "Default prompt", Parameters(0.0, 0.3, 1000)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "setup", "profile", "model", "prompt", "params"), RESOLVE, ids=[r[0] for r in RESOLVE]
)
def test_resolve(
    what: str,
    setup: Setup,
    profile: str | None,
    model: str,
    prompt: str | None,
    params: Parameters,
) -> None:
    got = resolve(setup, DEFAULTS)
    assert got.profile is not None and got.profile.id == profile
    assert (got.model, got.system_prompt, got.parameters) == (model, prompt, params)
    assert got.missing_profile == (setup.profile == "gone")


def test_a_changed_default_applies_to_conversations_that_did_not_set_it() -> None:
    setup = Setup(parameters=Parameters(top_p=0.3))
    later = dataclasses.replace(DEFAULTS, parameters=Parameters(temperature=1.5))
    assert resolve(setup, later).parameters == Parameters(temperature=1.5, top_p=0.3)


# (what, parameters, OpenAI fields, Anthropic fields for max_tokens 8192)
FIELDS: list[tuple[str, Parameters, dict[str, Any], dict[str, Any]]] = [
    ("nothing", Parameters(), {}, {}),
    ("sampling", Parameters(temperature=0.4, top_p=0.9), {"temperature": 0.4, "top_p": 0.9},
     {"temperature": 0.4, "top_p": 0.9}),
    ("temperature above Anthropic's 1", Parameters(temperature=1.6), {"temperature": 1.6},
     {"temperature": 1.0}),
    ("reasoning effort: OpenAI only", Parameters(reasoning_effort="high"),
     {"reasoning_effort": "high"}, {}),
    ("thinking: Anthropic only, no sampling", Parameters(temperature=0.2, thinking_budget=2048),
     {"temperature": 0.2}, {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
    ("thinking above the limit raises it", Parameters(thinking_budget=10000), {},
     {"thinking": {"type": "enabled", "budget_tokens": 10000}, "max_tokens": 18192}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "params", "openai", "anthropic"), FIELDS, ids=[f[0] for f in FIELDS]
)
def test_request_fields(
    what: str, params: Parameters, openai: dict[str, Any], anthropic: dict[str, Any]
) -> None:
    assert openai_fields(params) == openai
    assert anthropic_fields(params, 8192) == anthropic


# --- through a real data folder and the simulator ------------------------------------------


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    simulator = Simulator()
    await simulator.start()
    yield simulator
    await simulator.stop()


def profiles_on(sim: Simulator) -> tuple[ProviderProfile, ProviderProfile]:
    return (
        ProviderProfile("so", "Simulated OpenAI", "openai", sim.openai_base_url, "sim-echo",
                        KEY_ENV),
        ProviderProfile("sa", "Simulated Anthropic", "anthropic", sim.base_url, "sim-echo",
                        KEY_ENV),
    )  # fmt: skip


async def services_on(tmp_path: Path, sim: Simulator, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-real-key")  # the keyring is never consulted
    services = AppServices(tmp_path / "data")
    await services.open()
    settings = with_profiles(Settings(system_prompt="Default prompt"), profiles_on(sim), "so")
    services.save_settings(dataclasses.replace(settings, parameters=Parameters(temperature=0.5)))
    await services.configure_model()
    return services


def sent(sim: Simulator) -> tuple[str, dict[str, Any]]:
    request = sim.model_requests()[-1]
    return request.path, request.json()


async def answer(services: AppServices, session: str, text: str) -> None:
    events = [e async for e in services.stream(session, text)]
    assert events[-1].type is EventType.RUN_COMPLETED, events[-1]


async def test_the_setup_is_stored_in_the_database_and_read_back(
    tmp_path: Path, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = await services_on(tmp_path, sim, monkeypatch)
    setup = Setup("Pirate.", "sa", "sim-other", Parameters(top_p=0.25), {"later": 1})
    try:
        session = (await services.new_session()).id
        untouched = (await services.new_session()).id
        await services.set_conversation_setup(session, setup)
        assert await services.workspace(session) is None  # a setup row chose no folder
    finally:
        await services.close()
    reopened = AppServices(tmp_path / "data")
    await reopened.open()
    try:
        got = await reopened.conversation_setup(session)
        assert got == setup and got.extra == {"later": 1}
        assert await reopened.conversation_setup(untouched) == Setup()
        await reopened.set_conversation_setup(session, Setup())  # back to the defaults
        assert await reopened.conversation_settings.setup(session) is None
    finally:
        await reopened.close()


async def test_a_request_uses_the_conversations_model_prompt_and_parameters(
    tmp_path: Path, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = await services_on(tmp_path, sim, monkeypatch)
    try:
        plain = (await services.new_session()).id
        await answer(services, plain, "hello")
        path, body = sent(sim)
        assert path == "/v1/chat/completions" and body["model"] == "sim-echo"
        assert body["temperature"] == 0.5 and "top_p" not in body and "max_tokens" not in body
        assert body["messages"][0] == {"role": "system", "content": "Default prompt"}

        own = (await services.new_session()).id
        await services.set_conversation_setup(
            own,
            Setup(
                "Answer as a pirate.",
                model="sim-other",
                parameters=Parameters(temperature=1.25, top_p=0.5, max_output_tokens=77),
            ),
        )
        await answer(services, own, "ahoy")
        _path, body = sent(sim)
        assert body["model"] == "sim-other"
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (1.25, 0.5, 77)
        assert body["messages"][0] == {"role": "system", "content": "Answer as a pirate."}

        # The other conversation still follows the defaults; Resume uses the setup too.
        await answer(services, plain, "again")
        assert sent(sim)[1]["temperature"] == 0.5 and sent(sim)[1]["model"] == "sim-echo"
        await services.storage.storage.append(own, "r-extra", UserMessage("still there?"))
        events = [e async for e in services.stream_resume(own)]
        assert events[-1].type is EventType.RUN_COMPLETED
        assert sent(sim)[1]["model"] == "sim-other" and sent(sim)[1]["temperature"] == 1.25
    finally:
        await services.close()


async def test_switching_the_provider_keeps_the_history(
    tmp_path: Path, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = await services_on(tmp_path, sim, monkeypatch)
    try:
        session = (await services.new_session()).id
        await answer(services, session, "first question")
        assert sent(sim)[0] == "/v1/chat/completions"
        await services.set_conversation_setup(
            session, Setup(profile="sa", parameters=Parameters(thinking_budget=2048))
        )
        resolved: Resolved = await services.resolved_setup(session)
        assert resolved.profile is not None and resolved.profile.kind == "anthropic"
        await answer(services, session, "second question")
        path, body = sent(sim)
        assert path == "/v1/messages" and body["system"] == "Default prompt"
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert "temperature" not in body  # not with thinking
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["user", "assistant", "user"]
        text = repr(body["messages"])
        assert "first question" in text and "second question" in text
        history = await services.history(session)
        assert len(history) == 4
    finally:
        await services.close()


async def test_picking_a_model_sets_it_for_the_open_conversation_only(
    tmp_path: Path, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = await services_on(tmp_path, sim, monkeypatch)
    try:
        session = (await services.new_session()).id
        await services.use_model(session, "sim-other")
        assert (await services.conversation_setup(session)).model == "sim-other"
        assert services.settings.model == "sim-echo"
        assert services.settings.recent_models[0] == "sim-other"
        await services.use_model(None, "sim-third")  # none open: the default
        assert services.settings.model == "sim-third"
        assert (await services.resolved_setup(session)).model == "sim-other"
    finally:
        await services.close()


async def test_each_profile_lists_its_own_models(
    tmp_path: Path, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = await services_on(tmp_path, sim, monkeypatch)
    try:
        for profile in profiles_on(sim):
            names = await services.profile_models(profile)
            assert "sim-echo" in names
        gets = [r for r in sim.requests if r.method == "GET"]
        assert any("anthropic-version" in r.headers for r in gets)
        assert any("anthropic-version" not in r.headers for r in gets)
    finally:
        await services.close()
