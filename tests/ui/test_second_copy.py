"""A second running copy of the app (another AppServices on the same data folder).

The conversation lock is an ``flock``, so a second object in this process conflicts exactly as
a second process would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app import AssistantMessage, UserMessage
from app.services import SessionLockedError
from app.simulator import Reply, Simulator
from tests.ui.helpers import close_window, make_services, open_window, until
from ui.controller import LOCKED_ELSEWHERE
from ui.window import MainWindow


async def _drain(events: AsyncIterator[Any]) -> None:
    async for _event in events:
        pass


async def _refused(events: AsyncIterator[Any]) -> str:
    with pytest.raises(SessionLockedError) as caught:
        await _drain(events)
    return str(caught.value)


def test_second_copy_cannot_resume_what_the_window_runs(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(tokens=3000, tokens_per_second=200))
            window = await open_window(tmp_path, sim.openai_base_url)
            second: MainWindow | None = None
            try:
                assert window.controller.send("Tell me a long story")
                model = window.transcript_model
                await until(
                    lambda: model.streaming_item is not None and model.streaming_item.text,
                    what="streaming",
                )
                sid = window.controller.session_id
                assert sid is not None

                other = await make_services(tmp_path, sim.openai_base_url)
                await other.configure_model()
                # Its startup did not take the live request for a crash.
                assert (await other.resume_info(sid)).stop is None
                message = await _refused(other.stream_resume(sid))
                assert "another Continuum window" in message and "Traceback" not in message
                await _refused(other.stream(sid, "me too"))
                assert window.controller.busy  # the first copy's answer goes on

                # The second copy's window shows the conversation read-only, with words.
                second = MainWindow(other)
                second.resize(900, 600)
                second.show()
                await second.start()
                assert second.controller.session_id == sid
                assert second.controller.read_only
                await until(lambda: second.resume_bar.isVisible(), what="notice")
                assert second.resume_bar.message.text() == LOCKED_ELSEWHERE
                assert not second.resume_bar.resume_button.isVisible()
                assert not second.controller.resume()
                assert not second.controller.send("hello from the second copy")
                assert not second.controller.busy

                # Stopped in the first window: still the first window's conversation.
                window.composer.stop_button.click()
                await until(
                    lambda: not window.controller.busy and window.resume_bar.isVisible(),
                    what="stopped",
                )
                assert "You stopped this answer." in window.resume_bar.message.text()
                await _refused(other.stream_resume(sid))
                second.resume_bar.show_info(None)
                await second.controller.open_session(sid)
                assert second.controller.read_only
                assert second.resume_bar.message.text() == LOCKED_ELSEWHERE
                assert not second.controller.resume()

                # The first window resumes; only its requests reached the provider.
                sim.enqueue(Reply(text="The end of the story."))
                window.resume_bar.resume_button.click()
                await until(
                    lambda: (
                        not window.controller.busy
                        and model.item(model.rowCount() - 1).text == "The end of the story."
                    ),
                    what="resumed",
                )
                assert len(sim.model_requests()) == 2
                history = await window.services.history(sid)
                assert [type(m) for m in history] == [UserMessage, AssistantMessage]
                assert not [m for m in history if "second copy" in str(m)]
            finally:
                if second is not None:
                    await close_window(second)
                await close_window(window)

    run(scenario(), timeout=60)


def test_conversation_is_free_once_the_first_window_closes(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Reply(text="hello", stop="max_output"))
            window = await open_window(tmp_path, sim.openai_base_url)
            closed = False
            try:
                window.controller.send("Say hello")
                await until(
                    lambda: not window.controller.busy and window.resume_bar.isVisible(),
                    what="cut at the limit",
                )
                sid = window.controller.session_id
                assert sid is not None
                other = await make_services(tmp_path, sim.openai_base_url)
                await other.configure_model()
                await _refused(other.stream_resume(sid))  # open in the first window
                await close_window(window)
                closed = True
                sim.enqueue(Reply(text=" world"))
                await _drain(other.stream_resume(sid))  # now it may
                history = await other.history(sid)
                assert [m.content for m in history if isinstance(m, AssistantMessage)] == [
                    "hello",
                    " world",
                ]
                await other.close()
            finally:
                if not closed:
                    await close_window(window)

    run(scenario())
