"""Reading conversations to import: a file's bytes in, conversation trees out (no writing).

Two kinds of file are read: Continuum's own JSON export (:mod:`app.export`, both versions: 1
holds one branch, 2 the whole tree) and ChatGPT's data export ``conversations.json``
(:mod:`app.importing_chatgpt`; the ``.zip`` it comes in: :mod:`app.importing_archive`). Each
becomes :class:`ImportedConversation` trees whose messages come parents first, ready for the
store's ``import_tree`` (:mod:`app.services.importing` writes them).

A file that cannot be read at all (not JSON, too big, neither shape) raises
:class:`ImportFormatError` saying what is wrong. In a file of several conversations, one that
is wrong (a cycle, a parent that is not there, a message that cannot be read) is left out with
its reason in :attr:`ParsedFile.problems`; the others are still read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import json
import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from .errors import ContinuumError, MessageFormatError
from .messages import Message, message_from_dict

__all__ = [
    "CONTINUUM_FORMAT",
    "MAX_IMPORT_BYTES",
    "Assets",
    "Attachment",
    "ConversationProblem",
    "ImportFormatError",
    "ImportedConversation",
    "ImportedMessage",
    "ParsedFile",
    "order_tree",
    "parse_continuum",
    "parse_import",
]

#: The ``format`` of Continuum's own JSON export.
CONTINUUM_FORMAT: Final = "continuum-conversation"
#: The export versions this Continuum reads (see :mod:`app.export`).
CONTINUUM_VERSIONS: Final = (1, 2)
#: Larger files are refused before they are read (reading one takes many times its size).
MAX_IMPORT_BYTES: Final = 128 * 2**20

K = TypeVar("K", bound=Hashable)

#: An image's bytes by its ``asset_pointer``: ``(file name, bytes)``, or why not (a reason).
Assets = Callable[[str], "tuple[str, bytes] | str"]


class ImportFormatError(ContinuumError, ValueError):
    """A file, or one conversation in it, cannot be imported; the message says why."""


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One message of an imported tree: ``key`` names it in its source, ``parent`` the key of
    the message it follows (``None``: a first message)."""

    key: str
    parent: str | None
    message: Message
    created_at: float
    request_id: str


@dataclass(frozen=True, slots=True)
class Attachment:
    """An attachment's bytes as found in an export (its digest checked)."""

    media_type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """One conversation to save: its messages parents first, and its current leaf."""

    title: str | None
    created_at: float
    updated_at: float
    messages: tuple[ImportedMessage, ...]
    #: The key of the current branch's newest message (``None``: no message).
    leaf: str | None
    #: The conversation's id in its source (Continuum keeps it when it is free).
    source_id: str | None = None
    attachments: Mapping[str, Attachment] = field(default_factory=dict)
    #: What was left out of the source and why (reason → how many), e.g. system messages.
    left_out: Counter[str] = field(default_factory=Counter)

    def numbered(self) -> tuple[list[tuple[int | None, str, Message, float]], int | None]:
        """The rows for the store's ``import_tree`` (parents as the new seqs) and the leaf."""
        seqs = {m.key: seq for seq, m in enumerate(self.messages, start=1)}
        rows = [
            (None if m.parent is None else seqs[m.parent], m.request_id, m.message, m.created_at)
            for m in self.messages
        ]
        return rows, None if self.leaf is None else seqs[self.leaf]


@dataclass(frozen=True, slots=True)
class ConversationProblem:
    """A conversation of the file that is not imported, and why (person-facing)."""

    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """What a file holds: its kind ("Continuum export", "ChatGPT export"), the conversations
    that can be imported, and the ones that cannot."""

    kind: str
    conversations: tuple[ImportedConversation, ...]
    problems: tuple[ConversationProblem, ...] = ()


def parse_import(data: bytes, assets: Assets | None = None) -> ParsedFile:
    """Read a file's bytes (see the module docstring); :class:`ImportFormatError` when the
    file as a whole cannot be imported. ``assets``: the images of ChatGPT's export archive
    (:mod:`app.importing_archive`), when the archive is imported."""
    from .importing_chatgpt import parse_chatgpt  # it uses this module's types

    if len(data) > MAX_IMPORT_BYTES:
        raise ImportFormatError(
            f"The file is {_megabytes(len(data))}; Continuum imports files up to "
            f"{_megabytes(MAX_IMPORT_BYTES)}."
        )
    try:
        document = json.loads(data)
    except UnicodeDecodeError as err:
        raise ImportFormatError(f"The file is not UTF-8 text (byte {err.start}).") from err
    except json.JSONDecodeError as err:
        raise ImportFormatError(
            f"The file is not JSON (line {err.lineno}, column {err.colno}: {err.msg})."
        ) from err
    except RecursionError as err:
        raise ImportFormatError("The file's JSON is nested too deeply to read.") from err
    if isinstance(document, Mapping) and document.get("format") == CONTINUUM_FORMAT:
        conversation = parse_continuum(document)
        return ParsedFile(f"Continuum export (version {document.get('v')})", (conversation,))
    if isinstance(document, Mapping) and "mapping" in document:
        document = [document]  # one ChatGPT conversation on its own
    if isinstance(document, list) and all(
        isinstance(c, Mapping) and "mapping" in c for c in document
    ):
        conversations, problems = parse_chatgpt(document, assets)
        return ParsedFile("ChatGPT export", tuple(conversations), tuple(problems))
    raise ImportFormatError(
        "The file is JSON but neither a Continuum export nor ChatGPT's conversations.json "
        f"({_shape(document)})."
    )


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.0f} MB"


def _shape(document: Any) -> str:
    if isinstance(document, Mapping):
        keys = ", ".join(repr(k) for k in list(document)[:5])
        return f"an object with {keys}" if keys else "an empty object"
    if isinstance(document, list):
        return f"a list of {len(document)} items without a 'mapping'" if document else "[]"
    return f"a JSON {type(document).__name__}"


# --- the tree's order --------------------------------------------------------------------------


def order_tree(
    parents: Mapping[K, K | None],
    sort_key: Callable[[K], Any],
    *,
    name: Callable[[K], str] = str,
) -> list[K]:
    """Every key of ``parents``, each after its parent; among those whose parent is placed,
    the smallest ``sort_key`` first (a heap: chronological, as Continuum saves them).

    A parent that is not a key, or a cycle, is an :class:`ImportFormatError` naming it.
    """
    children: dict[K | None, list[K]] = {}
    for key, parent in parents.items():
        if parent is not None and parent not in parents:
            raise ImportFormatError(
                f"message {name(key)} follows {name(parent)}, which is not in the conversation"
            )
        children.setdefault(parent, []).append(key)
    ready = [(sort_key(k), n, k) for n, k in enumerate(children.get(None, []))]
    heapq.heapify(ready)
    order: list[K] = []
    count = len(ready)
    while ready:
        _, _, key = heapq.heappop(ready)
        order.append(key)
        for child in children.get(key, []):
            heapq.heappush(ready, (sort_key(child), count, child))
            count += 1
    if len(order) < len(parents):
        placed = set(order)
        stuck = next(k for k in parents if k not in placed)
        raise ImportFormatError(
            f"the messages loop: {name(stuck)} is among its own ancestors (a cycle)"
        )
    return order


# --- Continuum's own export --------------------------------------------------------------------


def parse_continuum(document: Mapping[str, Any]) -> ImportedConversation:
    """A Continuum export (version 1: one branch, each message after the one before; version
    2: the tree, with each message's ``parent_seq`` and the ``leaf``)."""
    version = document.get("v")
    if version not in CONTINUUM_VERSIONS:
        raise ImportFormatError(
            f"This Continuum export is version {version!r}; this Continuum reads versions "
            f"{', '.join(map(str, CONTINUUM_VERSIONS))}. Update Continuum to import it."
        )
    session = document.get("session")
    if session is not None and not isinstance(session, Mapping):
        raise ImportFormatError("The export's 'session' is not an object.")
    session = session or {}
    raw_messages = document.get("messages")
    if not isinstance(raw_messages, list):
        raise ImportFormatError("The export has no 'messages' list.")
    records: dict[int, tuple[int | None, Mapping[str, Any]]] = {}
    previous: int | None = None
    for index, raw in enumerate(raw_messages, start=1):
        if not isinstance(raw, Mapping):
            raise ImportFormatError(f"Message {index} of the export is not an object.")
        seq = _int(raw.get("seq"), f"message {index}'s seq")
        if seq in records:
            raise ImportFormatError(f"Two messages of the export have seq {seq}.")
        if version == 1:
            parent = previous
        else:
            up = raw.get("parent_seq")
            parent = None if up is None else _int(up, f"message {seq}'s parent_seq")
        records[seq] = (parent, raw)
        previous = seq
    order = order_tree({s: p for s, (p, _raw) in records.items()}, lambda s: s)
    messages = tuple(_continuum_message(seq, *records[seq]) for seq in order)
    leaf = _continuum_leaf(document, version, records, order)
    times = [m.created_at for m in messages]
    created = _time(session.get("created_at"), min(times, default=0.0))
    title = session.get("title")
    source_id = session.get("id")
    return ImportedConversation(
        title=title if isinstance(title, str) else None,
        created_at=created,
        updated_at=_time(session.get("updated_at"), max(times, default=created)),
        messages=messages,
        leaf=None if leaf is None else str(leaf),
        source_id=source_id if isinstance(source_id, str) else None,
        attachments=_attachments(document.get("attachments")),
    )


def _continuum_message(seq: int, parent: int | None, raw: Mapping[str, Any]) -> ImportedMessage:
    try:
        message = message_from_dict(raw.get("message"))  # type: ignore[arg-type]
    except MessageFormatError as err:
        raise ImportFormatError(f"Message {seq} of the export cannot be read: {err}.") from err
    request_id = raw.get("request_id")
    return ImportedMessage(
        key=str(seq),
        parent=None if parent is None else str(parent),
        message=message,
        created_at=_time(raw.get("created_at"), 0.0),
        request_id=request_id if isinstance(request_id, str) else "imported",
    )


def _continuum_leaf(
    document: Mapping[str, Any],
    version: int,
    records: Mapping[int, object],
    order: Sequence[int],
) -> int | None:
    """Version 2 names its leaf; version 1 is one branch, its leaf the last message."""
    if version == 1 or "leaf" not in document:
        return order[-1] if order else None
    leaf = document.get("leaf")
    if leaf is None:
        return None
    seq = _int(leaf, "the export's leaf")
    if seq not in records:
        raise ImportFormatError(f"The export's leaf {seq} is not one of its messages.")
    return seq


def _attachments(raw: Any) -> dict[str, Attachment]:
    """The export's attachment blobs, each checked against its SHA-256 digest."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ImportFormatError("The export's 'attachments' is not an object.")
    found = {}
    for digest, blob in raw.items():
        if not isinstance(blob, Mapping) or not isinstance(blob.get("data"), str):
            raise ImportFormatError(f"Attachment {digest} of the export has no data.")
        try:
            data = base64.b64decode(blob["data"], validate=True)
        except (binascii.Error, ValueError) as err:
            raise ImportFormatError(f"Attachment {digest} is not valid base64.") from err
        if hashlib.sha256(data).hexdigest() != digest:
            raise ImportFormatError(f"Attachment {digest}'s bytes do not match its digest.")
        media_type = blob.get("media_type")
        found[str(digest)] = Attachment(
            media_type if isinstance(media_type, str) else "application/octet-stream", data
        )
    return found


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ImportFormatError(f"{what[0].upper()}{what[1:]} is not a whole number: {value!r:.40}")
    return value


def _time(value: Any, default: float) -> float:
    """A Unix time from the file, or ``default`` when it is missing or not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return float(value)
