"""Text selection across the transcript's rows: where it starts and ends, and what it holds.

A selection runs from an *anchor* to a *focus*, each a :class:`Point` (row uid, document
number in ``render.docs()`` order, character position). Like a browser, what is highlighted is
what is copied: a drag over a row's header ("Assistant") takes that line too; documents of a
row are joined by a newline, rows by a blank line. Positions are clamped when a document
shrinks (a streaming tail re-rendered); a row that leaves the model (a conversation switch)
ends the selection. The pure parts (:func:`row_spans`, :func:`plain`, :func:`join_rows`) decide
what is selected; :class:`TextSelection` maps view points to positions and repaints only the
rows whose highlight changed. The mouse, keys and menu are :mod:`.selection_input`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import (
    QGuiApplication,
    QTextBlock,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextLine,
    QTextTable,
)

from .layout import doc_at
from .model import Roles, TranscriptItem, TranscriptModel
from .rows import copy_text

if TYPE_CHECKING:
    from .view import TranscriptView

__all__ = [
    "END",
    "WHOLE",
    "Point",
    "TextSelection",
    "doc_end",
    "join_continued",
    "join_rows",
    "line_x",
    "plain",
    "row_spans",
]

#: A document selected from its start to its end (the painter clamps the end).
END = 1 << 30
WHOLE = (0, END)


@dataclass(frozen=True, slots=True)
class Point:
    """A place in the transcript's text: row ``uid``, document ``doc``, character ``pos``."""

    uid: int
    doc: int
    pos: int


def row_spans(
    row: int, start: tuple[int, int, int], end: tuple[int, int, int], docs: int
) -> dict[int, tuple[int, int]]:
    """What row ``row`` (with ``docs`` documents) has selected between ordered ``start`` and
    ``end`` ((row, doc, pos) each): document number -> (start, end); empty when none."""
    if not start[0] <= row <= end[0] or docs <= 0:
        return {}
    # A document number past the row's documents (one went away while streaming): its end.
    first = (start[1], start[2]) if row == start[0] else (0, 0)
    last = (end[1], end[2]) if row == end[0] else (docs - 1, END)
    if first[0] >= docs:
        return {}
    if last[0] >= docs:
        last = (docs - 1, END)
    spans: dict[int, tuple[int, int]] = {}
    for number in range(first[0], last[0] + 1):
        low = first[1] if number == first[0] else 0
        high = last[1] if number == last[0] else END
        if high > low:
            spans[number] = (low, high)
    return spans


def plain(text: str) -> str:
    """A ``QTextCursor.selectedText()`` as plain text: paragraph/line separators become
    newlines, and spaces at a line's end (a paragraph's HTML newline) go, as in a browser."""
    text = text.replace("\u2029", "\n").replace("\u2028", "\n").replace("\ufffc", "")
    return "\n".join(line.rstrip(" ") for line in text.split("\n"))


def join_rows(rows: Iterable[Sequence[str]]) -> str:
    """Rows' document texts: documents joined by a newline, rows by a blank line; empty parts
    (a document or row with nothing selected) leave no gap."""
    texts = ["\n".join(part for part in docs if part) for docs in rows]
    return "\n\n".join(text for text in texts if text)


def join_continued(parts: Sequence[tuple[str, str | None]]) -> list[str]:
    """Documents' texts with ``(text, joiner)``: a document whose line goes on in the next one
    (a long line cut inside; ``joiner`` is not ``None``) is joined to it by ``joiner`` — the
    space it was cut after, or nothing — as it was written."""
    joined: list[str] = []
    glue: str | None = None
    for text, joiner in parts:
        if glue is not None and joined and text:
            joined[-1] = f"{joined[-1]}{glue}{text}" if joined[-1] else text
        else:
            joined.append(text)
        glue = joiner
    return joined


def doc_end(doc: QTextDocument) -> int:
    """The position after a document's last character."""
    return max(doc.characterCount() - 1, 0)


def line_x(line: QTextLine, pos: int) -> float:
    """The x of position ``pos`` (in its block) on ``line`` (PySide's ``cursorToX`` answers
    a tuple (x, position), typed ``object``)."""
    found: Any = line.cursorToX(pos)
    return float(found[0] if isinstance(found, tuple) else found)


def doc_text(doc: QTextDocument, low: int, high: int) -> str:
    """The text of ``doc`` between two positions, as a browser copies it: a table's cells
    joined by tabs and its rows by newlines, a formula as its LaTeX source (its alt text)."""
    last = doc_end(doc)
    low, high = min(max(low, 0), last), min(max(high, 0), last)
    parts: list[str] = []
    previous: tuple[object, int, int] | None = None  # the previous block's table cell
    block = doc.findBlock(low)
    while block.isValid() and block.position() <= high:
        start = max(low, block.position())
        end = min(high, block.position() + block.length() - 1)
        cell = _cell_of(block)
        if parts:
            next_cell = (
                cell is not None
                and previous is not None
                and cell[:2] == previous[:2]
                and cell[2] != previous[2]
            )
            parts.append("\t" if next_cell else "\n")
        parts.append(_block_text(block, start, end))
        previous = cell
        block = block.next()
    return plain("".join(parts))


def _cell_of(block: QTextBlock) -> tuple[object, int, int] | None:
    """(table, row, column) of the table cell ``block`` is in; ``None``: not in a table."""
    table: QTextTable | None = QTextCursor(block).currentTable()  # None outside tables
    if table is None:
        return None
    cell = table.cellAt(block.position())
    return table, cell.row(), cell.column()


def _block_text(block: QTextBlock, start: int, end: int) -> str:
    """``block``'s text from document position ``start`` to ``end``; images by alt text."""
    out: list[str] = []
    it = block.begin()
    while not it.atEnd():
        fragment = it.fragment()
        low = max(start, fragment.position())
        high = min(end, fragment.position() + fragment.length())
        if high > low:
            fmt = fragment.charFormat()
            if fmt.isImageFormat():
                alt = fmt.property(QTextFormat.Property.ImageAltText)
                out.append(str(alt) if alt else "")
            else:
                out.append(fragment.text()[low - fragment.position() : high - fragment.position()])
        it += 1
    return "".join(out)


class TextSelection(QObject):
    """The transcript's text selection (the delegate paints :meth:`ranges`)."""

    def __init__(self, view: TranscriptView) -> None:
        super().__init__(view)
        self._view = view
        self.anchor: Point | None = None
        self.focus: Point | None = None
        self._rows: dict[int, int] = {}  # uid -> row, rebuilt when the rows change
        self._rows_of: Any = None  # the model the map was built from
        self._watched: Any = None

    # --- rows and documents ----------------------------------------------------------------

    def _watch(self) -> Any:
        model = self._view.model()
        if model is not self._watched:
            if self._watched is not None:
                self._watched.modelReset.disconnect(self.clear)
                self._watched.rowsRemoved.disconnect(self._rows_changed)
                self._watched.rowsInserted.disconnect(self._rows_changed)
            self._watched = model
            self._rows_of = None
            if model is not None:
                model.modelReset.connect(self.clear)
                model.rowsRemoved.connect(self._rows_changed)
                model.rowsInserted.connect(self._rows_changed)
        return model

    def _rows_changed(self, *_args: Any) -> None:
        self._rows_of = None
        if self.anchor is not None and self.row_of(self.anchor.uid) < 0:
            self.clear()
        elif self.focus is not None and self.row_of(self.focus.uid) < 0:
            self.clear()

    def row_of(self, uid: int) -> int:
        """The row showing ``uid`` (-1: none)."""
        model = self._watch()
        if model is None:
            return -1
        if self._rows_of is not model:
            if isinstance(model, TranscriptModel):
                items = model.items()
            else:
                items = [model.index(r, 0).data(Roles.ITEM) for r in range(model.rowCount())]
            self._rows = {item.uid: row for row, item in enumerate(items) if item is not None}
            self._rows_of = model
        return self._rows.get(uid, -1)

    def item(self, row: int) -> TranscriptItem | None:
        model = self._view.model()
        if model is None or not 0 <= row < model.rowCount():
            return None
        found = model.index(row, 0).data(Roles.ITEM)
        return found if isinstance(found, TranscriptItem) else None

    def docs(self, row: int) -> list[QTextDocument]:
        """Row ``row``'s documents as painted (render.docs() order)."""
        item = self.item(row)
        if item is None:
            return []
        view = self._view
        option = view._option(view.model().index(row, 0))
        delegate = view.delegate
        return delegate.render_for(item, delegate.width_for(item, option), option).docs()

    def point_at(self, pos: QPoint) -> Point | None:
        """The text position nearest view point ``pos``: above a row's documents its start,
        below them (action bar, padding) its end; past the last row the transcript's end."""
        view = self._view
        model = self._watch()
        if model is None or model.rowCount() == 0:
            return None
        # A pointer held beyond the viewport (a drag that scrolls) counts at its edge.
        pos = QPoint(pos.x(), min(max(pos.y(), 0), max(view.viewport().height() - 1, 0)))
        index = view.indexAt(pos)
        if not index.isValid():
            first = view.visualRect(model.index(0, 0))
            row = 0 if pos.y() < first.top() else model.rowCount() - 1
            index = model.index(row, 0)
            pos = QPoint(pos.x(), first.top() - 1 if row == 0 else 1 << 28)
        item = index.data(Roles.ITEM)
        if not isinstance(item, TranscriptItem):
            return None
        option = view._option(index)
        docs = self.docs(index.row())
        if not docs:
            return Point(item.uid, 0, 0)
        geometry = view.delegate.geometry(item, option)
        hit = doc_at(geometry, pos.x(), pos.y())
        if hit is None:
            if pos.y() < geometry.origins[0].y():
                return Point(item.uid, 0, 0)
            return Point(item.uid, len(docs) - 1, doc_end(docs[-1]))
        number, local = hit
        spot = docs[number].documentLayout().hitTest(local, Qt.HitTestAccuracy.FuzzyHit)
        return Point(item.uid, number, max(spot, 0))

    # --- the selection ---------------------------------------------------------------------

    def _key(self, point: Point) -> tuple[int, int, int]:
        return (self.row_of(point.uid), point.doc, point.pos)

    def ordered(self) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
        """(row, doc, pos) of the selection's start and end; ``None``: nothing selected."""
        if self.anchor is None or self.focus is None:
            return None
        a, b = self._key(self.anchor), self._key(self.focus)
        if a[0] < 0 or b[0] < 0:
            return None
        return (a, b) if a <= b else (b, a)

    def has_selection(self) -> bool:
        bounds = self.ordered()
        return bounds is not None and bounds[0] != bounds[1]

    def touches(self, uid: int) -> bool:
        """Whether a non-empty selection reaches into row ``uid``."""
        bounds = self.ordered()
        if bounds is None or bounds[0] == bounds[1]:
            return False
        return bounds[0][0] <= self.row_of(uid) <= bounds[1][0]

    def ranges(self, uid: int) -> dict[int, tuple[int, int]]:
        bounds = self.ordered()
        if bounds is None or bounds[0] == bounds[1]:
            return {}
        row = self.row_of(uid)
        if not bounds[0][0] <= row <= bounds[1][0]:
            return {}
        return row_spans(row, bounds[0], bounds[1], len(self.docs(row)))

    def set(self, anchor: Point | None, focus: Point | None) -> None:
        """Select from ``anchor`` to ``focus``, repainting only rows whose highlight changed."""
        before = self.ordered()
        same_anchor = anchor == self.anchor and before is not None
        old_focus = self.focus
        self.anchor, self.focus = anchor, focus
        after = self.ordered()
        if same_anchor and old_focus is not None and focus is not None:
            rows = sorted((self.row_of(old_focus.uid), self.row_of(focus.uid)))
            spans = [(rows[0], rows[1])]
        else:
            spans = [(b[0][0], b[1][0]) for b in (before, after) if b is not None]
        self._repaint(spans)

    def clear(self) -> None:
        self.set(None, None)

    def extend(self, focus: Point) -> None:
        self.set(self.anchor if self.anchor is not None else focus, focus)

    def _repaint(self, spans: list[tuple[int, int]]) -> None:
        view = self._view
        model = view.model()
        if model is None or not spans:
            return
        area = view.viewport().rect()
        top = view.indexAt(area.topLeft())
        bottom = view.indexAt(QPoint(0, area.bottom()))
        first = top.row() if top.isValid() else 0
        last = bottom.row() if bottom.isValid() else model.rowCount() - 1
        for low, high in spans:
            for row in range(max(low, first), min(high, last) + 1):
                view.viewport().update(view.visualRect(model.index(row, 0)))

    # --- units: word, block, message -------------------------------------------------------

    def _unit(self, point: Point, unit: str) -> tuple[Point, Point] | None:
        row = self.row_of(point.uid)
        docs = self.docs(row)
        if not 0 <= point.doc < len(docs):
            return None
        doc = docs[point.doc]
        cursor = QTextCursor(doc)
        cursor.setPosition(min(point.pos, doc_end(doc)))
        if unit == "word":
            cursor.select(QTextCursor.SelectionType.WordUnderCursor)
        else:
            cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
        low, high = cursor.selectionStart(), cursor.selectionEnd()
        return Point(point.uid, point.doc, low), Point(point.uid, point.doc, high)

    def select_word(self, point: Point) -> None:
        found = self._unit(point, "word")
        if found is not None:
            self.set(*found)

    def select_block(self, point: Point) -> None:
        found = self._unit(point, "block")
        if found is not None:
            self.set(*found)

    def select_row(self, row: int) -> None:
        """Select all the text of one message (Ctrl+A, "Select all in message")."""
        item, docs = self.item(row), self.docs(row)
        if item is None or not docs:
            return
        end = doc_end(docs[-1])
        self.set(Point(item.uid, 0, 0), Point(item.uid, len(docs) - 1, end))

    # --- what is copied --------------------------------------------------------------------

    def selected_text(self) -> str:
        """The selected text as plain text (what is highlighted; see the module's note)."""
        bounds = self.ordered()
        if bounds is None or bounds[0] == bounds[1]:
            return ""
        rows: list[list[str]] = []
        for row in range(bounds[0][0], bounds[1][0] + 1):
            docs = self.docs(row)
            spans = row_spans(row, bounds[0], bounds[1], len(docs))
            parts = [
                (doc_text(docs[n], *spans[n]), getattr(docs[n], "joiner", None))
                for n in sorted(spans)
            ]
            rows.append(join_continued(parts))
        return join_rows(rows)

    def touched_rows(self) -> list[int]:
        bounds = self.ordered()
        if bounds is None or bounds[0] == bounds[1]:
            return []
        return [r for r in range(bounds[0][0], bounds[1][0] + 1) if self.ranges_row(r)]

    def ranges_row(self, row: int) -> dict[int, tuple[int, int]]:
        item = self.item(row)
        return self.ranges(item.uid) if item is not None else {}

    def markdown(self) -> str:
        """The Markdown source of every message the selection touches (whole messages: a
        painted range cannot be mapped back to its Markdown exactly)."""
        items = [self.item(row) for row in self.touched_rows()]
        return "\n\n".join(copy_text(item) for item in items if item is not None)

    def copy(self) -> bool:
        """Put the selected text on the clipboard; ``False``: nothing is selected."""
        text = self.selected_text()
        if not text:
            return False
        QGuiApplication.clipboard().setText(text)
        return True
