"""A message's action bar: its buttons, when it shows, the pointer over it, and running them.

Under the person's messages and the answers, a strip (reserved by :mod:`.layout`, so hovering
never reflows) holds the row's buttons (:func:`.layout.row_actions`): the version arrows
``‹ 2 / 3 ›`` when the message has versions, Edit under the person's saved messages, Copy, and
Regenerate under saved answers. The bar is drawn while the pointer is over the row, while the
row is current with keyboard focus, and always under the latest answer; the version arrows are
drawn always; nothing while the row streams. A button that ran says so for :data:`COPIED_MS`
("✓ Copied"), repainting only its row. Edit, Regenerate and the arrows are asked of the window
by signals (the conversation's controller runs them).
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
from .branching import version_label, version_step
from .layout import VERSION_ACTIONS, RowAction, RowGeometry, action_rects, row_actions
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
    """A small line icon in ``box``: "copy" (two sheets), "check", "edit" (a pencil),
    "regenerate" (a circling arrow), "previous"/"next" (chevrons)."""
    painter.setPen(QPen(colour, 1.2))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    w, h = box.width(), box.height()
    if icon in ("previous", "next"):
        tip, rear = (0.3, 0.65) if icon == "previous" else (0.7, 0.35)
        path = QPainterPath(QPointF(box.left() + rear * w, box.top() + 0.15 * h))
        path.lineTo(box.left() + tip * w, box.top() + 0.5 * h)
        path.lineTo(box.left() + rear * w, box.top() + 0.85 * h)
        painter.drawPath(path)
        return
    if icon == "edit":
        path = QPainterPath(QPointF(box.left() + 0.1 * w, box.bottom() - 0.1 * h))
        path.lineTo(box.left() + 0.15 * w, box.bottom() - 0.35 * h)
        path.lineTo(box.right() - 0.3 * w, box.top() + 0.1 * h)
        path.lineTo(box.right() - 0.1 * w, box.top() + 0.3 * h)
        path.lineTo(box.left() + 0.35 * w, box.bottom() - 0.15 * h)
        path.closeSubpath()
        painter.drawPath(path)
        return
    if icon == "regenerate":
        ring = box.adjusted(0.1 * w, 0.1 * h, -0.1 * w, -0.1 * h)
        painter.drawArc(ring, 40 * 16, 280 * 16)
        head = QPainterPath(QPointF(box.right() - 0.05 * w, box.top() + 0.1 * h))
        head.lineTo(box.right() - 0.12 * w, box.top() + 0.38 * h)
        head.lineTo(box.right() - 0.4 * w, box.top() + 0.3 * h)
        painter.drawPath(head)
        return
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
    #: (seq, text): the person wants to edit their saved message ``seq``.
    editRequested = Signal(int, str)
    #: seq: answer again the question the saved message ``seq`` belongs to.
    regenerateRequested = Signal(int)
    #: seq: show the version (the branch through message ``seq``).
    versionRequested = Signal(int)

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
        #: Whether Edit and Regenerate are offered (not while the conversation is read-only).
        self.can_branch = True
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

    def actions_for(self, item: TranscriptItem) -> tuple[RowAction, ...]:
        """The row's buttons in reading order (see :func:`.layout.row_actions`)."""
        return row_actions(
            item.kind, item.seq is not None, version_label(item), can_branch=self.can_branch
        )

    def buttons(
        self, item: TranscriptItem, geometry: RowGeometry, font: QFont
    ) -> tuple[tuple[RowAction, QRectF, str, str], ...]:
        """The row's buttons, left to right: (action, rect, icon, words); none while it
        streams."""
        if geometry.actions is None or item.streaming:
            return ()
        metrics = QFontMetricsF(small_font(font))
        actions = self.actions_for(item)
        faces = [self._face(item, action) for action in actions]
        widths = [
            metrics.horizontalAdvance(words)
            + (ICON if icon else 0)
            + (SPACE[0] if icon and words else 0)
            + 2 * BUTTON_PAD
            for icon, words in faces
        ]
        # Laid from the bar's side: a bubble's bar from its right edge, leftwards.
        order = list(range(len(actions)))
        if geometry.actions_right:
            order.reverse()
        placed = action_rects(geometry, [widths[i] for i in order], outdent=BUTTON_PAD)
        rects = dict(zip(order, placed, strict=True))
        return tuple(
            (action, rects[i], icon, words)
            for i, (action, (icon, words)) in enumerate(zip(actions, faces, strict=True))
        )

    def at(self, item: TranscriptItem, geometry: RowGeometry, font: QFont, pos: QPointF) -> str:
        """The name of the button under ``pos`` (view coordinates); "": none."""
        for action, rect, *_face in self.buttons(item, geometry, font):
            if rect.contains(pos) and action.name:
                return action.name
        return ""

    def tip_at(self, item: TranscriptItem, geometry: RowGeometry, font: QFont, pos: QPointF) -> str:
        """The tooltip of the button under ``pos`` ("": none)."""
        for action, rect, *_face in self.buttons(item, geometry, font):
            if rect.contains(pos):
                return action.tip
        return ""

    # --- painting --------------------------------------------------------------------------

    def shown(
        self, item: TranscriptItem, index: QModelIndex | QPersistentModelIndex, focused: bool
    ) -> bool:
        """Whether the row's bar is drawn (hovered, focused, or the latest answer); a row with
        versions always draws at least its arrows (:meth:`paint` knows which)."""
        return bool(item.versions) or self.full(item, index, focused)

    def full(
        self, item: TranscriptItem, index: QModelIndex | QPersistentModelIndex, focused: bool
    ) -> bool:
        """Whether the whole bar is drawn, not only the version arrows."""
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
        *,
        full: bool = True,
    ) -> None:
        painter.setFont(small_font(font))
        lit = self.hover[2] if self.hover is not None and self.hover[0] == item.uid else ""
        for action, rect, icon, words in self.buttons(item, geometry, font):
            if not full and action.name not in VERSION_ACTIONS:
                continue
            if action.name and action.name == lit:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(tokens.color("user_bubble"))
                painter.drawRoundedRect(rect, 6, 6)
            colour = tokens.color("text" if action.name and action.name == lit else "muted")
            box = QRectF(rect.left() + BUTTON_PAD, rect.center().y() - ICON / 2, ICON, ICON)
            if icon:
                _paint_icon(painter, icon, box, colour)
            painter.setPen(colour)
            indent = BUTTON_PAD + (ICON + SPACE[0] if icon else 0)
            text = rect.adjusted(indent, 0, -BUTTON_PAD, 0)
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
        if item.kind not in (ItemKind.USER, ItemKind.ASSISTANT):
            return
        if name in ("previous", "next"):
            seq = version_step(item, -1 if name == "previous" else 1)
            if seq is not None:
                self.versionRequested.emit(seq)
            return
        if name == "edit" and item.seq is not None and item.kind is ItemKind.USER:
            self.editRequested.emit(item.seq, item.text)
            return
        if name == "regenerate" and item.seq is not None and item.kind is ItemKind.ASSISTANT:
            self.regenerateRequested.emit(item.seq)
            return
        if name != "copy":
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
