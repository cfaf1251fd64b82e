"""What the Edit, View → Zoom and Help menus and File → Import do.

Edit's actions act on the focused widget (the composer, the search field, the transcript, a
dialog's field): :func:`edit_focused` calls the widget's own ``undo``/``copy``/… slot, so each
behaves as its own keys do. Zooming scales the transcript's and the composer's fonts in
:data:`ui.window_state.ZOOM_STEPS`. Help shows the keyboard shortcuts (from the menu table plus
the keys that live outside the menus), About, and opens the data and log folders. File →
Import asks for a file (:func:`choose_import_file`, replaceable for tests), imports it through
``AppServices.import_file``, refreshes the sidebar, opens the first imported conversation and
says in a message box what was imported and what was not (:func:`import_report_box`).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHeaderView,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import __version__
from app.services import ImportFormatError, ImportReport

from .actions import shortcut_rows

if TYPE_CHECKING:
    from .window import MainWindow

__all__ = [
    "EDIT_OPERATIONS",
    "WindowCommands",
    "OTHER_SHORTCUTS",
    "about_text",
    "choose_import_file",
    "edit_focused",
    "import_report_box",
    "open_folder",
    "show_about",
    "show_shortcuts",
]

#: Edit menu action → the slot a focused widget offers for it.
EDIT_OPERATIONS = {
    "undoAction": "undo",
    "redoAction": "redo",
    "cutAction": "cut",
    "copyAction": "copy",
    "pasteAction": "paste",
    "selectAllAction": "selectAll",
}

#: Keys that are not on a menu: (where, what, keys).
OTHER_SHORTCUTS: tuple[tuple[str, str, str], ...] = (
    ("Composer", "Send the message", "Enter"),
    ("Composer", "New line", "Shift+Enter"),
    ("Tool approval", "Allow once", "Ctrl+Shift+A"),
    ("Tool approval", "Deny", "Ctrl+Shift+D"),
    ("Conversation", "Select text", "Shift+arrows, Shift+Home/End"),
    ("Conversation", "Select the whole message", "Ctrl+A"),
    ("Conversation", "Menu of the message", "Shift+F10 or the Menu key"),
    ("Conversation", "Scroll a page / to the start or end", "PgUp, PgDn, Home, End"),
    ("Conversation", "Open a tool card or reasoning", "Space or Enter"),
    ("Sidebar", "Open the conversation above or below", "Up, Down"),
    ("Sidebar", "Rename / delete the conversation", "F2 / Delete"),
)


def edit_focused(action: str, focus: QWidget | None = None) -> bool:
    """Run Edit → ``action`` on ``focus`` (default: the focused widget); ``False``: it has no
    such slot (nothing happens, as in any desktop app)."""
    widget = focus if focus is not None else QApplication.focusWidget()
    name = EDIT_OPERATIONS[action]
    slot = getattr(widget, name, None) if widget is not None else None
    if not callable(slot):
        return False
    if name in ("cut", "paste", "undo", "redo") and getattr(widget, "isReadOnly", lambda: False)():
        return False
    slot()
    return True


def all_shortcut_rows() -> list[tuple[str, str, str]]:
    return [*shortcut_rows(), *OTHER_SHORTCUTS]


def show_shortcuts(parent: QWidget) -> QDialog:
    """Help → Keyboard Shortcuts: every key, where it works and what it does (non-modal)."""
    rows = all_shortcut_rows()
    dialog = QDialog(parent)
    dialog.setObjectName("shortcutsDialog")
    dialog.setWindowTitle("Keyboard Shortcuts — Continuum")
    table = QTableWidget(len(rows), 3, dialog)
    table.setObjectName("shortcutsTable")
    table.setAccessibleName("Keyboard shortcuts")
    table.setHorizontalHeaderLabels(["Where", "What", "Keys"])
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 10)
    table.setShowGrid(False)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    for number, row in enumerate(rows):
        for column, text in enumerate(row):
            table.setItem(number, column, QTableWidgetItem(text))
    header = table.horizontalHeader()
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    layout.addWidget(buttons)
    dialog.resize(620, 520)
    dialog.show()
    return dialog


def about_text(data_dir: Path, log_dir: Path) -> str:
    """About Continuum's words (rich text; the paths escaped)."""
    return (
        f"<h3>Continuum {html.escape(__version__)}</h3>"
        "<p>A desktop chat app where an interruption never costs you anything: every "
        "finished message is saved as it arrives, and Resume picks up where a request "
        "stopped — without running any tool twice.</p>"
        "<p>API keys are kept in your system's keyring, never in files.</p>"
        f"<p>Conversations: <code>{html.escape(str(data_dir))}</code><br>"
        f"Logs: <code>{html.escape(str(log_dir))}</code></p>"
    )


def show_about(parent: QWidget, data_dir: Path, log_dir: Path) -> QMessageBox:
    box = QMessageBox(parent)
    box.setObjectName("aboutBox")
    box.setWindowTitle("About Continuum")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(about_text(data_dir, log_dir))
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.show()
    return box


def open_folder(
    path: Path,
    opener: Callable[[QUrl], bool] = QDesktopServices.openUrl,
    *,
    say: Callable[[str], object] | None = None,
) -> bool:
    """Open ``path`` in the file manager (made first if missing); says why when it cannot."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        if say is not None:
            say(f"Could not open {path}: {err.strerror or err}. Check that the disk is there.")
        return False
    if opener(QUrl.fromLocalFile(str(path))):
        return True
    if say is not None:
        say(f"No file manager opened {path}; open it yourself (the path is in Help → About).")
    return False


def choose_import_file(parent: QWidget) -> Path | None:
    """File → Import's question: which file (``None``: the person cancelled)."""
    path, _ = QFileDialog.getOpenFileName(
        parent,
        "Import conversations",
        "",
        "Conversations (*.json *.zip);;All files (*)",
    )
    return Path(path) if path else None


def import_report_box(
    parent: QWidget, report: ImportReport | None, problem: str = ""
) -> QMessageBox:
    """What an import did (non-modal): the summary, and why anything was not imported; with no
    ``report``, why the file could not be imported (``problem``)."""
    box = QMessageBox(parent)
    box.setObjectName("importReportBox")
    box.setWindowTitle("Import conversations")
    box.setTextFormat(Qt.TextFormat.PlainText)
    if report is None:
        box.setIcon(QMessageBox.Icon.Warning)
        box.setText("Nothing was imported.")
        box.setInformativeText(problem)
    else:
        box.setIcon(QMessageBox.Icon.Information if report.imported else QMessageBox.Icon.Warning)
        box.setText(report.summary)
        box.setInformativeText(report.details)
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.show()
    return box


class WindowCommands:
    """The Conversation and Help menu entries that need the window's widgets."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        #: File → Import asks this for the file (tests give their own).
        self.choose_import: Callable[[QWidget], Path | None] = choose_import_file
        #: The last import's message box (tests read it).
        self.import_box: QMessageBox | None = None

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 8000)

    def resume(self) -> None:
        """Conversation → Resume: what the bar's Resume button does, when the bar offers it."""
        bar = self.window.resume_bar
        button = bar.resume_button
        if bar.isVisible() and button.isVisible() and button.isEnabled():
            button.click()
        else:
            self._say("Nothing to resume in this conversation.")

    def dismiss(self) -> None:
        """Conversation → Dismiss: what the bar's Dismiss button does, when it is shown."""
        bar = self.window.resume_bar
        if bar.isVisible() and bar.dismiss_button.isVisible():
            bar.dismiss_button.click()
        else:
            self._say("There is no Resume bar to dismiss.")

    def open_folder(self, path: Path) -> None:
        open_folder(path, self.window.open_url, say=self._say)

    def import_conversations(self) -> None:
        """File → Import conversations…: ask for a file, then import it (in the background)."""
        path = self.choose_import(self.window)
        if path is not None:
            self.window.controller.spawn(self.import_file(path))

    async def import_file(self, path: Path) -> ImportReport | None:
        """Import ``path``, show the new conversations (the first one opened unless an answer
        is running) and say what was imported; ``None``: the file could not be imported."""
        window = self.window
        self._say(f"Importing {path.name}…")
        try:
            report = await window.services.import_file(path)
        except ImportFormatError as err:
            self._say("Nothing was imported.")
            self.import_box = import_report_box(window, None, str(err))
            return None
        await window.refresh_sessions()
        window.upkeep.set_busy(window.controller.busy)  # many new messages: tidy when idle
        if report.imported and not window.controller.busy:
            await window.controller.open_session(report.imported[0].session_id)
        self._say(report.summary)
        self.import_box = import_report_box(window, report)
        return report
