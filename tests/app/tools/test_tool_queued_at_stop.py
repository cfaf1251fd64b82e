"""A sync tool still queued for a worker thread when Stop lands never runs, and says so.

All worker threads busy (here: a pool of one, held by another tool) means a second sync call
waits in the executor's queue. Stop then must call it off for good — its result says it did not
run (``NOT_STARTED``), and the function is never called, even after the worker frees up.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from app import ToolCall
from app.messages import ToolOutcome
from app.tools import FunctionTool, as_tool


async def test_a_queued_sync_tool_called_off_by_stop_never_runs() -> None:
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(pool)
    release, holding = threading.Event(), threading.Event()
    ran: list[str] = []

    def hold() -> str:
        """Keep the only worker busy."""
        holding.set()
        release.wait(30)
        return "held"

    def write_note(text: str) -> str:
        """Write a note."""
        ran.append(text)
        return "written"

    hold_tool: FunctionTool = as_tool(hold)
    note_tool: FunctionTool = as_tool(write_note)
    busy = asyncio.ensure_future(hold_tool.invoke(ToolCall("h", "hold", {})))
    with ThreadPoolExecutor(max_workers=1) as waiter:  # the pool's only worker is taken
        assert await loop.run_in_executor(waiter, holding.wait, 30)
    queued = asyncio.ensure_future(note_tool.invoke(ToolCall("n", "write_note", {"text": "x"})))
    await asyncio.sleep(0)  # let it reach the executor queue
    queued.cancel()  # Stop
    result = await queued
    assert result.outcome is ToolOutcome.NOT_STARTED and not result.success
    assert "did not run" in result.content
    release.set()
    assert (await busy).content == "held"
    pool.shutdown(wait=True)  # every queued item has been taken by now
    assert ran == []
