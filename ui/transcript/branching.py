"""The transcript's rows for a branch of the conversation tree: which message each row shows
(its seq) and where the version arrows ``‹ 2 / 3 ›`` go. Pure Python, no Qt.

A group of versions is a set of messages sharing a parent (:meth:`app.storage.base.SessionStore.
versions`). A person's message carries its own arrows, in its bubble's action bar. An answer's
versions start at the first message after the question (an answer, or a step asking for tools);
their arrows go under the answer's last text row of that turn, where a person reads the answer
and its actions, as the chat apps people use do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app import StoredMessage

from .rows import ItemKind, Rows, ToolState, TranscriptItem

__all__ = ["place_versions", "rows_from_branch", "version_label", "version_step"]


def rows_from_branch(
    records: Iterable[StoredMessage], versions: Iterable[tuple[int, ...]] = ()
) -> Rows:
    """The rows of a saved branch (as :func:`~.rows.rows_from_history`), each knowing its
    message's seq, with the version arrows placed."""
    rows = Rows()
    for record in records:
        items = rows.rows_for(record.message)
        for item in items:  # tool cards too: a step that only asked for tools starts an answer
            item.seq = record.seq
        rows.append(items)
    for call_id in rows.unsettled_tools():
        card = rows.tool(call_id)
        if card is not None and card.state is ToolState.RUNNING:
            card.state = ToolState.UNKNOWN
    place_versions(rows.items, versions)
    return rows


def place_versions(
    items: Sequence[TranscriptItem], versions: Iterable[tuple[int, ...]]
) -> list[TranscriptItem]:
    """Give each row the versions it switches between; returns the rows that changed."""
    group_of = {seq: group for group in versions for seq in group}
    wanted: dict[int, tuple[tuple[int, ...], int]] = {}  # row index -> (group, shown seq)
    turn_start: int | None = None  # the answer's first message seq, if it has versions
    started = False  # a row of the answer (with a seq) has been seen in this turn
    answer_row: int | None = None

    def close_turn() -> None:
        if turn_start is not None and answer_row is not None:
            wanted[answer_row] = (group_of[turn_start], turn_start)

    if group_of:  # a conversation that never forked: nothing to place, only to clear
        for index, item in enumerate(items):
            if item.kind is ItemKind.USER:
                close_turn()
                turn_start, started, answer_row = None, False, None
                if item.seq is not None and item.seq in group_of:
                    wanted[index] = (group_of[item.seq], item.seq)
                continue
            if item.seq is not None and not started:
                started = True
                turn_start = item.seq if item.seq in group_of else None
            if item.kind is ItemKind.ASSISTANT and item.text:
                answer_row = index
        close_turn()
    changed = []
    for index, item in enumerate(items):
        group, shown = wanted.get(index, ((), None))
        if (item.versions, item.version_seq) != (group, shown):
            item.versions, item.version_seq = group, shown
            item.touch()
            changed.append(item)
    return changed


def version_label(item: TranscriptItem) -> str:
    """``"2 / 3"``: which version the row shows, of how many ("" for a single version)."""
    if len(item.versions) < 2 or item.version_seq not in item.versions:
        return ""
    return f"{item.versions.index(item.version_seq) + 1} / {len(item.versions)}"


def version_step(item: TranscriptItem, step: int) -> int | None:
    """The seq of the version ``step`` away (-1: previous, +1: next); ``None`` at an end."""
    if item.version_seq not in item.versions:
        return None
    at = item.versions.index(item.version_seq) + step
    return item.versions[at] if 0 <= at < len(item.versions) else None
