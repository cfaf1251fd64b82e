"""Stop while a tool runs — real simulator, real SQLite, the real Stop button."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from app import CANCELLED_TOOL_TEXT, AssistantMessage, ToolMessage, UserMessage, as_tool
from app.simulator import Reply, SimToolCall, Simulator
from app.storage.journal import StopKind
from tests.ui.helpers import close_window, open_window, until
from ui.transcript.model import ItemKind, ToolState


def test_stop_while_tool_runs_then_resume(run: Any, tmp_path: Path) -> None:
    started = asyncio.Event()
    calls: list[str] = []
    finished: list[str] = []

    async def slow_lookup(topic: str) -> str:
        """Look something up (never finishes in this test)."""
        calls.append(topic)
        started.set()
        await asyncio.Event().wait()  # forever, until cancelled
        finished.append(topic)  # pragma: no cover - never reached
        return "never"

    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(
                Reply(
                    text="Let me look that up.",
                    tool_calls=(SimToolCall("slow_lookup", {"topic": "tides"}),),
                )
            )
            window = await open_window(tmp_path, sim.openai_base_url)
            window.services.client.tools = (as_tool(slow_lookup),)
            try:
                model = window.transcript_model
                window.composer.edit.setPlainText("When is high tide?")
                window.composer.send_button.click()
                await asyncio.wait_for(started.wait(), 10)
                assert window.controller.busy
                cards = [i for i in model.items() if i.kind is ItemKind.TOOL]
                assert len(cards) == 1 and cards[0].call is not None
                card = cards[0]
                assert card.call.name == "slow_lookup"
                assert card.state is ToolState.RUNNING
                assert window.composer.stop_button.isVisible()

                window.composer.stop_button.click()
                await until(lambda: not window.controller.busy, what="request stopped")
                await until(lambda: window.resume_bar.isVisible(), what="resume bar")

                # The card no longer claims the tool is running: it was cancelled.
                settled = await until(
                    lambda: card.state if card.state is not ToolState.RUNNING else None,
                    what="card settles",
                )
                assert settled is ToolState.CANCELLED, settled
                assert card.result == CANCELLED_TOOL_TEXT
                assert "running" not in card.accessible_text()

                # The history answers the call with the cancellation text.
                sid = window.controller.session_id
                assert sid is not None
                history = await window.services.history(sid)
                assert [type(m) for m in history] == [UserMessage, AssistantMessage, ToolMessage]
                assert history[1].content == "Let me look that up."
                tool_message = history[2]
                assert isinstance(tool_message, ToolMessage)
                assert tool_message.content == CANCELLED_TOOL_TEXT
                assert not tool_message.success
                assert tool_message.tool_call_id == history[1].tool_calls[0].id

                # The bar says in words that the person stopped it, and offers Resume.
                assert "You stopped this answer." in window.resume_bar.message.text()
                info = window.resume_bar.info
                assert info is not None and info.stop is not None
                assert info.stop.kind is StopKind.STOPPED
                assert window.resume_bar.resume_button.isVisible()
                assert window.resume_bar.message.toolTip()
                assert window.composer.send_button.isVisible()
                assert not window.composer.stop_button.isVisible()

                sim.enqueue(Reply(text="High tide is at noon."))
                window.resume_bar.resume_button.click()
                assert window.controller.busy
                assert not window.resume_bar.isVisible()
                await until(lambda: not window.controller.busy, what="resume finishes")
                await until(lambda: not window.resume_bar.isVisible(), what="bar hidden")
                last = model.item(model.rowCount() - 1)
                assert last.kind is ItemKind.ASSISTANT and last.text == "High tide is at noon."
                history = await window.services.history(sid)
                assert [type(m) for m in history] == [
                    UserMessage,
                    AssistantMessage,
                    ToolMessage,
                    AssistantMessage,
                ]
                assert history[-1].content == "High tide is at noon."
                assert (await window.services.resume_info(sid)).point is None
                # Resuming answered with the cancellation; it did not run the tool again.
                assert calls == ["tides"]
                assert finished == []
                # The model saw the cancellation text when asked again.
                posts = sim.model_requests()
                assert len(posts) == 2
                assert CANCELLED_TOOL_TEXT in posts[1].body.decode("utf-8")
            finally:
                await close_window(window)

    run(scenario())
