"""Standard shortcuts, pressed as real key events on the real window."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.services import AppServices
from app.simulator import Reply, Simulator
from app.storage.journal import StopKind
from tests.ui.helpers import close_window, open_window, until, window_on_simulator
from ui.settings_dialog import SettingsDialog

CTRL = Qt.KeyboardModifier.ControlModifier


async def _activate(window: Any) -> None:
    """Make ``window`` the active window: window shortcuts only fire there."""
    window.activateWindow()
    await until(lambda: QApplication.activeWindow() is window, what="window active")


def _focused() -> Any:
    return QApplication.focusWidget()


def _action(window: Any, name: str) -> QAction:
    action: QAction | None = window.findChild(QAction, name)
    assert action is not None, name
    return action


def test_actions_carry_the_standard_key_sequences(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            standard = {
                "newAction": QKeySequence.StandardKey.New,
                "findAction": QKeySequence.StandardKey.Find,
                "quitAction": QKeySequence.StandardKey.Quit,
            }
            for name, key in standard.items():
                shortcut = _action(window, name).shortcut()
                assert not shortcut.isEmpty(), name
                # The platform's primary binding (Quit has none on the Windows/offscreen scheme).
                if QKeySequence.keyBindings(key):
                    assert shortcut == QKeySequence(key), (name, shortcut.toString())
            portable = QKeySequence.SequenceFormat.PortableText
            assert _action(window, "newAction").shortcut().toString(portable) == "Ctrl+N"
            assert _action(window, "findAction").shortcut().toString(portable) == "Ctrl+F"
            assert _action(window, "quitAction").shortcut().toString(portable) == "Ctrl+Q"
            assert _action(window, "settingsAction").shortcut() == QKeySequence("Ctrl+,")
            # No two actions of the window share a shortcut (an ambiguous one fires neither).
            taken = [
                a.shortcut().toString(portable)
                for a in window.findChildren(QAction)
                if not a.shortcut().isEmpty()
            ]
            assert len(taken) == len(set(taken)), taken
        finally:
            await close_window(window)

    run(scenario())


def test_ctrl_n_ctrl_f_ctrl_comma(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            await _activate(window)
            sim.enqueue(Reply(text="Tides follow the moon."))
            window.composer.edit.setPlainText("Why are there tides?")
            window.composer.send_button.click()
            await until(
                lambda: not window.controller.busy and window.transcript_model.rowCount() == 2,
                what="answer",
            )
            first = window.controller.session_id
            assert first is not None

            # Ctrl+F (from the composer): the sidebar search gets focus, its text selected.
            window.sidebar.search.setText("moon")
            window.composer.edit.setFocus()
            await until(lambda: _focused() is window.composer.edit, what="composer focus")
            QTest.keyClick(window.composer.edit, Qt.Key.Key_F, CTRL)
            assert _focused() is window.sidebar.search
            assert window.sidebar.search.selectedText() == "moon"
            assert window.composer.edit.toPlainText() == ""  # no "f" typed anywhere
            window.sidebar.search.clear()

            # Ctrl+N (focus in the search box): a new, empty conversation; composer focused.
            QTest.keyClick(window.sidebar.search, Qt.Key.Key_N, CTRL)
            await until(
                lambda: (
                    window.controller.session_id is None and window.transcript_model.rowCount() == 0
                ),
                what="new conversation",
            )
            assert _focused() is window.composer.edit
            assert not window.resume_bar.isVisible()
            assert window.sidebar.search.text() == ""
            # The earlier conversation is still there to go back to.
            history = await window.services.history(first)
            assert len(history) == 2

            # Ctrl+, opens the settings dialog (window-modal, not blocking the loop).
            QTest.keyClick(window, Qt.Key.Key_Comma, CTRL)
            dialog = window.findChild(SettingsDialog)
            assert dialog is not None
            await until(dialog.isVisible, what="settings dialog")
            assert dialog.isModal()
            assert dialog.parent() is window
            before = window.services.settings
            dialog.reject()
            await until(lambda: not dialog.isVisible(), what="dialog closed")
            assert window.services.settings == before  # cancelled: nothing changed

    run(scenario())


def test_ctrl_n_while_streaming_is_refused_with_a_message(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(tokens=3000, tokens_per_second=200))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                await _activate(window)
                assert window.controller.send("A long story, please")
                model = window.transcript_model
                await until(
                    lambda: model.streaming_item is not None and model.streaming_item.text,
                    what="streaming",
                )
                sid = window.controller.session_id
                QTest.keyClick(window.composer.edit, Qt.Key.Key_N, CTRL)
                assert window.controller.busy and window.controller.session_id == sid
                assert "Stop the running answer" in window.statusBar().currentMessage()
                window.controller.stop()
                await until(lambda: not window.controller.busy, what="stopped")
            finally:
                await close_window(window)

    run(scenario())


def test_ctrl_q_closes_through_shutdown_and_records_the_stop(
    run: Any, tmp_path: Path, caplog: Any
) -> None:
    caplog.set_level(logging.INFO, logger="ui")

    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(tokens=3000, tokens_per_second=200))
            window = await open_window(tmp_path, sim.openai_base_url)
            services = window.services
            closed_future = asyncio.get_running_loop().create_future()
            window._closed = closed_future  # what MainWindow.run() waits on
            try:
                await _activate(window)
                assert window.controller.send("Keep talking")
                model = window.transcript_model
                await until(
                    lambda: (
                        model.streaming_item is not None and len(model.streaming_item.text) > 10
                    ),
                    what="streaming",
                )
                sid = window.controller.session_id
                assert sid is not None and services.locks.held(sid)
                task = window.controller.task

                QTest.keyClick(window.composer.edit, Qt.Key.Key_Q, CTRL)
                shutdown = getattr(window, "_shutdown_task", None)
                assert shutdown is not None, "Ctrl+Q did not start the shutdown path"
                assert not window.isVisible()
                await asyncio.wait_for(shutdown, 15)
                await asyncio.wait_for(closed_future, 5)
                assert task is not None and task.done()
                assert not window.controller.busy
                assert not services.storage.storage.is_open  # the database was closed
                assert not services.locks.held(sid)  # and the conversation's lock released
                await asyncio.sleep(0)  # let anything the close scheduled take its turn
                # Nothing ran against the closed store after the close.
                assert not [r for r in caplog.records if r.levelno >= logging.WARNING], [
                    r.getMessage() for r in caplog.records
                ]
            finally:
                if window.isVisible():
                    await close_window(window)

            # The next launch sees a stop the person caused, not a crash, plus the draft.
            again = AppServices(tmp_path)
            await again.open()
            try:
                info = await again.resume_info(sid)
                assert info.stop is not None and info.stop.kind is StopKind.STOPPED
                assert info.draft and len(info.draft) > 10
                assert info.point is not None
                assert again.try_lock_session(sid)
            finally:
                await again.close()

    run(scenario())
