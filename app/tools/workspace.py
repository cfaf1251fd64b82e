"""Built-in file tools confined to a workspace folder the person picked.

``Workspace(root).tools()`` gives ``list_directory``, ``read_file``, ``write_file`` and
``edit_file`` (an exact old-text/new-text replacement). Every path the model passes is refused
unless it stays inside the workspace:

* no ``..`` component, no NUL byte; an absolute path only if it lies inside the workspace;
* a symlink (to a file or a folder) is followed only while it leads to a place inside the
  workspace, so no link can lead out of it;
* reads and writes have size limits, and binary files are refused with a clear message.

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

**Writes are atomic**: the content goes to a temporary file ``.continuum-<pid>-<random>.tmp`` in the
target's folder, is flushed to disk and renamed over the target, and the folder is flushed. Those
names are Continuum's own: ``list_directory`` never shows them and no tool accepts one as a path.
A writer killed mid-write leaves one behind; it is removed, when that folder is next listed or
written to, only if it is certainly abandoned: the pid in its name is not a live process, or it is
this process's own pid but no write of this process is using it (a pid reused after a crash). A
file whose pid belongs to another live process is kept, even if that pid was reused, because it
might be that process's write in progress. Names without a pid (from older versions) are removed
once they are an hour old. Where a pid cannot be probed safely (Windows) files with a pid are kept.

**Text that is not Unicode**: a lone UTF-16 surrogate (half of an emoji, from a broken escape) has
no UTF-8 form. ``write_file``/``edit_file`` store it as U+FFFD and say in their result how many were
replaced, so the file is valid UTF-8 that ``read_file`` reads back; a proper surrogate pair is
joined into its character.

Writes are marked ``side_effects=True``, so the app asks before they run. A refusal is raised as
:class:`WorkspaceError`, which the runtime turns into a failed tool result the model can read.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from ..errors import WorkspaceError
from .functions import FunctionTool, as_tool

__all__ = ["Workspace", "WorkspaceError", "is_temporary_name", "temporary_is_stale"]

log = logging.getLogger(__name__)

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
_OLD_TEMPORARY_AGE = 3600.0

_TEMPORARY = re.compile(r"\.continuum-.*\.tmp", re.DOTALL)
_TEMPORARY_WITH_PID = re.compile(r"\.continuum-(\d+)-[0-9a-f]+\.tmp")
_active_lock = threading.Lock()
_active: set[str] = set()  # temporary names this process is writing right now


class _Outside(WorkspaceError):
    """The path (or a link on it) leads out of the workspace."""


class _Missing(Exception):
    """A folder of the path does not exist (or is a file); each tool words its own message."""


def is_temporary_name(name: str) -> bool:
    """Whether ``name`` is one of Continuum's temporary files (hidden and never a target)."""
    return _TEMPORARY.fullmatch(name) is not None


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


def to_unicode_text(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates replaced by U+FFFD (pairs joined), and how many there were."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return fixed, fixed.count("\ufffd") - text.count("\ufffd")
    return text, 0


def _replacement_note(count: int) -> str:
    if not count:
        return ""
    what = "character that is" if count == 1 else "characters that are"
    return (
        f" {count} {what} not valid Unicode (a lone UTF-16 surrogate) became U+FFFD "
        "(\ufffd); write the intended characters if they matter."
    )


@dataclass(frozen=True)
class _Dir:
    """A folder that was walked: its descriptor (POSIX) and where it was found."""

    fd: int | None
    path: Path

    def at(self, name: str) -> tuple[str, int | None]:
        """Arguments for an ``os`` call on ``name`` in this folder: (path, dir_fd)."""
        return (name, self.fd) if self.fd is not None else (str(self.path / name), None)


@dataclass(frozen=True)
class _Found:
    folder: _Dir  # the folder holding the target (or the target itself when name is None)
    name: str | None  # the last component, never a link when the walk ended; None: a folder
    shown: str  # the target relative to the workspace, for results

    def lstat(self) -> os.stat_result | None:
        assert self.name is not None
        path, dir_fd = self.folder.at(self.name)
        try:
            return os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None


class Workspace:
    """File tools confined to ``root`` (see the module docstring)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_read_bytes: int = 1_000_000,
        max_write_bytes: int = 1_000_000,
        max_entries: int = 500,
    ) -> None:
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise WorkspaceError(f"The workspace {self.root} is not a folder.")
        self.max_read_bytes = max_read_bytes
        self.max_write_bytes = max_write_bytes
        self.max_entries = max_entries
        self._fd_walk = _FD_WALK

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # --- the walk -------------------------------------------------------------------------------

    def _outside(self, path: str) -> WorkspaceError:
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
                raise self._outside(path)
            return inside
        return list(candidate.parts)

    @contextlib.contextmanager
    def _walking(self) -> Iterator[Callable[..., _Found]]:
        """Yield ``walk(path, make_parents=False)``; every descriptor it opens closes on exit."""
        opened: list[int] = []

        def open_dir(parent: _Dir | None, name: str) -> _Dir:
            path = self.root if parent is None else parent.path / name
            if not self._fd_walk:
                if not stat.S_ISDIR(os.stat(path, follow_symlinks=False).st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(path))
                return _Dir(None, path)
            flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _COMMON
            if parent is None:
                fd = os.open(self.root, flags)
            else:
                fd = os.open(name, flags, dir_fd=parent.fd)
            opened.append(fd)
            return _Dir(fd, path)

        def walk(path: str, make_parents: bool = False) -> _Found:
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
                        raise self._outside(path)
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
                            raise self._outside(path)
                        del dirs[1:]
                        names.clear()
                        pending.extendleft(reversed(inside))
                    else:
                        pending.extendleft(reversed(PurePath(target).parts))
                    continue
                if not pending:  # the last component: the tool opens it itself, O_NOFOLLOW
                    return _Found(here, name, "/".join((*names, name)))
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
            return _Found(dirs[-1], None, "/".join(names) or ".")

        try:
            yield walk
        finally:
            for fd in opened:
                os.close(fd)

    def _refuse_temporary(self, path: str, found: _Found) -> None:
        if found.name is not None and is_temporary_name(found.name):
            raise WorkspaceError(
                f"'{path}' is a name Continuum uses for its own temporary files while writing; "
                "choose another file name."
            )

    def _remove_stale(self, folder: _Dir, names: list[str]) -> None:
        """Remove the abandoned temporary files among ``names`` (rule: module docstring)."""
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

    def _scan(self, folder: _Dir) -> list[os.DirEntry[str]]:
        if folder.fd is not None:
            with os.scandir(folder.fd) as entries:
                return list(entries)
        with os.scandir(folder.path) as entries:
            return list(entries)

    def _describe_link(self, shown: str, name: str) -> tuple[bool, str]:
        """(is a folder, listing line) for a link in the folder ``shown``."""
        with self._walking() as walk:
            try:
                found = walk(name if shown == "." else f"{shown}/{name}")
            except _Outside:
                return False, f"{name} -> (link outside the workspace)"
            except (WorkspaceError, _Missing, OSError):  # missing, a loop, or a file on the way
                return False, f"{name} -> (broken link)"
            info = found.lstat() if found.name is not None else None
            if found.name is None or (info is not None and stat.S_ISDIR(info.st_mode)):
                return True, f"{name}/"
            if info is None:
                return False, f"{name} -> (broken link)"
            return False, f"{name} ({info.st_size} bytes)"

    # --- the tools ----------------------------------------------------------------------------

    def list_directory(self, path: str = ".") -> str:
        """List a folder of the workspace: one entry per line, folders end with '/'.

        Args:
            path: folder relative to the workspace (default: the workspace itself)
        """
        not_a_folder = WorkspaceError(f"'{path}' is not a folder in the workspace.")
        try:
            with self._walking() as walk:
                try:
                    found = walk(path)
                except _Missing:
                    raise not_a_folder from None
                if found.name is None:
                    return self._listing(found.folder, found.shown)
                try:
                    folder = self._open_folder(found)
                except OSError as err:
                    if err.errno in (errno.ENOTDIR, errno.ENOENT, errno.ELOOP):
                        raise not_a_folder from None
                    raise
                try:
                    return self._listing(folder, found.shown)
                finally:
                    if folder.fd is not None:
                        os.close(folder.fd)
        except OSError as err:
            raise self._failure("list", path, err) from None

    def _open_folder(self, found: _Found) -> _Dir:
        assert found.name is not None
        path, dir_fd = found.folder.at(found.name)
        if found.folder.fd is None:
            if not stat.S_ISDIR(os.stat(path, follow_symlinks=False).st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", path)
            return _Dir(None, found.folder.path / found.name)
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _COMMON, dir_fd=dir_fd)
        return _Dir(fd, found.folder.path / found.name)

    def _listing(self, folder: _Dir, shown: str) -> str:
        entries = self._scan(folder)
        temporary = [e.name for e in entries if is_temporary_name(e.name)]
        if temporary:
            self._remove_stale(folder, temporary)
        described: list[tuple[bool, str, str]] = []
        for entry in entries:
            if is_temporary_name(entry.name):
                continue
            try:
                if entry.is_symlink():
                    is_dir, line = self._describe_link(shown, entry.name)
                    if line.endswith("(link outside the workspace)"):
                        with contextlib.suppress(OSError):
                            is_dir = entry.is_dir()  # sort order only; never followed further
                elif entry.is_dir(follow_symlinks=False):
                    is_dir, line = True, f"{entry.name}/"
                else:
                    size = entry.stat(follow_symlinks=False).st_size
                    is_dir, line = False, f"{entry.name} ({size} bytes)"
            except FileNotFoundError:  # removed while we listed
                continue
            described.append((not is_dir, entry.name.lower(), line))
        described.sort()
        lines = [line for _, _, line in described[: self.max_entries]]
        if len(described) > self.max_entries:
            lines.append(f"... and {len(described) - self.max_entries} more entries")
        return "\n".join(lines) if lines else "(empty folder)"

    def read_file(self, path: str) -> str:
        """Read a text file of the workspace.

        Args:
            path: file relative to the workspace
        """
        try:
            data = self._read_bytes(path)
        except OSError as err:
            raise self._failure("read", path, err) from None
        if b"\x00" in data[:8192]:
            raise WorkspaceError(f"'{path}' is a binary file; only text files can be read.")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise WorkspaceError(
                f"'{path}' is not UTF-8 text (it may be binary); only text files can be read."
            ) from None

    def _read_bytes(self, path: str) -> bytes:
        not_a_file = WorkspaceError(f"'{path}' is not a file in the workspace.")
        with self._walking() as walk:
            try:
                found = walk(path)
            except _Missing:
                raise not_a_file from None
            if found.name is None:
                raise not_a_file
            self._refuse_temporary(path, found)
            name, dir_fd = found.folder.at(found.name)
            try:
                fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _COMMON, dir_fd=dir_fd)
            except OSError as err:
                if err.errno == errno.ELOOP:
                    raise WorkspaceError(
                        f"'{path}' was replaced by a link while it was being opened; try again."
                    ) from None
                if err.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
                    raise not_a_file from None
                raise
            with os.fdopen(fd, "rb") as file:
                info = os.fstat(file.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise not_a_file
                if info.st_size > self.max_read_bytes:
                    raise WorkspaceError(
                        f"'{path}' is {info.st_size} bytes, more than the "
                        f"{self.max_read_bytes}-byte limit for reading; ask for a smaller file."
                    )
                data = file.read(self.max_read_bytes + 1)
        if len(data) > self.max_read_bytes:
            raise WorkspaceError(
                f"'{path}' grew past the {self.max_read_bytes}-byte limit for reading while it "
                "was being read; ask for a smaller file."
            )
        return data

    def write_file(self, path: str, content: str) -> str:
        """Create or replace a text file in the workspace.

        Args:
            path: file relative to the workspace
            content: the whole new text of the file
        """
        text, replaced = to_unicode_text(content)
        return self._write(path, text) + _replacement_note(replaced)

    def _write(self, path: str, text: str) -> str:
        data = text.encode("utf-8")
        if len(data) > self.max_write_bytes:
            raise WorkspaceError(
                f"The content is {len(data)} bytes, more than the {self.max_write_bytes}-byte "
                "limit for writing."
            )
        try:
            with self._walking() as walk:
                try:
                    found = walk(path, make_parents=True)
                except _Missing as missing:
                    raise WorkspaceError(
                        f"'{path}' cannot be created: '{missing}' in it is a file, not a folder."
                    ) from None
                if found.name is None:
                    raise WorkspaceError(f"'{path}' is a folder; give a file path.")
                self._refuse_temporary(path, found)
                existed = self._store(path, found, data)
        except OSError as err:
            raise self._failure("write", path, err) from None
        verb = "Replaced" if existed else "Created"
        return f"{verb} {found.shown} ({len(data)} bytes)."

    def _store(self, path: str, found: _Found, data: bytes) -> bool:
        """Write ``data`` to a temporary file beside the target and rename it into place."""
        assert found.name is not None
        folder = found.folder
        before = found.lstat()
        if before is not None and stat.S_ISDIR(before.st_mode):
            raise WorkspaceError(f"'{path}' is a folder; give a file path.")
        with contextlib.suppress(OSError):
            self._remove_stale(
                folder, [e.name for e in self._scan(folder) if is_temporary_name(e.name)]
            )
        temporary = f".continuum-{os.getpid()}-{secrets.token_hex(6)}.tmp"
        keep_mode = before is not None and stat.S_ISREG(before.st_mode)
        # A new file gets the usual mode (umask applies); a replaced one keeps its own, and the
        # new content is never readable more widely than the old while it is being written.
        mode = 0o600 if keep_mode else 0o666
        tmp_path, dir_fd = folder.at(temporary)
        with _active_lock:
            _active.add(temporary)
        try:
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
        finally:
            with _active_lock:
                _active.discard(temporary)
        if folder.fd is not None:
            with contextlib.suppress(OSError):  # some file systems cannot flush a folder
                os.fsync(folder.fd)
        return before is not None

    def _failure(self, verb: str, path: str, err: OSError) -> WorkspaceError:
        log.warning("workspace %s of %r failed: %s", verb, path, err)
        unchanged = " Nothing was changed." if verb == "write" else ""
        return WorkspaceError(
            f"Could not {verb} '{path}': {err.strerror or err}.{unchanged} Check the folder's "
            "permissions and free space, or use another path."
        )

    def edit_file(self, path: str, old_text: str, new_text: str) -> str:
        """Replace one exact occurrence of old_text with new_text in a workspace file.

        Args:
            path: file relative to the workspace
            old_text: text that occurs exactly once in the file
            new_text: what replaces it
        """
        old_text, _ = to_unicode_text(old_text)  # as write_file stored it, so edits still match
        new_text, replaced = to_unicode_text(new_text)
        text = self.read_file(path)
        count = text.count(old_text) if old_text else 0
        if count == 0:
            raise WorkspaceError(
                f"old_text was not found in '{path}'; read the file and copy the exact text."
            )
        if count > 1:
            raise WorkspaceError(
                f"old_text occurs {count} times in '{path}'; include more context so it "
                "matches exactly once."
            )
        self._write(path, text.replace(old_text, new_text, 1))
        return f"Edited {path}: replaced 1 occurrence." + _replacement_note(replaced)

    def tools(self) -> list[FunctionTool]:
        return [
            as_tool(self.list_directory),
            as_tool(self.read_file),
            as_tool(self.write_file, side_effects=True),
            as_tool(self.edit_file, side_effects=True),
        ]
