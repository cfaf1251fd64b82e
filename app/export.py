"""Export a conversation as Markdown (to read or share) or JSON (to keep or move).

The JSON form holds every message in the core's stable message schema, with its sequence number
and time, so it can be imported back without loss. Neither form contains settings or keys.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from .messages import (
    AssistantMessage,
    InternalMessage,
    StopReason,
    ToolMessage,
    UserMessage,
    effective_stop_reason,
    message_to_dict,
)
from .storage.base import SessionInfo, StoredMessage

__all__ = ["EXPORT_FORMAT", "export_json", "export_markdown"]

EXPORT_FORMAT = "continuum-conversation"

_STOP_NOTES = {
    StopReason.INTERRUPTED: "the response was cut off here",
    StopReason.MAX_OUTPUT: "the response reached the output limit here",
    StopReason.REFUSAL: "the model refused",
    StopReason.CONTEXT_FULL: "the context window was full",
    StopReason.PAUSED: "the provider paused the response here",
}


def _fence(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run inside ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def export_markdown(info: SessionInfo | None, records: Sequence[StoredMessage]) -> str:
    title = (info.title if info and info.title else None) or "Conversation"
    lines = [f"# {title}", ""]
    if info is not None:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created_at))
        lines += [f"*Exported from Continuum — started {created}, {len(records)} messages.*", ""]
    for record in records:
        message = record.message
        if isinstance(message, UserMessage):
            lines += ["## You", "", message.content, ""]
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
                    _fence(arguments, "json"),
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
                _fence(message.content),
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def export_json(info: SessionInfo | None, records: Sequence[StoredMessage]) -> str:
    session: dict[str, Any] | None = None
    if info is not None:
        session = {
            "id": info.id,
            "title": info.title,
            "created_at": info.created_at,
            "updated_at": info.updated_at,
        }
    document = {
        "format": EXPORT_FORMAT,
        "v": 1,
        "exported_at": time.time(),
        "session": session,
        "messages": [
            {
                "seq": r.seq,
                "created_at": r.created_at,
                "request_id": r.request_id,
                "message": message_to_dict(r.message),
            }
            for r in records
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=True)
