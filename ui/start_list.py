"""The start window's list of conversations: their titles under the section headers, painted
where the sidebar paints them, with none of its machinery.

The real list (:mod:`ui.sidebar_rows`) is an item view with a delegate; building it makes
Python enum classes of the ``Qt`` namespace and of the item-view classes, ~30 ms of a cold
start. This widget draws the same thing for a window that lives a few hundred milliseconds:
the same row height, card, insets, fonts and colours (:func:`row_metrics` is the arithmetic of
:func:`ui.sidebar_rows.row_geometry` and :func:`~ui.sidebar_rows.header_rect`, and a test
compares the two), the same sections (:func:`ui.sidebar_model.grouped_keys`' rule, from the
Qt-free :mod:`ui.sidebar_text`), the first conversation selected. It takes no clicks: nothing
can be opened before the core is loaded. It touches ``Qt``'s enums only to show a title that
looks like HTML as text (the entry-point test checks that none is built otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from PySide6.QtGui import (
    QFont,
    QFontMetrics,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import QLabel, QWidget

from .sidebar_text import ListedConversation, display_title, sections
from .theme import SPACE, small_font

__all__ = ["ListedRow", "RowMetrics", "TitleList", "elided", "listed_rows", "row_metrics"]

ELLIPSIS = "…"


class ListedRow(NamedTuple):
    """One row of the list: a section header (``label``) or a conversation."""

    label: str | None
    session_id: str | None
    title: str


class RowMetrics(NamedTuple):
    """Where a row's parts go, relative to a row at y = 0 in a list ``width`` wide: ``(x, y,
    w, h)`` boxes, as :class:`~PySide6.QtCore.QRect` takes them."""

    height: int
    card: tuple[int, int, int, int]
    title: tuple[int, int, int, int]
    header: tuple[int, int, int, int]


def row_metrics(width: int, body_height: int, small_height: int) -> RowMetrics:
    """The row of :mod:`ui.sidebar_rows` (no snippet, no badge) for fonts ``body_height`` and
    ``small_height`` pixels high, in a list ``width`` pixels wide."""
    height = SPACE[1] + body_height + SPACE[1] + 2
    card = (SPACE[0], 1, width - 2 * SPACE[0], height - 2)
    left = card[0] + SPACE[2]
    right = card[0] + card[2] - 1 - SPACE[1]
    title = (left, card[1] + SPACE[1], max(right - left + 1, 0), body_height)
    header_left = SPACE[0] + SPACE[2]
    header_right = width - 1 - SPACE[0] - SPACE[1]
    bottom = height - 1 - SPACE[0]
    header = (header_left, bottom - small_height + 1, header_right - header_left + 1, small_height)
    return RowMetrics(height, card, title, header)


def listed_rows(listing: Sequence[ListedConversation], now: datetime) -> list[ListedRow]:
    """The rows the sidebar shows for ``listing`` (pinned first, then newest first): a header
    row where each section starts, then its conversations."""
    rows: list[ListedRow] = []
    for label, first, end in sections(listing, now):
        rows.append(ListedRow(label, None, label))
        rows.extend(ListedRow(None, i.id, display_title(i.title)) for i in listing[first:end])
    return rows


def elided(metrics: QFontMetricsF, text: str, width: int) -> str:
    """``text`` cut with "…" to fit ``width`` pixels, as ``QFontMetrics.elidedText`` with
    ``Qt.ElideRight`` cuts it (a test compares them): characters are kept while the text up to
    and including them, measured in context, stays narrower than ``width`` less the "…"; the
    first that does not, and all after it, go. (Qt steps by grapheme: a combining mark at the
    cut may go where Qt keeps it with its letter, and Qt joins an Arabic letter to the "…"
    and keeps bidirectional controls from the cut text: such titles may be cut a letter
    differently for the few hundred milliseconds the start window is up.)"""
    if len(text) <= 1 or metrics.horizontalAdvance(text) <= width:
        return text  # (Qt never cuts a single character)
    available = width - metrics.horizontalAdvance(ELLIPSIS)
    if available < 0:
        return ""
    # Qt counts UTF-16 units: a character beyond the BMP is two.
    units = [0]
    for character in text:
        units.append(units[-1] + (2 if ord(character) > 0xFFFF else 1))
    # The first n (1 .. len-1) whose start reaches ``available`` (len when none does).
    low, high = 1, len(text)
    while low < high:
        middle = (low + high) // 2
        if metrics.horizontalAdvance(text, units[middle]) >= available:
            high = middle
        else:
            low = middle + 1
    return text[: low - 1] + ELLIPSIS


def _plain_text(label: QLabel) -> None:
    """Show ``label``'s text as text: a label takes text that looks like HTML ("<div> vs
    <span>") as rich text. Only for such titles: naming the Qt namespace's enum builds all
    of its enum classes (see the module docstring)."""
    from PySide6.QtCore import Qt

    label.setTextFormat(Qt.TextFormat.PlainText)


class TitleList(QWidget):
    """The conversations' titles under their section headers; ``current`` drawn selected.

    The text is in labels (one per row that fits; coloured by palette role: headers in the
    placeholder's muted colour, the selected title in the highlighted text's) and only the
    selected card is painted, as a filled path. ``QPainter.setPen``/``setBrush`` and ``QPen``,
    ``QBrush`` are overloaded on ``Qt`` enums, so calling any of them builds the whole ``Qt``
    namespace's enum classes; labels and ``fillPath`` do not."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("startTitles")
        self.setAccessibleName("Conversations")
        self.rows: list[ListedRow] = []
        self.current: str | None = None
        self._labels: list[QLabel] = []

    def set_listing(self, listing: Sequence[ListedConversation], now: datetime) -> None:
        self.rows = listed_rows(listing, now)
        for label in self._labels:
            label.deleteLater()
        self._labels = []
        self._place()

    def set_current(self, session_id: str | None) -> None:
        self.current = session_id
        self._place()

    def session_ids(self) -> list[str]:
        return [row.session_id for row in self.rows if row.session_id is not None]

    def title_of(self, session_id: str) -> str:
        return next(row.title for row in self.rows if row.session_id == session_id)

    def group_headers(self) -> list[tuple[str, int]]:
        """(label, row) of each section header, as :meth:`ui.sidebar.Sidebar.group_headers`."""
        return [(row.label, n) for n, row in enumerate(self.rows) if row.label is not None]

    def shown_texts(self) -> list[str]:
        """The rows' texts as shown (elided), for the rows that fit."""
        return [label.text() for label in self._labels]

    def header_font(self) -> QFont:
        """The headers' font: small and demi-bold, as the sidebar's rows have it."""
        return small_font(self.font(), bold=True)

    def metrics(self) -> RowMetrics:
        small = QFontMetrics(self.header_font()).height()
        return row_metrics(self.width(), QFontMetrics(self.font()).height(), small)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place()

    def _place(self) -> None:
        """A label for each row that fits the height, placed and elided to the width."""
        m = self.metrics()
        small = self.header_font()
        fitting = min(len(self.rows), -(-self.height() // m.height))
        for n in range(fitting):
            row = self.rows[n]
            if n == len(self._labels):
                label = QLabel(self)
                if row.label is not None:
                    label.setFont(small)
                    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # muted
                self._labels.append(label)
                label.show()
            label = self._labels[n]
            if row.label is None:
                selected = row.session_id == self.current
                label.setForegroundRole(
                    QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
                )
            x, y, w, h = m.header if row.label is not None else m.title
            label.setGeometry(x, n * m.height + y, w, h)
            if "<" in row.title:
                _plain_text(label)
            label.setText(elided(QFontMetricsF(label.font()), row.title, w))
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        m = self.metrics()
        for n, row in enumerate(self.rows):
            if row.session_id is not None and row.session_id == self.current:
                x, y, w, h = m.card
                radius = SPACE[1] - 2
                path = QPainterPath()
                path.addRoundedRect(x, n * m.height + y, w, h, radius, radius)
                painter = QPainter(self)
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                painter.fillPath(path, self.palette().brush(QPalette.ColorRole.Highlight))
                painter.end()
                break
