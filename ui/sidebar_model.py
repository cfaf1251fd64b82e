"""The conversation list's rows: a model kept up to date by steps, never rebuilt for a change.

Rows are section headers ("Pinned", "Today", …, as rows of their own) and conversations. The
order lives in Qt (a ``QStringListModel`` of row keys: a conversation's id, or
:data:`HEADER` and a section's label), so the view lays out and counts rows without calling
Python once per row; what a row shows is read from Python dictionaries only when a visible
row is painted or asked about. :meth:`ConversationModel.show` moves, inserts and removes the
rows that changed (:func:`ui.sidebar_diff.plan`), so a new message costs one move and a
repaint of the rows in view, not a refill of 1,000 rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QStringListModel,
    Qt,
)

from .plain import plain_tooltip
from .sidebar_diff import MAX_STEPS, plan
from .sidebar_text import (
    ListedConversation,
    accessible_text,
    date_group,
    display_title,
    sections,
)

__all__ = [
    "BADGE_ROLE",
    "GROUP_ROLE",
    "HEADER",
    "SESSION_ROLE",
    "SNIPPET_ROLE",
    "ConversationModel",
    "ListedConversation",
    "Row",
    "changed_at",
    "grouped_keys",
    "is_pinned",
]

SESSION_ROLE = Qt.ItemDataRole.UserRole + 1  # a conversation's id (None on a header)
BADGE_ROLE = Qt.ItemDataRole.UserRole + 2  # whether it can be resumed
SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 3  # the search's snippet (None: not searching)
GROUP_ROLE = Qt.ItemDataRole.UserRole + 4  # a header row's label (None on a conversation)

#: A header row's key starts with it (no conversation id does).
HEADER = "\x00"

_ENABLED = (
    Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren
)


def changed_at(info: ListedConversation) -> float:
    return info.updated_at or info.created_at


def is_pinned(info: ListedConversation) -> bool:
    return info.pinned_at is not None


def grouped_keys(listing: Sequence[ListedConversation], now: datetime) -> list[str]:
    """Row keys for ``listing`` (pinned first, then newest first) under section headers."""
    ids = [info.id for info in listing]
    keys: list[str] = []
    for label, first, end in sections(listing, now):
        keys.append(HEADER + label)
        keys.extend(ids[first:end])
    return keys


class Row(NamedTuple):
    """What one row shows: a header's label, or a conversation's id, title, badge, snippet."""

    label: str | None
    session_id: str | None
    title: str
    badge: bool
    snippet: str | None


class ConversationModel(QStringListModel):
    """The rows, by key in Qt's list; per key, what the row shows (see the module)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._keys: list[str] = []  # Qt's rows, except while steps run (then ask Qt)
        self._stepping = False
        self._listed: Mapping[str, ListedConversation] = {}
        self._snippets: Mapping[str, str] = {}
        self._badges: frozenset[str] = frozenset()
        self._now = datetime.now().astimezone()
        #: Whether the rows are search results (each with a snippet, no headers).
        self.searching = False

    # --- what is shown ---------------------------------------------------------------------

    def keys(self) -> list[str]:
        return list(self._keys)

    def show(
        self,
        keys: list[str],
        listed: Mapping[str, ListedConversation],
        badges: Iterable[str],
        now: datetime,
        snippets: Mapping[str, str] | None = None,
    ) -> None:
        """Show rows ``keys`` (conversations from ``listed``, by id; with ``snippets``, search
        results): moved, inserted and removed a few at a time where that is cheaper than a
        refill; then rows are reported changed (see :meth:`_report_changes`). The mappings are
        kept, not copied: pass new ones for the next change."""
        before = (self._listed, self._snippets, self._badges)
        new_day = now.date() != self._now.date()
        self._listed, self._badges, self._now = listed, frozenset(badges), now
        self._snippets = snippets or {}
        searching = snippets is not None
        mode_changed = searching != self.searching
        self.searching = searching
        steps = None if mode_changed else plan(self._keys, keys)
        if steps is None or sum(n for kind, _row, n in steps if kind == "insert") > MAX_STEPS:
            # Many rows at once (the first listing, a search ended): one call, not a call
            # per row.
            self._keys = list(keys)
            self.setStringList(self._keys)  # a refill: the view lays the rows out again
            return
        self._stepping = True
        try:
            for kind, row, amount in steps:
                if kind == "remove":
                    self.removeRows(row, amount)
                elif kind == "move":
                    self.moveRows(QModelIndex(), row, 1, QModelIndex(), amount)
                else:
                    first = keys.index(self._key_at(row - 1)) + 1 if row else 0
                    self.insertRows(row, amount)
                    for n in range(amount):
                        super().setData(self.index(row + n), keys[first + n])
        finally:
            self._stepping = False
        self._keys = list(keys)
        self._report_changes(before, new_day)

    def _key_at(self, row: int) -> str:
        if not self._stepping and 0 <= row < len(self._keys):
            return self._keys[row]
        return str(super().data(self.index(row), Qt.ItemDataRole.DisplayRole) or "")

    def _report_changes(
        self,
        before: tuple[Mapping[str, ListedConversation], Mapping[str, str], frozenset[str]],
        new_day: bool,
    ) -> None:
        """Tell the view that rows may read differently (a new title, badge, snippet or day).
        All rows at once: the view repaints only the screenful it shows, which costs less
        than comparing 10,000 conversations field by field to find the one that changed."""
        old_listed, old_snippets, old_badges = before
        unchanged = (
            not new_day
            and old_listed is self._listed
            and old_snippets == self._snippets
            and old_badges == self._badges
        )
        if self._keys and not unchanged:
            self.dataChanged.emit(self.index(0), self.index(len(self._keys) - 1))

    def row(self, row: int) -> Row:
        """What row ``row`` shows, in one call (the delegate's, for each row it paints)."""
        key = self._key_at(row)
        if key.startswith(HEADER):
            return Row(key[len(HEADER) :], None, "", False, None)
        info = self._listed.get(key)
        title = display_title(info.title) if info is not None else ""
        return Row(None, key, title, key in self._badges, self._snippets.get(key))

    # --- Qt's questions ----------------------------------------------------------------------

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid() or self._key_at(index.row()).startswith(HEADER):
            return Qt.ItemFlag.ItemNeverHasChildren  # headers: not selectable, keys skip them
        return _ENABLED

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if not index.isValid():
            return None
        key = self._key_at(index.row())
        if key.startswith(HEADER):
            label = key[len(HEADER) :]
            if role in (GROUP_ROLE, Qt.ItemDataRole.AccessibleTextRole):
                return label
            return None
        info = self._listed.get(key)
        if info is None:  # a row being inserted, for a moment
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return display_title(info.title)
        if role == SESSION_ROLE:
            return key
        if role == BADGE_ROLE:
            return key in self._badges
        if role == SNIPPET_ROLE:
            return self._snippets.get(key)
        if role in (Qt.ItemDataRole.AccessibleTextRole, Qt.ItemDataRole.ToolTipRole):
            spoken = accessible_text(
                display_title(info.title), key in self._badges, is_pinned(info)
            )
            return spoken if role == Qt.ItemDataRole.AccessibleTextRole else plain_tooltip(spoken)
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:
            return date_group(changed_at(info), self._now)
        return None

    def setData(
        self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = 2
    ) -> bool:
        return False  # rows are not edited in place
