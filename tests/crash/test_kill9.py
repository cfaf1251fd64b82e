"""``kill -9`` a child process running a real agent on a real database file, then recover.

A fresh process (this test process) reopens the file: ``PRAGMA integrity_check`` is ok,
``resume_point()`` names the right kind, resume finishes, and each tool side effect happened
exactly once.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    ResumeKind,
    SQLiteSessionExtension,
    ToolMessage,
    UserMessage,
)
from app.resume import RECOVERED_TOOL_TEXT
from app.testing import ScriptedModel, text_step

CHILD = Path(__file__).with_name("child.py")


def run_and_kill(tmp_path: Path, scenario: str, milestone: str) -> tuple[str, Path]:
    db = str(tmp_path / "crash.sqlite")
    log = tmp_path / "side_effects.log"
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), db, str(log), scenario],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()  # blocks until the milestone (pytest-timeout guards)
        assert line == milestone, (
            f"child said {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}"
        )
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == -signal.SIGKILL
    return db, log


def integrity(db: str) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def write_note_tool(log: Path):  # type: ignore[no-untyped-def]
    def write_note(name: str) -> str:
        """Write a note."""
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(name + "\n")
        return f"wrote {name}"

    return write_note


async def test_killed_mid_stream(tmp_path: Path) -> None:
    db, log = run_and_kill(tmp_path, "mid_stream", "STREAMING")
    assert integrity(db) == "ok"
    storage = SQLiteSessionExtension(db)
    model = ScriptedModel([text_step("The whole answer.")])
    agent = await Agent.create(model, AgentRunConfig("crash"), extensions=[storage])
    # The step never finished, so nothing of it was saved; the question was.
    assert await storage.storage.load("crash") == [UserMessage("Please write notes a and b")]
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.CALL_MODEL
    assert (await agent.resume()).content == "The whole answer."
    assert await agent.resume_point() is None
    assert not log.exists()
    await storage.storage.close()
    assert integrity(db) == "ok"


async def test_killed_mid_tool(tmp_path: Path) -> None:
    db, log = run_and_kill(tmp_path, "mid_tool", "IN_TOOL b")
    assert integrity(db) == "ok"
    storage = SQLiteSessionExtension(db)
    history = await storage.storage.load("crash")
    assert history[0] == UserMessage("Please write notes a and b")
    assert isinstance(history[1], AssistantMessage) and len(history[1].tool_calls) == 2
    assert history[2:] == [ToolMessage("call_a", "write_note", "wrote a")]  # a finished, b did not

    model = ScriptedModel([text_step("b may not have been written; I will check first.")])
    agent = await Agent.create(
        model, AgentRunConfig("crash"), tools=[write_note_tool(log)], extensions=[storage]
    )
    point = await agent.resume_point()
    assert point is not None and point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.id for c in point.unanswered_tool_calls] == ["call_b"]
    reply = await agent.resume()
    assert reply.content.startswith("b may not")
    assert model.requests[0].messages[-1] == ToolMessage(
        "call_b", "write_note", RECOVERED_TOOL_TEXT, success=False
    )
    # Each side effect happened exactly once: the resume ran nothing.
    assert log.read_text().splitlines() == ["a", "b"]
    assert await agent.resume_point() is None
    await storage.storage.close()
    assert integrity(db) == "ok"


@pytest.mark.parametrize("round_", range(3))
async def test_repeated_kills_mid_tool_never_rerun_a_tool(tmp_path: Path, round_: int) -> None:
    """The same kill, several times over: the tally stays one run per side effect."""
    db, log = run_and_kill(tmp_path, "mid_tool", "IN_TOOL b")
    storage = SQLiteSessionExtension(db)
    agent = await Agent.create(
        ScriptedModel([text_step("ok")]),
        AgentRunConfig("crash"),
        tools=[write_note_tool(log)],
        extensions=[storage],
    )
    await agent.resume()
    assert sorted(log.read_text().splitlines()) == ["a", "b"]
    seqs = [r.seq for r in await storage.storage.load_records("crash")]
    assert seqs == list(range(1, len(seqs) + 1))  # contiguous: nothing lost or duplicated
    await storage.storage.close()
