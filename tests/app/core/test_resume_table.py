"""SPEC A2, one test per row and per error reason: the pure decision, then resume() on SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import pytest

from app import (
    Agent,
    AgentClient,
    AgentResumeError,
    AgentRunConfig,
    AssistantMessage,
    InternalMessage,
    Message,
    ResumeBlocked,
    ResumeKind,
    ResumePoint,
    SQLiteSessionExtension,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
    classify_tail,
)
from app.resume import CONTINUE_TEXT, RECOVERED_TOOL_TEXT, RETRY_TEXT
from app.testing import ScriptedModel, text_step

CALL_A = ToolCall("a", "lookup", {"q": "x"})
CALL_B = ToolCall("b", "lookup", {"q": "y"})
USER = UserMessage("hello")

# (name, history, expected kind or reason word, messages resume() appends before the model call)
ROWS: list[tuple[str, list[Message], str, list[Message]]] = [
    ("ends with a user message", [USER], "call_model", []),
    (
        "ends with an internal message",
        [USER, AssistantMessage("par", stop_reason="interrupted"), InternalMessage(RETRY_TEXT)],
        "call_model",
        [],
    ),
    (
        "every call answered",
        [
            USER,
            AssistantMessage(tool_calls=(CALL_A, CALL_B)),
            ToolMessage("a", "lookup", "1"),
            ToolMessage("b", "lookup", "2"),
        ],
        "call_model",
        [],
    ),
    (
        "answered as cancelled by Stop",
        [
            USER,
            AssistantMessage(tool_calls=(CALL_A,)),
            ToolMessage("a", "lookup", "cancelled", success=False),
        ],
        "call_model",
        [],
    ),
    (
        "paused past the limit",
        [USER, AssistantMessage("thinking", stop_reason=StopReason.PAUSED)],
        "call_model",
        [],
    ),
    (
        "no call answered",
        [USER, AssistantMessage(tool_calls=(CALL_A, CALL_B))],
        "recover_tools",
        [
            ToolMessage("a", "lookup", RECOVERED_TOOL_TEXT, success=False),
            ToolMessage("b", "lookup", RECOVERED_TOOL_TEXT, success=False),
        ],
    ),
    (
        "one of two calls answered",
        [USER, AssistantMessage(tool_calls=(CALL_A, CALL_B)), ToolMessage("a", "lookup", "1")],
        "recover_tools",
        [ToolMessage("b", "lookup", RECOVERED_TOOL_TEXT, success=False)],
    ),
    (
        "cut by a fault",
        [USER, AssistantMessage("partial", stop_reason=StopReason.INTERRUPTED)],
        "retry_response",
        [InternalMessage(RETRY_TEXT)],
    ),
    (
        "output limit",
        [USER, AssistantMessage("long text", stop_reason=StopReason.MAX_OUTPUT)],
        "continue_response",
        [InternalMessage(CONTINUE_TEXT)],
    ),
    ("normal answer", [USER, AssistantMessage("done")], "completed", []),
    (
        "explicit end_turn",
        [USER, AssistantMessage("done", stop_reason=StopReason.END_TURN)],
        "completed",
        [],
    ),
    ("refusal", [USER, AssistantMessage("no", stop_reason=StopReason.REFUSAL)], "refused", []),
    (
        "context full",
        [USER, AssistantMessage("", stop_reason=StopReason.CONTEXT_FULL)],
        "context_full",
        [],
    ),
    (
        "unknown stop reason",
        [USER, AssistantMessage("?", stop_reason="sleeping")],
        "unknown_stop",
        [],
    ),
    ("empty session", [], "empty", []),
    (
        "a result for no call",
        [USER, AssistantMessage(tool_calls=(CALL_A,)), ToolMessage("zz", "lookup", "1")],
        "malformed",
        [],
    ),
    ("a result after a user message", [USER, ToolMessage("a", "lookup", "1")], "malformed", []),
    (
        "a call answered twice",
        [
            USER,
            AssistantMessage(tool_calls=(CALL_A,)),
            ToolMessage("a", "lookup", "1"),
            ToolMessage("a", "lookup", "1"),
        ],
        "malformed",
        [],
    ),
]
IDS = [row[0] for row in ROWS]
RESUMABLE = {k.value for k in ResumeKind}


def _word(outcome: ResumePoint | ResumeBlocked) -> str:
    return outcome.kind.value if isinstance(outcome, ResumePoint) else outcome.reason


@pytest.mark.parametrize(("name", "history", "expected", "appended"), ROWS, ids=IDS)
def test_pure_decision(
    name: str, history: list[Message], expected: str, appended: list[Message]
) -> None:
    outcome = classify_tail(history)
    assert _word(outcome) == expected
    # A real sentence, fit for a tooltip.
    assert outcome.description.endswith(".") and len(outcome.description.split()) >= 8
    if isinstance(outcome, ResumePoint) and outcome.kind is ResumeKind.RECOVER_TOOLS:
        assert [m.tool_call_id for m in appended] == [  # type: ignore[union-attr]
            c.id for c in outcome.unanswered_tool_calls
        ]
    elif isinstance(outcome, ResumePoint):
        assert outcome.unanswered_tool_calls == ()


def test_descriptions_differ_per_case() -> None:
    descriptions = {_word(classify_tail(h)): classify_tail(h).description for _, h, _, _ in ROWS}
    assert len(set(descriptions.values())) == len(descriptions)


def test_recovered_tool_text_is_the_exact_sentence() -> None:
    assert RECOVERED_TOOL_TEXT == (
        "The process stopped while this tool was running, so it may or may not have completed, "
        "and whatever it changes may or may not have happened. Check the current state before "
        "running it again."
    )


def test_recover_description_names_the_tools_and_kept_results() -> None:
    history = [USER, AssistantMessage(tool_calls=(CALL_A, CALL_B)), ToolMessage("a", "lookup", "1")]
    outcome = classify_tail(history)
    assert isinstance(outcome, ResumePoint)
    assert "lookup" in outcome.description and "1 result" in outcome.description


def _raw(path: str) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute("SELECT seq, data FROM messages ORDER BY session_id, seq"))


@pytest.mark.parametrize(("name", "history", "expected", "appended"), ROWS, ids=IDS)
async def test_resume_on_sqlite(
    db_path: str, name: str, history: Sequence[Message], expected: str, appended: list[Message]
) -> None:
    storage = SQLiteSessionExtension(db_path)
    for message in history:
        await storage.storage.append("s", "old-request", message)
    model = ScriptedModel([text_step("resumed answer")])
    errors: list[BaseException] = []

    class Recorder:
        async def on_error(self, ctx: object, error: BaseException) -> None:
            errors.append(error)

    agent = await Agent.create(
        model, AgentRunConfig("s"), tools=[], extensions=[storage, Recorder()]
    )
    before = _raw(db_path)
    point = await agent.resume_point()
    assert _raw(db_path) == before  # resume_point() wrote nothing
    assert model.requests == []  # and called no model
    client = AgentClient(model, store=storage.storage)
    status = await client.resume_status("s")
    assert _word(status) == expected  # the reason word is available without raising

    if expected in RESUMABLE:
        assert point is not None and point.kind.value == expected
        reply = await agent.resume()
        assert reply.content == "resumed answer"
        assert len(model.requests) == 1
        sent = list(model.requests[0].messages)
        assert sent == [*history, *appended]  # nothing dropped, exactly the repair added
        saved = await storage.storage.load("s")
        assert saved == [*history, *appended, reply]
        assert await agent.resume_point() is None
    else:
        assert point is None
        with pytest.raises(AgentResumeError) as caught:
            await agent.resume()
        assert caught.value.reason == expected
        assert errors and errors[0] is caught.value  # the error hooks ran
        assert model.requests == []
        assert _raw(db_path) == before
    await storage.storage.close()


async def test_tail_reaches_back_over_many_tool_results(db_path: str) -> None:
    """The tail read grows until it finds the calls' owner, however many results follow it."""
    storage = SQLiteSessionExtension(db_path)
    calls = tuple(ToolCall(f"c{i}", "lookup", {"i": i}) for i in range(40))
    await storage.storage.append_many(
        "s",
        "r",
        [
            USER,
            AssistantMessage(tool_calls=calls),
            *(ToolMessage(c.id, "lookup", "ok") for c in calls[:39]),
        ],
    )
    agent = await Agent.create(ScriptedModel(), AgentRunConfig("s"), extensions=[storage])
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    assert point.unanswered_tool_calls == (calls[39],)
    await storage.storage.close()
