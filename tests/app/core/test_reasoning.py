"""Reasoning as data (issue 13): its JSON form, its checks, and how a step's pieces are folded.

The fold is driven by a fake clock, so ``seconds`` (first reasoning piece → first text/tool
piece, or the step's end) is asserted exactly.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from app import (
    AssistantMessage,
    MessageFormatError,
    Reasoning,
    ReasoningComplete,
    ReasoningDelta,
    StepEnd,
    StopReason,
    TextDelta,
    ToolCall,
    ToolCallComplete,
    message_from_json,
    message_to_dict,
    message_to_json,
)
from app.model import ModelEvent, StepBuilder

# --- the JSON form ---------------------------------------------------------------------------


def test_reasoning_round_trips_with_only_the_set_fields() -> None:
    message = AssistantMessage(
        "The answer.",
        reasoning=(
            Reasoning("Let me think.", signature="sig-ÄÖ/+=", seconds=2.5),
            Reasoning(redacted="opaque=="),
            Reasoning("unsigned thought"),
        ),
    )
    data = message_to_dict(message)
    assert data["reasoning"] == [
        {"text": "Let me think.", "signature": "sig-ÄÖ/+=", "seconds": 2.5},
        {"redacted": "opaque=="},
        {"text": "unsigned thought"},
    ]
    back = message_from_json(message_to_json(message))
    assert back == message
    assert isinstance(back, AssistantMessage)
    assert [p.seconds for p in back.reasoning] == [2.5, None, None]
    assert back.content == "The answer."  # reasoning is never the answer's text


def test_no_reasoning_leaves_no_key_and_old_json_reads_empty() -> None:
    assert "reasoning" not in message_to_dict(AssistantMessage("plain"))
    old = '{"v":1,"type":"assistant","content":"hi","tool_calls":[],"stop_reason":null}'
    message = message_from_json(old)
    assert isinstance(message, AssistantMessage) and message.reasoning == ()
    null = message_from_json(old[:-1] + ',"reasoning":null}')
    assert isinstance(null, AssistantMessage) and null.reasoning == ()


def test_unknown_fields_of_a_part_are_ignored() -> None:
    text = json.dumps(
        {"v": 1, "type": "assistant", "content": "", "reasoning": [{"text": "t", "new": 1}]}
    )
    message = message_from_json(text)
    assert isinstance(message, AssistantMessage) and message.reasoning == (Reasoning("t"),)


@pytest.mark.parametrize(
    ("reasoning", "words"),
    [
        ("thought", "must be a list"),
        ({"text": "t"}, "must be a list"),
        (["t"], "must be a JSON object"),
        ([{"text": 5}], "'text' must be a string"),
        ([{"signature": 5}], "'signature' must be a string"),
        ([{"redacted": ["x"]}], "'redacted' must be a string"),
        ([{"seconds": "2"}], "'seconds' must be a non-negative number"),
        ([{"seconds": True}], "'seconds' must be a non-negative number"),
        ([{"seconds": -1}], "'seconds' must be a non-negative number"),
    ],
)
def test_bad_reasoning_is_refused_clearly(reasoning: Any, words: str) -> None:
    text = json.dumps({"v": 1, "type": "assistant", "content": "", "reasoning": reasoning})
    with pytest.raises(MessageFormatError, match=words):
        message_from_json(text)


def test_parts_are_checked_when_made() -> None:
    with pytest.raises(MessageFormatError, match="non-negative"):
        Reasoning("t", seconds=math.nan)
    with pytest.raises(MessageFormatError, match="Reasoning parts"):
        AssistantMessage("x", reasoning=("not a part",))  # type: ignore[arg-type]
    assert Reasoning(seconds=3).seconds == 3.0
    assert Reasoning("t", seconds=1.0) == Reasoning("t", seconds=9.0)  # display only
    assert Reasoning("t", signature="s").signed and Reasoning(redacted="r").signed
    assert not Reasoning("t").signed


# --- folding a step --------------------------------------------------------------------------


class Clock:
    """Each event is fed at the time given with it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fold(
    timed: list[tuple[float, ModelEvent]], *, end_at: float | None = None
) -> tuple[Reasoning, ...]:
    clock = Clock()
    builder = StepBuilder(clock)
    for at, event in timed:
        clock.now = at
        builder.feed(event)
    if end_at is not None:
        clock.now = end_at
    return builder.to_message(stop_reason=StopReason.INTERRUPTED, model=None).reasoning


SIGNED = Reasoning("Think about it.", signature="sig-1")
CALL = ToolCall("c1", "read_note", {"path": "a"})

FOLDS: list[tuple[str, list[tuple[float, ModelEvent]], float | None, list[tuple[Any, ...]]]] = [
    (
        "deltas only, then text: one unsigned part, timed to the text",
        [(1.0, ReasoningDelta("Hmm, ")), (2.0, ReasoningDelta("yes.")), (4.5, TextDelta("A"))],
        None,
        [("Hmm, yes.", None, None, 3.5)],
    ),
    (
        "deltas then the complete part: the complete part stands for them",
        [
            (1.0, ReasoningDelta("Think ")),
            (2.0, ReasoningDelta("about it.")),
            (3.0, ReasoningComplete(SIGNED)),
            (3.5, ToolCallComplete(CALL)),
        ],
        None,
        [("Think about it.", "sig-1", None, 2.5)],
    ),
    (
        "a thinking part and a redacted one: the time goes on the first",
        [
            (1.0, ReasoningDelta("Think about it.")),
            (2.0, ReasoningComplete(SIGNED)),
            (2.0, ReasoningComplete(Reasoning(redacted="blob"))),
            (6.0, TextDelta("A")),
        ],
        None,
        [("Think about it.", "sig-1", None, 5.0), ("", None, "blob", None)],
    ),
    (
        "cut while thinking: the uncompleted text is kept, timed to the step's end",
        [(10.0, ReasoningDelta("half a tho"))],
        12.0,
        [("half a tho", None, None, 2.0)],
    ),
    (
        "the step ends (StepEnd) while thinking",
        [(0.0, ReasoningDelta("only thought")), (7.0, StepEnd(StopReason.MAX_OUTPUT))],
        99.0,
        [("only thought", None, None, 7.0)],
    ),
    (
        "empty pieces are not thinking; empty text does not stop the clock",
        [
            (0.0, ReasoningDelta("")),
            (1.0, ReasoningDelta("x")),
            (2.0, TextDelta("")),
            (3.0, TextDelta("A")),
        ],
        None,
        [("x", None, None, 2.0)],
    ),
    (
        "thinking again after the text: a second part with its own time",
        [
            (0.0, ReasoningDelta("first")),
            (1.0, TextDelta("A")),
            (5.0, ReasoningDelta("second")),
            (8.0, TextDelta("B")),
        ],
        None,
        [("first", None, None, 1.0), ("second", None, None, 3.0)],
    ),
    ("no reasoning at all", [(0.0, TextDelta("A"))], None, []),
    (
        "an empty complete part is dropped",
        [(0.0, ReasoningComplete(Reasoning())), (1.0, TextDelta("A"))],
        None,
        [],
    ),
]


@pytest.mark.parametrize(("timed", "end_at", "expected"), [f[1:] for f in FOLDS],
                         ids=[f[0] for f in FOLDS])  # fmt: skip
def test_a_steps_reasoning_is_folded(
    timed: list[tuple[float, ModelEvent]], end_at: float | None, expected: list[tuple[Any, ...]]
) -> None:
    parts = fold(timed, end_at=end_at)
    assert [(p.text, p.signature, p.redacted, p.seconds) for p in parts] == expected


def test_reasoning_is_kept_whatever_the_stop_and_never_joins_the_text() -> None:
    builder = StepBuilder()
    for event in (ReasoningDelta("thinking"), TextDelta("answer"), ToolCallComplete(CALL)):
        builder.feed(event)
    for stop in (StopReason.TOOL_USE, StopReason.MAX_OUTPUT, StopReason.REFUSAL, "weird"):
        message = builder.to_message(stop_reason=stop, model="m")
        assert message.content == "answer"
        assert [p.text for p in message.reasoning] == ["thinking"]
