"""Sidebar (badge, search, delete confirmation), settings and keyring, export, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt

from app import UserMessage
from app.settings import Settings
from tests.ui.helpers import close_window, make_services, open_window, until
from ui import sidebar as sidebar_module
from ui.settings_dialog import SettingsDialog
from ui.sidebar_rows import geometry_of


def test_badge_search_and_delete_with_confirmation(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        done = await services.new_session("Finished chat")
        await services.client.run(done.id, "x") if False else None
        store = services.storage.storage
        from app import AssistantMessage

        await store.append(done.id, "r", UserMessage("about penguins"))
        await store.append(done.id, "r", AssistantMessage("Penguins live south."))
        open_one = await services.new_session("Open question")
        await store.append(open_one.id, "r", UserMessage("about giraffes"))
        await services.close()

        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            side = window.sidebar
            assert side.session_ids() == [open_one.id, done.id]  # newest first
            assert side.has_badge(open_one.id) and not side.has_badge(done.id)
            await window.search("penguins")
            assert side.session_ids() == [done.id]
            await window.search("")
            assert len(side.session_ids()) == 2

            monkeypatch.setattr(sidebar_module, "ask_confirmation", lambda *a: False)
            assert not side.delete(done.id)
            await until(lambda: True)
            assert done.id in side.session_ids()
            monkeypatch.setattr(sidebar_module, "ask_confirmation", lambda *a: True)
            assert side.delete(done.id)
            await until(lambda: done.id not in side.session_ids(), what="deleted")
            assert await window.services.history(done.id) == []
        finally:
            await close_window(window)

    run(scenario())


def test_the_sidebar_in_the_window_plain_titles_badge_groups_no_match(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        store = services.storage.storage
        raw = "# Release checklist Here is what **must* happen before we ship the new version"
        open_one = await services.new_session(raw)
        await store.append(open_one.id, "r", UserMessage("what must happen?"))  # unanswered
        await services.close()

        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            side = window.sidebar
            lst = side.list
            assert side.session_ids() == [open_one.id] and side.has_badge(open_one.id)
            row = side.index_of(open_one.id)
            plain = "Release checklist Here is what must happen before we ship the new version"
            assert row.data() == plain
            assert row.data(Qt.ItemDataRole.ToolTipRole) == f"{plain} — can be resumed"
            assert side.group_headers() == [(0, "Today")]
            # Narrow or wide, no sideways scrolling and the badge inside the visible list.
            for width in (200, 260, 360):
                window.splitter.setSizes([width, window.width() - width])
                await until(lambda w=width: abs(side.width() - w) <= 2, what="sidebar width")
                index = side.index_of(open_one.id)
                g = geometry_of(lst.visualRect(index), lst.font(), index)
                assert g.badge is not None and lst.viewport().rect().contains(g.badge)
                assert lst.horizontalScrollBar().maximum() == 0
            # A search that finds nothing says so, quoting it.
            side.search.setText("zebra")
            await window.search("zebra")
            assert side.session_ids() == []
            assert side.empty.isVisible()
            assert side.empty.text() == "No conversations match “zebra”"
            side.search.clear()
            await window.search("")
            assert side.empty.isHidden() and side.session_ids() == [open_one.id]
        finally:
            await close_window(window)

    run(scenario())


def test_paste_of_10mb_and_nul_text_is_saved_without_crash(run: Any, tmp_path: Path) -> None:
    from app.simulator import Reply, Simulator

    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(text="got it"), Reply(text="ok"))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                huge = ("0123456789abcdef" * 65536) * 10  # 10 MiB
                from PySide6.QtGui import QGuiApplication

                QGuiApplication.clipboard().setText(huge)
                window.composer.edit.paste()  # kept aside, not laid out in the editor
                assert window.composer.pasted == huge
                assert window.composer.edit.toPlainText() == ""
                window.composer.send_button.click()
                await until(lambda: not window.controller.busy, within=30)
                sid = window.controller.session_id
                history = await window.services.history(sid)
                assert history[0] == UserMessage(huge)
                odd = "nul\x00byte and a lone \ud800 surrogate"
                window.controller.send(odd)
                await until(lambda: not window.controller.busy, within=30)
                # Either saved as typed or refused with words; never a crash or a lost message.
                history = await window.services.history(sid)
                saved = [m for m in history if isinstance(m, UserMessage)]
                bar = window.resume_bar
                assert len(saved) == 2 or (bar.isVisible() and bar.message.text())
            finally:
                await close_window(window)

    run(scenario(), timeout=60)


def test_settings_dialog_stores_key_in_keyring_only(
    qtbot: Any, tmp_path: Path, memory_keyring: Any
) -> None:
    dialog = SettingsDialog(Settings(provider_kind="openai", base_url="https://api.x/v1"))
    qtbot.addWidget(dialog)
    dialog.api_key.setText("sk-test-123")
    dialog.accept()
    settings = dialog.result_settings()
    assert memory_keyring.passwords == {("Continuum", settings.key_service()): "sk-test-123"}
    assert dialog.api_key.text() == ""
    assert "keyring" in dialog.key_note.text()


def test_settings_dialog_without_keyring_names_the_variable(qtbot: Any) -> None:
    keyring.set_keyring(fail.Keyring())
    dialog = SettingsDialog(
        Settings(provider_kind="anthropic", base_url="https://api.anthropic.com")
    )
    qtbot.addWidget(dialog)
    assert "no keyring" in dialog.key_note.text()
    assert "CONTINUUM_API_KEY" in dialog.key_note.text()
    assert not dialog.api_key.isEnabled()


def test_export_markdown_and_json(run: Any, tmp_path: Path) -> None:
    from app.simulator import Reply, Simulator

    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(text="Exported answer"))
            window = await open_window(tmp_path / "data", sim.openai_base_url)
            try:
                window.controller.send("Export me")
                await until(lambda: not window.controller.busy)
                await window.export("md", tmp_path / "out.md")
                await window.export("json", tmp_path / "out.json")
            finally:
                await close_window(window)
        markdown = (tmp_path / "out.md").read_text(encoding="utf-8")
        assert "Export me" in markdown and "Exported answer" in markdown
        json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))

    run(scenario())


def test_welcome_try_offline_uses_simulator(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, None)
        try:
            assert window.stack.currentWidget() is window.welcome
            window.welcome.offline_button.click()
            await until(lambda: window.stack.currentWidget() is window.transcript)
            assert "simulator" in window.provider_label.text().lower()
            await until(lambda: window.model_picker.count() > 0, what="models listed")
            window.controller.send("echo this")
            await until(lambda: not window.controller.busy, within=20)
            assert "echo this" in window.transcript_model.item(1).text
        finally:
            await close_window(window)

    run(scenario())
