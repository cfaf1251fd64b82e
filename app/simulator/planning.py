"""Planning one answer: from a request body and a :class:`Reply` to a :class:`Plan`.

Decides the tokens (echo of the last user text and its images, scripted text or filler), the
reasoning (the reply's, or a default one when the request asks for thinking / a reasoning
effort), the tool calls with their ids, the stop reason (cut to ``max_tokens``) and whether usage is
reported; the bytes of the plan are :mod:`app.simulator.wire`'s. :func:`refusal_for` is what a
real server would refuse in the request before answering (a thinking block whose signature is
not the one the simulator gave it, a quirk the route's servers never have).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Final

from ..messages import StopReason
from . import wire
from .images import image_problem, image_summary
from .script import DEFAULT_THINKING, OPENAI_ONLY_QUIRKS, Quirk, Reply

__all__ = ["DEFAULT_MODELS", "last_user_text", "plan", "refusal_for"]

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


def _echo(messages: Any) -> str:
    """The echo reply: the last user text, after what its images were ("1 image: ...")."""
    images = image_summary(messages)
    text = last_user_text(messages)
    return f"({images}) {text}" if images else text


def plan(protocol: str, body: Mapping[str, Any], reply: Reply) -> wire.Plan:
    if reply.tokens is not None:
        tokens = [f" {_FILLER[i % len(_FILLER)]}" for i in range(reply.tokens)]
    else:
        text = reply.text if reply.text is not None else _echo(body.get("messages"))
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
    if Quirk.CONTENT_FILTER in reply.quirks:
        stop = "content_filter" if protocol == "openai" else StopReason.REFUSAL
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
        thinking=tuple(wire.tokenize(reply.thinking or _asked_to_think(protocol, body))),
        reasoning_field=reply.reasoning_field,
        quirks=reply.quirks,
        redacted=wire.redacted_data()
        if reply.redacted_thinking and protocol == "anthropic"
        else None,
    )


def _asked_to_think(protocol: str, body: Mapping[str, Any]) -> str:
    """Default reasoning when the request itself asks for it, as a reasoning model would:
    Anthropic ``"thinking": {"type": "enabled"|"adaptive"}``, OpenAI ``reasoning_effort``
    (other than ``"none"``)."""
    if protocol == "anthropic":
        thinking = body.get("thinking")
        asked = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
    else:
        effort = body.get("reasoning_effort")
        asked = isinstance(effort, str) and effort not in ("", "none")
    return DEFAULT_THINKING if asked else ""


def refusal_for(protocol: str, body: Mapping[str, Any], reply: Reply) -> str | None:
    """Why a real server would answer this request with HTTP 400, or None."""
    problem = image_problem(body)
    if problem is not None:
        return problem
    if protocol == "anthropic":
        odd = sorted(reply.quirks & OPENAI_ONLY_QUIRKS)
        if odd:
            return (f"The fault {odd[0]!r} is an OpenAI-compatible server's; use it on "
                    "/v1/chat/completions.")  # fmt: skip
        return _bad_signature(body.get("messages"))
    return None


def _bad_signature(messages: Any) -> str | None:
    """Anthropic's refusal of a thinking block that was not sent back unchanged."""
    for m, message in enumerate(messages if isinstance(messages, list) else ()):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list) or message.get("role") != "assistant":
            continue
        for b, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "redacted_thinking" and not wire.redacted_data_is_ours(
                block.get("data")
            ):
                return f"messages.{m}.content.{b}: Invalid `data` in `redacted_thinking` block"
            if block.get("type") != "thinking":
                continue
            text = block.get("thinking")
            if not isinstance(text, str) or block.get("signature") != wire.thinking_signature(text):
                return f"messages.{m}.content.{b}: Invalid `signature` in `thinking` block"
    return None


def _short_id() -> str:
    return uuid.uuid4().hex[:16]
