"""Reading stored messages fast: the JSON of the common kinds decoded without the general path.

Loading a long conversation decodes every row's JSON into a frozen message. The general
:func:`~app.messages.message_from_json` checks every field of every kind; most rows are a
plain user message, an assistant step without tool calls or reasoning, or a tool result, whose
JSON (as :func:`~app.messages.message_to_json` writes it) has exactly known keys. For those,
:func:`decode` checks the same things in a few type tests and builds the message directly; any
other row — parts, tool calls, reasoning, an older or newer form, anything unexpected — goes
the general way, which also gives the errors. Both ways give equal messages (tests compare).
An assistant step's fields, once checked here, are set directly (:func:`_assistant_message`):
its constructor's own checks cost as much as the rest of its decoding.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..messages import (
    MESSAGE_SCHEMA_VERSION,
    AssistantMessage,
    InternalMessage,
    Message,
    StopReason,
    ToolMessage,
    ToolOutcome,
    Usage,
    UserMessage,
    message_from_dict,
    message_from_json,
)

__all__ = ["decode"]

# The C scanner json.loads ends in, without its two whitespace regex matches per call (our
# rows are compact JSON with no surrounding whitespace).
_scan: Final = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

# The C string decoder (strict: a raw control character is an error, as in json.loads).
_scanstring: Final = json.decoder.scanstring  # type: ignore[attr-defined]
_USER_START: Final = f'{{"v":{MESSAGE_SCHEMA_VERSION},"type":"user","content":"'
_ASSISTANT_START: Final = f'{{"v":{MESSAGE_SCHEMA_VERSION},"type":"assistant","content":"'
#: An assistant step with no tool calls, stop reason, model nor usage (after its content).
_PLAIN_ASSISTANT_END: Final = ',"tool_calls":[],"stop_reason":null,"model":null}'

_STOPS: Final[dict[str | None, StopReason | None]] = {None: None} | {s.value: s for s in StopReason}
_OUTCOMES: Final[dict[str | None, ToolOutcome | None]] = {None: None} | {
    o.value: o for o in ToolOutcome
}
_USER: Final = frozenset({"v", "type", "content"})
_ASSISTANT: Final = frozenset({"v", "type", "content", "tool_calls", "stop_reason", "model"})
_ASSISTANT_USAGE: Final = _ASSISTANT | {"usage"}
_START_KEYS: Final = frozenset({"v", "type", "content"})
_TOOL: Final = frozenset({"v", "type", "tool_call_id", "name", "content", "success"})
_TOOL_OUTCOME: Final = _TOOL | {"outcome"}


def decode(data: str) -> Message:
    """The message stored as ``data`` (raises :class:`~app.messages.MessageFormatError` as
    :func:`~app.messages.message_from_json` does)."""
    if data.startswith(_USER_START):
        message = _text_row(data, len(_USER_START), UserMessage)
        if message is not None:
            return message
    elif data.startswith(_ASSISTANT_START):
        message = _assistant_row(data)
        if message is not None:
            return message
    return _general(data)


def _text_row(data: str, start: int, kind: type[UserMessage | InternalMessage]) -> Message | None:
    """A ``{"v":1,"type":…,"content":"…"}`` row: only its string is decoded."""
    try:
        content, end = _scanstring(data, start)
    except ValueError:
        return None
    if end != len(data) - 1 or data[end] != "}":
        return None
    return kind(content)


def _assistant_row(data: str) -> Message | None:
    """An assistant row: its content string decoded alone, then the short rest (or none)."""
    try:
        content, end = _scanstring(data, len(_ASSISTANT_START))
    except ValueError:
        return None
    if data.endswith(_PLAIN_ASSISTANT_END) and end == len(data) - len(_PLAIN_ASSISTANT_END):
        return _assistant_message(content, None, None, None)
    if not data.startswith(",", end):
        return None
    try:
        rest, rest_end = _scan("{" + data[end + 1 :], 0)
    except (StopIteration, ValueError):
        return None
    if rest_end != len(data) - end or type(rest) is not dict or not _START_KEYS.isdisjoint(rest):
        return None
    rest["content"] = content
    return _assistant(rest, content, rest.keys() | {"v", "type"})


def _general(data: str) -> Message:
    """Any row: its whole JSON decoded, the common kinds built directly, the rest checked by
    :func:`~app.messages.message_from_dict`."""
    try:
        obj, end = _scan(data, 0)
    except (StopIteration, ValueError):
        return message_from_json(data)  # raises the general path's error
    if end != len(data) or type(obj) is not dict:
        return message_from_json(data)
    message = _common(obj)
    return message if message is not None else message_from_dict(obj)


def _common(obj: dict[str, Any]) -> Message | None:
    """The message for a row of a common kind in its current form, else None."""
    if obj.get("v") != MESSAGE_SCHEMA_VERSION or type(obj["v"]) is not int:
        return None
    kind = obj.get("type")
    keys = obj.keys()
    content = obj.get("content")
    if kind == "user":
        if type(content) is str and keys == _USER:
            return UserMessage(content)
        return None
    if kind == "assistant":
        return _assistant(obj, content, keys)
    if kind == "tool":
        if type(content) is not str or not (keys == _TOOL or keys == _TOOL_OUTCOME):
            return None
        call_id, name, success = obj["tool_call_id"], obj["name"], obj["success"]
        outcome = obj.get("outcome")
        if type(call_id) is not str or type(name) is not str or type(success) is not bool:
            return None
        if (outcome is not None and type(outcome) is not str) or outcome not in _OUTCOMES:
            return None
        return ToolMessage(call_id, name, content, success, outcome=_OUTCOMES[outcome])
    if kind == "internal" and type(content) is str and keys == _USER:
        return InternalMessage(content)
    return None


def _assistant(obj: dict[str, Any], content: Any, keys: Any) -> Message | None:
    if type(content) is not str or obj.get("tool_calls") != [] or "reasoning" in obj:
        return None
    if not (keys == _ASSISTANT or keys == _ASSISTANT_USAGE):
        return None
    stop, model = obj["stop_reason"], obj["model"]
    if stop is not None and type(stop) is not str or stop not in _STOPS:
        return None
    if model is not None and type(model) is not str:
        return None
    usage = None
    if "usage" in obj:
        raw = obj["usage"]
        if type(raw) is not dict or raw.keys() != {"input_tokens", "output_tokens"}:
            return None
        usage = Usage(raw["input_tokens"], raw["output_tokens"])
    return _assistant_message(content, _STOPS[stop], model, usage)


_new: Final = object.__new__
_set: Final = object.__setattr__
#: Every field of an assistant message, as :func:`_assistant_message` sets them (a test
#: compares this with the class, so a new field cannot be left unset).
ASSISTANT_FIELDS: Final = ("content", "tool_calls", "stop_reason", "model", "usage", "reasoning")


def _assistant_message(
    content: str, stop: StopReason | None, model: str | None, usage: Usage | None
) -> AssistantMessage:
    """``AssistantMessage(content, (), stop, model, usage)`` without ``__post_init__``'s
    checks and conversions, which these checked values need none of."""
    message: AssistantMessage = _new(AssistantMessage)
    _set(message, "content", content)
    _set(message, "tool_calls", ())
    _set(message, "stop_reason", stop)
    _set(message, "model", model)
    _set(message, "usage", usage)
    _set(message, "reasoning", ())
    return message
