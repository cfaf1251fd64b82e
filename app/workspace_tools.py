"""Built-in file tools confined to a workspace folder the person picked.

``Workspace(root).tools()`` gives ``list_directory``, ``read_file``, ``write_file`` and
``edit_file`` (an exact old-text/new-text replacement). Every path the model passes is checked
before anything is touched:

* no ``..`` component, no NUL byte;
* an absolute path only if it lies inside the workspace;
* the path is resolved with symlinks followed and must still lie inside the workspace, so a
  symlink (to a file or a folder) cannot lead out of it;
* reads and writes have size limits, and binary files are refused with a clear message.

Writes are atomic (a temporary file renamed into place) and marked ``side_effects=True``, so the
app asks before they run. A refusal is raised as :class:`WorkspaceError`, which the runtime turns
into a failed tool result the model can read.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .tools import FunctionTool, as_tool

__all__ = ["Workspace", "WorkspaceError"]


class WorkspaceError(ValueError):
    """A file operation was refused; the message says why and what to do instead."""


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

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(self, path: str) -> Path:
        """The real location of ``path`` inside the workspace, or :class:`WorkspaceError`."""
        if not isinstance(path, str) or "\x00" in path:
            raise WorkspaceError("The path must be text without NUL characters.")
        candidate = Path(path) if path else Path(".")
        if ".." in candidate.parts:
            raise WorkspaceError(
                f"'{path}' uses '..'; paths must stay inside the workspace. "
                "Use a path relative to the workspace folder."
            )
        full = candidate if candidate.is_absolute() else self.root / candidate
        resolved = full.resolve(strict=False)  # follows every symlink that exists
        if resolved != self.root and not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"'{path}' is outside the workspace ({self.root}); only files inside it can "
                "be used."
            )
        return resolved

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    # --- the tools ----------------------------------------------------------------------------

    def list_directory(self, path: str = ".") -> str:
        """List a folder of the workspace: one entry per line, folders end with '/'.

        Args:
            path: folder relative to the workspace (default: the workspace itself)
        """
        folder = self.resolve(path)
        if not folder.is_dir():
            raise WorkspaceError(f"'{path}' is not a folder in the workspace.")
        lines = []
        entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
        for entry in entries[: self.max_entries]:
            try:
                inside = self.resolve(str(entry))
            except WorkspaceError:
                lines.append(f"{entry.name} -> (link outside the workspace)")
                continue
            if inside.is_dir():
                lines.append(f"{entry.name}/")
            else:
                lines.append(f"{entry.name} ({inside.stat().st_size} bytes)")
        if len(entries) > self.max_entries:
            lines.append(f"... and {len(entries) - self.max_entries} more entries")
        return "\n".join(lines) if lines else "(empty folder)"

    def read_file(self, path: str) -> str:
        """Read a text file of the workspace.

        Args:
            path: file relative to the workspace
        """
        file = self.resolve(path)
        if not file.is_file():
            raise WorkspaceError(f"'{path}' is not a file in the workspace.")
        size = file.stat().st_size
        if size > self.max_read_bytes:
            raise WorkspaceError(
                f"'{path}' is {size} bytes, more than the {self.max_read_bytes}-byte limit "
                "for reading; ask for a smaller file."
            )
        data = file.read_bytes()
        if b"\x00" in data[:8192]:
            raise WorkspaceError(f"'{path}' is a binary file; only text files can be read.")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise WorkspaceError(
                f"'{path}' is not UTF-8 text (it may be binary); only text files can be read."
            ) from None

    def write_file(self, path: str, content: str) -> str:
        """Create or replace a text file in the workspace.

        Args:
            path: file relative to the workspace
            content: the whole new text of the file
        """
        data = content.encode("utf-8", "surrogatepass")
        if len(data) > self.max_write_bytes:
            raise WorkspaceError(
                f"The content is {len(data)} bytes, more than the {self.max_write_bytes}-byte "
                "limit for writing."
            )
        file = self.resolve(path)
        if file == self.root or file.is_dir():
            raise WorkspaceError(f"'{path}' is a folder; give a file path.")
        file.parent.mkdir(parents=True, exist_ok=True)
        existed = file.exists()
        handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=".continuum-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, file)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        verb = "Replaced" if existed else "Created"
        return f"{verb} {self._relative(file)} ({len(data)} bytes)."

    def edit_file(self, path: str, old_text: str, new_text: str) -> str:
        """Replace one exact occurrence of old_text with new_text in a workspace file.

        Args:
            path: file relative to the workspace
            old_text: text that occurs exactly once in the file
            new_text: what replaces it
        """
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
        self.write_file(path, text.replace(old_text, new_text, 1))
        return f"Edited {path}: replaced 1 occurrence."

    def tools(self) -> list[FunctionTool]:
        return [
            as_tool(self.list_directory),
            as_tool(self.read_file),
            as_tool(self.write_file, side_effects=True),
            as_tool(self.edit_file, side_effects=True),
        ]
