"""What both HTTP providers share: the httpx boundary, error mapping and retry hints.

This module owns the one place where httpx exceptions and HTTP error responses become the
typed :mod:`app.errors` tree (``raise ProviderTimeoutError(...) from err``), the two pure retry
helpers :func:`should_retry` and :func:`parse_retry_after`, and :class:`HTTPModel`, the base of
:class:`~app.providers.openai.OpenAICompatibleModel` and
:class:`~app.providers.anthropic.AnthropicModel` (one ``httpx.AsyncClient`` per instance,
``aclose()``, a ``repr`` without the key).

Providers never retry by themselves: they raise, and the runtime decides from
``err.retryable`` and ``err.retry_after``. An API key never appears in an error message, a log
line or a ``repr``; every text that comes from the provider passes through :func:`redact`.
"""

from __future__ import annotations

import asyncio
import email.utils
import html
import json
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final, Protocol

import httpx
from httpx_sse import EventSource, ServerSentEvent

from ..errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from ..model import ModelEvent, ModelRequest

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "HTTPModel",
    "StreamParser",
    "error_from_response",
    "events_from_response",
    "json_bytes",
    "parse_retry_after",
    "redact",
    "should_retry",
]

logger = logging.getLogger("app.providers")

#: Seconds without a byte before a request fails (reasoning models can think for a while).
DEFAULT_TIMEOUT: Final = 120.0
DEFAULT_CONNECT_TIMEOUT: Final = 15.0
#: Statuses worth a second try: timeout, conflict, rate limit, overloaded (plus every 5xx).
RETRYABLE_STATUSES: Final = frozenset({408, 409, 429, 529})
#: At most this much of an error body is read (a proxy can answer with megabytes of HTML).
MAX_ERROR_BODY: Final = 64 * 1024
#: A provider's own message is cut to this length in our error messages.
MAX_PROVIDER_MESSAGE: Final = 300
#: Any piece of an API key this long is redacted wherever it appears. Eight characters of a
#: random key are ~48 bits of it (too much to show) while ordinary words, status codes and
#: model names practically never share eight consecutive characters with a random key;
#: shorter pieces (a provider's "…wxyz" hint) are harmless and would redact innocent text.
MIN_KEY_FRAGMENT: Final = 8
_REDACTED: Final = "[redacted]"


# --- pure helpers --------------------------------------------------------------------------


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive lookup that works for plain dicts as well as ``httpx.Headers``."""
    value = headers.get(name)
    if value is not None:
        return value
    for key, item in headers.items():
        if key.lower() == name:
            return item
    return None


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether a request that failed with HTTP ``status`` is worth sending again.

    The provider's ``x-should-retry: true|false`` header wins; otherwise 408, 409, 429, 529
    and every 5xx are retryable.
    """
    hint = _header(headers, "x-should-retry")
    if hint is not None:
        if hint.strip().lower() == "true":
            return True
        if hint.strip().lower() == "false":
            return False
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the provider asked us to wait, or ``None`` if it did not say (or said nonsense).

    Reads ``retry-after-ms`` (milliseconds) first, then ``retry-after`` as seconds or as an HTTP
    date. ``now`` (a Unix time) is for tests; a date in the past means "now" (``0.0``).
    """
    raw_ms = _header(headers, "retry-after-ms")
    if raw_ms is not None:
        try:
            millis = float(raw_ms)
        except ValueError:
            millis = float("nan")
        if millis == millis and millis >= 0 and millis != float("inf"):
            return millis / 1000.0
    raw = _header(headers, "retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        if seconds == seconds and 0 <= seconds != float("inf"):
            return seconds
        return None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _fold(text: str) -> str:
    """``text`` lower-cased so that indexes stay aligned with it (a few characters, like
    "İ", lower-case to two; those are kept as they are)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def _secret_spans(folded: str, secret: str) -> list[tuple[int, int]]:
    """Where ``secret``, or any piece of it of :data:`MIN_KEY_FRAGMENT` characters or more,
    occurs in ``folded`` (already case-folded), as ``(start, end)`` index pairs.

    Every such piece is a run of overlapping fragments of exactly that length, so it suffices
    to look up each window of the text in the set of the secret's windows: O(len(text)) set
    look-ups, memory O(len(secret)). A secret shorter than that is matched only whole.
    """
    secret = _fold(secret)
    width = min(len(secret), MIN_KEY_FRAGMENT)
    windows = {secret[i:i + width] for i in range(len(secret) - width + 1)}
    spans: list[tuple[int, int]] = []
    for start in range(len(folded) - width + 1):
        if folded[start:start + width] in windows:
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], start + width)
            else:
                spans.append((start, start + width))
    return spans


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret replaced by ``[redacted]`` (and any ``sk-…`` looking key).

    Case does not matter (a provider may echo the key upper-cased), and so is any piece of a
    secret of :data:`MIN_KEY_FRAGMENT` characters or more (a provider may echo its first or
    last characters). Secrets shorter than 4 characters are not redacted (they would match
    ordinary words). Run this *before* shortening a text: a key cut at the boundary would
    otherwise no longer match and its first characters would stay.
    """
    usable = [s for s in secrets if s and len(s) >= 4]
    if usable:
        folded = _fold(text)
        spans = sorted(span for secret in usable for span in _secret_spans(folded, secret))
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        for start, end in reversed(merged):
            text = text[:start] + _REDACTED + text[end:]
    # Providers sometimes echo the key they refused ("Incorrect API key provided: sk-ab***yz").
    return re.sub(r"\b(sk|key)-[A-Za-z0-9_*\-]{6,}", _REDACTED, text)


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"<h1[^>]*>(.*?)</h1>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")


def _looks_like_html(body: str, content_type: str) -> bool:
    start = body.lstrip()[:100].lower()
    return "html" in content_type.lower() or start.startswith(("<!doctype html", "<html"))


def _html_summary(body: str, secrets: Iterable[str | None] = ()) -> str:
    """A one-line readable summary of an HTML error page (its title or first heading),
    redacted before it is shortened."""
    for pattern in (_TITLE, _HEADING):
        match = pattern.search(body)
        if match:
            text = html.unescape(_TAGS.sub("", match.group(1)))
            text = redact(" ".join(text.split()), secrets)
            if text:
                return text[:120]
    return ""


def _provider_error_fields(body: str) -> tuple[str, str | None, str | None]:
    """(message, type, code) out of an OpenAI-, Anthropic- or Ollama-style JSON error body."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return " ".join(body.split()), None, None
    return error_fields_from_json(data)


def error_fields_from_json(data: Any) -> tuple[str, str | None, str | None]:
    """(message, type, code) from a parsed error object (``{"error": {...}}`` or its inside)."""
    if isinstance(data, Mapping) and "error" in data:
        data = data["error"]
    if isinstance(data, str):
        return data, None, None
    if not isinstance(data, Mapping):
        return "", None, None
    message = data.get("message")
    kind = data.get("type")
    code = data.get("code")
    return (
        str(message) if message is not None else "",
        str(kind) if kind is not None else None,
        str(code) if code is not None else None,
    )


_CONTEXT_PATTERNS: Final = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context window",
    "context length",
    "too many tokens",
)


def _is_context_overflow(message: str, kind: str | None, code: str | None) -> bool:
    haystack = " ".join(part for part in (message, kind or "", code or "") if part).lower()
    return any(pattern in haystack for pattern in _CONTEXT_PATTERNS)


def _clip(text: str) -> str:
    """``text`` on one line, at most :data:`MAX_PROVIDER_MESSAGE` long (redact it first)."""
    text = " ".join(text.split()).rstrip(" .")
    if len(text) > MAX_PROVIDER_MESSAGE:
        text = text[: MAX_PROVIDER_MESSAGE - 1] + "…"
    return text


def error_from_response(
    status: int,
    headers: Mapping[str, str],
    body: str,
    *,
    provider: str,
    model: str,
    url: str,
    secrets: Iterable[str | None] = (),
) -> ProviderError:
    """The typed error for an HTTP error response (``status`` ≥ 400). Pure: no I/O."""
    content_type = _header(headers, "content-type") or ""
    retryable = should_retry(status, headers)
    retry_after = parse_retry_after(headers)
    message, kind, code = "", None, None
    if _looks_like_html(body, content_type):
        title = _html_summary(body, secrets)
        detail = (
            f"an HTML page{f' ({title!r})' if title else ''} instead of an API response; "
            "the base URL may point at a website or a proxy rather than the API"
        )
    else:
        message, kind, code = _provider_error_fields(body)
        # Redacted before it is clipped: a key cut at the boundary would no longer match.
        detail = _clip(redact(message, secrets)) if message else "no details"
    where = f"{provider} (HTTP {status})"
    common: dict[str, Any] = {"status_code": status, "retry_after": retry_after}

    if status in (401, 403):
        return ProviderAuthError(
            f"{where} refused the request: {detail}. Check the API key"
            f"{' and that it may use model ' + repr(model) if status == 403 else ''} in Settings.",
            retryable=False,
            **common,
        )
    if status == 404:
        return ProviderNotFoundError(
            f"{where} has no model {model!r} at {url}: {detail}. Check the model name and the "
            "base URL (OpenAI-compatible servers usually end in /v1).",
            retryable=False,
            **common,
        )
    if status in (400, 413, 422):
        if _is_context_overflow(message, kind, code):
            return ProviderContextLengthError(
                f"{where}: the conversation no longer fits the context window of model {model!r} "
                f"({detail}). Start a new conversation or shorten this one.",
                retryable=False,
                **common,
            )
        return ProviderBadRequestError(
            f"{where} refused the request as invalid: {detail}. This is likely a bug or a "
            "setting the model does not support; check the model settings.",
            retryable=False,
            **common,
        )
    if status == 429:
        wait = f" It asked to wait {retry_after:g} s." if retry_after is not None else ""
        return ProviderRateLimitError(
            f"{where}: too many requests or tokens ({detail}).{wait} Wait a moment and try "
            "again, or check your plan's rate limits.",
            retryable=retryable,
            **common,
        )
    if status == 408:
        return ProviderTimeoutError(
            f"{where}: the server timed out handling the request ({detail}). Try again.",
            retryable=retryable,
            **common,
        )
    if status == 529 or 500 <= status <= 599:
        what = "is overloaded" if status == 529 or kind == "overloaded_error" else "failed"
        return ProviderServerError(
            f"{where} {what}: {detail}. This is on the provider's side; try again shortly.",
            retryable=retryable,
            **common,
        )
    return ProviderError(
        f"{where} returned an unexpected error: {detail}.",
        retryable=retryable,
        **common,
    )


def error_from_event(
    data: Any, *, provider: str, model: str, secrets: Iterable[str | None] = ()
) -> ProviderError:
    """The typed error for an error the provider sent inside a 200 stream, by its type."""
    message, kind, code = error_fields_from_json(data)
    detail = _clip(redact(message, secrets)) if message else "no details"
    label = redact(kind or code or "error", secrets)
    where = f"{provider} reported {label} during the answer"
    if kind == "overloaded_error" or code == "overloaded_error":
        return ProviderServerError(
            f"{where}: {detail}. The provider is overloaded; try again shortly.",
            status_code=529,
        )
    if kind in ("rate_limit_error", "rate_limit_exceeded") or code == "rate_limit_exceeded":
        return ProviderRateLimitError(
            f"{where}: {detail}. Wait a moment and try again.", status_code=429
        )
    if kind in ("authentication_error", "permission_error"):
        return ProviderAuthError(f"{where}: {detail}. Check the API key in Settings.")
    if _is_context_overflow(message, kind, code):
        return ProviderContextLengthError(
            f"{where}: the conversation no longer fits the context window of model {model!r} "
            f"({detail}). Start a new conversation or shorten this one."
        )
    if kind in ("invalid_request_error", "not_found_error", "request_too_large"):
        return ProviderBadRequestError(f"{where}: {detail}. Check the model settings.")
    if kind == "timeout_error":
        return ProviderTimeoutError(f"{where}: {detail}. Try again.")
    return ProviderServerError(f"{where}: {detail}. Try again shortly.")


def json_bytes(body: Any) -> bytes:
    """``body`` as compact UTF-8 JSON, the form httpx sends, for any text the history holds.

    A lone surrogate (from a broken paste; the store keeps it exactly) cannot be encoded as
    UTF-8, so httpx would raise ``UnicodeEncodeError`` on every try and the conversation could
    never be answered or resumed. The copy sent to the provider pairs what can be paired and
    turns each lone surrogate into U+FFFD; the saved history is not changed.
    """
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        repaired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return repaired.encode("utf-8")


# --- stream parsing ------------------------------------------------------------------------


class StreamParser(Protocol):
    """Turns one provider's SSE events into model events (pure; no I/O)."""

    @property
    def done(self) -> bool:
        """True once the provider's end-of-stream marker arrived."""
        ...

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]: ...

    def finish(self) -> list[ModelEvent]:
        """The closing events; raises ``ProviderStreamError`` if the stream was incomplete."""
        ...


async def events_from_response(
    response: httpx.Response, parser: StreamParser
) -> AsyncGenerator[ModelEvent, None]:
    """Model events parsed from an SSE ``response`` (live, or built from a recorded file).

    Ends at the provider's end marker; a body that ends before it raises
    ``ProviderStreamError`` (via ``parser.finish()``).
    """
    source = EventSource(response).aiter_sse()
    try:
        async for sse in source:
            for event in parser.feed(sse):
                yield event
            if parser.done:
                break
    finally:
        await source.aclose()
    for event in parser.finish():
        yield event


# --- the model base ------------------------------------------------------------------------


def _timeout(value: float | httpx.Timeout) -> httpx.Timeout:
    if isinstance(value, httpx.Timeout):
        return value
    return httpx.Timeout(value, connect=min(value, DEFAULT_CONNECT_TIMEOUT))


class Secret:
    """A string that never shows itself in ``repr``/``str`` (so dumps of objects stay clean)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("an API key is not pickled")


class HTTPModel:
    """Base of the HTTP providers: one ``httpx.AsyncClient``, the error boundary, listing.

    The client is created on first use in the running event loop. If the instance is later
    used from another loop (e.g. a blocking wrapper that runs its own loop), a fresh client is
    made there, because pooled connections belong to the loop that opened them.
    """

    provider: str = "provider"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        base_url = base_url.strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base URL {base_url!r} must start with http:// or https:// "
                "(for example http://localhost:11434/v1)"
            )
        if not model:
            raise ValueError("choose a model name (it must not be empty)")
        self.base_url = base_url
        self.model = model
        self.name = model
        self.__api_key = Secret(api_key) if api_key else None
        self._timeout = _timeout(timeout)
        self._extra_headers = dict(headers or {})
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        key = "set" if self.__api_key else "none"
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r}, key={key})"

    @property
    def has_api_key(self) -> bool:
        return self.__api_key is not None

    def _api_key(self) -> str | None:
        return self.__api_key.reveal() if self.__api_key is not None else None

    def _auth_headers(self) -> dict[str, str]:
        """Headers that carry the key (overridden per provider)."""
        return {}

    def _secrets(self) -> tuple[str | None, ...]:
        return (self._api_key(),)

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(
                timeout=self._timeout,
                headers=self._extra_headers,
                follow_redirects=False,
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client (idempotent). The model can still be used afterwards."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> HTTPModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the httpx boundary --

    def _transport_error(self, err: httpx.HTTPError, url: str) -> ProviderError:
        """The typed error for an httpx exception (no status: the exchange itself failed)."""
        where = f"{self.provider} at {url}"
        if isinstance(err, httpx.ConnectTimeout):
            return ProviderTimeoutError(
                f"Could not connect to {where} in time. Check the base URL and your network."
            )
        if isinstance(err, httpx.TimeoutException):
            return ProviderTimeoutError(
                f"{where} stopped sending data for longer than the timeout. "
                "Try again; if it keeps happening, raise the timeout in Settings."
            )
        if isinstance(err, httpx.ConnectError):
            return ProviderConnectionError(
                f"Could not connect to {where}. Check that the server is running, the base URL, "
                "and your network."
            )
        if isinstance(err, httpx.UnsupportedProtocol | httpx.InvalidURL):
            return ProviderConnectionError(
                f"The base URL for {self.provider} is not usable ({url}). Check it in Settings.",
                retryable=False,
            )
        if isinstance(err, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            return ProviderConnectionError(
                f"{where} closed the connection before the answer was complete. "
                "Check your network and try again."
            )
        return ProviderConnectionError(
            f"The request to {where} failed ({type(err).__name__}). Try again."
        )

    async def _read_error_body(self, response: httpx.Response) -> str:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= MAX_ERROR_BODY:
                break
        return b"".join(chunks)[:MAX_ERROR_BODY].decode("utf-8", errors="replace")

    def _error_for(self, response: httpx.Response, body: str) -> ProviderError:
        return error_from_response(
            response.status_code,
            response.headers,
            body,
            provider=self.provider,
            model=self.model,
            url=str(response.request.url),
            secrets=self._secrets(),
        )

    @asynccontextmanager
    async def _exchange(
        self,
        method: str,
        url: str,
        *,
        json_body: Any = None,
        sse: bool = False,
        params: Mapping[str, str] | None = None,
    ) -> AsyncIterator[httpx.Response]:
        """Send one request; yields a successful response, raising typed errors otherwise.

        Every httpx exception raised while the body is read inside the ``async with`` is
        converted here too, so a connection reset mid-stream becomes ``ProviderConnectionError``.
        """
        headers = {"accept": "text/event-stream" if sse else "application/json"}
        # The key goes on each request, not into the long-lived client's default headers.
        headers.update(self._auth_headers())
        content = None
        if json_body is not None:
            headers["content-type"] = "application/json"
            content = json_bytes(json_body)
        client = self._http()
        try:
            async with client.stream(
                method, url, content=content, headers=headers, params=params
            ) as response:
                logger.debug("%s %s -> HTTP %s", method, url, response.status_code)
                if response.status_code >= 400:
                    raise self._error_for(response, await self._read_error_body(response))
                if response.status_code != 200:
                    raise ProviderError(
                        f"{self.provider} at {url} answered HTTP {response.status_code} instead "
                        "of 200. Check the base URL.",
                        status_code=response.status_code,
                    )
                if sse:
                    await self._check_event_stream(response, url)
                yield response
        except httpx.HTTPError as err:
            raise self._transport_error(err, url) from err

    async def _check_event_stream(self, response: httpx.Response, url: str) -> None:
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" in content_type:
            return
        if "json" in content_type:
            # Some gateways answer errors with HTTP 200 and a JSON body.
            try:
                data = json.loads(await self._read_error_body(response))
            except (json.JSONDecodeError, RecursionError):
                data = None
            if isinstance(data, Mapping) and data.get("error") is not None:
                raise error_from_event(
                    data, provider=self.provider, model=self.model, secrets=self._secrets()
                )
        what = "an HTML page" if "html" in content_type else f"{content_type or 'no type'!r}"
        raise ProviderStreamError(
            f"{self.provider} at {url} answered with {what} instead of a stream of events. "
            "Check the base URL (OpenAI-compatible servers usually end in /v1) and that the "
            "server supports streaming.",
            status_code=response.status_code,
            retryable=False,
        )

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        """One model step as events (see :mod:`app.model`); implemented per provider."""
        raise NotImplementedError

    async def _stream_events(
        self, url: str, body: Mapping[str, Any], parser: StreamParser
    ) -> AsyncGenerator[ModelEvent, None]:
        async with self._exchange("POST", url, json_body=body, sse=True) as response:
            async for event in events_from_response(response, parser):
                yield event

    async def _get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        async with self._exchange("GET", url, params=params) as response:
            raw = await response.aread()
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ProviderError(
                f"{self.provider} at {url} did not answer with JSON. Check the base URL.",
                status_code=200,
            ) from err

    async def check_connection(self) -> None:
        """Raise the typed error if the provider cannot be reached or refuses the key."""
        await self.list_models()

    async def list_models(self) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError


def model_ids(data: Any) -> list[str]:
    """The ids in a ``{"data": [{"id": …}, …]}`` model list (OpenAI and Anthropic agree)."""
    items = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise ProviderStreamError(
            "The model list had an unexpected shape (no 'data' list). Check the base URL.",
            retryable=False,
        )
    ids: list[str] = []
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("id"), str):
            ids.append(item["id"])
    return ids
