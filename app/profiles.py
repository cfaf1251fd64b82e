"""Saved providers and request parameters: what Settings keeps besides its own fields (pure).

A :class:`ProviderProfile` is one saved provider ("OpenAI", "Ollama on this machine", "Work
proxy"): a unique id, a display name, its kind, base URL, the model it uses unless a
conversation names another, and where its API key lives — the OS keyring entry
:meth:`ProviderProfile.key_service` (its own per profile) or an environment variable the person
named. A profile never holds a key, so neither its repr nor the settings file can show one.

:class:`Parameters` are the sampling parameters of a request (temperature 0–2, top-p 0–1, the
output limit, OpenAI-style ``reasoning_effort`` and Anthropic's thinking budget); every field is
optional (``None``: the provider's own default).

Today's single provider (the flat ``provider_kind``/``base_url``/``model``/``api_key_env``
fields of Settings) is the *default profile's mirror*: :func:`reconcile` keeps the two in step,
so a file written before profiles existed loads as one profile, and code that still reads or
replaces the flat fields acts on the default profile.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeGuard, cast, get_args
from urllib.parse import urlsplit

from .errors import SettingsFormatError

__all__ = [
    "MIGRATED_ID",
    "REASONING_EFFORTS",
    "Parameters",
    "ProfileKind",
    "ProviderProfile",
    "ReasoningEffort",
    "default_name",
    "new_profile_id",
    "parameters_from_data",
    "parameters_to_data",
    "profile_from_data",
    "profile_to_data",
    "reconcile",
]

ProfileKind = Literal["openai", "anthropic", "simulator"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]
REASONING_EFFORTS: tuple[ReasoningEffort, ...] = get_args(ReasoningEffort)
#: The id of the profile made from a settings file written before profiles existed.
MIGRATED_ID = "main"
MAX_OUTPUT_TOKENS = 1_000_000
MIN_THINKING_BUDGET = 1024  # Anthropic's smallest budget_tokens
MAX_NAME = 80


@dataclass(frozen=True, slots=True)
class Parameters:
    """A request's sampling parameters; ``None``: not set (a default applies)."""

    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    reasoning_effort: ReasoningEffort | None = None
    thinking_budget: int | None = None

    def over(self, defaults: Parameters) -> Parameters:
        """These parameters, each unset one taken from ``defaults``."""
        return Parameters(
            *(
                mine if mine is not None else default
                for mine, default in zip(_values(self), _values(defaults), strict=True)
            )
        )

    @property
    def empty(self) -> bool:
        return all(value is None for value in _values(self))


def _values(params: Parameters) -> tuple[Any, ...]:
    return (
        params.temperature,
        params.top_p,
        params.max_output_tokens,
        params.reasoning_effort,
        params.thinking_budget,
    )


@dataclass(frozen=True, slots=True)
class ProviderProfile:
    """One saved provider. ``key_entry`` names its keyring entry ("": the entry of a provider
    saved before profiles existed, ``kind:url``, so a key stored then is still found)."""

    id: str
    name: str
    kind: ProfileKind
    base_url: str = ""
    model: str = ""
    api_key_env: str | None = None
    key_entry: str = ""

    def key_service(self) -> str:
        """The keyring entry name holding this profile's key."""
        return self.key_entry or f"{self.kind}:{self.base_url.rstrip('/')}"

    @property
    def usable(self) -> bool:
        return self.kind == "simulator" or bool(self.base_url.strip())


def new_profile_id() -> str:
    return uuid.uuid4().hex[:12]


def default_name(kind: str | None, base_url: str) -> str:
    """A profile's name when the person gave none: the provider, or the server's host."""
    if kind == "simulator":
        return "Offline simulator"
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if kind == "anthropic" and parts.hostname in (None, "api.anthropic.com"):
        return "Anthropic"
    if parts.hostname == "api.openai.com":
        return "OpenAI"
    if parts.hostname in ("localhost", "127.0.0.1", "::1"):
        return "Ollama on this machine" if port == 11434 else f"Server on this machine :{port}"
    return parts.hostname or ("Anthropic" if kind == "anthropic" else "OpenAI-compatible")


def _same_server(profile: ProviderProfile, kind: str, base_url: str) -> bool:
    if profile.kind != kind:
        return False
    return kind == "simulator" or profile.base_url.rstrip("/") == base_url.rstrip("/")


def reconcile(
    profiles: tuple[ProviderProfile, ...],
    default: str,
    flat: tuple[ProfileKind | None, str, str, str | None],
) -> tuple[tuple[ProviderProfile, ...], str]:
    """The profiles and default id once the flat fields ``(kind, url, model, env)`` are taken
    as the default profile's. Pure.

    Flat fields that match the default profile change nothing. Otherwise they win: the profile
    for that kind and server (the simulator: any simulator profile) becomes the default with
    the flat model and key variable, or a new profile is added for it. Nothing is ever removed.
    No flat kind: the profiles stand (the flat fields are then filled from them by Settings).
    """
    kind, url, model, env = flat
    by_id = {p.id: p for p in profiles}
    if default not in by_id:
        default = profiles[0].id if profiles else ""
    if kind is None:
        return profiles, default
    current = by_id.get(default)
    target = current
    if target is None or not _same_server(target, kind, url):
        target = next((p for p in profiles if _same_server(p, kind, url)), None)
    if target is None:
        ids = set(by_id)
        new_id = MIGRATED_ID if MIGRATED_ID not in ids else new_profile_id()
        added = ProviderProfile(new_id, default_name(kind, url), kind, url, model, env)
        return (*profiles, added), new_id
    updated = replace(target, base_url=url, model=model, api_key_env=env)
    return tuple(updated if p.id == target.id else p for p in profiles), target.id


# --- the file's form (validated) ------------------------------------------------------------


class ProfileFormatError(SettingsFormatError):
    """A profile or parameter in the file is not usable (the message names the field)."""


def _text(value: Any) -> TypeGuard[str]:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _number(value: Any, low: float, high: float) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return low <= value <= high
    return math.isfinite(value) and low <= value <= high


def _integer(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def parameter_problem(key: str, value: Any) -> str | None:
    """Why ``value`` cannot be parameter ``key`` (``None``: it can, or it is unset)."""
    if value is None:
        return None
    if key == "temperature" and not _number(value, 0.0, 2.0):
        return "temperature must be a number from 0 to 2"
    if key == "top_p" and not _number(value, 0.0, 1.0):
        return "top_p must be a number from 0 to 1"
    if key == "max_output_tokens" and not _integer(value, 1, MAX_OUTPUT_TOKENS):
        return f"max_output_tokens must be a whole number from 1 to {MAX_OUTPUT_TOKENS}"
    if key == "reasoning_effort" and value not in REASONING_EFFORTS:
        return "reasoning_effort must be one of " + ", ".join(REASONING_EFFORTS)
    if key == "thinking_budget" and not _integer(value, MIN_THINKING_BUDGET, MAX_OUTPUT_TOKENS):
        return (
            f"thinking_budget must be a whole number from {MIN_THINKING_BUDGET} "
            f"to {MAX_OUTPUT_TOKENS}"
        )
    return None


PARAMETER_KEYS: tuple[str, ...] = (
    "temperature",
    "top_p",
    "max_output_tokens",
    "reasoning_effort",
    "thinking_budget",
)


def parameters_from_data(data: Mapping[str, Any]) -> tuple[Parameters, list[str]]:
    """The valid parameters among ``data``'s keys, and why each invalid one was left out."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key in PARAMETER_KEYS:
        value = data.get(key)
        problem = parameter_problem(key, value)
        if problem is not None:
            problems.append(problem)
            continue
        if key in ("temperature", "top_p") and value is not None:
            value = float(value)
        values[key] = value
    return Parameters(**values), problems


def parameters_to_data(params: Parameters) -> dict[str, Any]:
    """Only the parameters that are set."""
    return {
        key: value
        for key, value in zip(PARAMETER_KEYS, _values(params), strict=True)
        if value is not None
    }


def profile_from_data(entry: Any) -> ProviderProfile:
    """One ``profiles`` entry of the settings file (:class:`ProfileFormatError` naming the
    field)."""
    if not isinstance(entry, dict):
        raise ProfileFormatError("each of profiles must be an object")
    ident, kind = entry.get("id"), entry.get("kind")
    if not _text(ident) or not ident.strip() or len(ident) > MAX_NAME:
        raise ProfileFormatError("each of profiles needs a text id")
    if kind not in get_args(ProfileKind):
        raise ProfileFormatError(
            "a profile's kind must be one of " + ", ".join(get_args(ProfileKind))
        )
    kind = cast(ProfileKind, kind)
    texts: dict[str, str] = {}
    for key in ("name", "base_url", "model", "api_key_env", "key_entry"):
        value = entry.get(key)
        if value is not None and not _text(value):
            raise ProfileFormatError(f"a profile's {key} must be text")
        texts[key] = str(value or "")
    url = texts["base_url"]
    return ProviderProfile(
        ident,
        texts["name"].strip()[:MAX_NAME] or default_name(kind, url),
        kind,
        url,
        texts["model"],
        texts["api_key_env"] or None,
        texts["key_entry"],
    )


def profile_to_data(profile: ProviderProfile) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": profile.id,
        "name": profile.name,
        "kind": profile.kind,
        "base_url": profile.base_url,
        "model": profile.model,
    }
    if profile.api_key_env:
        data["api_key_env"] = profile.api_key_env
    if profile.key_entry:
        data["key_entry"] = profile.key_entry
    return data
