"""Where a transcript row's parts go: its bubble or card, each document, and its action bar.

One place answers for painting, sizes, anchor clicks and text selection, so they never disagree
about where a word is. Rows sit in a centred reading column (at most :data:`COLUMN_MAX` wide):
the person's messages are compact bubbles at its right, answers are prose straight on the
surface, tool cards and drafts are cards the column's width, notes are centred. Every gap and
padding is a step of :data:`ui.theme.SPACE`. Geometry only: nothing here paints or renders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtGui import QTextDocument

from ..theme import SPACE
from .attachments import estimate_height
from .document import doc_gaps
from .model import ItemKind, TranscriptItem
from .render import MAX_RENDERED_CHARS, doc_height, footer_html, header_html

__all__ = [
    "ACTION_BAR",
    "BUBBLE_RADIUS",
    "BUBBLE_SHARE",
    "CARD_RADIUS",
    "COLUMN_MAX",
    "ROW_ACTIONS",
    "RowAction",
    "RowGeometry",
    "action_rects",
    "column",
    "content_width",
    "doc_at",
    "estimate_body",
    "has_actions",
    "row_geometry",
    "row_height",
]

XS, S, M, L, XL = SPACE  # 4, 8, 12, 16, 24

#: The reading column's widest (px); a wider window only widens the margins.
COLUMN_MAX = 780
#: The widest a person's bubble gets, as a share of the column.
BUBBLE_SHARE = 0.8
#: The strip under a message that holds its actions; always reserved so hovering never reflows.
ACTION_BAR = XL + XS
BUTTON_HEIGHT = XL
BUBBLE_RADIUS = 18
CARD_RADIUS = S


@dataclass(frozen=True, slots=True)
class _Box:
    top: int  # space above the row's bubble/card/text
    bottom: int  # space below it (under the action bar, when there is one)
    pad_x: int  # inside the bubble/card
    pad_y: int


_BOXES = {
    # A new turn: with the answer's action bar above, 16 + 28 px from the answer.
    ItemKind.USER: _Box(L, 0, L, S),
    ItemKind.ASSISTANT: _Box(S, 0, 0, 0),
    ItemKind.TOOL: _Box(S, S, M, S),
    ItemKind.DRAFT: _Box(S, S, M, S),
    ItemKind.NOTE: _Box(S, S, 0, 0),
}


@dataclass(frozen=True, slots=True)
class RowAction:
    """One button of a message's action bar."""

    name: str  # activated as the anchor ``continuum-action:<name>`` ("": inert words)
    icon: str  # a small drawn icon ("": words only); see :mod:`.actions`
    label: str
    done: str = ""  # shown for a moment after it ran ("" : never), with a check
    tip: str = ""  # the tooltip (and the accessible description)


COPY = RowAction("copy", "copy", "Copy", "Copied", "Copy the message")
EDIT = RowAction("edit", "edit", "Edit", tip="Edit: send a new version (the old one is kept)")
REGENERATE = RowAction(
    "regenerate", "regenerate", "Regenerate", tip="Answer again (this answer is kept)"
)
PREVIOUS = RowAction("previous", "previous", "", tip="Previous version")
NEXT = RowAction("next", "next", "", tip="Next version")
#: Every button a bar can hold (the person's message: Copy, Edit; an answer: Copy, Regenerate).
ROW_ACTIONS: tuple[RowAction, ...] = (COPY, EDIT, REGENERATE, PREVIOUS, NEXT)
#: Buttons that stay shown while the rest of the bar is hidden (the version arrows).
VERSION_ACTIONS = frozenset({"previous", "next", ""})


def row_actions(
    kind: ItemKind, saved: bool, versions: str, *, can_branch: bool = True
) -> tuple[RowAction, ...]:
    """The row's buttons in reading order, left to right. Under an answer: the version arrows
    around ``versions`` ("2 / 3"; "" for one version), Copy, Regenerate. Under the person's
    bubble (laid from its right edge): Edit, Copy, then the arrows, rightmost, so they stay
    put when the rest of the bar shows on hover. Only a saved message can get a new version;
    ``can_branch`` is false while the conversation is read-only here."""
    arrows: tuple[RowAction, ...] = ()
    if versions:
        arrows = (PREVIOUS, RowAction("", "", versions, tip="Versions"), NEXT)
    branch = saved and can_branch
    if kind is ItemKind.USER:
        return (*((EDIT,) if branch else ()), COPY, *arrows)
    return (*arrows, COPY, *((REGENERATE,) if branch else ()))


def column(row_left: float, row_width: float) -> tuple[float, float]:
    """The reading column's left edge and width in a row ``row_width`` wide at ``row_left``.

    Centred, at most :data:`COLUMN_MAX`; narrower windows keep a margin of 16 px (24 px once
    there is room) on each side.
    """
    margin = XL if row_width >= 600 else L
    width = max(min(float(COLUMN_MAX), row_width - 2 * margin), 1.0)
    return row_left + (row_width - width) / 2, width


def content_width(item: TranscriptItem, row_width: float) -> float:
    """The width the row's documents are laid out at, for a row ``row_width`` wide."""
    _left, width = column(0, row_width)
    box = _BOXES[item.kind]
    if item.kind is ItemKind.USER:
        width = math.floor(width * BUBBLE_SHARE)
    return max(float(width - 2 * box.pad_x), 1.0)


def has_actions(item: TranscriptItem) -> bool:
    """Whether the row reserves an action bar (messages with text; a step that only thought
    before its tools has nothing to copy)."""
    return item.kind in (ItemKind.USER, ItemKind.ASSISTANT) and bool(item.text or item.streaming)


def row_height(item: TranscriptItem, body: float) -> int:
    """The row's height when its documents together are ``body`` tall."""
    box = _BOXES[item.kind]
    bar = ACTION_BAR if has_actions(item) else 0
    return math.ceil(body) + box.top + 2 * box.pad_y + bar + box.bottom


def estimate_body(item: TranscriptItem, width: float, metrics: tuple[float, float, float]) -> float:
    """The documents' height without rendering them (lines of wrapped text at ``width``).

    ``metrics``: the body font's line spacing and average character width, and the small
    font's line spacing. Painting measures the row and corrects this.
    """
    line, char, small_line = metrics
    header = (small_line if header_html(item) else 0.0) + estimate_height(item.attachments, line)
    footer = small_line if footer_html(item) else 0.0
    if item.has_reasoning:
        header += small_line  # the collapsed "Thought for N s" line (opened rows are exact)
    if item.kind is ItemKind.NOTE:
        return header
    if item.kind is ItemKind.TOOL:
        if not item.expanded:
            return header + footer + line + 6
        text = f"{item.arguments_text}\n{item.result or ''}"
        return header + footer + (text.count("\n") + 6) * line
    text = item.text
    length = min(len(text), MAX_RENDERED_CHARS)
    per_line = max(int(width / char), 10)
    lines = text.count("\n", 0, length) + length / per_line + 1
    paragraphs = text.count("\n\n", 0, length) + 1
    # Prose lines are 150 % tall; each block is followed by a 12 px gap.
    return header + footer + lines * line * 1.5 + paragraphs * M


@dataclass(frozen=True)
class RowGeometry:
    """A row laid out (view coordinates).

    ``card``: the bubble or card painted behind the documents (``None``: none, as for an
    answer); ``origins``/``sizes``: where each document starts and its (width, height);
    ``frame``: what the focus ring goes around; ``actions``: the action bar's strip
    (``None``: the row has none), its buttons laid from the right when ``actions_right``.
    """

    card: QRectF | None
    origins: tuple[QPointF, ...]  # one per document
    sizes: tuple[tuple[float, float], ...]  # (width, height) per document
    frame: QRectF | None = None
    actions: QRectF | None = None
    actions_right: bool = False
    radius: float = CARD_RADIUS


def _ideal(docs: Sequence[QTextDocument]) -> float:
    return max((doc.idealWidth() for doc in docs), default=0.0)


def row_geometry(item: TranscriptItem, docs: list[QTextDocument], rect: QRect) -> RowGeometry:
    """Lay out ``docs`` (a render's documents, in order) inside the row's ``rect``."""
    box = _BOXES[item.kind]
    col_left, col_width = column(rect.left(), rect.width())
    col_right = col_left + col_width
    top = rect.top() + box.top
    spaces = doc_gaps(docs)
    heights = [doc_height(doc) for doc in docs]  # a long answer has hundreds
    body = sum(heights) + sum(spaces)
    card_height = body + 2 * box.pad_y
    if item.kind is ItemKind.USER and docs:
        # Qt puts a line's extra height under it: a bubble would pad its text more below.
        card_height -= round(getattr(docs[-1], "leading", 0.0))
    card: QRectF | None = None
    radius: float = CARD_RADIUS
    if item.kind is ItemKind.USER:
        # As wide as its widest line (the documents are laid out at the widest bubble).
        widest = math.floor(col_width * BUBBLE_SHARE)
        width = min(float(widest), math.ceil(_ideal(docs)) + 2.0 * box.pad_x)
        card = QRectF(col_right - width, top, width, card_height)
        left, radius = card.left() + box.pad_x, BUBBLE_RADIUS
    elif item.kind in (ItemKind.TOOL, ItemKind.DRAFT):
        card = QRectF(col_left, top, col_width, card_height)
        left = col_left + box.pad_x
    elif item.kind is ItemKind.NOTE:
        left = col_left + max((col_width - _ideal(docs)) / 2, 0.0)
    else:
        left = col_left
    y = float(top + box.pad_y)
    origins: list[QPointF] = []
    sizes: list[tuple[float, float]] = []
    for doc, space, height in zip(docs, spaces, heights, strict=True):
        y += space
        origins.append(QPointF(left, y))
        sizes.append((doc.textWidth(), height))
        y += height
    bottom = top + card_height
    actions = QRectF(col_left, bottom, col_width, ACTION_BAR) if has_actions(item) else None
    if card is not None:
        frame = QRectF(card)
    else:
        # Around the column's part of the row, a step outside the text (inside the margins).
        end = actions.bottom() if actions is not None else bottom + XS
        frame = QRectF(col_left - S, top - XS, col_width + 2 * S, end - top + XS)
    return RowGeometry(
        card,
        tuple(origins),
        tuple(sizes),
        frame=frame,
        actions=actions,
        actions_right=item.kind is ItemKind.USER,
        radius=radius,
    )


def action_rects(
    geometry: RowGeometry, widths: Sequence[float], outdent: float = 0.0
) -> tuple[QRectF, ...]:
    """The action bar's buttons, ``widths`` wide (in :data:`ROW_ACTIONS` order): from the
    right edge under a bubble, from the left under an answer (``outdent`` to the left of it,
    so a button's icon lines up with the text); empty when there is no bar."""
    bar = geometry.actions
    if bar is None:
        return ()
    y = bar.top() + (bar.height() - BUTTON_HEIGHT) / 2
    rects: list[QRectF] = []
    x = bar.right() if geometry.actions_right else bar.left() - outdent
    for width in widths:
        if geometry.actions_right:
            x -= width
            rects.append(QRectF(x, y, width, BUTTON_HEIGHT))
            x -= XS
        else:
            rects.append(QRectF(x, y, width, BUTTON_HEIGHT))
            x += width + XS
    return tuple(rects)


def doc_at(geometry: RowGeometry, x: float, y: float) -> tuple[int, QPointF] | None:
    """The document under view point (x, y) and the point in its coordinates; ``None``: none.

    A point left or right of a document (but level with it) still belongs to it, as in a
    browser, so a drag can start in the margin; a point in the space between two documents
    belongs to the start of the lower one.
    """
    pairs = zip(geometry.origins, geometry.sizes, strict=True)
    above = None  # where the previous document ends
    for number, (origin, (_width, height)) in enumerate(pairs):
        start = origin.y() if above is None else above
        if start <= y < origin.y() + height:
            return number, QPointF(x - origin.x(), max(y - origin.y(), 0.0))
        above = origin.y() + height
    return None
