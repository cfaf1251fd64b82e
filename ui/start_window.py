"""The window a start shows first, before the agent core is imported (phase one of two).

Phase one needs only a few Qt classes and the standard library, so the window is on screen
about as soon as a bare Qt window would be:

* the saved theme (``settings.json``'s ``theme``; for "system", the colours the window last
  painted with, kept in ``window.json``) and the saved place, sidebar width and zoom;
* the conversations' titles from one read-only query on the database (:func:`read_listing`),
  drawn as the sidebar draws them (:class:`ui.start_list.TitleList`);
* the menu bar's titles, the sidebar's button and search field, the header's ☰ and an editor
  where the person can start typing, focused — each where the main window has it.

It is built of plain widgets on purpose: the real sidebar, header and menus, and anything that
names an enum of the ``Qt`` namespace, make Python enum classes for every enum they touch
(``from PySide6.QtCore import Qt`` alone builds 97, ~15-25 ms) — phase one's largest cost
before. A test checks that showing this window builds none of ``Qt``'s.

Phase two (:func:`ui.main.main`) imports the core, opens the data folder properly (migrations,
the damage check, recovery) and builds the :class:`ui.window.MainWindow`;
:meth:`StartWindow.hand_over` then gives it this window's place, what was typed and the search
text, shows it and closes this one.

Nothing here writes to the data folder. If the data cannot be read (no database yet, an older
schema, a damaged file), the list stays empty: phase two says what happened.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QCloseEvent, QGuiApplication, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .sidebar_text import NO_CONVERSATIONS
from .start_list import TitleList
from .theme import DARK, LIGHT, SPACE, Tokens, needs_fusion, palette_for, tokens_for
from .window_place import NARROW_WIDTH, SIDEBAR_WIDTH, keep_on_screen, scaled_font
from .window_state import WindowState, load_state

if TYPE_CHECKING:
    import asyncio

    from .window import MainWindow

__all__ = [
    "DATABASE_FILE",
    "LISTED",
    "MENU_TITLES",
    "SETTINGS_FILE",
    "Listed",
    "StartWindow",
    "read_listing",
    "read_theme",
    "start_tokens",
]

log = logging.getLogger(__name__)

#: The data folder's files this module reads (``app.services`` owns them; a test checks that
#: the names agree, since ``ui`` may not import the core's storage modules).
DATABASE_FILE = "continuum.sqlite"
SETTINGS_FILE = "settings.json"
#: At most this many titles are listed before phase two lists them all.
LISTED = 200
RESOURCES = Path(__file__).resolve().parent.parent / "resources"
PLACEHOLDER = "Message the model — Enter to send, Shift+Enter for a new line"
OPENING = "Opening your conversations…"
PAINT_WAIT = 0.5
#: Where the platform's own style may ignore palettes (Windows' and macOS').
_NATIVE_STYLE_PLATFORM: bool = sys.platform in ("win32", "darwin")
#: The menu bar's titles (:data:`ui.actions.MENUS`' — a test keeps them equal), so nothing
#: moves at the hand-over.
MENU_TITLES = ("&File", "&Edit", "&Conversation", "&View", "&Help")

_QUERY = (
    "SELECT id, title, created_at, updated_at, pinned_at FROM sessions "
    "ORDER BY pinned_at IS NULL, pinned_at DESC, updated_at DESC, id LIMIT ?"
)


class Listed(NamedTuple):
    """One conversation as the start window lists it (a :class:`ui.sidebar.ListedConversation`)."""

    id: str
    title: str | None
    created_at: float
    updated_at: float
    pinned_at: float | None


def read_theme(data_dir: Path) -> str:
    """The saved theme choice; ``"system"`` when there is none or the file cannot be read."""
    try:
        data = json.loads((data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "system"
    theme = data.get("theme") if isinstance(data, dict) else None
    return theme if isinstance(theme, str) else "system"


def read_listing(data_dir: Path, limit: int = LISTED) -> list[Listed]:
    """The newest ``limit`` conversations (pinned first), read-only; ``[]`` on any problem."""
    path = data_dir / DATABASE_FILE
    if not path.is_file():
        return []
    # Read-only. With no write-ahead log on disk (the store closed cleanly) the file is all
    # there is: "immutable" then also keeps SQLite from making -wal/-shm files. A log left by a
    # killed app holds committed messages, so it is read (SQLite adds the -shm it needs).
    wal = path.with_name(path.name + "-wal")
    options = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True, timeout=0.2)
    except sqlite3.Error as err:
        log.info("start window: titles not read (%s)", err)
        return []
    try:
        rows = connection.execute(_QUERY, (limit,)).fetchall()
    except sqlite3.Error as err:  # an older schema, a damaged file: phase two handles it
        log.info("start window: titles not read (%s)", err)
        return []
    finally:
        connection.close()
    listed: list[Listed] = []
    for sid, title, created, updated, pinned in rows:
        if isinstance(sid, str) and isinstance(created, int | float):
            when = updated if isinstance(updated, int | float) else created
            listed.append(
                Listed(
                    sid,
                    title if isinstance(title, str) else None,
                    float(created),
                    float(when),
                    float(pinned) if isinstance(pinned, int | float) else None,
                )
            )
    return listed


def start_tokens(choice: str, state: WindowState, desktop: QPalette) -> Tokens:
    """The colours of the start window: the chosen theme; for "system" (or an unknown choice)
    the ones the window last painted with, else the desktop palette's (light or dark).

    The main window asks the desktop for its colour scheme, which builds the ``Qt``
    namespace's enums; the scheme it last used is nearly always the one it will use again."""
    if choice == "light":
        return LIGHT
    if choice == "dark":
        return DARK
    if state.scheme:
        return DARK if state.scheme == "dark" else LIGHT
    return tokens_for(desktop)


class _Surface(QWidget):
    """Where the transcript will be: the surface colour; tells the window when first painted."""

    def __init__(self, owner: StartWindow) -> None:
        super().__init__()
        self._owner = owner
        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.setAutoFillBackground(True)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        self._owner.surface_painted()


class StartWindow(QMainWindow):
    """Looks like the main window (menu bar, sidebar, header, composer) while the core loads."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.setObjectName("startWindow")
        self.setWindowTitle("Continuum")
        state = load_state(data_dir)
        self.tokens = start_tokens(read_theme(data_dir), state, QGuiApplication.palette())
        # On this window only: the main window's Appearance reads the desktop's palette from
        # the application, and sets the application's (ui.appearance).
        self.setPalette(palette_for(self.tokens))
        self._use_fusion_if_needed()
        self.resize(1100, 760)
        for title in MENU_TITLES:
            self.menuBar().addMenu(title)
        self.sidebar = self._sidebar()
        self.listing = read_listing(data_dir)
        self.titles.set_listing(self.listing, datetime.now().astimezone())
        if self.listing:  # the main window opens the first one listed
            self.titles.set_current(self.listing[0].id)
        else:
            self.empty.show()
        self.surface = _Surface(self)
        self.edit = QPlainTextEdit()
        self.edit.setObjectName("startComposer")
        self.edit.setAccessibleName("Message")
        self.edit.setPlaceholderText(PLACEHOLDER)
        if state.zoom != 1.0:  # the main window's composer has the zoomed font
            self.edit.setFont(scaled_font(QApplication.font(), state.zoom))
        lines = self.edit.fontMetrics().lineSpacing() * 2
        self.edit.setFixedHeight(lines + 2 * (self.edit.frameWidth() + SPACE[0]))
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(SPACE[0])
        column.addWidget(self._header())
        column.addWidget(self.surface, 1)
        column.addLayout(self._composer())
        self.splitter = QSplitter()
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([SIDEBAR_WIDTH, 840])
        self.sidebar.setMinimumWidth(1)
        self.setCentralWidget(self.splitter)
        self.statusBar().showMessage(OPENING)
        self._restore(state)
        self.edit.setFocus()
        #: The person closed this window before the main one was ready: the start ends there.
        self.dismissed = False
        self._handing_over = False
        self._painted: asyncio.Future[None] | None = None
        self.was_painted = False

    # --- the parts, placed as ui.sidebar.Sidebar, ui.header.HeaderBar, ui.composer place theirs

    def _sidebar(self) -> QWidget:
        sidebar = QWidget()
        sidebar.setObjectName("startSidebar")
        new = QPushButton("New conversation")
        self.search = QLineEdit()
        self.search.setObjectName("startSearch")
        self.search.setAccessibleName("Search conversations")
        self.search.setPlaceholderText("Search conversations")
        self.search.setClearButtonEnabled(True)
        self.empty = QLabel(NO_CONVERSATIONS)
        self.empty.setWordWrap(True)
        self.empty.setContentsMargins(SPACE[2], SPACE[1], SPACE[1], SPACE[1])
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # muted, as there
        self.empty.hide()
        self.titles = TitleList()
        layout = QVBoxLayout(sidebar)
        layout.setContentsMargins(SPACE[1], SPACE[1], 0, SPACE[1])
        layout.setSpacing(SPACE[1])
        layout.addWidget(new)
        layout.addWidget(self.search)
        layout.addWidget(self.empty)
        layout.addWidget(self.titles, 1)
        return sidebar

    def _header(self) -> QWidget:
        header = QWidget()
        button = QToolButton()
        button.setText("☰")
        button.setAutoRaise(True)
        button.setAccessibleName("Show or hide the conversation list")
        row = QHBoxLayout(header)
        row.setContentsMargins(SPACE[1], SPACE[1] - 2, SPACE[1], 0)
        row.setSpacing(SPACE[1])
        row.addWidget(button)
        row.addStretch(1)
        return header

    def _composer(self) -> QHBoxLayout:
        send = QPushButton("Send")
        send.setEnabled(False)  # nothing can be sent before the core is loaded
        foot = QVBoxLayout()  # Send at the editor's foot
        foot.setContentsMargins(0, 0, 0, 0)
        foot.addStretch(1)
        foot.addWidget(send)
        composer = QHBoxLayout()  # as the composer: [paper clip] editor [Send]
        composer.setContentsMargins(SPACE[1], SPACE[0], SPACE[1], SPACE[1])
        composer.addSpacing(QToolButton().sizeHint().width() + composer.spacing())
        composer.addWidget(self.edit, 1)
        composer.addLayout(foot)
        return composer

    def _use_fusion_if_needed(self) -> None:
        """As :class:`ui.appearance.Appearance`: where the platform style ignores palettes, the
        themes need Fusion (asked only there: the style's enums cost a few milliseconds)."""
        if not _NATIVE_STYLE_PLATFORM:
            return
        app = QApplication.instance()
        style = app.style() if isinstance(app, QApplication) else None
        if isinstance(app, QApplication) and style is not None and needs_fusion(style.name()):
            app.setStyle("Fusion")

    # --- the start ---------------------------------------------------------------------------

    def surface_painted(self) -> None:
        self.was_painted = True
        if self._painted is not None and not self._painted.done():
            self._painted.set_result(None)

    async def painted(self) -> None:
        """Wait until the window has been painted once (at most :data:`PAINT_WAIT` seconds: a window
        that is minimized or covered may never paint, and the start must go on)."""
        import asyncio  # here, not at the top: the window is shown before asyncio is loaded

        if self.was_painted:
            return
        self._painted = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._painted), PAINT_WAIT)
        except TimeoutError:
            log.info("start window: not painted within %.1f s", PAINT_WAIT)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._handing_over:
            event.accept()
            return
        # Closed while the core loads: hidden, not closed (closing the last window would stop
        # the event loop under the start); ui.main then ends the start cleanly.
        event.ignore()
        self.dismissed = True
        self.hide()

    def _restore(self, state: WindowState) -> None:
        if state.geometry and self.restoreGeometry(QByteArray(state.geometry)):
            keep_on_screen(self)
        if state.splitter:
            self.splitter.restoreState(QByteArray(state.splitter))
        if not state.sidebar or self.width() < NARROW_WIDTH:
            self.sidebar.hide()

    def set_icon(self) -> None:
        """The window's icon, once it is on screen (loading the SVG costs ~4-5 ms)."""
        from PySide6.QtGui import QIcon

        icon = RESOURCES / "icons" / "continuum.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))

    def activate(self) -> None:
        """A second launch during the start brings this window forward (closed meanwhile: it
        opens again, and the start goes on)."""
        self.dismissed = False
        self.show()
        self.raise_()
        self.activateWindow()

    def hand_over(self, window: MainWindow) -> None:
        """Put ``window`` where this one is, with what the person typed here; close this one."""
        QApplication.processEvents()  # keys still queued for this window land in it first
        # Moved or resized while starting; a maximized or full-screen state carries over too.
        window.setGeometry(self.geometry())
        window.setWindowState(self.windowState())
        typed = self.edit.toPlainText()
        if typed and not window.composer.edit.toPlainText():
            window.composer.edit.setPlainText(typed)
            cursor = window.composer.edit.textCursor()
            # The same text, so the same position (in UTF-16 units, not len(typed)'s).
            last = window.composer.edit.document().characterCount() - 1
            cursor.setPosition(min(self.edit.textCursor().position(), last))
            window.composer.edit.setTextCursor(cursor)
        if not window.sidebar.session_ids():  # listed from its first frame, until start() lists
            window.sidebar.set_sessions(self.listing, set())
        searched = self.search.text()
        if searched and not window.sidebar.search.text():
            window.sidebar.search.setText(searched)
            window.sidebar.search.setFocus()
        window.show()
        window.activateWindow()
        self._handing_over = True
        self.close()
