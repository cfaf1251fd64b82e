"""Continuum's own temporary files in a workspace: their names, which are abandoned, cleanup.

A write puts its content in a temporary file ``.continuum-<pid>-<random>.tmp`` in the target's
folder and renames it over the target (:meth:`app.tools.sandbox.Sandbox.store`). Those names are
Continuum's own: ``list_directory`` never shows them and no tool accepts one as a path.

A writer killed mid-write leaves one behind; it is removed, when that folder is next listed or
written to, only if it is certainly abandoned: the pid in its name is not a live process, or it is
this process's own pid but no write of this process is using it (a pid reused after a crash). A
file whose pid belongs to another live process is kept, even if that pid was reused, because it
might be that process's write in progress. Names without a pid (from older versions) are removed
once they are an hour old. Where a pid cannot be probed safely (Windows) files with a pid are kept.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .sandbox import Dir

__all__ = ["in_use", "is_temporary_name", "new_name", "remove_stale", "temporary_is_stale"]

log = logging.getLogger(__name__)

_OLD_TEMPORARY_AGE = 3600.0

_TEMPORARY = re.compile(r"\.continuum-.*\.tmp", re.DOTALL)
_TEMPORARY_WITH_PID = re.compile(r"\.continuum-(\d+)-[0-9a-f]+\.tmp")
_active_lock = threading.Lock()
_active: set[str] = set()  # temporary names this process is writing right now


def is_temporary_name(name: str) -> bool:
    """Whether ``name`` is one of Continuum's temporary files (hidden and never a target)."""
    return _TEMPORARY.fullmatch(name) is not None


def new_name() -> str:
    """A fresh temporary file name carrying this process's pid."""
    return f".continuum-{os.getpid()}-{secrets.token_hex(6)}.tmp"


@contextlib.contextmanager
def in_use(name: str) -> Iterator[None]:
    """Mark the temporary file ``name`` as this process's write in progress while inside."""
    with _active_lock:
        _active.add(name)
    try:
        yield
    finally:
        with _active_lock:
            _active.discard(name)


def temporary_is_stale(
    name: str,
    *,
    age: float,
    own_pid: int,
    own_active: set[str] | frozenset[str],
    pid_alive: Callable[[int], bool],
) -> bool:
    """Whether the temporary file ``name`` (``age`` seconds old) is certainly abandoned.

    The rule of the module docstring: never true for a file a live writer may be using.
    """
    if not is_temporary_name(name):
        return False
    match = _TEMPORARY_WITH_PID.fullmatch(name)
    if match is None:
        return age > _OLD_TEMPORARY_AGE
    pid = int(match.group(1))
    if pid == own_pid:
        return name not in own_active
    return not pid_alive(pid)


def _pid_alive(pid: int) -> bool:
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or an absurd number): keep the file
    return True


def remove_stale(folder: Dir, names: list[str]) -> None:
    """Remove the abandoned temporary files among ``names`` in ``folder`` (see the docstring)."""
    with _active_lock:
        active = frozenset(_active)
    for name in names:
        path, dir_fd = folder.at(name)
        try:
            info = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                continue
            if temporary_is_stale(
                name,
                age=time.time() - info.st_mtime,
                own_pid=os.getpid(),
                own_active=active,
                pid_alive=_pid_alive,
            ):
                os.unlink(path, dir_fd=dir_fd)
                log.info("removed an abandoned temporary file %s", folder.path / name)
        except FileNotFoundError:
            continue
        except OSError as err:
            log.warning("could not remove the temporary file %s: %s", folder.path / name, err)
