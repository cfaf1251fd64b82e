"""The conversation list: newest first, a badge on resumable ones, full-text search.

Search runs in SQLite (FTS5, through ``AppServices.search``) after a short pause in typing;
while a query is active the list shows the matching conversations with the matched snippet.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPainter
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app import SessionInfo

from .plain import plain_message_box, plain_tooltip

__all__ = ["Sidebar", "ask_confirmation", "ask_title"]

SESSION_ROLE = Qt.ItemDataRole.UserRole + 1
BADGE_ROLE = Qt.ItemDataRole.UserRole + 2
SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 3


def ask_confirmation(parent: QWidget, title: str, text: str) -> bool:
    """A yes/no question (a module function so tests can answer it)."""
    box = plain_message_box(
        parent,
        QMessageBox.Icon.Question,
        title,
        text,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return box.exec() == QMessageBox.StandardButton.Yes


def ask_title(parent: QWidget, current: str) -> str | None:
    text, ok = QInputDialog.getText(parent, "Rename conversation", "Title:", text=current)
    return text.strip() if ok and text.strip() else None


class _BadgeDelegate(QStyledItemDelegate):
    """Draws the "Resume" pill on conversations that can be resumed."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        badge = bool(index.data(BADGE_ROLE))
        if badge:
            option.rect = option.rect.adjusted(0, 0, -64, 0)
        super().paint(painter, option, index)
        if not badge:
            return
        option.rect = option.rect.adjusted(0, 0, 64, 0)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRect(option.rect.right() - 60, option.rect.center().y() - 9, 56, 18)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(230, 120, 0))
        painter.drawRoundedRect(rect, 9, 9)
        painter.setPen(QColor("white"))
        font = painter.font()
        font.setPointSizeF(max(font.pointSizeF() * 0.8, 6.0))
        painter.setFont(font)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "Resume")
        painter.restore()


class Sidebar(QWidget):
    sessionActivated = Signal(str)
    newRequested = Signal()
    renameRequested = Signal(str, str)
    deleteRequested = Signal(str)
    searchChanged = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setObjectName("sidebarSearch")
        self.search.setAccessibleName("Search conversations")
        self.search.setPlaceholderText("Search all conversations (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.new_button = QPushButton("New")
        self.new_button.setObjectName("newConversationButton")
        self.new_button.setToolTip("New conversation (Ctrl+N)")
        self.list = QListWidget()
        self.list.setObjectName("sidebar")
        self.list.setAccessibleName("sidebar")
        self.list.setItemDelegate(_BadgeDelegate(self.list))
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setUniformItemSizes(True)
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 0, 6)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        self.setMinimumWidth(200)

        self._sessions: list[SessionInfo] = []
        self._badges: set[str] = set()
        self._current: str | None = None
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(lambda: self.searchChanged.emit(self.search.text().strip()))
        self.search.textChanged.connect(lambda _text: self._debounce.start())
        self.new_button.clicked.connect(self.newRequested)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        self.list.customContextMenuRequested.connect(self._menu)

    def cancel_pending_search(self) -> None:
        """Drop a search still waiting for its debounce (the window is closing)."""
        self._debounce.stop()

    # --- content ---------------------------------------------------------------------------

    def set_sessions(self, sessions: Iterable[SessionInfo], badges: set[str]) -> None:
        self._sessions = sorted(sessions, key=lambda s: s.updated_at, reverse=True)
        self._badges = set(badges)
        if not self.search.text().strip():
            self._fill([(s, None) for s in self._sessions])

    def set_search_results(self, hits: list[tuple[str, str]]) -> None:
        """``hits``: (session id, snippet) in rank order; one row per conversation."""
        by_id = {s.id: s for s in self._sessions}
        rows: list[tuple[SessionInfo, str | None]] = []
        seen: set[str] = set()
        for session_id, snippet in hits:
            info = by_id.get(session_id)
            if info is not None and session_id not in seen:
                seen.add(session_id)
                rows.append((info, snippet))
        self._fill(rows)

    def show_all(self) -> None:
        self._fill([(s, None) for s in self._sessions])

    def _fill(self, rows: list[tuple[SessionInfo, str | None]]) -> None:
        self.list.clear()
        for info, snippet in rows:
            title = info.title or "Untitled conversation"
            text = title if snippet is None else f"{title}\n  {snippet}"
            item = QListWidgetItem(text)
            item.setData(SESSION_ROLE, info.id)
            resumable = info.id in self._badges
            item.setData(BADGE_ROLE, resumable)
            item.setData(SNIPPET_ROLE, snippet)
            item.setToolTip(plain_tooltip(title + (" — can be resumed" if resumable else "")))
            item.setData(
                Qt.ItemDataRole.AccessibleTextRole,
                title + (", can be resumed" if resumable else ""),
            )
            self.list.addItem(item)
            if info.id == self._current:
                item.setSelected(True)
                self.list.setCurrentItem(item)

    def set_current(self, session_id: str | None) -> None:
        self._current = session_id
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(SESSION_ROLE) == session_id:
                self.list.setCurrentItem(item)
                return
        self.list.clearSelection()

    def session_ids(self) -> list[str]:
        return [self.list.item(r).data(SESSION_ROLE) for r in range(self.list.count())]

    def has_badge(self, session_id: str) -> bool:
        return session_id in self._badges

    def title_of(self, session_id: str) -> str:
        for info in self._sessions:
            if info.id == session_id:
                return info.title or "Untitled conversation"
        return ""

    # --- actions ---------------------------------------------------------------------------

    def _activated(self, item: QListWidgetItem) -> None:
        session_id = item.data(SESSION_ROLE)
        if session_id and session_id != self._current:
            self.sessionActivated.emit(session_id)

    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        session_id = item.data(SESSION_ROLE)
        menu = QMenu(self)
        rename = menu.addAction("Rename…")
        delete = menu.addAction("Delete…")
        chosen = menu.exec(self.list.viewport().mapToGlobal(pos))
        if chosen is rename:
            self.rename(session_id)
        elif chosen is delete:
            self.delete(session_id)

    def rename(self, session_id: str) -> None:
        title = ask_title(self, self.title_of(session_id))
        if title:
            self.renameRequested.emit(session_id, title)

    def delete(self, session_id: str) -> bool:
        """Ask first; emits ``deleteRequested`` only when the person confirms."""
        title = self.title_of(session_id)
        if not ask_confirmation(
            self,
            "Delete conversation",
            f"Delete “{title}” and all its messages? This cannot be undone.",
        ):
            return False
        self.deleteRequested.emit(session_id)
        return True

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Delete:
            item = self.list.currentItem()
            if item is not None:
                self.delete(item.data(SESSION_ROLE))
                return
        super().keyPressEvent(event)
