"""The real sidebar updated in steps (issue 18): a sent message moves one row, a new
conversation inserts one, a deletion removes one, and nothing else is rebuilt — the open
conversation stays highlighted and the list stays where it was scrolled."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from PySide6.QtCore import Qt

from app import SessionInfo
from ui.sidebar import Sidebar
from ui.sidebar_rows import BADGE_ROLE, GROUP_ROLE

NOW = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)


def _listing(count: int) -> list[SessionInfo]:
    """``count`` conversations, one changed every 2 hours going back from NOW."""
    return [
        SessionInfo(
            f"c{n:03d}",
            f"Conversation {n}",
            (NOW - timedelta(hours=2 * n + 1)).timestamp(),
            (NOW - timedelta(hours=2 * n + 1)).timestamp(),
            2,
        )
        for n in range(count)
    ]


class Signals:
    """What the model told its view."""

    def __init__(self, side: Sidebar) -> None:
        self.seen: list[str] = []
        model = side.model
        model.modelReset.connect(lambda: self.seen.append("reset"))
        model.rowsMoved.connect(lambda *_a: self.seen.append("moved"))
        model.rowsInserted.connect(lambda *_a: self.seen.append("inserted"))
        model.rowsRemoved.connect(lambda *_a: self.seen.append("removed"))


def _sidebar(qtbot: Any, listing: list[SessionInfo]) -> Sidebar:
    side = Sidebar()
    qtbot.addWidget(side)
    side.clock = lambda: NOW
    side.resize(260, 500)
    side.show()
    qtbot.waitExposed(side)
    side.set_sessions(listing, set())
    return side


def test_a_sent_message_moves_one_row_and_keeps_the_highlight_and_scroll(qtbot: Any) -> None:
    listing = _listing(300)
    side = _sidebar(qtbot, listing)
    side.set_current("c150")
    bar = side.list.verticalScrollBar()
    scrolled = bar.value()
    assert scrolled > 0
    signals = Signals(side)
    moved = replace(listing[200], updated_at=NOW.timestamp())
    listing = [moved, *(info for info in listing if info.id != moved.id)]
    side.set_sessions(listing, set())
    assert signals.seen == ["moved"]
    assert side.session_ids() == [info.id for info in listing]
    assert side.current_id() == "c150" and bar.value() == scrolled
    assert side.group_headers()[0] == (0, "Today")
    # A new conversation is one insertion; a deleted one, one removal.
    new = SessionInfo("new", "Brand new", NOW.timestamp() + 1, NOW.timestamp() + 1, 0)
    side.set_sessions([new, *listing], set())
    assert signals.seen == ["moved", "inserted"]
    assert side.session_ids()[:2] == ["new", "c200"]
    side.set_sessions([new, *(info for info in listing if info.id != "c010")], set())
    assert signals.seen == ["moved", "inserted", "removed"]
    assert "c010" not in side.session_ids() and side.current_id() == "c150"


def test_a_badge_or_a_title_changes_the_row_in_place(qtbot: Any) -> None:
    listing = _listing(40)
    side = _sidebar(qtbot, listing)
    signals = Signals(side)
    changed: list[tuple[int, int]] = []
    side.model.dataChanged.connect(
        lambda top, bottom, *_a: changed.append((top.row(), bottom.row()))
    )
    side.set_sessions(listing, {"c005"})
    assert signals.seen == [] and changed
    assert side.index_of("c005").data(BADGE_ROLE) is True
    assert "can be resumed" in side.index_of("c005").data(Qt.ItemDataRole.ToolTipRole)
    renamed = [replace(info, title="Renamed") if info.id == "c007" else info for info in listing]
    side.set_sessions(renamed, {"c005"})
    assert signals.seen == [] and side.index_of("c007").data() == "Renamed"
    assert side.title_of("c007") == "Renamed"


def test_pinning_moves_the_row_under_a_pinned_header_and_back(qtbot: Any) -> None:
    listing = _listing(60)
    side = _sidebar(qtbot, listing)
    signals = Signals(side)
    pinned = [
        replace(info, pinned_at=NOW.timestamp()) if info.id == "c030" else info for info in listing
    ]
    side.set_sessions(pinned, set())
    assert "reset" not in signals.seen
    assert side.session_ids()[0] == "c030" and side.group_headers()[:2] == [
        (0, "Pinned"),
        (1, "Today"),
    ]
    header = side.list.model().index(0, 0)
    assert header.data(GROUP_ROLE) == "Pinned" and not header.flags() & Qt.ItemFlag.ItemIsEnabled
    side.set_sessions(listing, set())
    assert side.session_ids() == [info.id for info in listing]
    assert "reset" not in signals.seen


def test_a_search_and_back_shows_every_conversation_again(qtbot: Any) -> None:
    listing = _listing(120)
    side = _sidebar(qtbot, listing)
    side.set_current("c100")
    side.search.setText("penguins")  # in no title: only the message hits are listed
    side.set_search_results([("c100", "[penguins] 100"), ("c003", "[penguins] 3")])
    assert side.session_ids() == ["c100", "c003"] and side.current_id() == "c100"
    side.search.clear()
    side.show_all()
    assert side.session_ids() == [info.id for info in listing]
    assert side.current_id() == "c100"
    rows = {side.list.visualRect(side.list.model().index(r, 0)).height() for r in range(10)}
    assert len(rows) == 1  # back to the plain row height, no snippet room
