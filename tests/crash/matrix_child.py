"""The crash matrix's child: the app's services running one request, to be killed with SIGKILL.

Usage: ``python matrix_child.py SPEC_JSON`` (the parent, :mod:`tests.crash.matrix`, builds the
spec). The child opens :class:`app.workspace.AppServices` on the spec's data folder (migrating a
v1 database when the parent prepared one), starts its own simulator with the scripted replies,
registers the ``note`` tool (its side effect: one fsynced line in a log) and runs one request
through ``AppServices.stream`` — so drafts, stop records, running markers and the cross-process
lock are all in play when the kill lands.

It prints one flushed line per milestone, always *after* the thing it reports happened::

    OPENING / OPENED            around AppServices.open() (the migration, if any)
    READY <session id>
    RUN_STARTED                 the running marker is committed
    DELTA <step> <json text>    a text piece reached the "screen"
    SAVED <seq> <kind> <stop>   MESSAGE_SAVED: that row is committed
    TOOL_START <tag>            the tool began
    TOOL_EFFECT <tag>           its side effect is durable (fsynced)
    TOOL_RETURN <tag>           the tool returned (its result is not saved yet)
    DONE                        the request ended and the marker is cleared

then waits to be killed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def make_note_tool(log_path: str, hold: float) -> Any:
    async def note(tag: str) -> str:
        """Write a note: append the tag to the side-effect log (durably)."""
        say("TOOL_START", tag)
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (tag + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        say("TOOL_EFFECT", tag)
        if hold:
            await asyncio.sleep(hold)
        say("TOOL_RETURN", tag)
        return f"noted {tag}"

    return note


async def main(spec: dict[str, Any]) -> None:
    import app.workspace as workspace
    from app.events import EventType
    from app.messages import AssistantMessage
    from app.simulator import Reply, SimToolCall
    from app.tools import as_tool

    workspace.DRAFT_SAVE_INTERVAL = spec["draft_interval"]  # more draft commits to land in
    services = workspace.AppServices(Path(spec["data_dir"]))
    say("OPENING")
    await services.open()
    say("OPENED")
    await services.start_simulator(tokens_per_second=spec["rate"])
    await services.configure_model()
    services.client.tools = (as_tool(make_note_tool(spec["log"], spec["tool_hold"])),)
    for step in spec["steps"]:
        services._simulator.enqueue(Reply(
            text=step["text"],
            tool_calls=tuple(SimToolCall("note", {"tag": t}, id=f"call_{t}") for t in step["tags"]),
        ))
    session = await services.new_session("crash matrix")
    say("READY", session.id)
    step = 0
    async for event in services.stream(session.id, spec["user_text"]):
        if event.type is EventType.RUN_STARTED:
            say("RUN_STARTED")
        elif event.type is EventType.TEXT_DELTA:
            say("DELTA", step, json.dumps(event.text))
        elif event.type is EventType.MESSAGE_SAVED:
            message = event.message
            stop = getattr(message, "stop_reason", None)
            say("SAVED", event.seq, type(message).__name__, stop if stop is not None else "-")
            if isinstance(message, AssistantMessage):
                step += 1
    say("DONE")
    await asyncio.Event().wait()  # the parent kills us


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
