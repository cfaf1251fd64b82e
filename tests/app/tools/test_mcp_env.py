"""Environment variables of MCP servers (:mod:`app.mcp_env`, the ``mcp_servers`` entries of the
settings file): table tests; the same through the services and a real server is in
``tests/app/services/test_mcp_servers.py``, through the dialog in ``tests/ui/test_settings_mcp.py``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from app.mcp_env import is_secret_name, parse_env_lines
from app.settings import load_settings, save_settings
from app.tools.mcp import McpServerConfig


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("GITHUB_PERSONAL_ACCESS_TOKEN", True),
        ("API_KEY", True),
        ("APIKEY", True),
        ("OPENAI_API_KEY", True),
        ("DB_PASSWORD", True),
        ("CLIENT_SECRET", True),
        ("AUTHORIZATION", True),
        ("GITLAB_PAT", True),
        ("aws_secret_access_key", True),
        ("HTTPS_PROXY", False),
        ("PATH", False),
        ("KEYBOARD_LAYOUT", False),
        ("ALLOWED_DIRS", False),
        ("LOG_LEVEL", False),
    ],
)
def test_which_names_are_secrets(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


@pytest.mark.parametrize(
    ("text", "found", "problems"),
    [
        ("A=1\nB = two words \n", {"A": "1", "B": "two words"}, []),
        ("# comment\n\nexport TOKEN=x=y\n", {"TOKEN": "x=y"}, []),
        ("EMPTY=\n", {"EMPTY": ""}, []),
        (
            "no equals\n1BAD=x\nA=1\nA=2\n",
            {"A": "1"},
            [
                "line 1 is not NAME=value",
                "line 2 is not NAME=value",
                "line 4 sets A a second time",
            ],
        ),
    ],
)
def test_reading_variables(text: str, found: dict[str, str], problems: list[str]) -> None:
    assert parse_env_lines(text) == (found, problems)


def test_the_settings_file_keeps_secret_names_only(tmp_path: Path) -> None:
    server = McpServerConfig(
        "gh",
        "npx",
        ("-y", "srv"),
        env={"HTTPS_PROXY": "http://p:3128"},
        secret_env=("GITHUB_TOKEN",),
        trust_read_only=True,
    )
    settings = load_settings(tmp_path).settings
    save_settings(tmp_path, dataclasses.replace(settings, mcp_servers=(server,)))
    data = json.loads((tmp_path / "settings.json").read_text())
    assert data["mcp_servers"][0]["secret_env"] == ["GITHUB_TOKEN"]
    assert data["mcp_servers"][0]["trust_read_only"] is True
    assert load_settings(tmp_path).settings.mcp_servers == (server,)
    assert "http://p:3128" not in repr(server)  # values stay out of reprs (and logs)

    data["mcp_servers"][0]["secret_env"] = ["not a name"]
    (tmp_path / "settings.json").write_text(json.dumps(data))
    loaded = load_settings(tmp_path)
    assert loaded.settings.mcp_servers == ()
    assert loaded.problem and "secret_env must be a list of variable names" in loaded.problem
