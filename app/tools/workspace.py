"""Built-in file tools confined to a workspace folder the person picked.

``Workspace(root).tools()`` gives ``list_directory``, ``read_file``, ``write_file`` and
``edit_file`` (an exact old-text/new-text replacement). Every path the model passes is refused
unless it stays inside the workspace:

* no ``..`` component, no NUL byte; an absolute path only if it lies inside the workspace;
* a symlink (to a file or a folder) is followed only while it leads to a place inside the
  workspace, so no link can lead out of it;
* reads and writes have size limits, and binary files are refused with a clear message.

This module owns the tools and their messages. The walk that checks and uses a path as one
object (descriptors, ``O_NOFOLLOW``, the path fallback where ``dir_fd`` is missing) and the atomic
write live in :mod:`app.tools.sandbox`; Continuum's temporary files (never listed, never a target,
removed once certainly abandoned) in :mod:`app.tools.tempfiles`.

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
import stat
from pathlib import Path

from ..errors import WorkspaceError
from . import tempfiles
from .functions import FunctionTool, as_tool
from .sandbox import Dir, Found, Sandbox, _Missing, _Outside
from .tempfiles import is_temporary_name, temporary_is_stale

__all__ = ["Workspace", "WorkspaceError", "is_temporary_name", "temporary_is_stale"]

log = logging.getLogger(__name__)


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
        self._sandbox = Sandbox(self.root)

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def _refuse_temporary(self, path: str, found: Found) -> None:
        if found.name is not None and is_temporary_name(found.name):
            raise WorkspaceError(
                f"'{path}' is a name Continuum uses for its own temporary files while writing; "
                "choose another file name."
            )

    def _describe_link(self, shown: str, name: str) -> tuple[bool, str]:
        """(is a folder, listing line) for a link in the folder ``shown``."""
        with self._sandbox.walking() as walk:
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
            with self._sandbox.walking() as walk:
                try:
                    found = walk(path)
                except _Missing:
                    raise not_a_folder from None
                if found.name is None:
                    return self._listing(found.folder, found.shown)
                try:
                    folder = self._sandbox.open_folder(found)
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

    def _listing(self, folder: Dir, shown: str) -> str:
        entries = self._sandbox.scan(folder)
        temporary = [e.name for e in entries if is_temporary_name(e.name)]
        if temporary:
            tempfiles.remove_stale(folder, temporary)
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
        with self._sandbox.walking() as walk:
            try:
                found = walk(path)
            except _Missing:
                raise not_a_file from None
            if found.name is None:
                raise not_a_file
            self._refuse_temporary(path, found)
            try:
                fd = self._sandbox.open_to_read(found)
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
            with self._sandbox.walking() as walk:
                try:
                    found = walk(path, make_parents=True)
                except _Missing as missing:
                    raise WorkspaceError(
                        f"'{path}' cannot be created: '{missing}' in it is a file, not a folder."
                    ) from None
                if found.name is None:
                    raise WorkspaceError(f"'{path}' is a folder; give a file path.")
                self._refuse_temporary(path, found)
                existed = self._sandbox.store(path, found, data)
        except OSError as err:
            raise self._failure("write", path, err) from None
        verb = "Replaced" if existed else "Created"
        return f"{verb} {found.shown} ({len(data)} bytes)."

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
