"""A sent message's attachments in the transcript: thumbnails and file chips in its bubble.

They are one more inert document of the row (:func:`attachments_html` and
:func:`add_thumbnails`, first in the bubble, above the text), so the layout, painting, hits
and selection that serve every document serve them too. Each image is an ``<img>`` of its
thumbnail (decoded once and cached by :func:`ui.attachments.thumbnail`, added to the document
as a resource: painting draws the small image, never decodes) inside an anchor
``continuum-attachment:<n>``; a file is its name (bold) and size inside one, the files on a
line under the images. Activating an image's anchor opens it (:func:`open_attachment`).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QWidget

from app.services import FilePart, ImagePart

from ..attachments import ImageViewer, describe_part, thumbnail

__all__ = [
    "ATTACHMENT_SCHEME",
    "THUMB_HEIGHT",
    "add_thumbnails",
    "attachment_index",
    "attachments_html",
    "estimate_height",
    "open_attachment",
]

ATTACHMENT_SCHEME = "continuum-attachment"
#: A thumbnail's height in a bubble (px); its width follows the image (at most twice that).
THUMB_HEIGHT = 120
#: Thumbnails are decoded at this multiple of their shown size (sharp on HiDPI screens).
_DENSITY = 2


def _thumb_url(part: ImagePart) -> str:
    return f"continuum-thumb:{part.digest}"


def _shown_size(part: ImagePart) -> tuple[int, int]:
    """The thumbnail's size in the bubble (logical px) from the image's own, when known."""
    if part.width and part.height:
        width = round(part.width * THUMB_HEIGHT / part.height)
        width = max(THUMB_HEIGHT // 2, min(width, 2 * THUMB_HEIGHT))
        return width, THUMB_HEIGHT
    return THUMB_HEIGHT, THUMB_HEIGHT


def attachments_html(parts: tuple[ImagePart | FilePart, ...]) -> str:
    """The document of a bubble's attachments ("": none): images, then file chips."""
    if not parts:
        return ""
    images: list[str] = []
    files: list[str] = []
    for number, part in enumerate(parts):
        words = html.escape(describe_part(part))
        link = f"{ATTACHMENT_SCHEME}:{number}"
        if isinstance(part, ImagePart):
            width, height = _shown_size(part)
            images.append(
                f'<a href="{link}"><img src="{_thumb_url(part)}" width="{width}" '
                f'height="{height}" alt="{words}" title="{words}"></a>'
            )
        else:
            name, _, rest = words.partition(", ")
            files.append(
                f'<a href="{link}" style="text-decoration: none;"><b>{name}</b></a>'
                + (f" · {rest}" if rest else "")
            )
    # Images sit on lines of their own height (the text's 150% line height would pad them).
    shown = f'<p style="line-height: 100%;">{"&nbsp;&nbsp;".join(images)}</p>' if images else ""
    if files:
        shown += "<p>" + "&nbsp;&nbsp;&nbsp;".join(files) + "</p>"
    return shown


def add_thumbnails(doc: QTextDocument, parts: tuple[ImagePart | FilePart, ...]) -> None:
    """Give ``doc`` the decoded thumbnails its ``<img>`` tags name (from the shared cache)."""
    for part in parts:
        if isinstance(part, ImagePart):
            image = thumbnail(part, THUMB_HEIGHT * _DENSITY)
            if not image.isNull():
                doc.addResource(
                    QTextDocument.ResourceType.ImageResource, QUrl(_thumb_url(part)), image
                )


def estimate_height(parts: tuple[ImagePart | FilePart, ...], line: float) -> float:
    """The attachments document's height before it is laid out (one line of thumbnails)."""
    if not parts:
        return 0.0
    images = any(isinstance(p, ImagePart) for p in parts)
    files = any(isinstance(p, FilePart) for p in parts)
    return (THUMB_HEIGHT + 12.0 if images else 0.0) + (line * 1.5 if files else 0.0)


def attachment_index(anchor: str) -> int | None:
    """The attachment an anchor names (``None``: not an attachment's anchor)."""
    prefix = f"{ATTACHMENT_SCHEME}:"
    if not anchor.startswith(prefix):
        return None
    try:
        return int(anchor[len(prefix) :])
    except ValueError:
        return None


def open_attachment(part: ImagePart | FilePart, parent: QWidget | None) -> ImageViewer | None:
    """Open an image in the viewer (a file chip opens nothing: its text went to the model)."""
    if not isinstance(part, ImagePart):
        return None
    viewer = ImageViewer(part, parent)
    viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    viewer.open()
    return viewer
