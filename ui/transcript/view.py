"""The transcript's view and delegate: painted rows of inert rich text.

Each row is drawn from a :class:`MessageRender`, a short stack of ``QTextDocument`` chunks. A
streaming answer keeps its finished blocks as rendered chunks and re-renders only the unfinished
tail each frame, so the cost of a frame does not grow with the answer's length. Documents never
load resources (``loadResource`` returns nothing), anchors are only followed on a click, and
only http/https ones leave the app (through the desktop's browser).
"""

from __future__ import annotations

import html
from collections import OrderedDict
from dataclasses import dataclass, field
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
    QUrl,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QDesktopServices,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from .markdown import COPY_SCHEME, is_safe_link, render_markdown, stable_boundary
from .model import ItemKind, Roles, ToolState, TranscriptItem, TranscriptModel

__all__ = ["MessageRender", "TranscriptDelegate", "TranscriptView", "is_dark"]

TOGGLE_SCHEME = "continuum-toggle"
OUTER_X, OUTER_Y, PAD = 10, 4, 10
# Beyond this a message is shown as plain text, cut, with a note: a 10 MB paste must not stall
# the UI for seconds in the Markdown parser (the full text is saved and exported unchanged).
MAX_RENDERED_CHARS = 100_000
# Qt's default wrapping (at word boundaries, else anywhere) is quadratic in the length of a run
# without a break opportunity (100 KB of "[" took 177 ms to lay out, 200 KB 680 ms); wrapping
# anywhere is linear. A document whose source has a run longer than this wraps anywhere.
LONG_RUN = 10_000
# Rendered rows kept at once (least recently used go first). A rendered row holds Qt text
# documents (tens of KB each): keeping one per row of a 10,000-message conversation took
# ~800 MB. Rows without a render are laid out with an estimated height; painting a row renders
# it and corrects its height on the next loop turn.
MAX_RENDERS = 300
# While the view follows the end (how a conversation opens), these last rows are measured
# exactly, so what first appears on screen is already laid out right.
EXACT_TAIL = 12
ESTIMATE_WIDTH_SLACK = 40

_STOP_WORDS = {
    "interrupted": "The answer was cut off here (the connection or the app stopped).",
    "max_output": "The answer reached the output limit here.",
    "refusal": "The model refused to answer.",
    "context_full": "The conversation filled the model's context window.",
    "paused": "The provider paused this answer.",
}
_TOOL_STATE_WORDS = {
    ToolState.REQUESTED: "requested — not run yet (Resume asks for approval again)",
    ToolState.AWAITING_APPROVAL: "awaiting approval",
    ToolState.RUNNING: "running…",
    ToolState.DONE: "done",
    ToolState.FAILED: "failed",
    ToolState.DENIED: "denied — did not run",
    ToolState.CANCELLED: "cancelled",
    ToolState.UNKNOWN: "interrupted — may or may not have run",
}


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


class _InertDocument(QTextDocument):
    """A document that never fetches anything (images, style sheets, remote or local)."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return None


def has_long_run(text: str, limit: int = LONG_RUN) -> bool:
    """Whether ``text`` has more than ``limit`` characters in a row without whitespace."""
    return len(text) > limit and max(map(len, text.split()), default=0) > limit


def _document(html_text: str, width: float, font: Any, css: str, *,
              source: str = "") -> QTextDocument:
    """An inert document; ``source`` (the text it shows) decides how it may wrap."""
    doc = _InertDocument()
    if has_long_run(source):
        option = doc.defaultTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAnywhere)
        doc.setDefaultTextOption(option)
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    doc.setDefaultStyleSheet(css)
    doc.setHtml(html_text)
    doc.setTextWidth(max(width, 50.0))
    return doc


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


def _css(palette: QPalette) -> str:
    link = palette.color(QPalette.ColorRole.Link).name()
    return (
        "p { margin-top: 0px; margin-bottom: 6px; } "
        "h1, h2, h3, h4 { margin-top: 4px; margin-bottom: 4px; } "
        "ul, ol { margin-top: 0px; margin-bottom: 6px; } "
        f"a {{ color: {link}; }} "
        "pre { font-family: monospace; } code { font-family: monospace; }"
    )


@dataclass(slots=True)
class MessageRender:
    """The rendered form of one row: header, body chunks, footer (all inert documents)."""

    width: float
    dark: bool
    header: QTextDocument | None = None
    chunks: list[QTextDocument] = field(default_factory=list)
    footer: QTextDocument | None = None
    code_blocks: list[str] = field(default_factory=list)
    stable_text: str = ""  # source of every chunk but the last (the tail)
    stable_code: int = 0  # code blocks inside the stable chunks
    stable_plain: int = 0  # blocks over the Markdown work budget inside the stable chunks
    plain_blocks: int = 0  # ... in the whole message (shown as literal text; tests, bench)
    version: int = -1
    last_rendered_chars: int = 0  # how much Markdown the latest update parsed (tests, bench)
    cut: bool = False  # shown as plain text cut at MAX_RENDERED_CHARS (chunks: text, note)

    def docs(self) -> list[QTextDocument]:
        parts = [self.header] if self.header is not None else []
        parts.extend(self.chunks)
        if self.footer is not None:
            parts.append(self.footer)
        return parts

    def height(self) -> float:
        return sum(doc.size().height() for doc in self.docs())

    def set_width(self, width: float) -> None:
        self.width = width
        for doc in self.docs():
            doc.setTextWidth(max(width, 50.0))


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
            isinstance(view, TranscriptView) and view.following and model is not None
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


class TranscriptView(QListView):
    """The conversation's list view: follows the stream unless the person scrolled up."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setAccessibleName("transcript")
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setUniformItemSizes(False)
        # Heights depend on the width only: resizeEvent relayouts when the width changes.
        # (Adjust would also relayout every row 100 ms after any height change.)
        self.setResizeMode(QListView.ResizeMode.Fixed)
        self._laid_out_width = -1
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setMouseTracking(True)
        self.setFrameShape(QListView.Shape.NoFrame)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.DefaultContextMenu)
        self.delegate = TranscriptDelegate(self)
        self.setItemDelegate(self.delegate)
        self.delegate.linkActivated.connect(self._open_link)
        self._follow = True
        self._adjusting = False
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._range_changed)
        bar.valueChanged.connect(self._value_changed)
        self.opened_links: list[str] = []  # what was handed to the browser (tests read it)

    @property
    def following(self) -> bool:
        return self._follow

    def setModel(self, model: Any) -> None:
        old = self.model()
        if old is not None:
            old.dataChanged.disconnect(self._row_changed)
            old.modelReset.disconnect(self._reset)
        super().setModel(model)
        model.dataChanged.connect(self._row_changed)
        model.modelReset.connect(self._reset)

    def _reset(self) -> None:
        self.delegate.forget()
        self._follow = True

    def _row_changed(self, top: QModelIndex, bottom: QModelIndex, roles: Any = ()) -> None:
        # A row's height may have changed (more text, a card opened): relayout.
        for row in range(top.row(), bottom.row() + 1):
            self.delegate.sizeHintChanged.emit(self.model().index(row, 0))

    def _range_changed(self, _low: int, high: int) -> None:
        if self._follow:
            self._adjusting = True
            self.verticalScrollBar().setValue(high)
            self._adjusting = False

    def _value_changed(self, value: int) -> None:
        if not self._adjusting:
            self._follow = value >= self.verticalScrollBar().maximum() - 8

    def follow(self) -> None:
        """Jump to the end and follow the stream again (after sending, for instance)."""
        self._follow = True
        self.scrollToBottom()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        width = self.viewport().width()
        if width != self._laid_out_width:
            self._laid_out_width = width
            self.doItemsLayout()  # wrapped text changes height with the width

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self.delegate.forget()
        super().changeEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        super().mouseMoveEvent(event)
        index = self.indexAt(event.position().toPoint())
        pointing = False
        if index.isValid():
            item = index.data(Roles.ITEM)
            option = self._option(index)
            pointing = bool(item and self.delegate.anchor_at(item, option,
                                                               event.position().toPoint()))
        self.viewport().setCursor(Qt.CursorShape.PointingHandCursor if pointing
                                  else Qt.CursorShape.ArrowCursor)

    def _option(self, index: QModelIndex) -> QStyleOptionViewItem:
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = self.visualRect(index)
        return option

    def anchors(self, row: int) -> list[str]:
        """Every anchor of a row, in order (accessibility and tests)."""
        index = self.model().index(row, 0)
        item = index.data(Roles.ITEM)
        render = self.delegate.render_for(item, self.delegate._content_width(
            self._option(index)), self._option(index))
        found: list[str] = []
        for doc in render.docs():
            block = doc.begin()
            while block.isValid():
                it = block.begin()
                while not it.atEnd():
                    fmt = it.fragment().charFormat()
                    if fmt.isAnchor() and fmt.anchorHref() not in found:
                        found.append(fmt.anchorHref())
                    it += 1
                block = block.next()
        return found

    def activate_anchor(self, row: int, anchor: str) -> None:
        index = self.model().index(row, 0)
        self.delegate.activate(index.data(Roles.ITEM), index, anchor)

    def keyPressEvent(self, event: Any) -> None:
        index = self.currentIndex()
        if (event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Return) and index.isValid()
                and index.data(Roles.KIND) == ItemKind.TOOL.value):
            self.model().setData(index, not index.data(Roles.EXPANDED), Roles.EXPANDED)
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: Any) -> None:
        index = self.indexAt(event.pos())
        if not index.isValid():
            return
        item = index.data(Roles.ITEM)
        menu = QMenu(self)
        copy = menu.addAction("Copy message")
        chosen = menu.exec(event.globalPos())
        if chosen is copy and item is not None:
            name = item.call.name if item.call else ""
            text = item.text if item.kind is not ItemKind.TOOL else (
                f"{name}\n{item.arguments_text}\n{item.result or ''}")
            QGuiApplication.clipboard().setText(text)

    def _open_link(self, url: str) -> None:
        self.opened_links.append(url)
        QDesktopServices.openUrl(QUrl(url))
