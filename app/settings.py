"""The app's settings: which provider, which model, the system prompt, the MCP servers to start.
Never an API key.

Kept as JSON in the data folder, written atomically (a temporary file renamed over the old one),
so a crash mid-save leaves the previous settings; a save that fails (a full disk) raises
:class:`~app.errors.SettingsSaveError`, removes its temporary file and leaves the old settings.

Every field of the file is validated (:func:`settings_from_data`, a pure function): a file that
cannot be read, is not JSON, nests too deep, or has a field of the wrong type or out of range is
kept aside (renamed with a timestamp, never overwriting an earlier copy) and defaults are used;
``load_settings`` says so in ``problem``. Only single unusable MCP server entries are skipped
instead (the rest of the file is used), and ``problem`` names them. An unknown ``theme`` is only
a look: it falls back to ``"system"`` (logged), keeping the rest of the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard, get_args

from .errors import SettingsFormatError, SettingsSaveError
from .tools.mcp import McpServerConfig

__all__ = [
    "THEME_CHOICES",
    "ProviderKind",
    "Settings",
    "SettingsFormatError",
    "SettingsLoad",
    "load_settings",
    "save_settings",
    "settings_from_data",
    "ThemeChoice",
]

log = logging.getLogger(__name__)

ProviderKind = Literal["openai", "anthropic", "simulator"]
#: The window's colours: follow the desktop's light/dark scheme, or always one theme.
ThemeChoice = Literal["system", "light", "dark"]
THEME_CHOICES: tuple[ThemeChoice, ...] = get_args(ThemeChoice)
SETTINGS_FILE = "settings.json"
MAX_SETTINGS_BYTES = 1 << 20  # a settings file is a few KB; more is not ours
MAX_RECENT_MODELS = 20
MAX_CALL_TIMEOUT = 86_400.0  # seconds: one day


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
    #: OpenAI-compatible ``stream_options`` (token usage): ``None`` sends it and drops it for a
    #: server that refuses it; ``false`` never sends it; ``true`` always does. File only.
    stream_options: bool | None = None
    #: View → Theme: ``"system"`` follows the desktop's light/dark scheme.
    theme: ThemeChoice = "system"

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


def _is_text(value: Any) -> TypeGuard[str]:
    """A string that can be sent and stored (no lone surrogate from a ``\\udXXX`` escape)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _mcp_server(entry: Any) -> McpServerConfig:
    """One ``mcp_servers`` entry of the file (``ValueError`` saying what is wrong)."""
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    name, command, args = entry.get("name"), entry.get("command"), entry.get("args", [])
    env, timeout = entry.get("env"), entry.get("call_timeout", 30.0)
    cwd, side_effects = entry.get("cwd"), entry.get("side_effects", True)
    if not _is_text(name) or not _is_text(command) or not name.strip() or not command.strip():
        raise ValueError("needs a text name and command")
    if not isinstance(args, list) or not all(_is_text(a) for a in args):
        raise ValueError("args must be a list of text")
    if env is not None and not (
        isinstance(env, dict) and all(_is_text(k) and _is_text(v) for k, v in env.items())
    ):
        raise ValueError("env must map text to text")
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not _in_range(timeout, 0.0, MAX_CALL_TIMEOUT)
        or timeout == 0
    ):
        raise ValueError(
            f"call_timeout must be a number of seconds above 0 and at most {MAX_CALL_TIMEOUT:.0f}"
        )
    if not isinstance(side_effects, bool):
        raise ValueError("side_effects must be true or false")
    if cwd is not None and not _is_text(cwd):
        raise ValueError("cwd must be text")
    return McpServerConfig(
        name,
        command,
        tuple(args),
        env=env,
        call_timeout=float(timeout),
        side_effects=side_effects,
        cwd=cwd or None,
    )


def _in_range(number: int | float, low: float, high: float) -> bool:
    """Whether a JSON number lies in ``[low, high]`` (a 400-digit integer or NaN does not)."""
    if isinstance(number, int):
        return low <= number <= high  # exact: never converted to a float that may overflow
    return math.isfinite(number) and low <= number <= high


def _mcp_servers(entries: list[Any]) -> tuple[tuple[McpServerConfig, ...], list[str]]:
    """The valid servers, and a description of each entry skipped."""
    servers: list[McpServerConfig] = []
    skipped: list[str] = []
    for index, entry in enumerate(entries):
        label = entry.get("name") if isinstance(entry, dict) else None
        label = repr(label) if _is_text(label) and label else f"number {index + 1}"
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


def _is_theme(value: Any) -> TypeGuard[ThemeChoice]:
    return isinstance(value, str) and value in THEME_CHOICES


def _text_field(data: dict[str, Any], key: str, *, optional: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        return None if optional else ""
    if not _is_text(value):
        raise SettingsFormatError(f"{key} must be text")
    return str(value)


def settings_from_data(data: Any) -> tuple[Settings, list[str]]:
    """Validate the parsed settings file; returns the settings and the MCP entries skipped.

    Raises :class:`SettingsFormatError` naming the first field of a wrong type or value.
    Fields missing or ``null`` take their defaults; unknown fields are ignored.
    """
    if not isinstance(data, dict):
        raise SettingsFormatError("the file is not a JSON object")
    kind = data.get("provider_kind")
    if kind is not None and kind not in get_args(ProviderKind):
        raise SettingsFormatError(
            "provider_kind must be one of " + ", ".join(get_args(ProviderKind))
        )
    base_url = _text_field(data, "base_url") or ""
    model = _text_field(data, "model") or ""
    system_prompt = _text_field(data, "system_prompt") or ""
    env = _text_field(data, "api_key_env", optional=True)
    workspace = _text_field(data, "workspace", optional=True)
    recent = data.get("recent_models")
    if recent is None:
        recent = []
    if not isinstance(recent, list) or not all(_is_text(m) for m in recent):
        raise SettingsFormatError("recent_models must be a list of text")
    entries = data.get("mcp_servers")
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise SettingsFormatError("mcp_servers must be a list")
    servers, skipped = _mcp_servers(entries)
    stream_options = data.get("stream_options")
    if stream_options is not None and not isinstance(stream_options, bool):
        raise SettingsFormatError("stream_options must be true, false or null (automatic)")
    raw_theme = data.get("theme")
    theme: ThemeChoice = "system"
    if _is_theme(raw_theme):
        theme = raw_theme
    elif raw_theme is not None:  # a look, not worth setting the whole file aside
        log.warning("settings: unknown theme %s, following the system", repr(raw_theme)[:80])
    settings = Settings(
        provider_kind=kind,
        base_url=base_url,
        model=model,
        system_prompt=system_prompt,
        api_key_env=env or None,
        workspace=workspace or None,
        recent_models=tuple(recent)[:MAX_RECENT_MODELS],
        mcp_servers=servers,
        stream_options=stream_options,
        theme=theme,
    )
    return settings, skipped


def load_settings(data_dir: Path) -> SettingsLoad:
    """The settings in ``data_dir``; defaults (and ``problem``) when the file is unusable."""
    path = data_dir / SETTINGS_FILE
    if not path.exists():
        return SettingsLoad(Settings())
    try:
        if path.stat().st_size > MAX_SETTINGS_BYTES:
            raise SettingsFormatError(f"it is larger than {MAX_SETTINGS_BYTES // 1024} KB")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except RecursionError:  # json.loads on thousands of nested brackets
            raise SettingsFormatError("it nests too deeply") from None
        settings, skipped = settings_from_data(data)
    except (OSError, ValueError) as err:  # JSON, UTF-8 and field errors are ValueErrors
        return SettingsLoad(Settings(), _set_aside(path, err))
    problem = None
    if skipped:
        problem = (
            "Some MCP servers in the settings could not be used and were skipped: "
            + "; ".join(skipped)
            + ". Add them again in Settings."
        )
    return SettingsLoad(settings, problem)


def _set_aside(path: Path, err: Exception) -> str:
    """Keep an unusable settings file under a new name; the person-facing notice."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    where = "it was left in place"
    for attempt in range(100):
        aside = path.with_name(
            f"settings.unreadable-{stamp}{f'-{attempt}' if attempt else ''}.json"
        )
        if aside.exists():
            continue
        try:
            os.replace(path, aside)
            where = f"it was kept as {aside.name}"
        except OSError:
            pass
        break
    detail = str(err)
    if len(detail) > 200:  # a JSON error may quote a long stretch of the file
        detail = detail[:200] + "…"
    return (
        f"The settings file could not be used ({detail}); {where} and defaults are "
        "used. Choose your provider again in Settings."
    )


def save_settings(data_dir: Path, settings: Settings) -> None:
    """Write the settings atomically; :class:`SettingsSaveError` if they cannot be saved.

    On failure the previous file is unchanged and no temporary file is left behind.
    """
    path = data_dir / SETTINGS_FILE
    data = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    data["recent_models"] = list(settings.recent_models)
    data["mcp_servers"] = [_mcp_to_dict(server) for server in settings.mcp_servers]
    text = json.dumps(data, indent=2, ensure_ascii=False)
    # A lone surrogate (a broken paste into a field) has no UTF-8 form: store U+FFFD instead.
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    tmp = path.with_suffix(".json.tmp")
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        try:
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
    except OSError as err:
        raise SettingsSaveError(_save_problem(path, err)) from err


def _save_problem(path: Path, err: OSError) -> str:
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "the disk is full"
        todo = "Free some disk space and save them again"
    elif err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        what = "the data folder cannot be written"
        todo = "Check the folder's permissions and save them again"
    else:
        what = err.strerror or type(err).__name__
        todo = "Check the disk and save them again"
    return (
        f"The settings could not be saved to {path}: {what}. {todo}; "
        "the previous settings are unchanged."
    )


def _mcp_to_dict(server: McpServerConfig) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": server.name,
        "command": server.command,
        "args": list(server.args),
    }
    if server.env:
        data["env"] = dict(server.env)
    if server.call_timeout != 30.0:
        data["call_timeout"] = server.call_timeout
    if not server.side_effects:
        data["side_effects"] = False
    if server.cwd:
        data["cwd"] = server.cwd
    return data
