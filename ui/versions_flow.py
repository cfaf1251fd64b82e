"""Edit, Regenerate and the version arrows in the window: the person's side of branches.

Edit puts the message's text in the composer with a strip above it ("Editing your message");
Enter sends it as a new version (the old one and everything after it stay, reachable with the
arrows), Esc or Cancel gives the composer back what it held before. Regenerate answers the
question again (also "with another model" from a row's menu). The arrows ``‹ 2 / 3 ›`` switch
the branch shown. The conversation's controller runs each of them; while an answer runs or the
conversation is read-only here, none is offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRectF, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPen, QTextCursor
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMenu, QPushButton, QWidget

from app.services import FilePart, ImagePart

from .theme import SPACE, tokens_for
from .transcript.model import ItemKind, TranscriptItem

if TYPE_CHECKING:
    from .window import MainWindow

__all__ = ["EDIT_STRIP_TEXT", "EditStrip", "VersionFlow", "last_of"]

EDIT_STRIP_TEXT = "Editing your message — Enter sends it as a new version; the old one is kept."


class EditStrip(QFrame):
    """The strip over the composer while a sent message is being edited (a card in the
    person's bubble colour, with an accent bar on its left)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editStrip")
        self.setAccessibleName("Editing a sent message")
        self.label = QLabel(EDIT_STRIP_TEXT)
        self.label.setObjectName("editStripLabel")
        self.label.setWordWrap(True)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("cancelEditButton")
        self.cancel.setAccessibleName("Cancel editing")
        self.cancel.setToolTip("Stop editing and keep the message as it was (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE[3], SPACE[1], SPACE[1], SPACE[1])
        layout.addWidget(self.label, 1)
        layout.addWidget(self.cancel, 0, Qt.AlignmentFlag.AlignVCenter)
        self.hide()

    def paintEvent(self, event: QPaintEvent) -> None:
        tokens = tokens_for(self.palette())
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(tokens.color("border"), 1))
        painter.setBrush(tokens.color("user_bubble"))
        box = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.drawRoundedRect(box, 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(tokens.color("accent"))
        painter.drawRoundedRect(
            QRectF(box.left() + 4, box.top() + 6, 3, box.height() - 12), 1.5, 1.5
        )
        painter.end()


def last_of(items: list[TranscriptItem], kind: ItemKind) -> TranscriptItem | None:
    """The newest saved row of ``kind`` (what "Edit last message" / "Regenerate" act on)."""
    for item in reversed(items):
        if item.kind is kind and item.seq is not None:
            return item
    return None


class VersionFlow(QObject):
    """Edit, Regenerate and the version arrows of one window (see the module docstring)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.strip = window.edit_strip
        #: The seq of the message being edited (``None``: not editing).
        self.editing: int | None = None
        self._stash = ""  # what the composer held before the edit began
        self._stash_parts: list[ImagePart | FilePart] = []  # and its attachments
        actions = window.transcript.delegate.actions
        actions.editRequested.connect(self.begin_edit)
        actions.regenerateRequested.connect(lambda seq: self.regenerate(seq))
        actions.versionRequested.connect(self.show_version)
        window.transcript.rowMenu.connect(self._add_to_menu)
        window.composer.stopRequested.connect(self._escape)
        self.strip.cancel.clicked.connect(self.cancel)
        controller = window.controller
        controller.busyChanged.connect(lambda _busy: self._offer())
        controller.sessionChanged.connect(self._session_changed)
        controller.branchShown.connect(window.transcript.follow)

    # --- editing ---------------------------------------------------------------------------

    def begin_edit(self, seq: int, text: str) -> None:
        """Put message ``seq``'s text in the composer to send as a new version."""
        controller = self.window.controller
        if controller.busy or controller.read_only:
            self.window.statusBar().showMessage(
                "Wait for the answer to finish (or stop it) to edit a message.", 6000
            )
            return
        composer = self.window.composer
        edit = composer.edit
        if self.editing is None:
            self._stash = edit.toPlainText()
            self._stash_parts = composer.tray.parts()
        self.editing = seq
        edit.setPlainText(text)
        item = next((i for i in self.window.transcript_model.items() if i.seq == seq), None)
        composer.tray.clear()  # the message's own images and files come along (removable)
        composer.tray.add(item.attachments if item is not None else ())
        edit.moveCursor(QTextCursor.MoveOperation.End)
        self.strip.show()
        edit.setFocus()

    def cancel(self) -> None:
        """Stop editing; the composer gets back what it held before."""
        if self.editing is None:
            return
        self.editing = None
        self.strip.hide()
        self._restore()
        self.window.composer.edit.setFocus()

    def _restore(self) -> None:
        """The composer gets back the text and attachments it held before the edit."""
        composer = self.window.composer
        composer.edit.setPlainText(self._stash)
        composer.tray.clear()
        composer.tray.add(self._stash_parts)
        self._stash = ""
        self._stash_parts = []

    def send(self, text: str, parts: Sequence[ImagePart | FilePart] = ()) -> bool:
        """Send ``text`` and ``parts`` as the edit, when editing; ``False`` when not editing
        (a plain send)."""
        seq = self.editing
        if seq is None:
            return False
        if self.window.controller.edit(seq, text, parts):
            self.editing = None
            self.strip.hide()
            self._restore()
            self.window.transcript.follow()
        return True

    def edit_last(self) -> None:
        item = last_of(self.window.transcript_model.items(), ItemKind.USER)
        if item is not None and item.seq is not None:
            self.begin_edit(item.seq, item.text)

    def _escape(self) -> None:
        if self.editing is not None and not self.window.controller.busy:
            self.cancel()

    # --- answers and versions --------------------------------------------------------------

    def regenerate(self, seq: int, model_name: str | None = None) -> None:
        if self.window.controller.regenerate(seq, model_name):
            self.window.transcript.follow()

    def regenerate_last(self) -> None:
        item = last_of(self.window.transcript_model.items(), ItemKind.ASSISTANT)
        if item is not None and item.seq is not None:
            self.regenerate(item.seq)

    def show_version(self, seq: int) -> None:
        controller = self.window.controller
        controller.spawn(controller.select_version(seq))

    def _add_to_menu(self, menu: QMenu, item: TranscriptItem) -> None:
        """A row's right-click menu gains Edit, or Regenerate and Regenerate with ▸ models."""
        controller = self.window.controller
        if item.seq is None or controller.busy or controller.read_only:
            return
        seq = item.seq
        menu.addSeparator()
        if item.kind is ItemKind.USER:
            edit = menu.addAction("Edit…")
            edit.setObjectName("editMessage")
            edit.triggered.connect(lambda: self.begin_edit(seq, item.text))
            return
        if item.kind is not ItemKind.ASSISTANT:
            return
        again = menu.addAction("Regenerate")
        again.setObjectName("regenerateMessage")
        again.triggered.connect(lambda: self.regenerate(seq))
        models = [m for m in self.window.services.settings.recent_models if m]
        if models:
            other = menu.addMenu("Regenerate with")
            other.setObjectName("regenerateWithMenu")
            for name in models[:10]:
                action = other.addAction(name)
                action.triggered.connect(lambda _=False, n=name: self.regenerate(seq, n))

    def _offer(self) -> None:
        """Edit and Regenerate are offered only when they can run."""
        controller = self.window.controller
        actions = self.window.transcript.delegate.actions
        can = not controller.read_only
        if actions.can_branch != can:
            actions.can_branch = can
            self.window.transcript.viewport().update()

    def _session_changed(self, _session_id: object) -> None:
        if self.editing is not None:
            self.cancel()
        self._offer()
