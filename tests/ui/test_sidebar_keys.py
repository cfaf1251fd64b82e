"""The sidebar's own keys and menu, through real Qt events (typed slots, issue 12): Delete,
the context menu, and moving with the keyboard, which opens the conversation moved to (issue
16) — in the widget and in the real window, where the highlight never disagrees with what is
open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from app import SessionInfo, UserMessage
from app.simulator import Reply
from tests.ui.helpers import make_services, until, window_on_simulator
from ui import sidebar as sidebar_module
from ui.sidebar import SESSION_ROLE, Sidebar


def _sidebar(qtbot: Any) -> Sidebar:
    side = Sidebar()
    qtbot.addWidget(side)
    side.set_sessions(
        [SessionInfo("a", "First", 1.0, 1.0, 1), SessionInfo("b", "Second", 2.0, 2.0, 1)], {"a"}
    )
    side.resize(300, 400)
    side.show()
    return side


@pytest.mark.parametrize("confirmed", [True, False])
def test_delete_key_asks_then_deletes_the_current_conversation(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, confirmed: bool
) -> None:
    side = _sidebar(qtbot)
    asked: list[str] = []

    def answer(_parent: Any, _title: str, text: str) -> bool:
        asked.append(text)
        return confirmed

    monkeypatch.setattr(sidebar_module, "ask_confirmation", answer)
    deleted: list[str] = []
    side.deleteRequested.connect(deleted.append)
    side.list.setCurrentIndex(side.index_of("a"))  # newest first: "First" is the second
    QTest.keyClick(side.list, Qt.Key.Key_Delete)
    assert asked == ["Delete “First” and all its messages? This cannot be undone."]
    assert deleted == (["a"] if confirmed else [])


# A popup menu raises and grabs the keyboard, which the offscreen platform cannot (harmless).
@pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing the keyboard"
)
def test_context_menu_rename_emits_the_new_title(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = _sidebar(qtbot)
    monkeypatch.setattr(sidebar_module, "ask_title", lambda _p, current: current + " (2)")
    renamed: list[tuple[str, str]] = []
    side.renameRequested.connect(lambda sid, title: renamed.append((sid, title)))

    def choose_rename() -> None:
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        menu.setActiveAction(menu.actions()[0])
        QTest.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(0, choose_rename)
    rect = side.list.visualRect(side.index_of("b"))
    side.list.customContextMenuRequested.emit(QPoint(rect.center()))
    assert renamed == [("b", "Second (2)")]


def _three(qtbot: Any) -> tuple[Sidebar, list[str]]:
    side = Sidebar()
    qtbot.addWidget(side)
    side.set_sessions(
        [
            SessionInfo("a", "Apples", 1.0, 1.0, 1),
            SessionInfo("b", "Bananas", 2.0, 2.0, 1),
            SessionInfo("c", "Cherries", 3.0, 3.0, 1),
        ],
        set(),
    )
    side.resize(300, 400)
    side.show()
    opened: list[str] = []
    side.sessionActivated.connect(opened.append)
    side.set_current("c")  # newest first: Cherries is row 0
    side.list.setFocus()
    return side, opened


def test_arrow_keys_open_the_conversation_they_move_to(qtbot: Any) -> None:
    side, opened = _three(qtbot)
    QTest.keyClick(side.list, Qt.Key.Key_Down)
    assert opened == ["b"] and side.list.currentIndex().data(SESSION_ROLE) == "b"
    side.set_current("b")  # what the window does once it is open
    QTest.keyClick(side.list, Qt.Key.Key_Down)
    side.set_current("a")
    QTest.keyClick(side.list, Qt.Key.Key_Down)  # already at the end: nothing moves, nothing opens
    assert opened == ["b", "a"]
    QTest.keyClick(side.list, Qt.Key.Key_Home)
    side.set_current("c")
    QTest.keyClick(side.list, Qt.Key.Key_End)
    assert opened == ["b", "a", "c", "a"]
    side.set_current("a")
    # Enter on the open conversation does not open it again; Up does open the one above.
    QTest.keyClick(side.list, Qt.Key.Key_Return)
    QTest.keyClick(side.list, Qt.Key.Key_Up)
    assert opened == ["b", "a", "c", "a", "b"]
    # Typing a title's first letter jumps there and opens it, as the arrows do.
    side.set_current("b")
    QTest.keyClicks(side.list, "c")
    assert opened[-1] == "c" and _selected(side) == ["c"]


@pytest.mark.parametrize("key", [Qt.Key.Key_Down, Qt.Key.Key_Return])
def test_down_or_enter_in_the_search_field_opens_the_first_result(qtbot: Any, key: Qt.Key) -> None:
    side, opened = _three(qtbot)
    side.search.setFocus()
    side.search.setText("yellow")  # in no title: only the message hits are listed
    side.set_search_results([("b", "Bananas are [yellow]"), ("a", "a [yellow] apple")])
    QTest.keyClick(side.search, key)
    assert opened == ["b"] and side.list.currentIndex().row() == 0
    assert side.search.text() == "yellow"  # the query stays
    side.set_search_results([])
    QTest.keyClick(side.search, key)  # nothing to open: nothing happens
    assert opened == ["b"]


def test_escape_in_the_search_field_clears_it(qtbot: Any) -> None:
    side, _opened = _three(qtbot)
    side.search.setFocus()
    QTest.keyClicks(side.search, "ban")
    QTest.keyClick(side.search, Qt.Key.Key_Escape)
    assert side.search.text() == ""


def test_the_highlight_is_only_on_the_open_conversation(qtbot: Any) -> None:
    side, _opened = _three(qtbot)
    assert _selected(side) == ["c"]
    side.set_current(None)  # a new, empty conversation: nothing in the list is open
    assert _selected(side) == []
    side.set_current("a")
    assert _selected(side) == ["a"]
    # A refill (a rename elsewhere, a new message) keeps the highlight on what is open.
    side.set_sessions(
        [SessionInfo("a", "Apples!", 1.0, 9.0, 2), SessionInfo("b", "Bananas", 2.0, 2.0, 1)], set()
    )
    assert _selected(side) == ["a"]
    assert side.session_ids() == ["a", "b"]


def _selected(side: Sidebar) -> list[str]:
    return [str(i.data(SESSION_ROLE)) for i in side.list.selectionModel().selectedIndexes()]


def _highlighted(window: Any) -> str | None:
    side = window.sidebar
    current = side.current_id()
    return current if current is not None and _selected(side) == [current] else None


def test_arrow_keys_in_the_window_open_and_the_highlight_follows(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        ids = []
        for title in ("Oldest", "Middle", "Newest"):
            session = await services.new_session(title)
            await services.storage.storage.append(session.id, "r", UserMessage(f"about {title}"))
            ids.append(session.id)
        await services.close()
        oldest, middle, newest = ids
        async with window_on_simulator(tmp_path) as (sim, window):
            c = window.controller
            await until(lambda: c.session_id == newest, what="the newest opened at start")
            listing = window.sidebar.list
            listing.setFocus()
            QTest.keyClick(listing, Qt.Key.Key_Down)
            await until(lambda: c.session_id == middle and not c.busy, what="Down opened it")
            assert _highlighted(window) == middle
            assert window.transcript_model.rowCount() >= 1  # its history is shown
            QTest.keyClick(listing, Qt.Key.Key_Down)
            QTest.keyClick(listing, Qt.Key.Key_Up)  # quickly: the last move wins
            await until(lambda: c.session_id == middle, what="Up opened it")
            await until(lambda: _highlighted(window) == middle, what="highlight on it")
            # Esc in the search field clears it (no answer running: nothing to stop).
            QTest.keyClicks(window.sidebar.search, "Old")
            QTest.keyClick(window.sidebar.search, Qt.Key.Key_Escape)
            assert window.sidebar.search.text() == ""
            # While an answer streams, moving is refused and the highlight comes back.
            sim.enqueue(Reply(tokens=3000, tokens_per_second=200))
            assert c.send("A long story, please")
            await until(lambda: c.busy, what="streaming")
            QTest.keyClick(listing, Qt.Key.Key_Down)
            assert _highlighted(window) == oldest  # moved for a moment...
            await until(lambda: _highlighted(window) == middle, what="highlight back")
            assert c.session_id == middle
            assert "Stop the running answer" in window.statusBar().currentMessage()
            c.stop()
            await until(lambda: not c.busy, what="stopped")

    run(scenario(), timeout=60)
