"""The app's settings: which provider, which model, the system prompt. Never an API key.

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
    )


def load_settings(data_dir: Path) -> SettingsLoad:
    path = data_dir / SETTINGS_FILE
    if not path.exists():
        return SettingsLoad(Settings())
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return SettingsLoad(_from_dict(data))
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
    data = dataclasses.asdict(settings)
    data["recent_models"] = list(settings.recent_models)
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
