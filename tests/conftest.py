"""Test-wide settings: no test touches the network beyond loopback, the user's data or keyring."""

from __future__ import annotations

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


@pytest.fixture
def db_path(tmp_path: os.PathLike[str]) -> str:
    return os.path.join(os.fspath(tmp_path), "conversations.sqlite")
