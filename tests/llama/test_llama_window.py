"""The real main window (offscreen Qt, qasync) against llama.cpp's own server on the tiny model.

The window is built by the UI tests' helpers on a real data folder; the history is read back
through the window's services.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists

import keyring
import pytest

from app import AgentRunConfig, RetryPolicy
from app.discovery import KNOWN_LOCAL_SERVERS, LocalServer, discover_local_servers
from app.resume import CONTINUE_TEXT, RETRY_TEXT
from app.services import AppServices
from tests.ui.helpers import MemoryKeyring, close_window, open_window, qasync_runner, until
from ui.transcript.model import ItemKind

from .model import ANSWER, LOOP_TEXT
from .server import LlamaServer


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def _no_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATA", "STATE", "CONFIG", "CACHE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / f"xdg-{name.lower()}"))


@pytest.fixture
def run(qapp: Any) -> Iterator[Callable[..., Any]]:
    with qasync_runner(qapp) as runner:
        yield runner


def test_window_shows_and_saves_the_answer(run: Any, tmp_path: Path, llama: LlamaServer) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path / "data", llama.base_url)
        try:
            model = window.transcript_model
            assert window.controller.send("hello llama")
            await until(lambda: not window.controller.busy and model.rowCount() == 2)
            assert model.item(1).text == ANSWER
            assert not window.resume_bar.isVisible()
            history = await window.services.history(window.controller.session_id)
            assert [type(m).__name__ for m in history] == ["UserMessage", "AssistantMessage"]
            assert history[-1].content == ANSWER
        finally:
            await close_window(window)

    run(scenario())


def test_window_when_the_answer_fills_the_context_offers_no_resume(
    run: Any, tmp_path: Path, small_llama: LlamaServer
) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path / "data", small_llama.base_url)
        try:
            model = window.transcript_model
            assert window.controller.send("LOOP until the context is full")
            await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
            assert model.item(1).text.startswith(LOOP_TEXT)
            assert "output limit" in window.resume_bar.message.text()
            assert window.resume_bar.resume_button.isVisible()
            window.resume_bar.resume_button.click()  # Continue: llama.cpp answers HTTP 400
            await until(
                lambda: (
                    not window.controller.busy
                    and "no longer fits" in window.resume_bar.message.text()
                ),
                what="the context-full message",
            )
            text = window.resume_bar.message.text()
            assert "context window" in text and "Traceback" not in text
            assert window.resume_bar.isVisible()
            assert not window.resume_bar.resume_button.isVisible()  # no endless Resume
            history = await window.services.history(window.controller.session_id)
            names = [type(m).__name__ for m in history]
            assert names == [
                "UserMessage",
                "AssistantMessage",
                "InternalMessage",
                "AssistantMessage",
            ]
            assert history[1].stop_reason == "max_output"
            assert history[3].stop_reason == "context_full" and not history[3].content
        finally:
            await close_window(window)

    run(scenario())


def test_welcome_finds_llama_cpp_and_answers_through_it(
    run: Any, tmp_path: Path, llama: LlamaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The welcome panel's probe (app.discovery, the real HTTP listing) finds the server. It
    listens on a free port, not llama.cpp's default 8080 (which may be taken on the machine):
    the probe is pointed at it under the same name."""
    assert ("llama.cpp server", 8080) in KNOWN_LOCAL_SERVERS
    here = tuple((name, llama.port if port == 8080 else port) for name, port in KNOWN_LOCAL_SERVERS)

    async def probe() -> list[LocalServer]:
        return await discover_local_servers(here)

    monkeypatch.setattr(AppServices, "discover_local_servers", lambda self: probe())

    async def scenario() -> None:
        window = await open_window(tmp_path / "data", None)
        try:
            assert window.stack.currentWidget() is window.welcome  # nothing configured yet
            welcome = window.welcome
            await until(lambda: welcome._server_buttons, what="a found server")
            found = [b for b in welcome._server_buttons if b.text().startswith("Use llama.cpp")]
            assert len(found) == 1, [b.text() for b in welcome._server_buttons]
            assert "tiny-llama.gguf" in found[0].text()  # llama.cpp lists the model file
            found[0].click()
            await until(lambda: window.stack.currentWidget() is not window.welcome)
            assert window.services.settings.base_url == llama.base_url
            assert window.controller.send("hello llama")
            model = window.transcript_model
            await until(lambda: not window.controller.busy and model.rowCount() == 2)
            assert model.item(1).text == ANSWER
            history = await window.services.history(window.controller.session_id)
            assert history[-1].content == ANSWER
        finally:
            await close_window(window)

    run(scenario())


def test_window_output_limit_then_continue(run: Any, tmp_path: Path, llama: LlamaServer) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path / "data", llama.base_url)
        window.services.client.defaults = AgentRunConfig(
            "default", retry=RetryPolicy(max_attempts=1), max_output_tokens=8
        )
        try:
            model = window.transcript_model
            assert window.controller.send("Say it LOOP")
            await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
            rows = [(model.item(r).kind, model.item(r).text) for r in range(model.rowCount())]
            cut = "again and again and again and again and"  # 8 tokens
            assert rows == [(ItemKind.USER, "Say it LOOP"), (ItemKind.ASSISTANT, cut)]
            assert "output limit" in window.resume_bar.message.text()
            window.resume_bar.resume_button.click()  # Continue
            await until(
                lambda: not window.controller.busy and not window.resume_bar.isVisible(),
                what="the continued answer",
            )
            rows = [(model.item(r).kind, model.item(r).text) for r in range(model.rowCount())]
            # the continuation note has no LOOP marker: the model's fixed answer follows
            assert rows == [
                (ItemKind.USER, "Say it LOOP"),
                (ItemKind.ASSISTANT, cut),
                (ItemKind.NOTE, "Continued after the output limit"),
                (ItemKind.ASSISTANT, ANSWER),
            ]
            history = await window.services.history(window.controller.session_id)
            assert [(type(m).__name__, m.content) for m in history] == [
                ("UserMessage", "Say it LOOP"),
                ("AssistantMessage", cut),
                ("InternalMessage", CONTINUE_TEXT),
                ("AssistantMessage", ANSWER),
            ]
        finally:
            await close_window(window)

    run(scenario())


def test_window_server_killed_mid_answer_then_restarted_resume_finishes(
    run: Any, tmp_path: Path, own_llama: LlamaServer
) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path / "data", own_llama.base_url)
        try:
            model = window.transcript_model
            assert window.controller.send("LOOP for a long time")
            await until(lambda: model.streaming_item and model.streaming_item.text, what="text")
            own_llama.kill()  # SIGKILL mid-stream
            await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
            text = window.resume_bar.message.text()
            assert "connection to the provider dropped" in text and "Traceback" not in text
            partial = model.item(1).text
            assert model.item(1).kind is ItemKind.ASSISTANT
            assert partial.startswith("again") and ("again" + " and again" * 4000).startswith(
                partial.rstrip()
            )
            own_llama.start()  # the same port again
            window.resume_bar.resume_button.click()
            await until(
                lambda: not window.controller.busy and not window.resume_bar.isVisible(),
                what="the resumed answer",
            )
            rows = [(model.item(r).kind, model.item(r).text) for r in range(model.rowCount())]
            assert rows == [
                (ItemKind.USER, "LOOP for a long time"),
                (ItemKind.ASSISTANT, partial),
                (ItemKind.NOTE, "Asked the model to redo the interrupted response"),
                (ItemKind.ASSISTANT, ANSWER),
            ]
            history = await window.services.history(window.controller.session_id)
            assert [(type(m).__name__, m.content) for m in history] == [
                ("UserMessage", "LOOP for a long time"),
                ("AssistantMessage", partial),
                ("InternalMessage", RETRY_TEXT),
                ("AssistantMessage", ANSWER),
            ]
            assert history[1].stop_reason == "interrupted"
        finally:
            await close_window(window)

    run(scenario())


def test_window_stop_mid_answer_then_resume(
    run: Any, tmp_path: Path, own_llama: LlamaServer
) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path / "data", own_llama.base_url)
        try:
            model = window.transcript_model
            assert window.controller.send("LOOP for a long time")
            await until(lambda: model.streaming_item and model.streaming_item.text, what="text")
            window.composer.stop_button.click()
            await until(lambda: not window.controller.busy and window.resume_bar.isVisible())
            assert "You stopped this answer" in window.resume_bar.message.text()
            # the unsaved partial stays on screen as a draft; only the question is saved
            assert model.item(1).kind is ItemKind.DRAFT and model.item(1).text.startswith("again")
            history = await window.services.history(window.controller.session_id)
            assert [type(m).__name__ for m in history] == ["UserMessage"]
            window.services.client.defaults = AgentRunConfig(
                "default", retry=RetryPolicy(max_attempts=1), max_output_tokens=8
            )
            window.resume_bar.resume_button.click()  # asks again, now cut at 8 tokens
            await until(
                lambda: (
                    not window.controller.busy
                    and "output limit" in window.resume_bar.message.text()
                ),
                what="the resumed answer",
            )
            cut = "again and again and again and again and"
            rows = [(model.item(r).kind, model.item(r).text) for r in range(model.rowCount())]
            assert rows == [(ItemKind.USER, "LOOP for a long time"), (ItemKind.ASSISTANT, cut)]
            history = await window.services.history(window.controller.session_id)
            assert [(type(m).__name__, m.content) for m in history] == [
                ("UserMessage", "LOOP for a long time"),
                ("AssistantMessage", cut),
            ]
        finally:
            await close_window(window)

    run(scenario())


def test_window_runs_the_tool_call_once_and_the_answer_continues(
    run: Any, tmp_path: Path, llama: LlamaServer
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "todo.md").write_text("buy milk\n")

    async def scenario() -> None:
        window = await open_window(tmp_path / "data", llama.base_url)
        try:
            await window.set_workspace(str(folder))
            model = window.transcript_model
            assert window.controller.send("Use the TOOL please")
            await until(lambda: not window.controller.busy, what="done")
            kinds = [model.item(r).kind for r in range(model.rowCount())]
            assert kinds == [ItemKind.USER, ItemKind.TOOL, ItemKind.ASSISTANT]
            assert model.item(2).text == ANSWER
            assert not window.resume_bar.isVisible()
            history = await window.services.history(window.controller.session_id)
            assert [type(m).__name__ for m in history] == [
                "UserMessage", "AssistantMessage", "ToolMessage", "AssistantMessage",
            ]  # fmt: skip
            call = history[1].tool_calls
            assert [(c.name, c.arguments) for c in call] == [("read_file", {"path": "todo.md"})]
            assert history[2].content == "buy milk\n"  # the real file, read once
            assert history[3].content == ANSWER
        finally:
            await close_window(window)

    run(scenario())
