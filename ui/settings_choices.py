"""The Settings dialog's provider choices and the words its key fields show (pure, no widgets).

:data:`PROVIDER_CHOICES` lists what the Provider box offers, each with the provider kind it
saves, its default server address and whether it uses a key. :func:`choice_for` picks the entry
for saved settings; :func:`switch_url` decides what the address field shows when the entry
changes (a typed address comes back with its entry; the simulator's loopback port never shows);
:func:`switch_model` does the same for the model's name;
:func:`key_note` and :func:`key_placeholder` say where a key is kept or why none is needed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

#: The provider kinds settings.json knows (app.settings.ProviderKind; ui sees only app.services).
ProviderKind = Literal["openai", "anthropic", "simulator"]

__all__ = [
    "CHOICES",
    "DEFAULT_URLS",
    "KEY_PLACEHOLDERS",
    "MODEL_HINTS",
    "PROVIDER_CHOICES",
    "KeyUse",
    "ProviderChoice",
    "choice_for",
    "key_note",
    "key_placeholder",
    "switch_model",
    "switch_url",
]

#: "none": no key is used (the simulator); "optional": servers on this computer rarely want one.
KeyUse = Literal["required", "optional", "none"]


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderChoice:
    """One entry of the Provider list: what it saves and what the fields offer for it."""

    key: str
    label: str
    kind: ProviderKind
    default_url: str  # what switching to it offers ("": the person types one)
    key_use: KeyUse
    hint: str = ""  # the address field's placeholder, when not the default address

    @property
    def url_hint(self) -> str:
        """The address field's placeholder."""
        return self.hint or self.default_url


PROVIDER_CHOICES: tuple[ProviderChoice, ...] = (
    ProviderChoice("openai", "OpenAI", "openai", "https://api.openai.com/v1", "required"),
    ProviderChoice("anthropic", "Anthropic", "anthropic", "https://api.anthropic.com", "required"),
    ProviderChoice(
        "ollama", "Ollama on this computer", "openai", "http://localhost:11434/v1", "optional"
    ),
    ProviderChoice(
        "compatible",
        "Another OpenAI-compatible server (LM Studio, vLLM, OpenRouter…)",
        "openai",
        "",
        "optional",
        "For example http://localhost:1234/v1 or https://openrouter.ai/api/v1",
    ),
    ProviderChoice(
        "simulator",
        "Offline simulator (no real model)",
        "simulator",
        "",
        "none",
        "Not needed: the simulator runs inside Continuum",
    ),
)
CHOICES = {choice.key: choice for choice in PROVIDER_CHOICES}
#: Each provider kind's default address (the simulator has none: it picks a free port).
DEFAULT_URLS = {kind: CHOICES[kind].default_url for kind in ("openai", "anthropic", "simulator")}


def choice_for(kind: str | None, base_url: str) -> str:
    """Which Provider entry shows saved settings (nothing saved yet: OpenAI)."""
    if kind in ("simulator", "anthropic"):
        return kind
    url = base_url.strip().rstrip("/")
    if not url or url == CHOICES["openai"].default_url:
        return "openai"
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # a typed address with a bad port: still "some server"
        port = None
    if parts.hostname in ("localhost", "127.0.0.1", "::1") and port == 11434:
        return "ollama"
    return "compatible"


def switch_url(
    remembered: Mapping[str, str], leaving: str, shown: str, arriving: str
) -> tuple[dict[str, str], str]:
    """The Provider entry changes from ``leaving`` (its field showing ``shown``) to
    ``arriving``: what each entry's address now is, and what the field shows. An address typed
    for an entry comes back with it; otherwise the entry's default. The simulator's address is
    neither shown nor remembered (its port is gone with it)."""
    memory = dict(remembered)
    if leaving != "simulator":
        memory[leaving] = shown.strip()
    if arriving == "simulator":
        return memory, ""
    return memory, memory.get(arriving) or CHOICES[arriving].default_url


#: The model field's placeholder for each entry.
MODEL_HINTS = {
    "openai": "For example gpt-4o-mini",
    "anthropic": "For example claude-3-5-haiku-latest",
    "ollama": "For example llama3.2 (ollama list shows yours)",
    "compatible": "The model's name on that server",
    "simulator": "sim-echo",
}


def switch_model(
    remembered: Mapping[str, str], leaving: str, shown: str, arriving: str
) -> tuple[dict[str, str], str]:
    """Like :func:`switch_url`, for the model's name: a name belongs to its entry (the
    simulator's ``sim-echo`` means nothing to OpenAI); an entry never chosen starts empty."""
    memory = dict(remembered)
    memory[leaving] = shown.strip()
    return memory, memory.get(arriving, "")


def key_note(key_use: KeyUse, keyring: bool, env: str) -> str:
    """The words under the key fields: where a key is kept, or why none is needed."""
    if key_use == "none":
        return (
            "The simulator runs inside Continuum on this computer and "
            "needs no key. Its answers are not from a real model."
        )
    optional = "Servers on this computer usually need no key: leave it empty. " * (
        key_use == "optional"
    )
    if keyring:
        return (
            f"{optional}The API key is stored in your system keyring, never in "
            f"Continuum's files. The variable {env}, when set, wins."
        )
    return (
        f"{optional}This system has no keyring, so Continuum cannot store an API key safely. "
        f"Set the environment variable {env} to your key before starting Continuum."
    )


def key_placeholder(key_use: KeyUse, keyring: bool) -> str:
    """The API key field's placeholder (the field is disabled in the last two cases)."""
    if key_use == "none":
        return "No key needed"
    if not keyring:
        return "No keyring here: use the variable below"
    if key_use == "optional":
        return "Optional; leave empty to keep the stored key"
    return "Leave empty to keep the stored key"


KEY_PLACEHOLDERS = [
    key_placeholder(u, k) for u in ("required", "optional", "none") for k in (True, False)
]
