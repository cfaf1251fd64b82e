"""``kill -9`` while a new version is being made (an edit, a regeneration): afterwards the old
version is whole, the new branch is current and one chain from where it forked, Resume finishes
it on that branch, and no tool ran twice (the child's own record of runs says so)."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from app import AssistantMessage, ResumeKind, ToolMessage, UserMessage
from app.resume import RECOVERED_TOOL_TEXT
from app.services import DATABASE_FILE, AppServices
from app.testing import ScriptedModel, text_step
from tests.crash import branch_child as child
from tests.crash.childproc import run_and_kill

ROOT = Path(__file__).resolve().parents[2]


def killed_at(tmp_path: Path, mode: str, milestone: str) -> Path:
    data_dir = tmp_path / "data"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    killed = run_and_kill(
        [sys.executable, child.__file__, str(data_dir), mode, milestone],
        stderr_path=tmp_path / "child.stderr",
        is_milestone=lambda line: line == milestone,
        timeout=60,
        env=env,
    )
    assert killed.reached and killed.by_sigkill, killed.stderr_tail
    assert "FIRST_DONE" in killed.lines
    return data_dir


@pytest.mark.parametrize(
    ("mode", "milestone", "expected"),
    [
        ("edit", "SAVED UserMessage", ResumeKind.CALL_MODEL),  # the new version, no answer yet
        ("edit", "TOOL_RUNNING", ResumeKind.RECOVER_TOOLS),
        ("regenerate", "RUN_STARTED", None),  # nothing of the new answer saved
        ("regenerate", "TOOL_RUNNING", ResumeKind.RECOVER_TOOLS),
    ],
)
async def test_a_kill_while_making_a_version_loses_nothing_and_reruns_nothing(
    tmp_path: Path, mode: str, milestone: str, expected: ResumeKind | None
) -> None:
    data_dir = killed_at(tmp_path, mode, milestone)
    db = data_dir / DATABASE_FILE
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    runs = tmp_path / "runs.txt"
    ran_before = runs.read_text().splitlines() if runs.exists() else []

    services = AppServices(data_dir)
    await services.open()
    try:
        store = services.client.store
        tree = {r.seq: r for r in await store.tree(child.SESSION)}
        # The first version is whole.
        assert tree[1].message == UserMessage("first question") and tree[1].parent_seq is None
        assert isinstance(tree[2].message, AssistantMessage) and tree[2].parent_seq == 1
        assert tree[2].message.content == "First answer."
        branch = await store.load_records(child.SESSION)
        seqs = [r.seq for r in branch]
        # The current branch is one chain.
        assert [r.parent_seq for r in branch] == [None, *seqs[:-1]]
        point = await services.client.resume_point(child.SESSION)
        if expected is None:  # the regeneration saved nothing: the first version is shown
            assert seqs == [1, 2] and point is None
            assert await store.versions(child.SESSION) == []
            return
        assert point is not None and point.kind is expected
        if mode == "edit":
            assert branch[0].message == UserMessage("edited question")
        else:
            assert seqs[0] == 1 and seqs[1] != 2  # the new answer is a sibling of the old
        assert len(await store.versions(child.SESSION)) == 1
        services.client.tools = (child.append_tool(runs, block=False),)  # type: ignore[assignment]
        services.client.model = ScriptedModel([text_step("Recovered.")])
        async for _ in services.stream_resume(child.SESSION):
            pass
        after = await store.load(child.SESSION)
        assert isinstance(after[-1], AssistantMessage) and after[-1].content == "Recovered."
        if expected is ResumeKind.RECOVER_TOOLS:
            results = [m for m in after if isinstance(m, ToolMessage)]
            assert [m.content for m in results] == [RECOVERED_TOOL_TEXT]
        # No tool ran twice: what ran before the kill is all that ever ran.
        assert (runs.read_text().splitlines() if runs.exists() else []) == ran_before
        assert ran_before == ([f"{mode} block"] if milestone == "TOOL_RUNNING" else [])
        # The first version is still there, whole, and nothing to resume on it.
        await services.select_branch(child.SESSION, 2)
        assert [m.content for m in await store.load(child.SESSION)] == [
            "first question",
            "First answer.",
        ]
        assert await services.client.resume_point(child.SESSION) is None
    finally:
        await services.close()
