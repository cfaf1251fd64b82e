"""Tool approval through the real window: real simulator, real SQLite, real workspace tools.

The simulator answers with a ``write_file`` call of :class:`app.tools.workspace.Workspace`;
the approval card asks; its real buttons decide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app import DENIED_TOOL_TEXT, ToolCall, ToolMessage
from app.simulator import Reply, SimToolCall, Simulator
from app.storage.journal import TOOL_AWAITING_APPROVAL, TOOL_STARTED
from app.tools.workspace import Workspace
from tests.ui.helpers import close_window, open_window, until, window_on_simulator
from ui.approval import describe_call
from ui.transcript.model import ItemKind, ToolState

AFTER = "The file is written."


def write_reply(call_id: str, name: str = "notes.txt", content: str = "hello\n") -> Reply:
    return Reply(
        text="I will write the file.",
        tool_calls=(SimToolCall("write_file", {"path": name, "content": content}, id=call_id),),
    )


def setup_tools(window: Any, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    window.services.client.tools = tuple(Workspace(ws).tools())
    return ws


def card_of(window: Any, call_id: str) -> Any:
    return window.transcript_model.tool_item(call_id)


async def send(window: Any, text: str) -> None:
    window.composer.edit.setPlainText(text)
    window.composer.send_button.click()


def test_allow_once_writes_the_file_once(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            ws = setup_tools(window, tmp_path)
            sim.enqueue(write_reply("c1"))
            sim.enqueue(Reply(text=AFTER))
            await send(window, "Write a note")
            card = window.approval_card
            await until(card.isVisible, 10, "the approval card")
            assert card.current_call.id == "c1"
            assert "write_file" in card.title.text()
            assert "notes.txt" in card.details.toPlainText()
            assert "hello" in card.details.toPlainText()
            assert card_of(window, "c1").state is ToolState.AWAITING_APPROVAL
            assert not (ws / "notes.txt").exists()  # nothing runs before the answer
            sid = window.controller.session_id
            states = await window.services.journal.tool_states(sid)
            assert states == {"c1": TOOL_AWAITING_APPROVAL}

            card.allow_once_button.click()
            await until(lambda: not window.controller.busy, 10, "the answer")
            assert not card.isVisible()
            assert (ws / "notes.txt").read_text() == "hello\n"
            assert card_of(window, "c1").state is ToolState.DONE
            assert await window.services.journal.tool_states(sid) == {"c1": TOOL_STARTED}
            last = window.transcript_model.item(window.transcript_model.rowCount() - 1)
            assert last.text == AFTER

            # Allow once is once: the next write asks again.
            sim.enqueue(write_reply("c2", content="again\n"))
            sim.enqueue(Reply(text=AFTER))
            await send(window, "Write it again")
            await until(card.isVisible, 10, "asked again")
            assert card.current_call.id == "c2"
            card.allow_once_button.click()
            await until(lambda: not window.controller.busy, 10, "the second answer")
            assert (ws / "notes.txt").read_text() == "again\n"

    run(scenario(), timeout=45)


def test_deny_answers_denied_and_writes_nothing(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            ws = setup_tools(window, tmp_path)
            sim.enqueue(write_reply("c1"))
            sim.enqueue(Reply(text="Understood, I will not write it."))
            await send(window, "Write a note")
            card = window.approval_card
            await until(card.isVisible, 10, "the approval card")
            card.deny_button.click()
            await until(lambda: not window.controller.busy, 10, "the answer")
            assert not card.isVisible()
            assert not (ws / "notes.txt").exists()
            tool_card = card_of(window, "c1")
            assert tool_card.state is ToolState.DENIED
            assert "denied" in tool_card.accessible_text()
            history = await window.services.history(window.controller.session_id)
            answers = [m for m in history if isinstance(m, ToolMessage)]
            assert [(m.content, m.success) for m in answers] == [(DENIED_TOOL_TEXT, False)]
            # The model was told.
            sent = sim.model_requests()[-1].json()["messages"]
            assert any(DENIED_TOOL_TEXT in str(m.get("content")) for m in sent), sent

    run(scenario(), timeout=45)


def test_allow_for_this_conversation_does_not_ask_again(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            window = await open_window(tmp_path / "data", sim.openai_base_url)
            ws = setup_tools(window, tmp_path)
            asked: list[str] = []
            window.controller.approvalRequested.connect(lambda call, _f: asked.append(call.id))
            try:
                sim.enqueue(write_reply("c1", "a.txt"))
                sim.enqueue(write_reply("c2", "b.txt"))
                sim.enqueue(Reply(text=AFTER))
                await send(window, "Write two notes")
                card = window.approval_card
                await until(card.isVisible, 10, "the approval card")
                card.allow_conversation_button.click()
                await until(lambda: not window.controller.busy, 10, "the answer")
                assert asked == ["c1"]
                assert (ws / "a.txt").exists() and (ws / "b.txt").exists()
                assert card_of(window, "c2").state is ToolState.DONE
            finally:
                await close_window(window)

    run(scenario(), timeout=45)


def test_stop_while_awaiting_approval_cancels(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            ws = setup_tools(window, tmp_path)
            sim.enqueue(write_reply("c1"))
            await send(window, "Write a note")
            card = window.approval_card
            await until(card.isVisible, 10, "the approval card")
            window.composer.stop_button.click()
            await until(lambda: not window.controller.busy, 10, "stopped")
            await until(lambda: not card.isVisible(), 10, "the card goes away")
            await until(
                lambda: card_of(window, "c1").state is ToolState.CANCELLED,
                10,
                "the tool card says cancelled",
            )
            assert not (ws / "notes.txt").exists()

    run(scenario(), timeout=45)


def test_edit_file_shows_a_diff() -> None:
    call = ToolCall(
        "e", "edit_file", {"path": "a.py", "old_text": "x = 1\n", "new_text": "x = 2\n"}
    )
    text = describe_call(call)
    assert "--- a/a.py" in text and "+++ b/a.py" in text
    assert "-x = 1" in text and "+x = 2" in text


def test_tool_card_items_and_words() -> None:
    from ui.transcript.render import _TOOL_STATE_WORDS

    assert set(_TOOL_STATE_WORDS) == set(ToolState)
    assert "may or may not have run" in _TOOL_STATE_WORDS[ToolState.UNKNOWN]
    assert ItemKind.TOOL.value == "tool"
