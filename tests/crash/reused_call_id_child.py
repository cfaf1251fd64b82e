"""A child process whose provider reuses the tool-call id ``call_1`` in a later turn.

Usage: python reused_call_id_child.py DATA_DIR SCENARIO

Runs the app's services (real data folder, real SQLite) with a scripted model and one real tool,
``append_line``, which appends a line to ``DATA_DIR/../runs.txt`` (one line per run, the
independent record) and then blocks forever in its worker thread if the line says so.

Turn 1: the model asks ``call_1`` (``append_line``), the person denies it; then ``call_2``, the
person allows the tool "for this conversation"; the turn ends. Turn 2: the model asks
``call_1`` again. SCENARIO says how that second ``call_1`` runs:

* ``allowed``: through the "allowed for this conversation" path (``append_line``);
* ``read_only``: as a tool without side effects (``peek_and_block``, which never asks);
* ``asked``: ``call_2`` was allowed only once, so the person is asked about it again, and the
  child is killed while the approval card waits (it provably never started).

The tool prints ``TOOL_RUNNING`` once its line is written (``asked``: the approval prints it
while it waits); the test then sends SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

from app import ToolCall, tool
from app.services import ApprovalDecision, AppServices
from app.testing import ScriptedModel, text_step, tool_step

SESSION = "reused-ids"


def tools_for(runs: Path, *, block: bool = True) -> list[object]:
    """The real tools; ``block=False`` (for the recovering process): a re-run returns at once,
    so a test sees it in ``runs.txt`` instead of hanging."""

    @tool(side_effects=True)
    def append_line(text: str) -> str:
        """Append a line to the notes file."""
        with open(runs, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
        if block and text.endswith("block"):
            print("TOOL_RUNNING", flush=True)
            threading.Event().wait()  # until SIGKILL
        return f"appended {text}"

    @tool
    def peek_and_block(text: str) -> str:
        """Look at something (no side effects)."""
        with open(runs, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
        if block:
            print("TOOL_RUNNING", flush=True)
            threading.Event().wait()  # until SIGKILL
        return "seen"

    return [append_line, peek_and_block]


async def main(data_dir: str, scenario: str) -> None:
    runs = Path(data_dir).parent / "runs.txt"
    services = AppServices(Path(data_dir))
    await services.open()
    services.client.tools = tuple(tools_for(runs))  # type: ignore[arg-type]

    asked: list[str] = []

    async def ask(session_id: str, call: ToolCall, spec: object) -> ApprovalDecision:
        asked.append(call.id)
        if asked == ["call_1", "call_2", "call_1"]:  # turn 2 (scenario "asked"): never answers
            print("TOOL_RUNNING", flush=True)
            await asyncio.Event().wait()
        if call.id == "call_1":
            return ApprovalDecision.DENY
        if scenario == "asked":
            return ApprovalDecision.ALLOW_ONCE
        return ApprovalDecision.ALLOW_CONVERSATION

    services.approver = ask
    second_tool = "peek_and_block" if scenario == "read_only" else "append_line"
    services.client.model = ScriptedModel(
        [
            tool_step(ToolCall("call_1", "append_line", {"text": "turn 1 call_1"})),
            tool_step(ToolCall("call_2", "append_line", {"text": "turn 1 call_2"})),
            text_step("Turn one done."),
            tool_step(ToolCall("call_1", second_tool, {"text": "turn 2 call_1 block"})),
            text_step("never reached"),
        ]
    )
    async for _ in services.stream(SESSION, "first turn"):
        pass
    print("TURN_1_DONE", flush=True)
    async for _ in services.stream(SESSION, "second turn"):
        pass


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
