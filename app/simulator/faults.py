"""Applying a :class:`~app.simulator.script.Fault` to a reply, and the simulated error answers.

A response fault (HTTP status, HTML page, context full, llama.cpp's context error, out of
quota, ``stream_options`` refused) replaces the whole answer (:func:`send_fault_response`); a
stream fault (drop, stall, EOF, malformed or error event, llama.cpp's ``error:`` field) happens
mid-stream, after the events already sent (:func:`inject`), or cuts a whole JSON answer
(:func:`send_whole`). :func:`send_error` is the provider-shaped JSON error answer, used for
faults and for the server's own refusals (404, 401, 400).
"""

from __future__ import annotations

import asyncio
import json
from typing import Final

from . import wire
from .http import LAST_CHUNK, chunk, head, phrase, send_bytes
from .script import Fault, FaultKind

__all__ = ["error_message", "inject", "send_error", "send_fault_response", "send_whole"]

_OPENAI_QUOTA: Final = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, read the docs: "
    "https://platform.openai.com/docs/guides/error-codes/api-errors."
)
_ANTHROPIC_CREDIT: Final = (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing "
    "to upgrade or purchase credits."
)
#: The HTTP status of a whole (non-streamed) answer that fails the way an error event would.
_STATUS_OF_TYPE: Final = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500,
                          "invalid_request_error": 400, "authentication_error": 401}  # fmt: skip


def error_message(error_type: str) -> str:
    return {
        "overloaded_error": "Overloaded (simulated).",
        "rate_limit_error": "Rate limit reached (simulated).",
        "api_error": "Internal server error (simulated).",
        "authentication_error": "Invalid API key (simulated).",
        "not_found_error": "Not found (simulated).",
        "invalid_request_error": "Invalid request (simulated).",
    }.get(error_type, f"{error_type} (simulated).")


async def inject(
    writer: asyncio.StreamWriter,
    reader: asyncio.StreamReader,
    protocol: str,
    fault: Fault,
    *,
    stopping: asyncio.Event,
    stall_seconds: float,
) -> bool:
    """Apply a stream fault now; False when the connection must not be reused."""
    if fault.kind is FaultKind.DROP:
        await writer.drain()
        writer.transport.abort()
        return False
    if fault.kind is FaultKind.STALL:
        await writer.drain()
        await _hold(reader, stopping, stall_seconds)
        writer.transport.abort()
        return False
    if fault.kind is FaultKind.EOF:
        writer.write(LAST_CHUNK)
        await writer.drain()
        return True
    if fault.kind is FaultKind.LLAMACPP_ERROR_FIELD:
        event = wire.llamacpp_error_field_event(fault.error_type, fault.message)
        writer.write(chunk(event) + chunk(b"data: [DONE]\n\n") + LAST_CHUNK)
        await writer.drain()
        return True
    if fault.kind is FaultKind.MALFORMED:
        event = wire.malformed_event(protocol)
    else:  # ERROR_EVENT
        message = fault.message or error_message(fault.error_type)
        event = (
            wire.openai_error_event(fault.error_type, message) if protocol == "openai"
            else wire.anthropic_error_event(fault.error_type, message)
        )  # fmt: skip
    writer.write(chunk(event) + LAST_CHUNK)
    await writer.drain()
    return True


async def _hold(
    reader: asyncio.StreamReader, stopping: asyncio.Event, stall_seconds: float
) -> None:
    """Send nothing until the client hangs up, the simulator stops, or the stall limit."""

    async def client_gone() -> None:
        while await reader.read(65536):
            pass

    gone = asyncio.ensure_future(client_gone())
    stopped = asyncio.ensure_future(stopping.wait())
    try:
        await asyncio.wait({gone, stopped}, timeout=stall_seconds,
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
    finally:
        for task in (gone, stopped):
            task.cancel()
        await asyncio.gather(gone, stopped, return_exceptions=True)


async def send_fault_response(writer: asyncio.StreamWriter, protocol: str, fault: Fault) -> bool:
    """Answer with a response fault (status, HTML page, context full) instead of a stream."""
    if fault.kind is FaultKind.HTML:
        page = wire.html_error_page(fault.status, phrase(fault.status))
        return await send_bytes(writer, fault.status, page, "text/html", [], True)
    if fault.kind is FaultKind.CONTEXT_FULL:
        if protocol == "openai":
            message = fault.message or (
                "This model's maximum context length is 8192 tokens. However, your "
                "messages resulted in 9001 tokens. Please reduce the length of the messages."
            )
            body = wire.openai_error_body(
                400, message, "invalid_request_error", "context_length_exceeded"
            )
        else:
            message = fault.message or "prompt is too long: 210000 tokens > 200000 maximum"
            body = wire.anthropic_error_body("invalid_request_error", message)
        return await send_bytes(writer, 400, body, "application/json", [], True)
    if fault.kind is FaultKind.LLAMACPP_CTX:
        error = wire.llamacpp_error(fault.error_type, fault.message, fault.status)
        body = json.dumps({"error": error}).encode()
        return await send_bytes(writer, fault.status, body, "application/json", [], True)
    if fault.kind is FaultKind.QUOTA:
        if protocol == "anthropic":
            body = wire.anthropic_error_body(
                "invalid_request_error", fault.message or _ANTHROPIC_CREDIT
            )
            return await send_bytes(writer, 400, body, "application/json", [], True)
        body = wire.openai_error_body(
            429, fault.message or _OPENAI_QUOTA, "insufficient_quota", "insufficient_quota"
        )
        return await send_bytes(writer, 429, body, "application/json", [], True)
    if fault.kind is FaultKind.REJECT_STREAM_OPTIONS:
        message = fault.message or "Unrecognized request argument supplied: stream_options"
        return await send_error(writer, protocol, 400, message, None)
    extra: list[tuple[str, str]] = []
    if fault.retry_after is not None:
        extra.append(("Retry-After", str(max(0, round(fault.retry_after)))))
        extra.append(("Retry-After-Ms", str(int(fault.retry_after * 1000))))
    return await send_error(
        writer, protocol, fault.status, fault.message or error_message(
            wire.error_type_for(fault.status)), extra,
    )  # fmt: skip


async def send_error(
    writer: asyncio.StreamWriter,
    protocol: str,
    status: int,
    message: str,
    extra: list[tuple[str, str]] | None,
    *,
    keep_alive: bool = True,
) -> bool:
    """A JSON error body in ``protocol``'s format (``"openai"`` or ``"anthropic"``)."""
    error_type = wire.error_type_for(status)
    if protocol == "anthropic":
        body = wire.anthropic_error_body(error_type, message)
    else:
        code = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status)
        body = wire.openai_error_body(status, message, error_type, code)
    return await send_bytes(writer, status, body, "application/json", extra or [], keep_alive)


async def send_whole(
    writer: asyncio.StreamWriter,
    reader: asyncio.StreamReader,
    protocol: str,
    body: bytes,
    fault: Fault | None,
    *,
    stopping: asyncio.Event,
    stall_seconds: float,
) -> bool:
    """A whole JSON answer; a stream fault cuts it (drop, stall: half the body, then the
    connection ends; EOF, malformed: a clean but cut body) or replaces it (an error event:
    the error as an HTTP error answer)."""
    if fault is None:
        return await send_bytes(writer, 200, body, "application/json", [], True)
    half = body[: len(body) // 2]
    if fault.kind in (FaultKind.DROP, FaultKind.STALL):
        writer.write(head(200, [("Content-Type", "application/json"),
                                ("Content-Length", str(len(body)))]) + half)  # fmt: skip
        await writer.drain()
        if fault.kind is FaultKind.STALL:
            await _hold(reader, stopping, stall_seconds)
        writer.transport.abort()
        return False
    if fault.kind in (FaultKind.EOF, FaultKind.MALFORMED):
        return await send_bytes(writer, 200, half, "application/json", [], True)
    if fault.kind is FaultKind.LLAMACPP_ERROR_FIELD:
        error = wire.llamacpp_error(fault.error_type, fault.message)
        return await send_bytes(writer, 400, json.dumps({"error": error}).encode(),
                                "application/json", [], True)  # fmt: skip
    status = _STATUS_OF_TYPE.get(fault.error_type, 500)
    return await send_error(
        writer, protocol, status, fault.message or error_message(fault.error_type), None
    )
