"""``continuum-chat`` (a real process on a pipe) against llama.cpp's own server on the tiny model.

The history is read back from the database file the process wrote.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.messages import AssistantMessage, InternalMessage, Message, StopReason, UserMessage
from app.services import DATABASE_FILE
from app.storage.sqlite import SQLiteSessionExtension
from tests.app.core.test_cli import Console

from .model import ANSWER, LOOP_TEXT
from .server import LlamaServer


def _saved(data: Path, session_id: str = "cli") -> list[Message]:
    async def load() -> list[Message]:
        ext = SQLiteSessionExtension(data / DATABASE_FILE)
        try:
            return await ext.storage.load(session_id)
        finally:
            await ext.storage.close()

    return asyncio.run(load())


def _chat(data: Path, server: LlamaServer) -> Console:
    return Console("--data-dir", str(data), "--openai", server.base_url, "--model", "tiny-llama")


def test_continuum_chat_answers_from_llama_cpp_and_saves_it(
    tmp_path: Path, llama: LlamaServer
) -> None:
    data = tmp_path / "data"
    chat = _chat(data, llama)
    try:
        chat.wait_for("> ")
        chat.type("hello llama")
        chat.wait_for(ANSWER)
        chat.wait_for("> ", count=2)
        code, out, err = chat.finish("/quit")
    finally:
        chat.kill()
    assert code == 0, out + err
    assert "Traceback" not in err
    saved = _saved(data)
    assert [type(m) for m in saved] == [UserMessage, AssistantMessage]
    assert saved[0].content == "hello llama"
    assert isinstance(saved[1], AssistantMessage) and saved[1].content == ANSWER
    assert saved[1].stop_reason is StopReason.END_TURN


def test_continuum_chat_when_the_context_fills_up(tmp_path: Path, small_llama: LlamaServer) -> None:
    data = tmp_path / "data"
    chat = _chat(data, small_llama)
    try:
        chat.wait_for("> ")
        chat.type("LOOP until the context is full")
        chat.wait_for(LOOP_TEXT)
        chat.wait_for("> ", count=2)
        chat.type("/resume")
        chat.wait_for("> ", count=3)
        code, out, err = chat.finish("/quit")
    finally:
        chat.kill()
    assert code == 0, out + err
    assert "Traceback" not in err
    # Continue cannot fit: llama.cpp's HTTP 400 is shown as the context-window message, with
    # what to do instead of /resume; the core marks it with an empty CONTEXT_FULL step.
    assert "no longer fits the context window" in out
    assert "start a new one with /new" in out and "type /resume to continue" not in out
    saved = _saved(data)
    assert [type(m) for m in saved] == [
        UserMessage,
        AssistantMessage,
        InternalMessage,
        AssistantMessage,
    ]
    assert isinstance(saved[3], AssistantMessage)
    assert saved[3].stop_reason is StopReason.CONTEXT_FULL and not saved[3].content
    assert isinstance(saved[1], AssistantMessage)
    assert saved[1].stop_reason is StopReason.MAX_OUTPUT
