"""Browser-like scrolling in the transcript: wheel by lines (smooth), pixel deltas, page keys,
the "Jump to latest" button while not following, through a real offscreen view."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from app import AssistantMessage, UserMessage
from ui.transcript.model import TranscriptModel
from ui.transcript.scrolling import wheel_pixels
from ui.transcript.view import TranscriptView


@pytest.mark.parametrize(
    ("angle", "lines", "line", "expected"),
    [(-120, 3, 17, 51), (120, 3, 17, -51), (-240, 3, 10, 60), (-60, 3, 20, 30), (0, 3, 17, 0)],
)
def test_wheel_pixels(angle: int, lines: int, line: int, expected: int) -> None:
    assert wheel_pixels(angle, lines, line) == expected


@pytest.fixture
def view(qapp: Any, qtbot: Any) -> Iterator[TranscriptView]:
    widget = TranscriptView()
    model = TranscriptModel()
    widget.setModel(model)
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    qtbot.waitExposed(widget)
    huge = "\n\n".join(f"Paragraph {i} of a very long first answer." for i in range(120))
    history: list[Any] = [AssistantMessage(huge)]
    for i in range(30):
        history += [UserMessage(f"question {i}"), AssistantMessage(f"answer {i} " * 40)]
    model.load_history(history)
    widget.doItemsLayout()
    QApplication.processEvents()
    yield widget


def _wheel(view: TranscriptView, angle: int = -120, pixels: int = 0) -> None:
    pos = QPointF(view.viewport().rect().center())
    event = QWheelEvent(
        pos,
        view.viewport().mapToGlobal(pos),
        QPoint(0, pixels),
        QPoint(0, angle),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), event)


def test_a_wheel_notch_scrolls_three_lines_whatever_the_first_row(
    view: TranscriptView, qtbot: Any
) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(0)
    line = view.fontMetrics().lineSpacing()
    assert view.visualRect(view.model().index(0, 0)).height() > 20 * line  # a huge first row
    _wheel(view)
    qtbot.waitUntil(
        lambda: view.scroller.animation.state() != view.scroller.animation.State.Running
    )
    assert abs(bar.value() - QApplication.wheelScrollLines() * line) <= 1
    assert bar.singleStep() == line


def test_pixel_delta_scrolls_directly(view: TranscriptView) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(100)
    _wheel(view, angle=-120, pixels=-37)
    assert bar.value() == 137


def test_page_keys_and_home_end(view: TranscriptView, qtbot: Any) -> None:
    bar = view.verticalScrollBar()
    bar.setValue(0)
    page = view.viewport().height() - view.fontMetrics().lineSpacing()
    qtbot.keyClick(view, Qt.Key.Key_PageDown)
    assert bar.value() == page
    qtbot.keyClick(view, Qt.Key.Key_PageUp)
    assert bar.value() == 0
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert bar.value() == bar.maximum() and view.following
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert bar.value() == 0 and not view.following


def test_scrolling_up_while_streaming_shows_the_jump_button(
    view: TranscriptView, qtbot: Any
) -> None:
    model = view.model()
    assert isinstance(model, TranscriptModel)
    view.follow()
    bar = view.verticalScrollBar()
    assert view.following and not view.scroller.button.isVisible()
    _wheel(view, angle=360)
    qtbot.waitUntil(lambda: not view.following)
    qtbot.waitUntil(view.scroller.button.isVisible)
    assert view.scroller.button.accessibleName() == "Jump to latest"
    qtbot.mouseClick(view.scroller.button, Qt.MouseButton.LeftButton)
    assert view.following and bar.value() == bar.maximum()
    assert not view.scroller.button.isVisible()


def test_a_width_change_keeps_the_first_visible_row_in_place(
    view: TranscriptView, qtbot: Any
) -> None:
    bar = view.verticalScrollBar()
    view.scrollTo(view.model().index(20, 0), view.ScrollHint.PositionAtTop)
    bar.setValue(bar.value() + 10)  # the person scrolled: row 20 is 10 px above the top
    assert not view.following
    top = view.visualRect(view.model().index(20, 0)).top()
    view.resize(600, 700)
    qtbot.waitUntil(lambda: view.viewport().width() < 700)
    QApplication.processEvents()
    assert abs(view.visualRect(view.model().index(20, 0)).top() - top) <= 1


def test_streaming_follows_the_bottom_until_scrolled_up(view: TranscriptView, qtbot: Any) -> None:
    model = view.model()
    assert isinstance(model, TranscriptModel)
    model.add_user("more")
    view.follow()
    bar = view.verticalScrollBar()
    for _ in range(5):
        model.append_delta("streamed words " * 30 + "\n\n")
        model.flush()
        qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    _wheel(view, angle=360)
    qtbot.waitUntil(lambda: not view.following)
    held = bar.value()
    model.append_delta("more streamed words " * 30 + "\n\n")
    model.flush()
    QApplication.processEvents()
    assert bar.value() <= held + 1 and bar.value() < bar.maximum()
    assert view.scroller.button.isVisible()


def test_a_row_above_growing_keeps_the_reading_position(qapp: Any, qtbot: Any) -> None:
    from app import ToolCall, ToolMessage
    from ui.transcript.model import Roles

    widget = TranscriptView()
    model = TranscriptModel()
    widget.setModel(model)
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    qtbot.waitExposed(widget)
    result = "\n".join(f"line {i} of a long tool result" for i in range(60))
    history: list[Any] = [
        UserMessage("read it"),
        AssistantMessage("Reading.", (ToolCall("c1", "read_file", {"path": "a.txt"}),)),
        ToolMessage("c1", "read_file", result),
    ]
    for i in range(30):
        history += [UserMessage(f"question {i}"), AssistantMessage(f"answer {i} " * 40)]
    model.load_history(history)
    widget.doItemsLayout()
    QApplication.processEvents()
    bar = widget.verticalScrollBar()
    reading = model.index(30, 0)
    widget.scrollTo(reading, widget.ScrollHint.PositionAtTop)
    bar.setValue(bar.value() + 7)  # the person scrolled: reading 7 px into row 30
    assert not widget.following
    top = widget.visualRect(reading).top()
    tool = model.index(2, 0)
    before = widget.visualRect(tool).height()
    assert model.setData(tool, True, Roles.EXPANDED)  # the tool card far above opens
    qtbot.waitUntil(lambda: widget.sizeHintForIndex(tool).height() > before + 500)
    QApplication.processEvents()
    assert abs(widget.visualRect(reading).top() - top) <= 1


def test_the_jump_button_follows_a_theme_change(view: TranscriptView, qtbot: Any) -> None:
    from ui.theme import DARK, LIGHT, palette_for

    QApplication.setPalette(palette_for(LIGHT))
    qtbot.waitUntil(lambda: LIGHT.surface in view.scroller.button.styleSheet())
    QApplication.setPalette(palette_for(DARK))  # View → Theme → Dark, or the desktop's scheme
    qtbot.waitUntil(lambda: DARK.surface in view.scroller.button.styleSheet())
    button = view.scroller.button
    button.show()
    image = button.grab().toImage()
    centre = image.pixelColor(button.width() // 2 - 8, button.height() // 2)
    assert centre.lightness() < 80  # a dark button, not the white it stayed before
