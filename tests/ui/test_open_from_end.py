"""A long conversation opens from its end in the real window and reads its older part as the
person scrolls up: the rows on screen stay where they were, and once the top is reached the
rows are exactly those of the whole branch read at once. A short one opens whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from app import AssistantMessage, StoredMessage, ToolCall, ToolMessage, UserMessage
from app.services import AppServices
from app.services.branches import OPEN_TAIL, from_question
from tests.ui.helpers import close_window, open_window, until
from ui.transcript.branching import rows_from_branch

SESSION = "long"


def conversation(turns: int) -> list[Any]:
    messages: list[Any] = []
    for i in range(turns):
        messages.append(UserMessage(f"Question {i}"))
        if i % 3 == 1:  # some turns use a tool: its card must never be split from its call
            call = ToolCall(f"c{i}", "read_file", {"path": f"f{i}.txt"})
            messages.append(AssistantMessage("Let me look.", tool_calls=(call,)))
            messages.append(ToolMessage(call.id, call.name, f"contents {i}"))
        messages.append(AssistantMessage(f"Answer {i}\n\n" + "A line of the answer.\n" * 3))
    return messages


async def write(data: Path, messages: list[Any]) -> None:
    services = AppServices(data)
    await services.open()
    await services.storage.storage.append_many(SESSION, "r", messages)
    await services.close()


def shown(window: Any) -> list[tuple[str, str]]:
    return [(i.kind.value, i.text) for i in window.transcript_model.items()]


@pytest.mark.parametrize(
    ("kinds", "first"),
    [
        (["a", "t", "u", "a"], 2),  # starts inside an answer: from the question on
        (["u", "a", "u"], 0),
        (["a", "t", "a"], 0),  # no question at all: as read
        ([], 0),
    ],
)
def test_a_part_read_from_the_end_starts_at_a_question(kinds: list[str], first: int) -> None:
    make = {"u": lambda: UserMessage("q"), "a": lambda: AssistantMessage("a")}
    make["t"] = lambda: ToolMessage("c", "tool", "out")
    records = [StoredMessage(n + 1, "r", make[k](), 0.0, n or None) for n, k in enumerate(kinds)]
    assert from_question(records) == records[first:]


def test_a_long_conversation_opens_from_its_end_and_scrolling_up_reads_the_rest(
    run: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    messages = conversation(150)  # 350 messages

    async def scenario() -> None:
        await write(data, messages)
        window = await open_window(data, None)
        try:
            await until(lambda: window.transcript_model.rowCount(), 10, "the rows")
            model = window.transcript_model
            assert model.earlier
            assert model.rowCount() < OPEN_TAIL + 1  # only the end was read
            assert shown(window)[0] == ("user", shown(window)[0][1])  # starts at a question
            assert shown(window)[-1][1].startswith("Answer 149")
            view = window.transcript
            await until(lambda: view.following, 5, "the end shown")
            # Scroll up: older parts come above, the row on screen stays where it was.
            bar = view.verticalScrollBar()
            for _ in range(20):
                if not model.earlier:
                    break
                rows_before = model.rowCount()
                bar.setValue(0)  # at the top: the read starts on the next loop turn
                item, offset = model.item(0), view.visualRect(model.index(0, 0)).top()
                await until(lambda rows=rows_before: model.rowCount() > rows, 10, "older rows")
                await until(lambda: not window.controller._loading, 5, "the read to end")
                QApplication.processEvents()  # the delayed layout of the new rows
                row = window.transcript_model.items().index(item)
                assert row > 0
                moved = view.visualRect(model.index(row, 0)).top() - offset
                assert abs(moved) <= bar.pageStep(), moved  # the old top row is still near
            assert not model.earlier
            # Exactly the rows of the whole branch read at once (tool cards whole, in order).
            whole = await window.services.branch(SESSION)
            expected = rows_from_branch(whole.records, whole.versions).items
            assert shown(window) == [(i.kind.value, i.text) for i in expected]
            assert [i.seq for i in model.items()] == [i.seq for i in expected]
        finally:
            await close_window(window)

    run(scenario(), timeout=120)


def test_a_short_conversation_opens_whole(run: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"

    async def scenario() -> None:
        await write(data, conversation(5))
        window = await open_window(data, None)
        try:
            await until(lambda: window.transcript_model.rowCount(), 10, "the rows")
            assert not window.transcript_model.earlier
            assert shown(window)[0] == ("user", "Question 0")
        finally:
            await close_window(window)

    run(scenario(), timeout=60)
