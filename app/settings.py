"""The app's settings: the saved providers (profiles), the defaults for new conversations (the
default profile, model, system prompt and request parameters), the MCP servers to start.
Never an API key.

Several saved providers (:class:`~app.profiles.ProviderProfile`) live in ``profiles``; one is
``default_profile``. The flat ``provider_kind``/``base_url``/``model``/``api_key_env`` fields
are the default profile's mirror (see :func:`app.profiles.reconcile`): a file written before
profiles existed loads as one profile (id ``main``, its key still found under the old keyring
entry), the file keeps the flat fields for older versions, and code that replaces them changes
the default profile (or adds one for a new server). Change profiles with :func:`with_profiles`.

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
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard, get_args

from .errors import SettingsFormatError, SettingsSaveError
from .profiles import (
    Parameters,
    ProfileFormatError,
    ProviderProfile,
    parameters_from_data,
    parameters_to_data,
    profile_from_data,
    profile_to_data,
    reconcile,
)
from .settings_mcp import MAX_CALL_TIMEOUT as MAX_CALL_TIMEOUT
from .settings_mcp import is_text as _is_text
from .settings_mcp import mcp_servers as _mcp_servers
from .settings_mcp import mcp_to_dict as _mcp_to_dict
from .tools.mcp import McpServerConfig

__all__ = [
    "THEME_CHOICES",
    "Parameters",
    "ProviderKind",
    "ProviderProfile",
    "Settings",
    "SettingsFormatError",
    "SettingsLoad",
    "load_settings",
    "save_settings",
    "settings_from_data",
    "ThemeChoice",
    "with_profiles",
]

log = logging.getLogger(__name__)

ProviderKind = Literal["openai", "anthropic", "simulator"]
#: The window's colours: follow the desktop's light/dark scheme, or always one theme.
ThemeChoice = Literal["system", "light", "dark"]
THEME_CHOICES: tuple[ThemeChoice, ...] = get_args(ThemeChoice)
SETTINGS_FILE = "settings.json"
MAX_SETTINGS_BYTES = 1 << 20  # a settings file is a few KB; more is not ours
MAX_RECENT_MODELS = 20
MAX_PROFILES = 100


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
    #: A short title asked of the model after a conversation's first answer: ``None`` is on,
    #: except with the offline simulator (see ``app.services.titles.auto_title_on``).
    auto_title: bool | None = None
    #: The saved providers; ``default_profile`` is the id of the one new conversations use.
    profiles: tuple[ProviderProfile, ...] = field(default=())
    default_profile: str = ""
    #: The request parameters new conversations use unless they set their own.
    parameters: Parameters = field(default=Parameters())

    def __post_init__(self) -> None:
        flat = (self.provider_kind, self.base_url, self.model, self.api_key_env)
        profiles, default = reconcile(self.profiles, self.default_profile, flat)
        object.__setattr__(self, "profiles", profiles)
        object.__setattr__(self, "default_profile", default)
        chosen = self.profile(default)
        if self.provider_kind is None and chosen is not None:  # the flat fields mirror it
            object.__setattr__(self, "provider_kind", chosen.kind)
            object.__setattr__(self, "base_url", chosen.base_url)
            object.__setattr__(self, "model", chosen.model)
            object.__setattr__(self, "api_key_env", chosen.api_key_env)

    @property
    def configured(self) -> bool:
        if self.provider_kind == "simulator":
            return True
        return self.provider_kind is not None and bool(self.base_url)

    def profile(self, profile_id: str | None) -> ProviderProfile | None:
        """The saved provider ``profile_id`` (``None``: no such profile)."""
        return next((p for p in self.profiles if p.id == profile_id), None)

    @property
    def default(self) -> ProviderProfile | None:
        """The profile new conversations use (``None``: no provider set up yet)."""
        return self.profile(self.default_profile)

    def key_service(self) -> str:
        """The keyring entry name for the default provider's key (one per profile; a provider
        saved before profiles existed keeps its entry, one per provider and URL)."""
        chosen = self.default
        if chosen is not None:
            return chosen.key_service()
        return f"{self.provider_kind or 'none'}:{self.base_url.rstrip('/')}"


def with_profiles(
    settings: Settings, profiles: tuple[ProviderProfile, ...], default: str
) -> Settings:
    """``settings`` with these profiles, ``default`` (an id among them) the default one; the
    flat fields follow it (no profile left: no provider)."""
    chosen = next((p for p in profiles if p.id == default), profiles[0] if profiles else None)
    if chosen is None:
        return dataclasses.replace(
            settings,
            profiles=(),
            default_profile="",
            provider_kind=None,
            base_url="",
            api_key_env=None,
        )
    return dataclasses.replace(
        settings,
        profiles=profiles,
        default_profile=chosen.id,
        provider_kind=chosen.kind,
        base_url=chosen.base_url,
        model=chosen.model,
        api_key_env=chosen.api_key_env,
    )


@dataclass(frozen=True, slots=True)
class SettingsLoad:
    settings: Settings
    problem: str | None = None


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
    auto_title = data.get("auto_title")
    if auto_title is not None and not isinstance(auto_title, bool):
        raise SettingsFormatError("auto_title must be true, false or null (automatic)")
    profiles, default = _profiles(data)
    raw_parameters = data.get("parameters")
    if raw_parameters is None:
        raw_parameters = {}
    if not isinstance(raw_parameters, dict):
        raise SettingsFormatError("parameters must be an object")
    parameters, problems = parameters_from_data(raw_parameters)
    if problems:
        raise SettingsFormatError("parameters: " + problems[0])
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
        auto_title=auto_title,
        profiles=profiles,
        default_profile=default,
        parameters=parameters,
    )
    return settings, skipped


def _profiles(data: dict[str, Any]) -> tuple[tuple[ProviderProfile, ...], str]:
    """The file's ``profiles`` and ``default_profile`` (none in a file from before them)."""
    entries = data.get("profiles")
    if entries is None:
        entries = []
    if not isinstance(entries, list) or len(entries) > MAX_PROFILES:
        raise SettingsFormatError(f"profiles must be a list of at most {MAX_PROFILES}")
    try:
        profiles = tuple(profile_from_data(entry) for entry in entries)
    except ProfileFormatError as err:
        raise SettingsFormatError(f"profiles: {err}") from None
    if len({p.id for p in profiles}) != len(profiles):
        raise SettingsFormatError("profiles: an id is used twice")
    default = _text_field(data, "default_profile") or ""
    return profiles, default


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
    data["profiles"] = [profile_to_data(profile) for profile in settings.profiles]
    data["parameters"] = parameters_to_data(settings.parameters)
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
