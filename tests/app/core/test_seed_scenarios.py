"""The design note's two scenarios, on a real SQLite file: resume finishes, no tool runs twice."""

from __future__ import annotations

import httpx

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    ModelRequest,
    RetryPolicy,
    SQLiteSessionExtension,
    StepEnd,
    TextDelta,
    ToolCall,
    ToolCallComplete,
    ToolMessage,
    UserMessage,
)
from app.resume import RECOVERED_TOOL_TEXT


class FlakyModel:
    """Asks for write_file, then fails every later request until told to recover."""

    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0
        self.down = True

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 1:
            yield ToolCallComplete(ToolCall("w1", "write_file", {"name": "notes.txt"}))
            yield StepEnd("tool_use")
            return
        if self.down:
            raise httpx.ConnectError("connection refused")
        last = request.messages[-1]
        assert isinstance(last, ToolMessage) and last.content == "wrote notes.txt"
        yield TextDelta("Done: wrote notes.txt")
        yield StepEnd("end_turn")


class AnswerModel:
    """Counts interrupted tool results it is shown."""

    name = "answer"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        lost = [
            m
            for m in request.messages
            if isinstance(m, ToolMessage) and m.content == RECOVERED_TOOL_TEXT
        ]
        yield TextDelta(f"{len(lost)} tool was interrupted")
        yield StepEnd()


async def test_failure_after_a_tool_ran_then_a_crash_with_one_of_two_calls_unanswered(
    db_path: str,
) -> None:
    written: list[str] = []

    def write_file(name: str) -> str:
        """Write a file."""
        written.append(name)
        return f"wrote {name}"

    storage = SQLiteSessionExtension(db_path)
    flaky = FlakyModel()
    config = AgentRunConfig("failure", retry=RetryPolicy(max_attempts=2, base_delay=0.001))
    agent = await Agent.create(flaky, config=config, tools=[write_file], extensions=[storage])
    try:
        await agent.run("Write notes.txt")
    except httpx.ConnectError:
        pass
    else:  # pragma: no cover
        raise AssertionError("the run should have failed")
    assert flaky.calls == 3  # the first step, then the failing call and its one retry
    point = await agent.resume_point()
    assert point is not None and point.kind.value == "call_model"
    flaky.down = False
    answer = await agent.resume()
    assert answer.content == "Done: wrote notes.txt"
    assert written == ["notes.txt"]
    assert await agent.resume_point() is None

    calls = (
        ToolCall("a", "write_file", {"name": "a.txt"}),
        ToolCall("b", "write_file", {"name": "b.txt"}),
    )
    await storage.storage.create_session(session_id="crash")
    for message in (
        UserMessage(content="Write a.txt and b.txt"),
        AssistantMessage(tool_calls=calls),
        ToolMessage(tool_call_id="a", name="write_file", content="wrote a.txt", success=True),
    ):
        await storage.storage.append("crash", "killed-request", message)
    answer_model = AnswerModel()
    agent = await Agent.create(
        answer_model, config=AgentRunConfig("crash"), tools=[write_file], extensions=[storage]
    )
    point = await agent.resume_point()
    assert point is not None and point.kind.value == "recover_tools"
    assert [call.id for call in point.unanswered_tool_calls] == ["b"]
    answer = await agent.resume()
    assert answer.content == "1 tool was interrupted"
    assert written == ["notes.txt"]
    sent = answer_model.requests[0].messages
    assert sent[2] == ToolMessage("a", "write_file", "wrote a.txt", True)  # kept
    assert sent[3] == ToolMessage("b", "write_file", RECOVERED_TOOL_TEXT, False)
    assert await agent.resume_point() is None
    await storage.storage.close()
