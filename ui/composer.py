"""The composer: where the person types. Enter sends, Shift+Enter breaks the line, Esc stops.

The editor grows with its text from :data:`MIN_LINES` lines up to :data:`MAX_FRACTION` of the
window's height (:func:`fit_height`), then scrolls; it shrinks back when the text goes (after
sending). The Send button becomes Stop while a request runs (two buttons with fixed object
names, one visible at a time, so tests and screen readers always find the same names).

Attachments: the paper clip (``choose_files``, a file dialog unless a test sets it), a drop
of files or an image, or pasting an image add chips above the text (:mod:`ui.attachments`);
they are sent with the message and stay when sending is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QMimeData, QObject, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QIcon,
    QKeyEvent,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.services import FilePart, ImagePart

from .attachments import AttachmentTray, carries_attachments
from .theme import SPACE

__all__ = [
    "LARGE_PASTE_CHARS",
    "MAX_FRACTION",
    "MIN_LINES",
    "Composer",
    "ComposerEdit",
    "fit_height",
]

# Qt lays out a text edit's paragraphs eagerly; a multi-megabyte paste (often one huge line)
# would freeze the window for minutes. Such a paste is kept aside as an attachment instead.
LARGE_PASTE_CHARS = 100_000
#: The empty editor's height in lines, and the share of the window it may grow to.
MIN_LINES = 2
MAX_FRACTION = 0.4


def fit_height(
    lines: float, line_height: int, chrome: int, window_height: int | None
) -> tuple[int, bool]:
    """The editor's height for ``lines`` laid-out lines of ``line_height`` px plus ``chrome`` px
    of frame and margins, in a window ``window_height`` px tall (``None``: no window to fit):
    at least :data:`MIN_LINES` lines, at most :data:`MAX_FRACTION` of the window (never below
    the minimum). Also whether the text is taller than that (the editor then scrolls)."""
    low = MIN_LINES * line_height + chrome
    wanted = round(max(lines, MIN_LINES) * line_height) + chrome
    if window_height is None:
        return wanted, False
    high = max(low, int(window_height * MAX_FRACTION))
    return min(wanted, high), wanted > high


class ComposerEdit(QPlainTextEdit):
    submitted = Signal()
    stopRequested = Signal()
    largePaste = Signal(str)
    attachmentsDropped = Signal(object)  # QMimeData holding files or an image (drop, paste)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.setAccessibleName("Message the model")
        self.setAccessibleDescription("Enter sends, Shift+Enter starts a new line, Esc stops")
        self.setPlaceholderText("Message the model — Enter to send, Shift+Enter for a new line")
        self.setTabChangesFocus(True)
        self.setSizePolicy(self.sizePolicy().horizontalPolicy(), QSizePolicy.Policy.Fixed)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._window: QWidget | None = None  # whose height caps the editor's
        layout = self.document().documentLayout()
        layout.documentSizeChanged.connect(lambda _size: self.fit())
        self.fit()

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

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return carries_attachments(source) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if carries_attachments(source):  # files or an image: attached, not pasted as text
            self.attachmentsDropped.emit(source)
            return
        if source.hasText():
            text = source.text()
            if len(text) > LARGE_PASTE_CHARS:
                self.largePaste.emit(text)
                return
        super().insertFromMimeData(source)

    def sizeHint(self) -> QSize:
        return QSize(400, self.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), self.height())

    def fit(self) -> None:
        """Take the height the text needs (see :func:`fit_height`); scroll only past the cap.
        (A plain-text document's size is counted in laid-out lines, wrapping included.)"""
        lines = self.document().documentLayout().documentSize().height()
        margins = self.contentsMargins()
        # The frame, the document's margin above and below, and the pixel Qt's scroll range
        # keeps spare (it scrolls once the lines exceed the viewport less a margin and 1 px).
        margin = round(self.document().documentMargin())
        chrome = margins.top() + margins.bottom() + 2 * margin + 1
        window = self._window.height() if self._window is not None else None
        height, scrolls = fit_height(lines, self.fontMetrics().lineSpacing(), chrome, window)
        policy = (
            Qt.ScrollBarPolicy.ScrollBarAsNeeded
            if scrolls
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        self.setVerticalScrollBarPolicy(policy)
        if height != self.height() or self.minimumHeight() != height:
            self.setFixedHeight(height)
        if scrolls:
            self.ensureCursorVisible()

    def showEvent(self, event: QShowEvent) -> None:
        window: QWidget | None = self.window()
        if window is self or window is self.parentWidget():
            window = None  # the composer is the window: its height follows ours, no cap
        if window is not self._window:  # follow the window's height (it caps the editor's)
            if self._window is not None:
                self._window.removeEventFilter(self)
            self._window = window
            if window is not None:
                window.installEventFilter(self)
        super().showEvent(event)
        self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() == QEvent.Type.Resize:
            self.fit()
        return super().eventFilter(watched, event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # View → Zoom: the same lines, taller
            self.fit()


def paperclip_icon(colour: QColor, size: int = 20) -> QIcon:
    """The paper clip of the attach button, drawn as a line icon in ``colour`` (no emoji
    font needed; redrawn when the theme changes)."""
    pixmap = QPixmap(size * 2, size * 2)  # drawn at twice the size: sharp on HiDPI screens
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.scale(size / 20, size / 20)
    painter.translate(10, 10)
    painter.rotate(40)
    painter.translate(-10, -10)
    pen = QPen(colour, 1.5)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    path = QPainterPath(QPointF(11, 7))  # the inner stroke, down, round, up, round, down
    path.lineTo(11, 15)
    path.arcTo(QRectF(8, 13.5, 3, 3), 0, -180)
    path.lineTo(8, 5)
    path.arcTo(QRectF(8, 2.5, 5, 5), 180, -180)
    path.lineTo(13, 16)
    path.arcTo(QRectF(6, 12.5, 7, 7), 0, -180)
    path.lineTo(6, 8)
    painter.drawPath(path)
    painter.end()
    return QIcon(pixmap)


class Composer(QWidget):
    sendRequested = Signal(str)
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = ComposerEdit()
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleName("Send message")
        self.send_button.setToolTip("Send (Enter)")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName("Stop answering")
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.hide()
        self.attach_button = QToolButton()
        self.attach_button.setAutoRaise(True)
        self.attach_button.setIconSize(QSize(20, 20))
        self.attach_button.setIcon(paperclip_icon(self.palette().color(QPalette.ColorRole.Text)))
        self.attach_button.setObjectName("attachButton")
        self.attach_button.setAccessibleName("Attach files")
        self.attach_button.setToolTip(
            "Attach images (PNG, JPEG, GIF, WebP), text or code files, or PDFs — or drop or "
            "paste them"
        )
        self.attach_button.clicked.connect(self.choose_attachments)
        #: Asks which files to attach (a file dialog; tests put their own answer here).
        self.choose_files: Callable[[], list[str]] = self._ask_for_files
        self.tray = AttachmentTray()
        self.edit.attachmentsDropped.connect(self.tray.add_mime)
        self.attachment = QLabel()
        self.attachment.setObjectName("pastedTextLabel")
        self.attachment.setTextFormat(Qt.TextFormat.PlainText)
        self.attachment.hide()
        self.remove_attachment = QPushButton("Remove")
        self.remove_attachment.setObjectName("removePastedTextButton")
        self.remove_attachment.setAccessibleName("Remove the pasted text")
        self.remove_attachment.hide()
        self.remove_attachment.clicked.connect(self.drop_attachment)
        attachment_row = QHBoxLayout()
        attachment_row.addWidget(self.attachment, 1)
        attachment_row.addWidget(self.remove_attachment)
        editor = QVBoxLayout()
        editor.setContentsMargins(0, 0, 0, 0)
        editor.addWidget(self.tray)
        editor.addLayout(attachment_row)
        editor.addWidget(self.edit)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE[1], SPACE[0], SPACE[1], SPACE[1])
        layout.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addLayout(editor, 1)
        layout.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
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
        if not text.strip() and not self.tray.chips:
            return
        self.sendRequested.emit(text)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # light/dark: the icon follows
            colour = self.palette().color(QPalette.ColorRole.Text)
            self.attach_button.setIcon(paperclip_icon(colour))

    def attachments(self) -> list[ImagePart | FilePart]:
        """What is attached to the message being written (sent with it)."""
        return self.tray.parts()

    def choose_attachments(self) -> None:
        """The paper clip: ask for files and attach them (refused ones say why)."""
        paths = self.choose_files()
        if paths:
            self.tray.add_paths(paths)
            self.edit.setFocus()

    def _ask_for_files(self) -> list[str]:
        paths, _filter = QFileDialog.getOpenFileNames(
            self,
            "Attach files",
            "",
            "Images, text and PDFs (*.png *.jpg *.jpeg *.gif *.webp *.txt *.md *.py *.json "
            "*.csv *.pdf *.*);;All files (*)",
        )
        return list(paths)

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
        if self.tray.chips:
            self.tray.clear()
