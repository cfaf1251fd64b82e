"""The SSE plumbing both providers share: a parser protocol and the event loop over a body.

A :class:`StreamParser` is a pure fold of one provider's server-sent events into model events;
:func:`events_from_response` drives one over a live (or recorded) ``httpx.Response`` whatever
its content type (some proxies label a valid stream ``text/plain`` or not at all);
:class:`SSEDecoder` turns lines into events (pure; the WHATWG rules, plus llama.cpp's
non-standard ``error:`` field, surfaced as an ``error`` event instead of being ignored);
:func:`looks_like_sse` tells a stream from another body by its first line;
:func:`event_json` reads one event's JSON data for either parser.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator
from typing import Any, Final, Protocol

import httpx
from httpx_sse import ServerSentEvent

from ..errors import ProviderStreamError
from ..model import ModelEvent

__all__ = [
    "SSEDecoder",
    "StreamParser",
    "event_json",
    "events_from_lines",
    "events_from_response",
    "looks_like_sse",
    "sse_lines",
]

#: The field names an event stream's lines start with (``error`` is llama.cpp's own).
_FIELDS: Final = ("data", "event", "id", "retry", "error")


def event_json(data: str, what: str, *, sender: str = "The provider") -> Any:
    """``data`` (one event's payload) parsed as JSON; ``ProviderStreamError`` if it is not.

    ``what`` names the event in the message ("a stream chunk"), ``sender`` who sent it.
    """
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

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]: ...

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

    def decode(self, line: str) -> ServerSentEvent | None:
        """The event ``line`` completes (a blank line dispatches), or ``None``."""
        if not line:
            return self._dispatch()
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
            event = ServerSentEvent(
                event=self._event, data="\n".join(self._data), id=self._id, retry=self._retry
            )
        else:
            event = None
        self._event, self._data, self._error, self._retry = "", [], [], None
        return event


def looks_like_sse(line: str) -> bool:
    """Whether ``line``, a body's first non-blank line, starts an event stream."""
    return line.startswith(":") or line.partition(":")[0] in _FIELDS


async def sse_lines(chunks: AsyncIterable[str]) -> AsyncGenerator[str, None]:
    """The lines of a text stream, split only at CRLF, LF or CR (as the SSE spec says; a
    U+2028 inside a JSON string is not a line end). The last line need not end."""
    pending = ""
    async for chunk in chunks:
        text = pending + chunk
        # A CR at the very end may be the first half of a CRLF: keep it for the next chunk.
        hold_cr = text.endswith("\r")
        if hold_cr:
            text = text[:-1]
        parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        pending = parts.pop() + ("\r" if hold_cr else "")
        for part in parts:
            yield part
    if pending:
        yield pending.removesuffix("\r")


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


async def events_from_response(
    response: httpx.Response, parser: StreamParser
) -> AsyncGenerator[ModelEvent, None]:
    """Model events parsed from an SSE ``response`` (live, or built from a recorded file).

    The content type is not checked here (the caller decides what it accepts). Ends at the
    provider's end marker; a body that ends before it raises ``ProviderStreamError`` (via
    ``parser.finish()``).
    """
    lines = sse_lines(response.aiter_text())
    try:
        async for event in events_from_lines(lines, parser):
            yield event
    finally:
        await lines.aclose()
