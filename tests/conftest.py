"""Test-wide settings: no test touches the network beyond loopback, the user's data or keyring."""

from __future__ import annotations

import gc
import os
import socket
from collections.abc import Iterator

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> None:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None and not (str(host).startswith("127.") or host in ("localhost", "::1")):
        raise ConnectionRefusedError(f"tests may only connect to loopback, not {host!r}")
    return _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_external_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    yield


@pytest.fixture(autouse=True, scope="session")
def _collect_on_the_main_thread() -> Iterator[None]:
    """As the app does (ui.collector): no automatic collection, which may run on an aiosqlite
    worker and free Qt objects there (a segfault seen in the UI tests); each test ends
    collecting what is due, on the main thread."""
    gc.disable()
    yield
    gc.enable()


@pytest.fixture(autouse=True)
def _collect_due() -> Iterator[None]:
    yield
    generation = due_generation(gc.get_count(), gc.get_threshold())
    if generation is not None:
        gc.collect(generation)


def due_generation(counts: tuple[int, int, int], thresholds: tuple[int, int, int]) -> int | None:
    """The generation CPython would collect now (``ui.collector.due_generation``, repeated
    here so the core's tests do not import Qt)."""
    for generation in (2, 1, 0):
        if thresholds[generation] and counts[generation] >= thresholds[generation]:
            return generation
    return None


@pytest.fixture
def db_path(tmp_path: os.PathLike[str]) -> str:
    return os.path.join(os.fspath(tmp_path), "conversations.sqlite")
