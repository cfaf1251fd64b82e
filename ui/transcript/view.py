"""The transcript's list view: scrolling that follows the stream, keys, copy and links.

Anchors are only followed on a click, and only http/https ones leave the app (through the
desktop's browser).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QDesktopServices,
    QGuiApplication,
    QKeyEvent,
    QMouseEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QListView,
    QStyleOptionViewItem,
    QWidget,
)

from .delegate import TranscriptDelegate
from .markdown import warm_up
from .model import ItemKind, Roles
from .scrolling import Scroller
from .selection import TextSelection
from .selection_input import SelectionInput

__all__ = ["TranscriptView"]


class TranscriptView(QListView):
    """The conversation's list view: follows the stream unless the person scrolled up."""

    #: (QMenu, TranscriptItem): a row's right-click menu is about to show; add to it.
    rowMenu = Signal(object, object)
    #: Scrolled within a screen of the top while the conversation has older messages to read.
    nearTop = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setAccessibleName("Conversation")
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setUniformItemSizes(False)
        # Heights depend on the width only: resizeEvent relayouts when the width changes.
        # (Adjust would also relayout every row 100 ms after any height change.)
        self.setResizeMode(QListView.ResizeMode.Fixed)
        self._laid_out_width = -1
        self._warmed = False  # the Markdown engine is loaded after the first show
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
        self.selection = TextSelection(self)  # text selected with the mouse or keys
        self.delegate.selection = self.selection
        self.selecting = SelectionInput(self, self.selection)  # ... by the mouse, keys, menu
        self.scroller = Scroller(self)  # wheel by lines, page keys, the jump button

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
            self.scroller.stop()
            self._adjusting = True
            self.verticalScrollBar().setValue(high)
            self._adjusting = False
        self.scroller.update_button()
        self._check_top()

    def _value_changed(self, value: int) -> None:
        if not self._adjusting:
            self._follow = value >= self.verticalScrollBar().maximum() - 8
            self.scroller.remember_anchor()
        self.scroller.update_button()
        self._check_top()

    def _check_top(self) -> None:
        """Ask for older messages once the top is a screen away (or the rows do not fill it)."""
        bar = self.verticalScrollBar()
        model = self.model()
        if getattr(model, "earlier", False) and bar.value() <= bar.pageStep():
            self.nearTop.emit()

    def follow(self) -> None:
        """Jump to the end and follow the stream again (after sending, for instance)."""
        self.scroller.stop()
        self._follow = True
        self.scrollToBottom()
        self.scroller.update_button()

    def updateGeometries(self) -> None:
        super().updateGeometries()
        # The base sets the step from the first row's height: a wheel notch is lines instead.
        if hasattr(self, "scroller"):
            self.verticalScrollBar().setSingleStep(self.scroller.line_height())
            if not self._follow:  # rows changed height: the first visible row stays put
                self._adjusting = True
                self.scroller.restore_anchor()
                self._adjusting = False

    def wheelEvent(self, event: Any) -> None:
        if not self.scroller.wheel(event):
            super().wheelEvent(event)

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if not self._warmed:
            # The Markdown engine (~40 ms to import and build) loads on the loop turn after the
            # transcript is first shown, not in the middle of the first answer's first frame.
            self._warmed = True
            QTimer.singleShot(0, warm_up)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        width = self.viewport().width()
        if width != self._laid_out_width:
            self._laid_out_width = width
            self.doItemsLayout()  # wrapped text changes height with the width
        self.scroller.update_button()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self.delegate.forget()
        if event.type() == QEvent.Type.PaletteChange:
            self.scroller.restyle()  # a style sheet does not follow a theme change itself
        super().changeEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        selection, selecting = self.selection, self.selecting
        pos = event.position().toPoint()
        if event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)  # a right-click keeps the selection (its menu)
            return
        selecting.swallow_release = False
        if selecting.tripled(pos):
            selecting.swallow_release = True  # the paragraph is selected: no click
            return
        point = selection.point_at(pos)
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and point is not None:
            selection.extend(point)  # from the anchor (or here) to here
            selecting.swallow_release = True
            selecting.press, selecting.dragging = pos, True
            return
        selection.set(point, point)  # a caret: clears what was selected
        selecting.press, selecting.dragging = pos, False
        super().mousePressEvent(event)  # the row becomes current (and the base sees a click)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        selecting = self.selecting
        pos = event.position().toPoint()
        if selecting.press is not None and event.buttons() & Qt.MouseButton.LeftButton:
            # A drag selects text; the base class never sees it (no row drag-selection).
            if not selecting.dragging:
                moved = (pos - selecting.press).manhattanLength()
                selecting.dragging = moved >= QApplication.startDragDistance()
            if selecting.dragging:
                selecting.drag_to(pos)
                self.viewport().setCursor(Qt.CursorShape.IBeamCursor)
                return
            return
        super().mouseMoveEvent(event)
        index = self.indexAt(pos)
        pointing = False
        if index.isValid():
            item = index.data(Roles.ITEM)
            option = self._option(index)
            pointing = bool(item and self.delegate.anchor_at(item, option, pos))
        self.viewport().setCursor(
            Qt.CursorShape.PointingHandCursor if pointing else Qt.CursorShape.ArrowCursor
        )

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        selecting = self.selecting
        if event.button() == Qt.MouseButton.LeftButton and (
            selecting.dragging or selecting.swallow_release
        ):
            # A drag (or shift/triple click) selected text: no anchor, no click.
            selecting.end_drag()
            selecting.swallow_release = False
            self.setState(QAbstractItemView.State.NoState)
            self.viewport().setCursor(Qt.CursorShape.ArrowCursor)
            return
        selecting.end_drag()
        super().mouseReleaseEvent(event)  # a click: the delegate follows an anchor

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.selecting.doubled(event.position().toPoint())
            self.selecting.swallow_release = True
            return
        super().mouseDoubleClickEvent(event)

    def _option(self, index: QModelIndex) -> QStyleOptionViewItem:
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = self.visualRect(index)
        return option

    def anchors(self, row: int) -> list[str]:
        """Every anchor of a row, in order (accessibility and tests)."""
        index = self.model().index(row, 0)
        item = index.data(Roles.ITEM)
        option = self._option(index)
        render = self.delegate.render_for(item, self.delegate.width_for(item, option), option)
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
        if self.selecting.key(event):  # Ctrl+C/A, Escape, Shift+arrows: the text selection
            return
        if self.scroller.key(event):  # PgUp/PgDn, Home/End: scrolling
            return
        shift = event.modifiers() == Qt.KeyboardModifier.ShiftModifier
        shift_f10 = event.key() == Qt.Key.Key_F10 and shift
        if shift_f10 or event.key() == Qt.Key.Key_Menu:  # (accepted: Qt sends no second one)
            self.selecting.menu_for_current()
            return
        alt = event.modifiers() == Qt.KeyboardModifier.AltModifier
        arrows = {Qt.Key.Key_Left: "previous", Qt.Key.Key_Right: "next"}
        if alt and event.key() in arrows and index.isValid():
            # Alt+Left/Right on a message with versions: the previous/next version.
            item = index.data(Roles.ITEM)
            if item is not None and item.versions:
                self.delegate.actions.run(item, index, arrows[event.key()])
                return
        keys = (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if event.key() in keys and index.isValid():
            # A tool card opens/closes; so does an answer's reasoning (setData refuses others).
            item = index.data(Roles.ITEM)
            if (
                index.data(Roles.KIND) == ItemKind.TOOL.value
                or (item is not None and item.has_reasoning)
            ) and self.model().setData(index, not index.data(Roles.EXPANDED), Roles.EXPANDED):
                return
        super().keyPressEvent(event)  # Ctrl+C without a selection: the current row's text

    def event(self, event: QEvent) -> bool:
        # Esc clears a text selection before it reaches the window (where it stops an answer).
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self.selection.has_selection()
        ):
            event.accept()
            return True
        return super().event(event)

    def copy(self) -> None:
        """Edit → Copy: the highlighted text, or without a selection the current message."""
        if self.selection.copy():
            return
        index = self.currentIndex()
        text = index.data(Qt.ItemDataRole.DisplayRole) if index.isValid() else None
        if text:
            QGuiApplication.clipboard().setText(str(text))

    def selectAll(self) -> None:
        """Edit → Select All (Ctrl+A): the current message's text, as in a browser's chat."""
        index = self.currentIndex()
        if not index.isValid() and self.model() is not None and self.model().rowCount():
            index = self.model().index(self.model().rowCount() - 1, 0)
            self.setCurrentIndex(index)
        if index.isValid():
            self.selection.select_row(index.row())

    def contextMenuEvent(self, event: Any) -> None:
        if event.reason() == QContextMenuEvent.Reason.Keyboard:
            self.selecting.menu_for_current()  # the Menu key: on the current row
            return
        menu = self.selecting.context_menu(event.pos())
        if menu is not None:
            index = self.indexAt(event.pos())
            self.rowMenu.emit(menu, index.data(Roles.ITEM))
            menu.exec(event.globalPos())
            menu.deleteLater()

    def _open_link(self, url: str) -> None:
        self.opened_links.append(url)
        QDesktopServices.openUrl(QUrl(url))
