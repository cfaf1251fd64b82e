"""Fixtures: llama.cpp's server on the tiny hand-set model (one per module, and small-context)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .server import LlamaServer, require_wheel


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A llama.cpp server with a roomy context (4096 tokens)."""
    require_wheel()
    server = LlamaServer(tmp_path_factory.mktemp("llama"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def small_llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A llama.cpp server whose context holds only 256 tokens (llama.cpp's smallest; fills up quickly)."""
    require_wheel()
    server = LlamaServer(tmp_path_factory.mktemp("llama-small"), n_ctx=256)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_llama(tmp_path: Path) -> Iterator[LlamaServer]:
    """A llama.cpp server for this test alone (it may be killed and restarted)."""
    require_wheel()
    server = LlamaServer(tmp_path)
    server.start()
    yield server
    server.stop()
