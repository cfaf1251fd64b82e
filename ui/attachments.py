"""Attachments in the window: thumbnails, the composer's chips, drops and pastes, the viewer.

- :func:`thumbnail` decodes an image once per (digest, height) and keeps it (decoded small,
  straight from the bytes: painting never decodes a full image);
- :class:`AttachmentTray` holds the composer's attachments as removable chips (a thumbnail or
  a file's name and size) and says in words why a file was refused;
- :func:`parts_from_mime` turns a drop or a paste (files, an image on the clipboard) into
  parts; :class:`DropTarget` lets the whole window take a drop;
- :class:`ImageViewer` shows an image at full size (a thumbnail's click opens it).

Reading and checking files is the core's (``app.services.read_attachment``): this module only
shows what it answers.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QEvent,
    QIODevice,
    QMimeData,
    QObject,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QImage,
    QImageReader,
    QPixmap,
)
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.services import (
    AttachmentError,
    FilePart,
    ImagePart,
    pasted_image,
    read_attachment,
)

from .theme import SPACE

__all__ = [
    "CHIP_THUMB",
    "AttachmentChip",
    "AttachmentTray",
    "DropTarget",
    "ImageViewer",
    "describe_part",
    "parts_from_mime",
    "thumbnail",
]

log = logging.getLogger(__name__)

Part = ImagePart | FilePart
#: A chip's thumbnail height in the composer (px).
CHIP_THUMB = 48
#: Thumbnails kept decoded at once (least recently used go first).
_CACHE_SIZE = 256
_cache: OrderedDict[tuple[str, int], QImage] = OrderedDict()
#: How many images were decoded (tests prove painting does not decode again).
decode_count = 0


def thumbnail(part: ImagePart, height: int) -> QImage:
    """``part``'s image at most ``height`` px tall (device pixels), decoded once and cached.

    A null image when its bytes are not at hand or cannot be decoded.
    """
    global decode_count
    key = (part.digest, height)
    cached = _cache.get(key)
    if cached is not None:
        _cache.move_to_end(key)
        return cached
    image = QImage()
    if part.data is not None:
        buffer = QBuffer()
        buffer.setData(QByteArray(part.data))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        reader = QImageReader(buffer)
        size = reader.size()
        if size.isValid() and size.height() > height:
            # Decoded small straight away (JPEG decodes at a fraction of its size).
            width = max(1, round(size.width() * height / size.height()))
            reader.setScaledSize(QSize(width, height))
        image = reader.read()
        decode_count += 1
        if image.isNull():
            log.info("thumbnail of %s not decoded: %s", part.name, reader.errorString())
    _cache[key] = image
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return image


def describe_part(part: Part) -> str:
    """A chip's words: the name and, for an image, its size in pixels ("cat.png, 640×480")."""
    name = part.name or ("Image" if isinstance(part, ImagePart) else "File")
    if isinstance(part, ImagePart) and part.width and part.height:
        return f"{name}, {part.width}×{part.height}"
    if part.size is not None:
        return f"{name}, {_size_words(part.size)}"
    return name


def _size_words(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    return bytes(data.data())


def parts_from_mime(mime: QMimeData) -> tuple[list[Part], list[str]]:
    """The attachments in a drop or paste (local files, or an image), and what was refused."""
    parts: list[Part] = []
    problems: list[str] = []
    files = (
        [url.toLocalFile() for url in mime.urls() if url.isLocalFile()] if mime.hasUrls() else []
    )
    if files:
        for path in files:
            try:
                parts.append(read_attachment(path))
            except AttachmentError as err:
                problems.append(str(err))
        return parts, problems
    if mime.hasImage():
        image = mime.imageData()
        if isinstance(image, QPixmap):
            image = image.toImage()
        if isinstance(image, QImage) and not image.isNull():
            try:
                parts.append(pasted_image(_png_bytes(image)))
            except AttachmentError as err:
                problems.append(str(err))
    return parts, problems


def carries_attachments(mime: QMimeData) -> bool:
    """Whether a drop or paste holds files or an image (rather than text)."""
    if mime.hasUrls() and any(url.isLocalFile() for url in mime.urls()):
        return True
    return mime.hasImage()


class AttachmentChip(QFrame):
    """One attachment in the composer: its thumbnail or name, and a button that removes it."""

    removeRequested = Signal(object)

    def __init__(self, part: Part, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.part = part
        self.setObjectName("attachmentChip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        words = describe_part(part)
        self.setAccessibleName(f"Attachment {words}")
        self.setToolTip(words)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE[0], SPACE[0], SPACE[0], SPACE[0])
        layout.setSpacing(SPACE[0])
        self.preview = QLabel()
        self.preview.setObjectName("attachmentThumbnail")
        if isinstance(part, ImagePart):
            ratio = self.devicePixelRatioF() or 1.0
            image = thumbnail(part, round(CHIP_THUMB * ratio))
            if not image.isNull():
                pixmap = QPixmap.fromImage(image)
                pixmap.setDevicePixelRatio(ratio)
                self.preview.setPixmap(pixmap)
        else:
            self.preview.setText("📄")
        layout.addWidget(self.preview)
        self.label = QLabel(words)
        self.label.setObjectName("attachmentName")
        self.label.setMaximumWidth(180)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        if isinstance(part, ImagePart):
            self.label.hide()  # the thumbnail says it; the name is the tooltip
        layout.addWidget(self.label)
        self.remove = QToolButton()
        self.remove.setObjectName("removeAttachmentButton")
        self.remove.setText("✕")
        self.remove.setAccessibleName(f"Remove {part.name or 'the attachment'}")
        self.remove.setToolTip(f"Remove {part.name or 'the attachment'}")
        self.remove.clicked.connect(lambda: self.removeRequested.emit(self))
        layout.addWidget(self.remove, 0, Qt.AlignmentFlag.AlignTop)


class AttachmentTray(QWidget):
    """The composer's attachments above the text field (hidden while there are none)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentTray")
        self.chips: list[AttachmentChip] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, SPACE[0])
        outer.setSpacing(SPACE[0])
        self._row_widget = QWidget()
        self._row = QHBoxLayout(self._row_widget)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(SPACE[1])
        self._row.addStretch(1)
        self._scroll = QScrollArea()
        self._scroll.setWidget(self._row_widget)
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setFixedHeight(CHIP_THUMB + 2 * SPACE[0] + 8)
        self._scroll.hide()
        outer.addWidget(self._scroll)
        self.problem = QLabel()
        self.problem.setObjectName("attachmentProblem")
        self.problem.setWordWrap(True)
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.hide()
        outer.addWidget(self.problem)
        self.hide()

    def parts(self) -> list[Part]:
        return [chip.part for chip in self.chips]

    def add(self, parts: Sequence[Part], problems: Sequence[str] = ()) -> None:
        """Show ``parts`` (the same file twice is kept once) and what was refused."""
        have = {(chip.part.digest, chip.part.name) for chip in self.chips}
        for part in parts:
            if (part.digest, part.name) in have:
                continue
            have.add((part.digest, part.name))
            chip = AttachmentChip(part)
            chip.removeRequested.connect(self._remove)
            self.chips.append(chip)
            self._row.insertWidget(self._row.count() - 1, chip)
        self.show_problem("\n".join(problems))
        self._update()
        if parts:
            self.changed.emit()

    def add_paths(self, paths: Sequence[str]) -> None:
        parts: list[Part] = []
        problems: list[str] = []
        for path in paths:
            try:
                parts.append(read_attachment(path))
            except AttachmentError as err:
                problems.append(str(err))
        self.add(parts, problems)

    def add_mime(self, mime: QMimeData) -> bool:
        """Attach what a drop or paste holds; ``False``: it holds no files nor image."""
        if not carries_attachments(mime):
            return False
        parts, problems = parts_from_mime(mime)
        self.add(parts, problems)
        return True

    def show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.setVisible(bool(text))
        self._update()

    def clear(self) -> None:
        for chip in list(self.chips):
            self._drop(chip)
        self.show_problem("")
        self.changed.emit()

    def _remove(self, chip: AttachmentChip) -> None:
        self._drop(chip)
        self.show_problem("")
        self.changed.emit()

    def _drop(self, chip: AttachmentChip) -> None:
        self.chips.remove(chip)
        self._row.removeWidget(chip)
        chip.hide()
        chip.deleteLater()

    def _update(self) -> None:
        self._scroll.setVisible(bool(self.chips))
        self.setVisible(bool(self.chips) or self.problem.isVisible())


class DropTarget(QObject):
    """Lets ``widget`` (the window) take dropped files and images into the composer's tray."""

    def __init__(self, widget: QWidget, take: Callable[[QMimeData], bool]) -> None:
        super().__init__(widget)
        self._take = take
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(
            event, QDragEnterEvent | QDropEvent
        ):
            mime = event.mimeData()
            if mime is not None and carries_attachments(mime):
                event.acceptProposedAction()
                return True
        if kind == QEvent.Type.Drop and isinstance(event, QDropEvent):
            mime = event.mimeData()
            if mime is not None and self._take(mime):
                event.acceptProposedAction()
                return True
        return super().eventFilter(watched, event)


class ImageViewer(QDialog):
    """An image at full size (scaled down to fit the screen), closed by Esc."""

    def __init__(self, part: ImagePart, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("imageViewer")
        self.setWindowTitle(part.name or "Image")
        self.part = part
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE[1], SPACE[1], SPACE[1], SPACE[1])
        self.image_label = QLabel()
        self.image_label.setObjectName("imageViewerImage")
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image_label.setAccessibleName(part.name or "Image")
        image = QImage.fromData(part.data) if part.data is not None else QImage()
        if image.isNull():
            self.image_label.setText("This image cannot be shown (its bytes are missing).")
        else:
            screen = QGuiApplication.primaryScreen()
            room = screen.availableSize() * 0.85 if screen is not None else QSize(1200, 900)
            pixmap = QPixmap.fromImage(image)
            if pixmap.width() > room.width() or pixmap.height() > room.height():
                pixmap = pixmap.scaled(
                    room,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            self.image_label.setPixmap(pixmap)
        layout.addWidget(self.image_label)
        caption = QLabel(describe_part(part))
        caption.setObjectName("imageViewerCaption")
        caption.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(caption, 0, Qt.AlignmentFlag.AlignHCenter)
