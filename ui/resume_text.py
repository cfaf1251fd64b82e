"""What the Resume bar says and offers for each state: pure decisions, no Qt.

:func:`resume_bar_text` turns a conversation's :class:`ResumeInfo` (the stop record, the resume
point or why there is none, the draft, the unanswered tool calls) into a :class:`ResumeBarText`:
the message, its tooltip, the Resume button's label and tooltip (or no Resume button), whether
"Other model…" is offered, and the tool calls that did not run or may have run.

The words are one table over two things the person can tell apart: **why it stopped** (the stop
record's kind: :data:`CAUSE`) and **what was left** (:class:`Left`, from the resume point and the
draft: :data:`LEFT`). The message is the stop record's own sentence (it carries the provider's
detail) followed by what was left and what Resume will do; the tooltip says the same at more
length — the cause, what was kept, what Resume does — so it never contradicts the message: it
never says "never answered" above a partial answer, and only a dropped connection blames the
connection. The core's ``point.description`` is not shown: it cannot know what the app kept on
screen, nor why the request stopped.

:func:`notice_text` is the bar for a message with nothing to resume; :func:`bar_shows` decides
whether a conversation's state is worth the bar at all (a state the person dismissed is not).
:class:`ui.resume_bar.ResumeBar` renders what these return.

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
    "CAUSE",
    "DISMISS_TOOLTIP",
    "LEFT",
    "NEXT_STEP",
    "Left",
    "LeftWords",
    "ResumeBarText",
    "ResumeLabel",
    "bar_shows",
    "dead_end",
    "left_by",
    "notice_text",
    "resume_bar_text",
]


class ResumeLabel(enum.StrEnum):
    """The Resume button's label."""

    RESUME = "Resume"
    CONTINUE = "Continue"  # an answer cut at the output limit is continued, not redone


class Left(enum.StrEnum):
    """What the interrupted request left behind, as the person sees it."""

    DRAFT = "draft"  # a partial answer on screen, never saved: resuming asks again
    CUT = "cut"  # a partial answer kept in the conversation, cut mid-stream: redone
    AT_LIMIT = "at_limit"  # an answer kept, stopped at the output limit: continued
    PAUSED = "paused"  # an answer kept, paused by the provider: carried on
    TOOLS = "tools"  # tool calls without results: never run again by themselves
    NOTHING = "nothing"  # no partial answer: resuming asks the model again


#: The states in which a partial answer is on screen.
PARTIAL = frozenset({Left.DRAFT, Left.CUT, Left.AT_LIMIT, Left.PAUSED})


@dataclass(frozen=True, slots=True)
class LeftWords:
    """The words for one :class:`Left` state."""

    #: The message's first sentence when there is no stop record (the app wrote none).
    generic: str
    #: Appended to the message: what was left, and what Resume will do.
    message: str
    #: The tooltip's account of what was kept.
    kept: str
    #: What Resume does, in full (the tooltip's end, and the Resume button's tooltip).
    action: str
    label: ResumeLabel = ResumeLabel.RESUME


LEFT: Mapping[Left, LeftWords] = {
    Left.DRAFT: LeftWords(
        "The last answer was interrupted.",
        "The partial answer shown was not saved; Resume asks the model to answer again, and "
        "the new answer replaces it.",
        "The text marked interrupted is what was on screen; it is not part of the "
        "conversation and is never sent to the model.",
        "Resume sends the conversation as saved to the model again; the new answer replaces "
        "the interrupted text.",
    ),
    Left.CUT: LeftWords(
        "The last answer was cut off before it finished.",
        "The part that arrived is kept, marked interrupted; Resume asks the model to write "
        "the answer again from the start.",
        "The part of the answer that arrived stays in the conversation, marked interrupted.",
        "Resume tells the model its answer was cut off and asks it to redo that answer from "
        "the start.",
    ),
    Left.AT_LIMIT: LeftWords(
        "The last answer stopped at the model's output limit.",
        "The answer so far is kept; Continue asks the model to carry on exactly where it stopped.",
        "The answer so far stays in the conversation.",
        "Continue asks the model to carry on exactly where it stopped, without repeating "
        "itself; the rest is shown joined to the answer so far.",
        ResumeLabel.CONTINUE,
    ),
    Left.PAUSED: LeftWords(
        "The provider paused the last answer.",
        "The answer so far is kept; Resume asks the model to carry on.",
        "The answer so far stays in the conversation.",
        "Resume asks the model to carry on from where the provider paused it.",
    ),
    Left.TOOLS: LeftWords(
        "The app stopped while tools were running.",
        "Some tools had not finished (listed below); Resume never runs a tool again by itself.",
        "The tools listed had not reported back: those that had started may or may not have "
        "done their work; those waiting for your approval never started.",
        "Resume tells the model which tools may or may not have run, instead of running them "
        "again, and asks you again about those that never started; then the model goes on.",
    ),
    Left.NOTHING: LeftWords(
        "The last request did not finish.",
        "No partial answer was kept; Resume asks the model again.",
        "The conversation up to its last saved message is kept; nothing of the unfinished "
        "answer was.",
        "Resume sends the conversation as saved to the model again.",
    ),
}

#: Why it stopped, for the tooltip (the message has the stop record's own sentence).
CAUSE: Mapping[StopKind | None, str] = {
    StopKind.STOPPED: "You pressed Stop before the answer finished.",
    StopKind.CRASHED: (
        "Continuum closed before the answer finished: it crashed, was killed, or the "
        "computer shut down."
    ),
    StopKind.CONNECTION: (
        "The connection to the provider was lost, or the provider stopped responding, "
        "before the answer finished."
    ),
    StopKind.PROVIDER_ERROR: "The request ended with the error shown before the answer finished.",
    StopKind.OUTPUT_LIMIT: "The answer reached the model's output limit for one reply.",
    StopKind.REFUSED: "The model refused to answer this request.",
    StopKind.CONTEXT_FULL: "The conversation no longer fits in the model's context window.",
    StopKind.PAUSED: "The provider paused the answer more times than one request allows.",
    StopKind.TOOL_LIMIT: "The model used more rounds of tools than one request allows.",
    StopKind.STORAGE: "Continuum could not save to its database, as the message says.",
    None: "",
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

#: The tooltip's reason for offering no Resume button at a dead end.
_DEAD_END_TIP: Mapping[BlockedReason, str] = {
    BlockedReason.REFUSED: "Resume is not offered: the same request would be refused again.",
    BlockedReason.CONTEXT_FULL: (
        "Resume is not offered: this model would fail the same way with the same conversation."
    ),
}
_LARGER_MODEL = "A model with a larger context window may still answer: see Other model…"

#: What Dismiss does (its button's tooltip): the same whichever way the bar is dismissed.
DISMISS_TOOLTIP = (
    "Hide this bar for this conversation; it comes back only if a request stops again. "
    "Interrupted text that was never saved is discarded. Nothing in the conversation changes."
)

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


def _sentence(text: str) -> str:
    """``text`` ending like a sentence, so the next one can follow it."""
    text = text.strip()
    return text if not text or text.endswith((".", "!", "?", "…")) else text + "."


def _joined(*parts: str) -> str:
    return " ".join(p for p in (_sentence(p) for p in parts) if p)


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


def left_by(info: ResumeInfo) -> Left:
    """What the interrupted request left (``info.point`` must not be ``None``)."""
    point = info.point
    assert point is not None
    if point.kind is ResumeKind.RECOVER_TOOLS and point.unanswered_tool_calls:
        return Left.TOOLS
    if point.kind is ResumeKind.RETRY_RESPONSE:
        return Left.CUT
    if point.kind is ResumeKind.CONTINUE_RESPONSE:
        return Left.AT_LIMIT
    if info.draft:
        return Left.DRAFT
    if info.stop is not None and info.stop.kind is StopKind.PAUSED:
        return Left.PAUSED
    return Left.NOTHING


def bar_shows(info: ResumeInfo) -> bool:
    """Whether this state is worth the Resume bar (something to resume or to explain, and not
    dismissed by the person since)."""
    if info.dismissed:
        return False
    if info.point is not None:
        return True
    return info.blocked_reason in _EXPLAINED or (
        info.stop is not None and info.blocked_reason not in _NOTHING_TO_SAY
    )


def resume_bar_text(info: ResumeInfo) -> ResumeBarText:
    """What the bar says and offers for ``info``."""
    point = info.point
    stop = info.stop
    cause = CAUSE[stop.kind if stop else None]
    reason = dead_end(info)
    if point is not None and reason is None:
        left = left_by(info)
        words = LEFT[left]
        tools = left is Left.TOOLS
        return ResumeBarText(
            message=_joined(stop.message if stop else words.generic, words.message),
            tooltip=_joined(cause, words.kept, words.action),
            resume=words.label,
            resume_tooltip=words.action,
            other_model=True,
            not_run=info.awaiting_approval if tools else (),
            may_have_run=info.may_have_run if tools else (),
        )
    # Another model (a larger context window, say) may still succeed.
    other_model = point is not None and reason is BlockedReason.CONTEXT_FULL
    if reason is not None:
        tooltip = _joined(cause, _DEAD_END_TIP[reason], _LARGER_MODEL if other_model else "")
        next_step = NEXT_STEP[reason]
    else:  # an unknown finish, a damaged history: the core's sentence says what to do
        next_step = info.blocked_text or ""
        tooltip = _joined(cause, next_step)
    return ResumeBarText(
        message=_joined(stop.message if stop else "", next_step),
        tooltip=tooltip,
        other_model=other_model,
    )


def notice_text(message: str) -> ResumeBarText:
    """The bar for a message with nothing to resume (e.g. a failure before anything was saved)."""
    return ResumeBarText(message=message)
