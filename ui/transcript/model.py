"""``TranscriptModel``: a ``QAbstractListModel`` whose rows are what the person sees.

Rows are not the stored messages one to one: an assistant step becomes a text row plus one tool
card per call, and a tool result updates its card instead of adding a row. New messages insert
rows; a streaming answer changes one row, announced with ``dataChanged(row, row)`` — never a
reset. Text deltas are coalesced by a short timer so thousands of tokens per second become at
most ~60 updates per second.
"""

from __future__ import annotations

import enum
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, QTimer

from app import (
    CANCELLED_TOOL_TEXT,
    DENIED_TOOL_TEXT,
    AssistantMessage,
    InternalMessage,
    Message,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from app.resume import CONTINUE_TEXT, RECOVERED_TOOL_TEXT, RETRY_TEXT
from app.tools import MAY_STILL_COMPLETE

from ..plain import plain_tooltip

__all__ = ["FLUSH_INTERVAL_MS", "ItemKind", "Roles", "ToolState", "TranscriptItem",
           "TranscriptModel"]

FLUSH_INTERVAL_MS = 16

_Index = QModelIndex | QPersistentModelIndex


class ItemKind(enum.StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    NOTE = "note"  # an InternalMessage: small and discreet
    DRAFT = "draft"  # text that was on screen when a request died; never part of the history


class ToolState(enum.StrEnum):
    REQUESTED = "requested"  # asked for, not started (e.g. was awaiting approval at a crash)
    AWAITING_APPROVAL = "awaiting_approval"  # the approval card is asking the person
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    DENIED = "denied"
    CANCELLED = "cancelled"  # Stop pressed while it ran (or while it awaited approval)
    UNKNOWN = "unknown"  # interrupted: the app stopped while it ran; may or may not have run


class Roles(enum.IntEnum):
    ITEM = Qt.ItemDataRole.UserRole + 1
    KIND = Qt.ItemDataRole.UserRole + 2
    STREAMING = Qt.ItemDataRole.UserRole + 3
    EXPANDED = Qt.ItemDataRole.UserRole + 4
    TOOL_STATE = Qt.ItemDataRole.UserRole + 5


_ids = itertools.count(1)


@dataclass(eq=False, slots=True)
class TranscriptItem:
    kind: ItemKind
    text: str = ""
    streaming: bool = False
    # Assistant rows: why the step stopped when it was not a normal end (shown as a footer).
    stop_reason: str | None = None
    # Drawn without a header, right under the row before it (a continued response).
    joined: bool = False
    # Tool cards.
    call: ToolCall | None = None
    result: str | None = None
    state: ToolState | None = None
    expanded: bool = False
    # Notes: a short visible label; the full internal text goes in the tooltip.
    detail: str = ""
    uid: int = field(default_factory=lambda: next(_ids))
    version: int = 0

    def touch(self) -> None:
        self.version += 1

    @property
    def arguments_text(self) -> str:
        if self.call is None:
            return ""
        return json.dumps(self.call.arguments_dict(), indent=2, ensure_ascii=False)

    def accessible_text(self) -> str:
        if self.kind is ItemKind.TOOL and self.call is not None:
            return f"Tool {self.call.name}: {self.state or ''}"
        return f"{self.kind.value}: {self.text[:500]}"


def note_label(content: str) -> str:
    """A short label for an internal message (the model reads the long text, people this)."""
    if content == CONTINUE_TEXT:
        return "Continued after the output limit"
    if content == RETRY_TEXT:
        return "Asked the model to redo the interrupted response"
    first = content.strip().splitlines()[0] if content.strip() else ""
    return first if len(first) <= 120 else first[:117] + "…"


class TranscriptModel(QAbstractListModel):
    """Rows of one conversation. Feed it messages (history) or agent events (live)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._items: list[TranscriptItem] = []
        self._tool_rows: dict[str, TranscriptItem] = {}
        self._streaming: TranscriptItem | None = None
        self._pending: list[str] = []
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_INTERVAL_MS)
        self._flush.timeout.connect(self.flush)
        # Set when the next assistant text continues the one before (CONTINUE_RESPONSE).
        self._join_next = False

    # --- Qt model interface ----------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
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
        item = self._items[index.row()]
        if item.kind is not ItemKind.TOOL:
            return False
        item.expanded = bool(value)
        item.touch()
        self.dataChanged.emit(index, index, [Roles.EXPANDED])
        return True

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def roleNames(self) -> dict[int, bytes]:
        names = dict(super().roleNames())
        names.update({Roles.KIND: b"kind", Roles.STREAMING: b"streaming",
                      Roles.EXPANDED: b"expanded", Roles.TOOL_STATE: b"toolState"})
        return names

    # --- reading ---------------------------------------------------------------------------

    def items(self) -> list[TranscriptItem]:
        return list(self._items)

    def item(self, row: int) -> TranscriptItem:
        return self._items[row]

    def row_of(self, item: TranscriptItem) -> int:
        for row in range(len(self._items) - 1, -1, -1):
            if self._items[row] is item:
                return row
        return -1

    @property
    def streaming_item(self) -> TranscriptItem | None:
        return self._streaming

    def tool_item(self, call_id: str) -> TranscriptItem | None:
        return self._tool_rows.get(call_id)

    # --- building --------------------------------------------------------------------------

    def clear(self) -> None:
        self._flush.stop()
        self._pending.clear()
        self.beginResetModel()  # opening another conversation: a reset is the honest signal
        self._items = []
        self._tool_rows = {}
        self._streaming = None
        self._join_next = False
        self.endResetModel()

    def load_history(self, messages: Iterable[Message]) -> None:
        """Replace the rows with a saved conversation (one reset, not one insert per row)."""
        self.clear()
        items: list[TranscriptItem] = []
        self._tool_rows = {}
        previous: Message | None = None
        for message in messages:
            items.extend(self._rows_for(message, previous))
            previous = message
        # Calls that never got an answer: the process stopped while they ran.
        for item in self._tool_rows.values():
            if item.state is ToolState.RUNNING:
                item.state = ToolState.UNKNOWN
        if not items:
            return
        self.beginInsertRows(QModelIndex(), 0, len(items) - 1)
        self._items = items
        self.endInsertRows()

    def _rows_for(self, message: Message, previous: Message | None) -> list[TranscriptItem]:
        if isinstance(message, UserMessage):
            self._join_next = False
            return [TranscriptItem(ItemKind.USER, message.content)]
        if isinstance(message, InternalMessage):
            self._join_next = message.content == CONTINUE_TEXT
            return [TranscriptItem(ItemKind.NOTE, note_label(message.content),
                                   detail=message.content)]
        if isinstance(message, ToolMessage):
            card = self._tool_rows.get(message.tool_call_id)
            if card is not None:
                self._apply_result(card, message)
                return []
            # A result whose call is not on screen: show it as its own card.
            card = TranscriptItem(ItemKind.TOOL, call=ToolCall(message.tool_call_id, message.name))
            self._apply_result(card, message)
            return [card]
        rows: list[TranscriptItem] = []
        if message.content or not message.tool_calls:
            rows.append(self._assistant_item(message))
        for call in message.tool_calls:
            card = TranscriptItem(ItemKind.TOOL, call=call, state=ToolState.RUNNING)
            self._tool_rows[call.id] = card
            rows.append(card)
        return rows

    def _assistant_item(self, message: AssistantMessage) -> TranscriptItem:
        item = TranscriptItem(ItemKind.ASSISTANT, message.content)
        self._set_stop(item, message.stop_reason)
        item.joined, self._join_next = self._join_next, False
        return item

    @staticmethod
    def _set_stop(item: TranscriptItem, reason: StopReason | str | None) -> None:
        if reason in (None, StopReason.END_TURN, StopReason.TOOL_USE):
            item.stop_reason = None
        else:
            item.stop_reason = str(reason)

    @staticmethod
    def _apply_result(card: TranscriptItem, message: ToolMessage) -> None:
        card.result = message.content
        if message.content == RECOVERED_TOOL_TEXT or (
            not message.success and MAY_STILL_COMPLETE in message.content
        ):
            card.state = ToolState.UNKNOWN
        elif message.content == DENIED_TOOL_TEXT and not message.success:
            card.state = ToolState.DENIED
        elif message.content == CANCELLED_TOOL_TEXT and not message.success:
            card.state = ToolState.CANCELLED
        else:
            card.state = ToolState.DONE if message.success else ToolState.FAILED
        card.touch()

    def _insert(self, items: Sequence[TranscriptItem]) -> None:
        if not items:
            return
        first = len(self._items)
        self.beginInsertRows(QModelIndex(), first, first + len(items) - 1)
        self._items.extend(items)
        self.endInsertRows()

    def _changed(self, item: TranscriptItem) -> None:
        item.touch()
        row = self.row_of(item)
        if row >= 0:
            index = self.index(row, 0)
            self.dataChanged.emit(index, index)

    # --- live updates ----------------------------------------------------------------------

    def add_user(self, text: str) -> TranscriptItem:
        self.finish_streaming()
        self._join_next = False
        item = TranscriptItem(ItemKind.USER, text)
        self._insert([item])
        return item

    def add_draft(self, text: str, detail: str) -> TranscriptItem:
        item = TranscriptItem(ItemKind.DRAFT, text, detail=detail)
        self._insert([item])
        return item

    def remove_drafts(self) -> None:
        """Remove the rows of interrupted, never-saved text."""
        for item in [i for i in self._items if i.kind is ItemKind.DRAFT]:
            self.remove_item(item)

    def remove_item(self, item: TranscriptItem) -> None:
        row = self.row_of(item)
        if row < 0:
            return
        if item is self._streaming:
            self._flush.stop()
            self._pending.clear()
            self._streaming = None
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._items[row]
        self.endRemoveRows()

    def append_delta(self, text: str) -> None:
        """Queue streamed text; the row changes at most once per frame."""
        if not text:
            return
        if self._streaming is None:
            item = TranscriptItem(ItemKind.ASSISTANT, streaming=True)
            item.joined, self._join_next = self._join_next, False
            self._streaming = item
            self._insert([item])
        self._pending.append(text)
        if not self._flush.isActive():
            self._flush.start()

    def flush(self) -> None:
        self._flush.stop()
        item = self._streaming
        if item is None or not self._pending:
            self._pending.clear()
            return
        item.text += "".join(self._pending)
        self._pending.clear()
        self._changed(item)

    def finish_streaming(self, *, stop_reason: str | None = None,
                         unsaved: bool = False) -> TranscriptItem | None:
        """End the live row. ``unsaved`` marks text the core did not keep (Stop mid-stream)."""
        self.flush()
        item, self._streaming = self._streaming, None
        if item is None:
            return None
        item.streaming = False
        if unsaved:
            item.kind = ItemKind.DRAFT
            item.detail = ("Stopped before this answer finished. This text was not saved "
                           "to the conversation and will not be sent to the model.")
        elif stop_reason is not None:
            item.stop_reason = stop_reason
        self._changed(item)
        return item

    def message_saved(self, message: Message) -> None:
        """A message became durable: settle the rows that show it."""
        if isinstance(message, UserMessage):
            return  # shown when sent
        if isinstance(message, InternalMessage):
            self.finish_streaming()
            self._insert(self._rows_for(message, None))
            return
        if isinstance(message, ToolMessage):
            return  # cards are updated from TOOL_RESULT
        item = self._streaming
        self.flush()
        if item is not None:
            self._streaming = None
            item.streaming = False
            item.text = message.content  # the saved text is the truth
            self._set_stop(item, message.stop_reason)
            self._changed(item)
            if not message.content:
                self.remove_item(item)
        elif message.content:
            self._insert([self._assistant_item(message)])
        for call in message.tool_calls:
            if call.id not in self._tool_rows:
                self.tool_called(call)

    def tool_called(self, call: ToolCall) -> None:
        self.flush()
        if call.id in self._tool_rows:
            return
        card = TranscriptItem(ItemKind.TOOL, call=call, state=ToolState.RUNNING)
        self._tool_rows[call.id] = card
        # The card goes after the streaming text; the text row stays open for its save.
        self._insert([card])

    def tool_result(self, message: ToolMessage) -> None:
        card = self._tool_rows.get(message.tool_call_id)
        if card is None:
            self._insert(self._rows_for(message, None))
            return
        self._apply_result(card, message)
        self._changed(card)

    def set_tool_state(self, call_id: str, state: ToolState) -> None:
        """Show a live state change of a tool card (approval asked, allowed, ...)."""
        card = self._tool_rows.get(call_id)
        if card is not None and card.state is not state:
            card.state = state
            self._changed(card)

    def continue_joined(self) -> None:
        """The next assistant text continues the previous answer (drawn as one)."""
        self._join_next = True
