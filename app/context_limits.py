"""How many tokens a model's context holds, when that can be known — asked, never guessed.

:class:`ContextLimits` answers ``limit(base_url, model)`` with a :class:`ContextLimit` or
``None`` (unknown), cached per (base URL, model):

1. A local server is asked (plain ``http://`` URLs and loopback or private hosts only; no API
   key is ever sent). Ollama: ``GET /api/ps`` gives a loaded model's ``context_length`` (what
   the server actually allocated, ollama/ollama#11331); else ``POST /api/show`` gives a
   ``num_ctx`` set in the model's parameters, else ``model_info["<arch>.context_length"]``
   (what the model was trained for — the server may allocate less). llama.cpp's
   ``llama-server``: ``GET /props`` → ``default_generation_settings.n_ctx`` (the context per
   slot, ggml-org/llama.cpp#5307; ``0`` in router mode means unknown; newer builds also answer
   ``/v1/props``).
2. Otherwise a model of a hosted provider with a published window (:data:`PUBLISHED`).
3. Otherwise ``None``: the meter then shows the tokens used without a share.

:func:`context_used` is the other half: the newest answer's input + output tokens as the
provider reported them (``None`` when it reported nothing). Qt-free; never raises for a server
that answers badly (logged, then unknown).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from .messages import AssistantMessage, Message

__all__ = [
    "PUBLISHED",
    "ContextLimit",
    "ContextLimits",
    "asks_server",
    "context_used",
    "ollama_limit",
    "llamacpp_limit",
    "published_limit",
    "server_root",
]

log = logging.getLogger(__name__)

#: Published context windows (input + output tokens) of well-known hosted models, matched by
#: the longest name prefix (dated snapshots such as ``gpt-4o-2024-08-06`` match ``gpt-4o``).
#: Sources: OpenAI's model pages (platform.openai.com/docs/models/<name>: GPT-4o and 4o mini
#: 128,000; GPT-4.1, 4.1 mini and nano 1,047,576; o1, o3, o3-mini and o4-mini 200,000; GPT-5,
#: 5 mini and nano 400,000; GPT-4 Turbo 128,000; GPT-3.5 Turbo 16,385) and Anthropic's models
#: overview (docs.anthropic.com/en/docs/about-claude/models: every Claude 3, 3.5, 3.7, 4 and
#: 4.5 model 200,000 — the 1M window of some is a beta that must be asked for per request).
PUBLISHED: Final[Mapping[str, int]] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-3.5-turbo": 16_385,
    "gpt-4.1": 1_047_576,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gpt-5": 400_000,
    "claude-3": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
}

#: How long an answer of "unknown" is kept before the server is asked again (a model that
#: was not loaded yet reports its context once it is).
RETRY_UNKNOWN_AFTER: Final = 60.0
_TIMEOUT: Final = 3.0


@dataclass(frozen=True, slots=True)
class ContextLimit:
    """A model's context window in tokens and, in words, where the number comes from."""

    tokens: int
    source: str
    #: ``False``: the server may report a better number later (Ollama's trained context
    #: before the model is loaded); asked again after :data:`RETRY_UNKNOWN_AFTER`.
    settled: bool = True


def published_limit(model: str) -> ContextLimit | None:
    """The published window of a hosted model (:data:`PUBLISHED`), by the longest prefix."""
    name = model.strip().lower().rsplit("/", 1)[-1]  # "openai/gpt-4o" through a router
    best = max((p for p in PUBLISHED if name.startswith(p)), key=len, default=None)
    if best is None:
        return None
    return ContextLimit(PUBLISHED[best], f"the published limit of {best}")


def server_root(base_url: str) -> str:
    """The server's root for its own (non-OpenAI) routes: the URL without a final ``/v1``."""
    root = base_url.rstrip("/")
    return root.removesuffix("/v1") if root.endswith("/v1") else root


def asks_server(base_url: str) -> bool:
    """Whether the server behind ``base_url`` is asked: a local one (plain ``http://``, or a
    loopback, private or ``.local`` host). Hosted APIs have no such routes."""
    try:
        parts = urlsplit(base_url)
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    if not host:
        return False
    if parts.scheme == "http" or host == "localhost" or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def _positive(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value > 0 else None


def ollama_limit(model: str, ps: Any = None, show: Any = None) -> ContextLimit | None:
    """From Ollama's answers (parsed JSON; ``None``: not asked or failed): the loaded context
    (``/api/ps``), else ``num_ctx`` in the model's parameters, else the trained context."""
    if isinstance(ps, dict):
        for entry in ps.get("models") or ():
            names = (entry.get("name"), entry.get("model")) if isinstance(entry, dict) else ()
            if model in names or f"{model}:latest" in names:
                assert isinstance(entry, dict)
                loaded = _positive(entry.get("context_length"))
                if loaded:
                    return ContextLimit(loaded, "the context Ollama allocated for the model")
    if not isinstance(show, dict):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            key, _, value = line.strip().partition(" ")
            if key == "num_ctx" and value.strip().isdigit() and int(value.strip()) > 0:
                return ContextLimit(int(value.strip()), "num_ctx in the model's Ollama parameters")
    info = show.get("model_info")
    if isinstance(info, dict):
        arch = info.get("general.architecture")
        trained = _positive(info.get(f"{arch}.context_length")) if isinstance(arch, str) else None
        if trained:
            return ContextLimit(
                trained, "the model's trained context, reported by Ollama", settled=False
            )
    return None


def llamacpp_limit(props: Any) -> ContextLimit | None:
    """From llama-server's ``/props`` (parsed JSON): the context per slot (0: unknown)."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    n_ctx = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    if n_ctx is None:
        return None
    return ContextLimit(n_ctx, "the context per slot, reported by the llama.cpp server")


async def _json(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any) -> Any:
    """The parsed JSON body of a 200 answer; ``None`` for anything else (logged at debug)."""
    try:
        response = await client.request(method, url, **kwargs)
        if response.status_code != 200:
            return None
        return response.json()
    except (httpx.HTTPError, ValueError) as err:
        log.debug("context limit: %s %s: %s", method, url, type(err).__name__)
        return None


async def ask_server(
    base_url: str, model: str, *, transport: httpx.AsyncBaseTransport | None = None
) -> ContextLimit | None:
    """Ask an Ollama or llama.cpp server behind ``base_url`` (see the module docstring)."""
    root = server_root(base_url)
    async with httpx.AsyncClient(timeout=_TIMEOUT, trust_env=False, transport=transport) as client:
        ps, show, props = await asyncio.gather(
            _json(client, "GET", f"{root}/api/ps"),
            _json(client, "POST", f"{root}/api/show", json={"model": model}),
            _json(client, "GET", f"{root}/props"),
        )
        found = ollama_limit(model, ps, show) or llamacpp_limit(props)
        if found is None and props is None:
            found = llamacpp_limit(await _json(client, "GET", f"{root}/v1/props"))
        return found


class ContextLimits:
    """The context windows found so far, per (base URL, model); see the module docstring."""

    def __init__(self, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport = transport
        self._known: dict[tuple[str, str], ContextLimit] = {}
        self._unknown: dict[tuple[str, str], float] = {}
        self._asking: dict[tuple[str, str], asyncio.Task[ContextLimit | None]] = {}

    def cached(self, base_url: str, model: str) -> ContextLimit | None:
        return self._known.get((base_url, model))

    async def limit(self, base_url: str, model: str) -> ContextLimit | None:
        """The model's window, or ``None`` when it cannot be known (never raises)."""
        key = (base_url, model)
        known = self._known.get(key)
        asked = self._unknown.get(key)
        recent = asked is not None and time.monotonic() - asked < RETRY_UNKNOWN_AFTER
        if known is not None and (known.settled or recent):
            return known
        if known is None and recent:
            return None
        task = self._asking.get(key)
        if task is None:  # one question at a time per model, however many callers
            task = asyncio.ensure_future(self._find(base_url, model))
            self._asking[key] = task
            task.add_done_callback(lambda _t: self._asking.pop(key, None))
        found = await asyncio.shield(task)
        if found is None or not found.settled:
            self._unknown[key] = time.monotonic()
        if found is not None:
            self._known[key] = found
        return found or known

    async def _find(self, base_url: str, model: str) -> ContextLimit | None:
        try:
            if base_url and model and asks_server(base_url):
                found = await ask_server(base_url, model, transport=self._transport)
                if found is not None:
                    return found
        except Exception:  # a bug here must not break the meter, nor go unseen
            log.exception("asking %s for the context window of %s failed", base_url, model)
        return published_limit(model)


def context_used(messages: Iterable[Message]) -> int | None:
    """The newest answer's input + output tokens as reported (``None``: not reported).

    ``messages`` is the current branch, oldest first; only the newest answer counts (its
    input already holds everything before it). An answer without reported input tokens gives
    ``None``: an older answer's count would understate what is in the context now.
    """
    newest = None
    for message in messages:
        if isinstance(message, AssistantMessage):
            newest = message
    if newest is None or newest.usage is None or newest.usage.input_tokens is None:
        return None
    return newest.usage.input_tokens + (newest.usage.output_tokens or 0)
