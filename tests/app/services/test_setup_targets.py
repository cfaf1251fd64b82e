"""The conversation's own provider and model drive the context meter and the auto title (not
the defaults of Settings): through real services on a real SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.profiles import ProviderProfile
from app.services import AppServices
from app.services.setup import Setup
from app.settings import Settings, with_profiles

OPENAI = ProviderProfile("o", "OpenAI", "openai", "https://api.openai.com/v1", "gpt-4o")
LOCAL = ProviderProfile("l", "Ollama", "openai", "http://localhost:11434/v1", "llama3.2")
SIM = ProviderProfile("s", "Offline simulator", "simulator", "", "sim-echo")


async def _services(tmp_path: Path) -> AppServices:
    services = AppServices(tmp_path / "data")
    services.save_settings(with_profiles(Settings(), (OPENAI, LOCAL, SIM), "o"))
    await services.open()
    return services


async def test_the_context_window_is_the_conversations_model(tmp_path: Path) -> None:
    services = await _services(tmp_path)
    try:
        info = await services.new_session("t")
        assert await services.context_where(info.id) == (OPENAI.base_url, "gpt-4o")  # defaults
        await services.set_conversation_setup(info.id, Setup(profile="l", model="qwen3:8b"))
        assert await services.context_where(info.id) == (LOCAL.base_url, "qwen3:8b")
        await services.set_conversation_setup(info.id, Setup(profile="s"))
        assert await services.context_where(info.id) is None  # the simulator has no window
        assert await services.context_where(None) == (OPENAI.base_url, "gpt-4o")
    finally:
        await services.close()


async def test_titles_ask_the_conversations_model(tmp_path: Path) -> None:
    services = await _services(tmp_path)
    try:
        info = await services.new_session("t")
        await services.set_conversation_setup(info.id, Setup(profile="l", model="qwen3:8b"))
        model: Any
        model, kind, name = await services._title_target(info.id)
        assert (kind, name) == ("openai", "qwen3:8b")
        assert model is not services.client.model  # built for the conversation's profile
        other = await services.new_session("u")
        _model, kind, name = await services._title_target(other.id)
        assert (kind, name) == ("openai", "gpt-4o")  # no setup: the default's
    finally:
        await services.close()
