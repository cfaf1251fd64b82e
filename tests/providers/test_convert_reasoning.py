"""Reasoning in the history sent to each provider (issue 13).

Anthropic gets signed and redacted parts back unchanged, first in that assistant message's
blocks; unsigned parts are never sent; OpenAI-compatible servers get no reasoning at all.
"""

from __future__ import annotations

import json

import pytest

from app.messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    Reasoning,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from app.providers import anthropic_messages, openai_messages

SIGNED = Reasoning("Think:  the note first.  ", signature="EqQBCkYIBhgC+/sig==", seconds=3.0)
REDACTED = Reasoning(redacted="EmwKAhgBEgy3va3pzix/LafPsn4a")
UNSIGNED = Reasoning("An OpenAI-compatible server's reasoning_content.")
CALL = ToolCall("toolu_1", "read_note", {"path": "a"})
THINKING = {"type": "thinking", "thinking": SIGNED.text, "signature": SIGNED.signature}
REDACTED_BLOCK = {"type": "redacted_thinking", "data": REDACTED.redacted}


def test_signed_parts_go_first_in_the_turn_unchanged_and_unsigned_ones_are_dropped() -> None:
    history: list[Message] = [
        UserMessage("Read a."),
        AssistantMessage("Reading.", tool_calls=(CALL,), reasoning=(SIGNED, UNSIGNED, REDACTED)),
        ToolMessage(CALL.id, CALL.name, "hello"),
    ]
    turns = anthropic_messages(history)
    assert turns[1] == {
        "role": "assistant",
        "content": [
            THINKING,  # its text is not stripped: the signature covers it
            REDACTED_BLOCK,
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": CALL.id, "name": CALL.name, "input": {"path": "a"}},
        ],
    }


def test_tool_only_turn_carries_its_thinking() -> None:
    history: list[Message] = [
        UserMessage("Read a."),
        AssistantMessage("", tool_calls=(CALL,), reasoning=(SIGNED,)),
        ToolMessage(CALL.id, CALL.name, "hello"),
    ]
    assert anthropic_messages(history)[1]["content"][0] == THINKING


@pytest.mark.parametrize(
    "reasoning", [(SIGNED,), (REDACTED,), (UNSIGNED,), (SIGNED, UNSIGNED)], ids=str
)
def test_a_step_with_only_reasoning_sends_nothing(reasoning: tuple[Reasoning, ...]) -> None:
    # Anthropic refuses an assistant turn that ends with a thinking block.
    history: list[Message] = [
        UserMessage("Hi"),
        AssistantMessage("", stop_reason=StopReason.INTERRUPTED, reasoning=reasoning),
        InternalMessage("Redo it."),
    ]
    assert [t["role"] for t in anthropic_messages(history)] == ["user"]
    assert [m["role"] for m in openai_messages(history, None)] == ["user", "user"]


def test_a_final_assistant_prefix_keeps_its_thinking_text_exact() -> None:
    turns = anthropic_messages([UserMessage("Hi"), AssistantMessage("Half  ", reasoning=(SIGNED,))])
    assert turns[-1]["content"] == [THINKING, {"type": "text", "text": "Half"}]


def test_openai_compatible_gets_no_reasoning() -> None:
    history: list[Message] = [
        UserMessage("Read a."),
        AssistantMessage("Reading.", tool_calls=(CALL,), reasoning=(SIGNED, UNSIGNED, REDACTED)),
        ToolMessage(CALL.id, CALL.name, "hello"),
        AssistantMessage("Done.", reasoning=(UNSIGNED,)),
    ]
    out = openai_messages(history, None)
    assert out[1] == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {"id": CALL.id, "type": "function",
             "function": {"name": "read_note", "arguments": '{"path":"a"}'}},
        ],
    }  # fmt: skip
    assert out[-1] == {"role": "assistant", "content": "Done."}
    text = json.dumps(out)
    for word in (SIGNED.text, UNSIGNED.text, REDACTED.redacted or "", "reasoning", "thinking"):
        assert word not in text
