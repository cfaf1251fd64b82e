"""Pictures of the finished documents of rows: a repaint blits them instead of drawing glyphs.

Drawing a 3,000-character piece of an answer costs ~2 ms (its glyphs one by one); blitting a
picture of it ~0.15 ms. A streaming answer repaints the whole viewport on every frame (the view
scrolls as the answer grows), and so does every scroll step, so the finished pieces on screen
are kept as pictures: at most :data:`MAX_PIXELS` device pixels of them (the least recently
drawn go first); a document taller than :data:`MAX_HEIGHT` is drawn directly, as is one with a
text selection (the delegate decides that).

A picture is made at a document's second paint as it is, not its first: the frame in which a
piece of a streaming answer becomes final already draws the new tail, and making the picture
(the whole piece drawn into a pixmap) on top of that made it the slowest frame of a stream
(7.7 ms against 2.6 for the median); the first paint draws just what it shows, directly.

A picture shows one document as it is now. Its key holds the document's revision (a code
block's Copy link is relabelled in place), its width and height (a narrower window lays it out
again), the text colour and the device pixel ratio: any change draws it anew. Pictures have a
transparent background, so they sit on a bubble or a card as the text itself would.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QPainter,
    QPalette,
    QPixmap,
    QTextDocument,
)

__all__ = ["MAX_HEIGHT", "MAX_PIXELS", "DocPictures"]

#: Device pixels of pictures kept at once (~24 MB of 32-bit pixels: a few screens of text).
MAX_PIXELS = 6_000_000
#: A document taller than this (in device-independent pixels) is drawn directly.
MAX_HEIGHT = 3_000.0
#: Documents remembered as painted once (their picture is made at the next paint).
_SEEN = 512

_Key = tuple[int, float, float, int, float]


@dataclass(slots=True)
class _Picture:
    doc: QTextDocument  # kept, so its id cannot be reused while the picture exists
    key: _Key
    pixmap: QPixmap
    pixels: int


class DocPictures:
    """The pictures, by document (see the module docstring)."""

    def __init__(self, max_pixels: int = MAX_PIXELS) -> None:
        self.max_pixels = max_pixels
        self._pictures: OrderedDict[int, _Picture] = OrderedDict()
        self._pixels = 0
        # Documents painted once, by id: only their key is kept (not the document, which may be
        # gone); a reused id with the same key makes a picture one paint early, nothing worse.
        self._seen: OrderedDict[int, _Key] = OrderedDict()
        self.drawn = 0  # pictures made (tests read it)

    def __len__(self) -> int:
        return len(self._pictures)

    def clear(self) -> None:
        self._pictures.clear()
        self._seen.clear()
        self._pixels = 0

    def draw(
        self,
        painter: QPainter,
        doc: QTextDocument,
        origin: QPointF,
        clip: QRectF,
        palette: QPalette,
    ) -> bool:
        """Blit ``doc``'s picture at ``origin``, limited to ``clip`` (in the document's own
        coordinates), with ``palette``'s text colour; ``False``: draw it directly (too tall,
        or painted for the first time as it is: see the module docstring)."""
        size = doc.size()
        if size.height() > MAX_HEIGHT or size.isEmpty():
            return False
        device = painter.device()
        ratio = device.devicePixelRatioF() if device is not None else 1.0
        colour: QColor = palette.color(QPalette.ColorRole.Text)
        key: _Key = (doc.revision(), doc.textWidth(), size.height(), colour.rgba(), ratio)
        picture = self._pictures.get(id(doc))
        if picture is None or picture.doc is not doc or picture.key != key:
            if self._first_sight(doc, key):
                return False
            picture = self._make(doc, key, size.width(), size.height(), ratio, palette)
        else:
            self._pictures.move_to_end(id(doc))
        painter.save()
        painter.setClipRect(clip.translated(origin))
        painter.drawPixmap(origin, picture.pixmap)
        painter.restore()
        return True

    def _first_sight(self, doc: QTextDocument, key: _Key) -> bool:
        """Whether ``doc`` is painted for the first time as ``key`` says (remembered, then)."""
        if self._seen.pop(id(doc), None) == key:
            return False
        self._seen[id(doc)] = key
        while len(self._seen) > _SEEN:
            self._seen.popitem(last=False)
        return True

    def _make(
        self,
        doc: QTextDocument,
        key: _Key,
        width: float,
        height: float,
        ratio: float,
        palette: QPalette,
    ) -> _Picture:
        old = self._pictures.pop(id(doc), None)
        if old is not None:
            self._pixels -= old.pixels
        pixmap = QPixmap(math.ceil(width * ratio), math.ceil(height * ratio))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(QColor(0, 0, 0, 0))
        painter = QPainter(pixmap)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette = palette
        doc.documentLayout().draw(painter, context)
        painter.end()
        picture = _Picture(doc, key, pixmap, pixmap.width() * pixmap.height())
        self._pictures[id(doc)] = picture
        self._pixels += picture.pixels
        self.drawn += 1
        while self._pixels > self.max_pixels and len(self._pictures) > 1:
            _id, oldest = self._pictures.popitem(last=False)
            self._pixels -= oldest.pixels
        return picture
