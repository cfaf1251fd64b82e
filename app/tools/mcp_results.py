"""What the model sees of an MCP tool's result: its content blocks as text, capped in size.

A server may answer with megabytes (a whole file, a database dump). Everything the model sees is
sent again with every later request of the conversation and stored in the database, so the text
is cut at :data:`MAX_RESULT_CHARS` and the cut is said in the result itself: how much there was,
how much is shown, and how to get the rest (ask the tool for a smaller part). Pure functions.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["MAX_RESULT_CHARS", "cap_result", "result_text"]

#: The most characters of one MCP result the model sees (about 25,000 tokens: it fits next to
#: a long conversation in a 128k-token context, where the 1 MB of the built-in ``read_file`` would
#: fill it). A server's setting can lower or raise it (``McpServerConfig.max_result_chars``).
MAX_RESULT_CHARS: Final = 100_000


def summarise(block: Any) -> str:
    """One content block as text for the model: text as is, other kinds described."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(getattr(block, "data", "") or "") * 3 // 4
        return f"[{kind} content, {block.mime_type}, about {size} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.uri}" + (f" ({block.name})" if block.name else "") + "]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        kind_text = resource.mime_type or "unknown type"
        return f"[binary resource {resource.uri}, {kind_text}, not shown]"
    return f"[{kind or type(block).__name__} content, not shown]"


def result_text(result: Any, *, server: str, tool: str, limit: int = MAX_RESULT_CHARS) -> str:
    """A ``CallToolResult`` as the text the model sees, cut to ``limit`` characters."""
    parts = [summarise(block) for block in result.content or ()]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return cap_result("\n".join(parts), server=server, tool=tool, limit=limit)


def cap_result(text: str, *, server: str, tool: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` if it fits in ``limit`` characters, else its start and a note saying what was
    cut and how to get the rest. The note is outside the limit (it is short)."""
    if len(text) <= limit:
        return text
    shown = text[:limit]
    # Do not end in the middle of a line when a line break is near: easier to continue from.
    cut = shown.rfind("\n", max(0, limit - 2_000))
    if cut > 0:
        shown = shown[:cut]
    return (
        f"{shown}\n\n[Continuum cut this result: the MCP server {server!r} answered {tool!r} "
        f"with {len(text):,} characters ({_size(text)}); only the first {len(shown):,} are "
        "shown, to keep the conversation within the model's context. To see the rest, call "
        "the tool again for a smaller part (an offset, a range of lines, a narrower query or "
        "a filter) if it offers one.]"
    )


def _size(text: str) -> str:
    size = len(text.encode("utf-8", errors="replace"))
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    return f"{size / 1_000:.0f} kB"
