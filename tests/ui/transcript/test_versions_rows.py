"""Pure tables for branches in the transcript: which buttons a row has, where the version
arrows go on a branch, and what they say."""

from __future__ import annotations

import pytest

from app import AssistantMessage, StoredMessage, ToolCall, ToolMessage, UserMessage
from ui.transcript.branching import place_versions, rows_from_branch, version_label, version_step
from ui.transcript.layout import row_actions
from ui.transcript.rows import ItemKind, TranscriptItem

U, A = ItemKind.USER, ItemKind.ASSISTANT


@pytest.mark.parametrize(
    ("kind", "saved", "versions", "can_branch", "expected"),
    [
        (U, False, "", True, ["copy"]),  # not saved yet: nothing to branch from
        (U, True, "", True, ["edit", "copy"]),
        (U, True, "2 / 3", True, ["edit", "copy", "previous", "", "next"]),  # arrows rightmost
        (U, True, "2 / 3", False, ["copy", "previous", "", "next"]),  # read-only: switch only
        (A, False, "", True, ["copy"]),
        (A, True, "", True, ["copy", "regenerate"]),
        (A, True, "1 / 2", True, ["previous", "", "next", "copy", "regenerate"]),
        (A, True, "1 / 2", False, ["previous", "", "next", "copy"]),
    ],
)
def test_row_actions(
    kind: ItemKind, saved: bool, versions: str, can_branch: bool, expected: list[str]
) -> None:
    actions = row_actions(kind, saved, versions, can_branch=can_branch)
    assert [a.name for a in actions] == expected
    assert all(a.tip for a in actions)  # every button says what it does


def item(versions: tuple[int, ...], shown: int | None) -> TranscriptItem:
    made = TranscriptItem(ItemKind.USER, "x", versions=versions, version_seq=shown)
    return made


@pytest.mark.parametrize(
    ("versions", "shown", "label", "previous", "next_"),
    [
        ((), None, "", None, None),
        ((3,), 3, "", None, None),
        ((3, 5), 3, "1 / 2", None, 5),
        ((3, 5, 9), 5, "2 / 3", 3, 9),
        ((3, 5, 9), 9, "3 / 3", 5, None),
        ((3, 5), 7, "", None, None),  # a seq that is not one of them: no arrows
    ],
)
def test_version_label_and_steps(
    versions: tuple[int, ...],
    shown: int | None,
    label: str,
    previous: int | None,
    next_: int | None,
) -> None:
    row = item(versions, shown)
    assert version_label(row) == label
    assert version_step(row, -1) == previous
    assert version_step(row, +1) == next_


def record(seq: int, message: object, parent: int | None) -> StoredMessage:
    return StoredMessage(seq, "r", message, 0.0, parent)  # type: ignore[arg-type]


def test_arrows_go_on_the_question_and_under_the_answers_last_text() -> None:
    call = ToolCall("c", "look", {})
    branch = [
        record(1, UserMessage("q1"), None),
        record(4, AssistantMessage("a1 v2"), 1),  # versions (2, 4): the answer's first message
        record(5, UserMessage("q2 v2"), 4),  # versions (3, 5)? no: (5, 8) below
        record(9, AssistantMessage("looking", tool_calls=(call,)), 5),  # versions (6, 9)
        record(10, ToolMessage("c", "look", "ok"), 9),
        record(11, AssistantMessage("found it"), 10),
    ]
    rows = rows_from_branch(branch, [(2, 4), (5, 8), (6, 9)])
    shown = [(i.kind.value, i.text, i.versions, i.version_seq) for i in rows.items]
    assert shown == [
        ("user", "q1", (), None),
        ("assistant", "a1 v2", (2, 4), 4),
        ("user", "q2 v2", (5, 8), 5),
        ("assistant", "looking", (), None),  # not the answer's last text row
        ("tool", "", (), None),
        ("assistant", "found it", (6, 9), 9),
    ]
    # Placing the same versions again changes nothing; new versions change only those rows.
    assert place_versions(rows.items, [(2, 4), (5, 8), (6, 9)]) == []
    changed = place_versions(rows.items, [(2, 4, 12), (5, 8), (6, 9)])
    assert [i.text for i in changed] == ["a1 v2"]
    assert rows.items[1].versions == (2, 4, 12)


def test_an_answer_whose_first_step_only_asked_for_tools_gets_the_arrows() -> None:
    call = ToolCall("c", "look", {})
    branch = [
        record(1, UserMessage("q"), None),
        record(3, AssistantMessage(tool_calls=(call,)), 1),  # no text: only a tool card
        record(4, ToolMessage("c", "look", "ok"), 3),
        record(5, AssistantMessage("done"), 4),
    ]
    rows = rows_from_branch(branch, [(2, 3)])
    answer = [i for i in rows.items if i.kind is ItemKind.ASSISTANT]
    assert [(i.text, i.versions, i.version_seq) for i in answer] == [("done", (2, 3), 3)]
