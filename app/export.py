"""Export a conversation as Markdown (to read or share) or JSON (to keep or move).

Markdown is the branch on screen. The JSON form (version 2) is the whole tree: every message of
every branch in the core's stable message schema with its sequence number, parent, request id
and time, the current leaf, the title, and the attachments the messages refer to (base64, once
each), so :mod:`app.importing` reads it back without loss. Version 1 (one branch, no parents)
is still read there. Neither form contains settings or keys.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .messages import (
    AssistantMessage,
    InternalMessage,
    StopReason,
    ToolMessage,
    UserMessage,
    effective_stop_reason,
    message_to_dict,
)
from .parts import FilePart, ImagePart, TextPart
from .storage.base import SessionInfo, StoredMessage

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "attachment_digests",
    "export_json",
    "export_markdown",
    "fence",
]

EXPORT_FORMAT = "continuum-conversation"
#: 1: one branch, oldest first; 2: the whole tree (``parent_seq``, ``leaf``, attachments).
EXPORT_VERSION = 2

_STOP_NOTES = {
    StopReason.INTERRUPTED: "the response was cut off here",
    StopReason.MAX_OUTPUT: "the response reached the output limit here",
    StopReason.REFUSAL: "the model refused",
    StopReason.CONTEXT_FULL: "the context window was full",
    StopReason.PAUSED: "the provider paused the response here",
}


def fence(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run inside ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def export_markdown(
    info: SessionInfo | None, records: Sequence[StoredMessage], *, other_versions: int = 0
) -> str:
    """The branch ``records`` (oldest first) as Markdown; ``other_versions``: how many messages
    of the conversation are versions not on this branch (counted, not shown)."""
    title = (info.title if info and info.title else None) or "Conversation"
    lines = [f"# {title}", ""]
    if info is not None:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created_at))
        lines += [f"*Exported from Continuum — started {created}, {len(records)} messages.*", ""]
    if other_versions:
        versions = "version" if other_versions == 1 else "versions"
        lines += [
            f"*This is the branch shown in Continuum; the conversation has {other_versions} "
            f"more {versions} of messages, all in the JSON export.*",
            "",
        ]
    for record in records:
        message = record.message
        if isinstance(message, UserMessage):
            lines += ["## You", "", *_user_lines(message.content)]
        elif isinstance(message, InternalMessage):
            lines += [f"> *Note to the model: {message.content}*", ""]
        elif isinstance(message, AssistantMessage):
            who = f"Assistant ({message.model})" if message.model else "Assistant"
            lines += [f"## {who}", ""]
            if message.content:
                lines += [message.content, ""]
            for call in message.tool_calls:
                arguments = json.dumps(call.arguments_dict(), indent=2, ensure_ascii=False)
                lines += [
                    f"**Tool call** `{call.name}` (`{call.id}`)",
                    "",
                    fence(arguments, "json"),
                    "",
                ]
            stop = effective_stop_reason(message)
            note = _STOP_NOTES.get(stop) if isinstance(stop, StopReason) else f"stopped: {stop}"
            if note:
                lines += [f"*({note})*", ""]
        elif isinstance(message, ToolMessage):
            state = "result" if message.success else "failed result"
            lines += [
                f"**Tool {state}** `{message.name}` (`{message.tool_call_id}`)",
                "",
                fence(message.content),
                "",
            ]
            if message.images:
                count = len(message.images)
                noun = "image" if count == 1 else f"{count} images"
                lines += [f"*[The tool's {noun}: in the JSON export]*", ""]
    return "\n".join(lines).rstrip() + "\n"


def _user_lines(content: str | tuple[TextPart | ImagePart | FilePart, ...]) -> list[str]:
    """A person's message: its text, and each attachment named — an image by its name (its
    bytes are in the JSON export), a file with its text in a fence."""
    if isinstance(content, str):
        return [content, ""]
    lines: list[str] = []
    for part in content:
        if isinstance(part, TextPart):
            lines += [part.text, ""]
        elif isinstance(part, FilePart):
            lines += [f"**File** `{part.name or 'attachment'}`", "", fence(part.text), ""]
        else:
            name = part.name or "image"
            lines += [f"*[Image: {name} ({part.media_type}), in the JSON export]*", ""]
    return lines


def attachment_digests(records: Sequence[StoredMessage]) -> list[str]:
    """The digests of every image and file the messages refer to (tools' images too), each
    once, sorted."""
    found = {
        part.digest
        for r in records
        if isinstance(r.message, UserMessage) and not isinstance(r.message.content, str)
        for part in r.message.content
        if isinstance(part, ImagePart | FilePart)
    }
    found.update(
        image.digest
        for r in records
        if isinstance(r.message, ToolMessage)
        for image in r.message.images
    )
    return sorted(found)


def export_json(
    info: SessionInfo | None,
    records: Sequence[StoredMessage],
    *,
    leaf: int | None | Literal["last"] = "last",
    attachments: Mapping[str, tuple[str, bytes]] | None = None,
) -> str:
    """Version 2: ``records`` is the whole tree (``StoredMessage.parent_seq`` set), ``leaf``
    the current branch's newest message (by default the last record), ``attachments`` the
    blobs the messages refer to, by digest: ``(media_type, bytes)``."""
    session: dict[str, Any] | None = None
    if info is not None:
        session = {
            "id": info.id,
            "title": info.title,
            "created_at": info.created_at,
            "updated_at": info.updated_at,
        }
    if leaf == "last":
        leaf = records[-1].seq if records else None
    document: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "v": EXPORT_VERSION,
        "exported_at": time.time(),
        "session": session,
        "leaf": leaf,
        "messages": [
            {
                "seq": r.seq,
                "parent_seq": r.parent_seq,
                "created_at": r.created_at,
                "request_id": r.request_id,
                "message": message_to_dict(r.message),
            }
            for r in records
        ],
    }
    if attachments:
        document["attachments"] = {
            digest: {
                "media_type": media_type,
                "size": len(data),
                "data": base64.b64encode(data).decode("ascii"),
            }
            for digest, (media_type, data) in sorted(attachments.items())
        }
    return json.dumps(document, indent=2, ensure_ascii=True)
