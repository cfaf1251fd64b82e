"""Empty states in the real window (offscreen): a new conversation says what to do and which
model answers; the welcome panel (nothing set up yet) puts the composer and the model picker
away and brings them back once something can answer.

The empty-conversation hint is wired here the way ``ui/window.py`` is to do it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QPalette

from tests.ui.helpers import close_window, open_window, until, window_on_simulator
from ui.theme import DARK, LIGHT
from ui.welcome import KEYS_LINE, empty_hint_text


@pytest.mark.parametrize(
    ("model", "simulator", "title", "has"),
    [
        ("gpt-4o-mini", False, "Ask anything", ["Answers from gpt-4o-mini", "resumed"]),
        ("  llama3  ", False, "Ask anything", ["Answers from llama3 are"]),
        ("sim-echo", True, "Ask anything", ["offline simulator (sim-echo)", "not a real model"]),
        ("", False, "Choose a model", ["Model box"]),
        ("   ", True, "Choose a model", ["Model box"]),
    ],
)
def test_empty_hint_text(model: str, simulator: bool, title: str, has: list[str]) -> None:
    got_title, line = empty_hint_text(model, simulator)
    assert got_title == title
    assert all(words in line for words in has), line
    assert ("simulator" in line) == (simulator and bool(model.strip()))


def test_a_new_conversation_says_what_to_do_and_which_model(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (_sim, window):
            hint = window.empty_hint  # the window's own
            await until(lambda: window.model_picker.count() > 0, what="models listed")
            assert window.transcript_model.rowCount() == 0
            await until(hint.isVisible, what="the hint")
            assert hint.title.text() == "Ask anything"
            assert "sim-echo" in hint.line.text()
            assert hint.keys.text() == KEYS_LINE
            assert "sim-echo" in hint.accessibleDescription()
            # Over the whole transcript, its words centred in it.
            viewport = window.transcript.viewport()
            assert hint.geometry() == viewport.rect()
            centre = hint.title.geometry().center().x()
            assert abs(centre - viewport.width() // 2) <= 2
            assert hint.title.font().pointSizeF() > window.transcript.font().pointSizeF()

            window.composer.edit.setPlainText("hello there")
            window.composer.send_button.click()
            await until(lambda: not hint.isVisible(), what="the hint gone with the first row")
            await until(lambda: not window.controller.busy, what="answered")
            assert not hint.isVisible()

            window.new_conversation()
            await until(hint.isVisible, what="the hint back for a new conversation")
            window.model_picker.addItem("another-model")
            window.model_picker.setCurrentText("another-model")
            assert "another-model" in hint.line.text()

            # View → Zoom scales the transcript's font: the hint's words follow.
            before = hint.title.font().pointSizeF()
            window.place.set_zoom(1.5)
            await until(lambda: hint.title.font().pointSizeF() > before * 1.4, what="zoomed")
            assert hint.line.font().pointSizeF() == window.transcript.font().pointSizeF()
            window.place.set_zoom(1.0)

            window.resize(480, 800)  # narrow: still inside, still centred
            await until(lambda: hint.geometry() == viewport.rect(), what="follows the size")
            assert hint.line.width() <= viewport.width()

    run(scenario())


def colour(label: Any) -> str:
    return str(label.palette().color(QPalette.ColorRole.WindowText).name())


def test_the_hint_reads_in_either_theme(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (_sim, window):
            hint = window.empty_hint
            for tokens, choice in ((DARK, "dark"), (LIGHT, "light")):
                window.choose_theme(choice)
                await until(lambda t=tokens: colour(hint.line) == t.muted, what=f"{choice}")
                assert colour(hint.title) == tokens.text
                assert colour(hint.keys) == tokens.muted
                role = QPalette.ColorRole.Window
                assert (hint.palette().color(role).lightness() < 128) == tokens.dark

    run(scenario())


def test_the_welcome_panel_puts_the_composer_and_picker_away(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)  # nothing set up: the welcome panel
        try:
            welcome = window.welcome
            assert window.stack.currentWidget() is welcome
            assert not window.composer.isVisible()
            assert not window.model_picker.isVisible()
            # The window hiding and showing as a whole changes nothing.
            window.hide()
            window.show()
            assert not window.composer.isVisible() and welcome.isVisible()

            welcome.offline_button.click()
            await until(lambda: window.stack.currentWidget() is window.transcript)
            await until(window.composer.isVisible, what="the composer back")
            assert window.model_picker.isVisible()
            assert welcome.offline_note.styleSheet()  # muted from the theme, not "disabled"
        finally:
            await close_window(window)

    run(scenario())


def test_the_welcome_panel_names_its_buttons_in_words(qtbot: Any) -> None:
    from ui.welcome import WelcomePanel

    panel = WelcomePanel()
    qtbot.addWidget(panel)
    assert panel.offline_button.accessibleName() == "Try it offline with the built-in simulator"
    assert panel.remote_button.accessibleName() == "Use an OpenAI-compatible or Anthropic API"
    assert panel.accessibleName() == "Welcome"


def test_the_welcome_column_uses_a_narrow_window(qtbot: Any) -> None:
    from ui.welcome import HINT_WIDTH, WelcomePanel

    panel = WelcomePanel()
    qtbot.addWidget(panel)
    panel.resize(480, 800)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.offline_button.width() >= 480 - 64  # not a third of it lost to margins
    panel.resize(1400, 900)
    qtbot.waitUntil(lambda: panel.offline_button.width() <= HINT_WIDTH)
    centre = panel.offline_button.mapTo(panel, panel.offline_button.rect().center()).x()
    assert abs(centre - 700) <= 4
