"""``TranscriptModel``: the Qt list model over the transcript's rows (``rows.py``).

What the rows are, and how messages and agent events change them, is decided in :mod:`.rows`
(pure Python); this adapter applies each :class:`~.rows.RowChange` between Qt's begin/end calls.
New messages insert rows; a streaming answer changes one row, announced with
``dataChanged(row, row)`` — never a reset. Text and reasoning deltas are coalesced by a short
timer so thousands of tokens per second become at most ~60 updates per second.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
)

from app import Message, StoredMessage, ToolCall, ToolMessage
from app.services import FilePart, ImagePart

from ..plain import plain_tooltip
from .branching import place_versions, rows_from_branch
from .rows import (
    ItemKind,
    RowChange,
    Rows,
    ToolState,
    TranscriptItem,
    note_label,
    rows_from_history,
)

__all__ = [
    "FLUSH_INTERVAL_MS",
    "ItemKind",
    "Roles",
    "ToolState",
    "TranscriptItem",
    "TranscriptModel",
    "flush_interval_ms",
    "note_label",
]

#: A live answer's new text is shown at most once a frame (60 Hz) ...
FLUSH_INTERVAL_MS = 16
#: ... and 20 times a second while it arrives faster than :data:`BURST_CHARS_PER_S`.
BURST_INTERVAL_MS = 50
#: Beyond any provider's real streaming speed (the fastest hosted models send ~2,000 tokens,
#: ~8,000 characters, a second): a proxy releasing a buffered answer, a burst after a stall, a
#: local simulator. That is about a screenful of new text every 50 ms, which nobody reads as it
#: comes; a frame costs the GUI thread ~3 ms besides laying out the new text (painting a whole
#: screen of it), time taken from reading the stream. (Rarer frames would each lay out more
#: text at once: at 10 a second a frame held the loop ~10 ms, and the pump's 8 ms slice next
#: to it made gaps over 16 ms.)
BURST_CHARS_PER_S = 60_000


def flush_interval_ms(chars: int, seconds: float) -> int:
    """How long to gather text before the next frame, after one that showed ``chars`` new
    characters, ``seconds`` after the frame before it. Pure."""
    if chars > BURST_CHARS_PER_S * max(seconds, FLUSH_INTERVAL_MS / 1000):
        return BURST_INTERVAL_MS
    return FLUSH_INTERVAL_MS


_Index = QModelIndex | QPersistentModelIndex


class Roles(enum.IntEnum):
    ITEM = Qt.ItemDataRole.UserRole + 1
    KIND = Qt.ItemDataRole.UserRole + 2
    STREAMING = Qt.ItemDataRole.UserRole + 3
    EXPANDED = Qt.ItemDataRole.UserRole + 4
    TOOL_STATE = Qt.ItemDataRole.UserRole + 5


class TranscriptModel(QAbstractListModel):
    """Rows of one conversation. Feed it messages (history) or agent events (live)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows = Rows()
        self._pending: list[str] = []
        self._pending_reasoning: list[str] = []
        # When the first queued piece of each arrived (time.monotonic): how long it thought.
        self._text_at: float | None = None
        self._reasoning_at: float | None = None
        self._shown_at: float | None = None  # when a frame last showed new text (this stream)
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_INTERVAL_MS)
        self._flush.timeout.connect(self.flush)
        #: The branch has older messages than the rows show (read as the view scrolls up),
        #: above message ``first_seq`` (the first one read).
        self.earlier = False
        self.first_seq: int | None = None

    # --- Qt model interface ----------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows.items)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        items = self._rows.items
        if not index.isValid() or not 0 <= index.row() < len(items):
            return None
        item = items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return item.text if item.kind is not ItemKind.TOOL else item.accessible_text()
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return item.accessible_text()
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(item.detail) or None
        if role == Roles.ITEM:
            return item
        if role == Roles.KIND:
            return item.kind.value
        if role == Roles.STREAMING:
            return item.streaming
        if role == Roles.EXPANDED:
            return item.expanded
        if role == Roles.TOOL_STATE:
            return item.state.value if item.state else None
        return None

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Roles.EXPANDED:
            return False
        item = self._rows.items[index.row()]
        # A tool card opens its arguments and result; an answer its reasoning.
        if item.kind is not ItemKind.TOOL and not item.has_reasoning:
            return False
        item.expanded = bool(value)
        item.touch()
        self.dataChanged.emit(index, index, [Roles.EXPANDED])
        return True

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def roleNames(self) -> dict[int, QByteArray]:
        names = dict(super().roleNames())
        names.update(
            {
                int(Roles.KIND): QByteArray(b"kind"),
                int(Roles.STREAMING): QByteArray(b"streaming"),
                int(Roles.EXPANDED): QByteArray(b"expanded"),
                int(Roles.TOOL_STATE): QByteArray(b"toolState"),
            }
        )
        return names

    # --- reading ---------------------------------------------------------------------------

    def items(self) -> list[TranscriptItem]:
        return list(self._rows.items)

    def item(self, row: int) -> TranscriptItem:
        return self._rows.items[row]

    def row_of(self, item: TranscriptItem) -> int:
        return self._rows.row_of(item)

    @property
    def streaming_item(self) -> TranscriptItem | None:
        return self._rows.streaming

    def tool_item(self, call_id: str) -> TranscriptItem | None:
        return self._rows.tool(call_id)

    def unsettled_tools(self) -> list[str]:
        """Call ids of the cards still shown running or awaiting approval."""
        return self._rows.unsettled_tools()

    # --- applying changes ------------------------------------------------------------------

    def _apply(self, change: RowChange) -> None:
        rows = self._rows
        for item in change.remove:
            row = rows.row_of(item)
            if row >= 0:
                self.beginRemoveRows(QModelIndex(), row, row)
                rows.remove_at(row)
                self.endRemoveRows()
        if change.insert:
            first = len(rows.items)
            self.beginInsertRows(QModelIndex(), first, first + len(change.insert) - 1)
            rows.append(change.insert)
            self.endInsertRows()
        for item in change.changed:
            row = rows.row_of(item)
            if row >= 0:
                index = self.index(row, 0)
                self.dataChanged.emit(index, index)

    # --- building --------------------------------------------------------------------------

    def clear(self) -> None:
        self._flush.stop()
        self._pending.clear()
        self._pending_reasoning.clear()
        self.beginResetModel()  # opening another conversation: a reset is the honest signal
        self._rows = Rows()
        self.earlier, self.first_seq = False, None
        self.endResetModel()

    def load_history(self, messages: Iterable[Message]) -> None:
        """Replace the rows with a saved conversation (one reset, not one insert per row)."""
        self._load(rows_from_history(messages))

    def load_branch(
        self,
        records: Iterable[StoredMessage],
        versions: Iterable[tuple[int, ...]] = (),
        *,
        earlier: bool = False,
    ) -> None:
        """Replace the rows with a conversation's branch, each row knowing its message's seq
        and the versions it can switch to; ``earlier``: only its end was read (older
        messages come with :meth:`prepend_branch`)."""
        records = list(records)
        self._load(rows_from_branch(records, versions))
        self.earlier = earlier  # older messages of the branch are not in the rows yet
        self.first_seq = records[0].seq if records else None

    def prepend_branch(
        self, records: list[StoredMessage], versions: Iterable[tuple[int, ...]], *, earlier: bool
    ) -> None:
        """Put the branch's older part ``records`` above the rows (one insert at the top; the
        view keeps the rows on screen where they were)."""
        self.earlier = earlier
        if not records:
            return
        self.first_seq = records[0].seq
        older = rows_from_branch(records)
        if older.items:
            self.beginInsertRows(QModelIndex(), 0, len(older.items) - 1)
            self._rows.prepend(older)
            self.endInsertRows()
        for item in place_versions(self._rows.items, versions):  # arrows on the new rows
            row = self._rows.row_of(item)
            if row >= 0:
                index = self.index(row, 0)
                self.dataChanged.emit(index, index)

    def _load(self, rows: Rows) -> None:
        self.clear()
        if not rows.items:
            self._rows = rows
            return
        self.beginInsertRows(QModelIndex(), 0, len(rows.items) - 1)
        self._rows = rows
        self.endInsertRows()

    # --- live updates ----------------------------------------------------------------------

    def add_user(
        self, text: str, attachments: Sequence[ImagePart | FilePart] = ()
    ) -> TranscriptItem:
        self.flush()
        change = self._rows.add_user(text, attachments)
        self._apply(change)
        return change.insert[-1]

    def add_draft(self, text: str, detail: str) -> TranscriptItem:
        change = self._rows.add_draft(text, detail)
        self._apply(change)
        return change.insert[-1]

    def remove_drafts(self) -> None:
        """Remove the rows of interrupted, never-saved text."""
        self._apply(self._rows.remove_drafts())

    def remove_item(self, item: TranscriptItem) -> None:
        if item is self._rows.streaming:
            self._flush.stop()
            self._pending.clear()
            self._pending_reasoning.clear()
        self._apply(self._rows.remove(item))

    def _new_answer(self) -> None:
        """Before the first piece of an answer: its first frames come at the frame rate,
        whatever the last answer's ended at."""
        if self._rows.streaming is None and not self._pending_reasoning:
            self._flush.setInterval(FLUSH_INTERVAL_MS)
            self._shown_at = None

    def append_delta(self, text: str) -> None:
        """Queue streamed text; the row changes at most once per frame."""
        if not text:
            return
        self._new_answer()
        self._apply(self._rows.start_streaming())
        if not self._pending:
            self._text_at = time.monotonic()
        self._pending.append(text)
        if not self._flush.isActive():
            self._flush.start()

    def append_reasoning(self, text: str) -> None:
        """Queue streamed reasoning (shown "Thinking…" until answer text arrives)."""
        if not text:
            return
        if self._pending:
            self.flush()  # keep the order: text already queued came first
        self._new_answer()
        if not self._pending_reasoning:
            self._reasoning_at = time.monotonic()
        self._pending_reasoning.append(text)
        if not self._flush.isActive():
            self._flush.start()

    def flush(self) -> None:
        self._flush.stop()
        # When the first piece this frame shows arrived: queued reasoning always came before
        # queued text (reasoning arriving after text shows the text first).
        first = self._reasoning_at if self._pending_reasoning else self._text_at
        shown = 0
        if self._pending_reasoning:
            # Reasoning opens the live row itself (it may come before any text).
            thought = "".join(self._pending_reasoning)
            self._pending_reasoning.clear()
            shown = len(thought)
            self._apply(self._rows.grow_reasoning(thought, self._reasoning_at))
        if self._rows.streaming is not None and self._pending:
            text = "".join(self._pending)
            shown += len(text)
            self._apply(self._rows.grow(text, self._text_at))
        self._pending.clear()
        if shown:
            # The rate over the time since the last frame that showed text (one large chunk
            # of a slow stream is no burst), or for an answer's first frame since its first
            # piece arrived.
            now = time.monotonic()
            since = now - (self._shown_at if self._shown_at is not None else first or now)
            self._flush.setInterval(flush_interval_ms(shown, since))
            self._shown_at = now

    def finish_streaming(
        self, *, stop_reason: str | None = None, unsaved: bool = False
    ) -> TranscriptItem | None:
        """End the live row. ``unsaved`` marks text the core did not keep (Stop mid-stream)."""
        self.flush()
        item = self._rows.streaming
        self._apply(self._rows.finish_streaming(stop_reason=stop_reason, unsaved=unsaved))
        return item

    def message_saved(self, message: Message, seq: int | None = None) -> None:
        """A message became durable (as ``seq``): settle the rows that show it."""
        self.flush()
        self._apply(self._rows.message_saved(message, seq))

    def tool_called(self, call: ToolCall) -> None:
        self.flush()
        self._apply(self._rows.tool_called(call))

    def tool_result(self, message: ToolMessage) -> None:
        self._apply(self._rows.tool_result(message))

    def set_tool_state(self, call_id: str, state: ToolState) -> None:
        """Show a live state change of a tool card (approval asked, allowed, ...)."""
        self._apply(self._rows.set_tool_state(call_id, state))

    def set_tool_progress(self, call_id: str, words: str) -> None:
        """Show a running tool's progress report on its card."""
        self._apply(self._rows.set_tool_progress(call_id, words))

    def mark_requested(self, call_ids: Iterable[str]) -> None:
        """Calls known never to have started: shown "requested", not "may or may not have run"."""
        self._apply(self._rows.mark_requested(call_ids))

    def settle_tools(self, history: Iterable[Message], call_ids: Collection[str]) -> None:
        """Show how the cards of ``call_ids`` ended, from the saved ``history``."""
        self._apply(self._rows.settle(history, call_ids))

    def continue_joined(self) -> None:
        """The next assistant text continues the previous answer (drawn as one)."""
        self._rows.join_next = True
