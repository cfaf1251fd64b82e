"""The window's menus: every action, its menu, its shortcut and its object name, in one table.

:data:`MENUS` is the whole menu bar as data (tests find actions by their object name, and the
shortcuts are the platform's standard keys where one exists); a :class:`SubMenu` entry nests a
menu, and an exclusive one holds checkable actions of which one is checked (View → Theme).
:func:`build_menus` makes the ``QAction`` objects from it and connects each to the slot the
window gives for its name; the window owns what the actions do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

__all__ = [
    "MENUS",
    "THEME_ACTIONS",
    "ActionSpec",
    "SubMenu",
    "action_names",
    "build_menus",
    "shortcut_rows",
]

Shortcut = QKeySequence.StandardKey | str


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """One menu entry: ``name`` is its Qt object name and the key of its slot."""

    name: str
    text: str
    shortcut: Shortcut | None = None
    #: More keys for the same action (Ctrl++ next to Ctrl+= for zooming in).
    also: tuple[str, ...] = ()
    checkable: bool = False


@dataclass(frozen=True, slots=True)
class SubMenu:
    """A menu inside a menu; ``exclusive``: its actions are checkable, one checked at a time."""

    title: str
    entries: tuple[ActionSpec | None, ...]
    exclusive: bool = False


Entry = ActionSpec | SubMenu | None
SEPARATOR = None
_Key = QKeySequence.StandardKey

#: View → Theme: each choice (as saved in the settings) and its action's object name.
THEME_ACTIONS = {
    "system": "themeSystemAction",
    "light": "themeLightAction",
    "dark": "themeDarkAction",
}

#: (menu title, entries); ``None`` is a separator.
MENUS: tuple[tuple[str, tuple[Entry, ...]], ...] = (
    (
        "&File",
        (
            ActionSpec("newAction", "&New conversation", _Key.New),
            SEPARATOR,
            ActionSpec("exportMarkdownAction", "Export as &Markdown…"),
            ActionSpec("exportJsonAction", "Export as &JSON…"),
            ActionSpec("importAction", "&Import conversations…"),
            SEPARATOR,
            ActionSpec("settingsAction", "&Settings…", "Ctrl+,"),
            SEPARATOR,
            # Shortcuts set in build_menus: Qt's Quit binding is empty on some key schemes.
            ActionSpec("quitAction", "&Quit", "Ctrl+Q"),
        ),
    ),
    (
        "&Edit",
        (
            # Each acts on the focused widget (the composer, the search field, the transcript).
            ActionSpec("undoAction", "&Undo", _Key.Undo),
            ActionSpec("redoAction", "&Redo", _Key.Redo),
            SEPARATOR,
            ActionSpec("cutAction", "Cu&t", _Key.Cut),
            ActionSpec("copyAction", "&Copy", _Key.Copy),
            ActionSpec("pasteAction", "&Paste", _Key.Paste),
            ActionSpec("selectAllAction", "Select &All", _Key.SelectAll),
            SEPARATOR,
            ActionSpec("findAction", "&Search conversations", _Key.Find),
        ),
    ),
    (
        "&Conversation",
        (
            ActionSpec("stopAction", "&Stop answer", "Esc"),
            ActionSpec("resumeAction", "Res&ume", "Ctrl+Shift+R"),
            ActionSpec("dismissAction", "D&ismiss the Resume bar", "Ctrl+Shift+X"),
            SEPARATOR,
            ActionSpec("editLastAction", "&Edit last message", "Ctrl+Shift+E"),
            ActionSpec("regenerateAction", "Re&generate answer", "Ctrl+Shift+G"),
            SEPARATOR,
            ActionSpec("renameAction", "&Rename…", "F2"),
            ActionSpec("pinAction", "&Pin to top / Unpin", "Ctrl+Shift+P"),
            ActionSpec("deleteAction", "&Delete…"),
            SEPARATOR,
            ActionSpec("workspaceAction", "&Workspace folder…"),
            ActionSpec("noWorkspaceAction", "&No workspace folder"),
            ActionSpec("conversationSetupAction", "Conversation se&ttings…", "Ctrl+Shift+,"),
        ),
    ),
    (
        "&View",
        (
            ActionSpec("sidebarAction", "&Sidebar", "Ctrl+Shift+S", checkable=True),
            SEPARATOR,
            ActionSpec("zoomInAction", "Zoom &In", "Ctrl+=", also=("Ctrl++",)),
            ActionSpec("zoomOutAction", "Zoom &Out", "Ctrl+-"),
            ActionSpec("zoomResetAction", "&Actual Size", "Ctrl+0"),
            SEPARATOR,
            SubMenu(
                "&Theme",
                (
                    ActionSpec(THEME_ACTIONS["system"], "&System"),
                    ActionSpec(THEME_ACTIONS["light"], "&Light"),
                    ActionSpec(THEME_ACTIONS["dark"], "&Dark"),
                ),
                exclusive=True,
            ),
        ),
    ),
    (
        "&Help",
        (
            ActionSpec("shortcutsAction", "&Keyboard Shortcuts", "Ctrl+/"),
            SEPARATOR,
            ActionSpec("openDataAction", "Open &Data Folder"),
            ActionSpec("openLogAction", "Open &Log Folder"),
            SEPARATOR,
            ActionSpec("aboutAction", "&About Continuum"),
        ),
    ),
)


def _specs(entries: tuple[Entry, ...]) -> list[ActionSpec]:
    """Every action among ``entries`` (sub-menus' too), in menu order."""
    specs: list[ActionSpec] = []
    for entry in entries:
        if isinstance(entry, SubMenu):
            specs.extend(_specs(entry.entries))
        elif entry is not None:
            specs.append(entry)
    return specs


def shortcut_rows() -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every menu entry with a shortcut, in menu order, as the
    person reads them (Help → Keyboard Shortcuts)."""
    rows = []
    for title, entries in MENUS:
        for spec in _specs(entries):
            if spec.shortcut is None:
                continue
            keys = [QKeySequence(spec.shortcut), *map(QKeySequence, spec.also)]
            shown = " or ".join(
                k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys if not k.isEmpty()
            )
            if shown:
                rows.append((title.replace("&", ""), spec.text.replace("&", ""), shown))
    return rows


def action_names() -> list[str]:
    """The object names of every action in :data:`MENUS`, in menu order."""
    return [spec.name for _title, entries in MENUS for spec in _specs(entries)]


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
        _fill(bar.addMenu(title), entries, window, slots, actions)
    # Qt's Quit binding is empty on the Windows key scheme (also offscreen): keep Ctrl+Q.
    actions["quitAction"].setShortcuts(
        QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")]
    )
    return actions


def _fill(
    menu: QMenu,
    entries: tuple[Entry, ...],
    window: QMainWindow,
    slots: Mapping[str, Callable[[], object]],
    actions: dict[str, QAction],
    group: QActionGroup | None = None,
) -> None:
    """Add ``entries`` to ``menu`` (sub-menus recursively); in a ``group``, checkable."""
    for entry in entries:
        if entry is None:
            menu.addSeparator()
        elif isinstance(entry, SubMenu):
            inner = QActionGroup(window) if entry.exclusive else None
            _fill(menu.addMenu(entry.title), entry.entries, window, slots, actions, inner)
        else:
            action = QAction(entry.text, window)
            action.setObjectName(entry.name)
            if entry.shortcut is not None:
                keys = [QKeySequence(entry.shortcut), *map(QKeySequence, entry.also)]
                action.setShortcuts(keys)
            action.setCheckable(entry.checkable)
            if group is not None:
                action.setCheckable(True)
                group.addAction(action)  # exclusive: checking one unchecks the others
            action.triggered.connect(_ignoring_checked(slots[entry.name]))
            menu.addAction(action)
            actions[entry.name] = action
