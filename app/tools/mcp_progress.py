"""Progress of a running MCP tool call: what the server reports (``notifications/progress``
for the progress token Continuum sends with each call), as a record and in words.

Each report also moves the call's deadline (a tool that says it is working is not hung; see
``McpToolSource.call``). :data:`CURRENT_CALL` carries the id of the model's tool call from
``McpTool.invoke`` to the connection, so a report names the card it belongs to. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = [
    "CURRENT_CALL",
    "McpProgress",
    "ProgressListener",
    "progress_detail",
    "progress_words",
]

#: ``(call id, tool name as the model knows it)`` of the tool call running in this task.
CURRENT_CALL: ContextVar[tuple[str, str] | None] = ContextVar("mcp_current_call", default=None)


@dataclass(frozen=True, slots=True)
class McpProgress:
    """One progress report of a running call."""

    call_id: str
    tool: str
    progress: float
    total: float | None = None
    message: str | None = None


ProgressListener = Callable[[McpProgress], None]


def _number(value: float) -> str:
    return f"{value:g}" if value < 1e15 else f"{value:.3g}"


def progress_words(report: McpProgress) -> str:
    """``read_files: 40% (40 of 100) — copying a.txt``; without a total, just the count."""
    return f"{report.tool}: {progress_detail(report)}"


def progress_detail(report: McpProgress) -> str:
    """The report without the tool's name (for its own card): ``40% (40 of 100) — …``."""
    if report.total and report.total > 0:
        share = max(0.0, min(100.0, 100 * report.progress / report.total))
        words = f"{share:.0f}% ({_number(report.progress)} of {_number(report.total)})"
    else:
        words = f"{_number(report.progress)} done"
    message = (report.message or "").strip().replace("\n", " ")
    return f"{words} — {message[:200]}" if message else words
