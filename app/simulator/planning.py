"""Planning one streamed answer: from a request body and a :class:`Reply` to a :class:`Plan`.

Decides the tokens (echo of the last user text, scripted text or filler), the tool calls with
their ids, the stop reason (cut to ``max_tokens``) and whether usage is reported; the bytes of
the plan are :mod:`app.simulator.wire`'s.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Final

from ..messages import StopReason
from . import wire
from .script import Reply

__all__ = ["DEFAULT_MODELS", "last_user_text", "plan"]

DEFAULT_MODELS: Final = ("sim-echo", "sim-claude")
_FILLER: Final = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt "
    "ut labore et dolore magna aliqua"
).split()


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def last_user_text(messages: Any) -> str:
    """The last non-empty user-turn text of a request (what the echo reply says)."""
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text:
                return text
    return ""


def plan(protocol: str, body: Mapping[str, Any], reply: Reply) -> wire.Plan:
    if reply.tokens is not None:
        tokens = [f" {_FILLER[i % len(_FILLER)]}" for i in range(reply.tokens)]
    else:
        text = reply.text if reply.text is not None else last_user_text(body.get("messages"))
        tokens = wire.tokenize(text)
    calls = tuple(
        wire.PlannedCall(
            id=call.id or (f"call_{i}_{_short_id()}" if protocol == "openai"
                           else f"toolu_{i}_{_short_id()}"),
            name=call.name,
            arguments=call.arguments_text(),
        )
        for i, call in enumerate(reply.tool_calls)
    )  # fmt: skip
    stop = reply.stop or (StopReason.TOOL_USE if calls else StopReason.END_TURN)
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if isinstance(limit, int) and limit >= 0 and len(tokens) > limit:
        tokens, calls, stop = tokens[:limit], (), StopReason.MAX_OUTPUT
    stream_options = body.get("stream_options")
    include_usage = protocol == "anthropic" or (
        isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
    )
    words = len(json.dumps(body.get("messages", [])).split())
    return wire.Plan(
        model=str(body.get("model") or DEFAULT_MODELS[0]),
        tokens=tuple(tokens),
        tool_calls=calls,
        stop=stop,
        argument_chunk=reply.argument_chunk,
        input_tokens=words,
        include_usage=include_usage,
    )


def _short_id() -> str:
    return uuid.uuid4().hex[:16]
