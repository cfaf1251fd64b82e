"""The resume decision: one pure function over the tail of a saved history.

Nothing records "this request did not finish" — a killed process writes nothing. What remains is
the history, and its last message is the record. :func:`classify_tail` reads that record and says
what :meth:`Agent.resume` would do (:class:`ResumePoint`) or why there is nothing to resume
(:class:`ResumeBlocked`). It does no I/O and calls no model, so it is table-tested directly.

The tail must reach back to the last assistant message when the history ends with tool results
(see :func:`tail_is_sufficient`); the store reads only that much.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .errors import AgentResumeError
from .messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    StopReason,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
    effective_stop_reason,
)

__all__ = [
    "CONTINUE_TEXT",
    "RECOVERED_TOOL_TEXT",
    "RETRY_TEXT",
    "BlockedReason",
    "ResumeBlocked",
    "ResumeKind",
    "ResumePoint",
    "classify_tail",
    "recovered_result",
    "tail_is_sufficient",
]

RECOVERED_TOOL_TEXT: Final = (
    "The process stopped while this tool was running, so it may or may not have completed, "
    "and whatever it changes may or may not have happened. "
    "Check the current state before running it again."
)

RETRY_TEXT: Final = (
    "Your previous response was interrupted before it finished (the connection or the "
    "process failed), so it is incomplete. Redo that response from the start; do not assume "
    "the user saw the incomplete part."
)

CONTINUE_TEXT: Final = (
    "Your previous response was cut off because it reached the output limit. Continue exactly "
    "where it stopped, without repeating anything already written and without any preamble."
)


class ResumeKind(StrEnum):
    """What resuming will do."""

    CALL_MODEL = "call_model"
    RECOVER_TOOLS = "recover_tools"
    RETRY_RESPONSE = "retry_response"
    CONTINUE_RESPONSE = "continue_response"


class BlockedReason(StrEnum):
    """Why there is nothing to resume (the :class:`AgentResumeError` word; values are stable)."""

    EMPTY = "empty"
    COMPLETED = "completed"
    REFUSED = "refused"
    CONTEXT_FULL = "context_full"
    UNKNOWN_STOP = "unknown_stop"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """Where an interrupted request can be picked up (``description`` fits a tooltip)."""

    kind: ResumeKind
    description: str
    unanswered_tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ResumeBlocked:
    """Why there is nothing to resume: ``reason`` is the :class:`AgentResumeError` word."""

    reason: BlockedReason
    description: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", BlockedReason(self.reason))

    def error(self) -> AgentResumeError:
        return AgentResumeError(self.reason, self.description)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _names(calls: Sequence[ToolCall]) -> str:
    names = [c.name for c in calls]
    if len(names) <= 3:
        return ", ".join(names)
    return ", ".join(names[:3]) + f" and {len(names) - 3} more"


def tail_is_sufficient(tail: Sequence[Message], *, complete: bool) -> bool:
    """Whether ``tail`` holds enough to decide: it must reach past trailing tool results.

    ``complete`` says the tail is the whole history (nothing older exists).
    """
    if complete:
        return True
    return any(not isinstance(m, ToolMessage) for m in tail)


def recovered_result(call: ToolCall) -> ToolMessage:
    """The answer to a call a stopped process left unanswered: it may or may not have run."""
    return ToolMessage(
        call.id, call.name, RECOVERED_TOOL_TEXT, success=False, outcome=ToolOutcome.MAY_HAVE_RUN
    )


def classify_tail(tail: Sequence[Message]) -> ResumePoint | ResumeBlocked:
    """Decide how to resume a history from its last messages (SPEC A2's table)."""
    if not tail:
        return ResumeBlocked(
            BlockedReason.EMPTY,
            "This conversation has no messages yet, so there is nothing to resume.",
        )
    last = tail[-1]

    if isinstance(last, UserMessage | InternalMessage):
        return ResumePoint(
            ResumeKind.CALL_MODEL,
            "The model never answered the last message (the connection failed or the request "
            "was stopped); resuming sends it again.",
        )

    if isinstance(last, ToolMessage):
        return _after_tool_results(tail)

    assert isinstance(last, AssistantMessage)
    stop = effective_stop_reason(last)
    if last.tool_calls:
        # Whatever the stop reason (a history written elsewhere may keep calls on a cut step),
        # unanswered calls need answers before any provider accepts the history, and they must
        # never run on their own.
        return _recover(last.tool_calls, answered=0)
    if stop is StopReason.PAUSED:
        return ResumePoint(
            ResumeKind.CALL_MODEL,
            "The provider paused this response more times than the pause limit allows; "
            "resuming asks the model to carry on.",
        )
    if stop is StopReason.INTERRUPTED:
        return ResumePoint(
            ResumeKind.RETRY_RESPONSE,
            "The response was cut off mid-stream; resuming keeps the partial text and asks the "
            "model to redo the response from the start.",
        )
    if stop is StopReason.MAX_OUTPUT:
        return ResumePoint(
            ResumeKind.CONTINUE_RESPONSE,
            "The response stopped at the output limit; resuming asks the model to continue "
            "exactly where it stopped.",
        )
    if stop in (StopReason.END_TURN, StopReason.TOOL_USE):
        return ResumeBlocked(
            BlockedReason.COMPLETED,
            "The last request finished normally, so there is nothing to resume.",
        )
    if stop is StopReason.REFUSAL:
        return ResumeBlocked(
            BlockedReason.REFUSED,
            "The model refused this request, and sending it again would be refused again; "
            "rephrase the request instead.",
        )
    if stop is StopReason.CONTEXT_FULL:
        return ResumeBlocked(
            BlockedReason.CONTEXT_FULL,
            "The conversation filled the model's context window, so resending it would fill it "
            "again; start a new conversation or shorten this one.",
        )
    return ResumeBlocked(
        BlockedReason.UNKNOWN_STOP,
        f"The model stopped for a reason Continuum does not know ({stop!s:.60}), so it cannot "
        "tell how to resume safely. Send a new message to continue the conversation.",
    )


def _after_tool_results(tail: Sequence[Message]) -> ResumePoint | ResumeBlocked:
    answered: list[ToolMessage] = []
    index = len(tail) - 1
    while index >= 0 and isinstance(tail[index], ToolMessage):
        message = tail[index]
        assert isinstance(message, ToolMessage)
        answered.append(message)
        index -= 1
    owner = tail[index] if index >= 0 else None
    if not isinstance(owner, AssistantMessage) or not owner.tool_calls:
        return ResumeBlocked(
            BlockedReason.MALFORMED,
            "The history ends with a tool result that answers no tool call, so it cannot be "
            "resumed safely; start a new request instead.",
        )
    call_ids = {c.id for c in owner.tool_calls}
    seen: set[str] = set()
    for message in answered:
        if message.tool_call_id not in call_ids or message.tool_call_id in seen:
            return ResumeBlocked(
                BlockedReason.MALFORMED,
                f"The history ends with a tool result for call {message.tool_call_id!r}, which "
                "the preceding assistant message did not ask for (or answers twice), so it "
                "cannot be resumed safely; start a new request instead.",
            )
        seen.add(message.tool_call_id)
    missing = tuple(c for c in owner.tool_calls if c.id not in seen)
    if missing:
        return _recover(missing, answered=len(seen))
    return ResumePoint(
        ResumeKind.CALL_MODEL,
        f"{_plural(len(seen), 'tool')} finished but the model never saw the "
        f"{'result' if len(seen) == 1 else 'results'}; resuming sends them to the model.",
    )


def _recover(missing: tuple[ToolCall, ...], *, answered: int) -> ResumePoint:
    done = f" ({_plural(answered, 'result')} did arrive and will be kept)" if answered else ""
    return ResumePoint(
        ResumeKind.RECOVER_TOOLS,
        f"The app stopped while {_plural(len(missing), 'tool')} ({_names(missing)}) may or may "
        f"not have run{done}; resuming tells the model so instead of running "
        f"{'it' if len(missing) == 1 else 'them'} again.",
        missing,
    )
