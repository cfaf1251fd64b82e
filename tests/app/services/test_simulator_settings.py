"""Switching to the offline simulator keeps what the person chose that is not the provider."""

from __future__ import annotations

from app.services.models import simulator_settings
from app.settings import Settings


def test_simulator_settings_keep_prompt_folder_servers_and_theme() -> None:
    mine = Settings(
        provider_kind="openai",
        base_url="http://127.0.0.1:9/v1",
        model="gpt-x",
        system_prompt="Be brief.",
        workspace="/tmp/project",
        theme="dark",
    )
    switched = simulator_settings(mine, "http://127.0.0.1:8/v1")
    assert switched.provider_kind == "simulator"
    assert switched.base_url == "http://127.0.0.1:8/v1"
    assert (switched.model, switched.system_prompt, switched.workspace, switched.theme) == (
        "gpt-x",
        "Be brief.",
        "/tmp/project",
        "dark",
    )
