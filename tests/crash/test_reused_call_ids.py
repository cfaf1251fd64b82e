"""A provider that reuses a tool-call id in a later turn: ``kill -9`` during the second use.

The child (:mod:`tests.crash.reused_call_id_child`) runs the app's services on a real data
folder. In turn 1 ``call_1`` was denied (it was left "awaiting approval", truthfully: it never
ran); in turn 2 the model asks ``call_1`` again, the tool runs and the child is SIGKILLed while
it runs. After that, in this process (a fresh one for the database), the second ``call_1`` must
be reported as "may have run", and Resume must not run it again: the child's own record of runs
(``runs.txt``) has exactly one line for it.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from app import ToolCall, ToolMessage
from app.resume import RECOVERED_TOOL_TEXT, ResumeKind
from app.services import DATABASE_FILE, ApprovalDecision, AppServices
from app.storage.journal import TOOL_AWAITING_APPROVAL, TOOL_STARTED
from app.testing import ScriptedModel, text_step
from tests.crash import reused_call_id_child as child
from tests.crash.childproc import run_and_kill

ROOT = Path(__file__).resolve().parents[2]


def kill_in_second_turn(tmp_path: Path, scenario: str) -> Path:
    data_dir = tmp_path / "data"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    killed = run_and_kill(
        [sys.executable, child.__file__, str(data_dir), scenario],
        stderr_path=tmp_path / "child.stderr",
        is_milestone=lambda line: line == "TOOL_RUNNING",
        timeout=60,
        env=env,
    )
    assert killed.reached and killed.by_sigkill, killed.stderr_tail
    assert "TURN_1_DONE" in killed.lines
    return data_dir


@pytest.mark.parametrize("scenario", ["allowed", "read_only"])
async def test_a_reused_call_id_that_was_running_is_never_run_again(
    tmp_path: Path,
    scenario: str,
) -> None:
    data_dir = kill_in_second_turn(tmp_path, scenario)
    runs = tmp_path / "runs.txt"
    assert runs.read_text().splitlines() == ["turn 1 call_2", "turn 2 call_1 block"]
    with sqlite3.connect(data_dir / DATABASE_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    services = AppServices(data_dir)
    await services.open()
    try:
        services.client.tools = tuple(child.tools_for(runs, block=False))  # type: ignore[arg-type]
        info = await services.resume_info(child.SESSION)
        assert info.point is not None and info.point.kind is ResumeKind.RECOVER_TOOLS
        assert [c.id for c in info.point.unanswered_tool_calls] == ["call_1"]
        assert info.awaiting_approval == ()  # it was running: not "did not run"
        assert [c.id for c in info.may_have_run] == ["call_1"]
        assert await services.not_started_calls(child.SESSION) == frozenset()
        # The second call_1's own state; turn 1's call_1 keeps its own ("awaiting", denied).
        states = await services.journal.tool_states(child.SESSION)
        assert states == ({"call_1": TOOL_STARTED} if scenario == "allowed" else {})
        # seq 2: turn 1's call_1 (denied), 4: call_2, 8: turn 2's call_1.
        expected = {(2, "call_1"): TOOL_AWAITING_APPROVAL, (4, "call_2"): TOOL_STARTED}
        if scenario == "allowed":
            expected[(8, "call_1")] = TOOL_STARTED
        assert await services.journal.all_tool_states(child.SESSION) == expected

        asked: list[str] = []

        async def ask(session_id: str, call: ToolCall, spec: object) -> ApprovalDecision:
            asked.append(call.id)
            return ApprovalDecision.ALLOW_ONCE

        services.approver = ask
        services.client.model = ScriptedModel([text_step("Checked; all good.")])
        events = [e async for e in services.stream_resume(child.SESSION)]
        assert events[-1].reply.content == "Checked; all good."  # type: ignore[attr-defined]
        assert asked == []
        assert runs.read_text().splitlines() == ["turn 1 call_2", "turn 2 call_1 block"]
        history = await services.history(child.SESSION)
        answers = [m for m in history if isinstance(m, ToolMessage)]
        assert [(m.tool_call_id, m.success) for m in answers] == [
            ("call_1", False),
            ("call_2", True),
            ("call_1", False),
        ]
        assert answers[-1].content == RECOVERED_TOOL_TEXT
        assert (await services.resume_info(child.SESSION)).point is None
    finally:
        await services.close()


async def test_a_reused_call_id_awaiting_approval_is_asked_again_and_runs_once(
    tmp_path: Path,
) -> None:
    """Killed while the person was being asked about the second ``call_1``: its own state is
    "awaiting" (the first one's too, separately), so Resume asks again and runs it once."""
    data_dir = kill_in_second_turn(tmp_path, "asked")
    runs = tmp_path / "runs.txt"
    assert runs.read_text().splitlines() == ["turn 1 call_2"]
    services = AppServices(data_dir)
    await services.open()
    try:
        services.client.tools = tuple(child.tools_for(runs, block=False))  # type: ignore[arg-type]
        info = await services.resume_info(child.SESSION)
        assert info.point is not None and info.point.kind is ResumeKind.RECOVER_TOOLS
        assert [c.id for c in info.awaiting_approval] == ["call_1"] and info.may_have_run == ()
        assert await services.journal.all_tool_states(child.SESSION) == {
            (2, "call_1"): TOOL_AWAITING_APPROVAL,
            (4, "call_2"): TOOL_STARTED,
            (8, "call_1"): TOOL_AWAITING_APPROVAL,
        }

        async def allow(session_id: str, call: ToolCall, spec: object) -> ApprovalDecision:
            return ApprovalDecision.ALLOW_ONCE

        services.approver = allow
        services.client.model = ScriptedModel([text_step("Done now.")])
        [e async for e in services.stream_resume(child.SESSION)]
        assert runs.read_text().splitlines() == ["turn 1 call_2", "turn 2 call_1 block"]
        answers = [m for m in await services.history(child.SESSION) if isinstance(m, ToolMessage)]
        assert [(m.tool_call_id, m.success) for m in answers] == [
            ("call_1", False),
            ("call_2", True),
            ("call_1", True),
        ]
        assert await services.journal.tool_states(child.SESSION) == {"call_1": TOOL_STARTED}
    finally:
        await services.close()
