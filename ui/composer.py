"""The composer: where the person types. Enter sends, Shift+Enter breaks the line, Esc stops.

The Send button becomes Stop while a request runs (two buttons with fixed object names, one
visible at a time, so tests and screen readers always find the same names).
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["LARGE_PASTE_CHARS", "Composer", "ComposerEdit"]

# Qt lays out a text edit's paragraphs eagerly; a multi-megabyte paste (often one huge line)
# would freeze the window for minutes. Such a paste is kept aside as an attachment instead.
LARGE_PASTE_CHARS = 100_000


class ComposerEdit(QPlainTextEdit):
    submitted = Signal()
    stopRequested = Signal()
    largePaste = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.setAccessibleName("composer")
        self.setPlaceholderText("Message the model — Enter to send, Shift+Enter for a new line")
        self.setTabChangesFocus(True)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                self.submitted.emit()
                return
        if key == Qt.Key.Key_Escape:
            self.stopRequested.emit()
            return
        super().keyPressEvent(event)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if source.hasText():
            text = source.text()
            if len(text) > LARGE_PASTE_CHARS:
                self.largePaste.emit(text)
                return
        super().insertFromMimeData(source)

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        return QSize(400, metrics.lineSpacing() * 4 + 12)


class Composer(QWidget):
    sendRequested = Signal(str)
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = ComposerEdit()
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleName("sendButton")
        self.send_button.setToolTip("Send (Enter)")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName("stopButton")
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.hide()
        self.attachment = QLabel()
        self.attachment.setObjectName("pastedTextLabel")
        self.attachment.setTextFormat(Qt.TextFormat.PlainText)
        self.attachment.hide()
        self.remove_attachment = QPushButton("Remove")
        self.remove_attachment.setObjectName("removePastedTextButton")
        self.remove_attachment.hide()
        self.remove_attachment.clicked.connect(self.drop_attachment)
        attachment_row = QHBoxLayout()
        attachment_row.addWidget(self.attachment, 1)
        attachment_row.addWidget(self.remove_attachment)
        editor = QVBoxLayout()
        editor.setContentsMargins(0, 0, 0, 0)
        editor.addLayout(attachment_row)
        editor.addWidget(self.edit)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 8)
        layout.addLayout(editor, 1)
        layout.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        self.edit.setMaximumHeight(self.edit.fontMetrics().lineSpacing() * 10 + 12)
        self.edit.submitted.connect(self._submit)
        self.edit.stopRequested.connect(self.stopRequested)
        self.edit.largePaste.connect(self.attach)
        self.pasted: str | None = None
        self.send_button.clicked.connect(self._submit)
        self.stop_button.clicked.connect(self.stopRequested)
        self._busy = False

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.send_button.setVisible(not busy)
        self.stop_button.setVisible(busy)

    def _submit(self) -> None:
        if self._busy:
            return  # Enter while an answer streams does not queue or lose the text
        text = self.edit.toPlainText()
        if self.pasted is not None:
            text = f"{text}\n\n{self.pasted}" if text.strip() else self.pasted
        if not text.strip():
            return
        self.sendRequested.emit(text)

    def attach(self, text: str) -> None:
        """Keep a very large paste beside the editor; it is sent with the next message."""
        self.pasted = text
        lines = text.count("\n") + 1
        self.attachment.setText(
            f"📎 Pasted text: {len(text):,} characters, {lines:,} lines — sent with your message"
        )
        self.attachment.show()
        self.remove_attachment.show()

    def drop_attachment(self) -> None:
        self.pasted = None
        self.attachment.hide()
        self.remove_attachment.hide()

    def clear_text(self) -> None:
        self.edit.clear()
        self.drop_attachment()
