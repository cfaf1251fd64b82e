"""The store's fast decoder gives exactly what the general one gives, row for row."""

from __future__ import annotations

import json

import pytest

from app.messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    MessageFormatError,
    Reasoning,
    StopReason,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    Usage,
    UserMessage,
    message_from_json,
    message_to_json,
)
from app.parts import TextPart
from app.storage.decode import decode

MESSAGES: list[Message] = [
    UserMessage("hello"),
    UserMessage(""),
    UserMessage('quotes " and \\ backslashes, \n newlines, \t tabs, é, 😀, \u2028'),
    UserMessage("a lone \ud800 surrogate"),
    UserMessage((TextPart("parts"),)),
    InternalMessage("the runtime says"),
    AssistantMessage("plain"),
    AssistantMessage('with "quotes"', stop_reason=StopReason.END_TURN, model="m-1"),
    AssistantMessage("cut", stop_reason=StopReason.MAX_OUTPUT, usage=Usage(10, 20)),
    AssistantMessage("unknown stop", stop_reason="some_new_reason"),
    AssistantMessage("usage half", usage=Usage(None, 3)),
    AssistantMessage("", tool_calls=(ToolCall("c1", "read", {"path": "a"}),)),
    AssistantMessage("thought", reasoning=(Reasoning("hmm", signature="s"),)),
    ToolMessage("c1", "read", "file text"),
    ToolMessage("c1", "read", "failed", success=False, outcome=ToolOutcome.FAILED),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: repr(m)[:40])
def test_a_written_message_reads_back_equal_and_as_the_general_path(message: Message) -> None:
    data = message_to_json(message)
    got = decode(data)
    assert got == message_from_json(data) == message
    assert type(got) is type(message)
    if isinstance(message, AssistantMessage):
        assert isinstance(got, AssistantMessage)
        assert got.stop_reason == message.stop_reason and type(got.stop_reason) is type(
            message.stop_reason
        )
        assert got.usage == message.usage
    if isinstance(message, ToolMessage):
        assert isinstance(got, ToolMessage) and got.outcome == message.outcome


# Rows the fast path must not take at face value: each gives what the general path gives.
ODD_ROWS = [
    '{"v":1,"type":"user","content":"x"} ',  # trailing space: json.loads accepts
    '{"v":1,"type":"user","content":"x","extra":1}',  # unknown keys are ignored
    '{"v":1,"type":"assistant","content":"x","v":2,"tool_calls":[]}',  # a later v wins
    '{"v":1,"type":"assistant","content":"x","tool_calls":[],"stop_reason":null,'
    '"model":null,"usage":{"input_tokens":1}}',
    '{"v":1,"type":"assistant","content":"x","tool_calls":[],"stop_reason":null,"model":7}',
    '{"v":1,"type":"assistant","content":"x","tool_calls":[],"stop_reason":["no"],"model":null}',
    '{"v":1,"type":"tool","tool_call_id":"c","name":"n","content":"t","success":"yes"}',
    '{"v":1,"type":"tool","tool_call_id":"c","name":"n","content":"t","success":true,'
    '"outcome":"a-new-word"}',
    '{"type":"user","content":"no version"}',
    '{"v":true,"type":"user","content":"x"}',
]
BAD_ROWS = [
    "",
    "{not json",
    '{"v":1,"type":"user","content":"raw \x01 control"}',
    '{"v":1,"type":"user","content":"unterminated}',
    '{"v":1,"type":"assistant","content":"x",}',
    '{"v":9,"type":"user","content":"newer"}',
    '{"v":1,"type":"video"}',
    "[1, 2]",
    '{"v":1,"type":"user","content":"x"} trailing',
]


@pytest.mark.parametrize("data", ODD_ROWS)
def test_odd_rows_read_as_the_general_path_reads_them(data: str) -> None:
    try:
        expected: Message | str = message_from_json(data)
    except MessageFormatError as err:
        expected = type(err).__name__
    try:
        got: Message | str = decode(data)
    except MessageFormatError as err:
        got = type(err).__name__
    assert got == expected
    json.loads(data)  # each is JSON: the point is the fields


@pytest.mark.parametrize("data", BAD_ROWS)
def test_unreadable_rows_are_refused_as_the_general_path_refuses_them(data: str) -> None:
    with pytest.raises(MessageFormatError):
        message_from_json(data)
    with pytest.raises(MessageFormatError):
        decode(data)


def test_the_fast_assistant_sets_every_field() -> None:
    import dataclasses

    from app.messages import AssistantMessage
    from app.storage.decode import ASSISTANT_FIELDS, _assistant_message

    assert ASSISTANT_FIELDS == tuple(f.name for f in dataclasses.fields(AssistantMessage))
    fast = _assistant_message("hi", None, "m", None)
    assert fast == AssistantMessage("hi", model="m") and hash(fast) == hash(fast)
