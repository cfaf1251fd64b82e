"""What the Resume bar says and offers for each state: pure decisions, no Qt.

:func:`resume_bar_text` turns a conversation's :class:`ResumeInfo` (the stop record, the resume
point or why there is none, the unanswered tool calls) into a :class:`ResumeBarText`: the
message, its tooltip, the Resume button's label (or no Resume button), whether "Other model…"
is offered, and the tool calls that did not run or may have run. :func:`notice_text` is the bar
for a message with nothing to resume; :func:`bar_shows` decides whether a conversation's state
is worth the bar at all. :class:`ui.resume_bar.ResumeBar` renders what these return.

Names: ``info`` is a :class:`ResumeInfo` (what the services know), ``point`` its
:class:`ResumePoint` (how resuming picks up; ``None`` when it cannot), ``text`` the
:class:`ResumeBarText` shown for it.
"""

from __future__ import annotations

import enum
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app import ResumeKind, ToolCall
from app.services import BlockedReason, ResumeInfo, StopKind

__all__ = [
    "NEXT_STEP",
    "ResumeBarText",
    "ResumeLabel",
    "bar_shows",
    "dead_end",
    "notice_text",
    "resume_bar_text",
]

#: The bar's words when the stop record has none (the app stopped before writing one).
GENERIC: Mapping[ResumeKind, str] = {
    ResumeKind.CALL_MODEL: "The last request did not get its answer.",
    ResumeKind.RECOVER_TOOLS: "The app stopped while tools were running.",
    ResumeKind.RETRY_RESPONSE: "The last answer was cut off before it finished.",
    ResumeKind.CONTINUE_RESPONSE: "The last answer stopped at the model's output limit.",
}

#: Where resending fails the same way, the next step the bar suggests instead.
NEXT_STEP: Mapping[BlockedReason, str] = {
    BlockedReason.REFUSED: (
        "The model refused this request, and sending it again would be refused again. "
        "Rephrase your request in a new message instead."
    ),
    BlockedReason.CONTEXT_FULL: (
        "This conversation no longer fits in the model's context window, so "
        "resending it would fail again. Start a new conversation (Ctrl+N), perhaps "
        "with a summary of this one, or choose a model with a larger context."
    ),
}

#: A stop record that means the same dead end. Since a context error is saved as a CONTEXT_FULL
#: step the history says so itself; conversations saved before that end CALL_MODEL, and for
#: them the bar still offers another model (a larger context may succeed).
_STOP_DEAD_END: Mapping[StopKind, BlockedReason] = {
    StopKind.REFUSED: BlockedReason.REFUSED,
    StopKind.CONTEXT_FULL: BlockedReason.CONTEXT_FULL,
}

#: Blocked reasons the bar explains even with no stop record.
_EXPLAINED = frozenset(
    {
        BlockedReason.REFUSED,
        BlockedReason.CONTEXT_FULL,
        BlockedReason.UNKNOWN_STOP,
        BlockedReason.MALFORMED,
    }
)
#: Blocked reasons that mean "nothing happened that needs words".
_NOTHING_TO_SAY = frozenset({BlockedReason.COMPLETED, BlockedReason.EMPTY})


class ResumeLabel(enum.StrEnum):
    """The Resume button's label."""

    RESUME = "Resume"
    CONTINUE = "Continue"  # an answer cut at the output limit is continued, not redone


@dataclass(frozen=True, slots=True)
class ResumeBarText:
    """What the bar shows. Tooltips are the raw text (the bar shows them as plain text)."""

    message: str
    tooltip: str = ""
    #: The Resume button's label; ``None``: no Resume button (resuming cannot help).
    resume: ResumeLabel | None = None
    resume_tooltip: str = ""
    other_model: bool = False
    dismiss: bool = True
    #: Unanswered calls that never started (they were awaiting approval); Resume asks again.
    not_run: tuple[ToolCall, ...] = ()
    #: Unanswered calls that had started: resuming will not run them again.
    may_have_run: tuple[ToolCall, ...] = ()

    @property
    def tools_html(self) -> str:
        """The tool lists as rich text (names and arguments escaped); ``""``: no list."""
        parts = []
        if self.not_run:
            parts.append(
                "These tools did NOT run — they were waiting for your approval and "
                "never started; Resume asks you again:"
                f"<ul style='margin:0'>{_listed(self.not_run)}</ul>"
            )
        if self.may_have_run:
            parts.append(
                "These tools may or may not have run — resuming will not run them "
                "again; check their effects yourself:"
                f"<ul style='margin:0'>{_listed(self.may_have_run)}</ul>"
            )
        return "".join(parts)


def argument_summary(arguments: Mapping[str, Any]) -> str:
    """A tool call's arguments on one line, at most 80 characters."""
    text = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return text if len(text) <= 80 else text[:77] + "…"


def _listed(calls: Sequence[ToolCall]) -> str:
    return "".join(
        f"<li><b>{html.escape(call.name)}</b>({html.escape(argument_summary(call.arguments))})</li>"
        for call in calls
    )


def dead_end(info: ResumeInfo) -> BlockedReason | None:
    """Why resending would fail the same way (a refusal, a full context window), if it would.

    The history's own reason comes first; else the stop record's kind.
    """
    reason = info.blocked_reason
    if reason is not None and reason in NEXT_STEP:
        return BlockedReason(reason)
    if info.stop is not None:
        return _STOP_DEAD_END.get(info.stop.kind)
    return None


def bar_shows(info: ResumeInfo) -> bool:
    """Whether this state is worth the Resume bar (something to resume or to explain)."""
    if info.point is not None:
        return True
    return info.blocked_reason in _EXPLAINED or (
        info.stop is not None and info.blocked_reason not in _NOTHING_TO_SAY
    )


def resume_bar_text(info: ResumeInfo) -> ResumeBarText:
    """What the bar says and offers for ``info``."""
    point = info.point
    reason = dead_end(info)
    if point is not None and reason is None:
        tools = point.kind is ResumeKind.RECOVER_TOOLS and bool(point.unanswered_tool_calls)
        return ResumeBarText(
            message=info.stop.message if info.stop else GENERIC[point.kind],
            tooltip=point.description,
            resume=(
                ResumeLabel.CONTINUE
                if point.kind is ResumeKind.CONTINUE_RESPONSE
                else ResumeLabel.RESUME
            ),
            resume_tooltip=point.description,
            other_model=True,
            not_run=info.awaiting_approval if tools else (),
            may_have_run=info.may_have_run if tools else (),
        )
    parts = [info.stop.message] if info.stop else []
    parts.append((NEXT_STEP[reason] if reason is not None else "") or info.blocked_text or "")
    return ResumeBarText(
        message=" ".join(p for p in parts if p),
        tooltip=point.description if point else (info.blocked_text or ""),
        # Another model (a larger context window, say) may still succeed.
        other_model=point is not None and reason is BlockedReason.CONTEXT_FULL,
    )


def notice_text(message: str) -> ResumeBarText:
    """The bar for a message with nothing to resume (e.g. a failure before anything was saved)."""
    return ResumeBarText(message=message)
