"""Pinned conversations in the sidebar: the words (table tests), and in the real window: Pin
to top from a row's context menu moves it to the top under "Pinned", Ctrl+Shift+P unpins the
open one, and the pin survives closing and reopening the window on the same data folder."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from app import UserMessage
from tests.ui.helpers import make_services, until, window_on_simulator
from ui.sidebar_text import PINNED, accessible_text, pin_action_text, section_labels

NOW = datetime(2026, 12, 3, 12, 0)
TODAY = NOW.timestamp() - 3600
LAST_WEEK = NOW.timestamp() - 3 * 86400


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([(TODAY, False), (LAST_WEEK, False)], ["Today", "Previous 7 days"]),
        ([(LAST_WEEK, True), (TODAY, False)], [PINNED, "Today"]),
        ([(LAST_WEEK, True), (TODAY, True), (TODAY, False)], [PINNED, None, "Today"]),
        ([(TODAY, True)], [PINNED]),
        ([], []),
    ],
)
def test_section_labels(rows: list[tuple[float, bool]], expected: list[str | None]) -> None:
    assert section_labels(rows, NOW) == expected


@pytest.mark.parametrize(
    ("pinned", "resumable", "spoken", "menu"),
    [
        (False, False, "Plans", "Pin to top"),
        (True, False, "Plans — pinned", "Unpin"),
        (True, True, "Plans — pinned — can be resumed", "Unpin"),
        (False, True, "Plans — can be resumed", "Pin to top"),
    ],
)
def test_pin_words(pinned: bool, resumable: bool, spoken: str, menu: str) -> None:
    assert accessible_text("Plans", resumable, pinned) == spoken
    assert pin_action_text(pinned) == menu


def _choose_in_menu(text: str, chosen: list[str]) -> None:
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    action = next(a for a in menu.actions() if a.text() == text)
    chosen.append(action.text())
    menu.setActiveAction(action)
    QTest.keyClick(menu, Qt.Key.Key_Return)


# A popup menu raises and grabs the keyboard, which the offscreen platform cannot (harmless).
@pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing the keyboard"
)
def test_pin_from_the_context_menu_moves_the_row_to_the_top_and_survives_reopening(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        ids = []
        for title in ("Oldest", "Middle", "Newest"):
            session = await services.new_session(title)
            await services.storage.storage.append(session.id, "r", UserMessage(f"about {title}"))
            ids.append(session.id)
        await services.close()
        oldest, middle, newest = ids
        async with window_on_simulator(tmp_path) as (_sim, window):
            side = window.sidebar
            await until(lambda: side.session_ids() == [newest, middle, oldest], what="listed")
            assert [label for _row, label in side.group_headers()] == ["Today"]
            chosen: list[str] = []

            def open_menu() -> None:
                QTimer.singleShot(0, lambda: _choose_in_menu("Pin to top", chosen))
                rect = side.list.visualRect(side.index_of(oldest))  # at the bottom
                side.list.customContextMenuRequested.emit(QPoint(rect.center()))

            QTimer.singleShot(0, open_menu)
            await until(lambda: side.session_ids()[0] == oldest, what="the pinned row on top")
            assert chosen == ["Pin to top"]
            assert side.session_ids() == [oldest, newest, middle]
            assert side.group_headers() == [(0, PINNED), (1, "Today")]
            assert side.is_pinned(oldest) and not side.is_pinned(newest)
            spoken = side.index_of(oldest).data(Qt.ItemDataRole.AccessibleTextRole)
            assert "pinned" in spoken
        # Reopened on the same data folder: still pinned, still first.
        async with window_on_simulator(tmp_path) as (_sim, window):
            side = window.sidebar
            await until(lambda: side.session_ids() == [oldest, newest, middle], what="kept")
            assert side.group_headers()[0] == (0, PINNED)
            # The open conversation is the first listed (the pinned one): Ctrl+Shift+P unpins.
            await until(lambda: window.controller.session_id == oldest, what="opened")
            action = window.findChild(type(window.new_action), "pinAction")
            assert action is not None and action.shortcut().toString() == "Ctrl+Shift+P"
            action.trigger()
            await until(lambda: not side.is_pinned(oldest), what="unpinned")
            assert side.session_ids() == [newest, middle, oldest]
            assert PINNED not in [label for _row, label in side.group_headers()]

    run(scenario(), timeout=60)
