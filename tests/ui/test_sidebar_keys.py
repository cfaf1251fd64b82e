"""The sidebar's own keys and menu, through real Qt events (typed slots, issue 12)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from app import SessionInfo
from ui import sidebar as sidebar_module
from ui.sidebar import Sidebar


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
    side.list.setCurrentRow(1)  # newest first: "First" is the second row
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
    rect = side.list.visualItemRect(side.list.item(0))
    side.list.customContextMenuRequested.emit(QPoint(rect.center()))
    assert renamed == [("b", "Second (2)")]
