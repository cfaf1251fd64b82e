"""How the mouse, the keys and the context menu change the transcript's text selection.

The view's event handlers ask :class:`SelectionInput`: a drag extends the selection (and
scrolls while the pointer is held near or past the top/bottom edge), a double-click selects a
word and a third click soon after, near it, the paragraph; Shift(+Ctrl)+arrows/Home/End extend
from the caret (the last click, else the current message's start) across documents and rows;
Ctrl+A selects the current message (not the whole transcript, which can be thousands of
messages); Escape clears. The selection itself (:class:`.selection.TextSelection`) decides
what is selected and copied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QObject, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence, QTextCursor, QTextDocument
from PySide6.QtWidgets import QMenu

from .model import Roles, TranscriptItem
from .rows import copy_text
from .selection import Point, TextSelection, doc_end, line_x

if TYPE_CHECKING:
    from .view import TranscriptView

__all__ = ["SCROLL_EDGE", "SelectionInput", "key_move"]

#: How near the viewport's top/bottom edge (px) a drag starts scrolling.
SCROLL_EDGE = 24
Move = QTextCursor.MoveOperation

_KEYS = {
    (Qt.Key.Key_Left, False): Move.Left,
    (Qt.Key.Key_Right, False): Move.Right,
    (Qt.Key.Key_Left, True): Move.PreviousWord,
    (Qt.Key.Key_Right, True): Move.NextWord,
    (Qt.Key.Key_Up, False): Move.Up,
    (Qt.Key.Key_Down, False): Move.Down,
    (Qt.Key.Key_Home, False): Move.StartOfLine,
    (Qt.Key.Key_End, False): Move.EndOfLine,
}
_FORWARD = {Move.Right, Move.NextWord, Move.Down, Move.EndOfLine}
_IN_LINE = {Move.StartOfLine, Move.EndOfLine}  # they stay in their line, even already there


def key_move(key: int, modifiers: Qt.KeyboardModifier) -> Move | None:
    """The move a Shift(+Ctrl)+arrow/Home/End key makes (``None``: not a selection key)."""
    if not modifiers & Qt.KeyboardModifier.ShiftModifier:
        return None
    ctrl = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
    return _KEYS.get((Qt.Key(key), ctrl))


class SelectionInput(QObject):
    """The pointer's state (press, drag, last double-click), the keys and the menu."""

    def __init__(self, view: TranscriptView, selection: TextSelection) -> None:
        super().__init__(view)
        self._view = view
        self.selection = selection
        self.press: QPoint | None = None  # where the left button went down (None: up)
        self.dragging = False
        self.swallow_release = False  # the release ends a selecting gesture: no click
        self._double_at: QPoint | None = None
        self._double_clock = QElapsedTimer()
        self._pointer = QPoint()
        self.scroll_timer = QTimer(self)
        self.scroll_timer.setInterval(30)
        self.scroll_timer.timeout.connect(self._autoscroll)

    # --- the pointer -----------------------------------------------------------------------

    def drag_to(self, pos: QPoint) -> None:
        """The pointer is at ``pos`` with the button held: extend, scroll near an edge."""
        self._pointer = QPoint(pos)
        point = self.selection.point_at(pos)
        if point is not None:
            self.selection.extend(point)
        height = self._view.viewport().height()
        if pos.y() < SCROLL_EDGE or pos.y() > height - SCROLL_EDGE:
            if not self.scroll_timer.isActive():
                self.scroll_timer.start()
        else:
            self.scroll_timer.stop()

    def _autoscroll(self) -> None:
        if not self.dragging:
            self.scroll_timer.stop()
            return
        y, height = self._pointer.y(), self._view.viewport().height()
        beyond = y - SCROLL_EDGE if y < SCROLL_EDGE else y - (height - SCROLL_EDGE)
        bar = self._view.verticalScrollBar()
        bar.setValue(bar.value() + max(-60, min(60, beyond)))  # faster the further out
        point = self.selection.point_at(self._pointer)
        if point is not None:
            self.selection.extend(point)

    def end_drag(self) -> None:
        self.press = None
        self.dragging = False
        self.scroll_timer.stop()

    def doubled(self, pos: QPoint) -> None:
        """A double-click at ``pos``: select the word; remember it for a triple-click."""
        point = self.selection.point_at(pos)
        if point is not None:
            self.selection.select_word(point)
        self._double_at = QPoint(pos)
        self._double_clock.start()

    def tripled(self, pos: QPoint) -> bool:
        """Whether a press at ``pos`` is a triple-click (then the paragraph is selected)."""
        at, self._double_at = self._double_at, None
        hints = QGuiApplication.styleHints()
        if at is None or not self._double_clock.isValid():
            return False
        if self._double_clock.elapsed() > hints.mouseDoubleClickInterval():
            return False
        if (pos - at).manhattanLength() > hints.startDragDistance():
            return False
        point = self.selection.point_at(pos)
        if point is not None:
            self.selection.select_block(point)
        return True

    # --- the keyboard ----------------------------------------------------------------------

    def caret(self) -> Point | None:
        """Where the keyboard extends from: the focus (the last click), else the start of the
        current message."""
        selection = self.selection
        if selection.focus is not None and selection.row_of(selection.focus.uid) >= 0:
            return selection.focus
        item = selection.item(self._view.currentIndex().row())
        return Point(item.uid, 0, 0) if item is not None else None

    def key(self, event: QKeyEvent) -> bool:
        """Handle a selection key (Ctrl+C with a selection, Ctrl+A, Escape, Shift+moves)."""
        selection = self.selection
        if event.matches(QKeySequence.StandardKey.Copy):
            return selection.copy()
        if event.matches(QKeySequence.StandardKey.SelectAll):
            selection.select_row(self._view.currentIndex().row())
            return True
        if event.key() == Qt.Key.Key_Escape and selection.has_selection():
            selection.clear()
            return True
        op = key_move(event.key(), event.modifiers())
        caret = self.caret() if op is not None else None
        if op is None or caret is None:
            return False
        anchor = selection.anchor if selection.anchor is not None else caret
        selection.set(anchor, self.moved(caret, op))
        return True

    def moved(self, point: Point, op: Move) -> Point:
        """``point`` moved by ``op`` (a character, word, line…); at a document's edge, into
        the next/previous document or row (a line up/down keeps the caret's x)."""
        selection = self.selection
        row = selection.row_of(point.uid)
        docs = selection.docs(row)
        if not docs:
            return point
        number = min(max(point.doc, 0), len(docs) - 1)
        doc = docs[number]
        cursor = QTextCursor(doc)
        cursor.setPosition(min(point.pos, doc_end(doc)))
        before = cursor.position()
        if (cursor.movePosition(op) and cursor.position() != before) or op in _IN_LINE:
            return Point(point.uid, number, cursor.position())
        forward = op in _FORWARD
        if forward and number + 1 < len(docs):
            uid, target, found = point.uid, docs[number + 1], Point(point.uid, number + 1, 0)
        elif not forward and number > 0:
            target = docs[number - 1]
            uid, found = point.uid, Point(point.uid, number - 1, doc_end(target))
        else:
            other_row = row + (1 if forward else -1)
            item, other = selection.item(other_row), selection.docs(other_row)
            if item is None or not other:
                return Point(point.uid, number, before)
            uid, target = item.uid, other[0] if forward else other[-1]
            last = Point(uid, len(other) - 1, doc_end(target))
            found = Point(uid, 0, 0) if forward else last
        if op in (Move.Up, Move.Down):
            return Point(uid, found.doc, _line_hit(doc, before, target, forward))
        return found

    # --- the menu --------------------------------------------------------------------------

    def context_menu(self, pos: QPoint) -> QMenu | None:
        """The menu for a right-click at ``pos`` (view coordinates); ``None``: not on a row.

        "Copy" copies the highlighted text; "Copy message(s) as Markdown" the Markdown source
        of every message the selection touches — whole messages, as the name says: a painted
        range cannot be mapped back to the exact Markdown it came from.
        """
        view, selection = self._view, self.selection
        index = view.indexAt(pos)
        item = index.data(Roles.ITEM) if index.isValid() else None
        if not isinstance(item, TranscriptItem):
            return None
        menu = QMenu(view)
        copy = menu.addAction("Copy")
        copy.setObjectName("copySelection")
        copy.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        copy.setEnabled(selection.has_selection())
        copy.triggered.connect(selection.copy)
        touched = len(selection.touched_rows())
        words = f"Copy {touched} messages as Markdown" if touched > 1 else ""
        markdown = menu.addAction(words or "Copy message as Markdown")
        markdown.setObjectName("copyMarkdown")
        markdown.setEnabled(touched > 0)
        markdown.triggered.connect(
            lambda: QGuiApplication.clipboard().setText(selection.markdown())
        )
        menu.addSeparator()
        # What "Copy message" always copied: this row's text (an answer's Markdown source).
        whole = menu.addAction("Copy message")
        whole.setObjectName("copyMessage")
        whole.triggered.connect(lambda: QGuiApplication.clipboard().setText(copy_text(item)))
        select = menu.addAction("Select all in message")
        select.setObjectName("selectMessage")
        select.setShortcut(QKeySequence(QKeySequence.StandardKey.SelectAll))
        row = index.row()
        select.triggered.connect(lambda: selection.select_row(row))
        return menu

    def menu_for_current(self) -> None:
        """The context menu on the current row (the Menu key, Shift+F10)."""
        view = self._view
        rect = view.visualRect(view.currentIndex())
        if rect.isValid():
            spot = QPoint(rect.center().x(), max(rect.top(), 0) + 8)
            menu = self.context_menu(spot)
            if menu is not None:
                menu.exec(view.viewport().mapToGlobal(spot))
                menu.deleteLater()


def _line_hit(doc: QTextDocument, pos: int, target: QTextDocument, down: bool) -> int:
    """The position in ``target``'s first line (``down``) or last line at the x of ``pos``
    in ``doc``."""
    block = doc.findBlock(pos)
    line = block.layout().lineForTextPosition(pos - block.position())
    x = line_x(line, pos - block.position()) if line.isValid() else 0.0
    y = 1.0 if down else max(target.size().height() - 1.0, 0.0)
    spot = target.documentLayout().hitTest(QPointF(x, y), Qt.HitTestAccuracy.FuzzyHit)
    return max(spot, 0)
