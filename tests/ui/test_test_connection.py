"""Settings' "Test connection" button in a real dialog (offscreen, on the app's qasync loop):
it tests the fields as typed, shows progress and then plain-text ✓/✗/– lines, keeps the UI
responsive, can be pressed again, and stops its requests when the dialog closes."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from app.settings import Settings
from app.simulator import Simulator
from tests.ui.helpers import until
from ui.settings_dialog import SettingsDialog

KEY = "sk-typed-in-the-dialog-123456"


def next_report(dialog: SettingsDialog) -> asyncio.Future[Any]:
    """A future that gets the next report the dialog shows."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def arrived(report: Any) -> None:
        if not future.done():
            future.set_result(report)
        dialog.connectionTested.disconnect(arrived)

    dialog.connectionTested.connect(arrived)
    return future


def parts(dialog: SettingsDialog) -> tuple[QPushButton, QLabel]:
    button = dialog.findChild(QPushButton, "testConnectionButton")
    label = dialog.findChild(QLabel, "testConnectionResult")
    assert button is not None and label is not None
    return button, label


def test_the_button_tests_the_typed_fields_and_can_be_pressed_again(qtbot: Any, run: Any) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            # Saved settings point elsewhere: the test uses what is typed now.
            dialog = SettingsDialog(
                Settings(provider_kind="openai", base_url="http://127.0.0.1:9/v1", model="x")
            )
            qtbot.addWidget(dialog)
            dialog.show()
            button, label = parts(dialog)
            assert button.accessibleName() == "Test connection"
            assert label.textFormat() is Qt.TextFormat.PlainText
            dialog.base_url.setText(sim.openai_base_url)
            dialog.model.setCurrentText("sim-echo")
            dialog.api_key.setText(KEY)

            first = next_report(dialog)
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
            # Progress is shown at once and the button waits; the loop is not blocked.
            assert label.text().startswith("Testing the connection to")
            assert not button.isEnabled()
            report = await first
            assert label.text() == report.text()
            assert [line[0] for line in label.text().splitlines()] == ["✓"] * 5
            assert button.isEnabled()
            assert sim.model_requests()[0].headers["authorization"] == f"Bearer {KEY}"
            assert dialog.api_key.text() == KEY  # testing does not save or clear the key

            # Again, after a change: now the model is unknown to the server.
            dialog.model.setCurrentText("nope")
            sim.enqueue("status=404;message=The model `nope` does not exist.")
            second = next_report(dialog)
            button.click()
            await second
            marks = [line[0] for line in label.text().splitlines()]
            assert marks == ["✓", "✓", "✗", "–", "–"], label.text()
            assert KEY not in label.text()

    run(scenario())


def test_a_dead_port_is_said_in_words(qtbot: Any, run: Any) -> None:
    async def scenario() -> None:
        with socket.socket() as sock:  # bound, never listening: nothing answers
            sock.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
            dialog = SettingsDialog(Settings(provider_kind="openai", base_url=url, model="m"))
            qtbot.addWidget(dialog)
            button, label = parts(dialog)
            done = next_report(dialog)
            button.click()
            await done
        lines = label.text().splitlines()
        assert lines[0].startswith(f"✗ Server: Could not reach {url}")
        assert all(line.startswith("–") for line in lines[1:])

    run(scenario())


def test_closing_the_dialog_stops_a_running_test(qtbot: Any, run: Any) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue("stall_after=0")  # the streamed request hangs until the client leaves
            dialog = SettingsDialog(
                Settings(provider_kind="openai", base_url=sim.openai_base_url, model="sim-echo")
            )
            qtbot.addWidget(dialog)
            button, _label = parts(dialog)
            button.click()
            assert not button.isEnabled()
            task = dialog.connection_test
            assert task is not None
            await until(sim.model_requests, what="the stalled request to arrive")
            dialog.reject()
            await asyncio.wait({task})
            assert task.cancelled()
            assert button.isEnabled()  # shown again, it can test again
            await asyncio.wait_for(sim.wait_idle(), 5)  # its connection was closed

    run(scenario())


def test_a_test_running_when_the_window_goes_away_ends_quietly(qtbot: Any, run: Any) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue("stall_after=0")
            window = QWidget()
            dialog = SettingsDialog(
                Settings(provider_kind="openai", base_url=sim.openai_base_url, model="sim-echo"),
                window,
            )
            parts(dialog)[0].click()
            task = dialog.connection_test
            assert task is not None
            await until(sim.model_requests, what="the stalled request to arrive")
            shiboken6.delete(window)  # the dialog goes with its window, never closed (no done())
            await asyncio.wait({task})
            assert task.cancelled()  # not an error on a deleted widget
            await asyncio.wait_for(sim.wait_idle(), 5)

    run(scenario())
