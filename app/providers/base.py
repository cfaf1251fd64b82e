"""What both HTTP providers share: the httpx boundary and the model base.

This module owns the one place where httpx exceptions become the typed :mod:`app.errors` tree
(``raise ProviderTimeoutError(...) from err``) and HTTP error responses are read and handed to
:func:`~app.providers.errors.error_from_response` (the pure mapping lives in
:mod:`app.providers.errors`, the SSE plumbing in :mod:`app.providers.sse`), what a 200 answer
to a streaming request turned out to be (an event stream however labelled, an error or a whole
JSON answer, see :mod:`app.providers.whole`, or something to refuse), and
:class:`HTTPModel`, the base of :class:`~app.providers.openai.OpenAICompatibleModel` and
:class:`~app.providers.anthropic.AnthropicModel` (one ``httpx.AsyncClient`` per instance,
``aclose()``, a ``repr`` without the key).

Providers never retry by themselves: they raise, and the runtime decides from
``err.retryable`` and ``err.retry_after``. An API key never appears in an error message, a log
line or a ``repr``; every text that comes from the provider passes through
:func:`~app.providers.errors.redact`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import httpx
from httpx_sse import ServerSentEvent

from ..errors import (
    ProviderAuthError,
    ProviderBadRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from ..model import ModelEvent, ModelRequest
from .coalesce import Delivery
from .errors import base_url_hint, error_from_event, error_from_response
from .sse import StreamParser, event_batches, events_from_lines, looks_like_sse, sse_lines

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "HTTPModel",
    "json_bytes",
    "model_ids",
]

logger = logging.getLogger("app.providers")

#: Seconds without a byte before a request fails (reasoning models can think for a while).
DEFAULT_TIMEOUT: Final = 120.0
DEFAULT_CONNECT_TIMEOUT: Final = 15.0
#: At most this much of an error body is read (a proxy can answer with megabytes of HTML).
MAX_ERROR_BODY: Final = 64 * 1024
#: A whole JSON answer (sent instead of a stream) this long or longer is refused, not read.
MAX_WHOLE_ANSWER: Final = 16 * 1024 * 1024


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

    def _api_key(self) -> str | None:
        return self.__api_key.reveal() if self.__api_key is not None else None

    def _auth_headers(self) -> dict[str, str]:
        """Headers that carry the key (overridden per provider)."""
        return {}

    def _check_sendable(self, headers: Mapping[str, str], *, secret: set[str]) -> None:
        """Refuse, in words, a header value HTTP cannot carry (only ASCII can be sent): a key
        pasted with a typographic quote or an ellipsis would otherwise fail deep in httpx."""
        for name, value in headers.items():
            try:
                value.encode("ascii")
            except UnicodeEncodeError:
                if name in secret:  # never quote the key
                    raise ProviderAuthError(
                        f"The API key for {self.provider} contains a character that cannot be "
                        "sent (a key is plain ASCII letters, digits and punctuation). Paste it "
                        "again in Settings, without spaces, quotes or typographic characters.",
                        retryable=False,
                    ) from None
                raise ProviderBadRequestError(
                    f"The header {name!r} for {self.provider} contains a character that "
                    "cannot be sent (only ASCII can); remove it and try again.",
                    retryable=False,
                ) from None

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

    async def _read_error_body(
        self, response: httpx.Response, *, limit: int = MAX_ERROR_BODY
    ) -> str:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
        return b"".join(chunks)[:limit].decode("utf-8", errors="replace")

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
        auth = self._auth_headers()
        self._check_sendable({**self._extra_headers, **auth}, secret=set(auth))
        headers.update(auth)
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
                yield response
        except httpx.HTTPError as err:
            raise self._transport_error(err, url) from err

    def _whole_answer(self, body: Any) -> list[ServerSentEvent] | None:
        """A whole JSON answer (sent despite ``stream: true``) as the events a stream would
        have carried, or ``None`` if it is not a finished answer (see :mod:`.whole`)."""
        return None

    def _not_a_stream(self, url: str, content_type: str) -> ProviderStreamError:
        what = "an HTML page" if "html" in content_type else f"{content_type or 'no type'!r}"
        return ProviderStreamError(
            f"{self.provider} at {url} answered with {what} instead of a stream of events. "
            f"Check the base URL ({base_url_hint(self.provider)}) and that the "
            "server supports streaming.",
            status_code=200,
            retryable=False,
        )

    async def _answer_events(
        self,
        response: httpx.Response,
        url: str,
        parser: StreamParser,
        delivery: Delivery | None = None,
    ) -> AsyncGenerator[list[ModelEvent], None]:
        """The model events of a 200 answer to a streaming request, by what it turned out to be
        (in lists, e.g. one per network chunk; :func:`~app.providers.coalesce.coalesced` makes
        them the model's stream; an event stream's events are put into ``delivery`` instead,
        when there is one, see :func:`~app.providers.sse.event_batches`).

        An event stream is parsed whatever it is labelled: ``text/event-stream``, or
        ``text/plain`` / no type when its first line is an SSE field (some proxies relabel or
        drop the type). A JSON body is either an error (some gateways answer errors with 200)
        or a whole answer (LiteLLM's ``/v1/messages``, some proxies), fed to the same parser
        as the stream it stands for. Anything else is refused before any output.
        """
        content_type = response.headers.get("content-type", "")
        media = content_type.partition(";")[0].strip().lower()
        if "text/event-stream" in media:
            batches = event_batches(response, parser, delivery)
            try:
                async for batch in batches:
                    yield batch
            finally:
                await batches.aclose()
            return
        if "json" in media:
            yield await self._whole_json_events(response, url, content_type, parser)
            return
        if media not in ("", "text/plain"):
            raise self._not_a_stream(url, content_type)
        lines = sse_lines(response.aiter_text())
        try:
            first = ""
            async for line in lines:
                if line.strip():
                    first = line
                    break
            if not looks_like_sse(first):
                raise self._not_a_stream(url, content_type)
            logger.info("%s at %s sent an event stream labelled %r", self.provider, url,
                        content_type or "no type")  # fmt: skip
            async for event in events_from_lines(_prepend(first, lines), parser):
                yield [event]
        finally:
            await lines.aclose()

    async def _whole_json_events(
        self, response: httpx.Response, url: str, content_type: str, parser: StreamParser
    ) -> list[ModelEvent]:
        raw = await self._read_error_body(response, limit=MAX_WHOLE_ANSWER)
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            data = None
        if isinstance(data, Mapping) and data.get("error") is not None:
            raise error_from_event(
                data, provider=self.provider, model=self.model, secrets=self._secrets()
            )
        sse = self._whole_answer(data)  # a body cut at the limit is not JSON: refused
        if sse is None:
            raise self._not_a_stream(url, content_type)
        logger.info("%s at %s answered with one JSON body, not a stream", self.provider, url)
        events: list[ModelEvent] = []
        for item in sse:
            events.extend(parser.feed(item))
        events.extend(parser.finish())
        return events

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        """One model step as events (see :mod:`app.model`); implemented per provider."""
        raise NotImplementedError

    async def _stream_events(
        self,
        url: str,
        body: Mapping[str, Any],
        parser: StreamParser,
        delivery: Delivery | None = None,
    ) -> AsyncGenerator[list[ModelEvent], None]:
        """The step's events in lists, or put into ``delivery`` (see :meth:`_answer_events`)."""
        async with self._exchange("POST", url, json_body=body, sse=True) as response:
            batches = self._answer_events(response, url, parser, delivery)
            try:
                async for batch in batches:
                    yield batch
            finally:
                await batches.aclose()

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


async def _prepend(first: str, rest: AsyncIterator[str]) -> AsyncGenerator[str, None]:
    yield first
    async for line in rest:
        yield line


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
