"""The transcript's delegate: row sizes (exact or estimated), painting, and anchor clicks.

Rows are painted from the documents :mod:`.render` builds. Only the part of a row the device can
show is drawn; rows without a render are laid out with an estimated height and corrected once
painted. Anchors are only followed on a click: copy a code block, open/close a tool card, or hand
an http/https link to the view.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from typing import Any

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
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from .markdown import COPY_SCHEME, is_safe_link, render_markdown, stable_boundary
from .model import ItemKind, Roles, ToolState, TranscriptItem, TranscriptModel
from .render import (
    _STOP_WORDS,
    _TOOL_STATE_WORDS,
    MAX_RENDERED_CHARS,
    MAX_RENDERS,
    TOGGLE_SCHEME,
    MessageRender,
    _css,
    _document,
    is_dark,
)

__all__ = ["TranscriptDelegate"]

OUTER_X, OUTER_Y, PAD = 10, 4, 10
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



class TranscriptDelegate(QStyledItemDelegate):
    """Paints rows and handles clicks on their anchors (copy, expand, links)."""

    linkActivated = Signal(str)
    codeCopied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._renders: OrderedDict[int, MessageRender] = OrderedDict()
        # uid -> (version, width, exact, size): what sizeHint answered, so a relayout of
        # thousands of rows is a dictionary lookup per row.
        self._sizes: dict[int, tuple[int, int, bool, QSize]] = {}
        self._metrics: tuple[float, float, float] | None = None  # reset by forget()
        self._fix: list[QPersistentModelIndex] = []
        self._fix_timer = QTimer(self)
        self._fix_timer.setSingleShot(True)
        self._fix_timer.setInterval(0)
        self._fix_timer.timeout.connect(self._fix_sizes)

    # --- rendering -------------------------------------------------------------------------

    def forget(self) -> None:
        self._renders.clear()
        self._sizes.clear()
        self._metrics = None

    def render_for(self, item: TranscriptItem, width: float, option: QStyleOptionViewItem,
                   ) -> MessageRender:
        dark = is_dark(option.palette)
        render = self._renders.get(item.uid)
        if render is None or render.dark != dark:
            render = MessageRender(width, dark)
            self._renders[item.uid] = render
            while len(self._renders) > MAX_RENDERS:
                self._renders.popitem(last=False)
        else:
            self._renders.move_to_end(item.uid)
        if render.version != item.version:
            self._update(render, item, option)
            render.version = item.version
        if abs(render.width - width) > 0.5:
            render.set_width(width)
        return render

    def _update(self, render: MessageRender, item: TranscriptItem,
                option: QStyleOptionViewItem) -> None:
        font, css, width = option.font, _css(option.palette), render.width
        small = QFont(option.font)
        small.setPointSizeF(max(small.pointSizeF() * 0.85, 6.0))
        header = self._header_html(item)
        render.header = _document(header, width, small, css) if header else None
        footer = self._footer_html(item)
        render.footer = _document(footer, width, small, css) if footer else None
        if item.kind is ItemKind.TOOL:
            render.chunks = [_document(self._tool_html(item), width, font, css,
                                       source=f"{item.arguments_text} {item.result or ''}")]
            render.stable_text, render.code_blocks = "", []
            return
        if item.kind is ItemKind.NOTE:
            render.chunks = []
            return
        text = item.text
        if len(text) > MAX_RENDERED_CHARS:
            more = len(text) - MAX_RENDERED_CHARS
            note = _document(f"<p><i>… {more:,} more characters (saved in full; export the "
                             "conversation to see them)</i></p>", width, font, css)
            shown = text[:MAX_RENDERED_CHARS]
            if render.cut and len(render.chunks) == 2 and render.stable_text == shown:
                # Still growing past the cut (a long stream): the shown part is unchanged;
                # only the count in the note changes. Re-rendering 100k characters per frame
                # stalled the loop for ~40 ms.
                render.chunks[1] = note
                render.last_rendered_chars = 0
                return
            body = f'<pre style="white-space: pre-wrap;">{html.escape(shown)}</pre>'
            render.chunks = [_document(body, width, font, css, source=shown), note]
            render.stable_text, render.code_blocks, render.stable_code = shown, [], 0
            render.cut = True
            render.last_rendered_chars = MAX_RENDERED_CHARS
            return
        if render.cut:
            render.chunks, render.stable_text, render.cut = [], "", False
        if not render.chunks or not text.startswith(render.stable_text):
            render.chunks, render.code_blocks = [], []
            render.stable_text, render.stable_code, render.stable_plain = "", 0, 0
        else:
            render.chunks.pop()  # the old tail; the stable chunks stay as they are
        del render.code_blocks[render.stable_code:]
        start = len(render.stable_text)
        boundary = stable_boundary(text, start) if item.streaming else start
        rendered = 0
        if boundary > start:
            stable = text[start:boundary]
            part = render_markdown(stable, dark=render.dark, code_offset=len(render.code_blocks))
            render.chunks.append(_document(part.html, width, font, css, source=stable))
            render.code_blocks.extend(part.code_blocks)
            render.stable_text = text[:boundary]
            render.stable_code = len(render.code_blocks)
            render.stable_plain += part.plain_blocks
            rendered += boundary - start
        tail = text[boundary:]
        part = render_markdown(tail, dark=render.dark, code_offset=len(render.code_blocks))
        if item.streaming and not tail.strip() and render.chunks:
            part.html = ""
        render.chunks.append(_document(part.html, width, font, css, source=tail))
        render.code_blocks.extend(part.code_blocks)
        render.plain_blocks = render.stable_plain + part.plain_blocks
        render.last_rendered_chars = rendered + len(tail)

    @staticmethod
    def _header_html(item: TranscriptItem) -> str:
        if item.kind is ItemKind.USER:
            return "<b>You</b>"
        if item.kind is ItemKind.ASSISTANT:
            if item.joined:
                return ""
            return "<b>Assistant</b>" + (" <i>(writing…)</i>" if item.streaming else "")
        if item.kind is ItemKind.DRAFT:
            return "<b>⚠ Interrupted</b> — not saved in the conversation, never sent to the model"
        if item.kind is ItemKind.NOTE:
            return f"<i>ⓘ {html.escape(item.text)}</i>"
        return ""

    @staticmethod
    def _footer_html(item: TranscriptItem) -> str:
        if item.kind is ItemKind.ASSISTANT and item.stop_reason:
            words = _STOP_WORDS.get(item.stop_reason,
                                    f"The model stopped ({html.escape(item.stop_reason)}).")
            return f"<i>⚠ {words}</i>"
        return ""

    @staticmethod
    def _tool_html(item: TranscriptItem) -> str:
        call = item.call
        name = html.escape(call.name if call else "tool")
        state = item.state or ToolState.RUNNING
        arrow = "▾" if item.expanded else "▸"
        colour = {ToolState.DONE: "#2e7d32", ToolState.FAILED: "#c62828",
                  ToolState.DENIED: "#c62828", ToolState.CANCELLED: "#6d4c41",
                  ToolState.NOT_RUN: "#6d4c41",
                  ToolState.AWAITING_APPROVAL: "#8e24aa", ToolState.REQUESTED: "#8e24aa",
                  ToolState.UNKNOWN: "#e65100"}.get(state, "#1565c0")
        head = (f'<a href="{TOGGLE_SCHEME}:" style="text-decoration:none;">{arrow} Tool '
                f"<b>{name}</b></a> · "
                f'<span style="color:{colour};">{_TOOL_STATE_WORDS[state]}</span>')
        if not item.expanded:
            return f"<p>{head}</p>"
        args = html.escape(item.arguments_text or "{}")
        result = html.escape(item.result) if item.result is not None else "<i>no result yet</i>"
        return (f"<p>{head}</p><p><b>Arguments</b></p>"
                f'<pre style="white-space: pre-wrap;">{args}</pre>'
                f"<p><b>Result</b></p><pre style=\"white-space: pre-wrap;\">{result}</pre>")

    # --- geometry & painting ---------------------------------------------------------------

    @staticmethod
    def _content_width(option: QStyleOptionViewItem) -> float:
        return float(option.rect.width() - 2 * OUTER_X - 2 * PAD)

    def _item(self, index: QModelIndex | QPersistentModelIndex) -> TranscriptItem | None:
        item = index.data(Roles.ITEM)
        return item if isinstance(item, TranscriptItem) else None

    def sizeHint(self, option: QStyleOptionViewItem,
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        # Called for every row on each relayout: keep the common path to a dictionary lookup.
        model = index.model()
        if isinstance(model, TranscriptModel):
            row = index.row()
            item: TranscriptItem | None = model.item(row) if 0 <= row < model.rowCount() else None
        else:
            item = self._item(index)
        if item is None:
            return QSize(0, 0)
        width = self._content_width(option)
        view = self.parent()
        if width <= 60:
            width = float(view.viewport().width() - 2 * OUTER_X - 2 * PAD) if isinstance(
                view, QAbstractItemView) else 400.0
        key = int(width)
        cached = self._sizes.get(item.uid)
        rendered = item.uid in self._renders
        if cached is not None and cached[0] == item.version and (
                cached[1] == key if cached[2] or rendered
                # An estimate survives a small width change (a scroll bar appearing).
                else abs(cached[1] - key) < ESTIMATE_WIDTH_SLACK):
            if cached[2] or not rendered:
                return cached[3]
        exact = rendered or item.streaming or (
            bool(getattr(view, "following", False)) and model is not None
            and index.row() >= model.rowCount() - EXACT_TAIL)
        if exact:
            body = self.render_for(item, width, option).height()
        else:
            body = self._estimate(item, width, option)
        pad = 4 if item.kind is ItemKind.NOTE else PAD
        top = 0 if item.joined else OUTER_Y
        size = QSize(key + 2 * (OUTER_X + PAD), int(body) + 2 * pad + top + OUTER_Y)
        self._sizes[item.uid] = (item.version, key, exact, size)
        return size

    def _estimate(self, item: TranscriptItem, width: float,
                  option: QStyleOptionViewItem) -> float:
        """A row's height without rendering it (lines of wrapped text); painting corrects it."""
        metrics = self._metrics
        if metrics is None:
            normal, small = QFontMetricsF(option.font), QFont(option.font)
            small.setPointSizeF(max(small.pointSizeF() * 0.85, 6.0))
            metrics = (normal.lineSpacing(), max(normal.averageCharWidth(), 1.0),
                       QFontMetricsF(small).lineSpacing())
            self._metrics = metrics
        line, char, small_line = metrics
        header = small_line if self._header_html(item) else 0.0
        footer = small_line if self._footer_html(item) else 0.0
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

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        item = self._item(index)
        if item is None:
            return
        render = self.render_for(item, self._content_width(option), option)
        cached = self._sizes.get(item.uid)
        if cached is not None and not cached[2]:
            self._fix.append(QPersistentModelIndex(index))
            self._fix_timer.start()
        palette = option.palette
        dark = render.dark
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        top = 0 if item.joined else OUTER_Y
        card = QRectF(option.rect.adjusted(OUTER_X, top, -OUTER_X, -OUTER_Y))
        if item.joined:
            card.adjust(0, -OUTER_Y - 2, 0, 0)  # reach up to the part it continues
        fill, border = self._colours(item, palette, dark)
        if fill is not None:
            pen = QPen(border) if border is not None else QPen(Qt.PenStyle.NoPen)
            if item.kind is ItemKind.DRAFT:
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(fill)
            painter.drawRoundedRect(card, 8, 8)
        if option.state & QStyle.StateFlag.State_HasFocus:
            painter.setPen(QPen(palette.color(QPalette.ColorRole.Highlight), 1,
                                Qt.PenStyle.DotLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(card.adjusted(1, 1, -1, -1), 8, 8)
        pad = 4 if item.kind is ItemKind.NOTE else PAD
        y = card.top() + pad
        text_colour = palette.color(QPalette.ColorRole.Text)
        muted = palette.color(QPalette.ColorRole.PlaceholderText)
        visible = _visible_rect(painter)
        left = card.left() + PAD
        for doc in render.docs():
            height = doc.size().height()
            # Draw only what the device can show: a long answer is a tall row, and drawing
            # all of it every frame made a delta's cost grow with the answer's length.
            clip = QRectF(0, 0, doc.textWidth(), height)
            if visible is not None:
                clip = clip.intersected(visible.translated(-left, -y))
            if clip.isEmpty():
                y += height
                continue
            painter.save()
            painter.translate(QPointF(left, y))
            ctx = QAbstractTextDocumentLayout.PaintContext()
            pal = QPalette(palette)
            colour = muted if (doc is render.header or doc is render.footer
                               or item.kind is ItemKind.NOTE) else text_colour
            pal.setColor(QPalette.ColorRole.Text, colour)
            ctx.palette = pal
            ctx.clip = clip
            doc.documentLayout().draw(painter, ctx)
            painter.restore()
            y += height
        painter.restore()

    @staticmethod
    def _colours(item: TranscriptItem, palette: QPalette, dark: bool,
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

    def anchor_at(self, item: TranscriptItem, option: QStyleOptionViewItem,
                  pos: QPoint) -> tuple[str, int] | None:
        """The anchor under ``pos`` (view coordinates) and the index of its document."""
        render = self.render_for(item, self._content_width(option), option)
        top = 0 if item.joined else OUTER_Y
        card = QRect(option.rect.adjusted(OUTER_X, top, -OUTER_X, -OUTER_Y))
        if item.joined:
            card.adjust(0, -OUTER_Y - 2, 0, 0)
        pad = 4 if item.kind is ItemKind.NOTE else PAD
        x = pos.x() - card.left() - PAD
        y = float(pos.y() - card.top() - pad)
        for number, doc in enumerate(render.docs()):
            height = doc.size().height()
            if 0 <= y < height:
                anchor = doc.documentLayout().anchorAt(QPointF(x, y))
                return (anchor, number) if anchor else None
            y -= height
        return None

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem,
                    index: QModelIndex | QPersistentModelIndex) -> bool:
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

    def activate(self, item: TranscriptItem, index: QModelIndex | QPersistentModelIndex,
                 anchor: str) -> bool:
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
