"""The conversation list: pinned ones first under "Pinned", then grouped by date, newest
first; a badge on resumable ones; search; a row's menu renames, pins or deletes.

Rows are painted by :mod:`ui.sidebar_rows` (a date-group header above a group's first row,
the plain title elided with "…", the Resume badge inside the visible width); the words are
decided in :mod:`ui.sidebar_text`. Moving through the list with the keyboard opens the
conversation moved to, as a click does, and the highlight follows what is open.

Search runs in SQLite (FTS5, through ``AppServices.search``) after a short pause in typing;
while a query is active the list shows the matching conversations, the match highlighted,
or says that nothing matches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .plain import plain_message_box, plain_tooltip
from .sidebar_rows import (
    BADGE_ROLE,
    FIRST_ROLE,
    GROUP_ROLE,
    SESSION_ROLE,
    SNIPPET_ROLE,
    ConversationList,
    RowDelegate,
)
from .sidebar_text import (
    NO_CONVERSATIONS,
    accessible_text,
    date_group,
    display_title,
    ms_until_tomorrow,
    no_match_text,
    pin_action_text,
    query_terms,
    section_labels,
)
from .theme import SPACE, tokens_for

__all__ = ["SESSION_ROLE", "ListedConversation", "Sidebar", "ask_confirmation", "ask_title"]


class ListedConversation(Protocol):
    """What the list shows of a conversation: ``app.SessionInfo`` has it, and so do the titles
    the start window reads before the core is imported (:mod:`ui.start_window`)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def created_at(self) -> float: ...
    @property
    def updated_at(self) -> float: ...
    @property
    def pinned_at(self) -> float | None: ...


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


class Sidebar(QWidget):
    """New conversation, the search field, and the list (or a line saying it is empty)."""

    sessionActivated = Signal(str)
    newRequested = Signal()
    renameRequested = Signal(str, str)
    pinRequested = Signal(str, bool)  # (session id, pinned): pin to the top, or unpin
    deleteRequested = Signal(str)
    searchChanged = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: What "now" is for the date groups (tests set a fixed time).
        self.clock: Callable[[], datetime] = lambda: datetime.now().astimezone()
        self.new_button = QPushButton("New conversation")
        self.new_button.setObjectName("newConversationButton")
        self.new_button.setAccessibleName("New conversation")
        self.new_button.setToolTip("New conversation (Ctrl+N)")
        self.search = QLineEdit()
        self.search.setObjectName("sidebarSearch")
        self.search.setAccessibleName("Search conversations")
        self.search.setPlaceholderText("Search conversations")
        self.search.setToolTip("Search all conversations (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.empty = QLabel()
        self.empty.setObjectName("sidebarNoMatch")
        self.empty.setTextFormat(Qt.TextFormat.PlainText)  # the query is the person's text
        self.empty.setWordWrap(True)
        self.empty.setContentsMargins(SPACE[2], SPACE[1], SPACE[1], SPACE[1])
        self.empty.hide()
        self._terms: list[str] = []
        self.list = ConversationList()
        self.list.setObjectName("sidebar")
        self.list.setAccessibleName("Conversations")
        self.list.setItemDelegate(RowDelegate(self.list, lambda: self._terms))
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE[1], SPACE[1], 0, SPACE[1])
        layout.setSpacing(SPACE[1])
        layout.addWidget(self.new_button)
        layout.addWidget(self.search)
        layout.addWidget(self.empty)
        layout.addWidget(self.list, 1)
        self.setMinimumWidth(200)
        self._apply_tokens()

        self._sessions: list[ListedConversation] = []
        self._badges: set[str] = set()
        self._current: str | None = None
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(lambda: self.searchChanged.emit(self.search.text().strip()))
        self.search.textChanged.connect(lambda _text: self._debounce.start())
        self.search.installEventFilter(self)
        # At midnight "Today" becomes "Yesterday": the groups are redrawn then.
        self._midnight = QTimer(self)
        self._midnight.setSingleShot(True)
        self._midnight.timeout.connect(self._regroup)
        self.new_button.clicked.connect(self.newRequested)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        self.list.moved.connect(self._activated)
        self.list.customContextMenuRequested.connect(self._menu)

    def cancel_pending_search(self) -> None:
        """Drop a search still waiting for its debounce (the window is closing)."""
        self._debounce.stop()
        self._midnight.stop()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Down or Enter in the search field goes to the list and opens its first row; Esc
        clears the search (when no answer is running: then Esc stops it)."""
        if watched is self.search and isinstance(event, QKeyEvent):
            if event.type() != QEvent.Type.KeyPress:
                return super().eventFilter(watched, event)
            if event.key() == Qt.Key.Key_Escape and self.search.text():
                self.search.clear()
                return True
            keys = (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter)
            if event.key() in keys and self.list.count():
                self.list.setFocus(Qt.FocusReason.TabFocusReason)
                self.list.setCurrentRow(0)
                self._activated(self.list.item(0))
                return True
        return super().eventFilter(watched, event)

    # --- look ------------------------------------------------------------------------------

    def _apply_tokens(self) -> None:
        """The list on the window's colour (the transcript has the surface); the no-match line
        muted. Palettes, not style sheets, so a theme change reaches them (see changeEvent)."""
        tokens = tokens_for(self.palette())
        palette = self.list.palette()
        palette.setColor(QPalette.ColorRole.Base, tokens.color("window"))
        self.list.setPalette(palette)
        muted = self.empty.palette()
        muted.setColor(QPalette.ColorRole.WindowText, tokens.color("muted"))
        self.empty.setPalette(muted)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_tokens()

    # --- content ---------------------------------------------------------------------------

    def set_sessions(self, sessions: Iterable[ListedConversation], badges: set[str]) -> None:
        self._sessions = sorted(sessions, key=_listed_order)
        self._badges = set(badges)
        if not self.search.text().strip():
            self.show_all()

    def set_search_results(self, hits: list[tuple[str, str]], query: str | None = None) -> None:
        """``hits``: (session id, snippet) in rank order; one row per conversation. ``query``
        (default: the search field's text) is what the no-match line quotes and bold marks."""
        by_id = {s.id: s for s in self._sessions}
        rows: list[tuple[ListedConversation, str | None]] = []
        seen: set[str] = set()
        for session_id, snippet in hits:
            info = by_id.get(session_id)
            if info is not None and session_id not in seen:
                seen.add(session_id)
                rows.append((info, snippet))
        query = self.search.text().strip() if query is None else query
        self._terms = query_terms(query)
        self._fill(rows, grouped=False)
        self.empty.setText(no_match_text(query))
        self.empty.setVisible(not rows)

    def show_all(self) -> None:
        self._terms = []
        self.empty.setText(NO_CONVERSATIONS)
        self.empty.setVisible(not self._sessions)
        self._fill([(s, None) for s in self._sessions], grouped=True)

    def _regroup(self) -> None:
        if not self.search.text().strip():
            self.show_all()

    def _fill(self, rows: list[tuple[ListedConversation, str | None]], *, grouped: bool) -> None:
        now = self.clock()
        self._midnight.start(ms_until_tomorrow(now))
        labels = section_labels([(_changed_at(i), _pinned(i)) for i, _ in rows], now)
        self.list.clear()
        for row, (info, snippet) in enumerate(rows):
            title = display_title(info.title)
            resumable = info.id in self._badges
            item = QListWidgetItem(title)
            item.setData(SESSION_ROLE, info.id)
            item.setData(BADGE_ROLE, resumable)
            item.setData(SNIPPET_ROLE, snippet)
            item.setData(GROUP_ROLE, labels[row] if grouped else None)
            item.setData(FIRST_ROLE, row == 0)
            spoken = accessible_text(title, resumable, _pinned(info))
            item.setToolTip(plain_tooltip(spoken))
            item.setData(Qt.ItemDataRole.AccessibleTextRole, spoken)
            item.setData(
                Qt.ItemDataRole.AccessibleDescriptionRole, date_group(_changed_at(info), now)
            )
            self.list.addItem(item)
            if info.id == self._current:
                self.list.setCurrentItem(item)

    def set_current(self, session_id: str | None) -> None:
        """Highlight the open conversation (none: nothing highlighted)."""
        self._current = session_id
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(SESSION_ROLE) == session_id:
                self.list.setCurrentItem(item)
                self.list.scrollToItem(item)
                return
        self.list.clearSelection()

    def session_ids(self) -> list[str]:
        return [self.list.item(r).data(SESSION_ROLE) for r in range(self.list.count())]

    def group_headers(self) -> list[tuple[int, str]]:
        """(row, label) of each date-group header shown above a row."""
        rows = (self.list.item(r) for r in range(self.list.count()))
        return [(r, item.data(GROUP_ROLE)) for r, item in enumerate(rows) if item.data(GROUP_ROLE)]

    def has_badge(self, session_id: str) -> bool:
        return session_id in self._badges

    def is_pinned(self, session_id: str) -> bool:
        return any(_pinned(info) for info in self._sessions if info.id == session_id)

    def toggle_pin(self, session_id: str) -> None:
        """Pin the conversation to the top of the list, or unpin it (``pinRequested``)."""
        if any(info.id == session_id for info in self._sessions):
            self.pinRequested.emit(session_id, not self.is_pinned(session_id))

    def title_of(self, session_id: str) -> str:
        """The conversation's stored title (as the person or the model wrote it)."""
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
        if item is None or self.list.on_header(pos):
            return
        session_id = item.data(SESSION_ROLE)
        menu = QMenu(self)
        menu.setObjectName("sidebarRowMenu")
        rename = menu.addAction("Rename…")
        pin = menu.addAction(pin_action_text(self.is_pinned(session_id)))
        pin.setObjectName("sidebarPinAction")
        delete = menu.addAction("Delete…")
        chosen = menu.exec(self.list.viewport().mapToGlobal(pos))
        if chosen is pin:
            self.toggle_pin(session_id)
        elif chosen is rename:
            self.rename(session_id)
        elif chosen is delete:
            self.delete(session_id)

    def rename(self, session_id: str) -> None:
        title = ask_title(self, self.title_of(session_id))
        if title:
            self.renameRequested.emit(session_id, title)

    def delete(self, session_id: str) -> bool:
        """Ask first; emits ``deleteRequested`` only when the person confirms."""
        title = display_title(self.title_of(session_id))
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


def _changed_at(info: ListedConversation) -> float:
    return info.updated_at or info.created_at


def _pinned(info: ListedConversation) -> bool:
    return info.pinned_at is not None


def _listed_order(info: ListedConversation) -> tuple[bool, float, float]:
    """Pinned first (most recently pinned first), then the rest most recently changed first
    (the store lists them so too)."""
    return (not _pinned(info), -(info.pinned_at or 0.0), -_changed_at(info))
