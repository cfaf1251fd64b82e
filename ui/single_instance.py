"""One running Continuum per data folder: a second launch asks the first to come forward.

On Linux and macOS the first instance holds an exclusive ``flock`` on a lock file named after
the data folder (and the user), in the per-user runtime folder; the kernel lets go of it when
the process ends, however it ends, so a killed instance never blocks the next start. Once its
start window is shown it also listens on a Unix socket of the same name (:meth:`listen`,
watched with a ``QSocketNotifier``): a later launch on the same folder finds the lock taken,
connects, says ``activate`` and exits — waiting a moment for the socket if the first is
between its lock and its socket. Python's :mod:`socket` costs ~5 ms to import and Qt's network
module more, so neither is loaded before the start window is shown; the lock needs only
:mod:`fcntl`. On Windows it is Qt's ``QLocalServer`` (a named pipe).

If the lock or the socket cannot be made (an unwritable runtime folder, a file system without
locks), Continuum still starts, without this protection; the conversations stay safe, each
request claims its conversation across processes by itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

__all__ = ["SingleInstance", "socket_name"]

log = logging.getLogger("ui")

#: Seconds a second launch waits for the first to accept its connection.
ASK_TIMEOUT = 0.5
#: Seconds a second launch waits for the first, which holds the lock, to make its socket.
ASK_WAIT = 3.0


def socket_name(data_dir: Path, user: str) -> str:
    """The socket's name for ``data_dir`` and ``user`` (a digest: paths may be long or odd).

    Two checksums from :mod:`zlib` (loaded with Qt already), not :mod:`hashlib`: loading
    OpenSSL for it cost ~3-4 ms of a cold start, and a name needs no cryptography."""
    path = str(data_dir).encode("utf-8", "surrogatepass")
    return f"continuum-{user}-{zlib.crc32(path):08x}{zlib.adler32(path):08x}"


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
        """Become the instance (``True``) or tell the running one to come forward (``False``;
        :attr:`answered` says whether it heard)."""
        return self._impl.claim()

    @property
    def answered(self) -> bool:
        """After a refused :meth:`claim`: whether the running instance took the request."""
        return self._impl.answered

    def listen(self) -> None:
        """Start hearing later launches (the instance has claimed the folder)."""
        self._impl.listen()

    def on_activate(self, callback: Callable[[], None]) -> None:
        """Listen, and call ``callback`` (on the Qt thread) each time a later launch asks."""
        self._impl.on_activate(callback)

    def close(self) -> None:
        """Stop listening (and remove the socket file)."""
        self._impl.close()


def _same_file(descriptor: int, path: str) -> bool:
    """Whether ``path`` still names the file open as ``descriptor``."""
    try:
        named = os.stat(path)
    except OSError:
        return False
    held = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _runtime_dir() -> Path:
    folder = os.environ.get("XDG_RUNTIME_DIR")  # per user, 0700 (Linux)
    if folder and os.path.isdir(folder):
        return Path(folder)
    return Path(os.environ.get("TMPDIR") or "/tmp")


class _UnixInstance:
    def __init__(self, name: str) -> None:
        self.path = str(_runtime_dir() / name)
        self.lock_path = self.path + ".lock"
        self.answered = False
        self._lock: int | None = None  # the lock file's descriptor, while the folder is ours
        self._server: socket.socket | None = None
        self._notifier: Any = None
        self._callbacks: list[Callable[[], None]] = []

    def claim(self) -> bool:
        """Take the lock, or ask its holder to come forward. Until :data:`ASK_WAIT` runs out
        both are tried again: the holder may not have made its socket yet (it does once its
        start window is shown), or may be ending and about to let go of the lock."""
        deadline = time.monotonic() + ASK_WAIT
        while True:
            if self._lock_or_none() is not False:
                return True  # ours, or no lock can be had here (unprotected)
            if self._ask():
                self.answered = True
                return False
            if time.monotonic() >= deadline:
                log.warning("Continuum runs on this folder but did not answer at %s", self.path)
                return False
            time.sleep(0.02)  # a rare path: a launch during another's first or last moments

    def _lock_or_none(self) -> bool | None:
        """True: the lock is ours; False: another instance holds it; None: no lock can be
        had here (an unwritable runtime folder, a file system without locks)."""
        import fcntl

        for _attempt in range(8):
            try:
                descriptor = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as err:
                log.warning("cannot make the single-instance lock %s: %s", self.lock_path, err)
                return None
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another instance holds it
                os.close(descriptor)
                return False
            except OSError as err:
                os.close(descriptor)
                log.warning("cannot lock %s: %s", self.lock_path, err)
                return None
            if _same_file(descriptor, self.lock_path):
                self._lock = descriptor
                return True
            # The instance that held it removed the file as it ended, after this opened it:
            # the lock is on a file nobody else will open. Take the one at the path now.
            os.close(descriptor)
        log.warning("the single-instance lock %s keeps being replaced", self.lock_path)
        return None

    def _ask(self) -> bool:
        """Tell the instance holding the lock to come forward (whether it heard)."""
        import socket

        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(ASK_TIMEOUT)
        try:
            client.connect(self.path)
            client.sendall(b"activate\n")
            return True
        except OSError:  # no file yet, refused (a file left by a killed one), timed out
            return False
        finally:
            client.close()

    def listen(self) -> None:
        if self._lock is None or self._server is not None:
            return  # not ours (or no lock could be made), or listening already
        import socket

        # A file here was left by a killed instance: the lock is ours, so nobody uses it.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_mask = os.umask(0o177)  # the file is the user's alone from the start
        try:
            server.bind(self.path)
        except OSError as err:
            server.close()
            # Unprotected, as without a lock: holding it would make every later launch on
            # this folder wait for an answer that cannot come and then refuse to start.
            log.warning("cannot make the single-instance socket %s: %s", self.path, err)
            os.close(self._lock)
            self._lock = None
            return
        finally:
            os.umask(old_mask)
        server.listen(8)
        server.setblocking(False)
        self._server = server

    def on_activate(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)
        self.listen()
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
        if self._lock is not None:
            # Removed while locked: a launch that opened it before sees, once it has the lock,
            # that the path no longer names its file, and starts over (claim).
            with contextlib.suppress(OSError):
                os.unlink(self.lock_path)
            os.close(self._lock)
            self._lock = None


class _QtInstance:  # pragma: no cover - Windows
    def __init__(self, name: str) -> None:
        from PySide6.QtNetwork import QLocalServer

        self.name = name
        self.answered = False
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
            self.answered = True
            return False
        QLocalServer.removeServer(self.name)
        return self.server.listen(self.name)

    def listen(self) -> None:
        """Listening began in :meth:`claim`."""

    def on_activate(self, callback: Callable[[], None]) -> None:
        def accept() -> None:
            while self.server.hasPendingConnections():
                connection = self.server.nextPendingConnection()
                connection.readyRead.connect(callback)
                connection.disconnected.connect(connection.deleteLater)

        self.server.newConnection.connect(accept)

    def close(self) -> None:
        self.server.close()
