"""The main window against the real simulator over loopback and a real SQLite file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from app.simulator import Reply, Simulator
from tests.ui.helpers import close_window, open_window, until
from ui.transcript.model import ItemKind


def test_send_streams_into_transcript_and_saves(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(
                Reply(
                    text="Here is code:\n\n```python\nprint('hi')\n```\n\nDone.",
                    tokens_per_second=400,
                )
            )
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                window.composer.edit.setPlainText("Show me code")
                window.composer.send_button.click()
                model = window.transcript_model
                await until(lambda: model.streaming_item is not None, what="stream starts")
                assert window.composer.stop_button.isVisible()
                assert not window.composer.send_button.isVisible()
                await until(lambda: not window.controller.busy, what="stream ends")
                kinds = [i.kind for i in model.items()]
                assert kinds == [ItemKind.USER, ItemKind.ASSISTANT]
                assert "print('hi')" in model.item(1).text
                assert window.composer.edit.toPlainText() == ""
                assert window.composer.send_button.isVisible()
                sid = window.controller.session_id
                history = await window.services.history(sid)
                assert [type(m).__name__ for m in history] == ["UserMessage", "AssistantMessage"]
                await until(lambda: window.sidebar.session_ids() == [sid], what="sidebar")
                assert not window.resume_bar.isVisible()
                # The code block got a Copy anchor; clicking it copies the code.
                anchors = window.transcript.anchors(1)
                copy = next(a for a in anchors if a.startswith("continuum-copy:"))
                window.transcript.activate_anchor(1, copy)
                from PySide6.QtGui import QGuiApplication

                assert QGuiApplication.clipboard().text() == "print('hi')"
            finally:
                await close_window(window)

    run(scenario())


def test_object_and_accessible_names(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            from PySide6.QtWidgets import QWidget

            for name in (
                "sidebar",
                "transcript",
                "composer",
                "sendButton",
                "stopButton",
                "resumeBar",
                "resumeButton",
                "dismissResumeButton",
                "modelPicker",
            ):
                widget = window.findChild(QWidget, name)
                assert widget is not None, name
                # A phrase a screen reader can say ("Send message"), not the code's name.
                spoken = widget.accessibleName()
                assert spoken and spoken != name and spoken[0].isupper(), (name, spoken)
            assert isinstance(window.findChild(QPushButton, "sendButton"), QPushButton)
            assert window.stack.currentWidget() is window.welcome  # nothing configured yet
        finally:
            await close_window(window)

    run(scenario())


def test_enter_sends_shift_enter_newline_esc_stops(run: Any, qtbot: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(tokens=3000, tokens_per_second=200))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                edit = window.composer.edit
                edit.setFocus()
                qtbot.keyClicks(edit, "line one")
                qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
                qtbot.keyClicks(edit, "line two")
                assert edit.toPlainText() == "line one\nline two"
                assert not window.controller.busy
                qtbot.keyClick(edit, Qt.Key.Key_Return)
                assert window.controller.busy
                assert window.transcript_model.item(0).text == "line one\nline two"
                model = window.transcript_model
                await until(
                    lambda: model.streaming_item is not None and model.streaming_item.text,
                    what="text",
                )
                qtbot.keyClick(edit, Qt.Key.Key_Escape)
                await until(lambda: not window.controller.busy, what="stopped")
                await until(lambda: window.resume_bar.isVisible(), what="bar")
                assert "stopped" in window.resume_bar.message.text().lower()
            finally:
                await close_window(window)

    run(scenario())


def test_busy_lasts_until_the_end_of_a_request_is_handled(run: Any, tmp_path: Path) -> None:
    """A request's task is done a loop turn before its end is handled (asyncio runs done
    callbacks later): until then the controller stays busy, as the composer still shows Stop,
    and no second request can start under the first one's end."""

    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        controller = window.controller
        try:
            seen: list[tuple[bool, bool]] = []
            controller.busyChanged.connect(
                lambda busy: seen.append(
                    (busy, window.composer.send_button.isVisibleTo(window.composer))
                )
            )

            ending = asyncio.Event()

            async def request() -> None:
                ending.set()  # wakes the test first, then the task is done

            controller._start(request())
            task = controller.task
            assert task is not None
            await ending.wait()
            assert task.done()
            # Done, its end not handled yet: still busy, as Stop is still shown.
            assert seen == [(True, False)]
            assert controller.busy
            await until(lambda: not controller.busy, what="the end handled")
            assert seen[-1] == (False, True)  # not busy: the Send button is back
            assert controller.task is None
        finally:
            await close_window(window)

    run(scenario())
