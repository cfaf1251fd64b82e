"""MCP servers through the real window (offscreen) on the real simulator, with real stdio servers
(``tests/fixtures/mcp_servers/raw_server.py``): a server that crashes shows as exited with its
last error output in Settings, and Restart there brings it back."""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QDialogButtonBox

from app import ToolCall
from app.services import McpServerConfig
from app.simulator import Reply, SimToolCall, Simulator
from tests.ui.helpers import close_window, make_services, until
from ui.transcript.render import tool_html

RAW = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_servers" / "raw_server.py"


def raw(state: Path, name: str = "raw", *extra: str) -> McpServerConfig:
    return McpServerConfig(name, sys.executable, (str(RAW), str(state), *extra), side_effects=False)


async def window_with(data: Path, sim: Simulator, **settings: Any) -> Any:
    from ui.window import MainWindow

    services = await make_services(data, sim.openai_base_url)
    services.save_settings(dataclasses.replace(services.settings, **settings))
    window = MainWindow(services)
    window.resize(1000, 700)
    window.show()
    await window.start()
    return window


async def send(window: Any, text: str) -> None:
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()
    await until(lambda: not window.controller.busy, 20, "the answer")


def test_a_crashed_server_shows_in_settings_and_restart_brings_it_back(
    run: Any, tmp_path: Path
) -> None:
    state = tmp_path / "state"

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await window_with(tmp_path / "data", sim, mcp_servers=(raw(state),))
            try:
                assert await window.services.mcp_ready() == []
                (server,) = window.services._mcp.servers
                sim.enqueue(
                    Reply(tool_calls=(SimToolCall("raw__crash", {}, id="c1"),)),
                    Reply(text="It crashed."),
                )
                await send(window, "Crash it")
                assert server._watching is not None
                await asyncio.wait_for(asyncio.shield(server._watching), 10)

                window.models.open_settings()
                dialog = window.models._settings_dialog
                box = dialog.mcp_box
                box.list.setCurrentRow(0)
                assert box.list.item(0).text().endswith("· exited")
                details = box.state.text()
                assert "State: exited" in details
                assert "The MCP server 'raw' exited" in details
                assert "Last error output:\nraw server: crashing on purpose" in details
                assert box.restart_button.isEnabled()

                box.restart_button.click()
                await until(
                    lambda: box.list.item(0).text().endswith("· running, 6 tools"),
                    15,
                    "the server running again",
                )
                assert "restarted 1 time" in box.state.text()
                assert (state / "starts").read_text().split() == ["started", "started"]
                dialog.reject()

                sim.enqueue(
                    Reply(tool_calls=(SimToolCall("raw__echo", {"text": "back"}, id="e1"),)),
                    Reply(text="Done."),
                )
                await send(window, "Echo")
                sent = sim.model_requests()[-1].json()["messages"]
                assert any("echo: back" in str(m.get("content")) for m in sent), sent
            finally:
                await close_window(window)

    run(scenario(), timeout=90)


def test_the_first_answer_does_not_wait_for_a_slow_server(run: Any, tmp_path: Path) -> None:
    fast = raw(tmp_path / "fast", "fast")
    slow = raw(tmp_path / "slow", "slow", "--start-delay", "60")

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await window_with(tmp_path / "data", sim, mcp_servers=(fast, slow))
            try:
                servers = {s.config.name: s for s in window.services._mcp.servers}
                await servers["fast"].started()
                sim.enqueue(Reply(text="Hello."))
                await send(window, "hello")
                last = window.transcript_model.item(window.transcript_model.rowCount() - 1)
                assert last.text == "Hello."
                assert servers["slow"].starting  # answered while it still starts
                await until(
                    lambda: "still starting: 'slow'" in window.statusBar().currentMessage(),
                    5,
                    "the notice naming the server still starting",
                )
                offered = {t["function"]["name"] for t in sim.model_requests()[-1].json()["tools"]}
                assert "fast__echo" in offered
                assert not [name for name in offered if name.startswith("slow__")]
            finally:
                await close_window(window)

    run(scenario(), timeout=60)


def test_variables_typed_in_settings_reach_the_server_and_secrets_only_the_keyring(
    run: Any, tmp_path: Path, memory_keyring: Any
) -> None:
    data = tmp_path / "data"

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await window_with(data, sim)
            try:
                window.models.open_settings()
                dialog = window.models._settings_dialog
                box = dialog.mcp_box
                box.name.setText("gh")
                box.command.setText(shlex.join([sys.executable, str(RAW), str(tmp_path / "s")]))
                box.env.setPlainText("GITHUB_TOKEN=ghp_typed_in_settings\nPLAIN=plain value\n")
                box.add_button.click()
                assert box.env.toPlainText() == ""  # the secret left the widget
                assert "PLAIN, GITHUB_TOKEN (keyring)" in box.list.item(0).text()
                dialog.findChild(QDialogButtonBox).button(
                    QDialogButtonBox.StandardButton.Save
                ).click()
                await until(lambda: window.services.settings.mcp_servers, 5, "saved")
                assert await window.services.mcp_ready() == []

                saved = (data / "settings.json").read_text(encoding="utf-8")
                assert "ghp_typed_in_settings" not in saved and "GITHUB_TOKEN" in saved
                assert "plain value" in saved
                assert memory_keyring.passwords == {
                    ("Continuum", "mcp:gh:GITHUB_TOKEN"): "ghp_typed_in_settings"
                }
                tool = next(t for t in window.services.mcp_tools if t.name == "gh__env")
                for name, value in (
                    ("GITHUB_TOKEN", "ghp_typed_in_settings"),
                    ("PLAIN", "plain value"),
                ):
                    result = await tool.invoke(ToolCall("v", "gh__env", {"name": name}))
                    assert result.content == value

                # Removing the server takes its secret out of the keyring on Save.
                window.models.open_settings()
                dialog = window.models._settings_dialog
                dialog.mcp_box.list.setCurrentRow(0)
                dialog.mcp_box.remove_button.click()
                dialog.findChild(QDialogButtonBox).button(
                    QDialogButtonBox.StandardButton.Save
                ).click()
                await until(lambda: not window.services.settings.mcp_servers, 5, "saved")
                assert memory_keyring.passwords == {}
            finally:
                await close_window(window)

    run(scenario(), timeout=60)


def test_a_long_tool_shows_progress_on_its_card_and_outlives_its_timeout(
    run: Any, tmp_path: Path
) -> None:
    server = dataclasses.replace(raw(tmp_path / "state"), call_timeout=2.0)

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await window_with(tmp_path / "data", sim, mcp_servers=(server,))
            model = window.transcript_model
            cards: list[str] = []

            def card_changed(*_args: Any) -> None:
                card = model.tool_item("s1")
                if card is not None and card.progress:
                    cards.append(tool_html(card))

            model.dataChanged.connect(card_changed)
            try:
                assert await window.services.mcp_ready() == []
                sim.enqueue(
                    Reply(
                        tool_calls=(SimToolCall("raw__slow", {"steps": 8, "every": 0.3}, id="s1"),)
                    ),
                    Reply(text="It worked."),
                )
                await send(window, "Work long")
                sent = sim.model_requests()[-1].json()["messages"]
                assert any("worked 8 steps" in str(m.get("content")) for m in sent), sent
                assert "running…</span> 12% (1 of 8) — step 1" in cards[0]
                assert any("running…</span> 100% (8 of 8) — step 8" in c for c in cards)
                card = model.tool_item("s1")
                assert card is not None and "step 8" not in tool_html(card)  # done: no progress
            finally:
                await close_window(window)

    run(scenario(), timeout=60)
