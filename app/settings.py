"""The app's settings: which provider, which model, the system prompt, the MCP servers to start.
Never an API key.

Kept as JSON in the data folder, written atomically (a temporary file renamed over the old one),
so a crash mid-save leaves the previous settings. A file that cannot be read is kept aside
(renamed with a timestamp) and defaults are used; ``load_settings`` says so in ``problem``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from .mcp_tools import McpServerConfig

__all__ = ["ProviderKind", "Settings", "SettingsLoad", "load_settings", "save_settings"]

ProviderKind = Literal["openai", "anthropic", "simulator"]
SETTINGS_FILE = "settings.json"


@dataclass(frozen=True, slots=True)
class Settings:
    """What the person chose. ``api_key_env`` names an environment variable holding the key."""

    provider_kind: ProviderKind | None = None
    base_url: str = ""
    model: str = ""
    system_prompt: str = ""
    api_key_env: str | None = None
    workspace: str | None = None
    recent_models: tuple[str, ...] = field(default=())
    #: stdio MCP servers started with the app; their tools are offered in every conversation.
    mcp_servers: tuple[McpServerConfig, ...] = field(default=())

    @property
    def configured(self) -> bool:
        if self.provider_kind == "simulator":
            return True
        return self.provider_kind is not None and bool(self.base_url)

    def key_service(self) -> str:
        """The keyring entry name for this provider's key (one per provider and URL)."""
        return f"{self.provider_kind or 'none'}:{self.base_url.rstrip('/')}"


@dataclass(frozen=True, slots=True)
class SettingsLoad:
    settings: Settings
    problem: str | None = None


def _mcp_server(entry: Any) -> McpServerConfig:
    """One ``mcp_servers`` entry of the file (``ValueError`` saying what is wrong)."""
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    name, command, args = entry.get("name"), entry.get("command"), entry.get("args", [])
    env, timeout = entry.get("env"), entry.get("call_timeout", 30.0)
    cwd = entry.get("cwd")
    if not isinstance(name, str) or not isinstance(command, str):
        raise ValueError("needs a text name and command")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("args must be a list of text")
    if env is not None and not (
        isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str)
                                      for k, v in env.items())
    ):
        raise ValueError("env must map text to text")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ValueError("call_timeout must be a number")
    return McpServerConfig(
        name, command, tuple(args), env=env, call_timeout=float(timeout),
        side_effects=entry.get("side_effects", True) is not False,
        cwd=cwd if isinstance(cwd, str) and cwd else None,
    )


def _mcp_servers(entries: Any) -> tuple[tuple[McpServerConfig, ...], list[str]]:
    """The valid servers, and a description of each entry skipped."""
    if entries is None:
        return (), []
    if not isinstance(entries, list):
        return (), ["mcp_servers is not a list"]
    servers: list[McpServerConfig] = []
    skipped: list[str] = []
    for index, entry in enumerate(entries):
        label = entry.get("name") if isinstance(entry, dict) else None
        label = repr(label) if isinstance(label, str) and label else f"number {index + 1}"
        try:
            server = _mcp_server(entry)
        except ValueError as err:
            skipped.append(f"{label} ({err})")
            continue
        if any(s.name == server.name for s in servers):
            skipped.append(f"{label} (the name is used twice)")
            continue
        servers.append(server)
    return tuple(servers), skipped


def _from_dict(data: dict[str, Any]) -> Settings:
    kind = data.get("provider_kind")
    if kind not in (*get_args(ProviderKind), None):
        kind = None
    text = {k: data.get(k) for k in ("base_url", "model", "system_prompt")}
    env = data.get("api_key_env")
    workspace = data.get("workspace")
    recent = data.get("recent_models") or []
    return Settings(
        provider_kind=kind,
        base_url=text["base_url"] if isinstance(text["base_url"], str) else "",
        model=text["model"] if isinstance(text["model"], str) else "",
        system_prompt=text["system_prompt"] if isinstance(text["system_prompt"], str) else "",
        api_key_env=env if isinstance(env, str) and env else None,
        workspace=workspace if isinstance(workspace, str) and workspace else None,
        recent_models=tuple(m for m in recent if isinstance(m, str))[:20],
        mcp_servers=_mcp_servers(data.get("mcp_servers"))[0],
    )


def load_settings(data_dir: Path) -> SettingsLoad:
    path = data_dir / SETTINGS_FILE
    if not path.exists():
        return SettingsLoad(Settings())
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        settings = _from_dict(data)
        skipped = _mcp_servers(data.get("mcp_servers"))[1]
        problem = None
        if skipped:
            problem = ("Some MCP servers in the settings could not be used and were skipped: "
                       + "; ".join(skipped) + ". Add them again in Settings.")
        return SettingsLoad(settings, problem)
    except (OSError, ValueError) as err:
        aside = path.with_name(f"settings.unreadable-{time.strftime('%Y%m%d-%H%M%S')}.json")
        try:
            os.replace(path, aside)
            where = f"it was kept as {aside.name}"
        except OSError:
            where = "it was left in place"
        return SettingsLoad(
            Settings(),
            f"The settings file could not be read ({err}); {where} and defaults are used. "
            "Choose your provider again in Settings.",
        )


def save_settings(data_dir: Path, settings: Settings) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SETTINGS_FILE
    data = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    data["recent_models"] = list(settings.recent_models)
    data["mcp_servers"] = [_mcp_to_dict(server) for server in settings.mcp_servers]
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _mcp_to_dict(server: McpServerConfig) -> dict[str, Any]:
    data: dict[str, Any] = {"name": server.name, "command": server.command,
                            "args": list(server.args)}
    if server.env:
        data["env"] = dict(server.env)
    if server.call_timeout != 30.0:
        data["call_timeout"] = server.call_timeout
    if not server.side_effects:
        data["side_effects"] = False
    if server.cwd:
        data["cwd"] = server.cwd
    return data
