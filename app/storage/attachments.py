"""Attachments in the database: each one's bytes stored once, by the SHA-256 of its bytes.

Messages refer to images and files by digest (:mod:`app.parts`): a person's message in its
parts, a tool result in its ``images``. The bytes live in the
``attachments`` table (schema 9). :func:`save_attachments` runs inside the transaction that
saves the messages referring to them, so a crash leaves both or neither: a message never points
at a missing blob. It also refuses a part whose bytes are neither at hand nor stored, and bytes
whose digest does not match. :func:`fill_messages` / :func:`fill_records` give loaded images
their bytes back (one query for all of them; files carry their text in the message itself).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping, Sequence

import aiosqlite

from ..messages import Message, ToolMessage, UserMessage
from ..parts import AttachmentError, FilePart, ImagePart, Part, digest_of
from .base import StoredMessage
from .database import Database

__all__ = [
    "attachment_bytes",
    "fill_message",
    "fill_messages",
    "fill_records",
    "has_attachments",
    "read_attachments",
    "save_attachments",
]

#: SQLite's default limit on bound parameters is 999 in old builds; stay well below it.
_CHUNK = 500


def _attachments(message: Message) -> tuple[ImagePart | FilePart, ...]:
    if isinstance(message, ToolMessage):
        return message.images
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return ()
    return tuple(p for p in message.content if isinstance(p, ImagePart | FilePart))


def has_attachments(message: Message) -> bool:
    """True when ``message`` refers to stored bytes (an image or a file)."""
    return bool(_attachments(message))


async def save_attachments(conn: aiosqlite.Connection, messages: Iterable[Message]) -> None:
    """Store the bytes of every attachment of ``messages`` not stored yet (inside the caller's
    transaction). A part without bytes must be stored already, else :class:`AttachmentError`."""
    now = time.time()
    missing: dict[str, ImagePart | FilePart] = {}
    for message in messages:
        for part in _attachments(message):
            if part.data is None:
                missing[part.digest] = part
                continue
            if digest_of(part.data) != part.digest:
                raise AttachmentError(
                    f"The bytes of {part.name or 'an attachment'!r} do not match its digest; "
                    "it was not saved. Attach it again."
                )
            await conn.execute(
                "INSERT OR IGNORE INTO attachments(digest, media_type, size, data, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (part.digest, part.media_type, len(part.data), part.data, now),
            )
    if missing:
        stored = await _stored_digests(conn, list(missing))
        for digest, part in missing.items():
            if digest not in stored:
                raise AttachmentError(
                    f"{part.name or 'An attachment'!r} has no bytes to save and is not stored; "
                    "the message was not saved. Attach it again."
                )


async def _stored_digests(conn: aiosqlite.Connection, digests: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(digests), _CHUNK):
        chunk = digests[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = await conn.execute_fetchall(
            f"SELECT digest FROM attachments WHERE digest IN ({marks})", tuple(chunk)
        )
        found.update(str(r[0]) for r in rows)
    return found


async def attachment_bytes(conn: aiosqlite.Connection, digests: Sequence[str]) -> dict[str, bytes]:
    """The stored bytes of ``digests`` (those that are stored)."""
    found: dict[str, bytes] = {}
    for start in range(0, len(digests), _CHUNK):
        chunk = digests[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = await conn.execute_fetchall(
            f"SELECT digest, data FROM attachments WHERE digest IN ({marks})", tuple(chunk)
        )
        found.update((str(r[0]), bytes(r[1])) for r in rows)
    return found


def _wanted(messages: Iterable[Message]) -> list[str]:
    # Plain text messages (nearly all of a long load) are passed over by two type tests.
    return sorted(
        {
            p.digest
            for m in messages
            if type(m.content) is tuple or type(m) is ToolMessage
            for p in _attachments(m)
            if isinstance(p, ImagePart) and p.data is None
        }
    )


async def read_attachments(
    database: Database, digests: Sequence[str]
) -> dict[str, tuple[str, bytes]]:
    """``{digest: (media_type, bytes)}`` of the stored ones of ``digests`` (for an export)."""

    async def op(conn: aiosqlite.Connection) -> dict[str, tuple[str, bytes]]:
        found: dict[str, tuple[str, bytes]] = {}
        for start in range(0, len(digests), _CHUNK):
            chunk = list(digests[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            rows = await conn.execute_fetchall(
                f"SELECT digest, media_type, data FROM attachments WHERE digest IN ({marks})",
                tuple(chunk),
            )
            found.update((str(r[0]), (str(r[1]), bytes(r[2]))) for r in rows)
        return found

    return await database.read(op)


def fill_message(message: Message, blobs: Mapping[str, bytes]) -> Message:
    """``message`` with the bytes of its images and files found in ``blobs`` (by digest), e.g.
    an import's blobs before :func:`save_attachments` stores them with the message."""
    if isinstance(message, ToolMessage):
        if not any(p.data is None and p.digest in blobs for p in message.images):
            return message
        images = tuple(
            dataclasses.replace(p, data=blobs[p.digest])
            if p.data is None and p.digest in blobs
            else p
            for p in message.images
        )
        return dataclasses.replace(message, images=images)
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return message
    parts: list[Part] = []
    changed = False
    for part in message.content:
        if isinstance(part, ImagePart | FilePart) and part.data is None and part.digest in blobs:
            part = dataclasses.replace(part, data=blobs[part.digest])
            changed = True
        parts.append(part)
    return UserMessage(tuple(parts)) if changed else message


async def fill_messages(conn: aiosqlite.Connection, messages: list[Message]) -> list[Message]:
    """``messages`` with their images' bytes (an image not stored keeps ``data=None``)."""
    wanted = _wanted(messages)
    if not wanted:
        return messages
    blobs = await attachment_bytes(conn, wanted)
    return [fill_message(m, blobs) for m in messages]


async def fill_records(
    conn: aiosqlite.Connection, records: list[StoredMessage]
) -> list[StoredMessage]:
    """:func:`fill_messages` for stored records."""
    wanted = _wanted(r.message for r in records)
    if not wanted:
        return records
    blobs = await attachment_bytes(conn, wanted)
    return [dataclasses.replace(r, message=fill_message(r.message, blobs)) for r in records]
