"""One answer to a completion request: a response fault, a whole JSON body, or a paced SSE
stream.

:func:`answer` sends what a :class:`Reply` asks for: a response fault instead of the stream,
a 400 where a real server would refuse the request (:func:`app.simulator.planning.refusal_for`),
the whole answer as JSON (``"stream": false``, or the ``json_body`` quirk), or the reply's
events (planned by :mod:`app.simulator.planning`, or the reply's raw SSE) at the reply's rate,
with a stream fault (:func:`app.simulator.faults.inject`) in its place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any, Final

from . import whole, wire
from .faults import inject, send_error, send_fault_response, send_whole
from .http import LAST_CHUNK, chunk, event_stream_head
from .planning import plan, refusal_for
from .script import RESPONSE_FAULTS, Fault, FaultKind, Quirk, Reply

__all__ = ["answer"]

_YIELD_EVERY: Final = 32  # at full speed, give the event loop a turn this often


async def answer(
    protocol: str,
    body: Mapping[str, Any],
    reply: Reply,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    default_rate: float,
    stopping: asyncio.Event,
    stall_seconds: float,
) -> bool:
    """Answer one completion request; False when the connection must not be reused.

    ``default_rate`` (tokens per second, 0: no limit) applies when the reply sets none;
    ``stopping`` and ``stall_seconds`` bound a stall.
    """
    fault = reply.fault
    if fault is not None and fault.kind is FaultKind.REJECT_STREAM_OPTIONS:
        fault = fault if "stream_options" in body else None  # the retry without it works
    if fault is not None and fault.kind in RESPONSE_FAULTS:
        return await send_fault_response(writer, protocol, fault)
    problem = refusal_for(protocol, body, reply)
    if problem is not None:
        return await send_error(writer, protocol, 400, problem, None)
    events: Iterator[bytes]
    if reply.raw is not None:
        events = wire.split_events(reply.raw.encode("utf-8"))
    else:
        planned = plan(protocol, body, reply)
        if body.get("stream") is False or Quirk.JSON_BODY in reply.quirks:
            answer_body = (
                whole.openai_completion(planned) if protocol == "openai"
                else whole.anthropic_message(planned)
            )  # fmt: skip
            return await send_whole(writer, reader, protocol, answer_body, fault,
                                    stopping=stopping, stall_seconds=stall_seconds)  # fmt: skip
        events = (
            wire.openai_events(planned) if protocol == "openai"
            else wire.anthropic_events(planned)
        )  # fmt: skip
    rate = reply.tokens_per_second if reply.tokens_per_second is not None else default_rate
    content_type: str | None = "text/event-stream; charset=utf-8"
    if Quirk.TEXT_PLAIN in reply.quirks:
        content_type = "text/plain; charset=utf-8"
    elif Quirk.NO_CONTENT_TYPE in reply.quirks:
        content_type = None
    writer.write(event_stream_head(content_type))
    loop = asyncio.get_running_loop()
    started = loop.time()
    sent = 0
    for event in events:
        if fault is not None and sent == fault.after:
            return await _inject(writer, reader, protocol, fault, stopping, stall_seconds)
        if writer.is_closing() or reader.at_eof():
            return False  # the client hung up
        if rate > 0:
            delay = started + sent / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
        elif sent % _YIELD_EVERY == 0:
            await asyncio.sleep(0)
        writer.write(chunk(event))
        await writer.drain()
        sent += 1
    if fault is not None:  # a fault placed past the last event happens at the end
        return await _inject(writer, reader, protocol, fault, stopping, stall_seconds)
    writer.write(LAST_CHUNK)
    await writer.drain()
    return True


async def _inject(
    writer: asyncio.StreamWriter,
    reader: asyncio.StreamReader,
    protocol: str,
    fault: Fault,
    stopping: asyncio.Event,
    stall_seconds: float,
) -> bool:
    return await inject(
        writer, reader, protocol, fault, stopping=stopping, stall_seconds=stall_seconds
    )
