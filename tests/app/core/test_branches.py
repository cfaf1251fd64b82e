"""Edit and regenerate as branches through the runtime (SQLite store, scripted model): a new
version never erases the old one, the model sees only the new branch, Resume applies to the
branch that is current, and no tool runs again because of a branch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app import (
    AgentClient,
    AgentRunConfig,
    AssistantMessage,
    BranchError,
    ResumeKind,
    RetryPolicy,
    SQLiteSessionExtension,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from app.resume import RECOVERED_TOOL_TEXT
from app.testing import ScriptedModel, text_step, tool_step

from ..helpers import Gate


def client_with(tmp_path: Path, model: ScriptedModel, *tools: object) -> AgentClient:
    return AgentClient(
        model,
        extensions=[SQLiteSessionExtension(tmp_path / "c.sqlite")],
        tools=list(tools),  # type: ignore[arg-type]
        defaults=AgentRunConfig("default", retry=RetryPolicy(max_attempts=1)),
    )


def contents(messages: list[object]) -> list[str]:
    return [str(getattr(m, "content", "")) for m in messages]


async def drain(events: object) -> None:
    async for _ in events:  # type: ignore[attr-defined]
        pass


async def test_editing_a_message_branches_and_the_model_sees_only_the_new_branch(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        [text_step("first answer"), text_step("second answer"), text_step("answer to edit")]
    )
    client = client_with(tmp_path, model)
    await client.run("s", "first question")  # 1, 2
    await client.run("s", "second question")  # 3, 4
    await drain(client.stream_edit("s", 3, "second question, better"))  # 5, 6
    assert contents(await client.history("s")) == [
        "first question",
        "first answer",
        "second question, better",
        "answer to edit",
    ]
    assert contents(list(model.requests[-1].messages)) == [
        "first question",
        "first answer",
        "second question, better",
    ]
    assert await client.versions("s") == [(3, 5)]
    # The old version is still there, whole.
    assert await client.select_branch("s", 3) == 4
    assert contents(await client.history("s"))[2:] == ["second question", "second answer"]
    await client.close()


async def test_editing_the_first_message_starts_a_new_root(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("a"), text_step("b")])
    client = client_with(tmp_path, model)
    await client.run("s", "hello")
    await drain(client.stream_edit("s", 1, "hello again"))
    assert contents(await client.history("s")) == ["hello again", "b"]
    assert contents(list(model.requests[-1].messages)) == ["hello again"]
    assert await client.versions("s") == [(1, 3)]
    await client.close()


async def test_regenerate_answers_the_same_question_again_as_a_new_version(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("take one"), text_step("take two")])
    client = client_with(tmp_path, model)
    await client.run("s", "tell me a joke")
    other = ScriptedModel([text_step("take two, another model")])
    await drain(client.stream_regenerate("s", 2, model=other))  # type: ignore[arg-type]
    assert contents(await client.history("s")) == ["tell me a joke", "take two, another model"]
    assert contents(list(other.requests[0].messages)) == ["tell me a joke"]
    assert await client.versions("s") == [(2, 3)]
    assert len(model.requests) == 1  # the first model was not asked again
    await client.close()


async def test_regenerating_an_answer_after_tools_reruns_no_tool_by_itself(
    tmp_path: Path,
) -> None:
    runs: list[str] = []

    def lookup(q: str) -> str:
        """Look something up."""
        runs.append(q)
        return f"found {q}"

    call = ToolCall("c1", "lookup", {"q": "x"})
    model = ScriptedModel([tool_step(call), text_step("done"), text_step("done, said again")])
    client = client_with(tmp_path, model, lookup)
    await client.run("s", "look x up")  # 1 user, 2 asks, 3 result, 4 done
    assert runs == ["x"]
    await drain(client.stream_regenerate("s", 4))
    # The whole answer was redone from the question; the model chose not to call the tool.
    assert contents(await client.history("s")) == ["look x up", "done, said again"]
    assert runs == ["x"]
    assert await client.versions("s") == [(2, 5)]
    await client.close()


async def test_a_new_version_of_the_wrong_message_is_refused_and_saves_nothing(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("answer")])
    client = client_with(tmp_path, model)
    await client.run("s", "question")
    with pytest.raises(BranchError, match="cannot be edited"):
        await drain(client.stream_edit("s", 2, "not mine"))
    with pytest.raises(BranchError, match="no message 9"):
        await drain(client.stream_edit("s", 9, "nowhere"))
    with pytest.raises(BranchError, match="no message 9"):
        await drain(client.stream_regenerate("s", 9))
    assert [r.seq for r in await client.store.tree("s")] == [1, 2]
    await client.close()


async def test_switching_to_an_interrupted_branch_offers_its_resume(tmp_path: Path) -> None:
    runs: list[str] = []

    def lookup(q: str) -> str:
        """Look something up."""
        runs.append(q)
        return "ok"

    client = client_with(tmp_path, ScriptedModel([text_step("fine")]), lookup)
    store = client.store
    # A branch whose tools never answered (the process died while they ran) ...
    await store.append("s", "r1", UserMessage("q"))  # 1
    call = ToolCall("c1", "lookup", {"q": "x"})
    await store.append("s", "r1", AssistantMessage(tool_calls=(call,)))  # 2
    # ... and a newer version of the question that completed.
    await store.append("s", "r2", UserMessage("q, edited"), parent=None)  # 3
    await store.append("s", "r2", AssistantMessage("fine", stop_reason=StopReason.END_TURN))
    assert await client.resume_point("s") is None
    await client.select_branch("s", 1)
    point = await client.resume_point("s")
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    client.model = ScriptedModel([text_step("recovered")])
    await client.resume("s")
    history = await client.history("s")
    assert isinstance(history[2], ToolMessage) and history[2].content == RECOVERED_TOOL_TEXT
    assert contents(history)[-1] == "recovered"
    assert runs == []  # the tool never ran again
    # The other branch is untouched.
    await client.select_branch("s", 3)
    assert contents(await client.history("s")) == ["q, edited", "fine"]
    await client.close()


async def test_a_branch_switch_during_a_tool_keeps_the_request_on_its_branch(
    tmp_path: Path,
) -> None:
    gate = Gate()

    async def wait(q: str) -> str:
        """Wait until released."""
        gate.started.set()
        await gate.release.wait()
        return "released"

    call = ToolCall("c1", "wait", {"q": "x"})
    model = ScriptedModel([text_step("old answer"), tool_step(call), text_step("after tool")])
    client = client_with(tmp_path, model, wait)
    await client.run("s", "old question")  # 1, 2
    task = asyncio.ensure_future(client.run("s", "new question"))  # 3, 4 asks, 5, 6
    await gate.started.wait()
    await client.select_branch("s", 2)  # the person looks at the old branch meanwhile
    gate.release.set()
    await task
    records = await client.store.tree("s")
    assert [r.parent_seq for r in records] == [None, 1, 2, 3, 4, 5]
    # The request's end is the leaf again: its result and answer followed their question.
    assert contents(await client.history("s"))[-1] == "after tool"
    await client.close()
