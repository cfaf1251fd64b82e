"""The SSE plumbing both providers share: a parser protocol and the event loop over a body.

A :class:`StreamParser` is a pure fold of one provider's server-sent events into model events;
:func:`events_from_response` drives one over a live (or recorded) ``httpx.Response`` whatever
its content type (some proxies label a valid stream ``text/plain`` or not at all);
:class:`SSEDecoder` turns lines into events (pure; the WHATWG rules, plus llama.cpp's
non-standard ``error:`` field, surfaced as an ``error`` event instead of being ignored);
:func:`looks_like_sse` tells a stream from another body by its first line;
:func:`event_json` reads one event's JSON data for either parser.

The common stream is one token per event and one event per network chunk (OpenAI, Anthropic
and most servers send that), so the per-chunk path is kept short: :func:`event_batches` reads
an uncompressed body below httpx's decoding layer, a chunk that is exactly one event goes
straight to the parser (:func:`lone_event`), and JSON is read by orjson (:data:`fast_json`),
the standard library deciding whatever orjson refuses (``NaN``, lone surrogates). orjson reads
a whole number beyond 64 bits as a float, so an event that may carry a tool's arguments is
read by the standard library alone (``exact=True``): its numbers reach the tool as sent.
"""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable
from typing import Any, Final, Protocol

import httpx
from httpx_sse import ServerSentEvent

from ..errors import ProviderStreamError
from ..model import ModelEvent
from .coalesce import Delivery

fast_json: Callable[[str], Any]
try:
    from orjson import loads as fast_json
except ImportError:  # pragma: no cover - orjson is a dependency; kept working without it
    fast_json = json.loads

__all__ = [
    "LineSplitter",
    "SSEDecoder",
    "StreamParser",
    "event_batches",
    "event_json",
    "fast_json",
    "events_from_lines",
    "events_from_response",
    "lone_event",
    "looks_like_sse",
    "sse_lines",
]

#: Seconds of parsing after which :func:`event_batches` yields when it puts its events.
_YIELD_AFTER: Final = 0.001

#: A byte order mark: ignored at the start of an event stream (the SSE spec's decoding step).
_BOM: Final = "\ufeff"

#: The field names an event stream's lines start with (``error`` is llama.cpp's own).
_FIELDS: Final = ("data", "event", "id", "retry", "error")


def event_json(data: str, what: str, *, sender: str = "The provider", exact: bool = False) -> Any:
    """``data`` (one event's payload) parsed as JSON; ``ProviderStreamError`` if it is not.

    ``what`` names the event in the message ("a stream chunk"), ``sender`` who sent it.
    ``exact``: by the standard library alone (whole numbers of any size stay whole).
    """
    if not exact:
        try:
            return fast_json(data)
        except (ValueError, RecursionError):  # (orjson's errors are ValueErrors)
            pass  # the standard library decides: it reads NaN, Infinity and lone surrogates
    try:
        return json.loads(data)
    except (json.JSONDecodeError, RecursionError) as err:
        raise ProviderStreamError(
            f"{sender} sent {what} that is not valid JSON, so the answer was cut. Try "
            "again; if it keeps happening, the server may not fully support this API."
        ) from err


class StreamParser(Protocol):
    """Turns one provider's SSE events into model events (pure; no I/O)."""

    @property
    def done(self) -> bool:
        """True once the provider's end-of-stream marker arrived."""
        ...

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        """The model events of ``event`` (the same as ``feed_data(event.event, event.data)``)."""
        ...

    def feed_data(self, name: str, data: str) -> list[ModelEvent]:
        """The model events of one event given by its name (``""`` or ``"message"`` when it
        has none) and its data."""
        ...

    def finish(self) -> list[ModelEvent]:
        """The closing events; raises ``ProviderStreamError`` if the stream was incomplete."""
        ...


class SSEDecoder:
    """Lines (without their line end) to events, by the WHATWG event-stream rules. Pure.

    One exception to "unknown field names are ignored": llama.cpp's server (through late
    2025) sends an error as ``error: {…}`` followed by ``data: [DONE]``; ignoring it would
    lose the server's message and leave a stream "without a finish reason". Such an event is
    dispatched as ``event="error"`` with the field's value as its data, which both parsers
    already read as an error sent inside the stream.
    """

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._error: list[str] = []
        self._id = ""
        self._retry: int | None = None

    @property
    def idle(self) -> bool:
        """True between events: no field of an unfinished event is held."""
        return not (self._data or self._event or self._error or self._retry is not None)

    def decode(self, line: str) -> ServerSentEvent | None:
        """The event ``line`` completes (a blank line dispatches), or ``None``."""
        if not line:
            return self._dispatch()
        if line.startswith("data: "):  # nearly every line of a stream: the common case first
            self._data.append(line[6:])
            return None
        if line.startswith(":"):
            return None  # a comment (keep-alive)
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "error":
            self._error.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def flush(self) -> ServerSentEvent | None:
        """At the end of the body: only an ``error`` left without its blank line is kept
        (the spec drops any other unfinished event)."""
        if not self._error:
            return None
        self._data = []
        return self._dispatch()

    def _dispatch(self) -> ServerSentEvent | None:
        if self._error:
            event = ServerSentEvent(event="error", data="\n".join(self._error), id=self._id)
        elif self._data:  # an event without data lines is not dispatched
            data = self._data
            event = ServerSentEvent(
                self._event, data[0] if len(data) == 1 else "\n".join(data), self._id, self._retry
            )
        else:
            event = None  # (an event name or retry without data is dropped, and reset)
        self._event, self._data, self._error, self._retry = "", [], [], None
        return event


def lone_event(text: str) -> tuple[str, str] | None:
    """``(name, data)`` if ``text`` is exactly one whole event of one data line, perhaps named
    (``data: …`` then a blank line, optionally after ``event: …``); otherwise ``None``. Pure.

    Read on a decoder that holds nothing (:attr:`SSEDecoder.idle`) and a line splitter that
    holds nothing, such a text makes the same event the line-by-line rules make (its id is the
    previous one, which no parser reads).
    """
    if not text.endswith("\n\n") or "\r" in text:
        return None
    name = ""
    if text.startswith("event: "):
        end = text.find("\n")
        name = text[7:end]
        text = text[end + 1 :]
    if text.startswith("data: "):
        data = text[6:-2]
        if "\n" not in data:
            return name, data
    return None


def looks_like_sse(line: str) -> bool:
    """Whether ``line``, a body's first non-blank line, starts an event stream."""
    return line.startswith(":") or line.partition(":")[0] in _FIELDS


class LineSplitter:
    """Text chunks to lines (without their line ends), split only at CRLF, LF or CR, as the
    SSE spec says (a U+2028 inside a JSON string is not a line end). Pure."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = ""

    @property
    def idle(self) -> bool:
        """True when no unfinished line is held."""
        return not self._pending

    def feed(self, chunk: str) -> list[str]:
        """The lines ``chunk`` completes; an unfinished last line waits for the next chunk."""
        text = self._pending + chunk if self._pending else chunk
        # A CR at the very end may be the first half of a CRLF: keep it for the next chunk.
        hold_cr = text.endswith("\r")
        if hold_cr:
            text = text[:-1]
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        parts = text.split("\n")
        last = parts.pop()
        self._pending = last + "\r" if hold_cr else last
        return parts

    def finish(self) -> list[str]:
        """The last line, if the text did not end with a line end."""
        pending, self._pending = self._pending, ""
        return [pending.removesuffix("\r")] if pending else []


async def sse_lines(chunks: AsyncIterable[str]) -> AsyncGenerator[str, None]:
    """The lines of a text stream (see :class:`LineSplitter`), without a byte order mark at
    its start (the SSE spec ignores one). The last line need not end."""
    splitter = LineSplitter()
    first = True
    async for chunk in chunks:
        if first and chunk:
            first = False
            chunk = chunk.removeprefix(_BOM)
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.finish():
        yield line


async def events_from_lines(
    lines: AsyncIterator[str], parser: StreamParser
) -> AsyncGenerator[ModelEvent, None]:
    """Model events parsed from the lines of an event stream; see :func:`events_from_response`."""
    decoder = SSEDecoder()
    async for line in lines:
        sse = decoder.decode(line)
        if sse is not None:
            for event in parser.feed(sse):
                yield event
            if parser.done:
                break
    else:
        last = decoder.flush()
        if last is not None:
            for event in parser.feed(last):
                yield event
    for event in parser.finish():
        yield event


async def event_batches(
    response: httpx.Response, parser: StreamParser, delivery: Delivery | None = None
) -> AsyncGenerator[list[ModelEvent], None]:
    """The model events of an SSE ``response``, a list per network chunk (often empty); with
    a ``delivery`` (:func:`~app.providers.coalesce.coalesced_from`), put there as each chunk
    is parsed instead, an empty list yielded after each millisecond of parsing.

    One loop, no generator per line: a fast server sends thousands of events a second, and
    each layer a token climbs costs as much as parsing it. The body is decoded as UTF-8 (what
    the SSE spec prescribes, whatever the content type says), invalid bytes replaced, a byte
    order mark at its start dropped. Ends at the provider's end marker; a body that ends before
    it raises ``ProviderStreamError`` (via ``parser.finish()``). When parsing fails, the events
    of that chunk parsed before the failure are yielded (or put) first (they are output: the
    step was cut, not refused).

    An uncompressed body is read raw (httpx's decoding layer would only copy it); a chunk that
    is one whole event skips the line rules (:func:`lone_event`).
    """
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity") and not response.is_stream_consumed:
        chunks = response.aiter_raw()
    else:  # compressed, or a response built from bytes already read
        chunks = response.aiter_bytes()
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
    splitter = LineSplitter()
    decoder = SSEDecoder()
    feed_data = parser.feed_data
    put = delivery.put if delivery is not None else None
    clock = time.perf_counter
    turn = clock()
    clean = True  # neither the splitter nor the decoder holds part of an event
    first = True  # no text decoded yet: a byte order mark there is dropped (as the spec says)
    out: list[ModelEvent] = []  # (what was not yielded or put yet)
    try:
        async for chunk in chunks:
            piece = decode(chunk)
            if first and piece:
                first = False
                piece = piece.removeprefix(_BOM)
            lone = lone_event(piece) if clean else None
            if lone is not None:
                events = feed_data(*lone)
                done = parser.done
            else:
                done = _parse_lines(splitter.feed(piece), decoder, parser, out)
                clean = splitter.idle and decoder.idle
                events, out = out, []
            if done:
                out = events
                break
            if put is None:
                yield events
            else:
                put(events)
                if clock() - turn > _YIELD_AFTER:
                    yield []
                    turn = clock()
        else:
            lines = splitter.feed(decode(b"", final=True)) + splitter.finish()
            if not _parse_lines(lines, decoder, parser, out):
                last = decoder.flush()
                if last is not None:
                    out.extend(parser.feed(last))
        out.extend(parser.finish())
        batch, out = out, []
        if put is not None:
            put(batch)
            batch = []
        yield batch
    except Exception:
        if out:
            if put is not None:
                put(out)
            else:
                yield out
        raise
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]


def _parse_lines(
    lines: list[str], decoder: SSEDecoder, parser: StreamParser, out: list[ModelEvent]
) -> bool:
    """Feed ``lines`` to ``parser`` (its events appended to ``out``); True once it is done."""
    for line in lines:
        sse = decoder.decode(line)
        if sse is not None:
            out.extend(parser.feed(sse))
            if parser.done:
                return True
    return False


async def events_from_response(
    response: httpx.Response, parser: StreamParser
) -> AsyncGenerator[ModelEvent, None]:
    """Model events parsed from an SSE ``response`` (live, or built from a recorded file).

    The content type is not checked here (the caller decides what it accepts). Ends at the
    provider's end marker; a body that ends before it raises ``ProviderStreamError`` (via
    ``parser.finish()``). The providers use :func:`event_batches`, the same a chunk at a time.
    """
    batches = event_batches(response, parser)
    try:
        async for batch in batches:
            for event in batch:
                yield event
    finally:
        await batches.aclose()
