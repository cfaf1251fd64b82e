"""Fixtures for the hardening tests: the app's services over a real data folder and simulator,
and an in-memory keyring so no test reaches the real user's keyring."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import keyring
import pytest

from app.services import AppServices
from tests.memory_keyring import MemoryKeyring

__all__ = ["BOUND", "MemoryKeyring", "open_services"]

BOUND = 30.0


@pytest.fixture(autouse=True)
def memory_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.delenv("CONTINUUM_API_KEY", raising=False)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


async def open_services(data_dir: Path) -> AppServices:
    services = AppServices(data_dir)
    async with asyncio.timeout(BOUND):
        await services.open()
        await services.start_simulator(tokens_per_second=0)
        await services.configure_model()
    return services


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = await open_services(tmp_path / "data")
    yield svc
    async with asyncio.timeout(BOUND):
        await svc.close()
