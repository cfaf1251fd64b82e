"""OpenAI-compatible servers as they really stream (issue 13), served from recorded bytes.

Each case serves files of ``tests/providers/quirks/`` (``.sse`` bodies sent chunked, one HTTP
chunk per event, and ``.http`` whole responses; see each file's ``.md``) on 127.0.0.1, runs a
real :class:`~app.Agent` on a real SQLite file through :class:`OpenAICompatibleModel`, and
checks what the database holds, which tools ran and what was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from httpx_sse import ServerSentEvent

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    Message,
    ProviderBadRequestError,
    ProviderStreamError,
    ResumeKind,
    RetryPolicy,
    SQLiteSessionExtension,
    StepEnd,
    StopReason,
    ToolCallComplete,
    ToolMessage,
    UserMessage,
)
from app.errors import ProviderError
from app.providers import OpenAICompatibleModel, OpenAIStreamParser
from app.services.models import Models
from app.settings import SETTINGS_FILE, Settings, load_settings, save_settings
from app.storage import SQLiteSessionStore

from .conftest import BOUND
from .recorded import RecordedServer, recorded, sse_response

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=1.0)
#: A plain, standard answer: what the model says after a tool round.
FOLLOW_UP = (
    'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"m",'
    '"choices":[{"index":0,"delta":{"role":"assistant","content":"All read."},'
    '"finish_reason":null}]}\n\n'
    'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"m",'
    '"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


class Run:
    """One conversation on a real SQLite file, through the real provider class."""

    def __init__(self, server: RecordedServer, db: Path) -> None:
        self.server = server
        self.db = db
        self.extension = SQLiteSessionExtension(db)
        self.notes: list[str] = []
        self.models: list[OpenAICompatibleModel] = []

    async def agent(self, **options: Any) -> Agent:
        model = OpenAICompatibleModel(
            self.server.base_url, "m", "sk-test-1234567", timeout=5, **options
        )
        self.models.append(model)

        def read_note(path: str) -> str:
            """Read a note."""
            self.notes.append(path)
            return f"contents of {path}"

        return await Agent.create(
            model,
            config=AgentRunConfig("s1", retry=FAST),
            tools=[read_note],
            extensions=[self.extension],
        )

    async def run(self, text: str = "read my notes", **options: Any) -> AssistantMessage:
        agent = await self.agent(**options)
        async with asyncio.timeout(BOUND):
            return await agent.run(text)

    async def saved(self) -> list[Message]:
        """The history as a fresh connection to the file reads it (what a relaunch sees)."""
        store = SQLiteSessionStore(self.db)
        try:
            await store.open()
            return await store.load("s1")
        finally:
            await store.close()

    async def close(self) -> None:
        for model in self.models:
            await model.aclose()
        await self.extension.storage.close()


@pytest.fixture
async def server() -> AsyncIterator[RecordedServer]:
    item = RecordedServer(repeat_last=False)
    await item.start()
    yield item
    async with asyncio.timeout(BOUND):
        await item.stop()


@pytest.fixture
async def conversation(server: RecordedServer, tmp_path: Path) -> AsyncIterator[Run]:
    item = Run(server, tmp_path / "continuum.sqlite")
    yield item
    async with asyncio.timeout(BOUND):
        await item.close()


def kinds(history: list[Message]) -> list[str]:
    names = {UserMessage: "user", AssistantMessage: "assistant", ToolMessage: "tool"}
    return [names.get(type(m), type(m).__name__) for m in history]


async def tool_round(
    conversation: Run, calls: list[tuple[str, str]], *, requests: int = 2
) -> list[Message]:
    """Checks a run that ran ``calls`` (id, path) in order, then answered "All read."."""
    reply = await conversation.run()
    assert reply.content == "All read." and reply.stop_reason is StopReason.END_TURN
    assert conversation.notes == [path for _, path in calls]
    history = await conversation.saved()
    assert kinds(history) == ["user", "assistant"] + ["tool"] * len(calls) + ["assistant"]
    step = history[1]
    assert isinstance(step, AssistantMessage)
    assert [(c.id, c.name, dict(c.arguments)) for c in step.tool_calls] == [
        (call_id, "read_note", {"path": path}) for call_id, path in calls
    ]
    results = [m for m in history if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in results] == [
        (call_id, f"contents of {path}") for call_id, path in calls
    ]
    assert len(conversation.server.bodies) == requests
    return history


# --- tool calls -------------------------------------------------------------------------------


async def test_ollama_parallel_tool_calls_all_index_0_are_separate_calls(
    server: RecordedServer, conversation: Run
) -> None:
    server.serve("ollama-0.20-parallel-tools-index0.sse", sse_response(FOLLOW_UP))
    await tool_round(
        conversation,
        [("call_k2x9d1qa", "a.txt"), ("call_7fh3m0zp", "b.txt"), ("call_q81vz5nc", "c.txt")],
    )


async def test_gemini_tool_deltas_without_index_merge_by_id_and_position(
    server: RecordedServer, conversation: Run
) -> None:
    server.serve("gemini-openai-compat-tool-deltas-no-index.sse", sse_response(FOLLOW_UP))
    await tool_round(
        conversation,
        [("function-call-5190412338101951207", "a.txt"),
         ("function-call-5190412338101951208", "b.txt")],
    )  # fmt: skip


# --- finish reasons -------------------------------------------------------------------------


async def test_ollama_empty_finish_reason_on_chunks_is_ignored(
    server: RecordedServer, conversation: Run
) -> None:
    server.serve("ollama-2024-finish-reason-empty.sse", sse_response(FOLLOW_UP))
    history = await tool_round(conversation, [("call_ab12cd34", "todo.txt")])
    step = history[1]  # "stop" with calls: the runtime saves it as the tool use it is
    assert isinstance(step, AssistantMessage) and step.stop_reason is StopReason.TOOL_USE


async def test_koboldcpp_null_string_finish_reason_is_ignored(
    server: RecordedServer, conversation: Run
) -> None:
    server.serve("koboldcpp-1.7x-finish-reason-null-string.sse")
    reply = await conversation.run("what do I need?")
    assert reply.content == "Milk, eggs and bread." and reply.stop_reason is StopReason.END_TURN
    history = await conversation.saved()
    assert kinds(history) == ["user", "assistant"]
    assert history[-1] == reply


async def test_finish_reason_then_clean_end_without_done_is_complete(
    server: RecordedServer, conversation: Run
) -> None:
    server.serve("tgi-2.1-finish-without-done.sse")
    reply = await conversation.run("what do I need?")
    assert reply.content == "Milk and eggs." and reply.stop_reason is StopReason.END_TURN
    assert kinds(await conversation.saved()) == ["user", "assistant"]
    assert len(server.bodies) == 1
    agent = await conversation.agent()
    assert await agent.resume_point() is None


async def test_clean_end_without_finish_reason_stays_interrupted(
    server: RecordedServer, conversation: Run
) -> None:
    server.serve("tgi-2.1-cut-before-finish.sse")
    with pytest.raises(ProviderStreamError, match="no finish reason"):
        await conversation.run("what do I need?")
    history = await conversation.saved()
    assert kinds(history) == ["user", "assistant"]
    partial = history[-1]
    assert isinstance(partial, AssistantMessage)
    assert partial.content == "Milk and eggs" and partial.stop_reason is StopReason.INTERRUPTED
    assert len(server.bodies) == 1  # output had started: never retried
    agent = await conversation.agent()
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE


# --- stream_options refused ---------------------------------------------------------------

REFUSALS = [
    "vllm-0.4-400-stream-options-extra-forbidden.http",
    "azure-openai-on-your-data-400-stream-options.http",
]


@pytest.mark.parametrize("refusal", REFUSALS)
async def test_stream_options_refused_is_retried_without_it_and_remembered(
    server: RecordedServer, conversation: Run, refusal: str
) -> None:
    server.refuse_stream_options = recorded(refusal)
    server.serve("ollama-2024-finish-reason-empty.sse", sse_response(FOLLOW_UP))
    await tool_round(conversation, [("call_ab12cd34", "todo.txt")], requests=3)
    # the first step: refused, then once without; the second step goes without at once
    assert ["stream_options" in body for body in server.bodies] == [True, False, False]
    first, retried = server.bodies[0], server.bodies[1]
    assert {k: v for k, v in first.items() if k != "stream_options"} == retried


async def test_stream_options_forced_on_is_not_dropped(
    server: RecordedServer, conversation: Run
) -> None:
    server.refuse_stream_options = recorded(REFUSALS[0])
    with pytest.raises(ProviderBadRequestError, match="stream_options"):
        await conversation.run(stream_options=True)
    assert len(server.bodies) == 1
    assert kinds(await conversation.saved()) == ["user"]


async def test_stream_options_off_is_never_sent(server: RecordedServer, conversation: Run) -> None:
    server.refuse_stream_options = recorded(REFUSALS[0])
    server.serve("koboldcpp-1.7x-finish-reason-null-string.sse")
    reply = await conversation.run(stream_options=False)
    assert reply.content == "Milk, eggs and bread."
    assert ["stream_options" in body for body in server.bodies] == [False]


async def test_other_bad_request_is_not_retried_without_stream_options(
    server: RecordedServer, conversation: Run
) -> None:
    body = b'{"error":{"message":"Unknown tool_choice value","type":"invalid_request_error"}}'
    server.serve(
        b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body
    )
    with pytest.raises(ProviderError, match="Unknown tool_choice"):
        await conversation.run()
    assert len(server.bodies) == 1 and "stream_options" in server.bodies[0]


# --- reasoning deltas ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "thought", "answer"),
    [
        # delta.reasoning_content (DeepSeek, vLLM)
        ("deepseek-reasoner-reasoning-content.sse",
         "The list says milk and eggs; answer briefly.", "Milk and eggs."),
        # delta.reasoning (Ollama, LM Studio, OpenRouter)
        ("ollama-0.20-reasoning-field.sse", "The note lists milk and eggs.", "Milk and eggs."),
    ],
)  # fmt: skip
async def test_reasoning_deltas_are_saved_and_never_sent_back(
    server: RecordedServer, conversation: Run, name: str, thought: str, answer: str
) -> None:
    server.serve(name, "koboldcpp-1.7x-finish-reason-null-string.sse")
    reply = await conversation.run("what do I need?")
    assert reply.content == answer and reply.stop_reason is StopReason.END_TURN
    assert [part.text for part in reply.reasoning] == [thought]
    assert all(part.signature is None and part.redacted is None for part in reply.reasoning)
    history = await conversation.saved()  # what a relaunch reads
    assert kinds(history) == ["user", "assistant"] and history[-1] == reply
    # The next turn sends the answer without its thinking (DeepSeek refuses it back).
    await conversation.run("and then?")
    sent = server.bodies[1]["messages"]
    assistant = [m for m in sent if m["role"] == "assistant"]
    assert assistant == [{"role": "assistant", "content": answer}]
    assert thought not in json.dumps(server.bodies[1])


async def test_reasoning_cut_before_the_answer_is_kept_as_interrupted(
    server: RecordedServer, conversation: Run
) -> None:
    server.serve("deepseek-reasoner-cut-while-thinking.sse")
    with pytest.raises(ProviderStreamError, match="no finish reason"):
        await conversation.run("what do I need?")
    assert len(server.bodies) == 1  # thinking had streamed: a cut answer, not a failed request
    history = await conversation.saved()
    assert kinds(history) == ["user", "assistant"]
    partial = history[-1]
    assert isinstance(partial, AssistantMessage) and partial.content == ""
    assert partial.stop_reason is StopReason.INTERRUPTED
    assert [part.text for part in partial.reasoning] == ["The list says milk and eggs; "]


# --- the stream_options setting ----------------------------------------------------------


@pytest.mark.parametrize(("value", "sent"), [(None, [True, False]), (False, [False])])
async def test_stream_options_setting_reaches_the_model(
    server: RecordedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    value: bool | None,
    sent: list[bool],
) -> None:
    """``settings.json``'s ``stream_options`` (``null`` = auto) → the model the app builds."""
    monkeypatch.setenv("CONTINUUM_QUIRK_KEY", "sk-test-1234567")
    data = {"provider_kind": "openai", "base_url": server.base_url, "model": "m",
            "api_key_env": "CONTINUUM_QUIRK_KEY", "stream_options": value}  # fmt: skip
    (tmp_path / SETTINGS_FILE).write_text(json.dumps(data), encoding="utf-8")
    loaded = load_settings(tmp_path)
    assert loaded.problem is None and loaded.settings.stream_options is value
    save_settings(tmp_path, loaded.settings)  # saved again, it reads the same
    assert load_settings(tmp_path).settings == loaded.settings
    model = Models().build(loaded.settings)
    assert isinstance(model, OpenAICompatibleModel) and model.stream_options is value
    server.refuse_stream_options = recorded(REFUSALS[0])
    server.serve("koboldcpp-1.7x-finish-reason-null-string.sse")
    extension = SQLiteSessionExtension(tmp_path / "continuum.sqlite")
    try:
        agent = await Agent.create(model, config=AgentRunConfig("s1"), extensions=[extension])
        async with asyncio.timeout(BOUND):
            reply = await agent.run("what do I need?")
    finally:
        await model.aclose()
        await extension.storage.close()
    assert reply.content == "Milk, eggs and bread."
    assert ["stream_options" in body for body in server.bodies] == sent


@pytest.mark.parametrize("value", ["no", 0, []])
def test_stream_options_setting_of_a_wrong_type_is_refused(tmp_path: Path, value: object) -> None:
    path = tmp_path / SETTINGS_FILE
    path.write_text(json.dumps({"provider_kind": "openai", "stream_options": value}), "utf-8")
    loaded = load_settings(tmp_path)
    assert loaded.settings == Settings()  # defaults, the file kept aside, and a clear notice
    assert loaded.problem is not None and "stream_options" in loaded.problem


# --- the assembly rules, as a table (pure parser, no I/O) -------------------------------


def _piece(index: int | None = None, call_id: str | None = None, name: str = "",
           arguments: str | None = None) -> dict[str, Any]:  # fmt: skip
    raw: dict[str, Any] = {"type": "function", "function": {}}
    if index is not None:
        raw["index"] = index
    if call_id is not None:
        raw["id"] = call_id
    if name:
        raw["function"]["name"] = name
    if arguments is not None:
        raw["function"]["arguments"] = arguments
    return raw


ASSEMBLY = {
    "openai: id and name once, then arguments by index": (
        [_piece(0, "a", "f", ""), _piece(0, None, "", '{"x":'), _piece(0, None, "", "1}"),
         _piece(1, "b", "g", "{}")],
        [("a", "f", {"x": 1}), ("b", "g", {})],
    ),
    "ollama 0.20: every call index 0, each its own id": (
        [_piece(0, "a", "f", '{"x":1}'), _piece(0, "b", "f", '{"x":2}')],
        [("a", "f", {"x": 1}), ("b", "f", {"x": 2})],
    ),
    "a server re-rolling the id on argument pieces": (
        [_piece(0, "a", "f", '{"x":'), _piece(0, "z", "", "1}")],
        [("a", "f", {"x": 1})],
    ),
    "the same id repeated on every piece": (
        [_piece(0, "a", "f", '{"x":'), _piece(0, "a", "", "1}")],
        [("a", "f", {"x": 1})],
    ),
    "gemini: no index; pieces continue the last call; metadata ignored": (
        [_piece(None, "a", "f", '{"x":'), _piece(None, None, "", "1}"),
         {"extra_content": {"google": {"thought_signature": "c2ln"}}},
         _piece(None, "b", "g", "{}")],
        [("a", "f", {"x": 1}), ("b", "g", {})],
    ),
    "whole calls with neither id nor index": (
        [_piece(None, None, "f", '{"x":1}'), _piece(None, None, "g", "{}")],
        [(None, "f", {"x": 1}), (None, "g", {})],
    ),
    "the id first, the name and arguments after": (
        [_piece(0, "a"), _piece(0, None, "f", "{}")],
        [("a", "f", {})],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ASSEMBLY))
def test_tool_call_assembly(case: str) -> None:
    pieces, expected = ASSEMBLY[case]
    parser = OpenAIStreamParser(model="m")
    for raw in pieces:
        chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [raw]}, "finish_reason": None}]}
        assert parser.feed(ServerSentEvent(data=json.dumps(chunk))) == []
    stop = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    parser.feed(ServerSentEvent(data=json.dumps(stop)))
    parser.feed(ServerSentEvent(data="[DONE]"))
    calls = [e.call for e in parser.finish() if isinstance(e, ToolCallComplete)]
    assert [(c.name, dict(c.arguments)) for c in calls] == [(n, a) for _, n, a in expected]
    for call, (call_id, _, _) in zip(calls, expected, strict=True):
        assert call.id == call_id if call_id is not None else call.id.startswith("call_")


@pytest.mark.parametrize(
    ("values", "stop"),
    [
        ([None, None, "stop"], StopReason.END_TURN),
        (["", "", "tool_calls"], StopReason.TOOL_USE),
        (["null", "NULL", "length"], StopReason.MAX_OUTPUT),
        ([" ", "stop", "length"], StopReason.END_TURN),  # the first real one is kept
        (["", "eos_token"], "eos_token"),  # an unknown reason stays its raw string
    ],
)
def test_finish_reason_placeholders(values: list[str | None], stop: StopReason | str) -> None:
    parser = OpenAIStreamParser(model="m")
    for value in values:
        chunk = {"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": value}]}
        parser.feed(ServerSentEvent(data=json.dumps(chunk)))
    parser.feed(ServerSentEvent(data="[DONE]"))
    end = parser.finish()[-1]
    assert isinstance(end, StepEnd) and end.stop_reason == stop


async def test_a_byte_order_mark_before_the_stream_is_ignored(
    server: RecordedServer, conversation: Run
) -> None:
    """A proxy that writes a UTF-8 BOM before the body: the SSE spec ignores it. Before, the
    first event became an unknown field and its text ("All read.") was lost."""
    server.serve(sse_response("\ufeff" + FOLLOW_UP))
    reply = await conversation.run("what do I need?")
    assert reply.content == "All read." and reply.stop_reason is StopReason.END_TURN
    assert kinds(await conversation.saved()) == ["user", "assistant"]
