"""A settings file that is valid JSON but not valid settings (wrong types, huge numbers, deep
nesting), and saving settings on a full disk: a clear notice, the bad file kept aside byte for
byte, defaults used, and nothing crashes at start (issue 11, items 11 and 13)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.errors import SettingsSaveError
from app.services import AppServices
from app.settings import (
    Settings,
    SettingsFormatError,
    load_settings,
    save_settings,
    settings_from_data,
)
from app.tools.mcp import McpServerConfig

HUGE = int("9" * 400)  # a 400-digit number: float() of it overflows
GOOD_SERVER = {"name": "files", "command": "npx", "args": ["-y", "srv"]}

# (what, the parsed file, the field the error must name)
BAD_FIELDS: list[tuple[str, Any, str]] = [
    ("recent_models a number", {"recent_models": 5}, "recent_models"),
    ("recent_models holding numbers", {"recent_models": ["a", 1]}, "recent_models"),
    ("recent_models a string", {"recent_models": "gpt"}, "recent_models"),
    ("model a number", {"model": 5}, "model"),
    ("model a 400-digit number", {"model": HUGE}, "model"),
    ("base_url an object", {"base_url": {"a": 1}}, "base_url"),
    ("system_prompt a list", {"system_prompt": ["x"]}, "system_prompt"),
    ("system_prompt with a lone surrogate", {"system_prompt": "a\ud800b"}, "system_prompt"),
    ("api_key_env a bool", {"api_key_env": True}, "api_key_env"),
    ("workspace a number", {"workspace": 3}, "workspace"),
    ("unknown provider", {"provider_kind": "skynet"}, "provider_kind"),
    ("provider a number", {"provider_kind": 1}, "provider_kind"),
    ("mcp_servers an object", {"mcp_servers": {"name": "x"}}, "mcp_servers"),
    ("mcp_servers a string", {"mcp_servers": "x"}, "mcp_servers"),
    ("not an object", [1, 2, 3], "JSON object"),
    ("a bare number", HUGE, "JSON object"),
]


@pytest.mark.parametrize(("what", "data", "field"), BAD_FIELDS, ids=[b[0] for b in BAD_FIELDS])
def test_a_field_of_the_wrong_type_is_named(what: str, data: Any, field: str) -> None:
    with pytest.raises(SettingsFormatError, match=field):
        settings_from_data(data)


# (what, one mcp_servers entry, words of the reason it is skipped)
BAD_SERVERS: list[tuple[str, Any, str]] = [
    ("400-digit timeout", {**GOOD_SERVER, "call_timeout": HUGE}, "call_timeout"),
    ("infinite timeout", {**GOOD_SERVER, "call_timeout": float("inf")}, "call_timeout"),
    ("NaN timeout", {**GOOD_SERVER, "call_timeout": float("nan")}, "call_timeout"),
    ("zero timeout", {**GOOD_SERVER, "call_timeout": 0}, "call_timeout"),
    ("negative timeout", {**GOOD_SERVER, "call_timeout": -1}, "call_timeout"),
    ("text timeout", {**GOOD_SERVER, "call_timeout": "30"}, "call_timeout"),
    ("side_effects text", {**GOOD_SERVER, "side_effects": "no"}, "side_effects"),
    ("cwd a number", {**GOOD_SERVER, "cwd": 5}, "cwd"),
    ("args a string", {**GOOD_SERVER, "args": "-y"}, "args"),
    ("env values numbers", {**GOOD_SERVER, "env": {"A": 1}}, "env"),
    ("blank command", {**GOOD_SERVER, "command": "  "}, "command"),
    ("name a list", {**GOOD_SERVER, "name": ["x"]}, "name"),
]


@pytest.mark.parametrize(("what", "entry", "reason"), BAD_SERVERS, ids=[b[0] for b in BAD_SERVERS])
def test_an_unusable_mcp_server_entry_is_skipped_with_its_reason(
    what: str, entry: Any, reason: str
) -> None:
    settings, skipped = settings_from_data(
        {"provider_kind": "simulator", "mcp_servers": [GOOD_SERVER, entry]}
    )
    assert settings.provider_kind == "simulator"
    assert settings.mcp_servers == (McpServerConfig("files", "npx", ("-y", "srv")),)
    assert len(skipped) == 1 and reason in skipped[0]


def test_valid_fields_and_nulls_and_unknown_fields() -> None:
    settings, skipped = settings_from_data(
        {
            "provider_kind": "openai",
            "base_url": "http://127.0.0.1:1/v1",
            "model": "m",
            "system_prompt": "Be brief.",
            "api_key_env": None,
            "workspace": None,
            "recent_models": ["m", *[f"x{i}" for i in range(30)]],
            "mcp_servers": [
                {**GOOD_SERVER, "call_timeout": 5, "side_effects": False, "cwd": "/tmp"}
            ],
            "a_field_from_a_newer_version": {"anything": [1, 2]},
        }
    )
    assert skipped == []
    assert settings.provider_kind == "openai" and settings.model == "m"
    assert settings.api_key_env is None and settings.workspace is None
    assert len(settings.recent_models) == 20 and settings.recent_models[0] == "m"
    assert settings.mcp_servers == (
        McpServerConfig(
            "files", "npx", ("-y", "srv"), call_timeout=5.0, side_effects=False, cwd="/tmp"
        ),
    )
    assert settings_from_data({"model": None, "recent_models": None, "mcp_servers": None}) == (
        Settings(),
        [],
    )


# --- a real start on each bad file ----------------------------------------------------------

DEEP = 100_000
BAD_FILES: dict[str, str] = {
    "recent_models is 5": json.dumps({"provider_kind": "simulator", "recent_models": 5}),
    "a 400-digit model": '{"provider_kind": "openai", "model": ' + "9" * 400 + "}",
    "100k-deep nesting": '{"recent_models": ' + "[" * DEEP + "]" * DEEP + "}",
    "deep nesting at the top": "[" * DEEP + "]" * DEEP,
    "a string, not an object": json.dumps("simulator"),
    "mcp_servers an object": json.dumps({"mcp_servers": {"files": GOOD_SERVER}}),
    "not UTF-8": '{"model": "\xff\xfe"}',
}


@pytest.mark.parametrize("name", BAD_FILES)
async def test_the_app_starts_with_defaults_and_keeps_a_bad_file_aside(
    tmp_path: Path, name: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    raw = BAD_FILES[name].encode("latin-1" if name == "not UTF-8" else "utf-8")
    (data / "settings.json").write_bytes(raw)

    services = AppServices(data)  # must not raise
    try:
        assert services.settings == Settings()
        problem = services.settings_problem
        assert problem is not None and "defaults" in problem and "Traceback" not in problem
        assert len(problem) < 400, problem  # one readable sentence, not the file's content
        kept = list(data.glob("settings.unreadable-*.json"))
        assert len(kept) == 1 and kept[0].name in problem
        assert kept[0].read_bytes() == raw  # kept aside exactly as it was
        assert not (data / "settings.json").exists()
        await services.open()
        assert await services.list_sessions() == []
    finally:
        await services.close()
    # The next start is clean: no file, no notice.
    assert load_settings(data).problem is None


async def test_a_huge_timeout_in_one_server_skips_only_that_server(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps(
            {
                "provider_kind": "simulator",
                "mcp_servers": [
                    GOOD_SERVER,
                    {"name": "slow", "command": "x", "call_timeout": HUGE},
                ],
            }
        )
    )
    services = AppServices(tmp_path)
    try:
        assert services.settings.provider_kind == "simulator"
        assert [s.name for s in services.settings.mcp_servers] == ["files"]
        assert services.settings_problem and "'slow'" in services.settings_problem
        assert (tmp_path / "settings.json").exists()  # the file is still used
    finally:
        await services.close()


def test_two_bad_files_in_one_second_are_both_kept(tmp_path: Path) -> None:
    for n in range(2):
        (tmp_path / "settings.json").write_text(json.dumps({"recent_models": n}))
        assert load_settings(tmp_path).settings == Settings()
    kept = sorted(p.read_text() for p in tmp_path.glob("settings.unreadable-*.json"))
    assert kept == [json.dumps({"recent_models": 0}), json.dumps({"recent_models": 1})]


# --- saving on a full disk ------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MB tmpfs (we run as root); skipped where mounting is not allowed."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
            check=True,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"cannot mount a tmpfs here: {err}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True, capture_output=True, timeout=10)


def fill(folder: Path) -> Path:
    """Fill the file system holding ``folder`` to its last byte; returns the filler file."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as handle:
        for size in (1 << 16, 4096, 1):
            try:
                while True:
                    handle.write(b"\0" * size)
            except OSError:
                continue
    return filler


def test_saving_settings_on_a_full_disk_says_so_and_keeps_the_old_ones(tiny_disk: Path) -> None:
    data = tiny_disk / "data"
    old = Settings(provider_kind="openai", base_url="http://127.0.0.1:1/v1", model="old")
    save_settings(data, old)
    before = (data / "settings.json").read_bytes()
    fill(tiny_disk)
    new = Settings(
        provider_kind="openai",
        base_url="http://127.0.0.1:1/v1",
        model="new",
        system_prompt="x" * 20_000,
    )
    with pytest.raises(SettingsSaveError) as caught:
        save_settings(data, new)
    message = str(caught.value)
    assert "disk is full" in message and "unchanged" in message and "Free" in message
    assert sorted(p.name for p in data.iterdir()) == ["settings.json"]  # no temp file left
    assert (data / "settings.json").read_bytes() == before
    assert load_settings(data).settings == old


async def test_services_save_settings_on_a_full_disk_keeps_the_current_settings(
    tiny_disk: Path,
) -> None:
    data = tiny_disk / "data"
    services = AppServices(data)
    try:
        await services.open()
        old = Settings(provider_kind="simulator", model="sim-echo")
        services.save_settings(old)
        filler = fill(tiny_disk)
        with pytest.raises(SettingsSaveError, match="disk is full"):
            services.save_settings(
                Settings(provider_kind="openai", base_url="http://x", system_prompt="y" * 20_000)
            )
        assert services.settings == old  # what is in use is what is on disk
        filler.unlink()
        assert not list(data.glob("*.tmp"))
    finally:
        await services.close()
    assert load_settings(data).settings == old
