"""Text selection in the transcript: drag, double/triple/shift-click, keys, menu, copy, paint.

The pure rules (``row_spans``, ``join_rows``, ``plain``, ``key_move``) are table-tested; the rest goes through a real offscreen ``TranscriptView`` with the mouse and keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QContextMenuEvent,
    QGuiApplication,
    QMouseEvent,
    QPaintEvent,
    QTextCursor,
)
from PySide6.QtWidgets import QApplication

from app import AssistantMessage, UserMessage
from ui.transcript.markdown import COPY_SCHEME
from ui.transcript.model import TranscriptModel
from ui.transcript.selection import END, WHOLE, join_rows, plain, row_spans
from ui.transcript.selection_input import key_move
from ui.transcript.view import TranscriptView

SHIFT = Qt.KeyboardModifier.ShiftModifier
CTRL = Qt.KeyboardModifier.ControlModifier
Move = QTextCursor.MoveOperation

# --- the pure rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "start", "end", "docs", "expected"),
    [
        (1, (1, 1, 2), (1, 1, 7), 3, {1: (2, 7)}),  # inside one document
        (1, (1, 0, 4), (1, 2, 3), 3, {0: (4, END), 1: WHOLE, 2: (0, 3)}),
        (0, (0, 1, 5), (2, 0, 1), 2, {1: (5, END)}),  # the first row: from the start on
        (1, (0, 1, 5), (2, 0, 1), 2, {0: WHOLE, 1: WHOLE}),  # a row in between: all of it
        (2, (0, 1, 5), (2, 0, 1), 2, {0: (0, 1)}),  # the last row: up to the end
        (3, (0, 1, 5), (2, 0, 1), 2, {}),  # outside
        (2, (0, 0, 0), (2, 0, 0), 2, {}),  # ends at the row's very start: nothing in it
        (1, (1, 0, 0), (1, 5, 3), 2, {0: WHOLE, 1: WHOLE}),  # a document went away
        (1, (1, 4, 0), (2, 0, 0), 2, {}),  # starts past the row's documents
        (1, (0, 0, 0), (2, 0, 0), 0, {}),  # a row without documents
    ],
)
def test_row_spans(
    row: int,
    start: tuple[int, int, int],
    end: tuple[int, int, int],
    docs: int,
    expected: dict[int, tuple[int, int]],
) -> None:
    assert row_spans(row, start, end, docs) == expected


@pytest.mark.parametrize(
    ("rows", "text"),
    [
        ([["a"]], "a"),
        ([["You", "hello"], ["Assistant", "hi"]], "You\nhello\n\nAssistant\nhi"),
        ([["", "tail"], [], ["head", ""]], "tail\n\nhead"),
        ([], ""),
    ],
)
def test_join_rows(rows: list[list[str]], text: str) -> None:
    assert join_rows(rows) == text


def test_plain_turns_separators_into_newlines() -> None:
    assert plain("a\u2029b\u2028c\ufffc") == "a\nb\nc"
    assert plain("one \u2029 two  ") == "one\n two"


@pytest.mark.parametrize(
    ("key", "mods", "move"),
    [
        (Qt.Key.Key_Left, SHIFT, Move.Left),
        (Qt.Key.Key_Right, SHIFT, Move.Right),
        (Qt.Key.Key_Left, SHIFT | CTRL, Move.PreviousWord),
        (Qt.Key.Key_Right, SHIFT | CTRL, Move.NextWord),
        (Qt.Key.Key_Up, SHIFT, Move.Up),
        (Qt.Key.Key_Down, SHIFT, Move.Down),
        (Qt.Key.Key_Home, SHIFT, Move.StartOfLine),
        (Qt.Key.Key_End, SHIFT, Move.EndOfLine),
        (Qt.Key.Key_Left, Qt.KeyboardModifier.NoModifier, None),  # no Shift: not a selection
        (Qt.Key.Key_A, SHIFT, None),
    ],
)
def test_key_move(key: Qt.Key, mods: Qt.KeyboardModifier, move: Move | None) -> None:
    assert key_move(key, mods) == move


# --- a real view ---------------------------------------------------------------------------


@pytest.fixture
def view(qapp: Any, qtbot: Any) -> Iterator[TranscriptView]:
    widget = TranscriptView()
    widget.setModel(TranscriptModel())
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget


HISTORY = [
    UserMessage("alpha bravo charlie"),
    AssistantMessage("First paragraph here.\n\nSecond paragraph delta echo."),
    UserMessage("foxtrot golf"),
]


def _load(view: TranscriptView, history: list[Any]) -> TranscriptModel:
    model = view.model()
    assert isinstance(model, TranscriptModel)
    model.load_history(history)
    view.doItemsLayout()
    view.scrollToTop()
    QApplication.processEvents()
    return model


def _word(view: TranscriptView, row: int, word: str, at: float = 0.5) -> QPoint:
    """The view point ``at`` across ``word`` (0: its left edge, 1: its right edge) in ``row``."""
    model = view.model()
    assert isinstance(model, TranscriptModel)
    item = model.item(row)
    option = view._option(model.index(row, 0))
    geometry = view.delegate.geometry(item, option)
    docs = view.selection.docs(row)
    for number, doc in enumerate(docs):
        found = doc.find(word)
        if found.isNull():
            continue
        layout = doc.documentLayout()
        block = doc.findBlock(found.selectionStart())
        line = block.layout().lineForTextPosition(found.selectionStart() - block.position())
        x0, _ = line.cursorToX(found.selectionStart() - block.position())
        x1, _ = line.cursorToX(found.selectionEnd() - block.position())
        top = layout.blockBoundingRect(block).top() + line.y() + line.height() / 2
        origin = geometry.origins[number]
        return QPointF(origin.x() + x0 + (x1 - x0) * at, origin.y() + top).toPoint()
    raise AssertionError(f"{word!r} is not in row {row}")


def _move(view: TranscriptView, pos: QPoint) -> None:
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        QPointF(pos),
        QPointF(view.viewport().mapToGlobal(pos)),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(view.viewport(), event)


def _drag(view: TranscriptView, qtbot: Any, start: QPoint, end: QPoint) -> None:
    port = view.viewport()
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=start)
    middle = (start + end) / 2
    _move(view, middle)
    _move(view, end)
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=end)


def _copied(view: TranscriptView, qtbot: Any) -> str:
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(view, Qt.Key.Key_C, CTRL)
    return QGuiApplication.clipboard().text()


def test_a_drag_inside_one_message_copies_exactly_those_words(
    view: TranscriptView, qtbot: Any
) -> None:
    _load(view, HISTORY)
    _drag(view, qtbot, _word(view, 1, "paragraph", 0), _word(view, 1, "here", 1))
    assert view.selection.selected_text() == "paragraph here"
    assert _copied(view, qtbot) == "paragraph here"


def test_a_drag_across_two_messages_takes_both_parts(view: TranscriptView, qtbot: Any) -> None:
    _load(view, HISTORY)
    _drag(view, qtbot, _word(view, 0, "charlie", 0), _word(view, 1, "First", 1))
    # What is highlighted is copied: the answer's "Assistant" header line too.
    assert _copied(view, qtbot) == "charlie\n\nAssistant\nFirst"
    # A drag selects text, never rows: at most the pressed row is the (current) row.
    assert [index.row() for index in view.selectionModel().selectedIndexes()] in ([], [0])
    # Upwards gives the same text.
    _drag(view, qtbot, _word(view, 1, "First", 1), _word(view, 0, "charlie", 0))
    assert _copied(view, qtbot) == "charlie\n\nAssistant\nFirst"


def test_double_click_selects_a_word_and_triple_click_its_paragraph(
    view: TranscriptView, qtbot: Any
) -> None:
    _load(view, HISTORY)
    port = view.viewport()
    point = _word(view, 1, "delta")
    qtbot.mouseDClick(port, Qt.MouseButton.LeftButton, pos=point)
    assert _copied(view, qtbot) == "delta"
    qtbot.mouseDClick(port, Qt.MouseButton.LeftButton, pos=point)
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=point)
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=point)
    assert _copied(view, qtbot) == "Second paragraph delta echo."


def test_shift_click_extends_from_the_last_click(view: TranscriptView, qtbot: Any) -> None:
    _load(view, HISTORY)
    port = view.viewport()
    qtbot.mouseClick(port, Qt.MouseButton.LeftButton, pos=_word(view, 0, "bravo", 0))
    assert not view.selection.has_selection()  # a click is a caret
    qtbot.mouseClick(port, Qt.MouseButton.LeftButton, SHIFT, pos=_word(view, 0, "charlie", 1))
    assert _copied(view, qtbot) == "bravo charlie"


def test_shift_arrows_extend_from_the_caret_and_escape_clears(
    view: TranscriptView, qtbot: Any
) -> None:
    _load(view, HISTORY)
    view.setFocus()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_word(view, 0, "bravo", 0))
    for _ in range(3):
        qtbot.keyClick(view, Qt.Key.Key_Right, SHIFT)
    assert _copied(view, qtbot) == "bra"
    qtbot.keyClick(view, Qt.Key.Key_Left, SHIFT)
    assert _copied(view, qtbot) == "br"
    qtbot.keyClick(view, Qt.Key.Key_End, SHIFT)
    assert _copied(view, qtbot) == "bravo charlie"
    qtbot.keyClick(view, Qt.Key.Key_Home, SHIFT)
    assert _copied(view, qtbot) == "alpha"  # (its trailing space goes, as in a browser)
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not view.selection.has_selection()
    # Without a selection Ctrl+C keeps copying the current message (the base class).
    assert _copied(view, qtbot) == "alpha bravo charlie"


def test_ctrl_shift_right_extends_by_words_into_the_next_message(
    view: TranscriptView, qtbot: Any
) -> None:
    _load(view, HISTORY)
    view.setFocus()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=_word(view, 0, "charlie", 0))
    qtbot.keyClick(view, Qt.Key.Key_Right, SHIFT | CTRL)
    assert _copied(view, qtbot) == "charlie"
    qtbot.keyClick(view, Qt.Key.Key_Down, SHIFT)  # past the row's end: the next message
    assert _copied(view, qtbot).startswith("charlie\n\nAssistant")
    qtbot.keyClick(view, Qt.Key.Key_Down, SHIFT)
    assert _copied(view, qtbot).startswith("charlie\n\nAssistant\nFirst")


def test_ctrl_a_selects_the_current_message_only(view: TranscriptView, qtbot: Any) -> None:
    _load(view, HISTORY)
    view.setFocus()
    view.setCurrentIndex(view.model().index(2, 0))
    qtbot.keyClick(view, Qt.Key.Key_A, CTRL)
    assert _copied(view, qtbot) == "foxtrot golf"  # a bubble has no "You" header


def test_a_click_without_a_drag_clears_the_selection_and_makes_the_row_current(
    view: TranscriptView, qtbot: Any
) -> None:
    _load(view, HISTORY)
    port = view.viewport()
    _drag(view, qtbot, _word(view, 0, "alpha", 0), _word(view, 0, "bravo", 1))
    assert view.selection.has_selection()
    qtbot.mouseClick(port, Qt.MouseButton.LeftButton, pos=_word(view, 2, "golf"))
    assert not view.selection.has_selection()
    assert view.currentIndex().row() == 2


def test_the_context_menu_copies_the_selection_and_whole_messages(
    view: TranscriptView, qtbot: Any
) -> None:
    _load(view, HISTORY)
    point = _word(view, 1, "delta")
    menu = view.selecting.context_menu(point)
    assert menu is not None
    copy = menu.findChild(QAction, "copySelection")
    assert copy is not None and not copy.isEnabled()  # nothing selected yet
    _drag(view, qtbot, _word(view, 0, "charlie", 0), _word(view, 1, "First", 1))
    # A right-click inside the selection keeps it.
    qtbot.mousePress(view.viewport(), Qt.MouseButton.RightButton, pos=point)
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.RightButton, pos=point)
    assert view.selection.has_selection()
    menu = view.selecting.context_menu(point)
    assert menu is not None
    names = [a.text() for a in menu.actions() if a.text()]
    assert names == [
        "Copy",
        "Copy 2 messages as Markdown",
        "Copy message",
        "Select all in message",
    ]
    clipboard = QGuiApplication.clipboard()
    actions = {a.objectName(): a for a in menu.actions()}
    actions["copySelection"].trigger()
    assert clipboard.text() == "charlie\n\nAssistant\nFirst"
    actions["copyMarkdown"].trigger()
    assert clipboard.text() == (
        "alpha bravo charlie\n\nFirst paragraph here.\n\nSecond paragraph delta echo."
    )
    actions["copyMessage"].trigger()
    assert clipboard.text() == "First paragraph here.\n\nSecond paragraph delta echo."
    actions["selectMessage"].trigger()
    assert view.selection.selected_text() == (
        "Assistant\nFirst paragraph here.\nSecond paragraph delta echo."
    )


def test_a_code_blocks_copy_link_still_copies_the_code(view: TranscriptView, qtbot: Any) -> None:
    model = _load(view, [UserMessage("hi"), AssistantMessage("Run:\n\n```python\nprint(1)\n```")])
    item = model.item(1)
    geometry = view.delegate.geometry(item, view._option(model.index(1, 0)))
    found: QPoint | None = None
    for number, doc in enumerate(view.selection.docs(1)):
        origin = geometry.origins[number]
        for y in range(0, int(doc.size().height()), 2):
            for x in range(0, int(doc.textWidth()), 2):
                if doc.documentLayout().anchorAt(QPointF(x, y)).startswith(COPY_SCHEME):
                    found = QPoint(int(origin.x()) + x + 1, int(origin.y()) + y + 1)
                    break
            if found:
                break
        if found:
            break
    assert found is not None
    QGuiApplication.clipboard().clear()
    with qtbot.waitSignal(view.delegate.codeCopied):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=found)
    assert QGuiApplication.clipboard().text() == "print(1)"
    # A drag that ends on the link selects and copies nothing through it.
    QGuiApplication.clipboard().clear()
    _drag(view, qtbot, _word(view, 1, "Run"), found)
    assert QGuiApplication.clipboard().text() == ""
    assert view.selection.has_selection()


def test_the_selection_is_painted_in_the_highlight_colour(view: TranscriptView, qtbot: Any) -> None:
    _load(view, HISTORY)
    point = _word(view, 1, "delta")
    highlight = view.palette().color(view.palette().ColorRole.Highlight).name()

    def colours() -> set[str]:
        image = view.viewport().grab().toImage()
        return {
            image.pixelColor(point.x() + dx, point.y() + dy).name()
            for dx in range(-3, 4)
            for dy in range(-3, 4)
        }

    assert highlight not in colours()
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: highlight in colours())


def test_the_selection_survives_streaming_and_goes_with_a_conversation_switch(
    view: TranscriptView, qtbot: Any
) -> None:
    model = _load(view, HISTORY)
    _drag(view, qtbot, _word(view, 0, "bravo", 0), _word(view, 0, "charlie", 1))
    model.append_delta("Streaming more words")
    model.flush()
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    assert view.selection.selected_text() == "bravo charlie"
    model.load_history([UserMessage("another conversation")])
    assert not view.selection.has_selection()
    assert view.selection.selected_text() == ""


def test_dragging_past_the_bottom_edge_scrolls_and_extends(
    view: TranscriptView, qtbot: Any
) -> None:
    history = [UserMessage(f"message number {n}") for n in range(40)]
    _load(view, history)
    bar = view.verticalScrollBar()
    assert bar.value() == 0
    port = view.viewport()
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=_word(view, 0, "message", 0))
    below = QPoint(port.width() // 2, port.height() - 2)
    _move(view, QPoint(below.x(), below.y() - 100))
    _move(view, below)
    qtbot.waitUntil(lambda: bar.value() > 200, timeout=5000)
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=below)
    assert not view.selecting.scroll_timer.isActive()
    text = view.selection.selected_text()
    assert text.startswith("message number 0\n\nmessage number 1")
    assert text.count("message number") > 10
    # And upwards past the top edge, from the last message: the earlier ones join.
    view.scrollToBottom()
    QApplication.processEvents()
    top = bar.value()
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=_word(view, 39, "39", 1))
    _move(view, QPoint(below.x(), 100))
    _move(view, QPoint(below.x(), -10))
    qtbot.waitUntil(lambda: bar.value() < top - 200, timeout=5000)
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=QPoint(below.x(), -10))
    text = view.selection.selected_text()
    assert text.endswith("message number 38\n\nmessage number 39")
    assert text.count("message number") > 10


class _Paints(QObject):
    """Collects the areas the viewport repaints."""

    def __init__(self) -> None:
        super().__init__()
        self.rects: list[QRect] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QPaintEvent):
            self.rects.append(event.region().boundingRect())
        return False


def test_a_drag_inside_one_row_repaints_only_that_row(view: TranscriptView, qtbot: Any) -> None:
    _load(view, HISTORY)
    port = view.viewport()
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=_word(view, 1, "First", 0))
    _move(view, _word(view, 1, "paragraph", 1))
    QApplication.processEvents()
    paints = _Paints()
    port.installEventFilter(paints)
    _move(view, _word(view, 1, "here", 1))
    qtbot.waitUntil(lambda: bool(paints.rects))
    port.removeEventFilter(paints)
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=_word(view, 1, "here", 1))
    row = view.visualRect(view.model().index(1, 0))
    assert all(row.contains(rect) for rect in paints.rects), (row, paints.rects)
    assert view.selection.selected_text() == "First paragraph here"


def _menu_shown_by(send: Any) -> list[str]:
    """The actions of the popup menu ``send()`` opens (closed again as soon as it shows)."""
    seen: list[str] = []

    def close() -> None:
        popup = QApplication.activePopupWidget()
        if popup is None:
            QTimer.singleShot(10, close)
            return
        seen.extend(a.text() for a in popup.actions() if a.text())
        popup.close()

    QTimer.singleShot(10, close)
    send()
    return seen


@pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing the keyboard"
)
def test_right_click_and_shift_f10_open_the_menu(view: TranscriptView, qtbot: Any) -> None:
    _load(view, HISTORY)
    view.setFocus()
    view.setCurrentIndex(view.model().index(2, 0))
    point = _word(view, 1, "delta")
    expected = ["Copy", "Copy message as Markdown", "Copy message", "Select all in message"]

    def right_click() -> None:
        global_pos = view.viewport().mapToGlobal(point)
        event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, point, global_pos)
        QApplication.sendEvent(view.viewport(), event)

    assert _menu_shown_by(right_click) == expected
    assert _menu_shown_by(lambda: qtbot.keyClick(view, Qt.Key.Key_F10, SHIFT)) == expected
    assert _menu_shown_by(lambda: qtbot.keyClick(view, Qt.Key.Key_Menu)) == expected


def test_copied_tables_are_tab_separated_and_formulas_are_their_source(qapp: Any) -> None:
    from PySide6.QtWidgets import QApplication

    from ui.theme import LIGHT
    from ui.transcript.document import document_css
    from ui.transcript.render import _document
    from ui.transcript.selection import doc_end, doc_text

    css = document_css(LIGHT, QApplication.font().pointSizeF())

    def text_of(markdown: str) -> str:
        from ui.transcript.markdown import render_markdown

        doc = _document(render_markdown(markdown).html, 600, QApplication.font(), css)
        return doc_text(doc, 0, doc_end(doc))

    table = text_of("| a | b |\n|---|---|\n| 1 | $x^2$ |\n| 3 | 4 |\n")
    assert table.strip("\n") == "a\tb\n1\t$x^2$\n3\t4"
    assert "\ufdd0" not in table and "\ufdd1" not in table  # no frame marks on the clipboard
    assert text_of("Roots $x = \\frac{1}{2}$ here.\n") == "Roots $x = \\frac{1}{2}$ here."
    code = text_of("```python\nx = 1\ny = 2\n```\n")
    assert "x = 1\ny = 2" in code
