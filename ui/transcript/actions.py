"""A message's action bar: its buttons, when it shows, the pointer over it, and running them.

Under the person's messages and the answers, a strip (reserved by :mod:`.layout`, so hovering
never reflows) holds :data:`.layout.ROW_ACTIONS` — only Copy for now; Edit, Regenerate and
branch arrows join that table later. The bar is drawn while the pointer is over the row, while
the row is current with keyboard focus, and always under the latest answer; never while the
row streams. A button that ran says so for :data:`COPIED_MS` ("✓ Copied"), repainting only
its row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPen,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractItemView, QStyleOptionViewItem

from ..theme import SPACE, TYPE_SCALE, Tokens
from .layout import ROW_ACTIONS, RowAction, RowGeometry, action_rects
from .markdown import COPY_LABEL
from .model import ItemKind, Roles, TranscriptItem, TranscriptModel
from .rows import copy_text

if TYPE_CHECKING:
    from .delegate import TranscriptDelegate

__all__ = [
    "ACTION_SCHEME",
    "COPIED_MS",
    "RowActions",
    "keeps_actions",
    "relabel_anchor",
    "small_font",
]

#: A message's action runs as the anchor ``continuum-action:<name>``.
ACTION_SCHEME = "continuum-action"
#: How long a button says it is done ("✓ Copied").
COPIED_MS = 1500
BUTTON_PAD = SPACE[1]
ICON = 12
_SHOWN_AFTER = (ItemKind.NOTE, ItemKind.DRAFT)  # rows that leave an answer the latest


COPIED_WORD = "Copied"


def relabel_anchor(doc: QTextDocument, href: str, words: str) -> str | None:
    """Replace the text of the link ``href`` in ``doc`` by ``words`` (same format); returns
    the text it had, ``None`` when ``doc`` has no such link."""
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isAnchor() and fmt.anchorHref() == href:
                cursor = QTextCursor(doc)
                cursor.setPosition(fragment.position())
                cursor.setPosition(
                    fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor
                )
                old = fragment.text()
                cursor.insertText(words, fmt)
                return old
            it += 1
        block = block.next()
    return None


def small_font(font: QFont) -> QFont:
    small = QFont(font)
    small.setPointSizeF(max(small.pointSizeF() * TYPE_SCALE["small"], 6.0))
    return small


def keeps_actions(kind: ItemKind, later: list[ItemKind]) -> bool:
    """Whether a row of ``kind`` followed by rows of ``later`` kinds is the latest answer
    (whose actions stay shown, as ChatGPT keeps them)."""
    return kind is ItemKind.ASSISTANT and all(other in _SHOWN_AFTER for other in later)


def _paint_icon(painter: QPainter, icon: str, box: QRectF, colour: QColor) -> None:
    """A small line icon in ``box``: "copy" (two sheets) or "check"."""
    painter.setPen(QPen(colour, 1.2))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    w, h = box.width(), box.height()
    if icon == "check":
        path = QPainterPath(QPointF(box.left() + 0.1 * w, box.top() + 0.55 * h))
        path.lineTo(box.left() + 0.4 * w, box.top() + 0.85 * h)
        path.lineTo(box.left() + 0.9 * w, box.top() + 0.2 * h)
        painter.drawPath(path)
        return
    # The sheet behind shows only where the front one does not cover it.
    back = QPainterPath(QPointF(box.left() + 0.3 * w, box.top() + 0.3 * h))
    back.lineTo(box.left() + 0.3 * w, box.top())
    back.lineTo(box.right(), box.top())
    back.lineTo(box.right(), box.top() + 0.7 * h)
    back.lineTo(box.left() + 0.7 * w, box.top() + 0.7 * h)
    painter.drawPath(back)
    painter.drawRoundedRect(QRectF(box.left(), box.top() + 0.3 * h, 0.7 * w, 0.7 * h), 2, 2)


class RowActions(QObject):
    """The action bars of one transcript view (owned by its delegate)."""

    messageCopied = Signal(str)

    def __init__(self, delegate: TranscriptDelegate) -> None:
        super().__init__(delegate)
        self._delegate = delegate
        # What the pointer is over: (uid, row, action name or ""); that row shows its bar.
        self.hover: tuple[int, QPersistentModelIndex, str] | None = None
        # The action that just ran, shown done for COPIED_MS: (uid, row, action name).
        self.done: tuple[int, QPersistentModelIndex, str] | None = None
        self.done_timer = QTimer(self)
        self.done_timer.setSingleShot(True)
        self.done_timer.setInterval(COPIED_MS)
        self.done_timer.timeout.connect(self._done_over)
        view = self._view()
        if view is not None:
            view.viewport().installEventFilter(self)

    # --- what the bar holds ----------------------------------------------------------------

    def _face(self, item: TranscriptItem, action: RowAction) -> tuple[str, str]:
        """The icon and words a button shows now (done for a moment after it ran)."""
        done = self.done
        if done is not None and done[0] == item.uid and done[2] == action.name and action.done:
            return "check", action.done
        return action.icon, action.label

    def buttons(
        self, item: TranscriptItem, geometry: RowGeometry, font: QFont
    ) -> tuple[tuple[RowAction, QRectF, str, str], ...]:
        """The row's buttons: (action, rect, icon, words); none while it streams."""
        if geometry.actions is None or item.streaming:
            return ()
        metrics = QFontMetricsF(small_font(font))
        faces = [self._face(item, action) for action in ROW_ACTIONS]
        widths = [
            metrics.horizontalAdvance(words) + ICON + SPACE[0] + 2 * BUTTON_PAD
            for _icon, words in faces
        ]
        rects = action_rects(geometry, widths, outdent=BUTTON_PAD)
        return tuple(
            (action, rect, icon, words)
            for action, rect, (icon, words) in zip(ROW_ACTIONS, rects, faces, strict=True)
        )

    def at(self, item: TranscriptItem, geometry: RowGeometry, font: QFont, pos: QPointF) -> str:
        """The name of the button under ``pos`` (view coordinates); "": none."""
        for action, rect, *_face in self.buttons(item, geometry, font):
            if rect.contains(pos):
                return action.name
        return ""

    # --- painting --------------------------------------------------------------------------

    def shown(
        self, item: TranscriptItem, index: QModelIndex | QPersistentModelIndex, focused: bool
    ) -> bool:
        """Whether the row's bar is drawn (hovered, focused, or the latest answer)."""
        if focused or (self.hover is not None and self.hover[0] == item.uid):
            return True
        model = index.model()
        if item.kind is not ItemKind.ASSISTANT or not isinstance(model, TranscriptModel):
            return False
        later: list[ItemKind] = []
        for row in range(index.row() + 1, model.rowCount()):  # usually none or one
            later.append(model.item(row).kind)
            if later[-1] not in _SHOWN_AFTER:
                break
        return keeps_actions(item.kind, later)

    def paint(
        self,
        painter: QPainter,
        item: TranscriptItem,
        geometry: RowGeometry,
        font: QFont,
        tokens: Tokens,
    ) -> None:
        painter.setFont(small_font(font))
        lit = self.hover[2] if self.hover is not None and self.hover[0] == item.uid else ""
        for action, rect, icon, words in self.buttons(item, geometry, font):
            if action.name == lit:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(tokens.color("user_bubble"))
                painter.drawRoundedRect(rect, 6, 6)
            colour = tokens.color("text" if action.name == lit else "muted")
            box = QRectF(rect.left() + BUTTON_PAD, rect.center().y() - ICON / 2, ICON, ICON)
            _paint_icon(painter, icon, box, colour)
            painter.setPen(colour)
            text = rect.adjusted(BUTTON_PAD + ICON + SPACE[0], 0, -BUTTON_PAD, 0)
            align = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft
            painter.drawText(text, align, words)

    # --- the pointer -----------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Follow the pointer over the view (which row shows its bar, which button is lit)."""
        kind = event.type()
        if kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            self._track(event.position())
        elif kind == QEvent.Type.Leave:
            self._set_hover(None)
        return False

    def _view(self) -> QAbstractItemView | None:
        view = self._delegate.parent()
        return view if isinstance(view, QAbstractItemView) else None

    def _track(self, pos: QPointF) -> None:
        view = self._view()
        if view is None:
            return
        index = view.indexAt(pos.toPoint())
        item = index.data(Roles.ITEM) if index.isValid() else None
        if not isinstance(item, TranscriptItem):
            self._set_hover(None)
            return
        option = QStyleOptionViewItem()
        option.font, option.palette = view.font(), view.palette()
        option.rect = view.visualRect(index)
        geometry = self._delegate.geometry(item, option)
        name = self.at(item, geometry, option.font, pos)
        self._set_hover((item.uid, QPersistentModelIndex(index), name))

    def _set_hover(self, hover: tuple[int, QPersistentModelIndex, str] | None) -> None:
        old, self.hover = self.hover, hover
        if (old and old[0::2]) == (hover and hover[0::2]):
            return  # the same row and button: nothing to repaint
        for entry in (old, hover):
            if entry is not None:
                self.update_row(entry[1])

    def update_row(self, index: QPersistentModelIndex) -> None:
        """Repaint one row (only its visible part is drawn)."""
        view, model = self._view(), index.model()
        if view is not None and model is not None and index.isValid():
            view.update(model.index(index.row(), index.column()))

    # --- running ---------------------------------------------------------------------------

    def run(
        self, item: TranscriptItem, index: QModelIndex | QPersistentModelIndex, name: str
    ) -> None:
        """Run the action ``name`` on ``item`` (unknown names, or other rows: nothing)."""
        if name != "copy" or item.kind not in (ItemKind.USER, ItemKind.ASSISTANT):
            return
        # What "Copy message" copies: an answer's Markdown source (with its reasoning only
        # while that is shown), the person's text as typed.
        text = copy_text(item)
        QGuiApplication.clipboard().setText(text)
        self.messageCopied.emit(text)
        old, self.done = self.done, (item.uid, QPersistentModelIndex(index), name)
        if old is not None and old[0] != item.uid:
            self.update_row(old[1])
        self.update_row(self.done[1])
        self.done_timer.start()

    def code_copied(
        self, docs: list[QTextDocument], index: QModelIndex | QPersistentModelIndex, href: str
    ) -> None:
        """A code block's Copy link says "✓ Copied" for :data:`COPIED_MS`, then "Copy" again
        (edited in its document in place: nothing is re-rendered or re-laid out)."""
        for doc in docs:
            if relabel_anchor(doc, href, f"✓ {COPIED_WORD}") is None:
                continue
            row = QPersistentModelIndex(index)
            self.update_row(row)

            def restore(doc: QTextDocument = doc, row: QPersistentModelIndex = row) -> None:
                if shiboken6.isValid(doc):  # the row may have been re-rendered since
                    relabel_anchor(doc, href, COPY_LABEL)
                    self.update_row(row)

            QTimer.singleShot(COPIED_MS, self, restore)  # not after the view is gone
            return

    def _done_over(self) -> None:
        done, self.done = self.done, None
        if done is not None:
            self.update_row(done[1])
