"""UI test fixtures: offscreen Qt, a qasync loop per test, an in-memory keyring."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists

import keyring
import pytest

from tests.ui.helpers import MemoryKeyring, qasync_runner

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
def run(qapp: Any) -> Iterator[Callable[..., Any]]:
    """``run(coro)``: drive a coroutine on a qasync loop; loop errors fail the test."""
    with qasync_runner(qapp) as runner:
        yield runner


@pytest.fixture(autouse=True)
def _app_palette_restored(qapp: Any) -> Iterator[None]:
    """Every window applies its theme to the one shared QApplication: put the palette back."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    saved = QPalette(QApplication.palette())
    yield
    QApplication.setPalette(saved)
