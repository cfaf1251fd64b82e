"""The transcript's delegate: row sizes (exact or estimated), painting, and clicks in rows.

Rows are painted from the documents :mod:`.render` builds, where :func:`.layout.row_geometry`
puts them (bubbles for the person, prose for answers, cards for tools). Only the part of a row
the device can show is drawn; rows without a render are laid out with an estimated height and
corrected once painted. Anchors are only followed on a click: copy a code block, open/close a
tool card or an answer's reasoning, hand an http/https link to the view, or run one of a
message's actions (its action bar, shown on hover or focus: Copy).
"""

from __future__ import annotations

import bisect
from typing import Any, Protocol

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRect,
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
    QHelpEvent,
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
    QToolTip,
    QWidget,
)

from ..theme import Tokens, tokens_for
from ..token_text import answer_tokens
from .actions import ACTION_SCHEME, RowActions
from .attachments import attachment_index
from .layout import (
    RowGeometry,
    content_width,
    doc_at,
    estimate_body,
    row_geometry,
    row_height,
)
from .markdown import COPY_SCHEME, is_safe_link
from .model import ItemKind, Roles, TranscriptItem, TranscriptModel
from .pictures import DocPictures
from .render import MAX_RENDERS, TOGGLE_SCHEME, MessageRender, RenderCache

__all__ = ["SelectionSource", "TranscriptDelegate"]

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

    def touches(self, uid: int) -> bool:
        """Whether the selection reaches into row ``uid`` (without asking for its documents)."""
        ...


class TranscriptDelegate(QStyledItemDelegate):
    """Paints rows and handles clicks on their anchors (copy, expand, links, actions)."""

    linkActivated = Signal(str)
    codeCopied = Signal(str)
    messageCopied = Signal(str)
    attachmentActivated = Signal(object)  # a sent message's ImagePart or FilePart was clicked

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
        self.actions = RowActions(self)  # each message's action bar (Copy)
        self.pictures = DocPictures()  # finished documents as pictures, blitted on repaint
        # uid -> (key, geometry, where each document ends): see _laid_out.
        self._geometries: dict[int, tuple[tuple[int, ...], RowGeometry, list[float]]] = {}
        self.actions.messageCopied.connect(self.messageCopied)

    # --- rendering -------------------------------------------------------------------------

    def forget(self) -> None:
        self._renders.clear()
        self.pictures.clear()
        self._geometries.clear()
        self._sizes.clear()
        self._metrics = None

    def render_for(
        self,
        item: TranscriptItem,
        width: float,
        option: QStyleOptionViewItem,
    ) -> MessageRender:
        return self._renders.render_for(item, width, option.font, option.palette, self._selected)

    def _selected(self, uid: int) -> bool:
        return self.selection is not None and self.selection.touches(uid)

    @staticmethod
    def width_for(item: TranscriptItem, option: QStyleOptionViewItem) -> float:
        """The width ``item``'s documents are laid out at in a row of ``option.rect``."""
        return content_width(item, option.rect.width())

    def geometry(self, item: TranscriptItem, option: QStyleOptionViewItem) -> RowGeometry:
        """Where ``item``'s parts are in the row ``option.rect`` (view coordinates)."""
        render = self.render_for(item, self.width_for(item, option), option)
        return self._laid_out(item, render, render.docs(), option.rect)[0]

    def _laid_out(
        self, item: TranscriptItem, render: MessageRender, docs: list[QTextDocument], rect: QRect
    ) -> tuple[RowGeometry, list[float]]:
        """:func:`.layout.row_geometry` of the row, and where each document ends (view y),
        kept until the row or its rectangle changes: an answer of 100,000 characters is
        ~600 documents, and laying them out on every paint cost ~7 ms a frame."""
        key = (item.version, id(render), len(docs), rect.x(), rect.y(), rect.width(), rect.height())
        cached = self._geometries.get(item.uid)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        geometry = row_geometry(item, docs, rect)
        ends = [o.y() + size[1] for o, size in zip(geometry.origins, geometry.sizes, strict=True)]
        if len(self._geometries) >= MAX_RENDERS:
            self._geometries.clear()
        self._geometries[item.uid] = (key, geometry, ends)
        return geometry, ends

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
        return estimate_body(item, width, metrics)

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
        tokens = tokens_for(palette)
        docs = render.docs()
        geometry, ends = self._laid_out(item, render, docs, option.rect)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        card = geometry.card
        fill, border = self._colours(item, tokens)
        if card is not None and fill is not None:
            pen = QPen(border, 1) if border is not None else QPen(Qt.PenStyle.NoPen)
            if item.kind is ItemKind.DRAFT:
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(fill)
            inset = 0.5 if border is not None else 0.0  # a 1 px line inside the card
            painter.drawRoundedRect(
                card.adjusted(inset, inset, -inset, -inset), geometry.radius, geometry.radius
            )
        focused = bool(option.state & QStyle.StateFlag.State_HasFocus)
        if geometry.frame is not None and focused:
            painter.setPen(QPen(tokens.color("accent"), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(
                geometry.frame.adjusted(1, 1, -1, -1), geometry.radius, geometry.radius
            )
        text_colour = tokens.color("user_text" if item.kind is ItemKind.USER else "text")
        muted = tokens.color("muted")
        visible = _visible_rect(painter)
        selected = self.selection.ranges(item.uid) if self.selection is not None else {}
        # Finished pieces are blitted from pictures (.pictures); the streaming tail is drawn.
        chunks = render.chunks
        settled = len(chunks) - 1 if item.streaming and render.tail else len(chunks)
        lowest = docs.index(chunks[0]) if chunks else 0  # the chunks are consecutive in docs
        pictured = range(lowest, lowest + settled)
        # Only the documents the device shows (the first whose end is below its top, on to
        # the last that starts above its bottom): a long answer has hundreds of them.
        first = bisect.bisect_left(ends, visible.top()) if visible is not None else 0
        for number in range(first, len(docs)):
            doc = docs[number]
            origin = geometry.origins[number]
            if visible is not None and origin.y() > visible.bottom():
                break
            height = geometry.sizes[number][1]
            # Draw only what the device can show: a long answer is a tall row, and drawing
            # all of it every frame made a delta's cost grow with the answer's length.
            clip = QRectF(0, 0, doc.textWidth(), height)
            if visible is not None:
                clip = clip.intersected(visible.translated(-origin.x(), -origin.y()))
            if clip.isEmpty():
                continue
            pal = QPalette(palette)
            colour = (
                muted
                if (
                    doc is render.header
                    or doc is render.footer
                    or doc is render.reasoning  # dimmed: not the answer
                    or item.kind is ItemKind.NOTE
                    or item.superseded  # a previous attempt, replaced by the answer below
                )
                else text_colour
            )
            pal.setColor(QPalette.ColorRole.Text, colour)
            span = selected.get(number)
            chosen = span is not None and span[1] > span[0]
            if not chosen and number in pictured:
                if self.pictures.draw(painter, doc, origin, clip, pal):
                    continue
            painter.save()
            painter.translate(origin)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            ctx.palette = pal
            ctx.clip = clip
            if span is not None and chosen:
                ctx.selections = [self._selection_format(doc, span, palette)]
            doc.documentLayout().draw(painter, ctx)
            painter.restore()
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if self.actions.shown(item, index, focused or hovered):
            full = self.actions.full(item, index, focused or hovered)
            self.actions.paint(painter, item, geometry, option.font, tokens, full=full)
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
    def _colours(item: TranscriptItem, tokens: Tokens) -> tuple[QColor | None, QColor | None]:
        """The fill and outline behind a row (``None``: not painted)."""
        if item.kind is ItemKind.USER:
            return tokens.color("user_bubble"), None
        if item.kind is ItemKind.TOOL:
            return tokens.color("tool_bg"), tokens.color("border")
        if item.kind is ItemKind.DRAFT and item.superseded:  # dimmed: the previous attempt
            return tokens.color("surface"), tokens.color("border")
        if item.kind is ItemKind.DRAFT:
            return tokens.color("draft_bg"), tokens.color("draft_border")
        return None, None  # answers and notes sit on the surface

    def anchor_at(
        self, item: TranscriptItem, option: QStyleOptionViewItem, pos: QPoint
    ) -> tuple[str, int] | None:
        """The anchor under ``pos`` (view coordinates) and the index of its document.

        An action button answers ``("continuum-action:<name>", -1)`` (it is in no document).
        """
        render = self.render_for(item, self.width_for(item, option), option)
        docs = render.docs()
        geometry = self._laid_out(item, render, docs, option.rect)[0]
        point = QPointF(pos)
        action = self.actions.at(item, geometry, option.font, point)
        if action:
            return f"{ACTION_SCHEME}:{action}", -1
        hit = doc_at(geometry, point.x(), point.y())
        if hit is None:
            return None
        number, local = hit
        anchor = docs[number].documentLayout().anchorAt(local)
        return (anchor, number) if anchor else None

    def footer_tooltip_at(
        self, item: TranscriptItem, option: QStyleOptionViewItem, pos: QPoint
    ) -> str:
        """Over an answer's footer: its tokens in and out ("": no footer or no usage there)."""
        if item.usage is None:
            return ""
        render = self.render_for(item, self.width_for(item, option), option)
        docs = render.docs()
        geometry = self._laid_out(item, render, docs, option.rect)[0]
        hit = doc_at(geometry, float(pos.x()), float(pos.y()))
        if hit is None or render.footer is None or docs[hit[0]] is not render.footer:
            return ""
        return answer_tokens(item.usage.input_tokens, item.usage.output_tokens).tooltip

    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        item = self._item(index)
        if event is not None and item is not None and event.type() == QEvent.Type.ToolTip:
            text = self.footer_tooltip_at(item, option, event.pos())
            if text:
                QToolTip.showText(event.globalPos(), text, view.viewport())
                return True
        return super().helpEvent(event, view, option, index)

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
        """Follow one anchor of ``item``: copy a code block, toggle a card, open a link, or run
        one of its actions."""
        if anchor.startswith(f"{COPY_SCHEME}:"):
            render = self._renders.get(item.uid)
            try:
                code = render.code_blocks[int(anchor.split(":", 1)[1])] if render else None
            except (ValueError, IndexError):
                code = None
            if code is not None and render is not None:
                QGuiApplication.clipboard().setText(code)
                self.codeCopied.emit(code)
                self.actions.code_copied(render.chunks, index, anchor)
            return True
        if anchor.startswith(f"{TOGGLE_SCHEME}:"):
            model = index.model()
            if model is not None:
                model.setData(index, not item.expanded, Roles.EXPANDED)
            return True
        if anchor.startswith(f"{ACTION_SCHEME}:"):
            self.actions.run(item, index, anchor.split(":", 1)[1])
            return True
        number = attachment_index(anchor)
        if number is not None:
            if 0 <= number < len(item.attachments):
                self.attachmentActivated.emit(item.attachments[number])
            return True
        if is_safe_link(anchor):
            self.linkActivated.emit(anchor)
            return True
        return True  # anything else is inert
