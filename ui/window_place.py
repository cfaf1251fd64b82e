"""Where the window is and how big its text is: restored at start, saved at close.

:class:`WindowPlace` applies a :class:`ui.window_state.WindowState` to the main window (its
geometry, the splitter between the sidebar and the conversation, whether the person hid the
sidebar, the zoom of the transcript and composer) and reads it back when the window closes.
:func:`window_title` names the open conversation in the title bar.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget

from .theme import tokens_for
from .window_state import WindowState, load_state, save_state, zoom_step

if TYPE_CHECKING:
    from .window import MainWindow

__all__ = ["WindowPlace", "keep_on_screen", "scaled_font", "window_title"]

TITLE_CHARS = 60
#: Below this window width the sidebar folds away; above it, it comes back.
NARROW_WIDTH = 720
SIDEBAR_WIDTH = 260


def window_title(conversation: str) -> str:
    """ "<conversation> — Continuum", the title cut at :data:`TITLE_CHARS` characters."""
    words = " ".join(conversation.split())
    if not words:
        return "Continuum"
    if len(words) > TITLE_CHARS:
        words = words[: TITLE_CHARS - 1].rstrip() + "…"
    return f"{words} — Continuum"


def scaled_font(base: QFont, zoom: float) -> QFont:
    """``base`` at ``zoom`` times its size."""
    font = QFont(base)
    if base.pointSizeF() > 0:
        font.setPointSizeF(max(base.pointSizeF() * zoom, 4.0))
    elif base.pixelSize() > 0:
        font.setPixelSize(max(round(base.pixelSize() * zoom), 4))
    return font


def keep_on_screen(window: QWidget) -> None:
    """A window saved on a screen that is gone comes back on the primary one."""
    frame = window.frameGeometry()
    if any(s.availableGeometry().intersects(frame) for s in QGuiApplication.screens()):
        return
    screen = QGuiApplication.primaryScreen()
    if screen is not None:
        window.move(screen.availableGeometry().topLeft())


class WindowPlace:
    """The window's saved place and zoom (``window.json`` in the data folder)."""

    def __init__(self, window: MainWindow, data_dir: Path) -> None:
        self.window = window
        self.data_dir = data_dir
        self.state = WindowState()
        self.sidebar = True  # the person's choice (View → Sidebar, ☰)
        self.level = 1.0
        self.folded = False  # the sidebar folded by a narrow window (not by the person)
        self._base: QFont | None = None

    def show_sidebar(self, shown: bool) -> None:
        """Show or hide the sidebar as the person chose (kept for the next start)."""
        window = self.window
        window.sidebar.setVisible(shown)
        window.sidebar_action.setChecked(shown)
        self.folded = False
        self.sidebar = shown
        if shown and window.splitter.sizes()[0] < 120:
            width = window.splitter.width()
            window.splitter.setSizes([SIDEBAR_WIDTH, max(width - SIDEBAR_WIDTH, 1)])

    def fit_width(self, width: int) -> None:
        """A narrow window gives the conversation the whole width: the sidebar folds away and
        comes back when the window is wide again, unless the person hid it (☰ brings it)."""
        sidebar = self.window.sidebar
        # (isHidden, not isVisible: at start the window itself is not shown yet)
        if width < NARROW_WIDTH and not self.folded and not sidebar.isHidden():
            self.folded = True
            sidebar.hide()
            self.window.sidebar_action.setChecked(False)
        elif width >= NARROW_WIDTH and self.folded:
            self.show_sidebar(self.sidebar)

    def restore(self) -> None:
        """Apply the saved state (a missing or damaged file: the defaults)."""
        self.state = state = load_state(self.data_dir)
        window = self.window
        if state.geometry and window.restoreGeometry(QByteArray(state.geometry)):
            keep_on_screen(window)
        if state.splitter:
            window.splitter.restoreState(QByteArray(state.splitter))
        self.sidebar = state.sidebar
        if not state.sidebar:
            window.show_sidebar(False)
        self.fit_width(window.width())  # a window closed narrow starts with the sidebar folded
        self.set_zoom(state.zoom)

    def zoom(self, direction: int) -> None:
        """View → Zoom In (+1), Zoom Out (-1), Actual Size (0)."""
        self.set_zoom(zoom_step(self.level, direction))
        self.window.statusBar().showMessage(f"Zoom {round(self.level * 100)} %", 2000)

    def set_zoom(self, level: float) -> None:
        """The transcript's and the composer's text at ``level`` times the app's font."""
        self.level = level
        if self._base is None:
            self._base = QFont(QApplication.font())
        font = scaled_font(self._base, level)
        self.window.transcript.setFont(font)
        self.window.composer.edit.setFont(font)

    def save(self) -> None:
        window = self.window
        self.state = self.state._replace(
            geometry=bytes(window.saveGeometry().data()),
            splitter=bytes(window.splitter.saveState().data()),
            sidebar=self.sidebar,
            zoom=self.level,
            scheme=tokens_for(window.palette()).name,
        )
        save_state(self.data_dir, self.state)
