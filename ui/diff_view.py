"""``DiffView``: the approval card's rows — a coloured unified diff with line numbers.

One text block per :class:`ui.approval_view.DiffRow`, its background by kind (added lines on
``diff_add_bg``, removed on ``diff_del_bg``, file and hunk headers on ``code_header``, context
plain on ``code_bg``), in the monospace font. The old/new line numbers and the +/− sign are
painted in a gutter beside the text, so selecting and copying gives the file's own text. Lines
wrap at the widget's width; :meth:`DiffView.content_height` is the height that shows every row.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from .approval_view import DiffRow, RowKind
from .theme import LIGHT, SPACE, TYPE_SCALE, Tokens

__all__ = ["DiffView"]

_SIGNS = {RowKind.ADD: "+", RowKind.DELETE: "−"}


class _Gutter(QWidget):
    def __init__(self, view: DiffView) -> None:
        super().__init__(view)
        self._view = view

    def paintEvent(self, event: QPaintEvent) -> None:
        self._view.paint_gutter(self, event.rect())


class DiffView(QPlainTextEdit):
    """Rows of a diff or preview, one text block each, coloured by kind; old/new line numbers
    and the +/− sign in a gutter beside them (so copied text is the file's text)."""

    reflowed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.document().setDocumentMargin(SPACE[0])
        self.rows: tuple[DiffRow, ...] = ()
        self._tokens = LIGHT
        self._columns: tuple[bool, bool, bool] = (False, False, False)  # old, new, sign
        self._digit_width = 0.0
        self._gutter = _Gutter(self)
        self._width = -1
        self.updateRequest.connect(self._on_update_request)

    def set_fonts(self, base: QFont) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSizeF(base.pointSizeF() * TYPE_SCALE["small"])
        self.setFont(mono)
        self._gutter.setFont(mono)

    def show_rows(self, rows: tuple[DiffRow, ...], tokens: Tokens) -> None:
        self.rows, self._tokens = rows, tokens
        self.clear()
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        for index, row in enumerate(rows):
            block, chars = self._formats(row)
            if index:
                cursor.insertBlock(block, chars)
            else:
                cursor.setBlockFormat(block)
            if row.kind is RowKind.ARG:
                label = QTextCharFormat(chars)
                label.setFontWeight(QFont.Weight.DemiBold)
                label.setForeground(tokens.color("muted"))
                cursor.insertText(f"{row.label}: ", label)
            text = "⋯" if row.kind is RowKind.HUNK else row.text
            cursor.insertText(text, chars)
        cursor.endEditBlock()
        self._columns = (
            any(r.old is not None for r in rows),
            any(r.new is not None for r in rows),
            any(r.kind in _SIGNS for r in rows),
        )
        largest = max((max(r.old or 0, r.new or 0) for r in rows), default=0)
        metrics = QFontMetricsF(self._gutter.font())
        self._digit_width = metrics.horizontalAdvance("9" * len(str(largest)))
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)
        self._place_gutter()
        self.verticalScrollBar().setValue(0)
        self._gutter.update()

    def _formats(self, row: DiffRow) -> tuple[QTextBlockFormat, QTextCharFormat]:
        block, chars = QTextBlockFormat(), QTextCharFormat()
        background = self._background(row.kind)
        if background is not None:
            block.setBackground(background)
        chars.setForeground(self._tokens.color("code_text"))
        if row.kind is RowKind.FILE:
            chars.setFontWeight(QFont.Weight.DemiBold)
        elif row.kind in (RowKind.HUNK, RowKind.NOTE):
            chars.setForeground(self._tokens.color("muted"))
            chars.setFontItalic(row.kind is RowKind.NOTE)
        return block, chars

    def _background(self, kind: RowKind) -> QColor | None:
        name = {
            RowKind.ADD: "diff_add_bg",
            RowKind.DELETE: "diff_del_bg",
            RowKind.FILE: "code_header",
            RowKind.HUNK: "code_header",
        }.get(kind)
        return self._tokens.color(name) if name else None

    def gutter_width(self) -> int:
        old, new, sign = self._columns
        if not (old or new or sign):
            return 0
        numbers = (old + new) * (self._digit_width + SPACE[1])
        sign_width = QFontMetricsF(self._gutter.font()).horizontalAdvance("+") if sign else 0
        return int(SPACE[1] + numbers + sign_width + SPACE[0]) + 1

    def content_height(self) -> int:
        """The height showing every row without scrolling (at the current width)."""
        total = 0.0
        block = self.document().firstBlock()
        while block.isValid():
            total += self.blockBoundingRect(block).height()
            block = block.next()
        margin = self.document().documentMargin()
        return int(total + 2 * margin) + 2 * self.frameWidth()

    def _place_gutter(self) -> None:
        area = self.contentsRect()
        self._gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_gutter()
        if event.size().width() != self._width:  # wrapping changed: the height may too
            self._width = event.size().width()
            self.reflowed.emit()

    def paint_gutter(self, gutter: QWidget, area: QRect) -> None:
        t = self._tokens
        painter = QPainter(gutter)
        painter.fillRect(area, t.color("code_bg"))
        old_on, new_on, sign_on = self._columns
        line = QFontMetricsF(gutter.font()).height()
        block = self.firstVisibleBlock()
        top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
        while block.isValid() and top <= area.bottom():
            height = self.blockBoundingRect(block).height()
            index = block.blockNumber()
            if block.isVisible() and index < len(self.rows):
                row = self.rows[index]
                background = self._background(row.kind)
                if background is not None:
                    painter.fillRect(QRectF(0, top, gutter.width(), height), background)
                x = float(SPACE[1])
                painter.setPen(t.color("muted"))
                for show, number in ((old_on, row.old), (new_on, row.new)):
                    if show:
                        cell = QRectF(x, top, self._digit_width, line)
                        if number is not None:
                            align = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                            painter.drawText(cell, int(align), str(number))
                        x += self._digit_width + SPACE[1]
                sign = _SIGNS.get(row.kind)
                if sign_on and sign:
                    token = "diff_add_text" if row.kind is RowKind.ADD else "diff_del_text"
                    painter.setPen(t.color(token))
                    painter.drawText(
                        QRectF(x, top, line, line),
                        int(Qt.AlignmentFlag.AlignVCenter),
                        sign,
                    )
            block = block.next()
            top += height
        painter.end()
