"""A saved tool answer's outcome decides its card: real SQLite file, real window, real delegate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QStyleOptionViewItem

from app import NOT_STARTED_TOOL_TEXT, AssistantMessage, ToolCall, ToolMessage, UserMessage
from app.messages import ToolOutcome
from tests.ui.helpers import close_window, make_services, open_window, until
from ui.transcript.model import ItemKind, ToolState

OFFLINE = "http://127.0.0.1:9/v1"


def _card_text(window: Any, item: Any) -> str:
    """What the transcript really draws for a tool card (its rendered documents)."""
    option = QStyleOptionViewItem()
    window.transcript.initViewItemOption(option)
    render = window.transcript.delegate.render_for(item, 600.0, option)
    return "\n".join(doc.toPlainText() for doc in render.docs())


def test_calls_that_never_started_do_not_show_as_failed(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, OFFLINE)
        session = await services.new_session("Stopped before tools")
        store = services.storage.storage
        calls = (
            ToolCall("c1", "write_file", {"path": "a.txt"}),
            ToolCall("c2", "write_file", {"path": "b.txt"}),
            ToolCall("c3", "write_file", {"path": "c.txt"}),
            ToolCall("c4", "write_file", {"path": "d.txt"}),
        )
        await store.append(session.id, "r1", UserMessage("Write the files"))
        await store.append(session.id, "r1", AssistantMessage("", calls))
        # With the outcome recorded (the words do not matter then), and as saved before
        # outcomes existed (only the core's text says it never started).
        await store.append(
            session.id,
            "r1",
            ToolMessage(
                "c1", "write_file", "Stopped.", success=False, outcome=ToolOutcome.NOT_STARTED
            ),
        )
        await store.append(
            session.id, "r1", ToolMessage("c2", "write_file", NOT_STARTED_TOOL_TEXT, success=False)
        )
        await store.append(
            session.id,
            "r1",
            ToolMessage(
                "c3", "write_file", "disk on fire", success=False, outcome=ToolOutcome.FAILED
            ),
        )
        await store.append(
            session.id,
            "r1",
            ToolMessage(
                "c4", "write_file", "may have", success=False, outcome=ToolOutcome.MAY_HAVE_RUN
            ),
        )
        await services.close()

        window = await open_window(tmp_path, OFFLINE)
        try:
            model = window.transcript_model
            await until(lambda: model.rowCount() == 5, what="the saved conversation")
            cards = [i for i in model.items() if i.kind is ItemKind.TOOL]
            assert [c.state for c in cards] == [
                ToolState.NOT_RUN,
                ToolState.NOT_RUN,
                ToolState.FAILED,
                ToolState.UNKNOWN,
            ]
            for card in cards[:2]:
                text = _card_text(window, card)
                assert "did not run" in text and "failed" not in text, text
            assert "failed" in _card_text(window, cards[2])
            assert "may or may not have run" in _card_text(window, cards[3])
        finally:
            await close_window(window)

    run(scenario())
