"""File → Import: read a file (:mod:`app.importing`), save each conversation it holds as a new
one, and say in words what was imported and what was not (:class:`ImportReport`).

Each conversation is saved in one transaction (the store's ``import_tree``): it is there whole
or not at all. One that cannot be read or saved is named with its reason; the others are still
imported. A conversation keeps its id from the file (Continuum's, ChatGPT's) when the database
has none by that id, else it gets a new one; every message keeps its time, request id, parent
and order (Continuum's seqs stay the same), and the current branch stays current.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import StorageError
from ..importing import (
    MAX_IMPORT_BYTES,
    ConversationProblem,
    ImportedConversation,
    ImportFormatError,
    ParsedFile,
    parse_import,
)
from ..importing_archive import ArchiveAssets, read_archive
from ..storage.attachments import fill_message
from ..storage.sqlite import SQLiteSessionStore

__all__ = ["ImportFormatError", "ImportReport", "ImportedSession", "import_file", "read_import"]

log = logging.getLogger(__name__)

#: A source id Continuum keeps as its own: what its own ids look like (safe in a file name).
_KEEPABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """A conversation that was imported: its new id, title and number of messages."""

    session_id: str
    title: str | None
    messages: int


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did: the file's kind, what was imported, what was not and why."""

    path: Path
    kind: str
    imported: tuple[ImportedSession, ...]
    skipped: tuple[ConversationProblem, ...] = ()
    #: Parts of imported conversations left out (reason → how many), e.g. system messages.
    left_out: Counter[str] = field(default_factory=Counter)

    @property
    def summary(self) -> str:
        """One sentence: how many conversations were imported and how many were not."""
        done = _count(len(self.imported), "conversation")
        text = f"Imported {done} from {self.path.name} ({self.kind})."
        if self.skipped:
            text += f" {_count(len(self.skipped), 'conversation')} could not be imported."
        return text

    @property
    def details(self) -> str:
        """Why each one that was not imported was not, and what was left out (plain text)."""
        lines = [f"• {p.name}: {p.reason}" for p in self.skipped[:20]]
        if len(self.skipped) > 20:
            lines.append(f"• … and {len(self.skipped) - 20} more.")
        if self.left_out:
            parts = ", ".join(f"{n} × {reason}" for reason, n in self.left_out.most_common())
            lines.append(f"Left out of the imported conversations: {parts}.")
        return "\n".join(lines)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def read_import(path: Path) -> ParsedFile:
    """Read and parse ``path`` (blocking: run it in a thread); :class:`ImportFormatError` for
    a file that cannot be imported at all, an unreadable file included. A ``.zip`` is ChatGPT's
    export archive: its conversations.json, with the person's images."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return parse_import(read_archive(archive), ArchiveAssets(archive))
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise ImportFormatError(
                f"{path.name} is {size / 2**20:.0f} MB; Continuum imports files up to "
                f"{MAX_IMPORT_BYTES / 2**20:.0f} MB."
            )
        data = path.read_bytes()
    except zipfile.BadZipFile as err:
        reason = str(err).rstrip(".")
        raise ImportFormatError(f"{path.name} is a damaged zip archive ({reason}).") from err
    except OSError as err:
        raise ImportFormatError(f"{path} cannot be read: {err.strerror or err}.") from err
    return parse_import(data)


async def import_file(store: SQLiteSessionStore, path: Path) -> ImportReport:
    """Import every conversation of ``path`` into ``store`` (see the module docstring).

    Raises :class:`ImportFormatError` when the file cannot be imported at all. A storage
    failure (a full disk) stops the import: what was saved before stays, and the rest is
    reported as not imported.
    """
    parsed = await asyncio.to_thread(read_import, path)
    imported: list[ImportedSession] = []
    skipped = list(parsed.problems)
    left_out: Counter[str] = Counter()
    stopped: str | None = None
    for conversation in parsed.conversations:
        name = conversation.title or "Untitled conversation"
        if stopped is not None:
            skipped.append(ConversationProblem(name, stopped))
            continue
        try:
            done = await _save(store, conversation)
        except StorageError as err:
            stopped = f"not imported after a storage error ({err})"
            skipped.append(ConversationProblem(name, str(err)))
            continue
        except ValueError as err:  # the store refused the tree (or an attachment): name it
            log.warning("import of %r refused by the store: %s", name, err)
            skipped.append(ConversationProblem(name, str(err)))
            continue
        imported.append(done)
        left_out.update(conversation.left_out)
    return ImportReport(path, parsed.kind, tuple(imported), tuple(skipped), left_out)


async def _save(store: SQLiteSessionStore, conversation: ImportedConversation) -> ImportedSession:
    """One conversation, in one transaction with the bytes of its attachments."""
    session_id = await _new_id(store, conversation.source_id)
    rows, leaf = conversation.numbered()
    if conversation.attachments:
        blobs = {digest: a.data for digest, a in conversation.attachments.items()}
        rows = [(up, rid, fill_message(m, blobs), at) for up, rid, m, at in rows]
    await store.import_tree(
        session_id,
        conversation.title,
        (conversation.created_at, conversation.updated_at),
        rows,
        leaf,
    )
    return ImportedSession(session_id, conversation.title, len(rows))


async def _new_id(store: SQLiteSessionStore, source_id: str | None) -> str:
    """The source's id when it looks like Continuum's own and is free, else a new one."""
    if source_id and _KEEPABLE_ID.fullmatch(source_id):
        if await store.get_session(source_id) is None:
            return source_id
    return uuid.uuid4().hex
