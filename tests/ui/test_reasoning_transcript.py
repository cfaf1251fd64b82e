"""Reasoning in the real window: saved reasoning opens collapsed, a click or Enter opens it, and a
streamed run shows "Thinking…" and then "Thought for N s" (real SQLite, real widgets)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QStyleOptionViewItem

from app import (
    AgentRunConfig,
    AssistantMessage,
    ModelRequest,
    Reasoning,
    ReasoningDelta,
    RetryPolicy,
    StepEnd,
    StopReason,
    TextDelta,
    UserMessage,
)
from app.services import AppServices
from app.settings import Settings
from tests.ui.helpers import close_window, make_services, open_window, until
from ui.transcript.model import ItemKind, Roles

THOUGHT = "First **add** six and <b>seven</b>"
ANSWER = "The answer is 13."


def _row(window: Any, kind: ItemKind = ItemKind.ASSISTANT) -> int:
    model = window.transcript_model
    return next(r for r in range(model.rowCount()) if model.item(r).kind is kind)


def shown(window: Any, row: int) -> str:
    """The text the row's painted documents hold (painting the viewport first)."""
    view = window.transcript
    view.viewport().grab()  # paints the visible rows through the delegate
    item = window.transcript_model.item(row)
    render = view.delegate._renders.get(item.uid)
    assert render is not None, "the row was not painted"
    return "\n".join(doc.toPlainText() for doc in render.docs())


def toggle_point(window: Any, row: int) -> QPoint:
    """Where the reasoning's toggle line is drawn (on its arrow), in viewport coordinates."""
    view = window.transcript
    index = view.model().index(row, 0)
    item = window.transcript_model.item(row)
    render = view.delegate._renders[item.uid]
    assert render.reasoning is not None
    option = QStyleOptionViewItem()
    option.font, option.palette, option.rect = view.font(), view.palette(), view.visualRect(index)
    origin = view.delegate.geometry(item, option).origins[render.docs().index(render.reasoning)]
    return QPoint(int(origin.x()) + 4, int(origin.y()) + 6)


async def _seed(tmp_path: Path) -> str:
    services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
    session = await services.new_session("Sums")
    store = services.storage.storage
    await store.append(session.id, "r1", UserMessage("What is 6 + 7?"))
    await store.append(
        session.id,
        "r1",
        AssistantMessage(ANSWER, reasoning=(Reasoning(THOUGHT, signature="sig", seconds=3.0),)),
    )
    await services.close()
    return session.id


def test_saved_reasoning_opens_collapsed_and_a_click_expands_it(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        session_id = await _seed(tmp_path)
        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            assert window.controller.session_id == session_id
            await until(lambda: window.transcript_model.rowCount() == 2, what="history shown")
            row = _row(window)
            text = shown(window, row)
            assert "Thought for 3 s" in text
            assert "six and" not in text  # collapsed: the reasoning is not shown
            assert ANSWER in text

            view = window.transcript
            QTest.mouseClick(
                view.viewport(),
                Qt.MouseButton.LeftButton,
                Qt.KeyboardModifier.NoModifier,
                toggle_point(window, row),
            )
            text = shown(window, row)
            # Shown as plain text, escaped: neither Markdown nor HTML is interpreted.
            assert THOUGHT in text
            assert ANSWER in text and text.index(THOUGHT) < text.index(ANSWER)
            assert window.transcript_model.item(row).text == ANSWER  # never the answer's text

            QTest.mouseClick(
                view.viewport(),
                Qt.MouseButton.LeftButton,
                Qt.KeyboardModifier.NoModifier,
                toggle_point(window, row),
            )
            assert THOUGHT not in shown(window, row)

            # The keyboard: Enter on the row opens it too.
            view.setFocus()
            view.setCurrentIndex(view.model().index(row, 0))
            QTest.keyClick(view, Qt.Key.Key_Return)
            assert THOUGHT in shown(window, row)
            QTest.keyClick(view, Qt.Key.Key_Space)
            assert THOUGHT not in shown(window, row)
            QTest.keyClick(view, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
            assert THOUGHT in shown(window, row)

            # Reopening the conversation shows it collapsed again.
            await window.controller.open_session(session_id)
            assert THOUGHT not in shown(window, _row(window))
            assert "Thought for 3 s" in shown(window, _row(window))
        finally:
            await close_window(window)

    run(scenario())


class HeldThinker:
    """A model that thinks in two pieces, waits for ``release``, then answers."""

    name = "thinker"

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        yield ReasoningDelta("Let me ")
        yield ReasoningDelta("think about it.")
        await self.release.wait()
        yield TextDelta("Forty-two.")
        yield StepEnd(StopReason.END_TURN)


def test_streamed_reasoning_shows_thinking_then_thought(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        from ui.window import MainWindow

        thinker = HeldThinker()
        services = AppServices(tmp_path, model_factory=lambda _settings: thinker)
        services.save_settings(
            Settings(provider_kind="openai", base_url="http://127.0.0.1:9/v1", model="m")
        )
        services.client.defaults = AgentRunConfig("default", retry=RetryPolicy(max_attempts=1))
        await services.open()
        window = MainWindow(services)
        window.resize(1000, 700)
        window.show()
        await window.start()
        try:
            assert window.controller.send("What is the answer?")
            model = window.transcript_model
            live = await until(
                lambda: (
                    (item := model.streaming_item) is not None
                    and item.reasoning == "Let me think about it."
                    and item
                ),
                what="the reasoning streams",
            )
            row = model.row_of(live)
            text = shown(window, row)
            assert "Thinking…" in text
            assert "Let me think" not in text  # collapsed while it streams, too
            thinker.release.set()
            await until(lambda: not window.controller.busy, what="the run ends")
            row = _row(window)
            text = shown(window, row)
            assert re.search(r"Thought for [^\n]* s", text), text
            assert "Thinking…" not in text and "Let me think" not in text
            assert "Forty-two." in text
            history = await services.history(window.controller.session_id)
            saved = history[-1]
            assert isinstance(saved, AssistantMessage)
            assert [part.text for part in saved.reasoning] == ["Let me think about it."]
            assert saved.content == "Forty-two."
        finally:
            await close_window(window)

    run(scenario())


def _view_with(qapp: Any, model: Any) -> Any:
    from ui.transcript.view import TranscriptView

    view = TranscriptView()
    view.setModel(model)
    view.resize(700, 500)
    view.show()
    return view


def _docs_text(view: Any, row: int) -> list[str]:
    view.viewport().grab()
    item = view.model().item(row)
    return [doc.toPlainText() for doc in view.delegate._renders[item.uid].docs()]


def test_a_step_that_only_thought_draws_no_empty_body(qapp: Any) -> None:
    from app import ToolCall, ToolMessage
    from ui.transcript.model import TranscriptModel

    model = TranscriptModel()
    call = ToolCall("c1", "read_file", {"path": "a"})
    model.load_history(
        [
            UserMessage("read a"),
            AssistantMessage("", (call,), reasoning=(Reasoning("read it", seconds=1.0),)),
            ToolMessage("c1", "read_file", "data"),
        ]
    )
    view = _view_with(qapp, model)
    assert _docs_text(view, 1) == ["Assistant", "▸ Thought for 1 s"]
    view.close()


def test_open_reasoning_follows_the_stream(qapp: Any) -> None:
    from ui.transcript.model import TranscriptModel
    from ui.transcript.rows import copy_text

    model = TranscriptModel()
    view = _view_with(qapp, model)
    model.add_user("hi")
    model.append_reasoning("one ")
    model.flush()
    row = model.rowCount() - 1
    assert model.setData(model.index(row, 0), True, Roles.EXPANDED)
    assert "one" in "\n".join(_docs_text(view, row))
    model.append_reasoning("two")
    model.flush()
    text = "\n".join(_docs_text(view, row))
    assert "▾ Thinking…" in text and "one two" in text
    model.append_delta("Answer")
    model.flush()
    model.message_saved(AssistantMessage("Answer", reasoning=(Reasoning("one two", seconds=2.0),)))
    text = "\n".join(_docs_text(view, row))
    assert "▾ Thought for 2 s" in text and "one two" in text and "Answer" in text
    # Expanded, "Copy message" takes the reasoning too; collapsed, only the answer.
    assert copy_text(model.item(row)) == "Thought for 2 s:\none two\n\nAnswer"
    assert model.setData(model.index(row, 0), False, Roles.EXPANDED)
    assert copy_text(model.item(row)) == "Answer"
    # A row without reasoning does not open.
    assert not model.setData(model.index(0, 0), True, Roles.EXPANDED)
    view.close()


def test_simulator_reasoning_reaches_the_window_collapsed(run: Any, tmp_path: Path) -> None:
    """The real provider over loopback: the simulator's ``reasoning_content`` deltas are kept
    apart from the answer, saved, and shown collapsed."""
    from app.simulator import Reply, Simulator

    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(text="Forty-two.", thinking="Weigh the options carefully."))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                assert window.controller.send("The answer?")
                await until(lambda: not window.controller.busy, what="the run ends")
                model = window.transcript_model
                row = _row(window)
                item = model.item(row)
                assert item.text == "Forty-two."
                assert item.reasoning == "Weigh the options carefully."
                text = shown(window, row)
                assert re.search(r"▸ Thought for [^\n]* s", text), text
                assert "Weigh the options" not in text
                history = await window.services.history(window.controller.session_id)
                saved = history[-1]
                assert isinstance(saved, AssistantMessage)
                assert [p.text for p in saved.reasoning] == ["Weigh the options carefully."]
            finally:
                await close_window(window)

    run(scenario())
