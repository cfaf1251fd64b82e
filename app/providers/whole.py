"""A whole (non-streamed) JSON answer, rewritten as the event stream it stands for.

LiteLLM's ``/v1/messages`` and some proxies answer ``stream: true`` with one JSON body (HTTP
200, ``application/json``). Rather than a second parser per protocol, each function here turns
such a body into the server-sent events a streaming server would have sent for the same
answer, which the protocol's own stream parser then folds as usual (text, tool calls, reasoning,
stop reason, usage, and the same checks on tool arguments). Pure; no I/O.

Each returns ``None`` for a body that is not a finished answer of its protocol (no finish or
stop reason), so the caller can say the server did not stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from httpx_sse import ServerSentEvent

__all__ = ["anthropic_events", "openai_events"]


def _data(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False)


def openai_events(body: Any) -> list[ServerSentEvent] | None:
    """A ``chat.completion`` object as ``chat.completion.chunk`` events and ``[DONE]``."""
    if not isinstance(body, Mapping) or not isinstance(body.get("choices"), list):
        return None
    choices = [c for c in body["choices"] if isinstance(c, Mapping) and not c.get("index")]
    if not choices or not isinstance(choices[0].get("finish_reason"), str):
        return None
    choice = choices[0]
    message = choice.get("message")
    delta = dict(message) if isinstance(message, Mapping) else {}
    calls = delta.get("tool_calls")
    if isinstance(calls, list):  # a chunk's calls carry their position; a message's do not
        delta["tool_calls"] = [
            {**call, "index": i} if isinstance(call, Mapping) else call
            for i, call in enumerate(calls)
        ]
    chunk: dict[str, Any] = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}],
    }
    if isinstance(body.get("usage"), Mapping):
        chunk["usage"] = body["usage"]
    return [ServerSentEvent(data=_data(chunk)), ServerSentEvent(data="[DONE]")]


def _block_events(index: int, block: Mapping[str, Any]) -> list[ServerSentEvent]:
    """One content block as its start, deltas and stop, the way the Messages stream sends it."""
    kind = block.get("type")
    start: Any = block
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        start = {**block, "text": ""}
        deltas.append({"type": "text_delta", "text": block.get("text") or ""})
    elif kind in ("tool_use", "server_tool_use"):
        start = {**block, "input": {}}
        deltas.append({"type": "input_json_delta", "partial_json": _data(block.get("input"))})
    elif kind == "thinking":
        start = {**{k: v for k, v in block.items() if k != "signature"}, "thinking": ""}
        deltas.append({"type": "thinking_delta", "thinking": block.get("thinking") or ""})
        if isinstance(block.get("signature"), str):
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
    events = [
        ServerSentEvent(
            event="content_block_start",
            data=_data({"type": "content_block_start", "index": index, "content_block": start}),
        )
    ]
    events.extend(
        ServerSentEvent(
            event="content_block_delta",
            data=_data({"type": "content_block_delta", "index": index, "delta": delta}),
        )
        for delta in deltas
    )
    events.append(
        ServerSentEvent(
            event="content_block_stop",
            data=_data({"type": "content_block_stop", "index": index}),
        )
    )
    return events


def anthropic_events(body: Any) -> list[ServerSentEvent] | None:
    """A Messages ``message`` object as ``message_start`` … ``message_stop`` events."""
    if not isinstance(body, Mapping) or body.get("type") != "message":
        return None
    content = body.get("content")
    if not isinstance(content, list) or not isinstance(body.get("stop_reason"), str):
        return None
    usage = body.get("usage") if isinstance(body.get("usage"), Mapping) else {}
    start = {**body, "content": [], "stop_reason": None, "stop_sequence": None}
    events = [
        ServerSentEvent(
            event="message_start", data=_data({"type": "message_start", "message": start})
        )
    ]
    for index, block in enumerate(content):
        if isinstance(block, Mapping):
            events.extend(_block_events(index, block))
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": body.get("stop_sequence")}
    end: dict[str, Any] = {"type": "message_delta", "delta": delta}
    if isinstance(usage, Mapping) and "output_tokens" in usage:
        end["usage"] = {"output_tokens": usage["output_tokens"]}
    events.append(ServerSentEvent(event="message_delta", data=_data(end)))
    events.append(ServerSentEvent(event="message_stop", data=_data({"type": "message_stop"})))
    return events
