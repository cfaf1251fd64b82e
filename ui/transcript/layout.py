"""Where a transcript row's parts go: its card and the top-left corner of each of its documents.

One place answers for painting, sizes, anchor clicks and text selection, so they never disagree
about where a word is. Geometry only: nothing here paints or renders.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtGui import QTextDocument

from .model import ItemKind, TranscriptItem

__all__ = [
    "OUTER_X",
    "OUTER_Y",
    "PAD",
    "RowGeometry",
    "content_width",
    "doc_at",
    "row_geometry",
    "row_height",
]

OUTER_X, OUTER_Y, PAD = 10, 4, 10


def _pad(item: TranscriptItem) -> int:
    return 4 if item.kind is ItemKind.NOTE else PAD


def content_width(item: TranscriptItem, row_width: float) -> float:
    """The width the row's documents are laid out at, for a row ``row_width`` wide."""
    return float(row_width - 2 * OUTER_X - 2 * PAD)


def row_height(item: TranscriptItem, body: float) -> int:
    """The row's height when its documents together are ``body`` tall."""
    top = 0 if item.joined else OUTER_Y
    return int(body) + 2 * _pad(item) + top + OUTER_Y


@dataclass(frozen=True)
class RowGeometry:
    """A row laid out: the card behind it (``None``: no card) and where each document starts."""

    card: QRectF | None
    origins: tuple[QPointF, ...]  # one per document, in view coordinates
    sizes: tuple[tuple[float, float], ...]  # (width, height) per document


def row_geometry(item: TranscriptItem, docs: list[QTextDocument], rect: QRect) -> RowGeometry:
    """Lay out ``docs`` (a render's documents, in order) inside the row's ``rect``."""
    top = 0 if item.joined else OUTER_Y
    card = QRectF(rect.adjusted(OUTER_X, top, -OUTER_X, -OUTER_Y))
    if item.joined:
        card.adjust(0, -OUTER_Y - 2, 0, 0)  # reach up to the part it continues
    y = card.top() + _pad(item)
    left = card.left() + PAD
    origins: list[QPointF] = []
    sizes: list[tuple[float, float]] = []
    for doc in docs:
        height = doc.size().height()
        origins.append(QPointF(left, y))
        sizes.append((doc.textWidth(), height))
        y += height
    return RowGeometry(card, tuple(origins), tuple(sizes))


def doc_at(geometry: RowGeometry, x: float, y: float) -> tuple[int, QPointF] | None:
    """The document under view point (x, y) and the point in its coordinates; ``None``: none.

    A point left or right of a document (but level with it) still belongs to it, as in a
    browser, so a drag can start in the margin.
    """
    pairs = zip(geometry.origins, geometry.sizes, strict=True)
    for number, (origin, (_width, height)) in enumerate(pairs):
        if origin.y() <= y < origin.y() + height:
            return number, QPointF(x - origin.x(), y - origin.y())
    return None
