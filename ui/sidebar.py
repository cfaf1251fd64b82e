"""The conversation list: pinned ones first under "Pinned", then grouped by date, newest
first; a badge on resumable ones; search; a row's menu renames, pins or deletes.

The rows live in :mod:`ui.sidebar_model` (section headers as rows of their own, updated by a
few moves and insertions when the listing changes, never rebuilt for a new message) and are
painted by :mod:`ui.sidebar_rows` (the plain title elided with "…", the Resume badge inside
the visible width); the words are decided in :mod:`ui.sidebar_text`. Moving through the list
with the keyboard opens the conversation moved to, as a click does, and the highlight follows
what is open.

Search runs in SQLite (FTS5, through ``AppServices.search``) after a short pause in typing;
while a query is active the list shows the matching conversations, the match highlighted,
or says that nothing matches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .plain import plain_message_box
from .sidebar_model import (
    HEADER,
    SESSION_ROLE,
    ConversationModel,
    ListedConversation,
    changed_at,
    grouped_keys,
    is_pinned,
)
from .sidebar_rows import ConversationList, RowDelegate
from .sidebar_text import (
    NO_CONVERSATIONS,
    display_title,
    ms_until_tomorrow,
    no_match_text,
    pin_action_text,
    query_terms,
    title_matches,
)
from .theme import SPACE, tokens_for

__all__ = ["SESSION_ROLE", "ListedConversation", "Sidebar", "ask_confirmation", "ask_title"]


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
    searchDismissed = Signal()  # Esc in the empty search field: the person is done searching

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
        self.model = ConversationModel(self)
        self.list = ConversationList()
        self.list.setModel(self.model)
        self.list.setObjectName("sidebar")
        self.list.setAccessibleName("Conversations")
        self.list.setItemDelegate(RowDelegate(self.list, lambda: self._terms))
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
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
        self._by_id: dict[str, ListedConversation] = {}
        self._badges: set[str] = set()
        self._title_hits: tuple[list[str], list[ListedConversation], list[str]] | None = None
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
        self.list.activated.connect(self._activated)
        self.list.clicked.connect(self._activated)
        self.list.moved.connect(self._activated)
        self.list.customContextMenuRequested.connect(self._menu)

    def cancel_pending_search(self) -> None:
        """Drop a search still waiting for its debounce (the window is closing)."""
        self._debounce.stop()
        self._midnight.stop()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Down or Enter in the search field goes to the list and opens its first row; Esc
        clears the search, and in an empty field says the search is done (and, while an answer
        runs, stops it)."""
        if watched is self.search and isinstance(event, QKeyEvent):
            if event.type() != QEvent.Type.KeyPress:
                return super().eventFilter(watched, event)
            if event.key() == Qt.Key.Key_Escape:
                if self.search.text():
                    self.search.clear()
                    return True
                self.searchDismissed.emit()  # (and Esc goes on: it stops a running answer)
            keys = (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter)
            first = self._first_row() if event.key() in keys else QModelIndex()
            if first.isValid():
                self.list.setFocus(Qt.FocusReason.TabFocusReason)
                self.list.setCurrentIndex(first)
                self._activated(first)
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
        self._sessions = _in_listed_order(sessions)
        self._by_id = {info.id: info for info in self._sessions}
        self._badges = set(badges)
        if not self.search.text().strip():
            self.show_all()

    def set_search_results(self, hits: list[tuple[str, str]], query: str | None = None) -> None:
        """``hits``: (session id, snippet), newest first; one row per conversation. ``query``
        (default: the search field's text) is what the no-match line quotes and bold marks.
        Conversations whose title has the query's words come first (their snippet: the first
        message hit's, if one came), then the rest of the hits."""
        query = self.search.text().strip() if query is None else query
        self._terms = query_terms(query)
        snippets = dict.fromkeys(self._titled(self._terms), "")
        for session_id, snippet in hits:
            if session_id in self._by_id and not snippets.get(session_id):
                snippets[session_id] = snippet
        self._show(list(snippets), snippets)
        self.empty.setText(no_match_text(query))
        self.empty.setVisible(not snippets)

    def _titled(self, terms: list[str]) -> list[str]:
        """:func:`title_matches` over the listed conversations, kept for the next page of the
        same search (a page comes each time the list is scrolled near its end)."""
        cached = self._title_hits
        if cached is not None and cached[0] == terms and cached[1] is self._sessions:
            return cached[2]
        titled = ((info.id, display_title(info.title)) for info in self._sessions)
        found = title_matches(titled, terms)
        self._title_hits = (terms, self._sessions, found)
        return found

    def show_all(self) -> None:
        self._terms = []
        self.empty.setText(NO_CONVERSATIONS)
        self.empty.setVisible(not self._sessions)
        now = self.clock()
        self._show(grouped_keys(self._sessions, now), None, now)

    def _regroup(self) -> None:
        if not self.search.text().strip():
            self.show_all()

    def _show(
        self, keys: list[str], snippets: dict[str, str] | None, now: datetime | None = None
    ) -> None:
        now = self.clock() if now is None else now
        self._midnight.start(ms_until_tomorrow(now))
        self.model.show(keys, self._by_id, self._badges, now, snippets)
        if self.list.isVisible():  # (a hidden list paints everything when it is shown)
            # The search words' highlight may have changed. (Not before the first show: the
            # first viewport() call costs ~40 ms of type lookups, a quarter of phase one.)
            self.list.viewport().update()
        row = self._row_of(self._current)
        if row >= 0 and self.list.currentIndex().row() != row:
            self.list.setCurrentIndex(self.model.index(row))
        elif row < 0:
            self.list.clearSelection()

    def _row_of(self, session_id: str | None) -> int:
        if session_id is None:
            return -1
        try:
            return self.model.keys().index(session_id)
        except ValueError:
            return -1

    def _first_row(self) -> QModelIndex:
        """The first conversation's row (under its section header when grouped)."""
        for row in range(min(self.model.rowCount(), 2)):
            if self.model.row(row).session_id:
                return self.model.index(row)
        return QModelIndex()

    def index_of(self, session_id: str) -> QModelIndex:
        """The row of ``session_id`` (invalid when it is not listed)."""
        row = self._row_of(session_id)
        return self.model.index(row) if row >= 0 else QModelIndex()

    def set_current(self, session_id: str | None) -> None:
        """Highlight the open conversation (none: nothing highlighted)."""
        self._current = session_id
        index = self.index_of(session_id) if session_id else QModelIndex()
        if index.isValid():
            self.list.setCurrentIndex(index)
            self.list.scrollTo(index)
            return
        self.list.clearSelection()

    def current_id(self) -> str | None:
        """The conversation whose row is current and selected (None: no such row)."""
        index = self.list.currentIndex()
        if not index.isValid() or not self.list.selectionModel().isSelected(index):
            return None
        return str(index.data(SESSION_ROLE))

    def session_ids(self) -> list[str]:
        return [key for key in self.model.keys() if not key.startswith(HEADER)]

    def group_headers(self) -> list[tuple[int, str]]:
        """(position among the conversations, label) of each section header: the header
        is shown above the conversation at that position."""
        headers: list[tuple[int, str]] = []
        listed = 0
        for key in self.model.keys():
            if key.startswith(HEADER):
                headers.append((listed, key[len(HEADER) :]))
            else:
                listed += 1
        return headers

    def has_badge(self, session_id: str) -> bool:
        return session_id in self._badges

    def is_pinned(self, session_id: str) -> bool:
        info = self._by_id.get(session_id)
        return info is not None and is_pinned(info)

    def toggle_pin(self, session_id: str) -> None:
        """Pin the conversation to the top of the list, or unpin it (``pinRequested``)."""
        if session_id in self._by_id:
            self.pinRequested.emit(session_id, not self.is_pinned(session_id))

    def title_of(self, session_id: str) -> str:
        """The conversation's stored title (as the person or the model wrote it)."""
        info = self._by_id.get(session_id)
        if info is None:
            return ""
        return info.title or "Untitled conversation"

    # --- actions ---------------------------------------------------------------------------

    def _activated(self, index: QModelIndex) -> None:
        session_id = index.data(SESSION_ROLE)
        if session_id and session_id != self._current:
            self.sessionActivated.emit(session_id)

    def _menu(self, pos: QPoint) -> None:
        session_id = self.list.indexAt(pos).data(SESSION_ROLE)
        if not session_id:
            return
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
            session_id = self.list.currentIndex().data(SESSION_ROLE)
            if session_id:
                self.delete(session_id)
                return
        super().keyPressEvent(event)


def _listed_order(info: ListedConversation) -> tuple[bool, float, float]:
    """Pinned first (most recently pinned first), then the rest most recently changed first
    (the store lists them so too)."""
    return (not is_pinned(info), -(info.pinned_at or 0.0), -changed_at(info))


def _rough_order(info: ListedConversation) -> float:
    """:func:`_listed_order` as one number (sorting 10,000 by it takes a quarter of the
    time): every pinned one before every other (Unix times are far below 10¹²), ties among
    pinned ones left to :func:`_in_listed_order`."""
    pinned_at = info.pinned_at
    if pinned_at is not None:
        return -4e12 - pinned_at
    return -(info.updated_at or info.created_at)


def _in_listed_order(sessions: Iterable[ListedConversation]) -> list[ListedConversation]:
    listing = sorted(sessions, key=_rough_order)
    pinned = 0
    while pinned < len(listing) and is_pinned(listing[pinned]):
        pinned += 1
    listing[:pinned] = sorted(listing[:pinned], key=_listed_order)  # a few
    return listing
