"""History conversion for both providers, and tool-call ids that both accept."""

from __future__ import annotations

import re

import pytest

from app.messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from app.model import ToolSpec
from app.providers import anthropic_messages, openai_messages, portable_tool_id
from app.providers.convert import FAILED_TOOL_PREFIX, anthropic_tools, openai_tools

ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")

HISTORY: list[Message] = [
    UserMessage("Read notes.txt and list the folder"),
    AssistantMessage(
        "Sure.",
        tool_calls=(
            ToolCall("call_1", "read_file", {"path": "notes.txt"}),
            ToolCall("functions.list_directory:1", "list_directory", {"path": "."}),
        ),
    ),
    ToolMessage("call_1", "read_file", "hello"),
    ToolMessage("functions.list_directory:1", "list_directory", "Permission denied", False),
    InternalMessage("Your previous response was interrupted; redo it from the start."),
    AssistantMessage("", stop_reason=StopReason.INTERRUPTED),  # empty: nothing to send
    AssistantMessage("Here is what I found.  "),
]


def test_openai_history() -> None:
    odd_id = portable_tool_id("functions.list_directory:1")
    assert openai_messages(HISTORY, "Be brief.") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Read notes.txt and list the folder"},
        {
            "role": "assistant",
            "content": "Sure.",
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "read_file", "arguments": '{"path":"notes.txt"}'}},
                {"id": odd_id, "type": "function",
                 "function": {"name": "list_directory", "arguments": '{"path":"."}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "hello"},
        {"role": "tool", "tool_call_id": odd_id,
         "content": FAILED_TOOL_PREFIX + "Permission denied"},
        {"role": "user",
         "content": "Your previous response was interrupted; redo it from the start."},
        {"role": "assistant", "content": "Here is what I found.  "},
    ]  # fmt: skip


def test_openai_tool_only_step_has_empty_string_content() -> None:
    # "" not null: llama-cpp-python and older Ollama refuse null (see test_interop_llama.py)
    out = openai_messages([AssistantMessage("", (ToolCall("c", "t", {}),))], None)
    assert out[0]["content"] == "" and out[0]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_anthropic_history_merges_turns_and_marks_errors() -> None:
    odd_id = portable_tool_id("functions.list_directory:1")
    assert anthropic_messages(HISTORY) == [
        {"role": "user",
         "content": [{"type": "text", "text": "Read notes.txt and list the folder"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "call_1", "name": "read_file",
             "input": {"path": "notes.txt"}},
            {"type": "tool_use", "id": odd_id, "name": "list_directory", "input": {"path": "."}},
        ]},
        {"role": "user", "content": [  # results and the internal note share ONE user turn
            {"type": "tool_result", "tool_use_id": "call_1", "content": "hello"},
            {"type": "tool_result", "tool_use_id": odd_id, "content": "Permission denied",
             "is_error": True},
            {"type": "text",
             "text": "Your previous response was interrupted; redo it from the start."},
        ]},
        # the empty interrupted step is dropped; the last assistant text loses trailing spaces
        {"role": "assistant", "content": [{"type": "text", "text": "Here is what I found."}]},
    ]  # fmt: skip


def test_anthropic_merges_consecutive_user_turns_and_skips_empty_text() -> None:
    out = anthropic_messages(
        [UserMessage("one"), UserMessage("   "), InternalMessage("two"), AssistantMessage(" ")]
    )
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "one"},
                                     {"type": "text", "text": "two"}]},
    ]  # fmt: skip


@pytest.mark.parametrize(
    "tool_id",
    ["call_abc", "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "functions.read_file:0", "call abc/1",
     "", "ü" * 3, "x" * 64, "call_" + "a" * 35],
)  # fmt: skip
def test_portable_ids_are_accepted_by_both_providers(tool_id: str) -> None:
    safe = portable_tool_id(tool_id)
    assert ANTHROPIC_ID.match(safe) and len(safe) <= 40
    assert portable_tool_id(tool_id) == safe  # deterministic
    if ANTHROPIC_ID.match(tool_id) and len(tool_id) <= 40:
        assert safe == tool_id  # ids already fine are kept


def test_portable_ids_do_not_collide() -> None:
    ids = ["a.b", "a:b", "a b", "a_b", "x" * 41, "x" * 42]
    assert len({portable_tool_id(i) for i in ids}) == len(ids)


def test_tool_specs() -> None:
    spec = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
    assert openai_tools([spec]) == [{"type": "function", "function": {
        "name": "read_file", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {}}}}]  # fmt: skip
    schema = {"type": "object", "properties": {}}
    assert anthropic_tools([spec]) == [
        {"name": "read_file", "description": "Read a file.", "input_schema": schema}
    ]
