"""The runtime (SPEC A3-A5) on real SQLite files: events, retries, cancellation, limits, hooks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from app import (
    CANCELLED_TOOL_TEXT,
    DENIED_TOOL_TEXT,
    GOAL_COMPLETE_MARKER,
    NOT_STARTED_TOOL_TEXT,
    Agent,
    AgentClient,
    AgentEvent,
    AgentRunConfig,
    AssistantMessage,
    EventType,
    FunctionTool,
    IncompleteStreamError,
    InternalMessage,
    JSONLExtension,
    ModelRequest,
    ModelStoppedEvent,
    ProviderAuthError,
    ProviderRateLimitError,
    ProviderServerError,
    ResumeBlocked,
    ResumeKind,
    RetryEvent,
    RetryPolicy,
    RunContext,
    SessionBusyError,
    SQLiteSessionExtension,
    StepEnd,
    StopReason,
    SyncAgent,
    TextDelta,
    ToolCall,
    ToolCallComplete,
    ToolMessage,
    ToolRoundLimitError,
    UserMessage,
    tool,
)
from app.resume import CONTINUE_TEXT, RECOVERED_TOOL_TEXT, RETRY_TEXT
from app.testing import ScriptedModel, text_step, tool_step
from tests.app.helpers import Gate, HangingModel, tool_call_step

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=1.0)


@pytest.fixture
async def storage(db_path: str) -> AsyncIterator[SQLiteSessionExtension]:
    ext = SQLiteSessionExtension(db_path)
    yield ext
    await ext.storage.close()


async def make(
    model: object, storage: SQLiteSessionExtension, session: str = "s", **kwargs: object
) -> Agent:
    config_keys = {
        "retry",
        "max_tool_rounds",
        "max_pause_turns",
        "system_prompt",
        "max_output_tokens",
        "max_goal_turns",
    }
    config = AgentRunConfig(
        session, **{"retry": FAST, **{k: v for k, v in kwargs.items() if k in config_keys}}
    )  # type: ignore[arg-type]
    rest = {k: v for k, v in kwargs.items() if k not in config_keys}
    extensions = [storage, *rest.pop("extra_extensions", [])]  # type: ignore[misc]
    return await Agent.create(model, config, extensions=extensions, **rest)  # type: ignore[arg-type]


async def collect(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [event async for event in events]


# --- a plain request ---------------------------------------------------------------------------


async def test_stream_events_in_order_and_everything_saved(
    storage: SQLiteSessionExtension,
) -> None:
    model = ScriptedModel([text_step("Hello there", chunk=3)])
    agent = await make(model, storage)
    events = await collect(agent.stream("hi"))
    kinds = [e.type for e in events]
    assert kinds == [
        EventType.RUN_STARTED,
        EventType.MESSAGE_SAVED,
        *[EventType.TEXT_DELTA] * 4,
        EventType.MESSAGE_SAVED,
        EventType.RUN_COMPLETED,
    ]
    assert "".join(e.text for e in events if e.type is EventType.TEXT_DELTA) == "Hello there"
    saved = [e for e in events if e.type is EventType.MESSAGE_SAVED]
    assert [e.seq for e in saved] == [1, 2]
    assert await storage.storage.load("s") == [
        UserMessage("hi"),
        AssistantMessage("Hello there", stop_reason="end_turn", model="scripted"),
    ]
    assert await agent.resume_point() is None


async def test_nothing_is_written_before_the_first_request(db_path: str) -> None:
    storage = SQLiteSessionExtension(db_path)
    agent = await make(ScriptedModel(), storage, session="new")
    assert await storage.storage.get_session("new") is None
    status = await agent.resume_status()
    assert isinstance(status, ResumeBlocked) and status.reason == "empty"
    await storage.storage.close()


async def test_tool_round_runs_each_call_once_and_saves_each_result(
    storage: SQLiteSessionExtension,
) -> None:
    runs: list[str] = []

    def lookup(q: str) -> str:
        """Look something up.

        Args:
            q: what to look up
        """
        runs.append(q)
        return f"found {q}"

    calls = (ToolCall("a", "lookup", {"q": "x"}), ToolCall("b", "lookup", {"q": "y"}))
    model = ScriptedModel([tool_step(*calls, text="Let me look."), text_step("Both found.")])
    agent = await make(model, storage, tools=[lookup])
    events = await collect(agent.stream("find x and y"))
    assert sorted(runs) == ["x", "y"]
    assert [e.call.id for e in events if e.type is EventType.TOOL_CALL] == ["a", "b"]
    results = [e for e in events if e.type is EventType.TOOL_RESULT]
    assert {r.message.content for r in results} == {"found x", "found y"}
    history = await storage.storage.load("s")
    assert history[1] == AssistantMessage(
        "Let me look.", tool_calls=calls, stop_reason="tool_use", model="scripted"
    )
    assert {m.tool_call_id for m in history[2:4]} == {"a", "b"}  # type: ignore[union-attr]
    assert history[-1].content == "Both found."  # type: ignore[union-attr]
    # The second request carried the tool's spec and both results.
    second = model.requests[1]
    assert [t.name for t in second.tools] == ["lookup"]
    assert second.tools[0].parameters["properties"]["q"]["description"] == "what to look up"
    assert sum(isinstance(m, ToolMessage) for m in second.messages) == 2


async def test_async_tools_of_one_step_run_concurrently(storage: SQLiteSessionExtension) -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    async def wait_for_peer(name: str) -> str:
        """Wait until both calls are running."""
        started.append(name)
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 5)
        return name

    calls = (
        ToolCall("a", "wait_for_peer", {"name": "a"}),
        ToolCall("b", "wait_for_peer", {"name": "b"}),
    )
    model = ScriptedModel([tool_step(*calls), text_step("ok")])
    agent = await make(model, storage, tools=[wait_for_peer])
    assert (await agent.run("go")).content == "ok"
    assert sorted(started) == ["a", "b"]


async def test_tool_failures_become_failed_results(storage: SQLiteSessionExtension) -> None:
    def explode() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    calls = (
        ToolCall("a", "explode", {}),
        ToolCall("b", "missing_tool", {}),
        ToolCall("c", "explode", {"extra": 1}),
    )
    model = ScriptedModel([tool_step(*calls), text_step("noted")])
    agent = await make(model, storage, tools=[explode])
    await agent.run("go")
    results = {m.tool_call_id: m for m in model.requests[1].messages if isinstance(m, ToolMessage)}
    assert results["a"].success is False and "RuntimeError: disk on fire" in results["a"].content
    assert results["b"].success is False and "no tool named 'missing_tool'" in results["b"].content
    assert results["c"].success is False and "extra" in results["c"].content


async def test_side_effect_tool_denied_is_answered_and_never_runs(
    storage: SQLiteSessionExtension,
) -> None:
    runs: list[str] = []

    @tool(side_effects=True)
    def delete_everything() -> str:
        """Delete all the files."""
        runs.append("ran")
        return "deleted"

    asked: list[tuple[str, str]] = []

    async def approve(call: ToolCall, spec: FunctionTool) -> bool:
        asked.append((call.id, spec.name))
        return False

    model = ScriptedModel([tool_step(ToolCall("d", "delete_everything", {})), text_step("ok")])
    agent = await make(model, storage, tools=[delete_everything], approve_tool=approve)
    await agent.run("clean up")
    assert asked == [("d", "delete_everything")] and runs == []
    result = model.requests[1].messages[-1]
    assert result == ToolMessage("d", "delete_everything", DENIED_TOOL_TEXT, success=False)


async def test_tool_calls_with_end_turn_still_run(storage: SQLiteSessionExtension) -> None:
    """Some servers (Ollama) finish a tool-calling step with "stop"."""
    runs: list[int] = []

    def ping() -> str:
        """Ping."""
        runs.append(1)
        return "pong"

    model = ScriptedModel(
        [tool_call_step(ToolCall("p", "ping", {}), stop="end_turn"), text_step("done")]
    )
    agent = await make(model, storage, tools=[ping])
    assert (await agent.run("ping")).content == "done"
    assert runs == [1]
    assert (await storage.storage.load("s"))[1].stop_reason is StopReason.TOOL_USE  # type: ignore[union-attr]


# --- retries -----------------------------------------------------------------------------------


async def test_failures_before_output_are_retried(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel(
        [
            ProviderServerError("overloaded", status_code=529),
            ConnectionResetError("reset"),
            text_step("third time lucky"),
        ]
    )
    agent = await make(model, storage)
    events = await collect(agent.stream("hi"))
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [r.attempt for r in retries] == [1, 2]
    assert len(model.requests) == 3
    assert events[-1].reply.content == "third time lucky"  # type: ignore[union-attr]


async def test_retries_exhausted_leave_a_resumable_history(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel([ProviderServerError(f"down {i}", status_code=503) for i in range(3)])
    agent = await make(model, storage)
    with pytest.raises(ProviderServerError, match="down 2"):
        await agent.run("hi")
    assert len(model.requests) == 3
    assert await storage.storage.load("s") == [UserMessage("hi")]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    model.add(text_step("back"))
    assert (await agent.resume()).content == "back"
    assert len(model.requests) == 4  # resume() itself called once: it never retries on its own


async def test_retry_disabled_with_one_attempt(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel([ProviderServerError("down", status_code=500), text_step("never")])
    agent = await make(model, storage, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(ProviderServerError):
        await agent.run("hi")
    assert len(model.requests) == 1


async def test_errors_that_cannot_succeed_are_not_retried(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel([ProviderAuthError("bad key", status_code=401), text_step("never")])
    agent = await make(model, storage)
    with pytest.raises(ProviderAuthError):
        await agent.run("hi")
    assert len(model.requests) == 1


async def test_retry_after_is_honoured(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel(
        [
            ProviderRateLimitError("slow down", status_code=429, retry_after=0.02),
            text_step("ok"),
        ]
    )
    agent = await make(model, storage)
    events = await collect(agent.stream("hi"))
    retry = next(e for e in events if isinstance(e, RetryEvent))
    assert retry.delay == 0.02 and "slow down" in retry.error


async def test_retry_after_longer_than_the_policy_allows_goes_to_the_host(
    storage: SQLiteSessionExtension,
) -> None:
    model = ScriptedModel(
        [
            ProviderRateLimitError("come back in an hour", status_code=429, retry_after=3600),
            text_step("never"),
        ]
    )
    agent = await make(model, storage)
    with pytest.raises(ProviderRateLimitError) as caught:
        await agent.run("hi")
    assert caught.value.retry_after == 3600 and len(model.requests) == 1


async def test_failure_after_output_is_never_retried_and_saves_the_partial(
    storage: SQLiteSessionExtension,
) -> None:
    model = ScriptedModel([[TextDelta("Half an ans"), ConnectionResetError("peer reset")]])
    agent = await make(model, storage)
    events: list[AgentEvent] = []
    with pytest.raises(ConnectionResetError):
        async for event in agent.stream("hi"):
            events.append(event)
    assert len(model.requests) == 1
    stopped = [e for e in events if isinstance(e, ModelStoppedEvent)]
    assert len(stopped) == 1 and stopped[0].stop_reason is StopReason.INTERRUPTED
    assert stopped[0].error == "peer reset"
    partial = AssistantMessage("Half an ans", stop_reason="interrupted", model="scripted")
    assert await storage.storage.load("s") == [UserMessage("hi"), partial]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    model.add(text_step("A whole answer."))
    reply = await agent.resume()
    assert reply.content == "A whole answer."
    assert list(model.requests[1].messages) == [
        UserMessage("hi"),
        partial,
        InternalMessage(RETRY_TEXT),
    ]


async def test_stream_ending_without_a_stop_reason_is_a_cut(
    storage: SQLiteSessionExtension,
) -> None:
    model = ScriptedModel([[TextDelta("trailing off")]])
    agent = await make(model, storage)
    with pytest.raises(IncompleteStreamError):
        await agent.run("hi")
    assert len(model.requests) == 1
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE


async def test_cut_step_saves_text_but_never_runs_its_tool_calls(
    storage: SQLiteSessionExtension,
) -> None:
    runs: list[int] = []

    def act() -> str:
        """Act."""
        runs.append(1)
        return "acted"

    model = ScriptedModel(
        [
            [
                TextDelta("I will act"),
                ToolCallComplete(ToolCall("x", "act", {})),
                ProviderServerError("stream broke", status_code=502),
            ],
        ]
    )
    agent = await make(model, storage, tools=[act])
    with pytest.raises(ProviderServerError):
        await agent.run("act")
    saved = (await storage.storage.load("s"))[-1]
    assert saved == AssistantMessage("I will act", stop_reason="interrupted", model="scripted")
    assert runs == []


# --- cancellation ------------------------------------------------------------------------------


async def test_stop_while_streaming_saves_nothing_of_the_step(
    storage: SQLiteSessionExtension,
) -> None:
    model = HangingModel(TextDelta("Some text on screen"))
    agent = await make(model, storage)
    seen = asyncio.Event()
    errors: list[BaseException] = []

    class Recorder:
        async def on_error(self, ctx: RunContext, error: BaseException) -> None:
            errors.append(error)

    agent.extensions = (*agent.extensions, Recorder())

    async def consume() -> None:
        async for event in agent.stream("hi"):
            if event.type is EventType.TEXT_DELTA:
                seen.set()

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(seen.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await storage.storage.load("s") == [UserMessage("hi")]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    assert len(errors) == 1 and isinstance(errors[0], asyncio.CancelledError)
    # The session is free again.
    agent.model = ScriptedModel([text_step("again")])
    assert (await agent.resume()).content == "again"


async def test_stop_during_tools_answers_unfinished_calls_as_cancelled(
    storage: SQLiteSessionExtension,
) -> None:
    gate = Gate()

    async def slow(name: str) -> str:
        """Takes a while."""
        gate.runs.append(name)
        gate.started.set()
        await gate.release.wait()
        return "slow done"

    async def quick() -> str:
        """Done at once."""
        return "quick done"

    calls = (ToolCall("s1", "slow", {"name": "s1"}), ToolCall("q1", "quick", {}))
    model = ScriptedModel([tool_step(*calls)])
    agent = await make(model, storage, tools=[slow, quick])
    quick_saved = asyncio.Event()

    async def consume() -> None:
        async for event in agent.stream("go"):
            if event.type is EventType.TOOL_RESULT and event.call.id == "q1":
                quick_saved.set()

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(asyncio.gather(gate.started.wait(), quick_saved.wait()), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    history = await storage.storage.load("s")
    answers = {m.tool_call_id: m for m in history if isinstance(m, ToolMessage)}
    assert answers["q1"] == ToolMessage("q1", "quick", "quick done")  # the result that came is kept
    assert answers["s1"] == ToolMessage("s1", "slow", CANCELLED_TOOL_TEXT, success=False)
    assert gate.runs == ["s1"]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    model.add(text_step("understood"))
    assert (await agent.resume()).content == "understood"
    assert gate.runs == ["s1"]  # resume never ran the cancelled tool again


async def test_leaving_a_stream_early_releases_the_session(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel([text_step("abcdef", chunk=1), text_step("second")])
    agent = await make(model, storage)
    stream = agent.stream("hi")
    async for event in stream:
        if event.type is EventType.TEXT_DELTA:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert await storage.storage.load("s") == [UserMessage("hi")]
    assert (await agent.resume()).content == "second"


# --- abnormal but orderly ends ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("stop", "resumable"),
    [
        (StopReason.MAX_OUTPUT, ResumeKind.CONTINUE_RESPONSE),
        (StopReason.REFUSAL, None),
        (StopReason.CONTEXT_FULL, None),
        ("mystery", None),
    ],
)
async def test_abnormal_ends_return_without_raising(
    storage: SQLiteSessionExtension, stop: StopReason | str, resumable: ResumeKind | None
) -> None:
    model = ScriptedModel([text_step("some words", stop)])
    agent = await make(model, storage)
    events = await collect(agent.stream("hi"))
    assert [e.type for e in events[-2:]] == [EventType.MODEL_STOPPED, EventType.RUN_COMPLETED]
    assert events[-1].reply.stop_reason == stop  # type: ignore[union-attr]
    point = await agent.resume_point()
    assert (point.kind if point else None) == resumable


async def test_output_limit_continues_and_can_be_cut_again(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel(
        [
            text_step("Part one", StopReason.MAX_OUTPUT),
            text_step(" part two", StopReason.MAX_OUTPUT),
            text_step(" the end."),
        ]
    )
    agent = await make(model, storage)
    first = await agent.run("write a lot")
    assert first.stop_reason is StopReason.MAX_OUTPUT
    events = await collect(agent.stream_resume())
    assert events[0].resume_kind is ResumeKind.CONTINUE_RESPONSE  # type: ignore[union-attr]
    assert any(e.type is EventType.MODEL_STOPPED for e in events)  # truncated again: reported
    assert (await agent.resume_point()).kind is ResumeKind.CONTINUE_RESPONSE  # type: ignore[union-attr]
    assert (await agent.resume()).content == " the end."
    history = await storage.storage.load("s")
    assert [m.content for m in history] == [
        "write a lot",
        "Part one",
        CONTINUE_TEXT,
        " part two",
        CONTINUE_TEXT,
        " the end.",
    ]


async def test_pauses_are_recalled_up_to_the_limit(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel(
        [text_step("p1", StopReason.PAUSED), text_step("p2", StopReason.PAUSED), text_step("done")]
    )
    agent = await make(model, storage, max_pause_turns=3)
    events = await collect(agent.stream("hi"))
    assert sum(e.type is EventType.MODEL_STOPPED for e in events) == 2
    assert events[-1].reply.content == "done"  # type: ignore[union-attr]
    assert len(model.requests) == 3


async def test_pause_past_the_limit_returns_and_resumes_by_calling_again(
    storage: SQLiteSessionExtension,
) -> None:
    model = ScriptedModel([text_step(f"p{i}", StopReason.PAUSED) for i in range(3)])
    agent = await make(model, storage, max_pause_turns=1)
    reply = await agent.run("hi")
    assert reply.stop_reason is StopReason.PAUSED and reply.content == "p1"
    assert len(model.requests) == 2  # the first step and one re-call
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    model.add(text_step("finally"))
    assert (await agent.resume()).content == "finally"


async def test_tool_round_limit(storage: SQLiteSessionExtension) -> None:
    def noop() -> str:
        """Nothing."""
        return "ok"

    model = ScriptedModel([tool_step(ToolCall(f"n{i}", "noop", {})) for i in range(3)])
    agent = await make(model, storage, tools=[noop], max_tool_rounds=2)
    with pytest.raises(ToolRoundLimitError) as caught:
        await agent.run("loop")
    assert caught.value.rounds == 2 and len(model.requests) == 2
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL


# --- goal mode --------------------------------------------------------------------------------


async def test_goal_mode_keeps_going_until_the_goal_is_met(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel(
        [text_step("step 1 done"), text_step(f"all done\n{GOAL_COMPLETE_MARKER}")]
    )
    agent = await make(model, storage, system_prompt="Be brief.")
    reply = await agent.run("tidy the notes", goal="every note has a title")
    assert GOAL_COMPLETE_MARKER in reply.content
    assert len(model.requests) == 2
    assert "every note has a title" in (model.requests[0].system_prompt or "")
    assert (model.requests[0].system_prompt or "").startswith("Be brief.")
    follow_up = model.requests[1].messages[-1]
    assert isinstance(follow_up, InternalMessage) and "every note has a title" in follow_up.content


async def test_goal_mode_stops_at_its_turn_limit(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel([text_step(f"try {i}") for i in range(5)])
    agent = await make(model, storage, max_goal_turns=2)
    reply = await agent.run("x", goal="impossible")
    assert reply.content == "try 2" and len(model.requests) == 3


async def test_goal_mode_is_not_reenabled_on_resume(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel(
        [[TextDelta("work"), ConnectionResetError("cut")], text_step("resumed without a goal")]
    )
    agent = await make(model, storage)
    with pytest.raises(ConnectionResetError):
        await agent.run("x", goal="a goal")
    reply = await agent.resume()
    assert reply.content == "resumed without a goal"
    assert len(model.requests) == 2  # no goal follow-up turn
    assert model.requests[1].system_prompt is None


# --- sessions ---------------------------------------------------------------------------------


async def test_second_request_on_a_busy_session_is_refused(storage: SQLiteSessionExtension) -> None:
    hanging = HangingModel(TextDelta("..."))
    agent = await make(hanging, storage)
    task = asyncio.ensure_future(agent.run("first"))
    await asyncio.wait_for(hanging.reached.wait(), 5)
    with pytest.raises(SessionBusyError):
        await agent.run("second")
    other = await make(
        ScriptedModel([text_step("x")]), SQLiteSessionExtension(storage.storage.path)
    )
    with pytest.raises(SessionBusyError):  # another object on the same file and session
        await other.resume()
    free = await make(ScriptedModel([text_step("fine")]), storage, session="other")
    assert (await free.run("different session")).content == "fine"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    agent.model = ScriptedModel([text_step("now free")])
    assert (await agent.resume()).content == "now free"
    await other.store.close()


async def test_new_message_closes_dangling_calls_first(storage: SQLiteSessionExtension) -> None:
    runs: list[int] = []

    def act() -> str:
        """Act."""
        runs.append(1)
        return "acted"

    call = ToolCall("x", "act", {})
    await storage.storage.append_many(
        "s", "killed", [UserMessage("do it"), AssistantMessage(tool_calls=(call,))]
    )
    model = ScriptedModel([text_step("ok, new topic")])
    agent = await make(model, storage, tools=[act])
    await agent.run("never mind, something else")
    assert runs == []
    assert list(model.requests[0].messages[-2:]) == [
        ToolMessage("x", "act", RECOVERED_TOOL_TEXT, success=False),
        UserMessage("never mind, something else"),
    ]


async def test_resume_with_another_model(storage: SQLiteSessionExtension) -> None:
    first = ScriptedModel([[TextDelta("par"), ConnectionResetError("cut")]], name="first")
    agent = await make(first, storage)
    with pytest.raises(ConnectionResetError):
        await agent.run("hi")
    second = ScriptedModel([text_step("from the other one")], name="second")
    reply = await agent.resume(model=second)
    assert reply.model == "second" and len(first.requests) == 1 and len(second.requests) == 1


# --- hooks and the JSONL log -------------------------------------------------------------------


class HookRecorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, ResumeKind | None]] = []

    def _note(self, name: str, ctx: RunContext) -> None:
        text = ctx.input_message.content if ctx.input_message else None
        self.calls.append((name, text, ctx.resume_kind))

    async def before_run(self, ctx: RunContext) -> None:
        self._note("before_run", ctx)

    async def on_message(self, ctx: RunContext) -> None:
        self._note("on_message", ctx)

    async def after_run(self, ctx: RunContext, reply: AssistantMessage) -> None:
        self._note("after_run", ctx)

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        self._note(f"on_error:{type(error).__name__}", ctx)


async def test_hooks_on_a_run_a_failure_and_a_resume(
    storage: SQLiteSessionExtension, tmp_path: Path
) -> None:
    hooks = HookRecorder()
    log = tmp_path / "turns.jsonl"
    model = ScriptedModel(
        [
            tool_step(ToolCall("a", "act", {})),
            ProviderServerError("down", status_code=503),
            text_step("recovered"),
        ]
    )

    def act() -> str:
        """Act."""
        return "acted"

    agent = await make(
        model,
        storage,
        tools=[act],
        retry=RetryPolicy(max_attempts=1),
        extra_extensions=[hooks, JSONLExtension(log)],
    )
    with pytest.raises(ProviderServerError):
        await agent.run("please act")
    assert hooks.calls == [
        ("before_run", "please act", None),
        ("on_message", "please act", None),
        ("on_error:ProviderServerError", "please act", None),
    ]
    assert not log.exists()  # a failed turn is not a finished turn
    hooks.calls.clear()
    await agent.resume()
    assert hooks.calls == [  # resume_kind is None only on a normal run (A4)
        ("before_run", None, ResumeKind.CALL_MODEL),
        ("after_run", None, ResumeKind.CALL_MODEL),
    ]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 1
    record = lines[0]
    assert record["resumed"] == "call_model" and record["session_id"] == "s"
    # The resumed turn is recorded from the last user message.
    assert [m["type"] for m in record["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert record["messages"][0]["content"] == "please act"
    assert record["messages"][-1]["content"] == "recovered"


async def test_jsonl_of_a_recovered_turn(storage: SQLiteSessionExtension, tmp_path: Path) -> None:
    log = tmp_path / "turns.jsonl"
    call = ToolCall("x", "act", {})
    await storage.storage.append_many(
        "s",
        "old",
        [
            UserMessage("earlier"),
            AssistantMessage("fine"),
            UserMessage("do it"),
            AssistantMessage(tool_calls=(call,)),
        ],
    )
    agent = await make(
        ScriptedModel([text_step("checked")]), storage, extra_extensions=[JSONLExtension(log)]
    )
    await agent.resume()
    record = json.loads(log.read_text())
    assert record["resumed"] == "recover_tools"
    assert [m.get("content") for m in record["messages"]] == [
        "do it",
        "",
        RECOVERED_TOOL_TEXT,
        "checked",
    ]


# --- other front doors ------------------------------------------------------------------------


def test_sync_agent(db_path: str) -> None:
    model = ScriptedModel(
        [
            [TextDelta("cut"), ConnectionResetError("x")],
            text_step("again", chunk=2),
            text_step("streamed", chunk=3),
        ]
    )
    with SyncAgent(
        model, AgentRunConfig("s", retry=FAST), extensions=[SQLiteSessionExtension(db_path)]
    ) as agent:
        with pytest.raises(ConnectionResetError):
            agent.run("hi")
        point = agent.resume_point()
        assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
        texts = [e.text for e in agent.stream_resume() if e.type is EventType.TEXT_DELTA]
        assert texts == ["ag", "ai", "n"]
        assert agent.resume_point() is None
        events = list(agent.stream("more"))
        assert events[-1].type is EventType.RUN_COMPLETED
        assert threading.current_thread() is threading.main_thread()


def test_sync_agent_stream_left_early_stops_the_request(db_path: str) -> None:
    model = ScriptedModel([text_step("abcdef", chunk=1), text_step("next")])
    with SyncAgent(
        model, AgentRunConfig("s"), extensions=[SQLiteSessionExtension(db_path)]
    ) as agent:
        for event in agent.stream("hi"):
            if event.type is EventType.TEXT_DELTA:
                break
        assert agent.history() == [UserMessage("hi")]
        assert agent.resume().content == "next"


async def test_agent_client_serves_many_sessions(storage: SQLiteSessionExtension) -> None:
    model = ScriptedModel(
        [text_step("one"), [TextDelta("t"), ConnectionResetError("x")], text_step("two")]
    )
    client = AgentClient(model, extensions=[storage], defaults=AgentRunConfig("unused", retry=FAST))
    await client.open()
    assert (await client.run("a", "first")).content == "one"
    with pytest.raises(ConnectionResetError):
        await client.run("b", "second")
    assert await client.resume_point("a") is None
    status = await client.resume_status("a")
    assert isinstance(status, ResumeBlocked) and status.reason == "completed"
    point = await client.resume_point("b")
    assert point is not None and point.kind is ResumeKind.RETRY_RESPONSE
    events = await collect(client.stream_resume("b"))
    assert events[-1].reply.content == "two"  # type: ignore[union-attr]
    assert {s.id for s in await client.list_sessions()} == {"a", "b"}
    assert await client.delete_session("a")
    assert [s.id for s in await client.list_sessions()] == ["b"]


async def test_events_carry_their_type() -> None:
    model = ScriptedModel([text_step("x")])
    agent = await Agent.create(model)  # no store extension: kept in memory
    for event in await collect(agent.stream("hi")):
        assert isinstance(event.type, EventType)


async def test_model_request_carries_settings(storage: SQLiteSessionExtension) -> None:
    class Recorder:
        name = "recorder"

        def __init__(self) -> None:
            self.seen: list[ModelRequest] = []

        async def stream(self, request: ModelRequest) -> AsyncIterator[object]:
            self.seen.append(request)
            yield StepEnd(StopReason.END_TURN)

    model = Recorder()
    agent = await make(model, storage, system_prompt="sys", max_output_tokens=77)
    await agent.run("hi")
    assert model.seen[0].system_prompt == "sys" and model.seen[0].max_output_tokens == 77


# --- stopping at the edges (found by review; each failed before its fix) ------------------------


async def test_stop_right_after_a_tool_result_is_saved_never_saves_it_twice(
    storage: SQLiteSessionExtension,
) -> None:
    def work(x: int) -> str:
        """Work."""
        return f"done {x}"

    model = ScriptedModel([tool_step(ToolCall("c1", "work", {"x": 1}))])
    agent = await make(model, storage, tools=[work])
    stream = agent.stream("go")
    async for event in stream:
        if event.type is EventType.MESSAGE_SAVED and isinstance(event.message, ToolMessage):
            break  # the host stops exactly here
    await stream.aclose()  # type: ignore[attr-defined]
    history = await storage.storage.load("s")
    assert [m for m in history if isinstance(m, ToolMessage)] == [
        ToolMessage("c1", "work", "done 1")
    ]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL  # not "malformed"


async def test_stop_after_a_tool_step_is_saved_but_before_tools_start(
    storage: SQLiteSessionExtension,
) -> None:
    runs: list[int] = []

    def work() -> str:
        """Work."""
        runs.append(1)
        return "done"

    model = ScriptedModel([tool_step(ToolCall("c1", "work", {}))])
    agent = await make(model, storage, tools=[work])
    stream = agent.stream("go")
    async for event in stream:
        if event.type is EventType.MESSAGE_SAVED and isinstance(event.message, AssistantMessage):
            break  # the step is committed; its tool has not started
    await stream.aclose()  # type: ignore[attr-defined]
    assert runs == []
    last = (await storage.storage.load("s"))[-1]
    assert last == ToolMessage("c1", "work", NOT_STARTED_TOOL_TEXT, success=False)
    point = await agent.resume_point()  # never "may or may not have run": it did not
    assert point is not None and point.kind is ResumeKind.CALL_MODEL


async def test_leaving_after_run_completed_is_not_an_error(storage: SQLiteSessionExtension) -> None:
    hooks = HookRecorder()
    agent = await make(ScriptedModel([text_step("hello")]), storage, extra_extensions=[hooks])
    stream = agent.stream("hi")
    async for event in stream:
        if event.type is EventType.RUN_COMPLETED:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert [name for name, _, _ in hooks.calls] == ["before_run", "on_message", "after_run"]


@contextlib.contextmanager
def _default_sigint() -> Iterator[None]:
    """Python's own SIGINT handler for the block: a background run (``pytest &``) inherits
    SIGINT *ignored*, and a SIGINT that never arrives would leave the test waiting forever."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers can only be set from the main thread")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


def test_ctrl_c_in_the_calling_thread_stops_a_sync_request(db_path: str) -> None:
    import os
    import signal

    started = threading.Event()

    class Blocking:
        name = "blocking"

        async def stream(self, request: ModelRequest) -> AsyncIterator[object]:
            yield TextDelta("...")
            started.set()
            await asyncio.Event().wait()

    with (
        _default_sigint(),
        SyncAgent(
            Blocking(),
            AgentRunConfig("s"),  # type: ignore[arg-type]
            extensions=[SQLiteSessionExtension(db_path)],
        ) as agent,
    ):

        def press_ctrl_c() -> None:
            if started.wait(10):
                os.kill(os.getpid(), signal.SIGINT)  # what Ctrl+C sends

        watcher = threading.Thread(target=press_ctrl_c)
        watcher.start()
        with pytest.raises(KeyboardInterrupt):
            agent.run("hi")
        watcher.join()
        # The request was stopped (not left running on the loop): the session is free again.
        agent.agent.model = ScriptedModel([text_step("next")])
        assert agent.resume().content == "next"
