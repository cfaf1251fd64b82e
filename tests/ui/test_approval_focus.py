"""Typing never approves a tool (issue 11, item 1): real window, real simulator, real keys.

The approval card appears while the person is typing in the composer. Keys (letters, space,
Enter) keep going to the composer; nothing is approved; only a deliberate click (once the card
is armed) or its shown shortcut approves. A mouse press that lands in the first moments after the
card appeared (a double-click begun on what was there before) does not count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton

from app import ToolCall
from app.simulator import Reply
from tests.ui.helpers import until, window_on_simulator
from tests.ui.test_approval import AFTER, card_of, send, setup_tools, write_reply
from ui.approval import ApprovalCard
from ui.transcript.model import ItemKind, ToolState


def _type(widget: Any, text: str) -> None:
    """Real key events: every character (space included) as a press and a release."""
    QTest.keyClicks(widget, text)


def test_typing_while_the_card_appears_approves_nothing(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            ws = setup_tools(window, tmp_path)
            window.activateWindow()
            edit = window.composer.edit
            sim.enqueue(write_reply("c1"))
            sim.enqueue(Reply(text=AFTER))
            await send(window, "Write a note")
            edit.setFocus()
            await until(lambda: window.focusWidget() is edit, 5, "focus in the composer")
            _type(window.focusWidget(), "I keep")  # typing as the answer streams
            card = window.approval_card
            await until(card.isVisible, 10, "the approval card")
            # The person has not looked up: the keys go wherever focus is.
            for _ in range(3):
                focus = window.focusWidget()
                _type(focus, " typing a sentence")
                QTest.keyClick(focus, Qt.Key.Key_Space)
                QTest.keyClick(focus, Qt.Key.Key_Return)
                QTest.keyClick(focus, Qt.Key.Key_Enter)
            typed = "I keep" + " typing a sentence " * 3
            # Then they see the card and deny it: whatever the keys did came first.
            card.deny_button.click()
            await until(lambda: not window.controller.busy, 10, "the answer")
            assert not (ws / "notes.txt").exists()
            assert card_of(window, "c1").state is ToolState.DENIED
            assert edit.toPlainText() == typed
            assert window.focusWidget() is edit
            for button in card.findChildren(QPushButton):
                assert button.focusPolicy() == Qt.FocusPolicy.NoFocus, button.objectName()
                assert not button.isDefault() and not button.autoDefault()

            # A deliberate click, once the card is armed, still approves.
            sim.enqueue(write_reply("c2"))
            sim.enqueue(Reply(text=AFTER))
            await send(window, "Write it")
            await until(card.isVisible, 10, "asked again")
            assert card.current_call.id == "c2"
            await until(lambda: card.armed, 5, "the card to arm")
            QTest.mouseClick(card.allow_once_button, Qt.MouseButton.LeftButton)
            await until(lambda: not window.controller.busy, 10, "the second answer")
            assert (ws / "notes.txt").read_text() == "hello\n"
            assert card_of(window, "c2").state is ToolState.DONE
            last = window.transcript_model.item(window.transcript_model.rowCount() - 1)
            assert last.kind is ItemKind.ASSISTANT and last.text == AFTER

    run(scenario(), timeout=45)


def _asked(qtbot: Any) -> tuple[ApprovalCard, list[str], Any]:
    import asyncio

    loop = asyncio.new_event_loop()
    card = ApprovalCard()
    qtbot.addWidget(card)
    card.show()
    future: asyncio.Future[Any] = loop.create_future()
    answers: list[str] = []
    future.add_done_callback(lambda f: answers.append(str(f.result())))
    card.ask(ToolCall("c1", "edit_file", {"path": "a", "old_text": "x", "new_text": "y"}), future)
    return card, answers, loop


def test_a_click_in_the_first_moments_does_not_count(qtbot: Any) -> None:
    card, answers, loop = _asked(qtbot)
    try:
        assert not card.armed
        # The second half of a double-click begun before the card appeared lands on the button.
        QTest.mouseClick(card.allow_once_button, Qt.MouseButton.LeftButton)
        QTest.mouseDClick(card.allow_once_button, Qt.MouseButton.LeftButton)
        loop.run_until_complete(_spin())
        assert answers == []
        qtbot.waitUntil(lambda: card.armed, timeout=5000)
        QTest.mouseClick(card.allow_once_button, Qt.MouseButton.LeftButton)
        loop.run_until_complete(_spin())
        assert answers == ["allow_once"]
    finally:
        loop.close()


def test_the_shortcut_is_shown_and_ignores_auto_repeat(qtbot: Any) -> None:
    card, answers, loop = _asked(qtbot)
    try:
        assert "Ctrl+Shift+A" in card.allow_once_button.text()
        shortcut = card.allow_once_shortcut
        assert not shortcut.autoRepeat()  # a key held down since before the card never counts
        card.activateWindow()
        qtbot.waitUntil(card.isActiveWindow, timeout=5000)
        chord = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        QTest.keyClick(card.details, Qt.Key.Key_A, chord)  # too early: not armed yet
        loop.run_until_complete(_spin())
        assert answers == []
        qtbot.waitUntil(lambda: card.armed, timeout=5000)
        QTest.keyClick(card.details, Qt.Key.Key_A, chord)
        loop.run_until_complete(_spin())
        assert answers == ["allow_once"]
        assert not card.isVisible() and not shortcut.isEnabled()
    finally:
        loop.close()


async def _spin() -> None:
    import asyncio

    await asyncio.sleep(0)


def test_a_press_held_across_questions_does_not_answer_the_next(qtbot: Any) -> None:
    """The mouse went down on question 1's button; question 1 goes away (Stop, or its call was
    answered) and question 2 takes its place; releasing the mouse must not approve question 2."""
    import asyncio

    loop = asyncio.new_event_loop()
    try:
        card = ApprovalCard()
        qtbot.addWidget(card)
        first, second = loop.create_future(), loop.create_future()
        answers: list[str] = []
        second.add_done_callback(
            lambda f: answers.append(f.result().value) if not f.cancelled() else None
        )
        card.ask(ToolCall("c1", "write_file", {"path": "a", "content": "1"}), first)
        card.ask(ToolCall("c2", "write_file", {"path": "b", "content": "2"}), second)
        card.show()
        qtbot.waitUntil(lambda: card.armed, timeout=5000)
        button = card.allow_once_button
        centre = button.rect().center()
        QTest.mousePress(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
        assert button.isDown()
        first.cancel()
        loop.run_until_complete(_spin())
        assert card.current_call is not None and card.current_call.id == "c2"
        QTest.mouseRelease(
            button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre
        )
        loop.run_until_complete(_spin())
        assert answers == [] and not second.done()
        # A deliberate click once armed still answers it.
        qtbot.waitUntil(lambda: card.armed, timeout=5000)
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
        loop.run_until_complete(_spin())
        assert answers == ["allow_once"]
    finally:
        loop.close()
