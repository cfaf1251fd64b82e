"""How one sidebar row looks: where its parts go, and the delegate and list that paint it.

:func:`row_geometry` is the one place that says where a conversation row's card, title,
snippet and Resume badge go, and :func:`header_rect` where a section header's label goes;
painting (:class:`RowDelegate`), row heights and clicks (:class:`ConversationList`) use them.
Every row of the list has one height (:func:`row_height`: a header row is as tall as a
conversation row, its label near the rows it heads), so the view lays out 10,000 rows without
asking Python about each. Fonts and metrics are worked out once per font (:func:`row_look`),
not for every row painted. Titles and snippets are drawn as runs of text (:func:`fit_spans`):
the search's words in bold, elided with "…" (Qt.ElideRight) where the row ends, so nothing is
ever wider than the list; the badge stays inside the visible width.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractItemModel,
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
    QAbstractItemView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from .sidebar_model import (
    BADGE_ROLE,
    GROUP_ROLE,
    SESSION_ROLE,
    SNIPPET_ROLE,
    ConversationModel,
    Row,
)
from .sidebar_text import Span, match_spans, snippet_spans
from .theme import SPACE, Tokens, small_font, tokens_for

__all__ = [
    "BADGE_ROLE",
    "BADGE_TEXT",
    "GROUP_ROLE",
    "SESSION_ROLE",
    "SNIPPET_ROLE",
    "ConversationList",
    "RowDelegate",
    "RowGeometry",
    "RowLook",
    "Run",
    "fit_spans",
    "geometry_of",
    "header_rect",
    "row_geometry",
    "row_height",
    "row_look",
    "small_font",
]

BADGE_TEXT = "Resume"

# --- one row's geometry ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RowLook:
    """A font's parts of a row: (plain, bold) fonts and metrics for titles and for small text
    (snippets, headers, the badge), and the heights and badge width they give."""

    title_fonts: tuple[QFont, QFont]
    small_fonts: tuple[QFont, QFont]
    title_metrics: tuple[QFontMetrics, QFontMetrics]
    small_metrics: tuple[QFontMetrics, QFontMetrics]
    body_height: int
    small_height: int
    badge_width: int


#: The fonts met so far and their looks (a list: comparing fonts is ~50× cheaper than their
#: ``key()``, and a list meets one font or two).
_LOOKS: list[tuple[QFont, RowLook]] = []


def row_look(font: QFont) -> RowLook:
    """The :class:`RowLook` of ``font`` (worked out once per font)."""
    for known, look in _LOOKS:
        if known == font:
            return look
    bold = QFont(font)
    bold.setWeight(QFont.Weight.Bold)
    smalls = (small_font(font), small_font(font, bold=True))
    small_metrics = (QFontMetrics(smalls[0]), QFontMetrics(smalls[1]))
    look = RowLook(
        title_fonts=(QFont(font), bold),
        small_fonts=smalls,
        title_metrics=(QFontMetrics(font), QFontMetrics(bold)),
        small_metrics=small_metrics,
        body_height=QFontMetrics(font).height(),
        small_height=small_metrics[0].height(),
        badge_width=small_metrics[0].horizontalAdvance(BADGE_TEXT) + 2 * SPACE[1],
    )
    _LOOKS.insert(0, (QFont(font), look))
    del _LOOKS[8:]
    return look


@dataclass(frozen=True, slots=True)
class RowGeometry:
    """Where one conversation row's parts go (viewport coordinates)."""

    card: QRect  # the hover/selection background: what a click opens
    title: QRect
    snippet: QRect | None
    badge: QRect | None


def row_height(font: QFont, *, snippet: bool) -> int:
    """The height of every row (conversations and headers alike) in a list drawn in ``font``;
    with ``snippet``, room for a search snippet under each title."""
    look = row_look(font)
    card_h = SPACE[1] + look.body_height + SPACE[1]
    if snippet:
        card_h += SPACE[0] + look.small_height
    return card_h + 2


def row_geometry(rect: QRect, font: QFont, *, snippet: bool, badge: bool) -> RowGeometry:
    """The parts of a conversation row drawn in ``rect`` with ``font`` (the list's)."""
    look = row_look(font)
    card = QRect(
        rect.left() + SPACE[0],
        rect.top() + 1,
        rect.width() - 2 * SPACE[0],
        row_height(font, snippet=snippet) - 2,
    )
    left, right = card.left() + SPACE[2], card.right() - SPACE[1]
    title = QRect(left, card.top() + SPACE[1], max(right - left + 1, 0), look.body_height)
    badge_rect = None
    if badge:
        height = look.small_height + SPACE[0]
        badge_rect = QRect(
            right - look.badge_width + 1,
            title.center().y() - height // 2,
            look.badge_width,
            height,
        )
        title.setRight(max(badge_rect.left() - SPACE[1], title.left()))
    snippet_rect = None
    if snippet:
        snippet_rect = QRect(left, title.bottom() + 1 + SPACE[0], title.width(), look.small_height)
        snippet_rect.setRight(right)
    return RowGeometry(card, title, snippet_rect, badge_rect)


def header_rect(rect: QRect, font: QFont) -> QRect:
    """Where a section header's label goes in its row ``rect``: at the row's foot, close to
    the conversations it heads."""
    height = row_look(font).small_height
    label = QRect(rect.left() + SPACE[0] + SPACE[2], 0, 0, height)
    label.moveBottom(rect.bottom() - SPACE[0])
    label.setRight(rect.right() - SPACE[0] - SPACE[1])
    return label


def geometry_of(
    rect: QRect, font: QFont, index: QModelIndex | QPersistentModelIndex
) -> RowGeometry:
    """:func:`row_geometry` of the conversation row ``index`` (a search result has a snippet)."""
    model = index.model()
    searching = bool(getattr(model, "searching", False))
    return row_geometry(rect, font, snippet=searching, badge=bool(index.data(BADGE_ROLE)))


#: A run as drawn: its text (elided where the row ends), whether highlighted, its x offset.
Run = tuple[str, bool, int]


def fit_spans(spans: list[Span], fonts: tuple[QFont, QFont], width: int) -> list[Run]:
    """Lay ``spans`` out left to right in ``width`` pixels, highlighted ones in ``fonts[1]``:
    the run that does not fit is elided with "…" (Qt.ElideRight) and the rest dropped; when
    not even "…" fits after a run, that run is elided instead."""
    return _fit(spans, (QFontMetrics(fonts[0]), QFontMetrics(fonts[1])), width)


def _fit(spans: list[Span], metrics: tuple[QFontMetrics, QFontMetrics], width: int) -> list[Run]:
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


def _searching(model: QAbstractItemModel | None) -> bool:
    return bool(getattr(model, "searching", False))


def _row(index: QModelIndex | QPersistentModelIndex) -> Row:
    """What ``index`` shows (nothing, on another model than the sidebar's)."""
    model = index.model()
    if isinstance(model, ConversationModel):
        return model.row(index.row())
    return Row(None, None, "", False, None)


class RowDelegate(QStyledItemDelegate):
    """Paints a row: a section header's label, or a conversation's card (hover, selection,
    focus), its title with the search's words in bold, its snippet and the Resume pill at
    the right edge."""

    def __init__(self, parent: QWidget, terms: Callable[[], list[str]]) -> None:
        super().__init__(parent)
        self._terms = terms

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        font: QFont = option.font
        return QSize(1, row_height(font, snippet=_searching(index.model())))

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        rect: QRect = option.rect
        font: QFont = option.font
        look = row_look(font)
        tokens = tokens_for(option.palette)
        row = _row(index)
        label = row.label
        painter.save()
        if label is not None:
            where = header_rect(rect, font)
            painter.setFont(look.small_fonts[1])
            painter.setPen(tokens.color("muted"))
            shown = look.small_metrics[1].elidedText(
                str(label), Qt.TextElideMode.ElideRight, where.width()
            )
            painter.drawText(where, Qt.AlignmentFlag.AlignVCenter, shown)
            painter.restore()
            return
        state: QStyle.StateFlag = option.state
        searching = _searching(index.model())
        g = row_geometry(rect, font, snippet=searching, badge=row.badge)
        selected = bool(state & QStyle.StateFlag.State_Selected)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._paint_card(painter, g.card, state, tokens)
        text = tokens.color("selection_text" if selected else "text")
        muted = text if selected else tokens.color("muted")
        title_runs, snippet_runs = self._runs(row, g, look)
        _draw_runs(painter, g.title, title_runs, look.title_fonts, (text, text))
        if g.snippet is not None:
            _draw_runs(painter, g.snippet, snippet_runs, look.small_fonts, (muted, text))
        if g.badge is not None:
            self._paint_badge(painter, g.badge, look.small_fonts[1], tokens)
        painter.restore()

    def runs(
        self, index: QModelIndex | QPersistentModelIndex, g: RowGeometry, font: QFont
    ) -> tuple[list[Run], list[Run]]:
        """The title's and the snippet's runs as this row draws them (search words bold)."""
        return self._runs(_row(index), g, row_look(font))

    def _runs(self, row: Row, g: RowGeometry, look: RowLook) -> tuple[list[Run], list[Run]]:
        spans = match_spans(row.title, self._terms())
        title_runs = _fit(spans, look.title_metrics, g.title.width())
        if g.snippet is None or not row.snippet:
            return title_runs, []
        snippet_runs = _fit(snippet_spans(row.snippet), look.small_metrics, g.snippet.width())
        return title_runs, snippet_runs

    @staticmethod
    def _paint_card(
        painter: QPainter, card: QRect, state: QStyle.StateFlag, tokens: Tokens
    ) -> None:
        radius = SPACE[1] - 2
        painter.setPen(Qt.PenStyle.NoPen)
        if state & QStyle.StateFlag.State_Selected:
            painter.setBrush(tokens.color("selection_bg"))
            painter.drawRoundedRect(card, radius, radius)
        elif state & QStyle.StateFlag.State_MouseOver:
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


_STEP_OFF_HEADER = {
    QAbstractItemView.CursorAction.MoveHome: 1,
    QAbstractItemView.CursorAction.MovePageUp: 1,
    QAbstractItemView.CursorAction.MovePageDown: 1,
    QAbstractItemView.CursorAction.MoveEnd: -1,
    QAbstractItemView.CursorAction.MoveUp: -1,
    QAbstractItemView.CursorAction.MoveDown: 1,
}


class ConversationList(QListView):
    """The list itself: every row one height; keyboard moves report the row moved to and
    never stop on a section header; a click on a header does nothing (headers are not
    conversations)."""

    moved = Signal(QModelIndex)  # the conversation row the keyboard moved to

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)  # the hover card
        self.setUniformItemSizes(True)  # no question to Python per row when laying out
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)

    def moveCursor(
        self, cursorAction: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier
    ) -> QModelIndex:
        index = super().moveCursor(cursorAction, modifiers)
        step = _STEP_OFF_HEADER.get(cursorAction, 1)
        model = self.model()
        while index.isValid() and index.data(GROUP_ROLE) is not None:
            index = model.index(index.row() + step, 0)
        return index if index.isValid() else self.currentIndex()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        before = self.currentIndex()
        super().keyPressEvent(event)
        after = self.currentIndex()
        if after.isValid() and after != before and after.data(SESSION_ROLE):
            self.moved.emit(after)

    def on_header(self, pos: QPoint) -> bool:
        """Whether ``pos`` (viewport coordinates) is on a section header's row."""
        index = self.indexAt(pos)
        return index.isValid() and index.data(GROUP_ROLE) is not None

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
