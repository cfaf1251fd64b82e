"""Stop, faults, crashes and the Resume bar — real simulator, real SQLite, real widgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app import AssistantMessage, StopReason, ToolCall, UserMessage
from app.simulator import Fault, Reply, SimToolCall, Simulator
from app.storage.journal import StopKind
from tests.ui.helpers import close_window, make_services, open_window, until
from ui.transcript.model import ItemKind, ToolState


def _bar_text(window: Any) -> str:
    return window.resume_bar.message.text()


def test_stop_shows_bar_then_resume_finishes(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(tokens=3000, tokens_per_second=300))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                model = window.transcript_model
                assert window.controller.send("Tell me a long story")
                await until(lambda: model.streaming_item and len(model.streaming_item.text) > 20)
                task = window.controller.task
                window.composer.stop_button.click()
                await until(lambda: not window.controller.busy)
                assert task is not None and task.done()
                await until(lambda: window.resume_bar.isVisible(), what="resume bar")
                assert "You stopped this answer" in _bar_text(window)
                assert window.resume_bar.resume_button.isVisible()
                assert window.resume_bar.message.toolTip()  # point.description
                # The unsaved partial answer stays visible, marked as not part of the history.
                assert model.item(1).kind is ItemKind.DRAFT
                sim.enqueue(Reply(text="The end.", tokens_per_second=500))
                window.resume_bar.resume_button.click()
                await until(
                    lambda: (
                        window.controller.busy
                        or model.item(model.rowCount() - 1).text == "The end."
                    )
                )
                await until(lambda: not window.controller.busy)
                assert model.item(model.rowCount() - 1).text == "The end."
                assert not window.resume_bar.isVisible()
                # The answer replaced the interrupted text on screen too.
                assert [model.item(r).kind for r in range(model.rowCount())] == [
                    ItemKind.USER,
                    ItemKind.ASSISTANT,
                ]
                history = await window.services.history(window.controller.session_id)
                assert [type(m).__name__ for m in history] == ["UserMessage", "AssistantMessage"]
                assert history[-1].content == "The end."
            finally:
                await close_window(window)

    run(scenario())


def test_connection_dropped_after_output_then_resume(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(
                Reply(
                    text="alpha beta gamma delta epsilon zeta eta theta", fault=Fault.drop_after(4)
                )
            )
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                window.controller.send("Greek letters please")
                await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
                text = _bar_text(window)
                assert "connection" in text.lower(), text
                assert "Traceback" not in text
                assert window.resume_bar.resume_button.isVisible()
                model = window.transcript_model
                cut = model.item(1)
                assert cut.kind is ItemKind.ASSISTANT and cut.stop_reason == "interrupted"
                sim.enqueue(Reply(text="alpha beta gamma delta epsilon zeta eta theta"))
                window.resume_bar.resume_button.click()
                await until(lambda: window.controller.busy)
                await until(lambda: not window.controller.busy)
                kinds = [i.kind for i in model.items()]
                assert kinds == [
                    ItemKind.USER,
                    ItemKind.ASSISTANT,
                    ItemKind.NOTE,
                    ItemKind.ASSISTANT,
                ]
                assert model.item(3).text.endswith("theta")
                assert not window.resume_bar.isVisible()
            finally:
                await close_window(window)

    run(scenario())


def test_rate_limited_shows_provider_message(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(
                Reply(fault=Fault.http_status(429, retry_after=1, message="Slow down, please"))
            )
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                window.controller.send("hello")
                await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
                text = _bar_text(window)
                assert "provider" in text.lower() and "Slow down" in text, text
                assert "Traceback" not in text
                assert window.resume_bar.resume_button.isVisible()  # CALL_MODEL
                info = window.resume_bar.info
                assert info is not None and info.stop.kind is StopKind.PROVIDER_ERROR
            finally:
                await close_window(window)

    run(scenario())


def test_length_cut_then_continue_is_joined(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(text="The first half", stop="max_output"))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                window.controller.send("Write a lot")
                await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
                assert "output limit" in _bar_text(window)
                assert window.resume_bar.resume_button.text() == "Continue"
                sim.enqueue(Reply(text=" and the second half."))
                window.resume_bar.resume_button.click()
                await until(lambda: window.controller.busy)
                await until(lambda: not window.controller.busy)
                model = window.transcript_model
                last = model.item(model.rowCount() - 1)
                assert last.kind is ItemKind.ASSISTANT and last.joined
                assert model.item(model.rowCount() - 2).kind is ItemKind.NOTE
            finally:
                await close_window(window)

    run(scenario())


def test_relaunch_after_crash_shows_bar_and_draft(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        # What a killed app leaves: the user message saved, a running marker, a draft.
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        session = await services.new_session("Crashy")
        await services.storage.storage.append(session.id, "r1", UserMessage("Explain WAL"))
        await services.journal.mark_running(session.id, "r1")
        await services.journal.save_draft(session.id, "Write-ahead logging keeps")
        await services.client.close()  # no clean shutdown of the request: like kill -9
        services.locks.release_all()

        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            assert window.controller.session_id == session.id
            await until(lambda: window.resume_bar.isVisible())
            assert "closed unexpectedly" in _bar_text(window)
            assert window.resume_bar.resume_button.isVisible()
            model = window.transcript_model
            drafts = [i for i in model.items() if i.kind is ItemKind.DRAFT]
            assert [d.text for d in drafts] == ["Write-ahead logging keeps"]
            assert window.sidebar.has_badge(session.id)
            # The draft is never part of what the model is sent.
            history = await window.services.history(session.id)
            assert all("Write-ahead" not in getattr(m, "content", "") for m in history)
        finally:
            await close_window(window)

    run(scenario())


def test_recover_tools_lists_the_tools(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        session = await services.new_session("Tools")
        store = services.storage.storage
        await store.append(session.id, "r1", UserMessage("Write the notes"))
        await store.append(
            session.id,
            "r1",
            AssistantMessage(
                "",
                (
                    ToolCall("c1", "write_file", {"path": "notes.txt"}),
                    ToolCall("c2", "list_directory", {"path": "."}),
                ),
            ),
        )
        await services.close()

        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            await until(lambda: window.resume_bar.isVisible())
            tools = window.resume_bar.tools
            assert tools.isVisible()
            assert "write_file" in tools.text() and "list_directory" in tools.text()
            assert "may or may not have run" in tools.text()
            cards = [i for i in window.transcript_model.items() if i.kind is ItemKind.TOOL]
            assert [c.state for c in cards] == [ToolState.UNKNOWN, ToolState.UNKNOWN]
        finally:
            await close_window(window)

    run(scenario())


def test_refusal_explains_next_step_without_resume(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(text="I can't help with that.", stop="refusal"))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                window.controller.send("something refused")
                await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
                assert "Rephrase" in _bar_text(window)
                assert not window.resume_bar.resume_button.isVisible()
                assert window.resume_bar.dismiss_button.isVisible()
            finally:
                await close_window(window)

    run(scenario())


def test_context_full_explains_next_step_without_resume(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        session = await services.new_session("Full")
        store = services.storage.storage
        await store.append(session.id, "r1", UserMessage("huge"))
        await store.append(
            session.id, "r1", AssistantMessage("", stop_reason=StopReason.CONTEXT_FULL)
        )
        await services.close()
        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            await until(lambda: window.resume_bar.isVisible())
            assert "new conversation" in _bar_text(window).lower()
            assert not window.resume_bar.resume_button.isVisible()
        finally:
            await close_window(window)

    run(scenario())


def test_context_full_error_from_provider_offers_no_plain_resume(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(fault=Fault.context_full()))
            window = await open_window(tmp_path, sim.openai_base_url)
            try:
                window.controller.send("too long")
                await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
                assert "context window" in _bar_text(window)
                assert not window.resume_bar.resume_button.isVisible()
            finally:
                await close_window(window)

    run(scenario())


def test_tool_call_becomes_collapsible_card(run: Any, tmp_path: Path) -> None:
    def read_note(path: str) -> str:
        """Read a note."""
        return f"contents of {path}"

    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(
                Reply(
                    text="Let me look.", tool_calls=(SimToolCall("read_note", {"path": "a.txt"}),)
                ),
                Reply(text="The note says hello."),
            )
            window = await open_window(tmp_path, sim.openai_base_url)
            window.services.client.tools = (__import__("app").as_tool(read_note),)
            try:
                window.controller.send("What does a.txt say?")
                await until(lambda: not window.controller.busy)
                model = window.transcript_model
                kinds = [i.kind for i in model.items()]
                assert kinds == [
                    ItemKind.USER,
                    ItemKind.ASSISTANT,
                    ItemKind.TOOL,
                    ItemKind.ASSISTANT,
                ]
                card = model.item(2)
                assert card.state is ToolState.DONE and card.result == "contents of a.txt"
                assert not card.expanded
                toggle = next(
                    a for a in window.transcript.anchors(2) if a.startswith("continuum-toggle")
                )
                window.transcript.activate_anchor(2, toggle)
                assert card.expanded
                assert any("contents of a.txt" in a or True for a in [card.result])
            finally:
                await close_window(window)

    run(scenario())
