"""End to end: Agent → real provider class → loopback HTTP → simulator, saved in real SQLite.

After each fault: what the database holds, what ``resume_point()`` says, and how many HTTP
requests were made (retried before any output, never after).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    InternalMessage,
    Message,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderServerError,
    ProviderStreamError,
    ProviderTimeoutError,
    ResumeBlocked,
    ResumeKind,
    RetryPolicy,
    SQLiteSessionExtension,
    StopReason,
    ToolMessage,
    UserMessage,
)
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.providers.base import HTTPModel
from app.resume import CONTINUE_TEXT, RETRY_TEXT
from app.simulator import BAD_ARGUMENTS, Fault, Reply, SimToolCall, Simulator
from app.storage import SQLiteSessionStore

from .conftest import BOUND, PROTOCOLS

LONG = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=1.0)


@pytest.fixture(params=PROTOCOLS)
def protocol(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


class Harness:
    """An agent on a real SQLite file, talking to the simulator through one provider."""

    def __init__(self, sim: Simulator, db: Path, protocol: str) -> None:
        self.sim = sim
        self.db = db
        self.protocol = protocol
        self.models: list[HTTPModel] = []
        self.extension = SQLiteSessionExtension(db)
        self.note_runs: list[str] = []
        self.model = self.make_model(protocol)

    def make_model(self, protocol: str, *, timeout: float = 5.0) -> HTTPModel:
        model: HTTPModel
        if protocol == "openai":
            model = OpenAICompatibleModel(
                self.sim.openai_base_url, "sim-echo", "sk-test-1234567", timeout=timeout
            )
        else:
            model = AnthropicModel(self.sim.base_url, "sim-claude", "sk-test-1234567",
                                   timeout=timeout)  # fmt: skip
        self.models.append(model)
        return model

    async def agent(self, model: HTTPModel | None = None) -> Agent:
        def read_note(path: str) -> str:
            """Read a note."""
            self.note_runs.append(path)
            return f"contents of {path}"

        return await Agent.create(
            model or self.model,
            config=AgentRunConfig("s1", retry=FAST),
            tools=[read_note],
            extensions=[self.extension],
        )

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
async def harness(
    protocol: str, sim: Simulator, tmp_path: Path
) -> AsyncIterator[Callable[[], Harness]]:
    made: list[Harness] = []

    def factory() -> Harness:
        made.append(Harness(sim, tmp_path / "continuum.sqlite", protocol))
        return made[-1]

    yield factory
    async with asyncio.timeout(BOUND):
        for item in made:
            await item.close()


def kinds(history: list[Message]) -> list[str]:
    names = {UserMessage: "user", InternalMessage: "internal", AssistantMessage: "assistant",
             ToolMessage: "tool"}  # fmt: skip
    return [names[type(m)] for m in history]


async def test_plain_answer(harness: Callable[[], Harness]) -> None:
    h = harness()
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run(LONG)
    assert reply.content == LONG and reply.stop_reason is StopReason.END_TURN
    assert reply.usage is not None and reply.usage.output_tokens == 10
    assert kinds(await h.saved()) == ["user", "assistant"]
    assert await agent.resume_point() is None


async def test_failures_before_output_are_retried(harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(
        Fault.http_status(429, retry_after=0.01),
        Fault.drop_after(0),
        Reply(text="third time lucky"),
    )
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run("hi")
    assert reply.content == "third time lucky"
    assert len(h.sim.model_requests()) == 3
    assert kinds(await h.saved()) == ["user", "assistant"]


async def test_retries_exhausted_leave_call_model(harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(Fault.http_status(503), Fault.http_status(529), Fault.error_event_after(0))
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        with pytest.raises(ProviderServerError):
            await agent.run("hi")
    assert len(h.sim.model_requests()) == 3
    assert kinds(await h.saved()) == ["user"]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    async with asyncio.timeout(BOUND):
        reply = await agent.resume()
    assert reply.content == "hi" and await agent.resume_point() is None


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.drop_after(5), ProviderConnectionError),
        (Fault.malformed_after(5), ProviderStreamError),
        (Fault.eof_after(5), ProviderStreamError),
        (Fault.error_event_after(5, "overloaded_error"), ProviderServerError),
    ],
    ids=["drop", "malformed", "eof", "error_event"],
)
async def test_cut_after_output_is_saved_interrupted_and_not_retried(
    protocol: str, fault: Fault, error: type[Exception], harness: Callable[[], Harness]
) -> None:
    h = harness()
    h.sim.enqueue(fault)
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        with pytest.raises(error):
            await agent.run(LONG)
    assert len(h.sim.model_requests()) == 1  # never retried once output had started
    history = await h.saved()
    assert kinds(history) == ["user", "assistant"]
    partial = history[-1]
    assert isinstance(partial, AssistantMessage)
    assert partial.stop_reason is StopReason.INTERRUPTED
    assert partial.content and LONG.startswith(partial.content) and partial.content != LONG
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE

    async with asyncio.timeout(BOUND):
        reply = await agent.resume()
    assert reply.stop_reason is StopReason.END_TURN and reply.content == RETRY_TEXT
    assert kinds(await h.saved()) == ["user", "assistant", "internal", "assistant"]
    assert await agent.resume_point() is None


async def test_stall_after_output(protocol: str, harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(Fault.stall_after(5))
    agent = await h.agent(h.make_model(protocol, timeout=0.3))
    async with asyncio.timeout(BOUND):
        with pytest.raises(ProviderTimeoutError):
            await agent.run(LONG)
    assert len(h.sim.model_requests()) == 1
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE


async def test_length_cut_then_continue(harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(Reply(stop="max_output"))
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run(LONG)
    assert reply.stop_reason is StopReason.MAX_OUTPUT and reply.content == LONG
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CONTINUE_RESPONSE
    async with asyncio.timeout(BOUND):
        reply = await agent.resume()
    assert reply.content == CONTINUE_TEXT
    # the continuation request carried the cut answer and the note, in this provider's format
    body = h.sim.model_requests()[-1].json()
    assert LONG in str(body["messages"]) and CONTINUE_TEXT in str(body["messages"])


async def test_refusal_is_final(harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(Reply(text="No.", stop="refusal"))
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run("something bad")
    assert reply.stop_reason is StopReason.REFUSAL
    assert await agent.resume_point() is None
    status = await agent.resume_status()
    assert isinstance(status, ResumeBlocked) and status.reason == "refused"


async def test_context_full_error_is_not_retried(harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(Fault.context_full())
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        with pytest.raises(ProviderContextLengthError, match="context window"):
            await agent.run("a very long prompt")
    assert len(h.sim.model_requests()) == 1
    # An empty CONTEXT_FULL step marks it, so resume does not resend what cannot fit.
    assert kinds(await h.saved()) == ["user", "assistant"]
    assert (await h.saved())[-1].stop_reason is StopReason.CONTEXT_FULL
    assert await agent.resume_point() is None


async def test_tool_call_with_split_arguments_runs_once(harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(
        Reply(text="Reading.", tool_calls=(SimToolCall("read_note", {"path": "todo.md"}),),
              argument_chunk=2),
        Reply(text="Done reading."),
    )  # fmt: skip
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run("read my todo")
    assert reply.content == "Done reading."
    assert h.note_runs == ["todo.md"]
    history = await h.saved()
    assert kinds(history) == ["user", "assistant", "tool", "assistant"]
    result = history[2]
    assert isinstance(result, ToolMessage) and result.content == "contents of todo.md"


async def test_invalid_tool_arguments_never_run_the_tool(harness: Callable[[], Harness]) -> None:
    h = harness()
    bad = (SimToolCall("read_note", BAD_ARGUMENTS),)
    h.sim.enqueue(Reply(text="", tool_calls=bad), Reply(text="Reading now."))
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run("read it")  # the garbled step had no output: retried
    assert reply.content == "Reading now." and len(h.sim.model_requests()) == 2

    h.sim.enqueue(Reply(text="Reading.", tool_calls=bad))
    async with asyncio.timeout(BOUND):
        with pytest.raises(ProviderStreamError, match="not run"):
            await agent.run("again")
    assert h.note_runs == []
    last = (await h.saved())[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason is StopReason.INTERRUPTED
    assert last.tool_calls == ()
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE


async def test_resume_on_the_other_provider(protocol: str, harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(
        Reply(text="Reading.", tool_calls=(SimToolCall("read_note", {"path": "a"},
                                                       id="functions.read_note:0"),)),
        Fault.drop_after(4),
    )  # fmt: skip
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        with pytest.raises(ProviderConnectionError):
            await agent.run("read a, then summarise it at length please")
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    other = h.make_model("anthropic" if protocol == "openai" else "openai")
    async with asyncio.timeout(BOUND):
        reply = await agent.resume(model=other)
    assert reply.stop_reason is StopReason.END_TURN and h.note_runs == ["a"]
    assert kinds(await h.saved()) == [
        "user", "assistant", "tool", "assistant", "internal", "assistant"
    ]  # fmt: skip


@pytest.mark.parametrize("protocol", ["anthropic"])  # Chat Completions has no pause_turn
async def test_pause_turn_is_called_again(harness: Callable[[], Harness]) -> None:
    h = harness()
    h.sim.enqueue(Reply(text="Searching…", stop="paused"), Reply(text="Found it."))
    agent = await h.agent()
    async with asyncio.timeout(BOUND):
        reply = await agent.run("search")
    assert reply.content == "Found it." and len(h.sim.model_requests()) == 2
    history = await h.saved()
    assert [getattr(m, "stop_reason", None) for m in history] == [
        None, StopReason.PAUSED, StopReason.END_TURN
    ]  # fmt: skip
    # the paused turn went back to Anthropic as the final assistant turn of the second request
    body = h.sim.model_requests()[-1].json()
    assert body["messages"][-1]["role"] == "assistant"
