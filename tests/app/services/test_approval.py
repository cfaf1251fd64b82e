"""Tool approval that survives a crash: the core's ``not_started`` resume and the app's journal.

Real SQLite files, :class:`app.testing.ScriptedModel`. A call that was awaiting approval when the
process died provably never started: Resume runs it (asking again) instead of answering it with
the "may or may not have run" text; every other unanswered call keeps that exact text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import (
    DENIED_TOOL_TEXT,
    Agent,
    AgentRunConfig,
    AssistantMessage,
    FunctionTool,
    SQLiteSessionExtension,
    ToolCall,
    ToolMessage,
    UserMessage,
    tool,
)
from app.messages import message_to_json
from app.resume import RECOVERED_TOOL_TEXT, ResumeKind
from app.services import DATABASE_FILE, ApprovalDecision, AppServices
from app.storage.journal import TOOL_AWAITING_APPROVAL, TOOL_STARTED
from app.storage.sqlite import APPLICATION_ID, MIGRATIONS
from app.testing import ScriptedModel, text_step, tool_step
from app.tools.workspace import Workspace

CALLS = (
    ToolCall("w1", "write_note", {"text": "one"}),
    ToolCall("w2", "write_note", {"text": "two"}),
)


@pytest.fixture
async def storage(db_path: str) -> AsyncIterator[SQLiteSessionExtension]:
    ext = SQLiteSessionExtension(db_path)
    yield ext
    await ext.storage.close()


def note_tool(runs: list[str]) -> FunctionTool:
    @tool(side_effects=True)
    def write_note(text: str) -> str:
        """Write a note."""
        runs.append(text)
        return f"wrote {text}"

    return write_note


async def crashed_history(store: object, session: str = "s") -> None:
    """The history a kill leaves: the question and a step with two unanswered calls."""
    await store.append_many(
        session,
        "r1",
        [  # type: ignore[attr-defined]
            UserMessage("write two notes"),
            AssistantMessage("Writing.", CALLS),
        ],
    )


async def test_not_started_calls_run_once_and_others_are_recovered(
    storage: SQLiteSessionExtension,
) -> None:
    await crashed_history(storage.storage)
    runs: list[str] = []
    asked: list[str] = []

    async def approve(call: ToolCall, spec: FunctionTool) -> bool:
        asked.append(call.id)
        return True

    model = ScriptedModel([text_step("done")])
    agent = await Agent.create(
        model,
        AgentRunConfig("s"),
        tools=[note_tool(runs)],
        extensions=[storage],
        approve_tool=approve,
    )
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    reply = await agent.resume(not_started={"w2"})
    assert reply.content == "done"
    assert runs == ["two"] and asked == ["w2"]  # only the never-started call, through approval
    history = await storage.storage.load("s")
    answers = {m.tool_call_id: m for m in history if isinstance(m, ToolMessage)}
    assert answers["w1"] == ToolMessage("w1", "write_note", RECOVERED_TOOL_TEXT, success=False)
    assert answers["w2"] == ToolMessage("w2", "write_note", "wrote two", success=True)
    # The model saw both answers; nothing runs again on a second look.
    sent = model.requests[0].messages
    assert {m.tool_call_id for m in sent if isinstance(m, ToolMessage)} == {"w1", "w2"}
    assert await agent.resume_point() is None
    assert runs == ["two"]


async def test_without_not_started_every_call_gets_the_recovered_text(
    storage: SQLiteSessionExtension,
) -> None:
    await crashed_history(storage.storage)
    runs: list[str] = []
    agent = await Agent.create(
        ScriptedModel([text_step("ok")]),
        AgentRunConfig("s"),
        tools=[note_tool(runs)],
        extensions=[storage],
    )
    await agent.resume()
    history = await storage.storage.load("s")
    assert [m.content for m in history if isinstance(m, ToolMessage)] == [RECOVERED_TOOL_TEXT] * 2
    assert runs == []


async def test_denied_on_resume_is_answered_as_denied(storage: SQLiteSessionExtension) -> None:
    await crashed_history(storage.storage)
    runs: list[str] = []

    async def deny(call: ToolCall, spec: FunctionTool) -> bool:
        return False

    agent = await Agent.create(
        ScriptedModel([text_step("ok")]),
        AgentRunConfig("s"),
        tools=[note_tool(runs)],
        extensions=[storage],
        approve_tool=deny,
    )
    await agent.resume(not_started=["w1", "w2"])
    history = await storage.storage.load("s")
    assert [m.content for m in history if isinstance(m, ToolMessage)] == [DENIED_TOOL_TEXT] * 2
    assert runs == []


# --- the app's services: journal states and the approver wrapper ------------------------------


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    yield svc
    await svc.close()


async def test_journal_tool_states_round_trip(services: AppServices) -> None:
    journal = services.journal
    store = services.storage.storage
    assert await journal.tool_states("x") == {}
    await store.append_many(
        "x",
        "r1",
        [
            UserMessage("go"),
            AssistantMessage("", (ToolCall("c1", "t", {}), ToolCall("c2", "t", {}))),
        ],
    )
    await journal.set_tool_state("x", "c1", TOOL_AWAITING_APPROVAL)
    await journal.set_tool_state("x", "c2", TOOL_AWAITING_APPROVAL)
    await journal.set_tool_state("x", "c2", TOOL_STARTED)
    assert await journal.tool_states("x") == {"c1": TOOL_AWAITING_APPROVAL, "c2": TOOL_STARTED}
    assert await journal.tool_states("y") == {}


async def test_tool_states_belong_to_the_message_that_asked(services: AppServices) -> None:
    """A provider reusing ``c1`` in a later step: the later call starts with no state, and each
    state stays with its own message; a call no saved message has records nothing."""
    journal, store = services.journal, services.storage.storage
    await store.append_many(
        "x",
        "r1",
        [
            UserMessage("go"),
            AssistantMessage("", (ToolCall("c1", "t", {}),)),
            ToolMessage("c1", "t", "denied", success=False),
        ],
    )
    await journal.set_tool_state("x", "c1", TOOL_AWAITING_APPROVAL)  # denied: never ran
    assert await journal.tool_states("x") == {"c1": TOOL_AWAITING_APPROVAL}
    await store.append_many(
        "x", "r2", [UserMessage("again"), AssistantMessage("", (ToolCall("c1", "t", {}),))]
    )
    assert await journal.tool_states("x") == {}  # the new c1 has no state of its own yet
    await journal.set_tool_state("x", "c1", TOOL_STARTED)
    assert await journal.tool_states("x") == {"c1": TOOL_STARTED}
    assert await journal.all_tool_states("x") == {
        (2, "c1"): TOOL_AWAITING_APPROVAL,
        (5, "c1"): TOOL_STARTED,
    }
    await store.append("x", "r2", ToolMessage("c1", "t", "ran"))
    await store.append("x", "r2", AssistantMessage("done"))
    assert await journal.tool_states("x") == {"c1": TOOL_STARTED}  # text answers ask nothing
    await journal.set_tool_state("x", "nowhere", TOOL_STARTED)
    assert [cid for _, cid in await journal.all_tool_states("x")] == ["c1", "c1"]


async def test_wrapper_writes_awaiting_before_asking_and_started_before_running(
    services: AppServices,
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    ws = Workspace(tmp_path / "ws")
    services.client.tools = tuple(ws.tools())
    session = (await services.new_session()).id
    seen: list[tuple[str, object]] = []

    async def ask(session_id: str, call: ToolCall, spec: FunctionTool) -> ApprovalDecision:
        states = await services.journal.tool_states(session_id)
        seen.append((call.id, states.get(call.id)))
        return ApprovalDecision.ALLOW_ONCE

    services.approver = ask
    calls = [
        ToolCall("a", "write_file", {"path": "a.txt", "content": "A"}),
        ToolCall("l", "list_directory", {"path": "."}),
    ]
    services.client.model = ScriptedModel([tool_step(*calls), text_step("ok")])
    events = [e async for e in services.stream(session, "write")]
    assert events[-1].reply.content == "ok"  # type: ignore[attr-defined]
    assert seen == [("a", TOOL_AWAITING_APPROVAL)]  # durable before asking; reads never asked
    assert await services.journal.tool_states(session) == {"a": TOOL_STARTED}
    assert (tmp_path / "ws" / "a.txt").read_text() == "A"


async def test_allow_for_this_conversation_is_remembered_per_conversation(
    services: AppServices,
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    ws = Workspace(tmp_path / "ws")
    services.client.tools = tuple(ws.tools())
    asked: list[tuple[str, str]] = []

    async def ask(session_id: str, call: ToolCall, spec: FunctionTool) -> ApprovalDecision:
        asked.append((session_id, call.id))
        return ApprovalDecision.ALLOW_CONVERSATION

    services.approver = ask
    first, second = (await services.new_session()).id, (await services.new_session()).id
    for session, ids in ((first, ("a", "b")), (second, ("c",))):
        steps = [
            tool_step(ToolCall(i, "write_file", {"path": f"{i}.txt", "content": i})) for i in ids
        ]
        services.client.model = ScriptedModel([*steps, text_step("ok")])
        [e async for e in services.stream(session, "go")]
    assert asked == [(first, "a"), (second, "c")]
    assert sorted(p.name for p in (tmp_path / "ws").iterdir()) == ["a.txt", "b.txt", "c.txt"]


async def test_crash_while_awaiting_approval_then_resume_asks_again(
    services: AppServices,
    tmp_path: Path,
) -> None:
    """What a kill while asking leaves (the step saved, the call "awaiting"): resume_info tells
    it apart from a call that may have run, and Resume asks again and runs it exactly once."""
    (tmp_path / "ws").mkdir()
    ws = Workspace(tmp_path / "ws")
    services.client.tools = tuple(ws.tools())
    session = (await services.new_session()).id
    write = ToolCall("w", "write_file", {"path": "n.txt", "content": "N"})
    started = ToolCall("s", "write_file", {"path": "s.txt", "content": "S"})
    await services.storage.storage.append_many(
        session, "r1", [UserMessage("go"), AssistantMessage("", (write, started))]
    )
    await services.journal.set_tool_state(session, "w", TOOL_AWAITING_APPROVAL)
    await services.journal.set_tool_state(session, "s", TOOL_STARTED)
    info = await services.resume_info(session)
    assert info.point is not None and info.point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.id for c in info.awaiting_approval] == ["w"]
    assert [c.id for c in info.may_have_run] == ["s"]

    asked: list[str] = []

    async def allow(session_id: str, call: ToolCall, spec: FunctionTool) -> ApprovalDecision:
        asked.append(call.id)
        return ApprovalDecision.ALLOW_ONCE

    services.approver = allow
    services.client.model = ScriptedModel([text_step("done")])
    [e async for e in services.stream_resume(session)]
    assert asked == ["w"]
    assert (tmp_path / "ws" / "n.txt").read_text() == "N"
    assert not (tmp_path / "ws" / "s.txt").exists()  # may have run: never run again
    answers = {
        m.tool_call_id: m for m in await services.history(session) if isinstance(m, ToolMessage)
    }
    assert answers["s"].content == RECOVERED_TOOL_TEXT
    assert answers["w"].success and "n.txt" in answers["w"].content
    assert await services.journal.tool_states(session) == {"w": TOOL_STARTED, "s": TOOL_STARTED}
    assert (await services.resume_info(session)).point is None


def _schema_4_database(path: Path) -> None:
    """A database as the previous version left it: tool states keyed by call id alone."""
    history = {
        # "once": c1 asked once, awaiting (never ran); c2 started.
        "once": [
            UserMessage("go"),
            AssistantMessage("", (ToolCall("c1", "t", {}), ToolCall("c2", "t", {}))),
        ],
        # "reused": call_1 in two turns; the row cannot say which one it was about.
        "reused": [
            UserMessage("one"),
            AssistantMessage("", (ToolCall("call_1", "t", {}),)),
            ToolMessage("call_1", "t", "denied", success=False),
            UserMessage("two"),
            AssistantMessage("", (ToolCall("call_1", "t", {}),)),
        ],
    }
    rows = [
        ("once", "c1", TOOL_AWAITING_APPROVAL),
        ("once", "c2", TOOL_STARTED),
        ("once", "gone", TOOL_AWAITING_APPROVAL),
        ("reused", "call_1", TOOL_AWAITING_APPROVAL),
    ]
    with sqlite3.connect(path) as conn:
        for step in MIGRATIONS[:4]:
            for statement in step:
                conn.execute(statement)
        for session, messages in history.items():
            for seq, message in enumerate(messages, 1):
                kind = type(message).__name__.removesuffix("Message").lower()
                conn.execute(
                    "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
                    "VALUES (?, ?, 'r', ?, ?, 1.0)",
                    (session, seq, kind, message_to_json(message)),
                )
        # A damaged row (written valid, then spoiled: the search trigger parses inserts).
        conn.execute(
            "INSERT INTO messages(session_id, seq, request_id, kind, data, created_at) "
            "VALUES ('once', 99, 'r', 'assistant', '{}', 1.0)"
        )
        conn.execute("UPDATE messages SET data = 'not json' WHERE seq = 99")
        conn.executemany("INSERT INTO tool_states VALUES (?, ?, ?, 1.0)", rows)
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute("PRAGMA user_version=4")
    conn.close()


async def test_old_tool_states_migrate_to_the_message_that_asked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _schema_4_database(data / DATABASE_FILE)
    services = AppServices(data)
    await services.open()
    try:
        journal = services.journal
        assert await journal.all_tool_states("once") == {
            (2, "c1"): TOOL_AWAITING_APPROVAL,
            (2, "c2"): TOOL_STARTED,
        }  # "gone" had no call
        # Ambiguous: it may describe the second call_1, which may have run: never run again.
        assert await journal.all_tool_states("reused") == {(5, "call_1"): TOOL_STARTED}
        info = await services.resume_info("reused")
        assert info.awaiting_approval == () and [c.id for c in info.may_have_run] == ["call_1"]
        # New states are written and read as before.
        await journal.set_tool_state("reused", "call_1", TOOL_AWAITING_APPROVAL)
        assert await journal.tool_states("reused") == {"call_1": TOOL_AWAITING_APPROVAL}
    finally:
        await services.close()
