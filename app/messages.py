"""The conversation's data: messages, tool calls, stop reasons, and their stable JSON form.

Every message is an immutable (frozen) dataclass. The JSON form carries a schema version
(``"v"``) so a database written today can be read by every later version; an unknown message
type or a newer schema version is refused with :class:`MessageFormatError` rather than guessed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final, TypeAlias, TypeVar

from .errors import MessageFormatError
from .parts import Content, FilePart, ImagePart, Part, TextPart, part_from_dict, part_to_dict
from .parts import content_text as _content_text

__all__ = [
    "MESSAGE_SCHEMA_VERSION",
    "AssistantMessage",
    "InternalMessage",
    "Message",
    "MessageFormatError",
    "Reasoning",
    "StopReason",
    "ToolCall",
    "ToolMessage",
    "ToolOutcome",
    "Usage",
    "UserMessage",
    "content_text",
    "effective_stop_reason",
    "message_from_dict",
    "message_from_json",
    "message_to_dict",
    "message_to_json",
    "parse_stop_reason",
]

MESSAGE_SCHEMA_VERSION: Final = 1


class StopReason(StrEnum):
    """Why a model step ended. Values are stable strings (they are stored)."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_OUTPUT = "max_output"
    INTERRUPTED = "interrupted"
    PAUSED = "paused"
    REFUSAL = "refusal"
    CONTEXT_FULL = "context_full"


class ToolOutcome(StrEnum):
    """What became of one tool call, as its result records it. Values are stable (stored).

    ``MAY_HAVE_RUN``: the call was interrupted in a way that leaves its effect unknown (the
    process died while it ran, or a sync tool outlived Stop and may still complete).
    """

    DONE = "done"
    FAILED = "failed"
    DENIED = "denied"
    CANCELLED = "cancelled"
    NOT_STARTED = "not_started"
    MAY_HAVE_RUN = "may_have_run"


def parse_stop_reason(value: StopReason | str | None) -> StopReason | str | None:
    """Return the enum member for a known value; an unknown value is kept as its raw string."""
    if value is None or isinstance(value, StopReason):
        return value
    try:
        return StopReason(value)
    except ValueError:
        return str(value)


def _freeze(value: Any) -> Any:
    """Deep read-only copy of JSON-like data, so a frozen message cannot be changed through it."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """The plain JSON form of data frozen by :func:`_freeze`."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asked for tool ``name`` with ``arguments``; ``id`` pairs it with its result."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.arguments, Mapping):
            raise MessageFormatError(
                f"tool call {self.id!r}: arguments must be a JSON object, "
                f"got {type(self.arguments).__name__}"
            )
        object.__setattr__(self, "arguments", _freeze(self.arguments))

    def __hash__(self) -> int:
        return hash((self.id, self.name, json.dumps(_thaw(self.arguments), sort_keys=True)))

    def __reduce__(self) -> tuple[type[ToolCall], tuple[str, str, dict[str, Any]]]:
        # The read-only mapping cannot be pickled or deep-copied itself; rebuild from plain data.
        return (type(self), (self.id, self.name, self.arguments_dict()))

    def arguments_dict(self) -> dict[str, Any]:
        """A fresh, mutable copy of the arguments (what a tool function receives)."""
        result: dict[str, Any] = _thaw(self.arguments)
        return result


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts a provider reported for one step (``None`` where it reported nothing)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Reasoning:
    """One part of what the model thought before answering (not the answer's text).

    ``text``: the thinking as the provider showed it (may be empty for a redacted part).
    ``signature``: Anthropic's signature of a thinking block, sent back unchanged.
    ``redacted``: the opaque data of an Anthropic ``redacted_thinking`` block.
    ``seconds``: how long the model thought, measured by the runtime from the first reasoning
    piece to the first text/tool piece (or the step's end); it is set on the first part of each
    stretch of thinking, so a step's total is the sum over its parts. For display only, so it
    takes no part in equality. A part with neither signature nor redacted data is "unsigned":
    it is kept and shown, but never sent back to a model.
    """

    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    seconds: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise MessageFormatError(
                f"reasoning field 'text' must be a string, got {self.text!r:.80}"
            )
        for key in ("signature", "redacted"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise MessageFormatError(
                    f"reasoning field {key!r} must be a string or null, got {value!r:.80}"
                )
        seconds = self.seconds
        if seconds is not None:
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or not math.isfinite(seconds)
                or seconds < 0
            ):
                raise MessageFormatError(
                    "reasoning field 'seconds' must be a non-negative number or null, "
                    f"got {seconds!r:.80}"
                )
            object.__setattr__(self, "seconds", float(seconds))

    @property
    def signed(self) -> bool:
        """True when the part can be sent back to Anthropic (signed or redacted)."""
        return self.signature is not None or self.redacted is not None


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the person typed: a plain string, or parts (text, images, files: :mod:`app.parts`).

    A list of parts is kept as a tuple; plain text stays a string (the SPEC's form).
    """

    content: Content

    def __post_init__(self) -> None:
        if isinstance(self.content, str):
            return
        if not isinstance(self.content, list | tuple):
            raise TypeError(
                f"message content must be a string or parts, got {type(self.content).__name__}"
            )
        parts = tuple(self.content)
        for part in parts:
            if not isinstance(part, TextPart | ImagePart | FilePart):
                raise TypeError(f"not a message part: {part!r:.80}")
        object.__setattr__(self, "content", parts)


def content_text(message: Message) -> str:
    """The plain text of any message: a user message's text parts, or its content."""
    return _content_text(message.content)


@dataclass(frozen=True, slots=True)
class InternalMessage:
    """Written by the runtime to the model (sent as a user turn, shown discreetly)."""

    content: str


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """One model step: text, tool calls, and why it stopped.

    ``stop_reason=None`` means "inferred": ``TOOL_USE`` if there are tool calls, else
    ``END_TURN`` (see :func:`effective_stop_reason`). ``reasoning`` is what the model thought
    before this step's text and calls, in order (never part of ``content``).
    """

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason | str | None = None
    model: str | None = None
    usage: Usage | None = None
    reasoning: tuple[Reasoning, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        object.__setattr__(self, "stop_reason", parse_stop_reason(self.stop_reason))
        reasoning = _all_of(
            self.reasoning, Reasoning, "assistant message reasoning must hold Reasoning parts"
        )
        object.__setattr__(self, "reasoning", reasoning)


_T = TypeVar("_T")


def _all_of(values: Iterable[object], kind: type[_T], what: str) -> tuple[_T, ...]:
    """``values`` as a tuple, each a ``kind``, or :class:`MessageFormatError`: ``what``, and the
    first value that is not one."""
    items = tuple(values)
    for item in items:
        if not isinstance(item, kind):
            raise MessageFormatError(f"{what}, got {item!r:.80}")
    return items  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """The answer to one tool call. ``success=False`` is a failed result (an error text).

    ``outcome`` says what became of the call (``None``: not recorded, e.g. a message saved
    before outcomes existed; read ``success`` and the text then). It is for the host's
    display only, so it takes no part in equality: the model sees the same answer either way.
    ``images`` are the images the tool returned (stored like a person's, by digest; equal by
    digest, never by bytes); ``content`` names each of them, so text-only paths read sensibly.
    Which of them a model is sent is decided per request (:mod:`app.providers.tool_images`).
    """

    tool_call_id: str
    name: str
    content: str
    success: bool = True
    outcome: ToolOutcome | None = field(default=None, kw_only=True, compare=False)
    images: tuple[ImagePart, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        if self.outcome is not None:  # its word is accepted too
            object.__setattr__(self, "outcome", ToolOutcome(self.outcome))
        if self.images:
            images = _all_of(self.images, ImagePart, "a tool result's images must be ImageParts")
            object.__setattr__(self, "images", images)


Message: TypeAlias = UserMessage | InternalMessage | AssistantMessage | ToolMessage


def effective_stop_reason(message: AssistantMessage) -> StopReason | str:
    """The stop reason with ``None`` resolved: ``TOOL_USE`` with tool calls, else ``END_TURN``."""
    if message.stop_reason is None:
        return StopReason.TOOL_USE if message.tool_calls else StopReason.END_TURN
    return message.stop_reason


# --- JSON form -------------------------------------------------------------------------------

_TYPE_NAMES: Final[dict[type, str]] = {
    UserMessage: "user",
    InternalMessage: "internal",
    AssistantMessage: "assistant",
    ToolMessage: "tool",
}


def message_to_dict(message: Message) -> dict[str, Any]:
    """The stable JSON-ready form of ``message`` (with ``"v"`` and ``"type"``)."""
    data: dict[str, Any] = {"v": MESSAGE_SCHEMA_VERSION, "type": _TYPE_NAMES[type(message)]}
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        data["content"] = [part_to_dict(part) for part in message.content]
    elif isinstance(message, UserMessage | InternalMessage):
        data["content"] = message.content
    elif isinstance(message, AssistantMessage):
        data["content"] = message.content
        data["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments_dict()}
            for c in message.tool_calls
        ]
        stop = message.stop_reason
        data["stop_reason"] = stop.value if isinstance(stop, StopReason) else stop
        data["model"] = message.model
        if message.usage is not None:
            data["usage"] = {
                "input_tokens": message.usage.input_tokens,
                "output_tokens": message.usage.output_tokens,
            }
        if message.reasoning:
            data["reasoning"] = [_reasoning_to_dict(part) for part in message.reasoning]
    else:
        data["tool_call_id"] = message.tool_call_id
        data["name"] = message.name
        data["content"] = message.content
        data["success"] = message.success
        if message.outcome is not None:
            data["outcome"] = message.outcome.value
        if message.images:  # absent when none: older rows and readers stay as they were
            data["images"] = [part_to_dict(image) for image in message.images]
    return data


def _reasoning_to_dict(part: Reasoning) -> dict[str, Any]:
    """Only the fields that are set (an empty text, a missing signature are left out)."""
    data: dict[str, Any] = {}
    if part.text:
        data["text"] = part.text
    if part.signature is not None:
        data["signature"] = part.signature
    if part.redacted is not None:
        data["redacted"] = part.redacted
    if part.seconds is not None:
        data["seconds"] = part.seconds
    return data


def _reasoning_from(value: Any) -> tuple[Reasoning, ...]:
    """The stored reasoning parts; absent or null (a message written before them) is ``()``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MessageFormatError(
            f"assistant message field 'reasoning' must be a list, got {value!r:.80}"
        )
    parts = []
    for raw in value:
        if not isinstance(raw, Mapping):
            raise MessageFormatError(f"each reasoning part must be a JSON object, got {raw!r:.80}")
        parts.append(
            Reasoning(
                text=raw.get("text", ""),
                signature=raw.get("signature"),
                redacted=raw.get("redacted"),
                seconds=raw.get("seconds"),
            )
        )
    return tuple(parts)


def _str(data: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise MessageFormatError(f"message field {key!r} must be a string, got {value!r:.80}")
    return value


def _user_content(value: Any) -> Content:
    """A user message's stored content: a string, or a list of parts."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise MessageFormatError(
            f"message field 'content' must be a string or a list of parts, got {value!r:.80}"
        )
    parts: list[Part] = []
    for raw in value:
        try:
            parts.append(part_from_dict(raw))
        except (ValueError, TypeError) as err:
            raise MessageFormatError(f"a user message part cannot be read: {err}") from err
    return tuple(parts)


def _tool_images(value: Any) -> tuple[ImagePart, ...]:
    """A tool result's stored images; absent (a row written before them) is ``()``."""
    if value is None:
        return ()
    parts = _user_content(value) if isinstance(value, list) else None
    if parts is None or not all(isinstance(p, ImagePart) for p in parts):
        raise MessageFormatError(f"tool message field 'images' must list images, got {value!r:.80}")
    return tuple(p for p in parts if isinstance(p, ImagePart))


def _outcome(value: Any) -> ToolOutcome | None:
    """A stored outcome; ``None`` when absent or written by a newer version with a new word."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise MessageFormatError(
            f"tool message field 'outcome' must be a string, got {value!r:.80}"
        )
    try:
        return ToolOutcome(value)
    except ValueError:
        return None


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Rebuild a message from :func:`message_to_dict` output; refuses what it cannot read."""
    if not isinstance(data, Mapping):
        raise MessageFormatError(f"a message must be a JSON object, got {type(data).__name__}")
    version = data.get("v", MESSAGE_SCHEMA_VERSION)
    if isinstance(version, bool) or not isinstance(version, int):
        raise MessageFormatError(f"message field 'v' must be an integer, got {version!r:.80}")
    if version > MESSAGE_SCHEMA_VERSION:
        raise MessageFormatError(
            f"this message was written by a newer Continuum (message schema {version!r}, "
            f"this version reads up to {MESSAGE_SCHEMA_VERSION}); update Continuum to read it"
        )
    kind = data.get("type")
    if kind == "user":
        return UserMessage(content=_user_content(data.get("content")))
    if kind == "internal":
        return InternalMessage(content=_str(data, "content"))
    if kind == "assistant":
        raw_calls = data.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise MessageFormatError("assistant message field 'tool_calls' must be a list")
        calls = []
        for raw in raw_calls:
            if not isinstance(raw, Mapping):
                raise MessageFormatError("each tool call must be a JSON object")
            calls.append(ToolCall(_str(raw, "id"), _str(raw, "name"), raw.get("arguments") or {}))
        raw_usage = data.get("usage")
        usage = None
        if isinstance(raw_usage, Mapping):
            usage = Usage(raw_usage.get("input_tokens"), raw_usage.get("output_tokens"))
        model = data.get("model")
        stop = data.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise MessageFormatError(f"stop_reason must be a string, got {stop!r:.80}")
        return AssistantMessage(
            content=_str(data, "content", ""),
            tool_calls=tuple(calls),
            stop_reason=stop,
            model=model if isinstance(model, str) else None,
            usage=usage,
            reasoning=_reasoning_from(data.get("reasoning")),
        )
    if kind == "tool":
        success = data.get("success", True)
        if not isinstance(success, bool):
            raise MessageFormatError("tool message field 'success' must be true or false")
        return ToolMessage(
            tool_call_id=_str(data, "tool_call_id"),
            name=_str(data, "name"),
            content=_str(data, "content"),
            success=success,
            outcome=_outcome(data.get("outcome")),
            images=_tool_images(data.get("images")),
        )
    raise MessageFormatError(f"unknown message type {kind!r}")


def message_to_json(message: Message) -> str:
    """Compact JSON text of a message (UTF-8 safe; lone surrogates are escaped, not lost)."""
    data = message_to_dict(message)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates (e.g. from a broken paste) cannot be stored as UTF-8; the escaped
        # form keeps them exactly and reads back to the same string.
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text


def message_from_json(text: str) -> Message:
    """Parse :func:`message_to_json` output."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise MessageFormatError(f"a stored message is not valid JSON: {err}") from err
    return message_from_dict(data)
