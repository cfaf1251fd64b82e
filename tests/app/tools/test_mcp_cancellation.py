"""Abandoning an MCP call or server never swallows the caller's own cancellation, and a task
that ends with an unexpected exception after it was abandoned is logged with its traceback.

The session and the connection task are stand-ins (asyncio tasks that misbehave on purpose: one
ignores its first cancellation, as a stuck server call can); the code under test is the real
:class:`McpToolSource`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest

from app.tools.mcp import McpServerConfig, McpToolSource


class StuckCall:
    """A ``session.call_tool`` that ignores the first cancel, then ends as ``ending`` says."""

    def __init__(self, ending: BaseException | None = None) -> None:
        self.ending = ending
        self.cancelled_once = asyncio.Event()
        self.gate = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None

    async def call_tool(self, tool: str, arguments: dict[str, Any], **_options: Any) -> Any:
        self.task = asyncio.current_task()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled_once.set()
            if self.ending is not None:
                raise self.ending from None
        await self.gate.wait()  # a second cancel ends it here
        raise AssertionError("never answered")


def _source(session: Any, runner: asyncio.Task[None]) -> McpToolSource:
    source = McpToolSource(McpServerConfig("stuck", sys.executable, call_timeout=0.01))
    source._session = session
    source._runner = runner
    return source


async def _finish(*tasks: asyncio.Task[Any] | None) -> None:
    for task in tasks:
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})


async def test_cancelling_a_call_while_it_is_abandoned_cancels_the_caller() -> None:
    session = StuckCall()
    runner = asyncio.create_task(asyncio.Event().wait())
    source = _source(session, runner)
    caller = asyncio.create_task(source.call("slow", {}))
    await session.cancelled_once.wait()  # the timeout passed; the call is being abandoned
    caller.cancel()
    await asyncio.wait({caller})
    try:
        assert caller.cancelled(), f"the cancellation was swallowed: {caller.result()!r}"
    finally:
        await _finish(session.task, runner)


@pytest.mark.parametrize(
    ("ending", "logged"),
    [(RuntimeError("a bug in the client"), True), (ConnectionResetError("gone"), False)],
)
async def test_an_abandoned_call_that_fails_unexpectedly_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture, ending: BaseException, logged: bool
) -> None:
    session = StuckCall(ending)
    runner = asyncio.create_task(asyncio.Event().wait())
    source = _source(session, runner)
    with caplog.at_level(logging.DEBUG, logger="app.tools.mcp"):
        result = await source.call("slow", {})
    await _finish(runner)
    assert not result.success and "no answer within" in result.content
    records = [r for r in caplog.records if r.exc_info and r.exc_info[1] is ending]
    assert bool(records) is logged, caplog.text
    if logged:
        assert records[0].levelno == logging.ERROR and "slow" in records[0].getMessage()


async def test_cancelling_aclose_while_it_abandons_a_stuck_server_cancels_the_caller() -> None:
    cancelled_once, gate = asyncio.Event(), asyncio.Event()

    async def stuck_runner() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled_once.set()
        await gate.wait()

    runner = asyncio.create_task(stuck_runner())
    source = _source(object(), runner)
    source.close_timeout = 0.01
    closer = asyncio.create_task(source.aclose())
    await cancelled_once.wait()  # close_timeout passed; the runner is being abandoned
    closer.cancel()
    await asyncio.wait({closer})
    try:
        assert closer.cancelled(), "aclose() swallowed its caller's cancellation"
    finally:
        await _finish(runner)


async def test_a_runner_that_dies_unexpectedly_while_abandoned_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failure = RuntimeError("the connection task broke")

    async def stuck_runner() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise failure from None

    runner = asyncio.create_task(stuck_runner())
    source = _source(object(), runner)
    source.close_timeout = 0.01
    with caplog.at_level(logging.DEBUG, logger="app.tools.mcp"):
        await source.aclose()
    assert any(r.exc_info and r.exc_info[1] is failure for r in caplog.records), caplog.text
