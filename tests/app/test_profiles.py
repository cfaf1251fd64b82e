"""Saved providers in Settings: the file's form, migration of a file from before profiles (one
profile, its key still found), the flat fields as the default profile's mirror, and request
parameters' validation. Pure tables, plus real settings files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from app.profiles import (
    MIGRATED_ID,
    Parameters,
    ProviderProfile,
    default_name,
    parameters_from_data,
    parameters_to_data,
    reconcile,
)
from app.settings import (
    SETTINGS_FILE,
    Settings,
    SettingsFormatError,
    load_settings,
    save_settings,
    settings_from_data,
    with_profiles,
)

OPENAI = ProviderProfile("o", "OpenAI", "openai", "https://api.openai.com/v1", "gpt-4o")
CLAUDE = ProviderProfile(
    "a", "Anthropic", "anthropic", "https://api.anthropic.com", "claude-x", key_entry="profile:a"
)
SIM = ProviderProfile("s", "Offline simulator", "simulator", "http://127.0.0.1:1/v1", "sim-echo")

# (what, the old file, the profile it becomes)
OLD_FILES: list[tuple[str, dict[str, Any], ProviderProfile]] = [
    (
        "OpenAI with a key variable",
        {
            "provider_kind": "openai",
            "base_url": "https://api.openai.com/v1",
            "model": "gpt-4o-mini",
            "api_key_env": "MY_KEY",
        },
        ProviderProfile(
            MIGRATED_ID, "OpenAI", "openai", "https://api.openai.com/v1", "gpt-4o-mini", "MY_KEY"
        ),
    ),
    (
        "Anthropic",
        {"provider_kind": "anthropic", "base_url": "https://api.anthropic.com", "model": "c"},
        ProviderProfile(MIGRATED_ID, "Anthropic", "anthropic", "https://api.anthropic.com", "c"),
    ),
    (
        "Ollama",
        {"provider_kind": "openai", "base_url": "http://localhost:11434/v1", "model": "llama3"},
        ProviderProfile(
            MIGRATED_ID, "Ollama on this machine", "openai", "http://localhost:11434/v1", "llama3"
        ),
    ),
    (
        "the simulator",
        {"provider_kind": "simulator", "base_url": "http://127.0.0.1:4/v1", "model": "sim-echo"},
        ProviderProfile(
            MIGRATED_ID, "Offline simulator", "simulator", "http://127.0.0.1:4/v1", "sim-echo"
        ),
    ),
    (
        "a proxy",
        {"provider_kind": "openai", "base_url": "https://proxy.work.example/v1", "model": "m"},
        ProviderProfile(
            MIGRATED_ID, "proxy.work.example", "openai", "https://proxy.work.example/v1", "m"
        ),
    ),
]


@pytest.mark.parametrize(("what", "data", "profile"), OLD_FILES, ids=[f[0] for f in OLD_FILES])
def test_a_file_from_before_profiles_becomes_one_default_profile(
    what: str, data: dict[str, Any], profile: ProviderProfile
) -> None:
    settings, skipped = settings_from_data(data)
    assert skipped == []
    assert settings.profiles == (profile,)
    assert settings.default == profile
    # Its key is found where it was stored before profiles existed (one entry per kind + URL).
    assert settings.key_service() == f"{data['provider_kind']}:{data['base_url']}"
    assert (settings.provider_kind, settings.base_url, settings.model) == (
        data["provider_kind"],
        data["base_url"],
        data["model"],
    )


def test_an_old_file_loads_saves_and_loads_again_unchanged(tmp_path: Path) -> None:
    old = {
        "provider_kind": "openai",
        "base_url": "http://localhost:1234/v1",
        "model": "qwen",
        "system_prompt": "Be brief.",
        "recent_models": ["qwen", "llama"],
    }
    (tmp_path / SETTINGS_FILE).write_text(json.dumps(old), encoding="utf-8")
    loaded = load_settings(tmp_path)
    assert loaded.problem is None
    save_settings(tmp_path, loaded.settings)
    data = json.loads((tmp_path / SETTINGS_FILE).read_text(encoding="utf-8"))
    # The flat fields stay for older versions; the profile is written too.
    assert {k: data[k] for k in old} == old
    assert data["default_profile"] == MIGRATED_ID
    assert [p["id"] for p in data["profiles"]] == [MIGRATED_ID]
    assert load_settings(tmp_path).settings == loaded.settings


def test_several_profiles_round_trip_through_the_file(tmp_path: Path) -> None:
    settings = with_profiles(Settings(system_prompt="x"), (OPENAI, CLAUDE, SIM), "a")
    settings = dataclasses.replace(
        settings, parameters=Parameters(temperature=0.3, max_output_tokens=900)
    )
    save_settings(tmp_path, settings)
    again = load_settings(tmp_path).settings
    assert again == settings
    assert again.profiles == (OPENAI, CLAUDE, SIM)
    assert again.default == CLAUDE
    assert (again.provider_kind, again.model, again.key_service()) == (
        "anthropic",
        "claude-x",
        "profile:a",
    )
    text = (tmp_path / SETTINGS_FILE).read_text(encoding="utf-8")
    assert 'api_key"' not in text and "sk-" not in text


def test_removing_every_profile_leaves_no_provider() -> None:
    settings = with_profiles(Settings(), (OPENAI,), "o")
    none = with_profiles(settings, (), "")
    assert none.profiles == () and not none.configured and none.provider_kind is None


# (what, profiles, default, flat fields, expected ids, expected default, expected default url)
RECONCILE: list[tuple[str, tuple[ProviderProfile, ...], str, Any, list[str], str, str]] = [
    ("nothing at all", (), "", (None, "", "", None), [], "", ""),
    ("flat fields match the default", (OPENAI, CLAUDE), "o", ("openai", OPENAI.base_url,
     "gpt-4o", None), ["o", "a"], "o", OPENAI.base_url),
    ("a new server is added, nothing lost", (OPENAI,), "o", ("openai", "http://localhost:11434/v1",
     "llama", None), ["o", "main"], "main", "http://localhost:11434/v1"),
    ("an existing server becomes the default", (OPENAI, CLAUDE), "o", ("anthropic",
     CLAUDE.base_url, "claude-x", None), ["o", "a"], "a", CLAUDE.base_url),
    ("any simulator profile takes the new port", (OPENAI, SIM), "o", ("simulator",
     "http://127.0.0.1:9/v1", "sim-echo", None), ["o", "s"], "s", "http://127.0.0.1:9/v1"),
    ("an unknown default id: the first", (OPENAI, CLAUDE), "gone", (None, "", "", None),
     ["o", "a"], "o", OPENAI.base_url),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "profiles", "default", "flat", "ids", "chosen", "url"),
    RECONCILE,
    ids=[r[0] for r in RECONCILE],
)
def test_reconcile(
    what: str,
    profiles: tuple[ProviderProfile, ...],
    default: str,
    flat: Any,
    ids: list[str],
    chosen: str,
    url: str,
) -> None:
    got, got_default = reconcile(profiles, default, flat)
    assert [p.id for p in got] == ids
    assert got_default == chosen
    if chosen:
        assert next(p for p in got if p.id == chosen).base_url == url


def test_replacing_the_flat_model_changes_the_default_profile_only() -> None:
    settings = with_profiles(Settings(), (OPENAI, CLAUDE), "o")
    picked = dataclasses.replace(settings, model="gpt-4.1")
    assert picked.profile("o") == dataclasses.replace(OPENAI, model="gpt-4.1")
    assert picked.profile("a") == CLAUDE


# (what, data, parameters kept, words of each problem)
PARAMETERS: list[tuple[str, dict[str, Any], Parameters, list[str]]] = [
    ("nothing", {}, Parameters(), []),
    ("all valid", {"temperature": 0.7, "top_p": 1, "max_output_tokens": 500,
     "reasoning_effort": "high", "thinking_budget": 2048},
     Parameters(0.7, 1.0, 500, "high", 2048), []),
    ("edges", {"temperature": 0, "top_p": 0, "max_output_tokens": 1},
     Parameters(0.0, 0.0, 1), []),
    ("temperature above 2", {"temperature": 2.5}, Parameters(), ["temperature"]),
    ("temperature below 0", {"temperature": -0.1}, Parameters(), ["temperature"]),
    ("temperature as text", {"temperature": "0.5"}, Parameters(), ["temperature"]),
    ("temperature true", {"temperature": True}, Parameters(), ["temperature"]),
    ("temperature NaN", {"temperature": float("nan")}, Parameters(), ["temperature"]),
    ("top_p above 1", {"top_p": 1.5, "temperature": 1}, Parameters(1.0), ["top_p"]),
    ("max tokens a float", {"max_output_tokens": 10.5}, Parameters(), ["max_output_tokens"]),
    ("max tokens zero", {"max_output_tokens": 0}, Parameters(), ["max_output_tokens"]),
    ("effort unknown", {"reasoning_effort": "max"}, Parameters(), ["reasoning_effort"]),
    ("budget too small", {"thinking_budget": 100}, Parameters(), ["thinking_budget"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "data", "expected", "problems"), PARAMETERS, ids=[p[0] for p in PARAMETERS]
)
def test_parameters_from_data(
    what: str, data: dict[str, Any], expected: Parameters, problems: list[str]
) -> None:
    got, found = parameters_from_data(data)
    assert got == expected
    assert len(found) == len(problems)
    assert all(word in problem for word, problem in zip(problems, found, strict=True))
    assert parameters_from_data(parameters_to_data(got)) == (got, [])


# (what, a bad file, the field the error names)
BAD: list[tuple[str, Any, str]] = [
    ("profiles an object", {"profiles": {}}, "profiles"),
    ("a profile without id", {"profiles": [{"kind": "openai"}]}, "id"),
    ("a profile of an unknown kind", {"profiles": [{"id": "x", "kind": "skynet"}]}, "kind"),
    ("a profile's url a number", {"profiles": [{"id": "x", "kind": "openai", "base_url": 3}]},
     "base_url"),
    ("an id twice", {"profiles": [{"id": "x", "kind": "openai"}, {"id": "x", "kind": "openai"}]},
     "twice"),
    ("parameters a list", {"parameters": [1]}, "parameters"),
    ("a default temperature of 3", {"parameters": {"temperature": 3}}, "temperature"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "data", "field"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_profile_or_parameter_is_named(what: str, data: Any, field: str) -> None:
    with pytest.raises(SettingsFormatError, match=field):
        settings_from_data(data)


@pytest.mark.parametrize(
    ("kind", "url", "name"),
    [
        ("openai", "https://api.openai.com/v1", "OpenAI"),
        ("anthropic", "https://api.anthropic.com", "Anthropic"),
        ("openai", "http://127.0.0.1:11434/v1", "Ollama on this machine"),
        ("openai", "http://localhost:1234/v1", "Server on this machine :1234"),
        ("simulator", "", "Offline simulator"),
        ("openai", "", "OpenAI-compatible"),
    ],
)
def test_default_name(kind: str, url: str, name: str) -> None:
    assert default_name(kind, url) == name


def test_a_profile_never_shows_a_key() -> None:
    profile = ProviderProfile("w", "Work proxy", "openai", "https://p/v1", api_key_env="WORK_KEY")
    assert "WORK_KEY" in repr(profile)  # the variable's name, never a value
    assert not hasattr(profile, "api_key")
