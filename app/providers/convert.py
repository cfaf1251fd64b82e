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
- A tool result's images (:mod:`app.providers.tool_images` decides which are sent: only to a
  model known to read images; otherwise its text says why not). Anthropic: the ``tool_result``
  content becomes a list, its text and then ``image`` blocks. OpenAI-compatible ``tool`` turns
  carry text only, so the images of one round's results go in one ``user`` turn right after
  the round's last tool turn, each result's images after a line naming its call.
- A user message of parts (:mod:`app.parts`): images go as OpenAI ``image_url`` parts with a
  ``data:`` URL, or as Anthropic base64 ``image`` blocks; a file goes as a text part that names
  it (:func:`~app.parts.file_prompt`). An OpenAI-compatible message without images is sent as
  one string (servers without vision often refuse a list of parts). An image whose bytes are
  not at hand is an :class:`~app.parts.AttachmentError`, raised before anything is sent.
"""

from __future__ import annotations

import base64
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
from ..parts import (
    AttachmentError,
    FilePart,
    ImagePart,
    Part,
    TextPart,
    content_parts,
    file_prompt,
)
from .tool_images import numbered, tool_images

__all__ = [
    "FAILED_TOOL_PREFIX",
    "anthropic_messages",
    "anthropic_tools",
    "has_images",
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


def has_images(messages: Sequence[Message]) -> bool:
    """True when some user message of ``messages`` holds an image (the person's: a tool's
    images never count, see :mod:`app.providers.tool_images`)."""
    return any(
        isinstance(m, UserMessage)
        and not isinstance(m.content, str)
        and any(isinstance(p, ImagePart) for p in m.content)
        for m in messages
    )


def _image_base64(part: ImagePart) -> str:
    if part.data is None:
        raise AttachmentError(
            f"The image {part.name or part.digest[:12]!r} of an earlier message is missing "
            "from this conversation's database, so it cannot be sent. Remove it by editing "
            "that message, or start a new conversation."
        )
    return base64.b64encode(part.data).decode("ascii")


def _openai_user_content(parts: Sequence[Part]) -> str | list[dict[str, Any]]:
    """A user turn's content: one string unless it holds an image."""
    if not any(isinstance(p, ImagePart) for p in parts):
        return "\n\n".join(_part_text(p) for p in parts if _part_text(p))
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ImagePart):
            out.append(_openai_image(part))
        elif _part_text(part):
            out.append({"type": "text", "text": _part_text(part)})
    return out


def _part_text(part: Part) -> str:
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, FilePart):
        return file_prompt(part)
    return ""


def _anthropic_user_blocks(parts: Sequence[Part]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ImagePart):
            blocks.append(_anthropic_image(part))
        elif _part_text(part).strip():  # Anthropic rejects empty text blocks
            blocks.append({"type": "text", "text": _part_text(part)})
    return blocks


# --- OpenAI Chat Completions ---------------------------------------------------------------


def openai_messages(
    messages: Sequence[Message],
    system_prompt: str | None,
    *,
    reads_images: bool | None = None,
    model: str = "",
) -> list[dict[str, Any]]:
    """The ``messages`` array of a Chat Completions request; ``reads_images``: whether
    ``model`` reads images (tools' images are sent only when it is ``True``)."""
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    waiting: list[dict[str, Any]] = []  # this round's tool images, sent after its last result
    for message in messages:
        if waiting and not isinstance(message, ToolMessage):
            out.append(_openai_image_turn(waiting))
            waiting = []
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            out.append({"role": "user", "content": _openai_user_content(message.content)})
        elif isinstance(message, UserMessage | InternalMessage):
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
            sent = tool_images(message, reads_images, model=model, later=True)
            content = sent.text if message.success else FAILED_TOOL_PREFIX + sent.text
            call_id = portable_tool_id(message.tool_call_id)
            out.append({"role": "tool", "tool_call_id": call_id, "content": content})
            if sent.images:
                line = f"The {numbered(sent.numbers)} of the result of tool call {call_id} "
                waiting.append({"type": "text", "text": line + f"({message.name}):"})
                waiting.extend(_openai_image(image) for image in sent.images)
        else:  # pragma: no cover - the Message union is closed
            raise TypeError(f"not a message: {message!r:.80}")
    if waiting:
        out.append(_openai_image_turn(waiting))
    return out


def _openai_image(part: ImagePart) -> dict[str, Any]:
    url = f"data:{part.media_type};base64,{_image_base64(part)}"
    return {"type": "image_url", "image_url": {"url": url}}


def _openai_image_turn(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The user turn that carries a round's tool images (a tool turn cannot)."""
    return {"role": "user", "content": parts}


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


def _anthropic_image(part: ImagePart) -> dict[str, Any]:
    source = {"type": "base64", "media_type": part.media_type, "data": _image_base64(part)}
    return {"type": "image", "source": source}


def anthropic_messages(
    messages: Sequence[Message], *, reads_images: bool | None = None, model: str = ""
) -> list[dict[str, Any]]:
    """The ``messages`` array of a Messages request (the system prompt is a separate field);
    ``reads_images``: whether ``model`` reads images (as for :func:`openai_messages`)."""
    turns: list[dict[str, Any]] = []

    def add(role: str, block: dict[str, Any]) -> None:
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].append(block)
        else:
            turns.append({"role": role, "content": [block]})

    for message in messages:
        if isinstance(message, UserMessage | InternalMessage):
            for user_block in _anthropic_user_blocks(content_parts(message.content)):
                add("user", user_block)
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
            sent = tool_images(message, reads_images, model=model)
            content: str | list[dict[str, Any]] = sent.text
            if sent.images:  # its text (Anthropic refuses an empty text block), then images
                text = [{"type": "text", "text": sent.text}] if sent.text.strip() else []
                content = text + [_anthropic_image(image) for image in sent.images]
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": portable_tool_id(message.tool_call_id),
                "content": content,
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
