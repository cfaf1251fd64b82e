"""The window a start shows first, before the agent core is imported (phase one of two).

Phase one needs only Qt and the standard library, so the window is on screen about as soon as a
bare Qt window would be:

* the saved theme (``settings.json``'s ``theme``) and the saved place (``window.json``);
* the conversations' titles from one read-only query on the database
  (:func:`read_listing`), in the real :class:`ui.sidebar.Sidebar`;
* the header and an editor where the person can start typing, focused.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt
from PySide6.QtGui import QCloseEvent, QIcon, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .actions import MENUS
from .appearance import Appearance
from .header import HeaderBar
from .sidebar import Sidebar
from .theme import SPACE
from .window_place import NARROW_WIDTH, SIDEBAR_WIDTH, keep_on_screen
from .window_state import load_state

if TYPE_CHECKING:
    import asyncio

    from .window import MainWindow

__all__ = [
    "DATABASE_FILE",
    "LISTED",
    "SETTINGS_FILE",
    "Listed",
    "StartWindow",
    "read_listing",
    "read_theme",
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

_QUERY = (
    "SELECT id, title, created_at, updated_at, pinned_at FROM sessions "
    "ORDER BY pinned_at IS NULL, pinned_at DESC, updated_at DESC, id LIMIT ?"
)


@dataclass(frozen=True)
class Listed:
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


class StartWindow(QMainWindow):
    """Looks like the main window (menu bar, sidebar, header, composer) while the core loads."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir
        Appearance.of().apply(read_theme(data_dir))  # before anything is shown: no flash
        self.setObjectName("startWindow")
        self.setWindowTitle("Continuum")
        icon = RESOURCES / "icons" / "continuum.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        self.resize(1100, 760)
        for title, _entries in MENUS:  # the same titles, so nothing moves at the hand-over
            self.menuBar().addMenu(title)
        self.sidebar = Sidebar()
        self.listing = read_listing(data_dir)
        self.sidebar.set_sessions(self.listing, set())
        if self.listing:  # the main window opens the first one listed
            self.sidebar.set_current(self.listing[0].id)
        self.header = HeaderBar()
        self.header.set_ready(False)
        self.surface = QWidget()
        self.surface.setBackgroundRole(QPalette.ColorRole.Base)
        self.surface.setAutoFillBackground(True)
        self.edit = QPlainTextEdit()
        self.edit.setObjectName("startComposer")
        self.edit.setAccessibleName("Message")
        self.edit.setPlaceholderText(PLACEHOLDER)
        lines = self.edit.fontMetrics().lineSpacing() * 2
        self.edit.setFixedHeight(lines + 2 * (self.edit.frameWidth() + SPACE[0]))
        send = QPushButton("Send")
        send.setEnabled(False)  # nothing can be sent before the core is loaded
        composer = QHBoxLayout()  # as the composer: [paper clip] editor [Send]
        composer.setContentsMargins(SPACE[1], SPACE[0], SPACE[1], SPACE[1])
        composer.addSpacing(QToolButton().sizeHint().width() + composer.spacing())
        composer.addWidget(self.edit, 1)
        composer.addWidget(send, 0, Qt.AlignmentFlag.AlignBottom)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(SPACE[0])
        column.addWidget(self.header)
        column.addWidget(self.surface, 1)
        column.addLayout(composer)
        self.splitter = QSplitter()
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([SIDEBAR_WIDTH, 840])
        self.sidebar.setMinimumWidth(1)
        self.setCentralWidget(self.splitter)
        self.statusBar().showMessage(OPENING)
        self._restore()
        self.edit.setFocus()
        #: The person closed this window before the main one was ready: the start ends there.
        self.dismissed = False
        self._handing_over = False
        self._painted: asyncio.Future[None] | None = None
        self.was_painted = False
        self.surface.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.surface and event.type() == QEvent.Type.Paint:
            self.was_painted = True
            if self._painted is not None and not self._painted.done():
                self._painted.set_result(None)
        return super().eventFilter(watched, event)

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

    def _restore(self) -> None:
        state = load_state(self.data_dir)
        if state.geometry and self.restoreGeometry(QByteArray(state.geometry)):
            keep_on_screen(self)
        if state.splitter:
            self.splitter.restoreState(QByteArray(state.splitter))
        if not state.sidebar or self.width() < NARROW_WIDTH:
            self.sidebar.hide()

    def activate(self) -> None:
        """A second launch during the start brings this window forward."""
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
            cursor.setPosition(min(self.edit.textCursor().position(), len(typed)))
            window.composer.edit.setTextCursor(cursor)
        if not window.sidebar.session_ids():  # listed from its first frame, until start() lists
            window.sidebar.set_sessions(self.listing, set())
        searched = self.sidebar.search.text()
        if searched and not window.sidebar.search.text():
            window.sidebar.search.setText(searched)
            window.sidebar.search.setFocus()
        window.show()
        window.activateWindow()
        self._handing_over = True
        self.close()
