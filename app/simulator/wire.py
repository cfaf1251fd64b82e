"""The simulator's wire formats: SSE events and error bodies for both provider protocols.

Pure functions from a resolved :class:`Plan` to the bytes of each SSE event, so the server only
decides *when* to send (pacing, faults) and this module only decides *what*.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from ..messages import StopReason

__all__ = [
    "Plan",
    "anthropic_error_body",
    "anthropic_error_event",
    "anthropic_events",
    "error_type_for",
    "html_error_page",
    "malformed_event",
    "openai_error_body",
    "openai_error_event",
    "openai_events",
    "split_events",
    "tokenize",
]

_OPENAI_STOP: Final[dict[str, str]] = {
    StopReason.END_TURN: "stop",
    StopReason.MAX_OUTPUT: "length",
    StopReason.TOOL_USE: "tool_calls",
    StopReason.REFUSAL: "content_filter",
    StopReason.PAUSED: "stop",  # Chat Completions has no pause
}
_ANTHROPIC_STOP: Final[dict[str, str]] = {
    StopReason.MAX_OUTPUT: "max_tokens",
    StopReason.PAUSED: "pause_turn",
    StopReason.CONTEXT_FULL: "model_context_window_exceeded",
}
_TOKEN: Final = re.compile(r"\s*\S+|\s+")


def tokenize(text: str) -> list[str]:
    """Word-sized pieces (each with its leading space); joined they give ``text`` back."""
    return _TOKEN.findall(text)


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class PlannedCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything one streamed answer contains, decided before the first byte."""

    model: str
    tokens: tuple[str, ...]
    tool_calls: tuple[PlannedCall, ...]
    stop: StopReason | str  # a raw string is sent as is
    argument_chunk: int
    input_tokens: int
    include_usage: bool = True


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


# --- OpenAI Chat Completions ---------------------------------------------------------------


def openai_events(plan: Plan) -> Iterator[bytes]:
    """``data: {chat.completion.chunk}`` events ending with ``data: [DONE]``."""
    completion_id = f"chatcmpl-sim{uuid.uuid4().hex[:20]}"
    created = int(time.time())
    prefix = (
        f'{{"id":{_json(completion_id)},"object":"chat.completion.chunk",'
        f'"created":{created},"model":{_json(plan.model)},'
    )
    usage_null = ',"usage":null' if plan.include_usage else ""

    def chunk(delta: Any, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return f'data: {prefix}"choices":[{_json(choice)}]{usage_null}}}\n\n'.encode()

    yield chunk({"role": "assistant", "content": ""})
    for token in plan.tokens:
        # The common case is formatted by hand: the simulator must outpace any client.
        yield (
            f'data: {prefix}"choices":[{{"index":0,"delta":{{"content":{_json(token)}}},'
            f'"logprobs":null,"finish_reason":null}}]{usage_null}}}\n\n'
        ).encode()
    for index, call in enumerate(plan.tool_calls):
        head = {"index": index, "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": ""}}  # fmt: skip
        yield chunk({"tool_calls": [head]})
        for piece in _pieces(call.arguments, plan.argument_chunk):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _OPENAI_STOP.get(plan.stop, plan.stop))
    if plan.include_usage:
        usage = {
            "prompt_tokens": plan.input_tokens,
            "completion_tokens": len(plan.tokens),
            "total_tokens": plan.input_tokens + len(plan.tokens),
        }
        yield f'data: {prefix}"choices":[],"usage":{_json(usage)}}}\n\n'.encode()
    yield b"data: [DONE]\n\n"


def openai_error_body(status: int, message: str, error_type: str, code: str | None) -> bytes:
    return _json(
        {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    ).encode()


def openai_error_event(error_type: str, message: str) -> bytes:
    body = {"error": {"message": message, "type": error_type, "param": None, "code": error_type}}
    return f"data: {_json(body)}\n\n".encode()


# --- Anthropic Messages --------------------------------------------------------------------


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {_json(data)}\n\n".encode()


def anthropic_events(plan: Plan) -> Iterator[bytes]:
    """Messages stream events, ``message_start`` … ``message_stop`` (with an early ``ping``)."""
    yield _event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_sim{uuid.uuid4().hex[:20]}",
                "type": "message",
                "role": "assistant",
                "model": plan.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": plan.input_tokens, "output_tokens": 1},
            },
        },
    )
    index = 0
    if plan.tokens:
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "text", "text": ""}},
        )  # fmt: skip
        yield b'event: ping\ndata: {"type":"ping"}\n\n'
        for token in plan.tokens:
            yield (
                'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
                f'"delta":{{"type":"text_delta","text":{_json(token)}}}}}\n\n'
            ).encode()
        yield _event("content_block_stop", {"type": "content_block_stop", "index": 0})
        index = 1
    for call in plan.tool_calls:
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": call.id, "name": call.name,
                               "input": {}}},
        )  # fmt: skip
        for piece in _pieces(call.arguments, plan.argument_chunk):
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index,
                 "delta": {"type": "input_json_delta", "partial_json": piece}},
            )  # fmt: skip
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    yield _event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": _ANTHROPIC_STOP.get(plan.stop, plan.stop),
                      "stop_sequence": None},
            "usage": {"output_tokens": len(plan.tokens)},
        },
    )  # fmt: skip
    yield _event("message_stop", {"type": "message_stop"})


def anthropic_error_body(error_type: str, message: str) -> bytes:
    return _json({"type": "error", "error": {"type": error_type, "message": message}}).encode()


def anthropic_error_event(error_type: str, message: str) -> bytes:
    return _event("error", {"type": "error", "error": {"type": error_type, "message": message}})


# --- shared --------------------------------------------------------------------------------


def split_events(body: bytes) -> Iterator[bytes]:
    """A recorded SSE body cut into its events (a trailing partial event is kept as is)."""
    body = body.replace(b"\r\n", b"\n")
    start = 0
    while start < len(body):
        end = body.find(b"\n\n", start)
        if end < 0:
            yield body[start:]
            return
        yield body[start : end + 2]
        start = end + 2


def malformed_event(protocol: str) -> bytes:
    """An event whose data was cut mid-JSON (what a broken proxy or server produces)."""
    if protocol == "anthropic":
        return b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"del\n\n'
    return b'data: {"id":"chatcmpl-sim","choices":[{"index":0,"delta":{"content":"unterm\n\n'


def error_type_for(status: int) -> str:
    """The Anthropic-style error type for an HTTP status (OpenAI uses similar words)."""
    return {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")


def html_error_page(status: int, phrase: str) -> bytes:
    return (
        f"<html>\r\n<head><title>{status} {phrase}</title></head>\r\n<body>\r\n"
        f"<center><h1>{status} {phrase}</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n"
    ).encode()
