"""The window's menus: every action, its menu, its shortcut and its object name, in one table.

:data:`MENUS` is the whole menu bar as data (tests find actions by their object name, and the
shortcuts are the platform's standard keys where one exists). :func:`build_menus` makes the
``QAction`` objects from it and connects each to the slot the window gives for its name; the
window owns what the actions do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

__all__ = ["MENUS", "ActionSpec", "build_menus"]

Shortcut = QKeySequence.StandardKey | str


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """One menu entry: ``name`` is its Qt object name and the key of its slot."""

    name: str
    text: str
    shortcut: Shortcut | None = None


SEPARATOR = None
_Key = QKeySequence.StandardKey

#: (menu title, entries); ``None`` is a separator.
MENUS: tuple[tuple[str, tuple[ActionSpec | None, ...]], ...] = (
    (
        "&File",
        (
            ActionSpec("newAction", "&New conversation", _Key.New),
            SEPARATOR,
            ActionSpec("exportMarkdownAction", "Export as &Markdown…"),
            ActionSpec("exportJsonAction", "Export as &JSON…"),
            SEPARATOR,
            ActionSpec("settingsAction", "&Settings…", "Ctrl+,"),
            SEPARATOR,
            # Shortcuts set in build_menus: Qt's Quit binding is empty on some key schemes.
            ActionSpec("quitAction", "&Quit"),
        ),
    ),
    ("&Edit", (ActionSpec("findAction", "&Search conversations", _Key.Find),)),
    (
        "&Conversation",
        (
            ActionSpec("stopAction", "&Stop answer"),
            ActionSpec("renameAction", "&Rename…", "F2"),
            ActionSpec("deleteAction", "&Delete…"),
            SEPARATOR,
            ActionSpec("workspaceAction", "&Workspace folder…"),
            ActionSpec("noWorkspaceAction", "&No workspace folder"),
        ),
    ),
)


def action_names() -> list[str]:
    """The object names of every action in :data:`MENUS`, in menu order."""
    return [spec.name for _title, entries in MENUS for spec in entries if spec is not None]


def _ignoring_checked(slot: Callable[[], object]) -> Callable[[bool], None]:
    """``triggered`` passes ``checked``; the window's slots take no argument."""

    def run(_checked: bool = False) -> None:
        slot()

    return run


def build_menus(
    window: QMainWindow, slots: Mapping[str, Callable[[], object]]
) -> dict[str, QAction]:
    """Fill ``window``'s menu bar from :data:`MENUS`; returns the actions by object name.

    ``slots`` names what each action does; a missing or unknown name is a programming error
    and raises ``ValueError`` before any menu is made.
    """
    names = action_names()
    missing = sorted(set(names) - set(slots))
    unknown = sorted(set(slots) - set(names))
    if missing or unknown:
        raise ValueError(
            f"menu slots do not match the actions: missing {missing}, unknown {unknown}"
        )
    actions: dict[str, QAction] = {}
    bar = window.menuBar()
    for title, entries in MENUS:
        menu = bar.addMenu(title)
        for spec in entries:
            if spec is None:
                menu.addSeparator()
                continue
            action = QAction(spec.text, window)
            action.setObjectName(spec.name)
            if spec.shortcut is not None:
                action.setShortcut(QKeySequence(spec.shortcut))
            action.triggered.connect(_ignoring_checked(slots[spec.name]))
            menu.addAction(action)
            actions[spec.name] = action
    # Qt's Quit binding is empty on the Windows key scheme (also offscreen): keep Ctrl+Q.
    actions["quitAction"].setShortcuts(
        QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")]
    )
    return actions
