"""The SSE plumbing both providers share: a parser protocol and the event loop over a body.

A :class:`StreamParser` is a pure fold of one provider's server-sent events into model events;
:func:`events_from_response` drives one over a live (or recorded) ``httpx.Response``;
:func:`event_json` reads one event's JSON data for either parser.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any, Protocol

import httpx
from httpx_sse import EventSource, ServerSentEvent

from ..errors import ProviderStreamError
from ..model import ModelEvent

__all__ = ["StreamParser", "event_json", "events_from_response"]


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
