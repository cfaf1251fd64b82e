"""Settings that behave: each provider entry offers its own default address (never the
simulator's loopback port), a typed address survives switching back and forth, the key fields
are disabled where no key is used, placeholders are never cut off, names are human phrases.

The deciding functions (:mod:`ui.settings_choices`) are table-tested; the rest drives a real
dialog (offscreen) and the real window."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QLineEdit, QStyle, QWidget

from app.settings import Settings
from tests.ui.helpers import close_window, open_window, until
from ui.settings_choices import (
    CHOICES,
    PROVIDER_CHOICES,
    choice_for,
    key_note,
    key_placeholder,
    switch_model,
    switch_url,
)
from ui.settings_dialog import DEFAULT_URLS, SettingsDialog

LOOPBACK = "http://127.0.0.1:45123/v1"  # what "Try it offline" leaves in the settings


@pytest.mark.parametrize(
    ("kind", "url", "expected"),
    [
        (None, "", "openai"),
        ("openai", "", "openai"),
        ("openai", "https://api.openai.com/v1", "openai"),
        ("openai", "https://api.openai.com/v1/", "openai"),
        ("anthropic", "https://api.anthropic.com", "anthropic"),
        ("anthropic", "https://proxy.example/anthropic", "anthropic"),
        ("openai", "http://localhost:11434/v1", "ollama"),
        ("openai", "http://127.0.0.1:11434/v1", "ollama"),
        ("openai", "http://localhost:1234/v1", "compatible"),
        ("openai", "https://openrouter.ai/api/v1", "compatible"),
        ("openai", "http://localhost:notaport/v1", "compatible"),
        ("simulator", LOOPBACK, "simulator"),
        ("simulator", "", "simulator"),
    ],
)
def test_choice_for_saved_settings(kind: Any, url: str, expected: str) -> None:
    assert choice_for(kind, url) == expected


@pytest.mark.parametrize(
    ("remembered", "leaving", "shown", "arriving", "memory", "field"),
    [
        # From the simulator: the kind's default, never the loopback port.
        ({}, "simulator", "", "openai", {}, "https://api.openai.com/v1"),
        ({}, "simulator", LOOPBACK, "anthropic", {}, "https://api.anthropic.com"),
        ({}, "simulator", "", "ollama", {}, "http://localhost:11434/v1"),
        ({}, "simulator", "", "compatible", {}, ""),
        # A typed address comes back with its entry.
        (
            {},
            "openai",
            "https://proxy.example/v1",
            "anthropic",
            {"openai": "https://proxy.example/v1"},
            "https://api.anthropic.com",
        ),
        (
            {"openai": "https://proxy.example/v1"},
            "anthropic",
            "https://api.anthropic.com",
            "openai",
            {"openai": "https://proxy.example/v1", "anthropic": "https://api.anthropic.com"},
            "https://proxy.example/v1",
        ),
        # A cleared field gets the default back; the simulator shows nothing.
        ({"openai": "x"}, "openai", "  ", "openai", {"openai": ""}, "https://api.openai.com/v1"),
        ({}, "openai", "https://a/v1", "simulator", {"openai": "https://a/v1"}, ""),
    ],
)
def test_switch_url(
    remembered: dict[str, str],
    leaving: str,
    shown: str,
    arriving: str,
    memory: dict[str, str],
    field: str,
) -> None:
    assert switch_url(remembered, leaving, shown, arriving) == (memory, field)
    assert remembered == dict(remembered)  # the caller's mapping is not changed


@pytest.mark.parametrize(
    ("remembered", "leaving", "shown", "arriving", "memory", "field"),
    [
        ({}, "simulator", "sim-echo", "openai", {"simulator": "sim-echo"}, ""),
        ({"openai": "gpt-4o"}, "simulator", "sim-echo", "openai", None, "gpt-4o"),
        ({}, "openai", " gpt-4o ", "anthropic", {"openai": "gpt-4o"}, ""),
        ({"simulator": "sim-echo"}, "openai", "", "simulator", None, "sim-echo"),
    ],
)
def test_switch_model(
    remembered: dict[str, str],
    leaving: str,
    shown: str,
    arriving: str,
    memory: dict[str, str] | None,
    field: str,
) -> None:
    got_memory, got_field = switch_model(remembered, leaving, shown, arriving)
    assert got_field == field
    assert got_memory == (memory or {**remembered, leaving: shown.strip()})


@pytest.mark.parametrize(
    ("use", "keyring", "has", "lacks"),
    [
        ("none", True, ["needs no key", "not from a real model"], ["keyring"]),
        ("none", False, ["needs no key"], ["keyring"]),
        ("required", True, ["system keyring", "MY_KEY"], ["no key"]),
        ("required", False, ["no keyring", "MY_KEY"], ["usually need no key"]),
        ("optional", True, ["usually need no key", "system keyring", "MY_KEY"], []),
        ("optional", False, ["usually need no key", "no keyring", "MY_KEY"], []),
    ],
)
def test_key_note(use: Any, keyring: bool, has: list[str], lacks: list[str]) -> None:
    note = key_note(use, keyring, "MY_KEY")
    assert all(words in note for words in has), note
    assert not any(words in note for words in lacks), note


@pytest.mark.parametrize(
    ("use", "keyring", "expected"),
    [
        ("none", True, "No key needed"),
        ("none", False, "No key needed"),
        ("required", True, "Leave empty to keep the stored key"),
        ("optional", True, "Optional; leave empty to keep the stored key"),
        ("required", False, "No keyring here: use the variable below"),
    ],
)
def test_key_placeholder(use: Any, keyring: bool, expected: str) -> None:
    assert key_placeholder(use, keyring) == expected


def test_the_table_keeps_the_saved_kinds_and_their_defaults() -> None:
    assert {c.kind for c in PROVIDER_CHOICES} == {"openai", "anthropic", "simulator"}
    assert DEFAULT_URLS == {
        "openai": "https://api.openai.com/v1",
        "anthropic": "https://api.anthropic.com",
        "simulator": "",
    }
    # Every entry with a default is recognised again from it (reopening shows the same entry).
    for choice in PROVIDER_CHOICES:
        if choice.default_url:
            assert choice_for(choice.kind, choice.default_url) == choice.key
        assert choice.url_hint


def _dialog(qtbot: Any, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _choose(dialog: SettingsDialog, key: str) -> None:
    dialog.provider.setCurrentIndex(dialog.provider.findData(key))


def test_leaving_the_simulator_offers_the_kinds_default_never_its_port(
    qtbot: Any, memory_keyring: Any
) -> None:
    dialog = _dialog(qtbot, Settings(provider_kind="simulator", base_url=LOOPBACK))
    assert dialog.base_url.text() == ""  # the port is not shown
    assert not dialog.base_url.isEnabled()
    for key in ("openai", "anthropic", "ollama"):
        _choose(dialog, key)
        assert dialog.base_url.text() == CHOICES[key].default_url
        assert dialog.base_url.isEnabled()
        assert "127.0.0.1" not in dialog.result_settings().base_url
    _choose(dialog, "compatible")
    assert dialog.base_url.text() == ""
    assert dialog.base_url.placeholderText().startswith("For example http://localhost:1234/v1")
    dialog.accept()  # no address: refused with words, the field focused
    assert dialog.result() != SettingsDialog.DialogCode.Accepted
    assert dialog.error.isVisible() and "server address" in dialog.error.text()
    # Back to the simulator: saved as it was (its address is the running simulator's).
    _choose(dialog, "simulator")
    saved = dialog.result_settings()
    assert (saved.provider_kind, saved.base_url) == ("simulator", LOOPBACK)


def test_a_typed_address_is_kept_when_switching_back_and_forth(
    qtbot: Any, memory_keyring: Any
) -> None:
    dialog = _dialog(qtbot, Settings())  # nothing saved yet: OpenAI with its address
    assert dialog.provider.currentData() == "openai"
    assert dialog.base_url.text() == "https://api.openai.com/v1"
    dialog.base_url.clear()
    QTest.keyClicks(dialog.base_url, "https://proxy.example/v1")
    _choose(dialog, "anthropic")
    assert dialog.base_url.text() == "https://api.anthropic.com"
    assert dialog.result_settings().provider_kind == "anthropic"
    _choose(dialog, "simulator")
    _choose(dialog, "openai")
    assert dialog.base_url.text() == "https://proxy.example/v1"
    saved = dialog.result_settings()
    assert (saved.provider_kind, saved.base_url) == ("openai", "https://proxy.example/v1")


def test_reopening_shows_the_saved_entry_and_address(qtbot: Any, memory_keyring: Any) -> None:
    ollama = _dialog(qtbot, Settings(provider_kind="openai", base_url="http://localhost:11434/v1"))
    assert ollama.provider.currentData() == "ollama"
    assert ollama.api_key.isEnabled()
    assert ollama.api_key.placeholderText().startswith("Optional")
    assert "usually need no key" in ollama.key_note.text()
    other = _dialog(qtbot, Settings(provider_kind="openai", base_url="http://10.0.0.2:8000/v1"))
    assert other.provider.currentData() == "compatible"
    assert other.base_url.text() == "http://10.0.0.2:8000/v1"
    assert other.result_settings() == Settings(
        provider_kind="openai", base_url="http://10.0.0.2:8000/v1", api_key_env="CONTINUUM_API_KEY"
    )


def test_the_key_fields_are_disabled_with_a_note_where_no_key_is_used(
    qtbot: Any, memory_keyring: Any
) -> None:
    dialog = _dialog(qtbot, Settings(provider_kind="openai", base_url="https://api.x/v1"))
    assert dialog.api_key.isEnabled() and dialog.key_env.isEnabled()
    _choose(dialog, "simulator")
    assert not dialog.api_key.isEnabled() and not dialog.key_env.isEnabled()
    assert dialog.api_key.placeholderText() == "No key needed"
    assert "needs no key" in dialog.key_note.text() and dialog.key_note.isVisible()
    _choose(dialog, "anthropic")
    assert dialog.api_key.isEnabled() and dialog.key_env.isEnabled()
    assert "keyring" in dialog.key_note.text()


def test_a_key_goes_to_the_keyring_only_never_into_settings(
    qtbot: Any, memory_keyring: Any
) -> None:
    secret = "sk-never-in-a-file-42"
    dialog = _dialog(
        qtbot, Settings(provider_kind="anthropic", base_url="https://api.anthropic.com")
    )
    dialog.api_key.setText(secret)
    dialog.accept()
    assert list(memory_keyring.passwords.values()) == [secret]
    saved = dialog.result_settings()
    assert secret not in repr(saved) and secret not in repr(dialog.__dict__)
    assert dialog.api_key.text() == ""


def _text_room(edit: QLineEdit, width: int) -> int:
    """The pixels a line edit ``width`` wide has for its text (inside frame and margins)."""
    frame = edit.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, None, edit)
    margins = edit.textMargins()
    return width - 2 * frame - margins.left() - margins.right() - 4  # Qt's side margins


def test_placeholders_are_not_cut_off_even_at_the_smallest_size(
    qtbot: Any, memory_keyring: Any
) -> None:
    dialog = _dialog(qtbot, Settings())
    dialog.resize(1, 1)  # as small as the layout allows
    for key in CHOICES:
        _choose(dialog, key)
        qtbot.waitUntil(lambda: dialog.layout().geometry().width() > 0)
        for edit in dialog.findChildren(QLineEdit):
            text = edit.placeholderText()
            if text and edit.isVisible():
                needed = edit.fontMetrics().horizontalAdvance(text)
                where = (key, edit.accessibleName(), text)
                assert needed <= _text_room(edit, edit.width()), where
                # Guaranteed by the field itself, not by a wide neighbour.
                assert needed <= _text_room(edit, edit.minimumWidth()), where


def test_every_control_has_a_human_name_and_no_stray_icons(qtbot: Any, memory_keyring: Any) -> None:
    dialog = _dialog(qtbot, Settings(provider_kind="openai", base_url="https://api.x/v1"))
    names = {
        dialog.provider: "Provider",
        dialog.base_url: "Server address",
        dialog.model: "Model",
        dialog.api_key: "API key",
        dialog.key_env: "API key environment variable",
        dialog.system_prompt: "System prompt",
        dialog.test_button: "Test connection",
        dialog.mcp_list: "MCP servers",
        dialog.mcp_add: "Add MCP server",
    }
    for widget, name in names.items():
        assert widget.accessibleName() == name
    inputs: list[QWidget] = [*dialog.findChildren(QAbstractButton), *dialog.findChildren(QLineEdit)]
    for widget in inputs:
        if widget.parent() is dialog.model:
            continue  # the model box's own line edit: the box carries the name
        text = widget.text() if isinstance(widget, QAbstractButton) else ""
        name = widget.accessibleName() or text.replace("&", "")
        assert name, widget.objectName()
        assert not re.search(r"[a-z][A-Z]", name), name  # a phrase, not an identifier
    # Buttons carry words, not a mix of platform icons and words.
    assert all(button.icon().isNull() for button in dialog.findChildren(QAbstractButton))


def test_switching_in_the_window_after_try_offline(run: Any, tmp_path: Path) -> None:
    """The reported bug, in the real window: Try it offline, then Settings → OpenAI."""

    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            window.welcome.offline_button.click()
            await until(lambda: window.stack.currentWidget() is window.transcript)
            loopback = window.services.settings.base_url
            assert loopback.startswith("http://127.0.0.1:")
            window.models.open_settings()
            dialog = window.findChild(SettingsDialog)
            assert dialog is not None
            await until(dialog.isVisible, what="settings dialog")
            assert loopback not in dialog.base_url.text()
            dialog.provider.setFocus()
            QTest.keyClick(dialog.provider, Qt.Key.Key_Home)  # keyboard only: the first entry
            assert dialog.provider.currentData() == "openai"
            assert dialog.base_url.text() == "https://api.openai.com/v1"
            dialog.reject()
            await until(lambda: not dialog.isVisible(), what="dialog closed")
            assert window.services.settings.base_url == loopback  # cancelled: unchanged
        finally:
            await close_window(window)

    run(scenario())


def test_tab_goes_down_the_form_in_the_order_it_reads(qtbot: Any, memory_keyring: Any) -> None:
    dialog = _dialog(qtbot, Settings(provider_kind="openai", base_url="https://api.x/v1"))
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    dialog.provider.setFocus()
    qtbot.waitUntil(dialog.provider.hasFocus)
    seen: list[str] = []
    for _ in range(6):
        QTest.keyClick(dialog.focusWidget(), Qt.Key.Key_Tab)
        focused = dialog.focusWidget()
        owner = focused.parentWidget() if focused.parentWidget() is dialog.model else focused
        seen.append(owner.accessibleName())
    assert seen == [
        "Server address",
        "Model",
        "API key",
        "API key environment variable",
        "Test connection",
        "Saved providers",
    ]
    # The prompt is on the Conversations page; Tab leaves it (it does not type a tab).
    assert dialog.system_prompt.tabChangesFocus()


def test_a_models_name_stays_with_its_provider(qtbot: Any, memory_keyring: Any) -> None:
    """The simulator's sim-echo is not offered to OpenAI; coming back brings it again."""
    settings = Settings(provider_kind="simulator", base_url=LOOPBACK, model="sim-echo")
    dialog = SettingsDialog(settings, None, ["sim-echo", "sim-slow"])
    qtbot.addWidget(dialog)
    assert dialog.model.currentText() == "sim-echo" and dialog.model.count() == 2
    _choose(dialog, "openai")
    assert dialog.model.currentText() == "" and dialog.model.count() == 0
    edit = dialog.model.lineEdit()
    assert edit is not None and edit.placeholderText() == "For example gpt-4o-mini"
    dialog.model.setCurrentText("gpt-4o")
    _choose(dialog, "simulator")
    assert dialog.model.currentText() == "sim-echo" and dialog.model.count() == 2
    _choose(dialog, "openai")
    assert dialog.result_settings().model == "gpt-4o"


def test_the_note_and_problem_follow_the_theme(qtbot: Any, memory_keyring: Any) -> None:
    from PySide6.QtWidgets import QApplication

    from ui.theme import DARK, LIGHT, palette_for

    dialog = _dialog(qtbot, Settings())
    for tokens in (DARK, LIGHT):
        QApplication.setPalette(palette_for(tokens))
        qtbot.waitUntil(lambda t=tokens: t.danger in dialog.error.styleSheet())
        assert tokens.muted in dialog.key_note.styleSheet()


def test_each_alt_key_reaches_one_field(qtbot: Any, memory_keyring: Any) -> None:
    from PySide6.QtWidgets import QLabel

    dialog = _dialog(qtbot, Settings())
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    texts += [button.text() for button in dialog.findChildren(QAbstractButton)]
    keys = [text[text.index("&") + 1].lower() for text in texts if "&" in text]
    assert len(keys) >= 8 and len(keys) == len(set(keys)), keys
