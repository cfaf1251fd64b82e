"""A child process that makes a new version of a finished answer, to be killed mid-way.

Usage: python branch_child.py DATA_DIR MODE [STOP_AT]

Turn 1 (``first question`` → ``First answer.``) completes. Then MODE makes a new version:
``edit`` sends ``edited question`` as a new version of the question (seq 1); ``regenerate``
answers the question again (seq 2). In both, the model asks for ``append_line``, a real tool
that appends its text to ``DATA_DIR/../runs.txt`` (the independent record of runs) and then
blocks until SIGKILL. Milestones on stdout: ``FIRST_DONE``, ``RUN_STARTED``, ``SAVED <kind>``
(each message saved by the new request), ``TOOL_RUNNING``. With ``STOP_AT`` (one of those), the
child blocks right after printing it, until SIGKILL: the kill then lands exactly there, however
slowly the parent reads (otherwise the child could save the next message first on a busy
machine, and the test would see a later state than the one it asked for).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

from app import ToolCall, tool
from app.events import EventType
from app.services import ApprovalDecision, AppServices
from app.testing import ScriptedModel, text_step, tool_step

SESSION = "branching"


def append_tool(runs: Path, *, block: bool) -> object:
    @tool(side_effects=True)
    def append_line(text: str) -> str:
        """Append a line to the notes file."""
        with open(runs, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
        if block:
            print("TOOL_RUNNING", flush=True)
            threading.Event().wait()  # until SIGKILL
        return f"appended {text}"

    return append_line


def milestone(line: str, stop_at: str | None) -> None:
    """Print a milestone; at ``stop_at``, block until SIGKILL."""
    print(line, flush=True)
    if line == stop_at:
        threading.Event().wait()


async def main(data_dir: str, mode: str, stop_at: str | None = None) -> None:
    runs = Path(data_dir).parent / "runs.txt"
    services = AppServices(Path(data_dir))
    await services.open()
    services.client.tools = (append_tool(runs, block=True),)  # type: ignore[assignment]

    async def allow(session_id: str, call: ToolCall, spec: object) -> ApprovalDecision:
        return ApprovalDecision.ALLOW_ONCE

    services.approver = allow
    services.client.model = ScriptedModel(
        [
            text_step("First answer."),
            tool_step(ToolCall("call_v", "append_line", {"text": f"{mode} block"})),
            text_step("never reached"),
        ]
    )
    async for _ in services.stream(SESSION, "first question"):
        pass
    print("FIRST_DONE", flush=True)
    events = (
        services.stream_edit(SESSION, 1, "edited question")
        if mode == "edit"
        else services.stream_regenerate(SESSION, 2)
    )
    async for event in events:
        if event.type is EventType.RUN_STARTED:
            milestone("RUN_STARTED", stop_at)
        elif event.type is EventType.MESSAGE_SAVED:
            milestone(f"SAVED {type(event.message).__name__}", stop_at)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], *sys.argv[3:4]))
