"""Shared helpers for the UI tests (a plain module: conftests must not import each other)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from app import AgentRunConfig, RetryPolicy
from app.services import AppServices
from app.settings import Settings
from app.simulator import Simulator
from tests.memory_keyring import MemoryKeyring

__all__ = [
    "LOOPS",
    "MemoryKeyring",
    "close_window",
    "make_services",
    "open_window",
    "qasync_runner",
    "until",
    "window_on_simulator",
]

# qasync loops stay referenced for the whole session: a loop collected from aiosqlite's worker
# thread would destroy Qt timers off-thread and crash a later test (ENVIRONMENT.md).
LOOPS: list[Any] = []


@contextlib.contextmanager
def qasync_runner(qapp: Any) -> Iterator[Callable[..., Any]]:
    """``run(coro, timeout=30)`` on the app's qasync loop; any loop error fails the test."""
    from ui.eventloop import ContinuumEventLoop

    loop = ContinuumEventLoop(qapp)
    LOOPS.append(loop)
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    asyncio.set_event_loop(loop)

    def runner(coro: Awaitable[Any], timeout: float = 30.0) -> Any:
        return loop.run_until_complete(asyncio.wait_for(coro, timeout))

    yield runner
    # Closing shuts qasync's executor threads down; the loop object itself stays referenced.
    loop.close()
    asyncio.set_event_loop(None)
    assert not errors, f"event loop errors: {errors}"


async def until(condition: Callable[[], Any], within: float = 10.0, what: str = "") -> Any:
    """Wait (yielding to the event loop) until ``condition()`` is truthy; return its value."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await asyncio.sleep(0.01)


async def make_services(
    data_dir: Path, base_url: str | None, *, model: str = "sim-echo"
) -> AppServices:
    services = AppServices(data_dir)
    if base_url is not None:
        services.save_settings(Settings(provider_kind="openai", base_url=base_url, model=model))
    # One attempt: fault tests want the failure now, not after backoff.
    services.client.defaults = AgentRunConfig("default", retry=RetryPolicy(max_attempts=1))
    await services.open()
    return services


async def open_window(data_dir: Path, base_url: str | None) -> Any:
    from ui.window import MainWindow

    services = await make_services(data_dir, base_url)
    window = MainWindow(services)
    window.resize(1000, 700)
    window.show()
    await window.start()
    return window


async def close_window(window: Any) -> None:
    window.close()
    task = getattr(window, "_shutdown_task", None)
    if task is not None:
        await asyncio.wait_for(task, 15)


@contextlib.asynccontextmanager
async def window_on_simulator(data_dir: Path) -> AsyncIterator[tuple[Simulator, Any]]:
    """``async with window_on_simulator(dir) as (sim, window):`` a simulator on loopback, the
    main window open on ``dir`` with the simulator as its provider; closed (and waited for) on
    the way out, then the simulator stops."""
    async with Simulator() as sim:
        window = await open_window(data_dir, sim.openai_base_url)
        try:
            yield sim, window
        finally:
            await close_window(window)
