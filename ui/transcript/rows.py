"""The transcript's rows, derived from messages and agent events: pure Python, no Qt.

Rows are not the stored messages one to one: an assistant step becomes a text row plus one tool
card per call, and a tool result updates its card instead of adding a row. :func:`rows_from_history`
turns a saved conversation into :class:`Rows`; each live event is a method of :class:`Rows` that
returns a :class:`RowChange` (rows to remove, rows to append, rows whose data changed) and never
touches the row list itself: the Qt model (``model.py``) applies the change between Qt's
begin/end calls. A tool card's state comes from the result's recorded outcome
(:func:`tool_state`); only results saved before outcomes existed are read from their text.
What the model thought before answering (its reasoning) rides on the answer's row, collapsed
under a one-line label (:func:`reasoning_label`); it is never part of the answer's text.
While a resumed answer streams right under an interrupted draft, the draft is the *previous
attempt*: collapsed to its first lines (:func:`collapsed`) and drawn dimmed; the answer that
finishes removes it, and a new interrupted attempt replaces it (the journal keeps only that one).
"""

from __future__ import annotations

import enum
import itertools
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from app import (
    CANCELLED_TOOL_TEXT,
    DENIED_TOOL_TEXT,
    NOT_STARTED_TOOL_TEXT,
    RECOVERED_TOOL_TEXT,
    AssistantMessage,
    InternalMessage,
    Message,
    Reasoning,
    StopReason,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from app.services import (
    CONTINUE_TEXT,
    MAY_STILL_COMPLETE,
    RETRY_TEXT,
    FilePart,
    ImagePart,
    ToolOutcome,
    attachment_parts,
    content_text,
)

__all__ = [
    "PREVIOUS_ATTEMPT",
    "UNSETTLED",
    "ItemKind",
    "collapsed",
    "RowChange",
    "Rows",
    "ToolState",
    "TranscriptItem",
    "copy_text",
    "note_label",
    "reasoning_label",
    "rows_from_history",
    "shown_stop_reason",
    "tool_state",
]


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
    NOT_RUN = "not_run"  # answered without running: Stop came before it started
    UNKNOWN = "unknown"  # interrupted: the app stopped while it ran; may or may not have run


#: The header of a draft whose resumed answer is streaming below it.
PREVIOUS_ATTEMPT: Final = "Previous attempt (interrupted) — replaced by the answer below"
_PREVIOUS_DETAIL: Final = (
    "The text that was on screen when this answer was interrupted; it was never saved or "
    "sent to the model. The resumed answer below replaces it."
)
#: How much of a previous attempt stays shown.
COLLAPSED_LINES: Final = 3
COLLAPSED_CHARS: Final = 240

UNSETTLED: Final = frozenset({ToolState.RUNNING, ToolState.AWAITING_APPROVAL})
"""Card states that a finished request must not leave behind (see :meth:`Rows.settle`)."""

_OUTCOME_STATES: Final[dict[ToolOutcome, ToolState]] = {
    ToolOutcome.DONE: ToolState.DONE,
    ToolOutcome.FAILED: ToolState.FAILED,
    ToolOutcome.DENIED: ToolState.DENIED,
    ToolOutcome.CANCELLED: ToolState.CANCELLED,
    ToolOutcome.NOT_STARTED: ToolState.NOT_RUN,
    ToolOutcome.MAY_HAVE_RUN: ToolState.UNKNOWN,
}

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
    progress: str = ""  # the running tool's last progress report, in words
    # Tool cards: arguments and result shown; answers: their reasoning shown.
    expanded: bool = False
    # Answers: what the model thought first (the parts' texts), how long (``None``: unknown),
    # how many parts the provider hid (redacted), and whether it is thinking right now
    # (reasoning streams and no answer text has arrived yet).
    reasoning: str = ""
    reasoning_seconds: float | None = None
    reasoning_hidden: int = 0
    thinking: bool = False
    thinking_since: float | None = None  # live: when the first reasoning arrived (a clock's s)
    # Notes: a short visible label; the full internal text goes in the tooltip.
    detail: str = ""
    # Drafts: the previous attempt of the answer streaming below (collapsed, dimmed).
    superseded: bool = False
    # Answers: the tokens the provider reported for the step (``None``: none reported).
    usage: Usage | None = None
    # The person's messages and answers: the saved message's seq (``None``: not saved yet).
    seq: int | None = None
    # The versions this row switches between (seqs of messages sharing a parent, oldest
    # first) and which of them is shown (``version_seq``); empty: a single version.
    versions: tuple[int, ...] = ()
    version_seq: int | None = None
    # The person's messages: their images and files (shown above the text: .attachments); tool
    # cards: the tool's images (under the card's line).
    attachments: tuple[ImagePart | FilePart, ...] = ()
    uid: int = field(default_factory=lambda: next(_ids))
    version: int = 0  # bumped on every change: renders are cached per (uid, version)

    def touch(self) -> None:
        self.version += 1

    @property
    def arguments_text(self) -> str:
        if self.call is None:
            return ""
        return json.dumps(self.call.arguments_dict(), indent=2, ensure_ascii=False)

    @property
    def has_reasoning(self) -> bool:
        return bool(self.reasoning or self.reasoning_hidden or self.thinking)

    def set_reasoning(self, parts: Iterable[Reasoning]) -> None:
        """Show the saved ``parts`` (the saved message is the truth; seconds are summed)."""
        parts = tuple(parts)
        self.reasoning = "\n\n".join(part.text for part in parts if part.text)
        self.reasoning_hidden = sum(1 for part in parts if part.redacted is not None)
        known = [part.seconds for part in parts if part.seconds is not None]
        self.reasoning_seconds = sum(known) if known else None
        self.thinking = False

    def accessible_text(self) -> str:
        if self.kind is ItemKind.TOOL and self.call is not None:
            return f"Tool {self.call.name}: {self.state or ''}"
        label = reasoning_label(self)
        thought = f" ({label})" if label else ""
        kind = PREVIOUS_ATTEMPT if self.superseded else self.kind.value
        return f"{kind}{thought}: {self.text[:500]}"


def _duration(seconds: float) -> str:
    if seconds < 0.5:
        return "less than 1 s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def reasoning_label(item: TranscriptItem) -> str:
    """The collapsed line over an answer's reasoning, as plain text ("": no reasoning).

    "Thinking…" while it streams before any answer text; "Thought for N s" once the duration
    is known (the saved parts' seconds, summed); "Thought" when it is not; parts the provider
    redacted are counted as hidden.
    """
    if item.kind not in (ItemKind.ASSISTANT, ItemKind.DRAFT) or not item.has_reasoning:
        return ""
    if item.thinking:
        return "Thinking…"
    label = "Thought"
    if item.reasoning_seconds is not None:
        label += f" for {_duration(item.reasoning_seconds)}"
    if item.reasoning_hidden:
        label += (
            " (some of it hidden by the provider)"
            if item.reasoning
            else " (hidden by the provider)"
        )
    return label


def copy_text(item: TranscriptItem) -> str:
    """What "Copy message" puts on the clipboard for ``item``.

    An answer's reasoning is copied only while it is shown (expanded): first its label and
    text, then the answer. Collapsed, only the answer is copied.
    """
    if item.kind is ItemKind.TOOL:
        name = item.call.name if item.call else ""
        return f"{name}\n{item.arguments_text}\n{item.result or ''}"
    if item.expanded and item.reasoning:
        return f"{reasoning_label(item)}:\n{item.reasoning}\n\n{item.text}"
    return item.text


def collapsed(text: str) -> str:
    """The first lines of ``text`` (at most :data:`COLLAPSED_LINES` lines and
    :data:`COLLAPSED_CHARS` characters), with "…" where it was cut."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    shown = "\n".join(lines[:COLLAPSED_LINES])
    if len(shown) > COLLAPSED_CHARS:  # at a word's end when there is one near
        shown = shown[:COLLAPSED_CHARS]
        word_end = shown.rfind(" ", COLLAPSED_CHARS - 40)
        shown = shown[:word_end] if word_end > 0 else shown
    elif len(lines) <= COLLAPSED_LINES:
        return shown
    return shown.rstrip() + " …"


def note_label(content: str) -> str:
    """A short label for an internal message (the model reads the long text, people this)."""
    if content == CONTINUE_TEXT:
        return "Continued after the output limit"
    if content == RETRY_TEXT:
        return "Asked the model to redo the interrupted response"
    first = content.strip().splitlines()[0] if content.strip() else ""
    return first if len(first) <= 120 else first[:117] + "…"


def shown_stop_reason(reason: StopReason | str | None) -> str | None:
    """The stop reason an answer's footer names (``None``: a normal end, no footer)."""
    if reason in (None, StopReason.END_TURN, StopReason.TOOL_USE):
        return None
    return str(reason)


def tool_state(message: ToolMessage) -> ToolState:
    """How a tool card shows ``message``, the call's answer: from its recorded outcome.

    A result saved before outcomes were recorded (``outcome`` is ``None``) is read from its
    success flag and the core's fixed texts.
    """
    outcome = getattr(message, "outcome", None)
    if outcome is not None:
        return _OUTCOME_STATES[ToolOutcome(outcome)]
    if message.content == RECOVERED_TOOL_TEXT:
        return ToolState.UNKNOWN
    if message.success:
        return ToolState.DONE
    if MAY_STILL_COMPLETE in message.content:
        return ToolState.UNKNOWN
    return {
        DENIED_TOOL_TEXT: ToolState.DENIED,
        CANCELLED_TOOL_TEXT: ToolState.CANCELLED,
        NOT_STARTED_TOOL_TEXT: ToolState.NOT_RUN,
    }.get(message.content, ToolState.FAILED)


@dataclass(slots=True)
class RowChange:
    """What one event does to the rows, applied in this order: remove, append, announce."""

    remove: list[TranscriptItem] = field(default_factory=list)
    insert: list[TranscriptItem] = field(default_factory=list)  # appended at the end
    changed: list[TranscriptItem] = field(default_factory=list)  # already shown, data changed

    def __bool__(self) -> bool:
        return bool(self.remove or self.insert or self.changed)

    def then(self, other: RowChange) -> RowChange:
        """This change followed by ``other`` (one change for a compound event)."""
        self.remove.extend(other.remove)
        self.insert.extend(other.insert)
        self.changed.extend(item for item in other.changed if item not in self.changed)
        return self


def _answer(card: TranscriptItem, message: ToolMessage) -> None:
    card.result = message.content
    card.state = tool_state(message)
    card.attachments = message.images  # the tool's images: thumbnails on its card
    card.touch()


def _card(call: ToolCall, state: ToolState | None = ToolState.RUNNING) -> TranscriptItem:
    return TranscriptItem(ItemKind.TOOL, call=call, state=state)


class Rows:
    """The rows of one conversation and what live events need to find in them.

    ``items`` is changed only by :meth:`append` and :meth:`remove_at` (the Qt model calls them
    between its begin/end signals); every other method returns the :class:`RowChange` to apply.
    """

    def __init__(self) -> None:
        self.items: list[TranscriptItem] = []
        self._tools: dict[str, TranscriptItem] = {}  # call id -> its card
        self.streaming: TranscriptItem | None = None  # the live answer row, if any
        self.join_next = False  # the next assistant text continues the one before

    # --- reading ---------------------------------------------------------------------------

    def row_of(self, item: TranscriptItem) -> int:
        for row in range(len(self.items) - 1, -1, -1):
            if self.items[row] is item:
                return row
        return -1

    def tool(self, call_id: str) -> TranscriptItem | None:
        return self._tools.get(call_id)

    def unsettled_tools(self) -> list[str]:
        """Call ids of the cards still shown running or awaiting approval."""
        return [call_id for call_id, card in self._tools.items() if card.state in UNSETTLED]

    # --- the list itself (the adapter's begin/end brackets these) --------------------------

    def append(self, items: Iterable[TranscriptItem]) -> None:
        self.items.extend(items)

    def remove_at(self, row: int) -> None:
        del self.items[row]

    def prepend(self, older: Rows) -> None:
        """Put ``older`` (the rows of the messages before these) in front of these rows."""
        self.items[:0] = older.items
        self._tools = {**older._tools, **self._tools}

    # --- messages --------------------------------------------------------------------------

    def rows_for(self, message: Message) -> list[TranscriptItem]:
        """The new rows ``message`` adds (a tool result whose card exists only updates it)."""
        if isinstance(message, UserMessage):
            self.join_next = False
            parts = attachment_parts(message.content)
            return [TranscriptItem(ItemKind.USER, content_text(message), attachments=parts)]
        if isinstance(message, InternalMessage):
            self.join_next = message.content == CONTINUE_TEXT
            return [
                TranscriptItem(ItemKind.NOTE, note_label(message.content), detail=message.content)
            ]
        if isinstance(message, ToolMessage):
            card = self._tools.get(message.tool_call_id)
            if card is not None:
                _answer(card, message)
                return []
            # A result whose call is not on screen: show it as its own card.
            card = _card(ToolCall(message.tool_call_id, message.name), None)
            _answer(card, message)
            return [card]
        rows: list[TranscriptItem] = []
        if message.content or message.reasoning or not message.tool_calls:
            rows.append(self._assistant_item(message))
        for call in message.tool_calls:
            card = _card(call)
            self._tools[call.id] = card
            rows.append(card)
        return rows

    def _assistant_item(self, message: AssistantMessage) -> TranscriptItem:
        item = TranscriptItem(
            ItemKind.ASSISTANT, message.content, stop_reason=shown_stop_reason(message.stop_reason)
        )
        item.set_reasoning(message.reasoning)
        item.usage = message.usage
        item.joined, self.join_next = self.join_next, False
        return item

    # --- live events -----------------------------------------------------------------------

    def add_user(self, text: str, attachments: Sequence[ImagePart | FilePart] = ()) -> RowChange:
        change = self.finish_streaming()
        self.join_next = False
        item = TranscriptItem(ItemKind.USER, text, attachments=tuple(attachments))
        return change.then(RowChange(insert=[item]))

    @staticmethod
    def add_draft(text: str, detail: str) -> RowChange:
        return RowChange(insert=[TranscriptItem(ItemKind.DRAFT, text, detail=detail)])

    def remove(self, item: TranscriptItem) -> RowChange:
        if self.row_of(item) < 0:
            return RowChange()
        if item is self.streaming:
            self.streaming = None
        return RowChange(remove=[item])

    def remove_drafts(self) -> RowChange:
        """Remove the rows of interrupted, never-saved text."""
        change = RowChange()
        for item in [i for i in self.items if i.kind is ItemKind.DRAFT]:
            change.then(self.remove(item))
        return change

    def start_streaming(self) -> RowChange:
        """Open the live answer row unless one is open; a draft right above it (notes aside:
        a resumed request) becomes its previous attempt."""
        if self.streaming is not None:
            return RowChange()
        change = self.supersede_draft()
        item = TranscriptItem(ItemKind.ASSISTANT, streaming=True)
        item.joined, self.join_next = self.join_next, False
        self.streaming = item
        return change.then(RowChange(insert=[item]))

    def supersede_draft(self) -> RowChange:
        """Collapse and dim the interrupted draft an answer starting now replaces: the last row,
        or the last before the notes a resumed request adds (a new message is not one)."""
        for item in reversed(self.items):
            if item.kind is ItemKind.NOTE:
                continue
            if item.kind is not ItemKind.DRAFT or item.superseded:
                return RowChange()
            item.superseded = True
            item.text = collapsed(item.text)
            item.expanded = False
            item.detail = _PREVIOUS_DETAIL
            item.touch()
            return RowChange(changed=[item])
        return RowChange()

    def grow(self, text: str, at: float | None = None) -> RowChange:
        """Add streamed ``text`` to the live answer row (the thinking, if any, is over).

        ``at``: when the text arrived (the clock ``grow_reasoning`` was given): the thinking's
        duration is shown at once; the saved message's own figure replaces it.
        """
        item = self.streaming
        if item is None or not text:
            return RowChange()
        item.text += text
        if item.thinking and at is not None and item.thinking_since is not None:
            item.reasoning_seconds = max(at - item.thinking_since, 0.0)
        item.thinking = False
        item.touch()
        return RowChange(changed=[item])

    def grow_reasoning(self, text: str, at: float | None = None) -> RowChange:
        """Add streamed reasoning ``text`` (arrived ``at``) to the live answer row, opening it
        if needed. The row shows "Thinking…" until answer text arrives.
        """
        if not text:
            return RowChange()
        change = self.start_streaming()
        item = self.streaming
        assert item is not None
        if item.thinking_since is None:
            item.thinking_since = at
        item.reasoning += text
        item.thinking = not item.text
        item.touch()
        if item not in change.insert:
            change.changed.append(item)
        return change

    def finish_streaming(
        self, *, stop_reason: str | None = None, unsaved: bool = False
    ) -> RowChange:
        """End the live row. ``unsaved`` marks text the core did not keep (Stop mid-stream)."""
        item, self.streaming = self.streaming, None
        if item is None:
            return RowChange()
        item.streaming = False
        item.thinking = False
        change = RowChange(changed=[item])
        if unsaved:
            item.kind = ItemKind.DRAFT
            item.detail = (
                "Stopped before this answer finished. This text was not saved "
                "to the conversation and will not be sent to the model."
            )
            # The newer interrupted attempt replaces the previous one (as in the journal).
            for old in [i for i in self.items if i.superseded]:
                change.then(self.remove(old))
        elif stop_reason is not None:
            item.stop_reason = stop_reason
        item.touch()
        return change

    def message_saved(self, message: Message, seq: int | None = None) -> RowChange:
        """A message became durable (as ``seq``): settle the rows that show it."""
        if isinstance(message, UserMessage):
            for row in reversed(self.items):  # shown when sent: it learns its seq now
                if row.kind is ItemKind.USER:
                    if row.seq is None:
                        row.seq = seq
                    break
            return RowChange()
        if isinstance(message, ToolMessage):
            return RowChange()  # cards are updated from the tool result
        if isinstance(message, InternalMessage):
            return self.finish_streaming().then(RowChange(insert=self.rows_for(message)))
        change = RowChange()
        item, self.streaming = self.streaming, None
        if item is not None:
            item.streaming = False
            item.seq = seq
            item.text = message.content  # the saved text is the truth
            item.set_reasoning(message.reasoning)
            item.stop_reason = shown_stop_reason(message.stop_reason)
            item.usage = message.usage
            item.touch()
            change.changed.append(item)
            if not message.content and not message.reasoning:
                change.then(self.remove(item))
        elif message.content or message.reasoning:
            change.insert.append(self._assistant_item(message))
            change.insert[-1].seq = seq
        for call in message.tool_calls:
            change.then(self.tool_called(call))
        return change

    def tool_called(self, call: ToolCall) -> RowChange:
        if call.id in self._tools:
            return RowChange()
        card = _card(call)
        self._tools[call.id] = card
        # The card goes after the streaming text; the text row stays open for its save.
        return RowChange(insert=[card])

    def tool_result(self, message: ToolMessage) -> RowChange:
        card = self._tools.get(message.tool_call_id)
        if card is None:
            return RowChange(insert=self.rows_for(message))
        _answer(card, message)
        return RowChange(changed=[card])

    def set_tool_state(self, call_id: str, state: ToolState) -> RowChange:
        """A live state change of a tool card (approval asked, allowed, ...)."""
        card = self._tools.get(call_id)
        if card is None or card.state is state:
            return RowChange()
        card.state = state
        card.touch()
        return RowChange(changed=[card])

    def set_tool_progress(self, call_id: str, words: str) -> RowChange:
        """A running tool's progress report (shown on its card while it runs)."""
        card = self._tools.get(call_id)
        if card is None or card.progress == words:
            return RowChange()
        card.progress = words
        card.touch()
        return RowChange(changed=[card])

    def mark_requested(self, call_ids: Iterable[str]) -> RowChange:
        """Calls known never to have started (awaiting approval at a crash): not "unknown"."""
        change = RowChange()
        for call_id in call_ids:
            card = self._tools.get(call_id)
            if card is not None and card.state is ToolState.UNKNOWN:
                change.then(self.set_tool_state(call_id, ToolState.REQUESTED))
        return change

    def settle(self, history: Iterable[Message], call_ids: Collection[str]) -> RowChange:
        """After Stop or a failure during tools: show how the cards of ``call_ids`` ended.

        The saved answer of a call decides its state; a card still unsettled without one may or
        may not have run.
        """
        change = RowChange()
        for message in history:
            if isinstance(message, ToolMessage) and message.tool_call_id in call_ids:
                card = self._tools.get(message.tool_call_id)
                if card is not None and card.state in UNSETTLED:
                    change.then(self.tool_result(message))
        for call_id in call_ids:
            card = self._tools.get(call_id)
            if card is not None and card.state in UNSETTLED:
                change.then(self.set_tool_state(call_id, ToolState.UNKNOWN))
        return change


def rows_from_history(messages: Iterable[Message]) -> Rows:
    """The rows of a saved conversation; a call without an answer was cut off while it ran."""
    rows = Rows()
    for message in messages:
        rows.append(rows.rows_for(message))
    for call_id in rows.unsettled_tools():
        card = rows.tool(call_id)
        if card is not None and card.state is ToolState.RUNNING:
            card.state = ToolState.UNKNOWN
    return rows
