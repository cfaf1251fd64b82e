"""Whole (non-streamed) answers: one JSON body for a request with ``"stream": false``.

The same :class:`~app.simulator.wire.Plan` a stream is made from, as an OpenAI
``chat.completion`` object or an Anthropic ``message`` object (what the ``json_body`` quirk
also sends to a request that asked for a stream).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from . import wire

__all__ = ["anthropic_message", "openai_completion"]


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def openai_completion(plan: wire.Plan) -> bytes:
    text = "".join(plan.tokens)
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if plan.refusal:
        message.update(content=None, refusal=text)
    if plan.thinking:
        message[plan.reasoning_field] = plan.thinking_text
    if plan.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": call.arguments}}
            for call in plan.tool_calls
        ]  # fmt: skip
    finish = "stop" if plan.refusal else wire.openai_finish(plan.stop)
    return _json(
        {
            "id": f"chatcmpl-sim{uuid.uuid4().hex[:20]}",
            "object": "chat.completion",
            "created": 0,
            "model": plan.model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": finish}],
            "usage": wire.openai_usage(plan),
        }
    )  # fmt: skip


def anthropic_message(plan: wire.Plan) -> bytes:
    content: list[dict[str, Any]] = []
    if plan.redacted is not None:
        content.append({"type": "redacted_thinking", "data": plan.redacted})
    if plan.thinking:
        content.append({"type": "thinking", "thinking": plan.thinking_text,
                        "signature": wire.thinking_signature(plan.thinking_text)})  # fmt: skip
    if plan.tokens:
        content.append({"type": "text", "text": "".join(plan.tokens)})
    for call in plan.tool_calls:
        try:
            arguments: Any = json.loads(call.arguments) if call.arguments else {}
        except json.JSONDecodeError:
            arguments = call.arguments  # bad_args: what a broken server would put there
        content.append({"type": "tool_use", "id": call.id, "name": call.name,
                        "input": arguments})  # fmt: skip
    return _json(
        {
            "id": f"msg_sim{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "model": plan.model,
            "content": content,
            "stop_reason": wire.anthropic_stop(plan.stop),
            "stop_sequence": None,
            "usage": {"input_tokens": plan.input_tokens, "output_tokens": plan.output_tokens},
        }
    )
