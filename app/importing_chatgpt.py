"""ChatGPT's data export (``conversations.json``) as Continuum conversation trees (pure).

Each ChatGPT conversation is a tree already: ``mapping`` holds every node (``parent``,
``children``, a ``message`` or null), ``current_node`` the branch last shown. Edits and
regenerations are siblings in it, so they become Continuum's versions as they are.

What each node becomes (:func:`node_piece`, a table): the person's text is a
:class:`UserMessage`; the model's text an :class:`AssistantMessage` (``END_TURN``, the model
from ``metadata.model_slug``); its code, a tool's output, a quote become readable text of the
answer; ``thoughts`` become the answer's reasoning. System messages, custom instructions,
hidden and empty nodes, browsing displays are left out, counted by reason, and their children
follow the nearest message that is kept. An answer written in several nodes one after the other
(code, its output, the text) becomes one answer. Images are not in ``conversations.json`` (they
are separate files of the export's archive): given the archive's ``assets``
(:mod:`app.importing_archive`) a person's image becomes an image part, else a note says where one
was.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .export import fence
from .importing import (
    Assets,
    ConversationProblem,
    ImportedConversation,
    ImportedMessage,
    ImportFormatError,
    order_tree,
)
from .messages import AssistantMessage, Message, Reasoning, StopReason, UserMessage
from .parts import AttachmentError, ImagePart, attachment_from_bytes, with_text

__all__ = ["IMAGE_NOTE", "Assets", "Piece", "node_piece", "parse_chatgpt"]

log = logging.getLogger(__name__)

#: Where an image was (its bytes are not in conversations.json).
IMAGE_NOTE: Final = "[Image — not included in conversations.json]"


@dataclass(frozen=True, slots=True)
class Piece:
    """What one node contributes: the person's words (``user``) or part of an answer."""

    role: str  # "user" | "assistant"
    text: str
    reasoning: tuple[str, ...] = ()
    model: str | None = None
    #: Reasons for what was left out inside the node (an image: its bytes are elsewhere).
    notes: tuple[str, ...] = ()
    #: The person's images found in the export's archive.
    images: tuple[ImagePart, ...] = ()


def node_piece(message: Mapping[str, Any] | None, assets: Assets | None = None) -> Piece | str:
    """The :class:`Piece` a node's message becomes, or why it is left out (a short reason);
    ``assets``: the images of the export's archive, when it was imported whole."""
    if not isinstance(message, Mapping):
        return "empty node"
    author = message.get("author")
    role = author.get("role") if isinstance(author, Mapping) else None
    metadata = message.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    content = message.get("content")
    content = content if isinstance(content, Mapping) else {}
    kind = content.get("content_type")
    if metadata.get("is_visually_hidden_from_conversation"):
        return "hidden message"
    if role == "system":
        return "system message"
    if kind == "user_editable_context" or metadata.get("is_user_system_message"):
        return "custom instructions"
    if role not in ("user", "assistant", "tool"):
        return f"message from {role or 'no one'}"
    if kind in ("tether_browsing_display", "model_editable_context", "reasoning_recap"):
        return str(kind).replace("_", " ")
    if kind == "thoughts" and role == "assistant":
        thoughts = _thoughts(content.get("thoughts"))
        return Piece("assistant", "", reasoning=thoughts) if thoughts else "empty node"
    text, notes, images = _text(kind, content, assets if role == "user" else None)
    if not text.strip() and not images:
        return "empty node" if kind in (None, "text", "multimodal_text") else f"{kind} content"
    if role == "user":
        return Piece("user", text, notes=notes, images=images)
    if role == "tool":
        name = author.get("name") if isinstance(author, Mapping) else None
        who = f"Tool output ({name})" if isinstance(name, str) and name else "Tool output"
        if kind == "execution_output":
            return Piece("assistant", f"**{who}**\n\n{fence(text)}", notes=notes)
        return Piece("assistant", f"**{who}**\n\n{text}", notes=notes)
    model = metadata.get("model_slug")
    return Piece("assistant", text, model=model if isinstance(model, str) else None, notes=notes)


def _text(
    kind: Any, content: Mapping[str, Any], assets: Assets | None = None
) -> tuple[str, tuple[str, ...], tuple[ImagePart, ...]]:
    """The readable text of a message's content, notes on what it could not hold, and the
    images found through ``assets``."""
    if kind == "code":
        language = content.get("language")
        info = language if isinstance(language, str) and language != "unknown" else ""
        code = content.get("text")
        return (fence(code, info) if isinstance(code, str) and code.strip() else ""), (), ()
    if kind == "tether_quote":
        quoted = content.get("text")
        if not isinstance(quoted, str) or not quoted.strip():
            return "", (), ()
        title, url = content.get("title"), content.get("url")
        source = " — ".join(s for s in (title, url) if isinstance(s, str) and s)
        quote = "\n".join(f"> {line}" for line in quoted.splitlines())
        return (f"{quote}\n\n{source}" if source else quote), (), ()
    parts = content.get("parts")
    if isinstance(parts, list):
        texts: list[str] = []
        notes: list[str] = []
        images: list[ImagePart] = []
        for part in parts:
            if isinstance(part, str):
                if part.strip():
                    texts.append(part)
            elif isinstance(part, Mapping):
                spoken = part.get("text")
                if part.get("content_type") == "audio_transcription" and isinstance(spoken, str):
                    texts.append(spoken)
                elif str(part.get("content_type", "")).startswith("image"):
                    found = _image(part.get("asset_pointer"), assets)
                    if isinstance(found, ImagePart):
                        images.append(found)
                    else:
                        texts.append(IMAGE_NOTE)
                        notes.append(found)
                else:
                    notes.append(f"{part.get('content_type') or 'unknown'} part")
        return "\n\n".join(texts), tuple(notes), tuple(images)
    text = content.get("text")
    return (text if isinstance(text, str) else ""), (), ()


def _image(pointer: Any, assets: Assets | None) -> ImagePart | str:
    """The image part of an ``asset_pointer`` from the archive, or why there is none."""
    if assets is None or not isinstance(pointer, str):
        return "image (not in conversations.json)"
    found = assets(pointer)
    if isinstance(found, str):
        return found
    name, data = found
    try:
        part = attachment_from_bytes(data, name)
    except AttachmentError:
        return "image (not readable as an image)"
    return part if isinstance(part, ImagePart) else "image (not readable as an image)"


def _thoughts(raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list):
        return ()
    found = []
    for thought in raw:
        if isinstance(thought, Mapping):
            words = [thought.get("summary"), thought.get("content")]
            text = "\n\n".join(w for w in words if isinstance(w, str) and w.strip())
            if text:
                found.append(text)
    return tuple(found)


def parse_chatgpt(
    raw: Sequence[Mapping[str, Any]], assets: Assets | None = None
) -> tuple[list[ImportedConversation], list[ConversationProblem]]:
    """Every conversation of the file that can be read, and why each other one cannot."""
    conversations: list[ImportedConversation] = []
    problems: list[ConversationProblem] = []
    for number, item in enumerate(raw, start=1):
        title = item.get("title")
        name = title if isinstance(title, str) and title.strip() else f"Conversation {number}"
        try:
            conversation = conversation_from(item, assets)
        except ImportFormatError as err:
            problems.append(ConversationProblem(name, str(err)))
            continue
        except Exception:  # a shape not foreseen: this one is named, the others still read
            log.exception("ChatGPT conversation %d could not be read", number)
            problems.append(ConversationProblem(name, "it could not be read (see the log)"))
            continue
        if not conversation.messages:
            problems.append(ConversationProblem(name, "it has no messages to import"))
            continue
        conversations.append(conversation)
    return conversations, problems


@dataclass(slots=True)
class _Item:
    """A message being built: its first node, its parent item, its pieces."""

    head: str
    parent: str | None
    pieces: list[Piece]
    created_at: float


def conversation_from(
    item: Mapping[str, Any], assets: Assets | None = None
) -> ImportedConversation:
    """One ChatGPT conversation as a tree (see the module docstring)."""
    mapping = item.get("mapping")
    if not isinstance(mapping, Mapping) or not mapping:
        raise ImportFormatError("its 'mapping' is missing or empty")
    parents: dict[str, str | None] = {}
    messages: dict[str, Any] = {}
    for key, node in mapping.items():
        if not isinstance(node, Mapping):
            raise ImportFormatError(f"node {key} is not an object")
        parent = node.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise ImportFormatError(f"node {key}'s parent is not a node id")
        parents[str(key)] = parent
        messages[str(key)] = node.get("message")
    start = _number(item.get("create_time"))
    times = _node_times(parents, messages, start or 0.0)
    order = order_tree(parents, lambda k: times[k])
    left_out: Counter[str] = Counter()
    pieces: dict[str, Piece] = {}
    for key in order:
        piece = node_piece(messages[key], assets)
        if isinstance(piece, str):
            if piece != "empty node" or messages[key] is not None:
                left_out[piece] += 1
        else:
            pieces[key] = piece
            left_out.update(piece.notes)
    kept_parent = _kept_parents(order, parents, pieces)
    kept_children = Counter(p for k, p in kept_parent.items() if k in pieces)
    items: dict[str, _Item] = {}  # by head node, in order
    item_of: dict[str, str] = {}  # kept node -> its item's head
    for key in order:
        if key not in pieces:
            continue
        piece, up = pieces[key], kept_parent[key]
        above = items[item_of[up]] if up is not None else None
        if (
            above is not None
            and piece.role == "assistant"
            and above.pieces[0].role == "assistant"
            and kept_children[up] == 1
        ):
            above.pieces.append(piece)  # the same answer, written in several nodes
            item_of[key] = above.head
            continue
        items[key] = _Item(key, None if above is None else above.head, [piece], times[key])
        item_of[key] = key
    built = tuple(_message(i, conversation_id=_id(item)) for i in items.values())
    leaf = _leaf(item.get("current_node"), parents, kept_parent, item_of, pieces, built)
    title = item.get("title")
    created = start if start is not None else min((m.created_at for m in built), default=0.0)
    updated = _number(item.get("update_time"))
    return ImportedConversation(
        title=title.strip() if isinstance(title, str) and title.strip() else None,
        created_at=created,
        updated_at=updated if updated is not None else max(times.values(), default=created),
        messages=built,
        leaf=leaf,
        source_id=_id(item),
        left_out=left_out,
    )


def _node_times(
    parents: Mapping[str, str | None], messages: Mapping[str, Any], start: float
) -> dict[str, float]:
    """Each node's time: its message's, else its parent's (else the conversation's)."""
    own: dict[str, float | None] = {}
    for key, message in messages.items():
        own[key] = _number(message.get("create_time")) if isinstance(message, Mapping) else None
    times: dict[str, float] = {}
    for key in parents:
        path: list[str] = []
        at: str | None = key
        while at is not None and at not in times and own.get(at) is None and at in parents:
            if len(path) > len(parents):  # a cycle: order_tree names it
                break
            path.append(at)
            at = parents[at]
        if at is not None and at in times:
            found = times[at]
        elif at is not None and own.get(at) is not None:
            found = own[at]  # type: ignore[assignment]
            times[at] = found
        else:
            found = start
        for step in path:
            times[step] = found
    return times


def _kept_parents(
    order: Sequence[str], parents: Mapping[str, str | None], pieces: Mapping[str, Piece]
) -> dict[str, str | None]:
    """Each node's nearest ancestor that is kept (``None``: none), parents first."""
    nearest: dict[str, str | None] = {}
    for key in order:
        up = parents[key]
        nearest[key] = None if up is None else (up if up in pieces else nearest[up])
    return nearest


def _message(item: _Item, *, conversation_id: str | None) -> ImportedMessage:
    first = item.pieces[0]
    message: Message
    if first.role == "user":
        text = "\n\n".join(p.text for p in item.pieces if p.text)
        message = UserMessage(with_text(text, [i for p in item.pieces for i in p.images]))
    else:
        reasoning = tuple(Reasoning(text=t) for p in item.pieces for t in p.reasoning)
        model = next((p.model for p in item.pieces if p.model), None)
        message = AssistantMessage(
            "\n\n".join(p.text for p in item.pieces if p.text),
            stop_reason=StopReason.END_TURN,
            model=model,
            reasoning=reasoning,
        )
    return ImportedMessage(
        key=item.head,
        parent=item.parent,
        message=message,
        created_at=item.created_at,
        request_id=f"chatgpt:{conversation_id or 'conversation'}:{item.head}",
    )


def _leaf(
    current: Any,
    parents: Mapping[str, str | None],
    kept_parent: Mapping[str, str | None],
    item_of: Mapping[str, str],
    pieces: Mapping[str, Piece],
    built: Sequence[ImportedMessage],
) -> str | None:
    """The message ``current_node`` shows (its nearest kept node's); without a usable
    ``current_node``, the newest message."""
    if isinstance(current, str) and current in parents:
        kept = current if current in pieces else kept_parent[current]
        if kept is not None:
            return item_of[kept]
    return built[-1].key if built else None


def _id(item: Mapping[str, Any]) -> str | None:
    value = item.get("conversation_id", item.get("id"))
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None
