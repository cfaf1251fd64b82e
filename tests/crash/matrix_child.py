"""The crash matrix's child: the app's services running one request, to be killed with SIGKILL.

Usage: ``python matrix_child.py SPEC_JSON`` (the parent, :mod:`tests.crash.matrix`, builds the
spec). The child opens :class:`app.services.AppServices` on the spec's data folder (migrating a
v1 database when the parent prepared one), starts its own simulator with the scripted replies,
registers the ``note`` tool — a tool with side effects, so it goes through the services'
approver (``approver_for``: ``awaiting_approval`` then ``started`` in the journal); its side
effect is one fsynced line in a log — and approves each call through ``AppServices.approver``
(once, or for the conversation), holding the approval as long as the spec says. Then:

* ``mode: run`` — one request through ``AppServices.stream`` (drafts, stop records, running
  markers and the cross-process lock are all in play when the kill lands);
* ``mode: resume`` — what a relaunched app does: ``open()`` (markers become stop records),
  ``resume_info`` (printed as ``INFO``), then ``stream_resume``, whose model steps are scripted
  too and ask for further tools. The parent may kill this process as well.

``CONTINUUM_MATRIX_MUTATION`` applies a deliberate bug first (:mod:`tests.crash.mutations`).

It prints one flushed line per milestone, always *after* the thing it reports happened (a line
written to the pipe survives the kill: it is the child's independent record of what it was
told was committed)::

    OPENING / OPENED            around AppServices.open() (the migration, if any)
    READY <session id>
    INFO <json>                 (resume) what resume_info said, before resuming
    NOTHING                     (resume) nothing to resume
    RUN_STARTED <request id>    the running marker is committed
    DELTA <step> <json text>    a text piece reached the "screen"
    SAVED <seq> <kind> <stop> <sha> <len>   MESSAGE_SAVED: that row is committed; the hash and
                                length of the text the agent handed to the store
    ASKED <tag>                 the approver was asked (awaiting_approval is durable)
    APPROVED <tag>              the approver said yes
    TOOL_START <tag>            the tool began
    TOOL_EFFECT <tag>           its side effect is durable (fsynced)
    TOOL_RETURN <tag>           the tool returned (its result is not saved yet)
    DONE                        the request ended and the marker is cleared

then waits to be killed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from mutations import apply_from_env  # this script's folder is on sys.path


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def make_note_tool(log_path: str, holds: dict[str, float]) -> Any:
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
        if holds.get(tag):
            await asyncio.sleep(holds[tag])
        say("TOOL_RETURN", tag)
        return f"noted {tag}"

    return note


def make_approver(spec: dict[str, Any]) -> Any:
    from app.services import ApprovalDecision

    decision = (
        ApprovalDecision.ALLOW_CONVERSATION
        if spec["approval"] == "conversation"
        else ApprovalDecision.ALLOW_ONCE
    )
    holds: dict[str, float] = spec["approval_hold"]

    async def ask(session_id: str, call: Any, tool: Any) -> ApprovalDecision:
        tag = call.arguments_dict().get("tag", "?")
        say("ASKED", tag)
        if holds.get(tag):
            await asyncio.sleep(holds[tag])
        say("APPROVED", tag)
        return decision

    return ask


async def report(events: Any) -> None:
    from app.events import EventType
    from app.messages import AssistantMessage

    step = 0
    async for event in events:
        if event.type is EventType.RUN_STARTED:
            say("RUN_STARTED", event.request_id)
        elif event.type is EventType.TEXT_DELTA:
            say("DELTA", step, json.dumps(event.text))
        elif event.type is EventType.MESSAGE_SAVED:
            message = event.message
            stop = getattr(message, "stop_reason", None)
            say(
                "SAVED",
                event.seq,
                type(message).__name__,
                stop if stop is not None else "-",
                digest(message.content),
                len(message.content),
            )
            if isinstance(message, AssistantMessage):
                step += 1


async def main(spec: dict[str, Any]) -> None:
    import app.services as workspace
    import app.services.requests as requests
    from app.simulator import Reply, SimToolCall
    from app.tools import as_tool

    apply_from_env()
    requests.DRAFT_SAVE_INTERVAL = spec["draft_interval"]  # more draft commits to land in
    services = workspace.AppServices(Path(spec["data_dir"]))
    say("OPENING")
    await services.open()
    say("OPENED")
    await services.start_simulator(tokens_per_second=spec["rate"])
    await services.configure_model()
    services.client.tools = (
        as_tool(make_note_tool(spec["log"], spec["tool_hold"]), side_effects=True),
    )
    services.approver = make_approver(spec)
    for step in spec["steps"]:
        services._simulator.enqueue(
            Reply(
                text=step["text"],
                tool_calls=tuple(
                    SimToolCall("note", {"tag": t}, id=f"call_{t}") for t in step["tags"]
                ),
            )
        )
    if spec["mode"] == "run":
        session = await services.new_session("crash matrix")
        say("READY", session.id)
        await report(services.stream(session.id, spec["user_text"]))
    else:
        session_id = spec["session"]
        info = await services.resume_info(session_id)
        say(
            "INFO",
            json.dumps(
                {
                    "found": info.point.kind.value
                    if info.point
                    else f"blocked:{info.blocked_reason}",
                    "stop": info.stop.kind.value if info.stop else None,
                    "draft": info.draft,
                    "unanswered": [c.id for c in info.point.unanswered_tool_calls]
                    if info.point
                    else [],
                    "awaiting": [c.id for c in info.awaiting_approval],
                    "markers": [m.session_id for m in await services.journal.running_markers()],
                }
            ),
        )
        if info.point is None:
            say("NOTHING")
        else:
            await report(services.stream_resume(session_id))
    say("DONE")
    await asyncio.Event().wait()  # the parent kills us


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
