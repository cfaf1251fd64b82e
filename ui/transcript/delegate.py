"""The transcript's delegate: row sizes (exact or estimated), painting, and anchor clicks.

Rows are painted from the documents :mod:`.render` builds. Only the part of a row the device can
show is drawn; rows without a render are laid out with an estimated height and corrected once
painted. Anchors are only followed on a click: copy a code block, open/close a tool card or an
answer's reasoning, or hand an http/https link to the view.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from .layout import (
    OUTER_X,
    OUTER_Y,
    PAD,
    RowGeometry,
    content_width,
    doc_at,
    row_geometry,
    row_height,
)
from .markdown import COPY_SCHEME, is_safe_link
from .model import ItemKind, Roles, TranscriptItem, TranscriptModel
from .render import (
    MAX_RENDERED_CHARS,
    TOGGLE_SCHEME,
    MessageRender,
    RenderCache,
    footer_html,
    header_html,
)

__all__ = ["OUTER_X", "OUTER_Y", "PAD", "SelectionSource", "TranscriptDelegate"]

# While the view follows the end (how a conversation opens), these last rows are measured
# exactly, so what first appears on screen is already laid out right.
EXACT_TAIL = 12
ESTIMATE_WIDTH_SLACK = 40


def _visible_rect(painter: QPainter) -> QRectF | None:
    """The painter's device area in its current (logical) coordinates; ``None``: unknown."""
    device: Any = painter.device()
    if device is None:
        return None
    inverse, invertible = painter.worldTransform().inverted()
    if not invertible:
        return None
    # Device pixels (not divided by the pixel ratio): a larger area only means more drawing.
    area = QRectF(0, 0, device.width(), device.height())
    return inverse.mapRect(area).adjusted(-1, -1, 1, 1)


class SelectionSource(Protocol):
    """What the delegate asks while painting: the selected text of one row, per document."""

    def ranges(self, uid: int) -> dict[int, tuple[int, int]]:
        """Document number -> (start, end) character positions selected in it (may be empty)."""
        ...


class TranscriptDelegate(QStyledItemDelegate):
    """Paints rows and handles clicks on their anchors (copy, expand, links)."""

    linkActivated = Signal(str)
    codeCopied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._renders = RenderCache()
        # uid -> (version, width, exact, size): what sizeHint answered, so a relayout of
        # thousands of rows is a dictionary lookup per row.
        self._sizes: dict[int, tuple[int, int, bool, QSize]] = {}
        self._metrics: tuple[float, float, float] | None = None  # reset by forget()
        self._fix: list[QPersistentModelIndex] = []
        self._fix_timer = QTimer(self)
        self._fix_timer.setSingleShot(True)
        self._fix_timer.setInterval(0)
        self._fix_timer.timeout.connect(self._fix_sizes)
        self.selection: SelectionSource | None = None  # the view's text selection, if any

    # --- rendering -------------------------------------------------------------------------

    def forget(self) -> None:
        self._renders.clear()
        self._sizes.clear()
        self._metrics = None

    def render_for(
        self,
        item: TranscriptItem,
        width: float,
        option: QStyleOptionViewItem,
    ) -> MessageRender:
        return self._renders.render_for(item, width, option.font, option.palette)

    @staticmethod
    def width_for(item: TranscriptItem, option: QStyleOptionViewItem) -> float:
        """The width ``item``'s documents are laid out at in a row of ``option.rect``."""
        return content_width(item, option.rect.width())

    def geometry(self, item: TranscriptItem, option: QStyleOptionViewItem) -> RowGeometry:
        """Where ``item``'s card and documents are in the row ``option.rect`` (view coordinates)."""
        render = self.render_for(item, self.width_for(item, option), option)
        return row_geometry(item, render.docs(), option.rect)

    def _item(self, index: QModelIndex | QPersistentModelIndex) -> TranscriptItem | None:
        item = index.data(Roles.ITEM)
        return item if isinstance(item, TranscriptItem) else None

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        # Called for every row on each relayout: keep the common path to a dictionary lookup.
        model = index.model()
        if isinstance(model, TranscriptModel):
            row = index.row()
            item: TranscriptItem | None = model.item(row) if 0 <= row < model.rowCount() else None
        else:
            item = self._item(index)
        if item is None:
            return QSize(0, 0)
        view = self.parent()
        row_width = option.rect.width()
        if content_width(item, row_width) <= 60 and isinstance(view, QAbstractItemView):
            row_width = view.viewport().width()
        width = content_width(item, row_width)
        if width <= 60:
            width = 400.0
        key = int(width)
        cached = self._sizes.get(item.uid)
        rendered = item.uid in self._renders
        if (
            cached is not None
            and cached[0] == item.version
            and (
                cached[1] == key
                if cached[2] or rendered
                # An estimate survives a small width change (a scroll bar appearing).
                else abs(cached[1] - key) < ESTIMATE_WIDTH_SLACK
            )
        ):
            if cached[2] or not rendered:
                return cached[3]
        exact = (
            rendered
            or item.streaming
            or (
                bool(getattr(view, "following", False))
                and model is not None
                and index.row() >= model.rowCount() - EXACT_TAIL
            )
        )
        if exact:
            body = self.render_for(item, width, option).height()
        else:
            body = self._estimate(item, width, option)
        size = QSize(max(int(row_width), 1), row_height(item, body))
        self._sizes[item.uid] = (item.version, key, exact, size)
        return size

    def _estimate(self, item: TranscriptItem, width: float, option: QStyleOptionViewItem) -> float:
        """A row's height without rendering it (lines of wrapped text); painting corrects it."""
        metrics = self._metrics
        if metrics is None:
            normal, small = QFontMetricsF(option.font), QFont(option.font)
            small.setPointSizeF(max(small.pointSizeF() * 0.85, 6.0))
            metrics = (
                normal.lineSpacing(),
                max(normal.averageCharWidth(), 1.0),
                QFontMetricsF(small).lineSpacing(),
            )
            self._metrics = metrics
        line, char, small_line = metrics
        header = small_line if header_html(item) else 0.0
        footer = small_line if footer_html(item) else 0.0
        if item.has_reasoning:
            header += small_line  # the collapsed "Thought for N s" line (opened rows are exact)
        if item.kind is ItemKind.NOTE:
            return header
        if item.kind is ItemKind.TOOL:
            if not item.expanded:
                return header + footer + line + 6
            text = f"{item.arguments_text}\n{item.result or ''}"
            return header + footer + (text.count("\n") + 6) * line
        text = item.text
        length = min(len(text), MAX_RENDERED_CHARS)
        per_line = max(int(width / char), 10)
        lines = text.count("\n", 0, length) + length / per_line + 1
        paragraphs = text.count("\n\n", 0, length) + 1
        return header + footer + lines * line + paragraphs * 6

    def _fix_sizes(self) -> None:
        """Rows painted with an estimated height: relayout (their exact height is now known)."""
        fix, self._fix = self._fix, []
        for persistent in fix:
            model = persistent.model()
            if persistent.isValid() and model is not None:
                self.sizeHintChanged.emit(model.index(persistent.row(), persistent.column()))
                return  # one signal relayouts the whole view

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        item = self._item(index)
        if item is None:
            return
        render = self.render_for(item, self.width_for(item, option), option)
        cached = self._sizes.get(item.uid)
        if cached is not None and not cached[2]:
            self._fix.append(QPersistentModelIndex(index))
            self._fix_timer.start()
        palette = option.palette
        dark = render.dark
        docs = render.docs()
        geometry = row_geometry(item, docs, option.rect)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        card = geometry.card
        fill, border = self._colours(item, palette, dark)
        if card is not None and fill is not None:
            pen = QPen(border) if border is not None else QPen(Qt.PenStyle.NoPen)
            if item.kind is ItemKind.DRAFT:
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(fill)
            painter.drawRoundedRect(card, 8, 8)
        if card is not None and option.state & QStyle.StateFlag.State_HasFocus:
            painter.setPen(
                QPen(palette.color(QPalette.ColorRole.Highlight), 1, Qt.PenStyle.DotLine)
            )
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(card.adjusted(1, 1, -1, -1), 8, 8)
        text_colour = palette.color(QPalette.ColorRole.Text)
        muted = palette.color(QPalette.ColorRole.PlaceholderText)
        visible = _visible_rect(painter)
        selected = self.selection.ranges(item.uid) if self.selection is not None else {}
        for number, doc in enumerate(docs):
            origin = geometry.origins[number]
            height = geometry.sizes[number][1]
            # Draw only what the device can show: a long answer is a tall row, and drawing
            # all of it every frame made a delta's cost grow with the answer's length.
            clip = QRectF(0, 0, doc.textWidth(), height)
            if visible is not None:
                clip = clip.intersected(visible.translated(-origin.x(), -origin.y()))
            if clip.isEmpty():
                continue
            painter.save()
            painter.translate(origin)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            pal = QPalette(palette)
            colour = (
                muted
                if (
                    doc is render.header
                    or doc is render.footer
                    or doc is render.reasoning  # dimmed: not the answer
                    or item.kind is ItemKind.NOTE
                )
                else text_colour
            )
            pal.setColor(QPalette.ColorRole.Text, colour)
            ctx.palette = pal
            ctx.clip = clip
            span = selected.get(number)
            if span is not None and span[1] > span[0]:
                ctx.selections = [self._selection_format(doc, span, palette)]
            doc.documentLayout().draw(painter, ctx)
            painter.restore()
        painter.restore()

    @staticmethod
    def _selection_format(
        doc: QTextDocument, span: tuple[int, int], palette: QPalette
    ) -> QAbstractTextDocumentLayout.Selection:
        selection = QAbstractTextDocumentLayout.Selection()
        cursor = QTextCursor(doc)
        last = max(doc.characterCount() - 1, 0)
        cursor.setPosition(min(span[0], last))
        cursor.setPosition(min(span[1], last), QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        fmt = QTextCharFormat()
        fmt.setBackground(palette.color(QPalette.ColorRole.Highlight))
        fmt.setForeground(palette.color(QPalette.ColorRole.HighlightedText))
        selection.format = fmt
        return selection

    @staticmethod
    def _colours(
        item: TranscriptItem,
        palette: QPalette,
        dark: bool,
    ) -> tuple[QColor | None, QColor | None]:
        base = palette.color(QPalette.ColorRole.Base)
        if item.kind is ItemKind.USER:
            accent = palette.color(QPalette.ColorRole.Highlight)
            fill = QColor(accent)
            fill.setAlpha(40 if not dark else 70)
            return fill, None
        if item.kind is ItemKind.ASSISTANT:
            return base, palette.color(QPalette.ColorRole.Mid)
        if item.kind is ItemKind.TOOL:
            fill = palette.color(QPalette.ColorRole.AlternateBase)
            return fill, palette.color(QPalette.ColorRole.Mid)
        if item.kind is ItemKind.DRAFT:
            return QColor(255, 152, 0, 35), QColor(230, 120, 0)
        return None, None

    # --- hit testing -----------------------------------------------------------------------

    def anchor_at(
        self, item: TranscriptItem, option: QStyleOptionViewItem, pos: QPoint
    ) -> tuple[str, int] | None:
        """The anchor under ``pos`` (view coordinates) and the index of its document."""
        render = self.render_for(item, self.width_for(item, option), option)
        docs = render.docs()
        hit = doc_at(row_geometry(item, docs, option.rect), pos.x(), pos.y())
        if hit is None:
            return None
        number, local = hit
        anchor = docs[number].documentLayout().anchorAt(local)
        return (anchor, number) if anchor else None

    def editorEvent(
        self,
        event: QEvent,
        model: Any,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        if event.type() != QEvent.Type.MouseButtonRelease:
            return False
        assert isinstance(event, QMouseEvent)
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        item = self._item(index)
        if item is None:
            return False
        hit = self.anchor_at(item, option, event.position().toPoint())
        if hit is None:
            return False
        return self.activate(item, index, hit[0])

    def activate(
        self, item: TranscriptItem, index: QModelIndex | QPersistentModelIndex, anchor: str
    ) -> bool:
        """Follow one anchor of ``item``: copy a code block, toggle a card, or open a link."""
        if anchor.startswith(f"{COPY_SCHEME}:"):
            render = self._renders.get(item.uid)
            try:
                code = render.code_blocks[int(anchor.split(":", 1)[1])] if render else None
            except (ValueError, IndexError):
                code = None
            if code is not None:
                QGuiApplication.clipboard().setText(code)
                self.codeCopied.emit(code)
            return True
        if anchor.startswith(f"{TOGGLE_SCHEME}:"):
            model = index.model()
            if model is not None:
                model.setData(index, not item.expanded, Roles.EXPANDED)
            return True
        if is_safe_link(anchor):
            self.linkActivated.emit(anchor)
            return True
        return True  # anything else is inert
