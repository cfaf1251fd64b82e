"""ChatGPT's data export as the ``.zip`` it is downloaded as: its ``conversations.json`` and the
images the conversations point at (blocking reads; run them in a thread).

The archive holds ``conversations.json`` and one file per uploaded image, named after the id in
the message's ``asset_pointer`` (``file-service://file-AbC…`` → ``file-AbC…-photo.png``;
``sediment://file_00…`` → ``file_00…-photo.png``). :class:`ArchiveAssets` finds an image's
file by that id and reads it only when asked, within a budget for the whole import, so a large
archive is never read into memory at once. Sizes are checked on what is read, not on what the
archive's headers claim.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import PurePosixPath
from typing import Final

from .importing import MAX_IMPORT_BYTES, ImportFormatError

__all__ = ["IMAGE_BUDGET_BYTES", "ArchiveAssets", "asset_id", "read_archive"]

#: The most image bytes one import reads from an archive (the rest become notes).
IMAGE_BUDGET_BYTES: Final = 512 * 2**20
#: The largest single image read (as for an image the person attaches).
_IMAGE_MAX: Final = 20 * 2**20

_ID: Final = re.compile(r"(file[-_][A-Za-z0-9]+)")


def asset_id(pointer_or_name: str) -> str | None:
    """The file id in an ``asset_pointer`` or an archive member's name (``None``: none)."""
    tail = pointer_or_name.rsplit("://", 1)[-1]
    found = _ID.match(PurePosixPath(tail).name)
    return found.group(1) if found else None


class ArchiveAssets:
    """The images of an open archive, by the id in their ``asset_pointer``."""

    def __init__(self, archive: zipfile.ZipFile, budget: int = IMAGE_BUDGET_BYTES) -> None:
        self._archive = archive
        self._budget = budget
        self._by_id: dict[str, zipfile.ZipInfo] = {}
        for info in archive.infolist():
            key = asset_id(info.filename)
            if key is not None and not info.is_dir():
                self._by_id.setdefault(key, info)

    def __call__(self, pointer: str) -> tuple[str, bytes] | str:
        """``(file name, bytes)`` of the image ``pointer`` names, or why not (a short reason)."""
        key = asset_id(pointer)
        info = self._by_id.get(key) if key else None
        if info is None:
            return "image (not in the export)"
        if info.file_size > _IMAGE_MAX:
            return "image (too large to import)"
        if info.file_size > self._budget:
            return "image (over the import's image budget)"
        try:
            with self._archive.open(info) as member:
                data = member.read(_IMAGE_MAX + 1)
        except (OSError, zipfile.BadZipFile, ValueError, RuntimeError):
            return "image (damaged in the export)"
        if len(data) > _IMAGE_MAX:
            return "image (too large to import)"
        self._budget -= len(data)
        name = PurePosixPath(info.filename).name
        shown = name[len(key or "") :].lstrip("-_")  # the name it was uploaded with
        return shown if "." in shown else name, data


def read_archive(archive: zipfile.ZipFile) -> bytes:
    """The archive's ``conversations.json`` (at its top or in one folder), at most
    :data:`~app.importing.MAX_IMPORT_BYTES`; :class:`ImportFormatError` when there is none."""
    candidates = [
        i
        for i in archive.infolist()
        if PurePosixPath(i.filename).name == "conversations.json" and i.filename.count("/") <= 1
    ]
    if not candidates:
        raise ImportFormatError(
            "The archive has no conversations.json (ChatGPT's export has one at its top)."
        )
    info = min(candidates, key=lambda i: i.filename.count("/"))
    try:
        with archive.open(info) as member:
            data = member.read(MAX_IMPORT_BYTES + 1)
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError) as err:
        reason = str(err).rstrip(".")
        raise ImportFormatError(
            f"The archive's conversations.json cannot be read: {reason}."
        ) from err
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportFormatError(
            f"The archive's conversations.json is larger than {MAX_IMPORT_BYTES // 2**20} MB; "
            "Continuum imports files up to that size."
        )
    return data
