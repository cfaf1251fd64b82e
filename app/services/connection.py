"""Settings → "Test connection": a few tiny requests, and in words what worked.

:func:`test_connection` tries, in order and each within a short time limit: the model list
(reached the server? key accepted? is the model offered?), one streamed request for a
one-word answer (streaming works?), and one request offering a trivial tool (tools
supported?). It stops at the first step that makes the rest pointless (nothing answered, the
key was refused, no such model, streaming failed).

What happened is gathered as :class:`Probes` (one :class:`Outcome` per request) and the words
are decided by the pure :func:`report_from`: one :class:`Check` per row — Server, API key,
Model, Streaming, Tools — with ``ok`` ``True`` (✓), ``False`` (✗) or ``None`` (–, not tried or
not known because an earlier step failed). The key never appears in the words: the providers
redact what servers send, and every word is redacted once more here.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Final

import httpx

from ..errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
)
from ..messages import UserMessage
from ..model import ModelRequest, StepEnd, ToolCallComplete, ToolSpec
from ..providers import AnthropicModel, HTTPModel
from ..providers.errors import redact
from ..secrets import DEFAULT_KEY_ENV, get_api_key
from ..settings import Settings
from .models import provider_model

__all__ = [
    "Check",
    "ConnectionReport",
    "Failure",
    "Outcome",
    "Probes",
    "outcome_of",
    "report_from",
    "test_connection",
]

log = logging.getLogger(__name__)

#: Seconds each test request may take (connecting: at most :data:`CONNECT_SECONDS`).
PROBE_SECONDS: Final = 20.0
CONNECT_SECONDS: Final = 5.0
#: At most this many of the server's model names are quoted.
MAX_NAMES: Final = 8

STREAM_PROMPT: Final = "This is a connection test. Reply with the single word OK."
TOOL_PROMPT: Final = "This is a connection test. Call the tool named ping."
PING: Final = ToolSpec(
    "ping",
    "Answers pong. Used only to test that tools work.",
    {"type": "object", "properties": {}},
)

_MARKS: Final = {True: "✓", False: "✗", None: "–"}


@dataclass(frozen=True, slots=True)
class Check:
    """One row of the report: ``ok`` is ``None`` when it was not tried or cannot be told."""

    name: str
    ok: bool | None
    words: str

    @property
    def mark(self) -> str:
        return _MARKS[self.ok]

    @property
    def line(self) -> str:
        return f"{self.mark} {self.name}: {self.words}"


@dataclass(frozen=True, slots=True)
class ConnectionReport:
    """What "Test connection" found, one :class:`Check` per step."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(check.ok is True for check in self.checks)

    def text(self) -> str:
        """The checks as plain text lines (✓ worked, ✗ failed, – not tried)."""
        return "\n".join(check.line for check in self.checks)


class Failure(enum.Enum):
    """How one test request failed."""

    BAD_SETTING = "bad setting"  # the base URL cannot be used at all
    UNREACHABLE = "unreachable"  # nothing answered at the address
    TIMEOUT = "timeout"  # connected, but no answer within the time limit
    KEY_REFUSED = "key refused"  # HTTP 401/403 or an authentication error
    NOT_FOUND = "not found"  # HTTP 404
    REFUSED = "refused"  # HTTP 400/413/422: the request was not accepted
    BUSY = "busy"  # HTTP 429/5xx
    BROKEN = "broken"  # anything else: a cut or malformed answer, an unexpected error


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one test request found: ``failure`` is ``None`` when it worked.

    ``models`` is the model list (listing only); ``called_tool`` whether the model called the
    offered tool and ``finished`` whether its answer ended before the time limit (tools only).
    """

    failure: Failure | None = None
    message: str = ""
    models: tuple[str, ...] = ()
    called_tool: bool = False
    finished: bool = True

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True, slots=True)
class Probes:
    """Everything :func:`report_from` decides from; ``None``: that request was not sent."""

    base_url: str
    model: str
    has_key: bool
    listing: Outcome
    stream: Outcome | None = None
    tools: Outcome | None = None


# --- the words (pure) ----------------------------------------------------------------------

_FATAL_LISTING: Final = (Failure.BAD_SETTING, Failure.UNREACHABLE, Failure.TIMEOUT)


def _failed(outcome: Outcome | None, *kinds: Failure) -> bool:
    return outcome is not None and outcome.failure in kinds


def _offers(models: tuple[str, ...]) -> str:
    if not models:
        return ""
    names = ", ".join(models[:MAX_NAMES]) + ("…" if len(models) > MAX_NAMES else "")
    return f" It offers: {names}."


def _not_tried(probes: Probes) -> str:
    """Why the later steps were not tried (the first step that stopped the test)."""
    listing, stream = probes.listing, probes.stream
    if _failed(listing, Failure.BAD_SETTING):
        return "Not tried: the base URL is not usable."
    if _failed(listing, *_FATAL_LISTING):
        return "Not tried: the server was not reached."
    if _failed(listing, Failure.KEY_REFUSED) or _failed(stream, Failure.KEY_REFUSED):
        return "Not tried: the key was refused."
    if not probes.model:
        return "Not tried: no model is chosen."
    if _failed(stream, Failure.NOT_FOUND) and probes.model not in listing.models:
        return "Not tried: the model was not found."
    return "Not tried: streaming failed."


def _server(probes: Probes) -> Check:
    listing = probes.listing
    if _failed(listing, Failure.UNREACHABLE):
        return Check(
            "Server",
            False,
            f"Could not reach {probes.base_url}: nothing answered there. Check that the "
            "server is running, the base URL and your network.",
        )
    if _failed(listing, Failure.BAD_SETTING, Failure.TIMEOUT):
        return Check("Server", False, listing.message)
    return Check("Server", True, f"Reached {probes.base_url}.")


def _key(probes: Probes) -> Check:
    listing, stream = probes.listing, probes.stream
    if _failed(listing, *_FATAL_LISTING):
        return Check("API key", None, _not_tried(probes))
    for outcome in (listing, stream):
        if _failed(outcome, Failure.KEY_REFUSED):
            assert outcome is not None
            if probes.has_key:
                return Check("API key", False, f"The server refused the key. {outcome.message}")
            return Check(
                "API key",
                False,
                f"The server wants a key and no key is set: enter it above. {outcome.message}",
            )
    if listing.ok or (stream is not None and stream.ok):
        if probes.has_key:
            return Check("API key", True, "The server accepted the key.")
        return Check("API key", True, "The server answered without a key.")
    return Check("API key", None, "Could not tell: no request got far enough to show it.")


def _model(probes: Probes) -> Check:
    listing, stream, model = probes.listing, probes.stream, probes.model
    if _failed(listing, *_FATAL_LISTING, Failure.KEY_REFUSED):
        return Check("Model", None, _not_tried(probes))
    if not model:
        more = _offers(listing.models) or " Enter the model's name."
        return Check("Model", False, f"No model is chosen.{more}")
    if listing.ok and model in listing.models:
        return Check("Model", True, f"The server offers model {model!r}.")
    if _failed(stream, Failure.NOT_FOUND):
        return Check(
            "Model",
            False,
            f"The server has no model {model!r}.{_offers(listing.models)} Check the name.",
        )
    if listing.ok:
        if stream is not None and stream.ok:
            return Check(
                "Model", True, f"The server answered to {model!r}, though it does not list it."
            )
        return Check(
            "Model",
            False,
            f"The server does not list model {model!r}.{_offers(listing.models)} Check the name.",
        )
    if stream is not None and stream.ok:
        return Check("Model", True, f"{model!r} answered (the server does not list its models).")
    return Check(
        "Model",
        None,
        "Could not tell: the server does not list its models and the test request failed.",
    )


def _streaming(probes: Probes) -> Check:
    stream = probes.stream
    if stream is None:
        return Check("Streaming", None, _not_tried(probes))
    if stream.ok:
        return Check("Streaming", True, "An answer streamed back.")
    if _failed(stream, Failure.KEY_REFUSED) or (
        _failed(stream, Failure.NOT_FOUND) and probes.model not in probes.listing.models
    ):
        return Check("Streaming", None, _not_tried(probes))
    return Check("Streaming", False, stream.message)


def _tools(probes: Probes) -> Check:
    tools = probes.tools
    if tools is None:
        return Check("Tools", None, _not_tried(probes))
    if tools.ok:
        if tools.called_tool:
            what = ", and the model called it."
        elif tools.finished:
            what = " (the model answered without calling it)."
        else:
            what = " (the model was still answering when the test stopped waiting)."
        return Check("Tools", True, f"The server accepted a request that offers a tool{what}")
    if _failed(tools, Failure.REFUSED):
        return Check(
            "Tools",
            False,
            f"The server refused a request that offers a tool: {tools.message} This model or "
            "server may not support tools: choose another model, or turn tool support on in "
            "the server (llama.cpp: --jinja).",
        )
    return Check("Tools", False, f"The request that offers a tool failed: {tools.message}")


def report_from(probes: Probes) -> ConnectionReport:
    """The report's words for what the test requests found. Pure."""
    return ConnectionReport(
        (_server(probes), _key(probes), _model(probes), _streaming(probes), _tools(probes))
    )


def outcome_of(err: BaseException, *, seconds: float, secrets: tuple[str | None, ...]) -> Outcome:
    """The :class:`Outcome` of a test request that raised ``err``. Pure."""
    message = redact(str(err), secrets)
    cause = err.__cause__
    if isinstance(err, TimeoutError):
        return Outcome(Failure.TIMEOUT, f"No answer within {seconds:g} s.")
    if isinstance(err, ProviderTimeoutError | ProviderConnectionError) and isinstance(
        cause, httpx.ConnectError | httpx.ConnectTimeout
    ):
        return Outcome(Failure.UNREACHABLE, message)
    if isinstance(err, ProviderTimeoutError):
        return Outcome(Failure.TIMEOUT, f"No answer within {seconds:g} s.")
    if isinstance(err, ProviderConnectionError) and not err.retryable:
        return Outcome(Failure.BAD_SETTING, message)
    if isinstance(err, ProviderAuthError):
        return Outcome(Failure.KEY_REFUSED, message)
    if isinstance(err, ProviderNotFoundError):
        return Outcome(Failure.NOT_FOUND, message)
    if isinstance(err, ProviderBadRequestError):
        return Outcome(Failure.REFUSED, message)
    if isinstance(err, ProviderRateLimitError | ProviderServerError):
        return Outcome(Failure.BUSY, message)
    if isinstance(err, ProviderError):
        return Outcome(Failure.BROKEN, message)
    return Outcome(
        Failure.BROKEN,
        f"The test failed unexpectedly ({type(err).__name__}); the details are in the log.",
    )


# --- the requests --------------------------------------------------------------------------


def _build(settings: Settings, key: str | None, seconds: float) -> HTTPModel:
    """The provider model for the test (raises ``ValueError`` for an unusable base URL)."""
    limits = httpx.Timeout(seconds, connect=min(seconds, CONNECT_SECONDS))
    model = settings.model.strip() or "default"  # listing does not need the name
    return provider_model(settings, key, timeout=limits, model=model)


async def _list(model: HTTPModel, seconds: float) -> Outcome:
    async with asyncio.timeout(seconds):
        return Outcome(models=tuple(await model.list_models()))


async def _stream(model: HTTPModel, seconds: float, *, anthropic: bool) -> Outcome:
    """One streamed request; the first event shows streaming works (the rest is not read)."""
    # One output token where the API needs a limit (Anthropic); none for OpenAI-compatible
    # servers, as the app sends none (OpenAI's reasoning models refuse ``max_tokens``).
    request = ModelRequest([UserMessage(STREAM_PROMPT)], max_output_tokens=1 if anthropic else None)
    async with asyncio.timeout(seconds):
        async with contextlib.aclosing(model.stream(request)) as events:
            async for _event in events:
                break
            else:
                return Outcome(Failure.BROKEN, "The server's answer had nothing in it.")
    return Outcome()


async def _tool(model: HTTPModel, seconds: float, *, anthropic: bool) -> Outcome:
    """One request offering :data:`PING`; a started answer shows the server accepted it."""
    request = ModelRequest(
        [UserMessage(TOOL_PROMPT)], tools=(PING,), max_output_tokens=64 if anthropic else None
    )
    called = started = False
    try:
        async with asyncio.timeout(seconds):
            async with contextlib.aclosing(model.stream(request)) as events:
                async for event in events:
                    started = True
                    called = called or isinstance(event, ToolCallComplete)
                    if isinstance(event, StepEnd):
                        break
    except TimeoutError:
        if not started:
            raise
        return Outcome(called_tool=called, finished=False)
    return Outcome(called_tool=called)


async def _attempt(
    probe: Coroutine[Any, Any, Outcome], seconds: float, secrets: tuple[str | None, ...]
) -> Outcome:
    """Run one test request; what it raised becomes its :class:`Outcome`."""
    try:
        return await probe
    except asyncio.CancelledError:
        raise
    except Exception as err:
        if not isinstance(err, ProviderError | TimeoutError):
            log.exception("connection test: a test request failed unexpectedly")
        return outcome_of(err, seconds=seconds, secrets=secrets)


async def test_connection(
    settings: Settings, api_key: str | None = None, *, seconds: float = PROBE_SECONDS
) -> ConnectionReport:
    """Test ``settings`` (as typed, not yet saved) with ``api_key``, else the stored key.

    Never raises for what the server does (that is in the words); cancelling stops it.
    """
    if settings.provider_kind == "simulator":
        return ConnectionReport(
            (
                Check(
                    "Simulator",
                    True,
                    "Nothing to test: the offline simulator runs inside Continuum and needs "
                    "no connection.",
                ),
            )
        )
    key = api_key or get_api_key(settings.key_service(), settings.api_key_env or DEFAULT_KEY_ENV)
    secrets = (key,)
    base_url = settings.base_url.strip().rstrip("/")
    name = settings.model.strip()
    try:
        model = _build(settings, key, seconds)
    except ValueError as err:
        words = _sentence(redact(str(err), secrets))
        return _report(Probes(base_url, name, bool(key), Outcome(Failure.BAD_SETTING, words)), key)
    anthropic = isinstance(model, AnthropicModel)
    try:
        listing = await _attempt(_list(model, seconds), seconds, secrets)
        probes = Probes(base_url, name, bool(key), listing)
        if _failed(listing, *_FATAL_LISTING, Failure.KEY_REFUSED) or not name:
            return _report(probes, key)
        stream = await _attempt(_stream(model, seconds, anthropic=anthropic), seconds, secrets)
        probes = Probes(base_url, name, bool(key), listing, stream)
        if not stream.ok:
            return _report(probes, key)
        tools = await _attempt(_tool(model, seconds, anthropic=anthropic), seconds, secrets)
        return _report(Probes(base_url, name, bool(key), listing, stream, tools), key)
    finally:
        await model.aclose()


def _sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter and a full stop."""
    text = text.strip()
    return f"{text[:1].upper()}{text[1:]}{'' if text.endswith('.') else '.'}"


def _report(probes: Probes, key: str | None) -> ConnectionReport:
    """:func:`report_from`, with the key redacted from every word once more."""
    report = report_from(probes)
    return ConnectionReport(
        tuple(Check(check.name, check.ok, redact(check.words, (key,))) for check in report.checks)
    )
