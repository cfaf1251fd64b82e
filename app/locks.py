"""Cross-process claims on conversations: one Continuum process at a time works on one.

A claim is an OS file lock (``flock``) on a file in a ``locks/`` folder beside the database,
named after the database file and the conversation, so every process that opens the same
database agrees on it: the desktop app, ``continuum-chat`` and any program on the core's
:class:`~app.storage.SQLiteSessionExtension`. The kernel releases the lock when its holder dies —
``kill -9`` included — and a stale lock file never blocks anyone.

An ``flock`` belongs to an *open file description*: the same process opening the file twice
would conflict with itself. So every lock file is opened once per process, in
:data:`CLAIMS` (a process-wide registry), which counts who uses it here:

* **holds** — a :class:`SessionLocks` owner keeps a conversation (the desktop keeps the one open
  in its window). Holds of two owners exclude each other, in this process as across processes.
* **claims** — one request's claim (:meth:`ClaimRegistry.claim`). Claims never exclude holds or
  other claims of the same process: concurrency inside one process is the agent's busy check
  (:class:`~app.errors.SessionBusyError`); the claim keeps *other* processes out.

The file is unlocked and closed when its last hold and claim in the process end.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

__all__ = ["CLAIMS", "LOCKS_FOLDER", "ClaimRegistry", "SessionLocks", "claim_file"]

LOCKS_FOLDER = "locks"
DEFAULT_DATABASE_NAME = "continuum.sqlite"  # the desktop app's database file name


def _digest(database_name: str, session_id: str) -> str:
    text = f"{database_name}\0{session_id}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()[:32]


def claim_file(database: str | os.PathLike[str], session_id: str) -> Path:
    """The lock file of ``session_id`` in the database at ``database``.

    The database path is resolved first, so two spellings of one file (relative, through a
    symlink) give the same lock file.
    """
    real = Path(os.path.realpath(os.fspath(database)))
    return real.parent / LOCKS_FOLDER / f"{_digest(real.name, session_id)}.lock"


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


@dataclass(slots=True)
class _Open:
    handle: IO[bytes]
    holds: set[object] = field(default_factory=set)  # the owners holding it
    claims: int = 0

    @property
    def unused(self) -> bool:
        return not self.holds and not self.claims


class ClaimRegistry:
    """Every lock file this process has locked, opened once each (see the module docstring)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._open: dict[str, _Open] = {}

    @staticmethod
    def _key(path: Path) -> str:
        return os.path.realpath(path)

    def _lock_file(self, key: str) -> _Open | None:
        """The open, locked file at ``key``; ``None`` if another process holds it.

        Raises :class:`OSError` when the lock file cannot be created (read-only folder, ...).
        """
        entry = self._open.get(key)
        if entry is not None:
            return entry
        Path(key).parent.mkdir(parents=True, exist_ok=True)
        handle = open(key, "a+b")  # held open while locked
        try:
            if not _try_lock(handle):
                handle.close()
                return None
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()).encode())  # for a person looking at the folder
            handle.flush()
        except BaseException:
            handle.close()
            raise
        entry = self._open[key] = _Open(handle)
        return entry

    def _drop_if_unused(self, key: str) -> None:
        entry = self._open.get(key)
        if entry is not None and entry.unused:
            del self._open[key]
            entry.handle.close()  # closing the descriptor releases the lock

    def hold(self, path: Path, owner: object) -> bool:
        """Hold ``path`` for ``owner``; ``False`` if another owner or another process holds it."""
        key = self._key(path)
        with self._mutex:
            entry = self._open.get(key)
            if entry is not None and any(o is not owner for o in entry.holds):
                return False
            entry = self._lock_file(key)
            if entry is None:
                return False
            entry.holds.add(owner)
            return True

    def unhold(self, path: Path, owner: object) -> None:
        key = self._key(path)
        with self._mutex:
            entry = self._open.get(key)
            if entry is not None and owner in entry.holds:
                entry.holds.discard(owner)
                self._drop_if_unused(key)

    def claim(self, path: Path) -> bool:
        """Claim ``path`` for one request; ``False`` if another process holds it."""
        key = self._key(path)
        with self._mutex:
            entry = self._lock_file(key)
            if entry is None:
                return False
            entry.claims += 1
            return True

    def unclaim(self, path: Path) -> None:
        key = self._key(path)
        with self._mutex:
            entry = self._open.get(key)
            if entry is None or entry.claims <= 0:
                return
            entry.claims -= 1
            self._drop_if_unused(key)

    def users_here(self, path: Path) -> tuple[frozenset[int], int]:
        """``(ids of the owners holding path, number of claims)`` in this process."""
        with self._mutex:
            entry = self._open.get(self._key(path))
            if entry is None:
                return frozenset(), 0
            return frozenset(id(o) for o in entry.holds), entry.claims

    def locked_by_another_process(self, path: Path) -> bool:
        """Whether another live process holds ``path`` (probes without keeping it)."""
        key = self._key(path)
        with self._mutex:
            if key in self._open or not os.path.exists(key):
                return False
            entry = self._lock_file(key)
            if entry is None:
                return True
            self._drop_if_unused(key)
            return False


#: The registry of this process.
CLAIMS = ClaimRegistry()


class SessionLocks:
    """One owner's holds on conversations of the database ``database_name`` whose lock folder
    is ``folder`` (use :meth:`for_database`). Re-acquiring a held name is a no-op."""

    def __init__(
        self,
        folder: Path,
        *,
        database_name: str = DEFAULT_DATABASE_NAME,
        registry: ClaimRegistry | None = None,
    ) -> None:
        self.folder = folder
        self.database_name = database_name
        self._registry = registry or CLAIMS
        self._held: set[str] = set()

    @classmethod
    def for_database(cls, database: str | os.PathLike[str]) -> SessionLocks:
        """Holds on the conversations of the database at ``database``: the same lock files as
        the request claims of :class:`~app.storage.SQLiteSessionExtension` on it."""
        real = Path(os.path.realpath(os.fspath(database)))
        return cls(real.parent / LOCKS_FOLDER, database_name=real.name)

    def _path(self, name: str) -> Path:
        return self.folder / f"{_digest(self.database_name, name)}.lock"

    def acquire(self, name: str) -> bool:
        """Take the lock if free (or already ours); ``False`` if someone else holds it."""
        if name in self._held:
            return True
        if not self._registry.hold(self._path(name), self):
            return False
        self._held.add(name)
        return True

    def held(self, name: str) -> bool:
        return name in self._held

    def is_locked_elsewhere(self, name: str) -> bool:
        """Whether anyone but this owner holds ``name``: another process, another owner here,
        or a request claim here (probes without keeping the lock)."""
        if name in self._held:
            return False
        path = self._path(name)
        owners, claims = self._registry.users_here(path)
        if owners or claims:
            return True
        return self._registry.locked_by_another_process(path)

    def release(self, name: str) -> None:
        if name in self._held:
            self._held.discard(name)
            self._registry.unhold(self._path(name), self)

    def release_all(self) -> None:
        for name in list(self._held):
            self.release(name)
