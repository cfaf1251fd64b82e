"""How one sidebar row looks: where its parts go, and the delegate and list that paint it.

:func:`row_geometry` is the one place that says where a row's date-group header, card, title,
snippet and Resume badge go; painting (:class:`RowDelegate`), row heights and clicks
(:class:`ConversationList`) all use it. Titles and snippets are drawn as runs of text
(:func:`fit_spans`): the search's words in bold, elided with "…" (Qt.ElideRight) where the
row ends, so nothing is ever wider than the list; the badge stays inside the visible width.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QMouseEvent, QPainter
from PySide6.QtWidgets import (
    QListWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from .sidebar_text import Span, match_spans, snippet_spans
from .theme import SPACE, TYPE_SCALE, Tokens, tokens_for

__all__ = [
    "BADGE_ROLE",
    "BADGE_TEXT",
    "FIRST_ROLE",
    "GROUP_ROLE",
    "SESSION_ROLE",
    "SNIPPET_ROLE",
    "ConversationList",
    "RowDelegate",
    "RowGeometry",
    "Run",
    "fit_spans",
    "row_geometry",
    "small_font",
]

SESSION_ROLE = Qt.ItemDataRole.UserRole + 1
BADGE_ROLE = Qt.ItemDataRole.UserRole + 2
SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 3
GROUP_ROLE = Qt.ItemDataRole.UserRole + 4  # the date group's label, on a group's first row
FIRST_ROLE = Qt.ItemDataRole.UserRole + 5  # the list's first row (less space above it)

BADGE_TEXT = "Resume"

# --- one row's geometry ----------------------------------------------------------------------


def small_font(font: QFont, *, bold: bool = False) -> QFont:
    small = QFont(font)
    if font.pointSizeF() > 0:
        small.setPointSizeF(max(font.pointSizeF() * TYPE_SCALE["small"], 6.0))
    else:
        small.setPixelSize(max(round(font.pixelSize() * TYPE_SCALE["small"]), 8))
    if bold:
        small.setWeight(QFont.Weight.DemiBold)
    return small


@dataclass(frozen=True, slots=True)
class RowGeometry:
    """Where one row's parts go (viewport coordinates)."""

    header: QRect | None  # the date group's label above the card
    card: QRect  # the hover/selection background: what a click opens
    title: QRect
    snippet: QRect | None
    badge: QRect | None


def row_geometry(
    rect: QRect, font: QFont, *, header: bool, first: bool, snippet: bool, badge: bool
) -> RowGeometry:
    """The parts of a row drawn in ``rect`` with ``font`` (the list's); ``rect``'s height is
    ignored, so ``row_geometry(...).card.bottom()`` also gives the row's height."""
    body_h = QFontMetrics(font).height()
    small = QFontMetrics(small_font(font))
    top = rect.top()
    header_rect = None
    if header:
        top += SPACE[1] if first else SPACE[3]
        header_rect = QRect(rect.left() + SPACE[0] + SPACE[2], top, 0, small.height())
        header_rect.setRight(rect.right() - SPACE[0] - SPACE[1])
        top = header_rect.bottom() + 1 + SPACE[0]
    elif first:
        top += SPACE[0]
    card_h = SPACE[1] + body_h + (SPACE[0] + small.height() if snippet else 0) + SPACE[1]
    card = QRect(rect.left() + SPACE[0], top + 1, rect.width() - 2 * SPACE[0], card_h)
    left, right = card.left() + SPACE[2], card.right() - SPACE[1]
    title = QRect(left, card.top() + SPACE[1], max(right - left + 1, 0), body_h)
    badge_rect = None
    if badge:
        width = small.horizontalAdvance(BADGE_TEXT) + 2 * SPACE[1]
        height = small.height() + SPACE[0]
        badge_rect = QRect(right - width + 1, title.center().y() - height // 2, width, height)
        title.setRight(max(badge_rect.left() - SPACE[1], title.left()))
    snippet_rect = None
    if snippet:
        snippet_rect = QRect(left, title.bottom() + 1 + SPACE[0], title.width(), small.height())
        snippet_rect.setRight(right)
    return RowGeometry(header_rect, card, title, snippet_rect, badge_rect)


def geometry_of(
    rect: QRect, font: QFont, index: QModelIndex | QPersistentModelIndex
) -> RowGeometry:
    return row_geometry(
        rect,
        font,
        header=bool(index.data(GROUP_ROLE)),
        first=bool(index.data(FIRST_ROLE)),
        snippet=bool(index.data(SNIPPET_ROLE)),
        badge=bool(index.data(BADGE_ROLE)),
    )


#: A run as drawn: its text (elided where the row ends), whether highlighted, its x offset.
Run = tuple[str, bool, int]


def fit_spans(spans: list[Span], fonts: tuple[QFont, QFont], width: int) -> list[Run]:
    """Lay ``spans`` out left to right in ``width`` pixels, highlighted ones in ``fonts[1]``:
    the run that does not fit is elided with "…" (Qt.ElideRight) and the rest dropped; when
    not even "…" fits after a run, that run is elided instead."""
    metrics = (QFontMetrics(fonts[0]), QFontMetrics(fonts[1]))
    elide = Qt.TextElideMode.ElideRight
    runs: list[Run] = []
    x = 0
    for text, strong in spans:
        m = metrics[strong]
        advance = m.horizontalAdvance(text)
        if x + advance <= width:
            runs.append((text, strong, x))
            x += advance
            continue
        shown = m.elidedText(text, elide, width - x)
        if shown:
            runs.append((shown, strong, x))
        elif runs:
            last, last_strong, last_x = runs.pop()
            lm = metrics[last_strong]
            short = lm.horizontalAdvance(last) - lm.horizontalAdvance("…") - 1
            runs.append((lm.elidedText(last, elide, max(short, 0)), last_strong, last_x))
        break
    return runs


def _fonts(font: QFont) -> tuple[tuple[QFont, QFont], tuple[QFont, QFont]]:
    """(plain, highlighted) fonts for a title and for a snippet."""
    bold = QFont(font)
    bold.setWeight(QFont.Weight.Bold)
    return (font, bold), (small_font(font), small_font(font, bold=True))


def _draw_runs(
    painter: QPainter,
    rect: QRect,
    runs: list[Run],
    fonts: tuple[QFont, QFont],
    colours: tuple[QColor, QColor],
) -> None:
    flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
    for text, strong, x in runs:
        painter.setFont(fonts[strong])
        painter.setPen(colours[strong])
        painter.drawText(
            QRect(rect.left() + x, rect.top(), rect.width() - x, rect.height()), flags, text
        )


class RowDelegate(QStyledItemDelegate):
    """Paints a row: its group header, its card (hover, selection, focus), the title with the
    search's words in bold, the snippet, and the Resume pill at the right edge."""

    def __init__(self, parent: QWidget, terms: Callable[[], list[str]]) -> None:
        super().__init__(parent)
        self._terms = terms
        self._heights: dict[tuple[str, bool, bool, bool], int] = {}  # a few kinds of row

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        font: QFont = option.font
        key = (
            font.key(),
            bool(index.data(GROUP_ROLE)),
            bool(index.data(FIRST_ROLE)),
            bool(index.data(SNIPPET_ROLE)),
        )
        height = self._heights.get(key)
        if height is None:
            height = geometry_of(QRect(0, 0, 200, 0), font, index).card.bottom() + 2
            self._heights[key] = height
        return QSize(1, height)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        rect: QRect = option.rect
        font: QFont = option.font
        state: QStyle.StateFlag = option.state
        tokens = tokens_for(option.palette)
        g = geometry_of(rect, font, index)
        selected = bool(state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if g.header is not None:
            header_font = small_font(font, bold=True)
            painter.setFont(header_font)
            painter.setPen(tokens.color("muted"))
            label = QFontMetrics(header_font).elidedText(
                str(index.data(GROUP_ROLE)), Qt.TextElideMode.ElideRight, g.header.width()
            )
            painter.drawText(g.header, Qt.AlignmentFlag.AlignVCenter, label)
        widget = option.widget
        over_header = isinstance(widget, ConversationList) and widget.over_header
        self._paint_card(painter, g.card, state, tokens, over_header)
        text = tokens.color("selection_text" if selected else "text")
        muted = text if selected else tokens.color("muted")
        title_fonts, snippet_fonts = _fonts(font)
        title_runs, snippet_runs = self.runs(index, g, font)
        _draw_runs(painter, g.title, title_runs, title_fonts, (text, text))
        if g.snippet is not None:
            _draw_runs(painter, g.snippet, snippet_runs, snippet_fonts, (muted, text))
        if g.badge is not None:
            self._paint_badge(painter, g.badge, small_font(font, bold=True), tokens)
        painter.restore()

    def runs(
        self, index: QModelIndex | QPersistentModelIndex, g: RowGeometry, font: QFont
    ) -> tuple[list[Run], list[Run]]:
        """The title's and the snippet's runs as this row draws them (search words bold)."""
        title_fonts, snippet_fonts = _fonts(font)
        title = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        title_runs = fit_spans(match_spans(title, self._terms()), title_fonts, g.title.width())
        snippet = index.data(SNIPPET_ROLE)
        if g.snippet is None or not snippet:
            return title_runs, []
        spans = snippet_spans(str(snippet))
        return title_runs, fit_spans(spans, snippet_fonts, g.snippet.width())

    @staticmethod
    def _paint_card(
        painter: QPainter, card: QRect, state: QStyle.StateFlag, tokens: Tokens, over_header: bool
    ) -> None:
        radius = SPACE[1] - 2
        painter.setPen(Qt.PenStyle.NoPen)
        if state & QStyle.StateFlag.State_Selected:
            painter.setBrush(tokens.color("selection_bg"))
            painter.drawRoundedRect(card, radius, radius)
        elif state & QStyle.StateFlag.State_MouseOver and not over_header:
            painter.setBrush(tokens.color("code_header"))  # muted text stays readable on it
            painter.drawRoundedRect(card, radius, radius)
        if state & QStyle.StateFlag.State_HasFocus and state & QStyle.StateFlag.State_Active:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(tokens.color("link"))  # the accent is too close to dark selection
            painter.drawRoundedRect(card.adjusted(0, 0, -1, -1), radius, radius)

    @staticmethod
    def _paint_badge(painter: QPainter, badge: QRect, font: QFont, tokens: Tokens) -> None:
        painter.setPen(tokens.color("draft_border"))
        painter.setBrush(tokens.color("draft_bg"))
        radius = badge.height() / 2
        painter.drawRoundedRect(badge.adjusted(0, 0, -1, -1), radius, radius)
        painter.setFont(font)
        painter.setPen(tokens.color("warning"))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, BADGE_TEXT)


class ConversationList(QListWidget):
    """The list itself: keyboard moves report the row moved to; a click on a group header
    does nothing (headers are not conversations)."""

    moved = Signal(object)  # the QListWidgetItem the keyboard moved to

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)  # the hover card
        #: Whether the mouse is on a group header (then no card looks hovered).
        self.over_header = False

    def keyPressEvent(self, event: QKeyEvent) -> None:
        before = self.currentItem()
        super().keyPressEvent(event)
        after = self.currentItem()
        if after is not None and after is not before:
            self.moved.emit(after)

    def on_header(self, pos: QPoint) -> bool:
        """Whether ``pos`` (viewport coordinates) is on a group header, not a conversation."""
        index = self.indexAt(pos)
        if not index.isValid():
            return False
        geometry = geometry_of(self.visualRect(index), self.font(), index)
        return pos.y() < geometry.card.top()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        over = self.on_header(event.position().toPoint())
        if over != self.over_header:
            self.over_header = over
            self.viewport().update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self.over_header = False
        super().leaveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.on_header(event.position().toPoint()):
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self.on_header(event.position().toPoint()):
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if self.on_header(event.position().toPoint()):
            event.accept()
            return
        super().mouseDoubleClickEvent(event)
