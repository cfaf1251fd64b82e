"""A conversation's own setup and what a request then uses (pure, no I/O).

:class:`Setup` is what the person set for one conversation: its system prompt, provider profile,
model and request parameters. Every field is optional: ``None`` means "the default in
Settings", so a conversation stores only what the person set, and changing a default later still
applies to every conversation that did not set its own. (An empty system prompt is a choice:
"no system prompt here", whatever the default.) New conversations start with an empty setup.

:func:`setup_from_data` validates the stored JSON field by field: a field of the wrong type or
out of range (temperature 0–2, top-p 0–1, …) is dropped with a problem saying why and the rest
is used; keys it does not know are **kept** (``extra``) and written back by
:func:`setup_to_data`, so a newer version's field survives an edit made here.

:func:`resolve` folds a setup over the settings into what a request uses (:class:`Resolved`);
:func:`provider_settings` is the one-provider :class:`Settings` the model is built from.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..profiles import (
    PARAMETER_KEYS,
    Parameters,
    ProviderProfile,
    parameters_from_data,
    parameters_to_data,
)
from ..settings import Settings

__all__ = [
    "MAX_PROMPT_CHARS",
    "Resolved",
    "Setup",
    "provider_settings",
    "resolve",
    "setup_from_data",
    "setup_logged",
    "setup_to_data",
]

log = logging.getLogger(__name__)

MAX_PROMPT_CHARS = 100_000
_TEXT_KEYS = ("system_prompt", "profile", "model")


@dataclass(frozen=True, slots=True)
class Setup:
    """One conversation's choices; ``None`` everywhere: the defaults of Settings."""

    system_prompt: str | None = None
    profile: str | None = None
    model: str | None = None
    parameters: Parameters = field(default=Parameters())
    #: Keys this version does not know, kept as they were stored.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def empty(self) -> bool:
        """Nothing set: the conversation follows the defaults."""
        return (
            self.system_prompt is None
            and self.profile is None
            and self.model is None
            and self.parameters.empty
        )


def _text_problem(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        return f"{key} must be text"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return f"{key} must be text"
    if key == "system_prompt" and len(value) > MAX_PROMPT_CHARS:
        return f"system_prompt must be at most {MAX_PROMPT_CHARS} characters"
    if key != "system_prompt" and not value.strip():
        return f"{key} must not be empty"
    return None


def setup_from_data(data: Any) -> tuple[Setup, list[str]]:
    """The setup stored as ``data`` (parsed JSON) and why any field was dropped. Pure."""
    if data is None:
        return Setup(), []
    if not isinstance(data, dict):
        return Setup(), ["the setup is not a JSON object"]
    problems: list[str] = []
    texts: dict[str, str | None] = {}
    for key in _TEXT_KEYS:
        value = data.get(key)
        problem = _text_problem(key, value)
        if problem is not None:
            problems.append(problem)
            value = None
        texts[key] = value.strip() if isinstance(value, str) and key != "system_prompt" else value
    parameters, more = parameters_from_data(data)
    problems.extend(more)
    known = {*_TEXT_KEYS, *PARAMETER_KEYS}
    extra = {key: value for key, value in data.items() if key not in known}
    return (
        Setup(texts["system_prompt"], texts["profile"], texts["model"], parameters, extra),
        problems,
    )


def setup_logged(data: Any, session_id: str) -> Setup:
    """:func:`setup_from_data`, each dropped field logged (the person keeps the rest)."""
    setup, problems = setup_from_data(data)
    for problem in problems:
        log.warning(
            "conversation %s: in its setup, %s; that value is not used", session_id, problem
        )
    return setup


def setup_to_data(setup: Setup) -> dict[str, Any]:
    """The JSON object stored for ``setup``: only what is set, and the kept unknown keys."""
    data: dict[str, Any] = dict(setup.extra)
    for key in _TEXT_KEYS:
        value = getattr(setup, key)
        if value is not None:
            data[key] = value
    data.update(parameters_to_data(setup.parameters))
    return data


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a request of the conversation uses: ``profile`` ``None`` means no provider is set
    up (nor named by the conversation)."""

    profile: ProviderProfile | None
    model: str
    system_prompt: str | None
    parameters: Parameters
    #: The conversation names a profile that no longer exists (the default is used instead).
    missing_profile: bool = False

    def same_model(self, other: Resolved) -> bool:
        """Whether requests of both are answered by the same provider model object."""
        return (self.profile, self.model, _sampling(self.parameters)) == (
            other.profile,
            other.model,
            _sampling(other.parameters),
        )


def _sampling(params: Parameters) -> Parameters:
    """The parameters a provider model is built with (the output limit goes per request)."""
    return dataclasses.replace(params, max_output_tokens=None)


def resolve(setup: Setup, settings: Settings) -> Resolved:
    """``setup`` over ``settings``. Pure.

    The profile: the conversation's if it still exists, else the default one. The model: the
    conversation's; else, when it chose a profile other than the default, that profile's own
    model; else the default model. The system prompt: the conversation's (``""``: none), else
    Settings'. Parameters field by field, the conversation's over Settings'.
    """
    chosen = settings.profile(setup.profile) if setup.profile is not None else None
    missing = setup.profile is not None and chosen is None
    profile = chosen or settings.default
    if setup.model is not None:
        model = setup.model
    elif chosen is not None and chosen.id != settings.default_profile:
        model = chosen.model
    else:
        model = settings.model
    prompt = setup.system_prompt if setup.system_prompt is not None else settings.system_prompt
    return Resolved(
        profile,
        model,
        prompt if prompt and prompt.strip() else None,
        setup.parameters.over(settings.parameters),
        missing,
    )


def provider_settings(settings: Settings, resolved: Resolved) -> Settings:
    """The one-provider settings the model for ``resolved`` is built from (its profile, model
    and sampling parameters; the rest of ``settings`` unchanged)."""
    profile = resolved.profile
    if profile is None:
        return settings
    return dataclasses.replace(
        settings,
        profiles=(profile,),
        default_profile=profile.id,
        provider_kind=profile.kind,
        base_url=profile.base_url,
        model=resolved.model,
        api_key_env=profile.api_key_env,
        parameters=resolved.parameters,
    )
