"""Reasoning on the transcript's rows (pure rows, no Qt): label, live thinking, saved parts, copy."""

from __future__ import annotations

import pytest

from app import AssistantMessage, Reasoning, StopReason, ToolCall, UserMessage
from ui.transcript.rows import (
    ItemKind,
    Rows,
    TranscriptItem,
    copy_text,
    reasoning_label,
    rows_from_history,
)


def _answer(*parts: Reasoning, text: str = "The answer") -> TranscriptItem:
    item = TranscriptItem(ItemKind.ASSISTANT, text)
    item.set_reasoning(parts)
    return item


@pytest.mark.parametrize(
    ("parts", "label"),
    [
        ((), ""),
        ((Reasoning("hmm", seconds=3.0),), "Thought for 3 s"),
        ((Reasoning("a", seconds=1.2), Reasoning("b", seconds=1.9)), "Thought for 3 s"),
        ((Reasoning("a", seconds=0.2),), "Thought for less than 1 s"),
        ((Reasoning("a", seconds=75.0),), "Thought for 1 min 15 s"),
        ((Reasoning("a", seconds=120.0),), "Thought for 2 min"),
        ((Reasoning("hmm"),), "Thought"),
        ((Reasoning("a", seconds=2.0), Reasoning("b")), "Thought for 2 s"),
        (
            (Reasoning("a", signature="s", seconds=4.0), Reasoning(redacted="xx")),
            "Thought for 4 s (some of it hidden by the provider)",
        ),
        ((Reasoning(redacted="xx"),), "Thought (hidden by the provider)"),
    ],
)
def test_label_from_saved_parts(parts: tuple[Reasoning, ...], label: str) -> None:
    assert reasoning_label(_answer(*parts)) == label


def test_saved_parts_text_joined_and_redacted_counted() -> None:
    item = _answer(Reasoning("one"), Reasoning(redacted="opaque"), Reasoning("two"))
    assert item.reasoning == "one\n\ntwo"
    assert item.reasoning_hidden == 1
    assert "opaque" not in item.reasoning


def test_labels_only_on_answers() -> None:
    user = TranscriptItem(ItemKind.USER, "hi", reasoning="x")
    assert reasoning_label(user) == ""


def test_history_rows_carry_reasoning_collapsed() -> None:
    rows = rows_from_history(
        [
            UserMessage("hi"),
            AssistantMessage("Hello", reasoning=(Reasoning("Let me think", seconds=3.0),)),
        ]
    )
    answer = rows.items[1]
    assert answer.text == "Hello"  # never part of the answer's text
    assert answer.reasoning == "Let me think"
    assert answer.reasoning_seconds == 3.0
    assert not answer.expanded and not answer.thinking


def test_a_tool_step_with_reasoning_and_no_text_gets_a_row() -> None:
    call = ToolCall("c1", "read_file", {"path": "a"})
    rows = rows_from_history(
        [UserMessage("hi"), AssistantMessage("", (call,), reasoning=(Reasoning("read it"),))]
    )
    assert [item.kind for item in rows.items] == [ItemKind.USER, ItemKind.ASSISTANT, ItemKind.TOOL]
    assert rows.items[1].reasoning == "read it"
    # Without reasoning, a tool-only step is just its card (as before).
    plain = rows_from_history([AssistantMessage("", (call,))])
    assert [item.kind for item in plain.items] == [ItemKind.TOOL]


def test_live_thinking_then_text_then_saved() -> None:
    rows = Rows()
    first = rows.grow_reasoning("Let me ")
    assert len(first.insert) == 1  # the live row opens on the first thought
    item = first.insert[0]
    assert item.streaming and item.thinking
    assert reasoning_label(item) == "Thinking…"
    second = rows.grow_reasoning("see.")
    assert second.changed == [item] and not second.insert
    assert item.reasoning == "Let me see."
    rows.grow("Answer")  # no arrival times given: the duration comes with the saved message
    assert not item.thinking
    assert reasoning_label(item) == "Thought"
    rows.message_saved(
        AssistantMessage("Answer", reasoning=(Reasoning("Let me see.", seconds=2.6),))
    )
    assert not item.streaming
    assert reasoning_label(item) == "Thought for 3 s"


def test_reasoning_without_text_is_not_thinking_after_the_stream_ends() -> None:
    rows = Rows()
    item = rows.grow_reasoning("hmm").insert[0]
    rows.finish_streaming(stop_reason=StopReason.INTERRUPTED)
    assert not item.thinking
    assert reasoning_label(item) == "Thought"


def test_saved_step_with_only_reasoning_keeps_its_row() -> None:
    rows = Rows()
    rows.append(rows.grow_reasoning("hmm").insert)
    item = rows.items[0]
    change = rows.message_saved(
        AssistantMessage("", stop_reason=StopReason.INTERRUPTED, reasoning=(Reasoning("hmm"),))
    )
    assert item not in change.remove
    assert item.reasoning == "hmm"


def test_saved_step_without_reasoning_or_text_removes_the_live_row() -> None:
    rows = Rows()
    rows.append(rows.start_streaming().insert)
    item = rows.streaming
    change = rows.message_saved(AssistantMessage("", (ToolCall("c1", "t", {}),)))
    assert item in change.remove


def test_empty_reasoning_delta_changes_nothing() -> None:
    rows = Rows()
    assert not rows.grow_reasoning("")
    assert rows.streaming is None


@pytest.mark.parametrize(
    ("expanded", "expected"),
    [
        (False, "The answer"),
        (True, "Thought for 3 s:\nsecret plan\n\nThe answer"),
    ],
)
def test_copy_includes_reasoning_only_when_expanded(expanded: bool, expected: str) -> None:
    item = _answer(Reasoning("secret plan", seconds=3.0))
    item.expanded = expanded
    assert copy_text(item) == expected


def test_accessible_text_names_the_label_not_the_reasoning() -> None:
    item = _answer(Reasoning("secret plan", seconds=3.0))
    text = item.accessible_text()
    assert "Thought for 3 s" in text and "secret plan" not in text


def test_live_duration_from_the_arrival_times_until_the_saved_figure() -> None:
    rows = Rows()
    item = rows.grow_reasoning("hmm", at=100.0).insert[0]
    rows.grow_reasoning(" more", at=101.0)  # the first piece's time counts
    rows.grow("Answer", at=104.2)
    assert item.reasoning_seconds == pytest.approx(4.2)
    assert reasoning_label(item) == "Thought for 4 s"
    rows.grow(" more", at=110.0)  # no longer thinking: unchanged
    assert item.reasoning_seconds == pytest.approx(4.2)
    rows.message_saved(
        AssistantMessage("Answer more", reasoning=(Reasoning("hmm more", seconds=3.9),))
    )
    assert item.reasoning_seconds == 3.9
