"""The simulator's wire formats: SSE events and error bodies for both provider protocols.

Pure functions from a resolved :class:`Plan` to the bytes of each SSE event, so the server only
decides *when* to send (pacing, faults) and this module only decides *what*. The stream quirks
of real servers (:class:`~app.simulator.script.Quirk`) are applied here; the whole (non-streamed)
JSON answers are :mod:`app.simulator.whole`'s.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from ..messages import StopReason
from .script import Quirk

__all__ = [
    "Plan",
    "anthropic_error_body",
    "anthropic_error_event",
    "anthropic_events",
    "error_type_for",
    "html_error_page",
    "llamacpp_error_field_event",
    "malformed_event",
    "openai_error_body",
    "openai_error_event",
    "openai_events",
    "openai_finish",
    "openai_usage",
    "anthropic_stop",
    "redacted_data",
    "redacted_data_is_ours",
    "thinking_signature",
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


def openai_finish(stop: StopReason | str) -> str:
    """The ``finish_reason`` for a stop reason (a raw string is sent as is)."""
    return _OPENAI_STOP.get(stop, stop)


def anthropic_stop(stop: StopReason | str) -> str:
    """The ``stop_reason`` for a stop reason (a raw string is sent as is)."""
    return _ANTHROPIC_STOP.get(stop, stop)


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
    thinking: tuple[str, ...] = ()  # reasoning pieces, sent before the answer
    reasoning_field: str = "reasoning_content"
    quirks: frozenset[Quirk] = frozenset()
    redacted: str | None = None  # Anthropic redacted_thinking data, sent before the thinking

    @property
    def refusal(self) -> bool:
        """An OpenAI refusal: the text goes in ``delta.refusal`` and the finish is ``stop``."""
        return self.stop == StopReason.REFUSAL

    @property
    def thinking_text(self) -> str:
        return "".join(self.thinking)

    @property
    def output_tokens(self) -> int:
        """Usage: text and reasoning tokens, plus each tool call (name + arguments/4)."""
        calls = sum(1 + -(-len(call.arguments) // 4) for call in self.tool_calls)
        return len(self.tokens) + len(self.thinking) + calls


_REDACTED_KEY: Final = b"continuum-sim-redacted\0"


def redacted_data() -> str:
    """Opaque ``redacted_thinking`` data the simulator can recognise when it comes back."""
    nonce = uuid.uuid4().bytes
    return base64.b64encode(b"\x12simr" + nonce + hashlib.sha256(_REDACTED_KEY + nonce).digest()
                            ).decode()  # fmt: skip


def redacted_data_is_ours(data: object) -> bool:
    try:
        raw = base64.b64decode(str(data), validate=True)
    except ValueError:
        return False
    nonce, mac = raw[5:21], raw[21:]
    return raw[:5] == b"\x12simr" and mac == hashlib.sha256(_REDACTED_KEY + nonce).digest()


def thinking_signature(thinking: str) -> str:
    """The signature the simulator gives a thinking block (it checks it when sent back)."""
    digest = hashlib.sha256(b"continuum-sim-thinking\0" + thinking.encode()).digest()
    return base64.b64encode(b"\x12sim" + digest).decode()


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
    quirks = plan.quirks
    azure = Quirk.CONTENT_FILTER in quirks
    pending = "null"  # finish_reason before the last chunk
    if Quirk.FINISH_EMPTY in quirks:
        pending = '""'
    elif Quirk.FINISH_NULL_STRING in quirks:
        pending = '"null"'
    filters = ',"content_filter_results":{}' if azure else ""

    def chunk(delta: Any, finish: str | None = None) -> bytes:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None}
        if azure:
            choice["content_filter_results"] = _azure_filter(finish is not None)
        body = (
            _json(choice)[:-1]
            + ',"finish_reason":'
            + (_json(finish) if finish is not None else pending)
            + "}"
        )
        return f'data: {prefix}"choices":[{body}]{usage_null}}}\n\n'.encode()

    if azure:
        yield (
            'data: {"choices":[],"created":0,"id":"","model":"","object":"",'
            '"prompt_filter_results":[{"prompt_index":0,"content_filter_results":'
            f"{_json(_azure_filter(False))}}}]}}\n\n"
        ).encode()
    text_key = "refusal" if plan.refusal else "content"
    first: dict[str, Any] = {"role": "assistant", "content": ""}
    if plan.refusal:
        first = {"role": "assistant", "content": None, "refusal": ""}
    elif not plan.tokens and plan.tool_calls:
        first = {"role": "assistant", "content": None}  # a tool-only reply
    calls = list(_openai_call_deltas(plan))
    standard = not quirks & {Quirk.OLLAMA_INDEX0, Quirk.GEMINI_NO_INDEX}
    tool_only = first["content"] is None and not plan.refusal and not plan.thinking
    if tool_only and calls and standard:
        first.update(calls.pop(0))  # OpenAI sends the first call's head with the role
    yield chunk(first)
    for piece in plan.thinking:
        yield chunk({plan.reasoning_field: piece})
    for token in plan.tokens:
        # The common case is formatted by hand: the simulator must outpace any client.
        yield (
            f'data: {prefix}"choices":[{{"index":0,"delta":{{"{text_key}":{_json(token)}}},'
            f'"logprobs":null{filters},"finish_reason":{pending}}}]{usage_null}}}\n\n'
        ).encode()
    for delta in calls:
        yield chunk(delta)
    finish = "stop" if plan.refusal else openai_finish(plan.stop)
    yield chunk({}, finish)
    if plan.include_usage:
        yield f'data: {prefix}"choices":[],"usage":{_json(openai_usage(plan))}}}\n\n'.encode()
    if Quirk.NO_DONE not in quirks:
        yield b"data: [DONE]\n\n"


def openai_usage(plan: Plan) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": plan.input_tokens,
        "completion_tokens": plan.output_tokens,
        "total_tokens": plan.input_tokens + plan.output_tokens,
    }
    if plan.thinking:
        usage["completion_tokens_details"] = {"reasoning_tokens": len(plan.thinking)}
    return usage


def _openai_call_deltas(plan: Plan) -> Iterator[dict[str, Any]]:
    """The ``delta`` objects that carry the tool calls, in the dialect the quirks ask for."""
    for index, call in enumerate(plan.tool_calls):
        if Quirk.OLLAMA_INDEX0 in plan.quirks:  # each call whole, and always index 0
            yield {"role": "assistant", "content": "", "tool_calls": [
                {"id": call.id, "index": 0, "type": "function",
                 "function": {"name": call.name, "arguments": call.arguments}}]}  # fmt: skip
            continue
        pieces = list(_pieces(call.arguments, plan.argument_chunk)) or [""]
        if Quirk.GEMINI_NO_INDEX in plan.quirks:  # no index; the id on every piece
            yield {
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": pieces[0]},
                    }
                ]
            }
            yield {"tool_calls": [{"extra_content": {"google": {
                "thought_signature": thinking_signature(call.id)}}}]}  # fmt: skip
            for piece in pieces[1:]:
                yield {"tool_calls": [{"id": call.id, "type": "function",
                                       "function": {"arguments": piece}}]}  # fmt: skip
            continue
        yield {"tool_calls": [{"index": index, "id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": ""}}]}  # fmt: skip
        for piece in _pieces(call.arguments, plan.argument_chunk):
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def _azure_filter(triggered: bool) -> dict[str, Any]:
    """Azure OpenAI's per-category filter results (``violence`` trips at the end)."""
    safe = {"filtered": False, "severity": "safe"}
    violence = {"filtered": True, "severity": "medium"} if triggered else safe
    return {"hate": safe, "self_harm": safe, "sexual": safe, "violence": violence}


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
    if plan.redacted is not None:
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "redacted_thinking", "data": plan.redacted}},
        )  # fmt: skip
        yield _event("content_block_stop", {"type": "content_block_stop", "index": 0})
        index = 1
    if plan.thinking:
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        )  # fmt: skip
        for piece in plan.thinking:
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index,
                 "delta": {"type": "thinking_delta", "thinking": piece}},
            )  # fmt: skip
        yield _event(
            "content_block_delta",
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "signature_delta",
                       "signature": thinking_signature(plan.thinking_text)}},
        )  # fmt: skip
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    if plan.tokens:
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "text", "text": ""}},
        )  # fmt: skip
        yield b'event: ping\ndata: {"type":"ping"}\n\n'
        for token in plan.tokens:
            yield (
                'event: content_block_delta\ndata: {"type":"content_block_delta",'
                f'"index":{index},"delta":{{"type":"text_delta","text":{_json(token)}}}}}\n\n'
            ).encode()
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
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
            "delta": {"stop_reason": anthropic_stop(plan.stop),
                      "stop_sequence": None},
            "usage": {"output_tokens": plan.output_tokens},
        },
    )  # fmt: skip
    if Quirk.NO_DONE not in plan.quirks:
        yield _event("message_stop", {"type": "message_stop"})


def anthropic_error_body(error_type: str, message: str) -> bytes:
    return _json({"type": "error", "error": {"type": error_type, "message": message}}).encode()


def anthropic_error_event(error_type: str, message: str) -> bytes:
    return _event("error", {"type": "error", "error": {"type": error_type, "message": message}})


# --- llama.cpp -----------------------------------------------------------------------------

#: llama.cpp's words when the prompt does not fit its context.
LLAMACPP_CONTEXT_MESSAGE: Final = (
    "the request exceeds the available context size, try increasing it"
)


def llamacpp_error(error_type: str, message: str | None, code: int = 400) -> dict[str, Any]:
    return {"code": code, "message": message or LLAMACPP_CONTEXT_MESSAGE, "type": error_type}


def llamacpp_error_field_event(error_type: str, message: str | None) -> bytes:
    """llama.cpp's non-standard ``error:`` SSE field (a client's SSE parser drops it)."""
    return f"error: {_json(llamacpp_error(error_type, message))}\n\n".encode()


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
