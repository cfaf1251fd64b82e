"""``JSONLExtension``: one JSON line per finished turn, appended to a file.

A line holds the session, the request, whether it was a resume (and of which kind), and the
turn's messages from the last user message to the reply — so a resumed turn is recorded from
the user message that started it, including what the resume added (recovered tool results,
the note to the model). Failed or cancelled requests write nothing: the turn did not finish.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from ..hooks import RunContext
from ..messages import AssistantMessage, message_to_dict

__all__ = ["JSONL_SCHEMA_VERSION", "JSONLExtension"]

JSONL_SCHEMA_VERSION = 1


class JSONLExtension:
    """Append a JSON line per finished turn to ``path`` (created if missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"JSONLExtension({self.path!r})"

    async def after_run(self, ctx: RunContext, reply: AssistantMessage) -> None:
        record: dict[str, Any] = {
            "v": JSONL_SCHEMA_VERSION,
            "session_id": ctx.session_id,
            "request_id": ctx.request_id,
            "resumed": ctx.resume_kind.value if ctx.resume_kind is not None else None,
            "finished_at": time.time(),
            "messages": [message_to_dict(m) for m in ctx.turn_messages()],
        }
        # ensure_ascii keeps the file valid UTF-8 even for lone surrogates.
        line = json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n"
        async with self._lock:
            await asyncio.to_thread(self._append, line)

    def _append(self, line: str) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
