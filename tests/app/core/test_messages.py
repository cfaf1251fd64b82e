"""Messages: immutable values with a stable, versioned JSON form (SPEC A1)."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from app.messages import (
    MESSAGE_SCHEMA_VERSION,
    AssistantMessage,
    InternalMessage,
    Message,
    MessageFormatError,
    StopReason,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    effective_stop_reason,
    message_from_dict,
    message_from_json,
    message_to_dict,
    message_to_json,
    parse_stop_reason,
)

SAMPLES: list[Message] = [
    UserMessage("Hello"),
    UserMessage(""),
    InternalMessage("Continue exactly where you stopped."),
    AssistantMessage(),
    AssistantMessage("Plain answer", stop_reason=StopReason.END_TURN, model="m-1"),
    AssistantMessage(
        "Let me look.",
        (
            ToolCall("c1", "search", {"q": "weather", "filters": {"days": [1, 2]}, "n": 2.5}),
            ToolCall("c2", "noop"),
        ),
        StopReason.TOOL_USE,
        "claude-x",
        Usage(100, 20),
    ),
    AssistantMessage("partial", stop_reason=StopReason.INTERRUPTED, usage=Usage(None, 3)),
    AssistantMessage("future", stop_reason="brand_new_reason"),
    ToolMessage("c1", "search", "sunny"),
    ToolMessage("c2", "noop", "Error: boom", success=False),
]


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_json_round_trip_for_every_type(message: Message) -> None:
    text = message_to_json(message)
    again = message_from_json(text)
    assert again == message
    assert type(again) is type(message)
    assert message_to_json(again) == text  # stable: writing it again gives the same text
    assert message_from_dict(json.loads(text)) == message
    assert json.loads(text)["v"] == MESSAGE_SCHEMA_VERSION


def test_json_form_is_stable() -> None:
    # What is stored today must read the same forever: these are the exact stored shapes.
    assert message_to_dict(UserMessage("hi")) == {"v": 1, "type": "user", "content": "hi"}
    assert message_to_dict(InternalMessage("go")) == {"v": 1, "type": "internal", "content": "go"}
    assert message_to_dict(ToolMessage("c", "t", "out", success=False)) == {
        "v": 1,
        "type": "tool",
        "tool_call_id": "c",
        "name": "t",
        "content": "out",
        "success": False,
    }
    assert message_to_dict(
        AssistantMessage(
            "a", (ToolCall("c", "t", {"x": [1]}),), StopReason.MAX_OUTPUT, "m", Usage(1, 2)
        )
    ) == {
        "v": 1,
        "type": "assistant",
        "content": "a",
        "tool_calls": [{"id": "c", "name": "t", "arguments": {"x": [1]}}],
        "stop_reason": "max_output",
        "model": "m",
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    assert message_to_dict(AssistantMessage("a")) == {
        "v": 1,
        "type": "assistant",
        "content": "a",
        "tool_calls": [],
        "stop_reason": None,
        "model": None,
    }
    assert message_to_json(UserMessage("日本")) == '{"v":1,"type":"user","content":"日本"}'


def test_old_and_minimal_json_is_read() -> None:
    # No "v" (earliest form), missing optional fields, and unknown extra fields are all fine.
    assert message_from_json('{"type": "user", "content": "x"}') == UserMessage("x")
    assert message_from_json('{"v": 1, "type": "assistant"}') == AssistantMessage()
    assert message_from_json(
        '{"v": 1, "type": "tool", "tool_call_id": "c", "name": "t", "content": "r"}'
    ) == ToolMessage("c", "t", "r", True)
    assert message_from_json(
        '{"v": 1, "type": "user", "content": "x", "added_later": {"a": 1}}'
    ) == UserMessage("x")
    assert message_from_json(
        '{"v": 1, "type": "assistant", "tool_calls": [{"id": "c", "name": "t"}]}'
    ) == AssistantMessage(tool_calls=(ToolCall("c", "t", {}),))


# --- ToolCall -------------------------------------------------------------------------------


def test_tool_call_positional_order() -> None:
    call = ToolCall("call-7", "read_file", {"path": "a.txt"})
    assert (call.id, call.name, call.arguments_dict()) == ("call-7", "read_file", {"path": "a.txt"})
    assert [f.name for f in dataclasses.fields(ToolCall)] == ["id", "name", "arguments"]
    assert ToolCall("x", "y").arguments_dict() == {}
    assert [f.name for f in dataclasses.fields(ToolMessage)] == [
        "tool_call_id",
        "name",
        "content",
        "success",
        "outcome",
        "images",
    ]
    # Positional order is unchanged: what came after ``success`` is keyword-only.
    assert all(f.kw_only for f in dataclasses.fields(ToolMessage)[4:])
    assert [f.name for f in dataclasses.fields(AssistantMessage)] == [
        "content",
        "tool_calls",
        "stop_reason",
        "model",
        "usage",
        "reasoning",
    ]
    assert dataclasses.fields(AssistantMessage)[-1].kw_only  # positional order is unchanged


def test_tool_call_arguments_cannot_be_mutated() -> None:
    source: dict[str, Any] = {"path": "a.txt", "nested": {"k": [1, 2]}, "items": [{"x": 1}]}
    call = ToolCall("c", "t", source)
    with pytest.raises(TypeError):
        call.arguments["path"] = "evil"  # type: ignore[index]
    with pytest.raises(TypeError):
        call.arguments["nested"]["k"] = []
    with pytest.raises(AttributeError):
        call.arguments["nested"]["k"].append(3)
    with pytest.raises(TypeError):
        call.arguments["items"][0]["x"] = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.arguments = {}  # type: ignore[misc]
    # Changing the dict it was built from changes nothing either.
    source["path"] = "changed"
    source["nested"]["k"].append(99)
    assert call.arguments_dict() == {"path": "a.txt", "nested": {"k": [1, 2]}, "items": [{"x": 1}]}


def test_arguments_dict_is_a_fresh_mutable_copy() -> None:
    call = ToolCall("c", "t", {"list": [1], "obj": {"a": 1}})
    first = call.arguments_dict()
    first["list"].append(2)
    first["obj"]["b"] = 2
    first["new"] = True
    assert call.arguments_dict() == {"list": [1], "obj": {"a": 1}}
    assert call.arguments_dict() is not call.arguments_dict()
    assert type(first["list"]) is list and type(first["obj"]) is dict


def test_tool_call_arguments_must_be_an_object() -> None:
    with pytest.raises(MessageFormatError, match="JSON object"):
        ToolCall("c", "t", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(MessageFormatError):
        message_from_json(
            '{"type": "assistant", "tool_calls": [{"id": "c", "name": "t", "arguments": [1]}]}'
        )


def test_messages_are_immutable_hashable_and_copyable() -> None:
    message = SAMPLES[5]
    assert isinstance(message, AssistantMessage)
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        UserMessage("x").content = "y"  # type: ignore[misc]
    rebuilt = message_from_json(message_to_json(message))
    assert hash(rebuilt) == hash(message)
    assert len({message, rebuilt, *SAMPLES}) == len(SAMPLES)
    assert ToolCall("c", "t", {"a": 1, "b": 2}) == ToolCall("c", "t", {"b": 2, "a": 1})
    assert hash(ToolCall("c", "t", {"a": 1, "b": 2})) == hash(ToolCall("c", "t", {"b": 2, "a": 1}))
    assert copy.deepcopy(message) == message
    assert pickle.loads(pickle.dumps(message)) == message
    assert dataclasses.replace(message, content="new").tool_calls == message.tool_calls


def test_tool_calls_given_as_a_list_become_a_tuple() -> None:
    calls = [ToolCall("c", "t")]
    message = AssistantMessage("x", calls)  # type: ignore[arg-type]
    calls.append(ToolCall("d", "u"))
    assert message.tool_calls == (ToolCall("c", "t"),)
    assert isinstance(message.tool_calls, tuple)


# --- stop reasons ---------------------------------------------------------------------------


def test_stop_reason_values_are_stable() -> None:
    assert {r.name: r.value for r in StopReason} == {
        "END_TURN": "end_turn",
        "TOOL_USE": "tool_use",
        "MAX_OUTPUT": "max_output",
        "INTERRUPTED": "interrupted",
        "PAUSED": "paused",
        "REFUSAL": "refusal",
        "CONTEXT_FULL": "context_full",
    }


def test_effective_stop_reason_infers_none() -> None:
    with_calls = AssistantMessage("x", (ToolCall("c", "t"),))
    assert with_calls.stop_reason is None
    assert effective_stop_reason(with_calls) is StopReason.TOOL_USE
    assert effective_stop_reason(AssistantMessage("done")) is StopReason.END_TURN
    assert effective_stop_reason(AssistantMessage()) is StopReason.END_TURN
    # An explicit reason wins over inference, even one that "contradicts" the tool calls.
    assert (
        effective_stop_reason(AssistantMessage("x", (ToolCall("c", "t"),), StopReason.MAX_OUTPUT))
        is StopReason.MAX_OUTPUT
    )
    assert effective_stop_reason(AssistantMessage("x", stop_reason="weird")) == "weird"
    # None stays None through storage: it is inferred when read, never written down.
    assert message_from_json(message_to_json(with_calls)).stop_reason is None  # type: ignore[union-attr]


def test_known_stop_reason_strings_become_the_enum() -> None:
    message = AssistantMessage("x", stop_reason="max_output")
    assert message.stop_reason is StopReason.MAX_OUTPUT
    assert parse_stop_reason("paused") is StopReason.PAUSED
    assert parse_stop_reason(StopReason.REFUSAL) is StopReason.REFUSAL
    assert parse_stop_reason(None) is None


def test_unknown_stop_reason_is_kept_as_its_raw_string() -> None:
    message = AssistantMessage("x", stop_reason="model_context_window_exceeded_v9")
    assert type(message.stop_reason) is str
    assert message.stop_reason == "model_context_window_exceeded_v9"
    text = message_to_json(message)
    assert json.loads(text)["stop_reason"] == "model_context_window_exceeded_v9"
    again = message_from_json(text)
    assert isinstance(again, AssistantMessage)
    assert type(again.stop_reason) is str
    assert again.stop_reason == "model_context_window_exceeded_v9"
    assert again == message
    assert effective_stop_reason(again) == "model_context_window_exceeded_v9"


# --- refusing what cannot be read -----------------------------------------------------------


def test_newer_schema_version_is_refused() -> None:
    newer = {"v": MESSAGE_SCHEMA_VERSION + 1, "type": "user", "content": "from the future"}
    with pytest.raises(MessageFormatError, match="newer") as info:
        message_from_json(json.dumps(newer))
    assert "update Continuum" in str(info.value)
    with pytest.raises(MessageFormatError):
        message_from_dict(newer)


def test_unknown_type_is_refused() -> None:
    with pytest.raises(MessageFormatError, match="unknown message type 'system'"):
        message_from_json('{"v": 1, "type": "system", "content": "x"}')
    with pytest.raises(MessageFormatError, match="unknown message type None"):
        message_from_json('{"v": 1, "content": "x"}')


@pytest.mark.parametrize(
    "text",
    [
        "not json at all",
        "",
        "[]",
        '"a string"',
        "null",
        '{"v": "1", "type": "user", "content": "x"}',
        '{"v": true, "type": "user", "content": "x"}',
        '{"v": 1.5, "type": "user", "content": "x"}',
        '{"v": 1, "type": "user"}',
        '{"v": 1, "type": "user", "content": 5}',
        '{"v": 1, "type": "internal", "content": null}',
        '{"v": 1, "type": "tool", "tool_call_id": "c", "name": "t", "content": "r", '
        '"success": "yes"}',
        '{"v": 1, "type": "tool", "name": "t", "content": "r"}',
        '{"v": 1, "type": "assistant", "tool_calls": {"id": "c"}}',
        '{"v": 1, "type": "assistant", "tool_calls": ["c"]}',
        '{"v": 1, "type": "assistant", "tool_calls": [{"id": 1, "name": "t"}]}',
        '{"v": 1, "type": "assistant", "stop_reason": 3}',
        '{"v": 1, "type": "assistant", "content": ["a"]}',
    ],
)
def test_malformed_json_is_refused_with_message_format_error(text: str) -> None:
    with pytest.raises(MessageFormatError):
        message_from_json(text)


def test_message_format_error_is_a_value_error() -> None:
    assert issubclass(MessageFormatError, ValueError)


# --- text that is hard to store -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["\ud800", "a\udfffb", "lone \ud83d then 😀 then \udc00", "\x00 nul", "👩‍👩‍👧 مرحبا"],
)
def test_awkward_text_survives_json(text: str) -> None:
    messages: list[Message] = [
        UserMessage(text),
        InternalMessage(text),
        AssistantMessage(text, (ToolCall(text, text, {text: [text, {text: text}]}),), text, text),
        ToolMessage(text, text, text),
    ]
    for message in messages:
        encoded = message_to_json(message)
        encoded.encode("utf-8")  # storable as UTF-8 (raises on an unescaped lone surrogate)
        assert message_from_json(encoded) == message


def test_a_split_surrogate_pair_reads_back_as_its_character() -> None:
    # Two code units that form a pair are indistinguishable from the character once escaped;
    # reading back the character (what the text meant) is the expected, documented outcome.
    again = message_from_json(message_to_json(UserMessage("\ud83d\ude00 and \ud800")))
    assert again == UserMessage("😀 and \ud800")


def test_lone_surrogate_is_escaped_but_normal_text_is_not() -> None:
    assert "\\ud800" in message_to_json(UserMessage("\ud800"))
    assert message_from_json(message_to_json(UserMessage("\ud800"))).content == "\ud800"  # type: ignore[union-attr]
    plain = message_to_json(UserMessage("Grüße 😀"))
    assert "Grüße 😀" in plain  # readable in the database, not \\u-escaped
