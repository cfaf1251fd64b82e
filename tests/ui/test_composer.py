"""The composer grows with its text up to ~40% of the window, then scrolls, and shrinks back
after sending; its controls are named in words. Heights are decided by :func:`fit_height`
(table-tested); the rest drives the composer in the real window (offscreen)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.simulator import Reply
from tests.ui.helpers import until, window_on_simulator
from ui.composer import MAX_FRACTION, MIN_LINES, Composer, fit_height

SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.mark.parametrize(
    ("lines", "window", "expected"),
    [
        (0, 1000, (2 * 14 + 10, False)),  # empty: MIN_LINES lines
        (1, 1000, (2 * 14 + 10, False)),
        (2, 1000, (2 * 14 + 10, False)),
        (5, 1000, (5 * 14 + 10, False)),
        (27, 1000, (27 * 14 + 10, False)),  # 388 px: still under the cap...
        (28, 1000, (400, True)),  # ...one more line and it scrolls at 40% of 1000 px
        (500, 1000, (400, True)),
        (10, 50, (2 * 14 + 10, True)),  # a tiny window: never below two lines
        (500, None, (500 * 14 + 10, False)),  # no window to fit (the composer alone)
        (2.0, 800, (2 * 14 + 10, False)),
    ],
)
def test_fit_height(lines: float, window: int | None, expected: tuple[int, bool]) -> None:
    assert fit_height(lines, 14, 10, window) == expected


def test_the_table_matches_the_constants() -> None:
    assert MIN_LINES == 2 and MAX_FRACTION == pytest.approx(0.4)


def _line_height(composer: Composer) -> int:
    return composer.edit.fontMetrics().lineSpacing()


def test_names_are_phrases(qtbot: Any) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    assert composer.edit.accessibleName() == "Message the model"
    assert composer.send_button.accessibleName() == "Send message"
    assert composer.stop_button.accessibleName() == "Stop answering"
    assert composer.remove_attachment.accessibleName() == "Remove the pasted text"
    assert composer.edit.objectName() == "composer"  # object names stay for tests and styles


def test_grows_with_its_text_then_scrolls_then_shrinks_after_sending(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path) as (sim, window):
            sim.enqueue(Reply(text="noted"))
            window.resize(1000, 800)
            edit = window.composer.edit
            await until(lambda: window.height() == 800, what="window resized")
            line = _line_height(window.composer)
            empty = edit.height()
            assert line * MIN_LINES < empty < line * (MIN_LINES + 1) + 16
            edit.setFocus()

            QTest.keyClicks(edit, "first line")
            assert edit.height() == empty  # one line fits the empty height
            for n in range(4):
                QTest.keyClick(edit, Qt.Key.Key_Return, SHIFT)
                QTest.keyClicks(edit, f"line {n}")
            await until(lambda: edit.height() >= empty + 3 * line, what="grown to five lines")
            assert edit.verticalScrollBar().maximum() == 0  # all of it shown, nothing scrolls
            five = edit.height()

            # Far more than fits: capped at 40% of the window, and it scrolls instead.
            edit.insertPlainText("\nmore" * 80)
            cap = int(window.height() * MAX_FRACTION)
            await until(lambda: edit.height() == cap, what="capped at 40%")
            assert edit.height() > five
            await until(lambda: edit.verticalScrollBar().isVisible(), what="a scroll bar")
            assert edit.verticalScrollBar().maximum() > 0
            transcript_before = window.transcript.height()
            assert transcript_before > 0

            # A shorter window lowers the cap.
            window.resize(1000, 600)
            await until(lambda: edit.height() == int(600 * MAX_FRACTION), what="new cap")

            # Enter sends; the empty composer shrinks back to its first height.
            QTest.keyClick(edit, Qt.Key.Key_Return)
            await until(lambda: edit.toPlainText() == "", what="sent")
            await until(lambda: edit.height() == empty, what="shrunk back")
            assert not edit.verticalScrollBar().isVisible()
            await until(lambda: not window.controller.busy, what="answered")

    run(scenario())


def test_a_long_wrapped_line_counts_as_its_lines(qtbot: Any) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.resize(300, 200)
    composer.show()
    qtbot.waitExposed(composer)
    edit = composer.edit
    empty = edit.height()
    edit.setPlainText("word " * 60)  # one paragraph, several lines at 300 px
    qtbot.waitUntil(lambda: edit.height() > empty + _line_height(composer))
    assert edit.verticalScrollBar().maximum() == 0  # no window to fit: every line shown


def test_a_bigger_font_makes_the_same_lines_taller(qtbot: Any) -> None:
    """View → Zoom changes the composer's font: its height follows without new text."""
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    edit = composer.edit
    edit.setPlainText("a\nb\nc")
    before = edit.height()
    font = edit.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    edit.setFont(font)
    qtbot.waitUntil(lambda: edit.height() > before * 1.5)
