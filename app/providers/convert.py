"""History conversion: Continuum's messages to each provider's request format.

The saved history is provider-neutral (:mod:`app.messages`), so a conversation started on one
provider resumes on the other: this module is the only place that knows how each wire format
spells a turn. Rules that both formats need:

- ``InternalMessage`` is sent as a user turn (the model reads it; the UI shows it discreetly).
- Tool call ids are made acceptable to both providers by :func:`portable_tool_id`, applied to a
  call and to its result alike, so pairs stay matched. Anthropic only accepts
  ``^[a-zA-Z0-9_-]+$``; OpenAI caps ids at 40 characters.
- A failed tool result is marked: ``is_error: true`` for Anthropic, a leading sentence for
  OpenAI (which has no such flag).
- Empty assistant text is left out; Anthropic also needs consecutive same-role turns merged
  (tool results and the text that follows them go in one user turn).
- OpenAI-compatible: an assistant turn with tool calls and no text is sent with
  ``"content": ""``, the one spelling every server accepts. ``null`` is refused by
  llama-cpp-python 0.3.3+ (``content: NotRequired[str]``: HTTP 500) and older Ollama ("invalid
  message content type: <nil>"); leaving the key out is refused by llama-cpp-python before
  0.3.3 (``content: Optional[str]``, required) and older Ollama too. OpenAI, vLLM and
  llama.cpp's server accept all three. A turn with text sends its text unchanged.
- Reasoning: Anthropic gets each signed or redacted part back unchanged, as ``thinking`` /
  ``redacted_thinking`` blocks first in that message's blocks (it needs them with tool use);
  unsigned parts (from OpenAI-compatible servers, or a block cut before its signature) are
  never sent, and a step with reasoning only (no text, no calls) sends nothing, since Anthropic
  refuses an assistant turn that ends with thinking. OpenAI-compatible servers get none
  (DeepSeek refuses ``reasoning_content`` in the history).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any, Final

from ..messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    Reasoning,
    ToolMessage,
    UserMessage,
)
from ..model import ToolSpec

__all__ = [
    "FAILED_TOOL_PREFIX",
    "anthropic_messages",
    "anthropic_tools",
    "openai_messages",
    "openai_tools",
    "portable_tool_id",
]

_SAFE_ID: Final = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_UNSAFE_CHARS: Final = re.compile(r"[^A-Za-z0-9_-]")
#: How an OpenAI tool message says the tool failed (the format has no error flag).
FAILED_TOOL_PREFIX: Final = "The tool failed with this error:\n"


def portable_tool_id(tool_id: str) -> str:
    """``tool_id`` if both providers accept it, else a deterministic safe replacement.

    The replacement keeps the readable safe characters and adds a hash of the original, so
    two different ids never collide and the same id always maps to the same result.
    """
    if _SAFE_ID.match(tool_id):
        return tool_id
    digest = hashlib.sha256(tool_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    readable = _UNSAFE_CHARS.sub("_", tool_id)[:28].strip("_")
    return f"{readable or 'call'}_{digest}"


def _arguments_json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


# --- OpenAI Chat Completions ---------------------------------------------------------------


def openai_messages(messages: Sequence[Message], system_prompt: str | None) -> list[dict[str, Any]]:
    """The ``messages`` array of a Chat Completions request."""
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    for message in messages:
        if isinstance(message, UserMessage | InternalMessage):
            out.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            if not message.content and not message.tool_calls:
                continue  # an empty step (e.g. interrupted before any text) says nothing
            # A string even when empty (null or no key is refused by some servers; see above).
            turn: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                turn["tool_calls"] = [
                    {
                        "id": portable_tool_id(call.id),
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": _arguments_json(call.arguments_dict()),
                        },
                    }
                    for call in message.tool_calls
                ]
            out.append(turn)
        elif isinstance(message, ToolMessage):
            content = message.content if message.success else FAILED_TOOL_PREFIX + message.content
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": portable_tool_id(message.tool_call_id),
                    "content": content,
                }
            )
        else:  # pragma: no cover - the Message union is closed
            raise TypeError(f"not a message: {message!r:.80}")
    return out


def openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": _plain(spec.parameters),
            },
        }
        for spec in tools
    ]


# --- Anthropic Messages --------------------------------------------------------------------


def anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array of a Messages request (the system prompt is a separate field)."""
    turns: list[dict[str, Any]] = []

    def add(role: str, block: dict[str, Any]) -> None:
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].append(block)
        else:
            turns.append({"role": role, "content": [block]})

    for message in messages:
        if isinstance(message, UserMessage | InternalMessage):
            if message.content.strip():  # Anthropic rejects empty text blocks
                add("user", {"type": "text", "text": message.content})
        elif isinstance(message, AssistantMessage):
            if message.content.strip() or message.tool_calls:
                for part in message.reasoning:
                    thinking = _anthropic_thinking(part)
                    if thinking is not None:
                        add("assistant", thinking)
            if message.content.strip():
                add("assistant", {"type": "text", "text": message.content})
            for call in message.tool_calls:
                add(
                    "assistant",
                    {
                        "type": "tool_use",
                        "id": portable_tool_id(call.id),
                        "name": call.name,
                        "input": call.arguments_dict(),
                    },
                )
        elif isinstance(message, ToolMessage):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": portable_tool_id(message.tool_call_id),
                "content": message.content,
            }
            if not message.success:
                block["is_error"] = True
            add("user", block)
        else:  # pragma: no cover - the Message union is closed
            raise TypeError(f"not a message: {message!r:.80}")

    _order_tool_results_first(turns)
    if turns and turns[-1]["role"] == "assistant":
        # A final assistant turn is a continuation prefix; Anthropic refuses trailing spaces.
        for block in turns[-1]["content"]:
            if block["type"] == "text":
                block["text"] = block["text"].rstrip()
    return turns


def _anthropic_thinking(part: Reasoning) -> dict[str, Any] | None:
    """The block that gives ``part`` back to Anthropic unchanged; ``None`` for an unsigned part."""
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    if part.signature is not None:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def _order_tool_results_first(turns: list[dict[str, Any]]) -> None:
    """Anthropic wants a user turn's tool_result blocks before its text (order kept otherwise)."""
    for turn in turns:
        if turn["role"] != "user":
            continue
        blocks = turn["content"]
        results = [b for b in blocks if b["type"] == "tool_result"]
        if results and blocks[: len(results)] != results:
            turn["content"] = results + [b for b in blocks if b["type"] != "tool_result"]


def anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "input_schema": _plain(spec.parameters),
        }
        for spec in tools
    ]


def _plain(value: Any) -> Any:
    """A JSON-ready copy of possibly read-only mappings and tuples."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
