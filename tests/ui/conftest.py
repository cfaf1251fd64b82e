"""UI test fixtures: offscreen Qt, a qasync loop per test, an in-memory keyring."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists

import keyring
import pytest

from tests.ui.helpers import LOOPS, MemoryKeyring

T = TypeVar("T")


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def _no_user_dirs(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Anything that asks platformdirs lands in the test's folder, never the user's.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def run(qapp: Any) -> Iterator[Callable[[Awaitable[T]], T]]:
    """``run(coro)``: drive a coroutine on a qasync loop; loop errors fail the test."""
    from ui.eventloop import ContinuumEventLoop

    loop = ContinuumEventLoop(qapp)
    LOOPS.append(loop)
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    asyncio.set_event_loop(loop)

    def runner(coro: Awaitable[T], timeout: float = 30.0) -> T:
        return loop.run_until_complete(asyncio.wait_for(coro, timeout))

    yield runner
    # Closing shuts qasync's executor threads down; the loop object itself stays referenced.
    loop.close()
    asyncio.set_event_loop(None)
    assert not errors, f"event loop errors: {errors}"
