"""The menu table (ui.actions): every entry becomes a named action wired to its own slot."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from ui.actions import MENUS, action_names, build_menus
from ui.flows import ExportFormat, export_file_name, provider_words


def test_every_action_is_made_named_and_triggers_its_own_slot(qapp: Any) -> None:
    window = QMainWindow()
    fired: list[str] = []
    names = action_names()
    slots = {name: (lambda n=name: fired.append(n)) for name in names}
    actions = build_menus(window, slots)
    assert sorted(actions) == sorted(names) and len(set(names)) == len(names)
    assert [a.text() for a in window.menuBar().actions()] == [t for t, _ in MENUS]
    for name in names:
        action = window.findChild(QAction, name)
        assert action is actions[name]
        action.trigger()
    assert fired == names
    assert actions["settingsAction"].shortcut() == QKeySequence("Ctrl+,")
    assert actions["renameAction"].shortcut() == QKeySequence("F2")
    assert not actions["quitAction"].shortcut().isEmpty()
    window.deleteLater()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda s: s.pop("stopAction"), "missing ['stopAction']"),
        (lambda s: s.update(typoAction=lambda: None), "unknown ['typoAction']"),
    ],
)
def test_slots_that_do_not_match_the_table_are_refused(qapp: Any, change: Any, words: str) -> None:
    window = QMainWindow()
    slots: dict[str, Any] = {name: (lambda: None) for name in action_names()}
    change(slots)
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        build_menus(window, slots)
    assert window.findChildren(QAction) == []  # nothing half-built
    window.deleteLater()


@pytest.mark.parametrize(
    ("kind", "url", "words"),
    [
        ("openai", "http://127.0.0.1:9/v1", "OpenAI-compatible · http://127.0.0.1:9/v1"),
        ("anthropic", "https://api.anthropic.com", "Anthropic · https://api.anthropic.com"),
        ("simulator", "ignored", "Offline simulator — not a real model"),
        (None, "", "No provider · "),
        ("something-else", "u", "No provider · u"),
    ],
)
def test_provider_words(kind: str | None, url: str, words: str) -> None:
    assert provider_words(kind, url) == words


@pytest.mark.parametrize(
    ("title", "kind", "name"),
    [
        ("Tides", ExportFormat.MARKDOWN, "Tides.md"),
        ("a/b: c?", ExportFormat.JSON, "a_b_ c_.json"),
        ("x" * 80, ExportFormat.MARKDOWN, "x" * 60 + ".md"),
        ("Café-1_2", ExportFormat.JSON, "Café-1_2.json"),
    ],
)
def test_export_file_name(title: str, kind: ExportFormat, name: str) -> None:
    assert export_file_name(title, kind) == name
