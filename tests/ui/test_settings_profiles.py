"""Settings → Saved providers: the rules (pure tables), the editor listing a real server's
models (the simulator over HTTP), and the list in the real window's Settings dialog — add,
make default, remove (its keyring entry goes on Save), reopen — plus the auto-title switch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.services import LocalServer, ProviderProfile, auto_title_on
from tests.ui.helpers import until, window_on_simulator
from ui.profile_editor import ProfileEditor, profile_problem
from ui.settings_dialog import SettingsDialog
from ui.settings_profiles import (
    ProfilesBox,
    after_removal,
    profile_from_server,
    row_text,
)

WORK = ProviderProfile("w", "Work proxy", "openai", "https://proxy.example/v1", "gpt-4o")
HOME = ProviderProfile("h", "Ollama on this machine", "openai", "http://localhost:11434/v1")
SIM = ProviderProfile("s", "Offline simulator", "simulator")


@pytest.mark.parametrize(
    ("profile", "problem"),
    [
        (WORK, None),
        (ProviderProfile("n", "  ", "openai", "https://x/v1"), "Give the provider a name"),
        (ProviderProfile("n", "work PROXY", "openai", "https://x/v1"), "already a provider"),
        (ProviderProfile("w", "Work proxy", "openai", "https://x/v1"), None),  # itself
        (ProviderProfile("n", "New", "anthropic", " "), "Enter the server address"),
        (ProviderProfile("n", "Sim", "simulator"), None),  # the simulator needs no address
    ],
)
def test_what_a_provider_needs(profile: ProviderProfile, problem: str | None) -> None:
    found = profile_problem(profile, [WORK, HOME])
    assert (found is None) if problem is None else (found is not None and problem in found)


@pytest.mark.parametrize(
    ("profile", "default", "text"),
    [
        (WORK, True, "Work proxy — https://proxy.example/v1 · gpt-4o  (default: the fields above)"),
        (HOME, False, "Ollama on this machine — http://localhost:11434/v1"),
        (SIM, False, "Offline simulator — Offline simulator (no real model)"),
    ],
)
def test_what_a_row_says(profile: ProviderProfile, default: bool, text: str) -> None:
    assert row_text(profile, default) == text


@pytest.mark.parametrize(
    ("default", "removed", "outcome"),
    [
        ("w", "h", (["w", "s"], "w")),
        ("w", "w", (["h", "s"], "h")),  # the default goes: the first left is the default
    ],
)
def test_removal(default: str, removed: str, outcome: tuple[list[str], str]) -> None:
    result = after_removal([WORK, HOME, SIM], default, removed)
    assert not isinstance(result, str)
    assert ([p.id for p in result[0]], result[1]) == outcome


def test_the_last_provider_is_kept() -> None:
    assert "at least one" in str(after_removal([WORK], "w", "w"))


def test_a_found_server_gets_a_unique_name_and_its_own_key_entry() -> None:
    server = LocalServer("Ollama on this machine", "http://localhost:11434/v1", ["llama3.2"])
    made = profile_from_server(server, [HOME])
    assert made.name == "Ollama on this machine (2)"
    assert (made.base_url, made.model, made.kind) == (server.base_url, "llama3.2", "openai")
    assert made.key_entry == f"profile:{made.id}"


class _Found:
    """A typed fake of the two service calls the list makes (discovery probes fixed ports)."""

    def __init__(self, servers: list[LocalServer]) -> None:
        self.servers = servers

    async def profile_models(self, profile: ProviderProfile, key: str | None = None) -> list[str]:
        return []

    async def discover_local_servers(self) -> list[LocalServer]:
        return self.servers


@pytest.mark.parametrize(
    ("servers", "rows", "words"),
    [
        ([LocalServer("llama.cpp on this machine", "http://localhost:8080/v1", ["q"])], 2, "Added"),
        ([LocalServer("Ollama", "http://localhost:11434/v1/", [])], 1, "already in the list"),
        ([], 1, "Start Ollama, llama.cpp or LM Studio"),
    ],
)
def test_detect_local_servers(
    run: Any, qapp: Any, servers: list[LocalServer], rows: int, words: str
) -> None:
    async def scenario() -> None:
        box = ProfilesBox([HOME], "h", _Found(servers))
        box.detect_button.click()
        await until(lambda: box.detect_button.isEnabled(), 5, "the detection")
        assert box.list.count() == rows
        assert words in box.status.text()

    run(scenario())


def test_the_editor_lists_a_real_servers_models(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            profile = ProviderProfile("e", "Local", "openai", sim.openai_base_url)
            editor = ProfileEditor(profile, [WORK], window.services, window)
            editor.list_models.click()
            await until(lambda: editor.model.count() > 0, 10, "the model list")
            assert "models found" in editor.note.text()
            assert editor.model.currentText()  # the first one offered when none was typed
            editor.name.setText("Work proxy")  # a taken name: OK refuses and says why
            editor.accept()
            assert "already a provider" in editor.note.text()
            editor.close()

    run(scenario(), timeout=60)


def test_the_list_in_the_real_settings_dialog(
    run: Any, tmp_path: Path, memory_keyring: Any
) -> None:
    data = tmp_path / "data"

    async def scenario() -> None:
        async with window_on_simulator(data) as (sim, window):
            window.models.open_settings()
            dialog = window.findChild(SettingsDialog)
            assert dialog is not None
            await until(dialog.isVisible, what="the settings dialog")
            box = dialog.profiles_box
            assert box.list.count() == 1  # today's single provider is one profile
            first = box.profiles[0]
            added = ProviderProfile("new1", "Anthropic", "anthropic", "https://api.anthropic.com")
            added = ProviderProfile(
                added.id,
                added.name,
                added.kind,
                added.base_url,
                "claude-x",
                key_entry="profile:new1",
            )
            box.edit_profile = lambda _p, _others: (added, "sk-ant-secret")
            box.add_button.click()
            assert box.list.count() == 2
            box.list.setCurrentRow(1)
            box.default_button.click()  # the fields above now show it
            assert dialog.provider.currentData() == "anthropic"
            assert dialog.model.currentText() == "claude-x"
            dialog.accept()
            await until(lambda: not dialog.isVisible(), what="the dialog to close")
            settings = window.services.settings
            assert [p.id for p in settings.profiles] == [first.id, "new1"]
            assert settings.default_profile == "new1"
            assert memory_keyring.passwords[("Continuum", "profile:new1")] == "sk-ant-secret"
            saved = (data / "settings.json").read_text(encoding="utf-8")
            assert "sk-ant-secret" not in saved and "new1" in saved
            # Reopen: both are listed; remove the new one, and its key leaves the keyring.
            window.models.open_settings()
            dialog = window.models._settings_dialog
            await until(dialog.isVisible, what="the dialog again")
            box = dialog.profiles_box
            assert box.list.count() == 2
            assert "(default" in box.list.item(1).text()
            box.list.setCurrentRow(1)
            box.remove_button.click()
            assert dialog.provider.currentData() != "anthropic"  # the old default is back
            dialog.accept()
            await until(lambda: not dialog.isVisible(), what="closed again")
            assert [p.id for p in window.services.settings.profiles] == [first.id]
            assert ("Continuum", "profile:new1") not in memory_keyring.passwords

    run(scenario(), timeout=60)


def test_the_auto_title_switch_is_saved(run: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"

    async def scenario() -> None:
        async with window_on_simulator(data) as (_sim, window):
            window.models.open_settings()
            dialog = window.models._settings_dialog
            await until(dialog.isVisible, what="the settings dialog")
            check = dialog.auto_title
            assert check.objectName() == "autoTitleCheck"
            assert check.isChecked() == auto_title_on(window.services.settings)
            check.setChecked(not check.isChecked())
            wanted = check.isChecked()
            dialog.accept()
            await until(lambda: not dialog.isVisible(), what="closed")
            assert auto_title_on(window.services.settings) is wanted
            saved = json.loads((data / "settings.json").read_text(encoding="utf-8"))
            assert saved["auto_title"] is wanted

    run(scenario(), timeout=60)
