"""File → Import conversations… and the exports, in the real window on the simulator.

ChatGPT's fixture is imported through the menu (the file dialog replaced by a chooser): the
conversations appear in the sidebar, the first one opens, a message box says what was imported,
and a conversation with an edit and a regeneration shows its current branch. A branched
conversation exports as Markdown (the branch shown) and JSON (the tree), and the JSON imports
back. A file that is not a conversation export says so and imports nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from app import AssistantMessage, UserMessage
from tests.ui.helpers import until, window_on_simulator
from ui.sidebar_rows import SESSION_ROLE

FIXTURE = Path(__file__).parents[1] / "fixtures" / "chatgpt" / "conversations.json"
SOURDOUGH = "6f1c2a9e-3b47-4d2e-9a61-0c5b8e7d1f10"


def transcript_texts(window: Any) -> list[str]:
    model = window.transcript_model
    return [model.item(row).text for row in range(model.rowCount())]


def click_sidebar_row(window: Any, session_id: str) -> None:
    listing = window.sidebar.list
    index = window.sidebar.index_of(session_id)
    if not index.isValid() or index.data(SESSION_ROLE) != session_id:
        raise AssertionError(f"{session_id} is not in the sidebar")
    listing.scrollTo(index)
    point = listing.visualRect(index).center()
    QTest.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=point)


def import_through_menu(window: Any, path: Path) -> None:
    asked: list[Any] = []

    def choose(parent: Any) -> Path:
        asked.append(parent)
        return path

    window.commands.choose_import = choose
    window.commands.import_box = None
    window.findChild(QAction, "importAction").trigger()
    assert asked == [window]


def test_import_chatgpt_through_the_menu_shows_conversations_and_the_current_branch(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (_sim, window):
            assert window.sidebar.session_ids() == []
            import_through_menu(window, FIXTURE)
            box = await until(lambda: window.commands.import_box, what="the import's report")
            assert isinstance(box, QMessageBox) and box.isVisible()
            assert (
                box.text() == "Imported 4 conversations from conversations.json (ChatGPT export)."
            )
            assert "1 × custom instructions" in box.informativeText()
            titles = {window.sidebar.title_of(sid) for sid in window.sidebar.session_ids()}
            assert titles == {
                "Sourdough starter schedule",
                "Plot a sine wave",
                "Übersetzung ins Japanische 🇯🇵",
                "Untitled conversation",
            }
            # The first conversation of the file is open: the question its answer never got.
            await until(lambda: window.controller.session_id is not None)
            assert transcript_texts(window) == ["Draft a two-line haiku about tea?"]
            box.close()

            click_sidebar_row(window, SOURDOUGH)
            await until(lambda: window.controller.session_id == SOURDOUGH, what="opened")
            await until(lambda: len(transcript_texts(window)) == 4, what="the branch shown")
            texts = transcript_texts(window)
            assert texts[0].startswith("How often should I feed a new sourdough starter?")
            assert texts[2].startswith("And if I use whole-grain rye flour")  # the edit
            assert texts[3].endswith("ripe apples. 🍎")  # the regenerated answer
            assert not any("stirrable" in t or "Rye ferments faster" in t for t in texts)
            assert window.windowTitle().startswith("Sourdough starter schedule")

    run(scenario(), timeout=60)


def test_a_branched_conversation_exports_and_its_json_imports_back(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (_sim, window):
            store = window.services.storage.storage
            info = await store.create_session(None, "Branches")
            sid = info.id
            await store.append(sid, "r", UserMessage("Name a red fruit"))
            await store.append(sid, "r", AssistantMessage("Cherry.", model="sim"))
            await store.append(sid, "r2", AssistantMessage("Strawberry.", model="sim"), parent=1)
            await window.refresh_sessions()
            await window.controller.open_session(sid)
            await until(lambda: transcript_texts(window) == ["Name a red fruit", "Strawberry."])
            await window.export("md", tmp_path / "out.md")
            await window.export("json", tmp_path / "out.json")
            markdown = (tmp_path / "out.md").read_text(encoding="utf-8")
            assert "Strawberry." in markdown and "Cherry." not in markdown
            assert "1 more version of messages" in markdown
            document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
            assert document["leaf"] == 3
            assert [(m["seq"], m["parent_seq"]) for m in document["messages"]] == [
                (1, None),
                (2, 1),
                (3, 1),
            ]

            import_through_menu(window, tmp_path / "out.json")
            box = await until(lambda: window.commands.import_box, what="the import's report")
            assert (
                box.text()
                == "Imported 1 conversation from out.json (Continuum export (version 2))."
            )
            copy = window.controller.session_id
            assert copy not in (None, sid)  # the id was taken: a new one
            assert len(window.sidebar.session_ids()) == 2
            await until(lambda: transcript_texts(window) == ["Name a red fruit", "Strawberry."])
            assert await store.versions(copy) == [(2, 3)]
            box.close()  # a box left open would keep the keyboard from the next tests

    run(scenario(), timeout=60)


def test_a_file_that_is_not_an_export_says_so_and_imports_nothing(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        path = tmp_path / "notes.json"
        path.write_text('{"notes": ["milk", "eggs"]}', encoding="utf-8")
        async with window_on_simulator(tmp_path / "data") as (_sim, window):
            window.commands.choose_import = lambda _parent: None  # the person cancelled
            window.findChild(QAction, "importAction").trigger()
            assert window.commands.import_box is None
            import_through_menu(window, path)
            box = await until(lambda: window.commands.import_box, what="the import's report")
            assert box.text() == "Nothing was imported."
            assert window.statusBar().currentMessage() == "Nothing was imported."
            assert "neither a Continuum export nor ChatGPT's conversations.json" in (
                box.informativeText()
            )
            assert box.icon() is QMessageBox.Icon.Warning
            assert window.sidebar.session_ids() == []
            box.close()

    run(scenario(), timeout=60)
