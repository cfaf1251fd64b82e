"""The per-conversation workspace folder and the configured MCP servers, through the real window.

Real simulator, real SQLite, real file tools, a real MCP server over stdio
(``tests/fixtures/mcp_server.py``); approvals go through the card's real buttons.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog, QPushButton

from app import ToolMessage
from app.settings import load_settings
from app.simulator import Reply, SimToolCall, Simulator
from app.tools.mcp import McpServerConfig
from tests.ui.helpers import close_window, make_services, open_window, until, window_on_simulator

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_server.py"
FILE_TOOLS = {"list_directory", "read_file", "write_file", "edit_file"}


def offered_tools(sim: Simulator) -> set[str]:
    """The tool names the model was offered in its last request."""
    body = sim.model_requests()[-1].json()
    return {t["function"]["name"] for t in body.get("tools") or []}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def send(window: Any, text: str) -> None:
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()


async def answered(window: Any) -> None:
    await until(lambda: not window.controller.busy, 15, "the answer")


async def window_with(data: Path, sim: Simulator, **settings: Any) -> Any:
    from ui.window import MainWindow

    services = await make_services(data, sim.openai_base_url)
    services.save_settings(dataclasses.replace(services.settings, **settings))
    window = MainWindow(services)
    window.resize(1000, 700)
    window.show()
    await window.start()
    return window


def test_workspace_folder_per_conversation_survives_reopen(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    asked: list[str] = []

    def pick(_parent: Any, _title: str, start: str = "", *_a: Any) -> str:
        asked.append(start)
        return str(folder)

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(pick))

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await open_window(tmp_path / "data", sim.openai_base_url)
            try:
                button = window.findChild(QPushButton, "workspaceButton")
                assert button is not None and "No workspace" in button.text()
                # Conversation A gets the folder (picked before its first message).
                button.click()
                await until(lambda: "project" in button.text(), 10, "the folder on the button")
                session_a = window.controller.session_id
                assert session_a is not None and asked
                sim.enqueue(
                    Reply(
                        text="Writing.",
                        tool_calls=(
                            SimToolCall(
                                "write_file", {"path": "notes.txt", "content": "from A\n"}, id="w1"
                            ),
                        ),
                    )
                )
                sim.enqueue(Reply(text="Written."))
                await send(window, "Write a note")
                card = window.approval_card
                await until(card.isVisible, 10, "the approval card")
                assert "notes.txt" in card.details.toPlainText()
                assert not (folder / "notes.txt").exists()
                assert FILE_TOOLS <= offered_tools(sim)
                window.findChild(QPushButton, "approveOnceButton").click()
                await answered(window)
                assert (folder / "notes.txt").read_text() == "from A\n"
                await until(
                    lambda: window.sidebar.title_of(session_a) == "Write a note",
                    5,
                    "A is named after its first message",
                )

                # Conversation B: no folder, so the model is offered no file tools at all.
                window.new_conversation()
                await until(lambda: window.controller.session_id is None, 10, "a new one")
                await until(lambda: "No workspace" in button.text(), 10, "B's button")
                sim.enqueue(Reply(text="No files here."))
                await send(window, "What files are there?")
                await answered(window)
                session_b = window.controller.session_id
                assert session_b is not None and session_b != session_a
                assert not FILE_TOOLS & offered_tools(sim)
                assert await window.services.workspace(session_b) is None
            finally:
                await close_window(window)

            # Reopen the app on the same data folder: A still has its folder and reads the file.
            window = await open_window(tmp_path / "data", sim.openai_base_url)
            try:
                assert await window.services.workspace(session_a) == str(folder.resolve())
                await window.controller.open_session(session_a)
                button = window.findChild(QPushButton, "workspaceButton")
                await until(lambda: "project" in button.text(), 10, "A's folder again")
                sim.enqueue(
                    Reply(
                        text="Reading.",
                        tool_calls=(SimToolCall("read_file", {"path": "notes.txt"}, id="r1"),),
                    )
                )
                sim.enqueue(Reply(text="It says: from A."))
                await send(window, "Read the note")
                await answered(window)  # read_file has no side effects: nothing to approve
                history = await window.services.history(session_a)
                results = [m for m in history if isinstance(m, ToolMessage)]
                assert results[-1].success and "from A" in results[-1].content

                # "No workspace folder" clears it: the next request has no file tools.
                window.no_workspace_action.trigger()
                await until(lambda: "No workspace" in button.text(), 10, "cleared")
                sim.enqueue(Reply(text="OK."))
                await send(window, "And now?")
                await answered(window)
                assert not FILE_TOOLS & offered_tools(sim)
            finally:
                await close_window(window)

    run(scenario(), timeout=90)


def test_missing_workspace_folder_gives_no_tools_and_a_message(run: Any, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()

    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            await window.set_workspace(str(gone))
            gone.rmdir()
            sim.enqueue(Reply(text="Still here."))
            await send(window, "Hello")
            await answered(window)
            assert not FILE_TOOLS & offered_tools(sim)
            assert (
                window.transcript_model.item(window.transcript_model.rowCount() - 1).text
                == "Still here."
            )
            await until(
                lambda: "no longer exists" in window.statusBar().currentMessage(),
                5,
                "the status message",
            )
            await window.refresh_workspace()
            assert "(missing)" in window.workspace_button.text()

    run(scenario(), timeout=45)


def test_mcp_server_from_settings_answers_through_approval(run: Any, tmp_path: Path) -> None:
    state = tmp_path / "mcp-state"
    server = McpServerConfig("fixture", sys.executable, (str(SERVER), str(state)))

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await window_with(tmp_path / "data", sim, mcp_servers=(server,))
            try:
                assert await window.services.mcp_ready() == []
                assert "fixture__echo" in {t.name for t in window.services.mcp_tools}
                sim.enqueue(
                    Reply(
                        text="Asking the server.",
                        tool_calls=(SimToolCall("fixture__echo", {"text": "ping"}, id="m1"),),
                    )
                )
                sim.enqueue(Reply(text="The server said echo."))
                await send(window, "Echo ping")
                card = window.approval_card
                await until(card.isVisible, 20, "the approval card")
                assert "fixture__echo" in card.title.text()
                assert "fixture__echo" in offered_tools(sim)
                window.findChild(QPushButton, "approveOnceButton").click()
                await answered(window)
                sent = sim.model_requests()[-1].json()["messages"]
                assert any("echo: ping" in str(m.get("content")) for m in sent), sent
                pid = int((state / "pid").read_text())
            finally:
                await close_window(window)
            assert window.services.mcp_sources == []
            await until(lambda: not alive(pid), 5, "closing stops the server")

    run(scenario(), timeout=60)


def test_mcp_server_that_cannot_start_is_reported_and_the_app_works(
    run: Any, tmp_path: Path
) -> None:
    broken = McpServerConfig("broken", str(tmp_path / "no-such-command"))

    async def scenario() -> None:
        async with Simulator() as sim:
            window = await window_with(tmp_path / "data", sim, mcp_servers=(broken,))
            try:
                problems = await window.services.mcp_ready()
                assert len(problems) == 1 and "'broken'" in problems[0]
                await until(
                    lambda: "broken" in window.statusBar().currentMessage(), 5, "the status message"
                )
                sim.enqueue(Reply(text="Still answering."))
                await send(window, "Hello")
                await answered(window)
                assert (
                    window.transcript_model.item(window.transcript_model.rowCount() - 1).text
                    == "Still answering."
                )
            finally:
                await close_window(window)

    run(scenario(), timeout=45)


def test_mcp_servers_in_settings_file(tmp_path: Path) -> None:
    from app.settings import save_settings

    good = McpServerConfig("files", "npx", ("-y", "srv", "a b"), env={"K": "v"})
    settings = load_settings(tmp_path).settings
    save_settings(tmp_path, dataclasses.replace(settings, mcp_servers=(good,)))
    loaded = load_settings(tmp_path)
    assert loaded.problem is None and loaded.settings.mcp_servers == (good,)

    data = json.loads((tmp_path / "settings.json").read_text())
    data["mcp_servers"] += [{"name": "nocmd"}, "junk", {"name": "files", "command": "x"}]
    (tmp_path / "settings.json").write_text(json.dumps(data))
    loaded = load_settings(tmp_path)
    assert loaded.settings.mcp_servers == (good,)
    assert loaded.problem and "'nocmd'" in loaded.problem and "number 3" in loaded.problem
    assert "used twice" in loaded.problem


def test_settings_dialog_adds_and_removes_servers(qapp: Any) -> None:
    from app.settings import Settings
    from ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings(provider_kind="simulator"))
    dialog.mcp_name.setText("files")
    dialog.mcp_command.setText("npx -y 'my server' /tmp/x")
    dialog.mcp_add.click()
    assert dialog.result_settings().mcp_servers == (
        McpServerConfig("files", "npx", ("-y", "my server", "/tmp/x")),
    )
    dialog.mcp_list.setCurrentRow(0)
    dialog.mcp_remove.click()
    assert dialog.result_settings().mcp_servers == ()
    dialog.deleteLater()
