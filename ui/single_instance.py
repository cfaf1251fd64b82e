"""One running Continuum per data folder: a second launch asks the first to come forward.

The first instance listens on a local socket named after the data folder (and the user); a
later launch on the same folder connects, says ``activate`` and exits. On Linux and macOS the
socket is a Unix socket made with Python's :mod:`socket` (already imported by logging) and
watched with a ``QSocketNotifier``: this runs before the start window is shown, and loading Qt's
network module there cost a fifth of the time the start adds to a bare window. On Windows it is
Qt's ``QLocalServer`` (a named pipe).

A socket file left by a killed instance answers nobody: it is removed and taken over. If the
socket cannot be made at all (an unwritable runtime folder), Continuum still starts, without
this protection; the conversations stay safe, each request claims its conversation across
processes by itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["SingleInstance", "socket_name"]

log = logging.getLogger("ui")

#: Seconds a second launch waits for the first to accept its connection.
ASK_TIMEOUT = 0.5


def socket_name(data_dir: Path, user: str) -> str:
    """The socket's name for ``data_dir`` and ``user`` (a digest: paths may be long or odd)."""
    digest = hashlib.sha256(str(data_dir).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"continuum-{user}-{digest}"


class SingleInstance:
    """Claim the data folder (:meth:`claim`), then hear later launches (:meth:`on_activate`)."""

    def __init__(self, data_dir: Path) -> None:
        posix = hasattr(os, "getuid") and sys.platform != "win32"
        user = str(os.getuid()) if posix else os.environ.get("USERNAME", "")
        self.name = socket_name(data_dir, user)
        self._impl: _UnixInstance | _QtInstance = (
            _UnixInstance(self.name) if posix else _QtInstance(self.name)
        )

    def claim(self) -> bool:
        """Become the instance (``True``) or tell the running one to come forward (``False``)."""
        return self._impl.claim()

    def on_activate(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the Qt thread) each time a later launch asks."""
        self._impl.on_activate(callback)

    def close(self) -> None:
        """Stop listening (and remove the socket file)."""
        self._impl.close()


def _runtime_dir() -> Path:
    folder = os.environ.get("XDG_RUNTIME_DIR")  # per user, 0700 (Linux)
    if folder and os.path.isdir(folder):
        return Path(folder)
    return Path(os.environ.get("TMPDIR") or "/tmp")


class _UnixInstance:
    def __init__(self, name: str) -> None:
        self.path = str(_runtime_dir() / name)
        self._server: socket.socket | None = None
        self._notifier: Any = None
        self._callbacks: list[Callable[[], None]] = []

    def claim(self) -> bool:
        if self._ask():
            return False
        # Nobody answers: no instance, or a file left by a killed one. Take it over.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_mask = os.umask(0o177)  # the file is the user's alone from the start
        try:
            server.bind(self.path)
        except OSError as err:
            server.close()
            if self._ask():  # another launch took it in between
                return False
            log.warning("cannot make the single-instance socket %s: %s", self.path, err)
            return True
        finally:
            os.umask(old_mask)
        server.listen(8)
        server.setblocking(False)
        self._server = server
        return True

    def _ask(self) -> bool:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(ASK_TIMEOUT)
        try:
            client.connect(self.path)
            client.sendall(b"activate\n")
        except OSError:  # no file, refused (a stale file), timed out
            return False
        finally:
            client.close()
        return True

    def on_activate(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)
        if self._server is None or self._notifier is not None:
            return
        from PySide6.QtCore import QSocketNotifier

        self._notifier = QSocketNotifier(self._server.fileno(), QSocketNotifier.Type.Read)
        self._notifier.activated.connect(self._accept)

    def _accept(self, *_args: object) -> None:
        server = self._server
        if server is None:
            return
        while True:
            try:
                connection, _address = server.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                log.exception("the single-instance socket failed")
                return
            connection.close()  # a connection is the request; what it says does not matter
            for callback in self._callbacks:
                callback()

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier = None
        if self._server is not None:
            self._server.close()
            self._server = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)


class _QtInstance:  # pragma: no cover - Windows
    def __init__(self, name: str) -> None:
        from PySide6.QtNetwork import QLocalServer

        self.name = name
        self.server = QLocalServer()
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)

    def claim(self) -> bool:
        from PySide6.QtNetwork import QLocalServer, QLocalSocket

        # Ask first: Qt's listen() can replace a live socket (it renames a fresh one into
        # place), so "listen failed" cannot be the test for "another one runs".
        client = QLocalSocket()
        client.connectToServer(self.name)
        if client.waitForConnected(int(ASK_TIMEOUT * 1000)):
            client.write(b"activate\n")
            client.waitForBytesWritten(1000)
            client.disconnectFromServer()
            return False
        QLocalServer.removeServer(self.name)
        return self.server.listen(self.name)

    def on_activate(self, callback: Callable[[], None]) -> None:
        def accept() -> None:
            while self.server.hasPendingConnections():
                connection = self.server.nextPendingConnection()
                connection.readyRead.connect(callback)
                connection.disconnected.connect(connection.deleteLater)

        self.server.newConnection.connect(accept)

    def close(self) -> None:
        self.server.close()
