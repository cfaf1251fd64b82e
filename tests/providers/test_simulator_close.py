"""The simulator closing a connection: a peer that is already gone is normal and silent; any
other failure there is a bug in the simulator and is logged with its traceback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import httpx
import pytest

from app.simulator import Simulator


async def _one_exchange_then_close(sim: Simulator) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{sim.openai_base_url}/models")
        assert response.status_code == 200
        connections = list(sim._connections)
    assert connections, "the exchange left no connection task to watch"
    await asyncio.wait(connections)  # the client closed: the server ends the connection


@pytest.mark.parametrize(
    ("failure", "logged"),
    [
        (lambda: RuntimeError("simulator bug while closing"), True),
        (lambda: ConnectionResetError("peer gone"), False),
        (lambda: BrokenPipeError("peer gone"), False),
    ],
    ids=["unexpected", "reset", "broken-pipe"],
)
async def test_a_failure_while_closing_a_connection_is_logged_unless_expected(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    failure: Callable[[], BaseException],
    logged: bool,
) -> None:
    raised: list[BaseException] = []

    async def wait_closed(self: asyncio.StreamWriter) -> None:
        raised.append(failure())
        raise raised[-1]

    async with Simulator() as sim:
        monkeypatch.setattr(asyncio.StreamWriter, "wait_closed", wait_closed)
        with caplog.at_level(logging.DEBUG, logger="app.simulator"):
            await _one_exchange_then_close(sim)
        monkeypatch.undo()
    assert raised, "the server never closed the connection"
    records = [r for r in caplog.records if r.exc_info and r.exc_info[1] is raised[0]]
    assert bool(records) is logged, caplog.text
    if logged:
        assert records[0].levelno == logging.ERROR
