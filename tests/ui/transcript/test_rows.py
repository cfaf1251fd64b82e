"""The transcript's rows without Qt: history → rows, events → changes, a tool's outcome → state."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from app import (
    CANCELLED_TOOL_TEXT,
    DENIED_TOOL_TEXT,
    NOT_STARTED_TOOL_TEXT,
    AssistantMessage,
    InternalMessage,
    Message,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from app.messages import ToolOutcome
from app.resume import CONTINUE_TEXT, RECOVERED_TOOL_TEXT
from app.tools import MAY_STILL_COMPLETE
from ui.transcript.rows import (
    ItemKind,
    Rows,
    ToolState,
    rows_from_history,
    shown_stop_reason,
    tool_state,
)

CALL = ToolCall("c1", "work", {"n": 1})


def test_rows_module_needs_no_qt() -> None:
    """rows.py imports only the standard library and ``app`` (no Qt, nothing of ``ui``)."""
    import ui.transcript.rows as rows

    tree = ast.parse(Path(rows.__file__).read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported |= {
        node.module or "."
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    relative = [
        node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level > 0
    ]
    assert not relative
    assert "app" in imported
    assert all(
        name.split(".")[0] in sys.stdlib_module_names
        or name.split(".")[0] == "app"
        or name == "__future__"
        for name in imported
    ), imported


@pytest.mark.parametrize(
    ("outcome", "success", "content", "state"),
    [
        (ToolOutcome.DONE, True, "ok", ToolState.DONE),
        (ToolOutcome.FAILED, False, "boom", ToolState.FAILED),
        (ToolOutcome.DENIED, False, DENIED_TOOL_TEXT, ToolState.DENIED),
        (ToolOutcome.CANCELLED, False, CANCELLED_TOOL_TEXT, ToolState.CANCELLED),
        (ToolOutcome.NOT_STARTED, False, NOT_STARTED_TOOL_TEXT, ToolState.NOT_RUN),
        (ToolOutcome.MAY_HAVE_RUN, False, RECOVERED_TOOL_TEXT, ToolState.UNKNOWN),
        # The outcome is the truth, whatever the text says.
        (ToolOutcome.FAILED, False, DENIED_TOOL_TEXT, ToolState.FAILED),
        (ToolOutcome.NOT_STARTED, False, "any words", ToolState.NOT_RUN),
        (ToolOutcome.MAY_HAVE_RUN, False, "timed out", ToolState.UNKNOWN),
        (ToolOutcome.DONE, True, DENIED_TOOL_TEXT, ToolState.DONE),
        # Saved before outcomes existed: read the success flag and the core's fixed texts.
        (None, True, "ok", ToolState.DONE),
        (None, False, "boom", ToolState.FAILED),
        (None, False, DENIED_TOOL_TEXT, ToolState.DENIED),
        (None, True, DENIED_TOOL_TEXT, ToolState.DONE),  # a tool that printed those words
        (None, False, CANCELLED_TOOL_TEXT, ToolState.CANCELLED),
        (None, False, NOT_STARTED_TOOL_TEXT, ToolState.NOT_RUN),
        (None, False, RECOVERED_TOOL_TEXT, ToolState.UNKNOWN),
        (None, False, f"it {MAY_STILL_COMPLETE}: check", ToolState.UNKNOWN),
    ],
)
def test_tool_state_table(
    outcome: ToolOutcome | None, success: bool, content: str, state: ToolState
) -> None:
    assert tool_state(ToolMessage("c1", "work", content, success=success, outcome=outcome)) is state


@pytest.mark.parametrize(
    ("reason", "shown"),
    [
        (None, None),
        (StopReason.END_TURN, None),
        (StopReason.TOOL_USE, None),
        (StopReason.MAX_OUTPUT, "max_output"),
        (StopReason.INTERRUPTED, "interrupted"),
        ("something_new", "something_new"),
    ],
)
def test_shown_stop_reason_table(reason: StopReason | str | None, shown: str | None) -> None:
    assert shown_stop_reason(reason) == shown


def _shape(rows: Rows) -> list[tuple[str, str, str | None]]:
    return [(i.kind.value, i.text, i.state.value if i.state else None) for i in rows.items]


@pytest.mark.parametrize(
    ("history", "shape"),
    [
        ([], []),
        (
            [UserMessage("hi"), AssistantMessage("hello")],
            [("user", "hi", None), ("assistant", "hello", None)],
        ),
        # A step with a call: a text row and a card; the answer updates the card, adds no row.
        (
            [
                UserMessage("go"),
                AssistantMessage("on it", (CALL,)),
                ToolMessage("c1", "work", "42", outcome=ToolOutcome.DONE),
            ],
            [("user", "go", None), ("assistant", "on it", None), ("tool", "", "done")],
        ),
        # No text: only the card. A call without an answer was cut off while it ran.
        (
            [UserMessage("go"), AssistantMessage("", (CALL,))],
            [("user", "go", None), ("tool", "", "unknown")],
        ),
        (
            [
                UserMessage("go"),
                AssistantMessage("", (CALL,)),
                ToolMessage("c1", "work", NOT_STARTED_TOOL_TEXT, success=False),
            ],
            [("user", "go", None), ("tool", "", "not_run")],
        ),
        # A result whose call is not on screen gets its own card.
        (
            [ToolMessage("zz", "lost", "x", success=False, outcome=ToolOutcome.FAILED)],
            [("tool", "", "failed")],
        ),
        # An internal message is a short note.
        ([InternalMessage(CONTINUE_TEXT)], [("note", "Continued after the output limit", None)]),
    ],
)
def test_rows_from_history_table(
    history: list[Message], shape: list[tuple[str, str, str | None]]
) -> None:
    assert _shape(rows_from_history(history)) == shape


def test_a_continued_answer_is_joined_and_a_cut_one_has_a_footer() -> None:
    rows = rows_from_history(
        [
            UserMessage("long"),
            AssistantMessage("part one", stop_reason=StopReason.MAX_OUTPUT),
            InternalMessage(CONTINUE_TEXT),
            AssistantMessage("part two"),
        ]
    )
    first, note, second = rows.items[1:]
    assert first.stop_reason == "max_output" and not first.joined
    assert note.kind is ItemKind.NOTE and note.detail == CONTINUE_TEXT
    assert second.joined and second.stop_reason is None
    # A history that ends on the continue note: the next live answer joins it.
    rows = rows_from_history([UserMessage("x"), InternalMessage(CONTINUE_TEXT)])
    change = rows.start_streaming()
    assert change.insert[0].joined


def test_events_return_changes_and_leave_the_list_to_the_adapter() -> None:
    rows = Rows()
    change = rows.add_user("go")
    assert [i.kind for i in change.insert] == [ItemKind.USER] and rows.items == []
    rows.append(change.insert)
    change = rows.start_streaming()
    live = change.insert[0]
    assert rows.streaming is live and live.streaming
    rows.append(change.insert)
    assert not rows.start_streaming()  # already open
    version = live.version
    change = rows.grow("Hel")
    assert change.changed == [live] and live.text == "Hel" and live.version > version
    assert not rows.grow("")
    # The saved message is the truth; its calls become cards after the text.
    change = rows.message_saved(AssistantMessage("Hello", (CALL,)))
    assert change.changed == [live] and live.text == "Hello" and not live.streaming
    assert [i.state for i in change.insert] == [ToolState.RUNNING]
    assert rows.streaming is None
    rows.append(change.insert)
    card = rows.tool("c1")
    assert card is not None
    assert not rows.tool_called(CALL)  # one card per call id
    assert rows.unsettled_tools() == ["c1"]
    change = rows.tool_result(
        ToolMessage("c1", "work", "stopped first", success=False, outcome=ToolOutcome.NOT_STARTED)
    )
    assert change.changed == [card] and card.state is ToolState.NOT_RUN
    assert card.result == "stopped first" and rows.unsettled_tools() == []


def test_an_empty_saved_step_removes_its_live_row() -> None:
    rows = Rows()
    live = rows.start_streaming().insert[0]
    rows.append([live])
    change = rows.message_saved(AssistantMessage(""))
    assert change.remove == [live] and change.insert == [] and rows.streaming is None


def test_stop_mid_stream_keeps_a_draft_and_remove_drafts_takes_it_away() -> None:
    rows = Rows()
    rows.append(rows.start_streaming().insert)
    rows.grow("half an ans")
    change = rows.finish_streaming(unsaved=True)
    draft = change.changed[0]
    assert draft.kind is ItemKind.DRAFT and "not saved" in draft.detail
    assert rows.streaming is None
    assert rows.remove_drafts().remove == [draft]
    assert not rows.finish_streaming()


def test_stop_reason_of_a_live_answer_is_kept() -> None:
    rows = Rows()
    rows.append(rows.start_streaming().insert)
    change = rows.finish_streaming(stop_reason="interrupted")
    assert change.changed[0].stop_reason == "interrupted"


@pytest.mark.parametrize(
    ("saved", "before", "after"),
    [
        # The saved answer decides; a card with none may or may not have run.
        (
            [
                ToolMessage(
                    "c1", "work", CANCELLED_TOOL_TEXT, success=False, outcome=ToolOutcome.CANCELLED
                )
            ],
            ToolState.RUNNING,
            ToolState.CANCELLED,
        ),
        (
            [
                ToolMessage(
                    "c1",
                    "work",
                    NOT_STARTED_TOOL_TEXT,
                    success=False,
                    outcome=ToolOutcome.NOT_STARTED,
                )
            ],
            ToolState.RUNNING,
            ToolState.NOT_RUN,
        ),
        ([], ToolState.RUNNING, ToolState.UNKNOWN),
        ([], ToolState.AWAITING_APPROVAL, ToolState.UNKNOWN),
        # Settled cards are left alone.
        ([ToolMessage("c1", "work", "boom", success=False)], ToolState.DONE, ToolState.DONE),
    ],
)
def test_settle_table(saved: list[Message], before: ToolState, after: ToolState) -> None:
    rows = Rows()
    rows.append(rows.tool_called(CALL).insert)
    rows.set_tool_state("c1", before)
    rows.settle([UserMessage("go"), AssistantMessage("", (CALL,)), *saved], ["c1"])
    card = rows.tool("c1")
    assert card is not None and card.state is after


def test_settle_touches_only_the_calls_it_is_given() -> None:
    rows = Rows()
    other = ToolCall("c2", "work", {})
    rows.append(rows.tool_called(CALL).insert + rows.tool_called(other).insert)
    change = rows.settle([], ["c1"])
    assert [c.call.id for c in change.changed if c.call] == ["c1"]
    card = rows.tool("c2")
    assert card is not None and card.state is ToolState.RUNNING


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (ToolState.UNKNOWN, ToolState.REQUESTED),
        (ToolState.DONE, ToolState.DONE),
        (ToolState.RUNNING, ToolState.RUNNING),
    ],
)
def test_mark_requested_table(before: ToolState, after: ToolState) -> None:
    rows = rows_from_history([AssistantMessage("", (CALL,))])
    rows.set_tool_state("c1", before)
    rows.mark_requested(["c1", "missing"])
    card = rows.tool("c1")
    assert card is not None and card.state is after
