"""SQLite's environment errors in words a person can act on (:func:`translate_sqlite_error`).

Disk full, read-only, busy, I/O errors and damage become :class:`~app.errors.StorageError`
subclasses saying what happened and what to do; any other SQLite error is a bug and is left
as it is (``None``).
"""

from __future__ import annotations

import sqlite3

from ..errors import (
    StorageBusyError,
    StorageCorruptError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
)

__all__ = ["translate_sqlite_error", "translated"]


def translate_sqlite_error(err: BaseException, path: str) -> StorageError | None:
    """The person-facing error for an SQLite environment failure, or ``None`` for a bug."""
    if not isinstance(err, sqlite3.Error):
        return None
    name = getattr(err, "sqlite_errorname", "") or ""
    text = str(err).lower()
    where = f"the conversation database {path}"
    if name.startswith("SQLITE_FULL") or "database or disk is full" in text:
        return StorageFullError(
            f"The disk holding {where} is full, so the last change was not saved. "
            "Free some disk space and try again; everything saved before is intact."
        )
    if name.startswith("SQLITE_READONLY") or "readonly database" in text:
        return StorageReadOnlyError(
            f"Cannot write to {where}: the file or its folder is read-only. "
            "Check its permissions (or choose another data folder) and try again."
        )
    # Only SQLite's own damage words: "malformed JSON" from a JSON function is not damage.
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or (
        "database disk image is malformed" in text or "file is not a database" in text
    ):
        return StorageCorruptError(
            f"{where[0].upper()}{where[1:]} is damaged or is not a Continuum database. "
            "It was left untouched: move it aside (or restore a backup) and start again."
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in text:
        return StorageBusyError(
            f"{where[0].upper()}{where[1:]} stayed locked by another program. "
            "Close other copies of Continuum using this data folder and try again."
        )
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        return StorageReadOnlyError(
            f"Cannot open {where}. Check that its folder exists and can be written."
        )
    if name.startswith("SQLITE_IOERR") or "disk i/o error" in text:
        return StorageError(
            f"A disk error occurred while using {where}, so the last change may not be saved. "
            "Check the disk, then try again; everything saved before is intact."
        )
    return None


def translated(err: sqlite3.Error, path: str) -> Exception:
    """The translated error for ``err``, or ``err`` itself when it is a bug."""
    return translate_sqlite_error(err, path) or err
