"""Cross-process locks: one Continuum process at a time may run a request on a conversation.

The core's busy check is per process; the app adds this one so a second running copy cannot
resume a conversation the first is running. The lock is an OS file lock (``flock``), so the
kernel releases it when its holder dies — ``kill -9`` included — and a stale lock file never
blocks anyone.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import IO

__all__ = ["SessionLocks"]

def _try_lock(handle: IO[bytes]) -> bool:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    return True


class SessionLocks:
    """Named locks under ``folder`` (one file per conversation)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._held: dict[str, IO[bytes]] = {}

    def _path(self, name: str) -> Path:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.folder / f"{digest}.lock"

    def acquire(self, name: str) -> bool:
        """Take the lock if free (or already ours); ``False`` if another process holds it."""
        if name in self._held:
            return True
        self.folder.mkdir(parents=True, exist_ok=True)
        handle = open(self._path(name), "a+b")  # held open while locked
        if not _try_lock(handle):
            handle.close()
            return False
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()).encode())
        handle.flush()
        self._held[name] = handle
        return True

    def held(self, name: str) -> bool:
        return name in self._held

    def is_locked_elsewhere(self, name: str) -> bool:
        """Whether another live process holds ``name`` (probes without keeping the lock)."""
        if name in self._held:
            return False
        path = self._path(name)
        if not path.exists():
            return False
        if not self.acquire(name):
            return True
        self.release(name)
        return False

    def release(self, name: str) -> None:
        handle = self._held.pop(name, None)
        if handle is not None:
            handle.close()  # closing the descriptor releases the lock

    def release_all(self) -> None:
        for name in list(self._held):
            self.release(name)
