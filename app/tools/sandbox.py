"""The walk that keeps workspace paths inside the workspace, and the atomic write through it.

:class:`Sandbox` turns a path the model passed into the folder that holds it (:class:`Found`),
refusing ``..``, NUL bytes, absolute paths outside the workspace and symlinks that lead out.

**The check and the use are the same object** (POSIX). A path is never checked as a string and
then handed to the OS again, because another process could swap a folder of it for a symlink in
between. Instead every component is opened relative to its parent's directory descriptor,
starting from the workspace folder, with ``O_NOFOLLOW | O_DIRECTORY``; a component that is a link
is read with ``readlink`` and its target is walked the same way (inside the workspace, at most 40
links), so the OS itself never follows a link. The file is then created (``O_CREAT | O_EXCL |
O_NOFOLLOW``), renamed (``src_dir_fd``/``dst_dir_fd``), read (``O_NOFOLLOW``) or listed
(``os.scandir(fd)``) through the descriptor of the folder that was walked; a name swapped for a
link after the walk is refused rather than followed. Where ``dir_fd`` is not supported (Windows)
the same walk runs over paths instead of descriptors: the checks are identical, but a swap between
a check and the use is not prevented there. (A process that can *move* a folder of the workspace
elsewhere while a tool holds it open can also move the file afterwards; that is out of reach.)

**Writes are atomic** (:meth:`Sandbox.store`): the content goes to a temporary file in the
target's folder (names and cleanup: :mod:`app.tools.tempfiles`), is flushed to disk and renamed
over the target, and the folder is flushed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from ..errors import WorkspaceError
from . import tempfiles

__all__ = ["Dir", "Found", "Sandbox"]  # and _Outside, _Missing for app.tools.workspace

_FD_WALK = (
    all(
        f in os.supports_dir_fd
        for f in (os.open, os.stat, os.mkdir, os.readlink, os.rename, os.unlink)
    )
    and os.scandir in os.supports_fd
    and hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_COMMON = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO to read it must not hang the tool
_MAX_LINKS = 40


class _Outside(WorkspaceError):
    """The path (or a link on it) leads out of the workspace."""


class _Missing(Exception):
    """A folder of the path does not exist (or is a file); each tool words its own message."""


@dataclass(frozen=True)
class Dir:
    """A folder that was walked: its descriptor (POSIX) and where it was found."""

    fd: int | None
    path: Path

    def at(self, name: str) -> tuple[str, int | None]:
        """Arguments for an ``os`` call on ``name`` in this folder: (path, dir_fd)."""
        return (name, self.fd) if self.fd is not None else (str(self.path / name), None)


@dataclass(frozen=True)
class Found:
    folder: Dir  # the folder holding the target (or the target itself when name is None)
    name: str | None  # the last component, never a link when the walk ended; None: a folder
    shown: str  # the target relative to the workspace, for results

    def lstat(self) -> os.stat_result | None:
        assert self.name is not None
        path, dir_fd = self.folder.at(self.name)
        try:
            return os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None


class Sandbox:
    """Paths confined to ``root`` (an existing, resolved folder); see the module docstring.

    Descriptors are walked where the platform supports ``dir_fd`` (``_FD_WALK``, read when the
    sandbox is made), paths otherwise.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fd_walk = _FD_WALK

    def outside(self, path: str) -> WorkspaceError:
        return _Outside(
            f"'{path}' is outside the workspace ({self.root}); only files inside it can be used."
        )

    def _inside_parts(self, absolute: str) -> list[str] | None:
        """The components of an absolute path below the workspace root, or None if outside."""
        parts, root = PurePath(absolute).parts, self.root.parts
        if parts[: len(root)] == root:
            return list(parts[len(root) :])
        try:  # the workspace reached through another spelling (a link above it)
            resolved = Path(absolute).resolve(strict=False)
        except (OSError, RuntimeError):
            return None
        if resolved == self.root or resolved.is_relative_to(self.root):
            return list(resolved.relative_to(self.root).parts)
        return None

    def _parts(self, path: str) -> list[str]:
        if not isinstance(path, str) or "\x00" in path:
            raise WorkspaceError("The path must be text without NUL characters.")
        candidate = PurePath(path) if path else PurePath(".")
        if ".." in candidate.parts:
            raise WorkspaceError(
                f"'{path}' uses '..'; paths must stay inside the workspace. "
                "Use a path relative to the workspace folder."
            )
        if candidate.is_absolute():
            inside = self._inside_parts(path)
            if inside is None:
                raise self.outside(path)
            return inside
        return list(candidate.parts)

    @contextlib.contextmanager
    def walking(self) -> Iterator[Callable[..., Found]]:
        """Yield ``walk(path, make_parents=False)``; every descriptor it opens closes on exit."""
        opened: list[int] = []

        def open_dir(parent: Dir | None, name: str) -> Dir:
            path = self.root if parent is None else parent.path / name
            if not self.fd_walk:
                if not stat.S_ISDIR(os.stat(path, follow_symlinks=False).st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(path))
                return Dir(None, path)
            flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _COMMON
            if parent is None:
                fd = os.open(self.root, flags)
            else:
                fd = os.open(name, flags, dir_fd=parent.fd)
            opened.append(fd)
            return Dir(fd, path)

        def walk(path: str, make_parents: bool = False) -> Found:
            pending = deque(self._parts(path))
            try:
                dirs = [open_dir(None, "")]
            except OSError as err:
                raise WorkspaceError(
                    f"The workspace folder {self.root} cannot be opened ({err.strerror}); "
                    "choose another folder in the Conversation menu."
                ) from None
            names: list[str] = []
            links = 0
            while pending:
                name = pending.popleft()
                if name in ("", "."):
                    continue
                if name == "..":  # only ever from a link's target
                    if not names:
                        raise self.outside(path)
                    names.pop()
                    dirs.pop()
                    continue
                here = dirs[-1]
                entry, dir_fd = here.at(name)
                try:
                    info: os.stat_result | None = os.stat(
                        entry, dir_fd=dir_fd, follow_symlinks=False
                    )
                except FileNotFoundError:
                    info = None
                if info is not None and stat.S_ISLNK(info.st_mode):
                    links += 1
                    if links > _MAX_LINKS:
                        raise WorkspaceError(
                            f"'{path}' goes through more than {_MAX_LINKS} symbolic links; "
                            "use the path the links lead to."
                        )
                    try:
                        target = os.readlink(entry, dir_fd=dir_fd)
                    except OSError:  # changed since the stat: look at it again
                        pending.appendleft(name)
                        continue
                    if os.path.isabs(target):
                        inside = self._inside_parts(target)
                        if inside is None:
                            raise self.outside(path)
                        del dirs[1:]
                        names.clear()
                        pending.extendleft(reversed(inside))
                    else:
                        pending.extendleft(reversed(PurePath(target).parts))
                    continue
                if not pending:  # the last component: the tool opens it itself, O_NOFOLLOW
                    return Found(here, name, "/".join((*names, name)))
                if info is None:
                    if not make_parents:
                        raise _Missing(name)
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(entry, 0o777, dir_fd=dir_fd)
                elif not stat.S_ISDIR(info.st_mode):
                    raise _Missing(name)
                try:
                    dirs.append(open_dir(here, name))
                except OSError as err:
                    if err.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                        raise
                    links += 1  # swapped since the stat: look again (bounded like links)
                    if links > _MAX_LINKS:
                        raise WorkspaceError(
                            f"'{path}' kept changing while it was being opened; try again."
                        ) from None
                    pending.appendleft(name)
                    continue
                names.append(name)
            return Found(dirs[-1], None, "/".join(names) or ".")

        try:
            yield walk
        finally:
            for fd in opened:
                os.close(fd)

    def scan(self, folder: Dir) -> list[os.DirEntry[str]]:
        if folder.fd is not None:
            with os.scandir(folder.fd) as entries:
                return list(entries)
        with os.scandir(folder.path) as entries:
            return list(entries)

    def open_folder(self, found: Found) -> Dir:
        """Open the folder ``found`` names (never through a link); the caller closes its fd."""
        assert found.name is not None
        path, dir_fd = found.folder.at(found.name)
        if found.folder.fd is None:
            if not stat.S_ISDIR(os.stat(path, follow_symlinks=False).st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", path)
            return Dir(None, found.folder.path / found.name)
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _COMMON, dir_fd=dir_fd)
        return Dir(fd, found.folder.path / found.name)

    def open_to_read(self, found: Found) -> int:
        """A read-only descriptor of the file ``found`` names (never through a link, no wait)."""
        assert found.name is not None
        name, dir_fd = found.folder.at(found.name)
        return os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _COMMON, dir_fd=dir_fd)

    def store(self, path: str, found: Found, data: bytes) -> bool:
        """Write ``data`` to a temporary file beside the target and rename it into place."""
        assert found.name is not None
        folder = found.folder
        before = found.lstat()
        if before is not None and stat.S_ISDIR(before.st_mode):
            raise WorkspaceError(f"'{path}' is a folder; give a file path.")
        with contextlib.suppress(OSError):
            tempfiles.remove_stale(
                folder, [e.name for e in self.scan(folder) if tempfiles.is_temporary_name(e.name)]
            )
        temporary = tempfiles.new_name()
        keep_mode = before is not None and stat.S_ISREG(before.st_mode)
        # A new file gets the usual mode (umask applies); a replaced one keeps its own, and the
        # new content is never readable more widely than the old while it is being written.
        mode = 0o600 if keep_mode else 0o666
        tmp_path, dir_fd = folder.at(temporary)
        with tempfiles.in_use(temporary):
            fd = os.open(
                tmp_path,
                os.O_CREAT | os.O_EXCL | os.O_WRONLY | _NOFOLLOW | _COMMON,
                mode,
                dir_fd=dir_fd,
            )
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    if keep_mode and before is not None and hasattr(os, "fchmod"):
                        os.fchmod(out.fileno(), stat.S_IMODE(before.st_mode))
                    os.fsync(out.fileno())
                target, _ = folder.at(found.name)
                try:
                    os.replace(tmp_path, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except IsADirectoryError:
                    raise WorkspaceError(f"'{path}' is a folder; give a file path.") from None
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp_path, dir_fd=dir_fd)
                raise
        if folder.fd is not None:
            with contextlib.suppress(OSError):  # some file systems cannot flush a folder
                os.fsync(folder.fd)
        return before is not None
