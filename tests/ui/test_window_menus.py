"""The window a desktop user expects: Edit acting on the focused widget, Esc stopping from
anywhere, Resume/Dismiss keys, zoom, the sidebar toggle, a title naming the conversation, Help,
and the window's place kept between runs — through the real window, with real key events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QUrl
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QTableWidget

from app.simulator import Reply, Simulator
from tests.ui.helpers import close_window, make_services, open_window, until, window_on_simulator
from ui.commands import all_shortcut_rows, edit_focused
from ui.window_place import window_title
from ui.window_state import STATE_FILE, WindowState, load_state, parse_state, save_state, zoom_step

CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


async def _activate(window: Any) -> None:
    window.activateWindow()
    await until(lambda: QApplication.activeWindow() is window, what="window active")


def _action(window: Any, name: str) -> QAction:
    action: QAction | None = window.findChild(QAction, name)
    assert action is not None, name
    return action


# --- pure parts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("zoom", "direction", "expected"),
    [
        (1.0, 1, 1.1),
        (1.0, -1, 0.9),
        (2.0, 1, 2.0),
        (0.67, -1, 0.67),
        (1.25, 0, 1.0),
        (1.05, 1, 1.1),
    ],
)
def test_zoom_steps(zoom: float, direction: int, expected: float) -> None:
    assert zoom_step(zoom, direction) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (None, WindowState()),
        ([1, 2], WindowState()),
        ({"zoom": 9, "sidebar": "no", "geometry": "%%%"}, WindowState()),
        ({"zoom": 1.25, "sidebar": False}, WindowState(sidebar=False, zoom=1.25)),
        ({"geometry": "AAEC"}, WindowState(geometry=b"\x00\x01\x02")),
        ({"scheme": "dark"}, WindowState(scheme="dark")),
        ({"scheme": "sepia"}, WindowState()),
        ({"scheme": 1}, WindowState()),
    ],
)
def test_a_damaged_state_file_gives_defaults_field_by_field(data: Any, expected: Any) -> None:
    assert parse_state(data) == expected


def test_state_round_trips_and_a_broken_file_is_ignored(tmp_path: Path) -> None:
    state = WindowState(
        geometry=b"\x01\x02", splitter=b"\x03", sidebar=False, zoom=1.5, scheme="light"
    )
    save_state(tmp_path, state)
    assert load_state(tmp_path) == state
    (tmp_path / STATE_FILE).write_text("{not json", encoding="utf-8")
    assert load_state(tmp_path) == WindowState()
    assert load_state(tmp_path / "missing") == WindowState()


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("", "Continuum"),
        ("Release  checklist", "Release checklist — Continuum"),
        ("x" * 80, "x" * 59 + "… — Continuum"),
    ],
)
def test_window_title(title: str, expected: str) -> None:
    assert window_title(title) == expected


def test_the_shortcut_list_names_every_menu_key_and_the_others() -> None:
    rows = all_shortcut_rows()
    assert ("Conversation", "Stop answer", "Esc") in rows
    assert any(r[1] == "Zoom In" and "Ctrl+=" in r[2] for r in rows)
    assert ("Tool approval", "Allow once", "Ctrl+Shift+A") in rows
    assert len({(r[0], r[1]) for r in rows}) == len(rows)


# --- through the real window --------------------------------------------------------------------


def test_edit_actions_act_on_the_focused_widget(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            await _activate(window)
            window.stack.setCurrentWidget(window.transcript)
            edit = window.composer.edit
            edit.setFocus()
            QTest.keyClicks(edit, "hello world")
            _action(window, "selectAllAction").trigger()
            _action(window, "cutAction").trigger()
            assert edit.toPlainText() == ""
            assert QApplication.clipboard().text() == "hello world"
            _action(window, "pasteAction").trigger()
            _action(window, "pasteAction").trigger()
            assert edit.toPlainText() == "hello worldhello world"
            _action(window, "undoAction").trigger()
            assert edit.toPlainText() == "hello world"
            # The search field too, and a widget without the slot is left alone.
            search = window.sidebar.search
            search.setFocus()
            search.setText("notes")
            _action(window, "selectAllAction").trigger()
            _action(window, "copyAction").trigger()
            assert QApplication.clipboard().text() == "notes"
            assert not edit_focused("pasteAction", window.header.sidebar_button)
        finally:
            await close_window(window)

    run(scenario())


def test_esc_stops_from_anywhere_and_first_clears_a_selection(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(tokens=4000, tokens_per_second=150))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                await _activate(window)
                assert not _action(window, "stopAction").isEnabled()  # nothing to stop
                assert window.controller.send("A long story, please")
                model = window.transcript_model
                await until(lambda: model.streaming_item and model.streaming_item.text)
                # A selection in the transcript: the first Esc clears it, the answer goes on.
                view = window.transcript
                view.setFocus()
                view.selection.select_row(model.rowCount() - 1)
                assert view.selection.has_selection()
                QTest.keyClick(view, Qt.Key.Key_Escape)
                assert not view.selection.has_selection() and window.controller.busy
                # From the sidebar's search field: Esc stops the answer.
                window.sidebar.search.setFocus()
                QTest.keyClick(window.sidebar.search, Qt.Key.Key_Escape)
                await until(lambda: not window.controller.busy, what="stopped by Esc")
                await until(window.resume_bar.isVisible, what="the Resume bar after Esc")
            finally:
                await close_window(window)

    run(scenario())


def test_resume_and_dismiss_have_keys(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            sim.enqueue(Reply(tokens=4000, tokens_per_second=150))
            await _activate(window)
            assert window.controller.send("Tell me a story")
            model = window.transcript_model
            await until(lambda: model.streaming_item and len(model.streaming_item.text) > 20)
            window.controller.stop()
            await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
            sim.enqueue(Reply(text="The rest of the story."))
            QTest.keyClick(window.composer.edit, Qt.Key.Key_R, CTRL_SHIFT)
            await until(lambda: window.controller.busy, what="Ctrl+Shift+R resumed")
            await until(lambda: not window.controller.busy, what="resumed answer done")
            assert not window.resume_bar.isVisible()
            QTest.keyClick(window.composer.edit, Qt.Key.Key_R, CTRL_SHIFT)
            assert "Nothing to resume" in window.statusBar().currentMessage()
            # Stop again, then dismiss from the keyboard.
            sim.enqueue(Reply(tokens=4000, tokens_per_second=150))
            assert window.controller.send("Another one")
            await until(lambda: model.streaming_item and len(model.streaming_item.text) > 20)
            window.controller.stop()
            await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
            QTest.keyClick(window.composer.edit, Qt.Key.Key_X, CTRL_SHIFT)
            await until(lambda: not window.resume_bar.isVisible(), what="dismissed")

    run(scenario())


def test_zoom_scales_the_transcript_and_composer_and_is_kept(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        base = QApplication.font().pointSizeF()
        try:
            await _activate(window)
            QTest.keyClick(window.composer.edit, Qt.Key.Key_Equal, CTRL)
            QTest.keyClick(window.composer.edit, Qt.Key.Key_Equal, CTRL)
            assert window.transcript.font().pointSizeF() == pytest.approx(base * 1.25, abs=0.1)
            assert window.composer.edit.font().pointSizeF() == pytest.approx(base * 1.25, abs=0.1)
            QTest.keyClick(window.composer.edit, Qt.Key.Key_Minus, CTRL)
            assert window.transcript.font().pointSizeF() == pytest.approx(base * 1.1, abs=0.1)
        finally:
            await close_window(window)
        saved = json.loads((tmp_path / STATE_FILE).read_text())
        # The colours it painted with are kept for the next start window's "system" theme.
        assert saved["zoom"] == 1.1 and saved["scheme"] == "light"
        from ui.start_window import StartWindow

        start = StartWindow(tmp_path)  # the next start's first window: the composer zoomed too
        try:
            assert start.edit.font().pointSizeF() == pytest.approx(base * 1.1, abs=0.1)
        finally:
            start.deleteLater()
        again = await open_window(tmp_path, None)
        try:
            assert again.transcript.font().pointSizeF() == pytest.approx(base * 1.1, abs=0.1)
            await _activate(again)
            QTest.keyClick(again.composer.edit, Qt.Key.Key_0, CTRL)
            assert again.transcript.font().pointSizeF() == pytest.approx(base, abs=0.1)
        finally:
            await close_window(again)

    run(scenario())


def test_the_window_keeps_its_size_place_and_hidden_sidebar(run: Any, tmp_path: Path) -> None:
    from ui.window import MainWindow

    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            window.resize(700, 520)  # inside the offscreen screen (800×600)
            window.move(QPoint(40, 30))
            window.show_sidebar(False)
            assert (
                not window.sidebar.isVisible() and not _action(window, "sidebarAction").isChecked()
            )
        finally:
            await close_window(window)
        services = await make_services(tmp_path, None)
        again = MainWindow(services)
        again.show()
        try:
            await again.start()
            assert (again.width(), again.height()) == (700, 520)
            assert not again.sidebar.isVisible()
            # The ☰ button brings it back.
            QTest.mouseClick(again.header.sidebar_button, Qt.MouseButton.LeftButton)
            assert again.sidebar.isVisible() and _action(again, "sidebarAction").isChecked()
            assert again.splitter.sizes()[0] > 100
        finally:
            await close_window(again)

    run(scenario())


def test_the_title_names_the_open_conversation(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            assert window.windowTitle() == "Continuum"
            sim.enqueue(Reply(text="Sure."))
            assert window.controller.send("Plan the launch of version two")
            await until(lambda: not window.controller.busy)
            await until(lambda: "Plan the launch" in window.windowTitle(), what="titled")
            assert window.windowTitle().endswith(" — Continuum")
            window.new_action.trigger()
            await until(lambda: window.windowTitle() == "Continuum", what="new: untitled")

    run(scenario())


def test_help_opens_folders_lists_shortcuts_and_says_the_version(run: Any, tmp_path: Path) -> None:
    from app import __version__

    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        opened: list[QUrl] = []
        window.open_url = lambda url: opened.append(url) or True
        try:
            _action(window, "openDataAction").trigger()
            _action(window, "openLogAction").trigger()
            assert [u.toLocalFile() for u in opened] == [str(tmp_path), str(window.log_dir)]
            window.open_url = lambda url: False  # no file manager on this machine
            _action(window, "openDataAction").trigger()
            assert "open it yourself" in window.statusBar().currentMessage()
            _action(window, "shortcutsAction").trigger()
            dialog = window.findChild(QDialog, "shortcutsDialog")
            assert dialog is not None and dialog.isVisible()
            table = dialog.findChild(QTableWidget, "shortcutsTable")
            keys = [table.item(r, 2).text() for r in range(table.rowCount())]
            assert "Esc" in keys and "Ctrl+Shift+R" in keys
            dialog.close()
            _action(window, "aboutAction").trigger()
            about = window.findChild(QMessageBox, "aboutBox")
            assert about is not None and __version__ in about.text()
            assert str(tmp_path) in about.text()
            about.close()
        finally:
            await close_window(window)

    run(scenario())


def test_a_480_px_window_fits(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (_sim, window):
            window.resize(480, 800)
            await until(lambda: window.width() <= 480, what="480 px wide")
            assert window.minimumSizeHint().width() <= 480
            assert not window.sidebar.isVisible()
            header = window.header
            assert header.sidebar_button.isVisible()
            assert header.geometry().right() <= window.width()

    run(scenario())


def test_before_setup_there_is_no_composer_or_model_picker(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            assert window.stack.currentWidget() is window.welcome
            assert not window.composer.isVisible()
            assert not window.model_picker.isVisible() and not window.workspace_button.isVisible()
            window.welcome.offlineRequested.emit()  # "Try it offline"
            await until(lambda: window.stack.currentWidget() is window.transcript, what="ready")
            assert window.composer.isVisible() and window.model_picker.isVisible()
        finally:
            await close_window(window)

    run(scenario())


def test_tab_walks_the_window_in_reading_order(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (_sim, window):
            await _activate(window)
            window.sidebar.search.setFocus()
            seen = [QApplication.focusWidget()]
            for _ in range(12):
                QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
                seen.append(QApplication.focusWidget())
            order = [w for w in seen if w is not None]
            wanted = [window.sidebar.search, window.sidebar.list, window.transcript]
            wanted += [window.composer.edit, window.composer.send_button]
            positions = [order.index(w) for w in wanted]
            assert positions == sorted(positions), [type(w).__name__ for w in order]

    run(scenario())


def test_the_folder_button_is_elided_only_when_it_has_no_room(qapp: Any, qtbot: Any) -> None:
    from ui.header import HeaderBar

    header = HeaderBar()
    qtbot.addWidget(header)
    header.resize(1200, 40)
    header.show()
    qtbot.waitExposed(header)
    button = header.workspace_button
    assert button.shown_text() == "No workspace folder"  # room enough: whole
    button.setText("Folder: a-project-with-a-really-long-name-that-goes-on-and-on")
    header.resize(1201, 40)
    qtbot.waitUntil(lambda: button.width() <= 260)
    assert "…" in button.shown_text() and button.shown_text().startswith("Folder: ")
    assert header.minimumSizeHint().width() < 480  # never holds the window wide
