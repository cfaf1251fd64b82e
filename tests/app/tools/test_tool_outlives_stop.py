"""A sync tool cannot be interrupted: after Stop or a timeout its result tells the truth.

A real sync tool (run in a worker thread) blocks on an event the test controls, then writes a
file. Stop (cancelling the request, as the window does) or the tool's timeout arrives while it
blocks; the saved result must match what the thread really did — "completed anyway" with its
result when it finished within the grace, "may still complete" when it had not — and the
history and Resume state stay right (the call is answered; Resume never runs it again).
Real SQLite data folder through :class:`AppServices`; no sleeps: the test waits on events.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import app.tools.functions
from app import EventType, ToolCall, ToolMessage, as_tool, tool
from app.resume import ResumeKind
from app.services import AppServices
from app.storage.journal import StopKind
from app.testing import ScriptedModel, text_step, tool_step
from app.tools import STOPPED_STILL_RUNNING_TEXT, FunctionTool

BOUND = 10.0


class Gate:
    """A sync tool's controls: ``entered`` when it runs, ``release`` to let it write and
    return, ``finished`` once it has."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.entered = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()

    def tool(self, *, timeout: float | None = None) -> FunctionTool:
        gate = self

        @tool(side_effects=True, timeout=timeout)
        def slow_write(text: str) -> str:
            """Write text to the notes file (slowly)."""
            gate.entered.set()
            try:
                if not gate.release.wait(BOUND):
                    raise RuntimeError("the test never released the tool")
                gate.target.write_text(text)
                return f"wrote {len(text)} characters"
            finally:
                gate.finished.set()

        return as_tool(slow_write)

    async def wait(self, event: threading.Event) -> None:
        assert await asyncio.to_thread(event.wait, BOUND)


class GraceWatch(logging.Handler):
    """Set when a tool starts waiting out its grace (the log line says so)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.waiting = threading.Event()
        self.finished_late: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "waiting up to" in message:
            self.waiting.set()
        if "finished" in message and "after its result said" in message:
            self.finished_late.append(message)


@pytest.fixture
def watch() -> Iterator[GraceWatch]:
    handler = GraceWatch()
    logger = logging.getLogger("app.tools")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(previous)


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    yield svc
    await svc.close()


async def start_and_stop(services: AppServices, gate: Gate, session: str) -> asyncio.Task[None]:
    """Send a message whose answer runs the slow tool; Stop once it runs. Returns the task."""
    services.client.tools = (gate.tool(),)
    services.client.model = ScriptedModel(
        [tool_step(ToolCall("w1", "slow_write", {"text": "hello"})), text_step("unreachable")]
    )

    async def consume() -> None:
        async for _ in services.stream(session, "write it"):
            pass

    task = asyncio.ensure_future(consume())
    await gate.wait(gate.entered)
    task.cancel()  # Stop
    return task


async def answer_of(services: AppServices, session: str) -> ToolMessage:
    (answer,) = [m for m in await services.history(session) if isinstance(m, ToolMessage)]
    return answer


async def check_resume_does_not_run_it_again(
    services: AppServices, session: str, gate: Gate
) -> None:
    info = await services.resume_info(session)
    assert info.point is not None and info.point.kind is ResumeKind.CALL_MODEL
    assert info.stop is not None and info.stop.kind is StopKind.STOPPED
    entered_again = Gate(gate.target)
    services.client.tools = (entered_again.tool(),)
    services.client.model = ScriptedModel([text_step("I see the note was written.")])
    events = [e async for e in services.stream_resume(session)]
    assert events[-1].type is EventType.RUN_COMPLETED
    assert not entered_again.entered.is_set()
    assert sum(isinstance(m, ToolMessage) for m in await services.history(session)) == 1


async def test_stop_while_a_sync_tool_finishes_within_the_grace_reports_its_result(
    services: AppServices,
    tmp_path: Path,
    watch: GraceWatch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app.tools.functions, "STOP_GRACE", BOUND)  # ends as soon as the thread does
    gate = Gate(tmp_path / "note.txt")
    session = (await services.new_session()).id
    task = await start_and_stop(services, gate, session)
    await gate.wait(watch.waiting)  # Stop reached the tool; now it finishes
    gate.release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, BOUND)
    assert gate.target.read_text() == "hello"
    answer = await answer_of(services, session)
    assert answer.success
    assert "completed anyway" in answer.content and "wrote 5 characters" in answer.content
    await check_resume_does_not_run_it_again(services, session, gate)


async def test_stop_while_a_sync_tool_keeps_running_says_it_may_still_complete(
    services: AppServices,
    tmp_path: Path,
    watch: GraceWatch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app.tools.functions, "STOP_GRACE", 0.0)  # Stop answers at once
    gate = Gate(tmp_path / "note.txt")
    session = (await services.new_session()).id
    task = await start_and_stop(services, gate, session)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, BOUND)
    assert not gate.target.exists()  # still blocked when its result was written
    answer = await answer_of(services, session)
    assert not answer.success and answer.content == STOPPED_STILL_RUNNING_TEXT
    assert "may still complete" in answer.content

    gate.release.set()  # ... and then it does complete, as the result warned
    await gate.wait(gate.finished)
    assert gate.target.read_text() == "hello"
    await check_resume_does_not_run_it_again(services, session, gate)
    assert watch.finished_late and "slow_write" in watch.finished_late[0]


@pytest.mark.parametrize("finishes_in_grace", [False, True])
async def test_a_timed_out_sync_tool_says_what_really_happened(
    tmp_path: Path,
    watch: GraceWatch,
    monkeypatch: pytest.MonkeyPatch,
    finishes_in_grace: bool,
) -> None:
    monkeypatch.setattr(app.tools.functions, "STOP_GRACE", BOUND if finishes_in_grace else 0.0)
    gate = Gate(tmp_path / "note.txt")
    slow = gate.tool(timeout=0.01)  # the tool blocks until released: the deadline expires
    running = asyncio.ensure_future(slow.invoke(ToolCall("t1", "slow_write", {"text": "hi"})))
    if finishes_in_grace:
        await gate.wait(watch.waiting)
        gate.release.set()
    result = await asyncio.wait_for(running, BOUND)
    assert "did not finish within its 0.01-second limit" in result.content
    if finishes_in_grace:
        assert result.success and "completed anyway" in result.content
        assert "wrote 2 characters" in result.content
        assert gate.target.read_text() == "hi"
    else:
        assert not result.success and "may still complete" in result.content
        assert not gate.target.exists()
        gate.release.set()
        await gate.wait(gate.finished)
        assert gate.target.read_text() == "hi"


async def test_a_sync_tool_that_fails_after_stop_says_so(
    tmp_path: Path,
    watch: GraceWatch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app.tools.functions, "STOP_GRACE", BOUND)
    gate = Gate(tmp_path / "missing-folder" / "note.txt")  # the write will fail
    running = asyncio.ensure_future(
        gate.tool().invoke(ToolCall("t1", "slow_write", {"text": "hi"}))
    )
    await gate.wait(gate.entered)
    running.cancel()
    await gate.wait(watch.waiting)
    gate.release.set()
    result = await asyncio.wait_for(running, BOUND)
    assert not result.success
    assert "stopped" in result.content and "FileNotFoundError" in result.content
