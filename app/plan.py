"""What a request writes before its first model call: one pure function, table-tested.

A request starts from the saved history and either a new user message or none (a resume).
:func:`plan_request` decides, without I/O, what must be appended first so any provider accepts
the history (SPEC A2): the answers to calls a killed process left dangling, the note that asks
the model to redo or continue a cut response, the user message itself; and which calls the
host proves never started, to be run now (through approval again) instead of answered.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .messages import InternalMessage, Message, ToolCall, UserMessage
from .resume import (
    CONTINUE_TEXT,
    RETRY_TEXT,
    ResumeBlocked,
    ResumeKind,
    ResumePoint,
    classify_tail,
    recovered_result,
)

__all__ = ["RequestPlan", "plan_request"]


@dataclass(frozen=True, slots=True)
class RequestPlan:
    """What a request does before its first model call.

    ``resume_kind``: what a resume does (``None`` for a new message). ``blocked``: why a resume
    is refused (nothing is written then). ``to_save``: appended together, in order, first.
    ``run_now``: unanswered calls that provably never started, run before the model is called.
    """

    resume_kind: ResumeKind | None = None
    to_save: tuple[Message, ...] = ()
    run_now: tuple[ToolCall, ...] = ()
    blocked: ResumeBlocked | None = None


def _repairs(point: ResumePoint, not_started: Collection[str] = ()) -> list[Message]:
    """Messages that make the history ready for the model, per resume kind (SPEC A2).

    Unanswered calls in ``not_started`` get no repair: the caller runs them instead.
    """
    if point.kind is ResumeKind.RECOVER_TOOLS:
        return [recovered_result(c) for c in point.unanswered_tool_calls if c.id not in not_started]
    if point.kind is ResumeKind.RETRY_RESPONSE:
        return [InternalMessage(RETRY_TEXT)]
    if point.kind is ResumeKind.CONTINUE_RESPONSE:
        return [InternalMessage(CONTINUE_TEXT)]
    return []


def plan_request(
    history: Sequence[Message], new_input: UserMessage | None, not_started: Collection[str] = ()
) -> RequestPlan:
    """The plan of a request over ``history``: a new message, or a resume when ``new_input``
    is ``None`` (``not_started`` applies to a resume only)."""
    point = classify_tail(history)
    if new_input is not None:
        # Close unanswered calls first: providers reject a history that has them.
        if isinstance(point, ResumePoint) and point.kind is ResumeKind.RECOVER_TOOLS:
            return RequestPlan(to_save=(*_repairs(point), new_input))
        return RequestPlan(to_save=(new_input,))
    if isinstance(point, ResumeBlocked):
        return RequestPlan(blocked=point)
    run_now: tuple[ToolCall, ...] = ()
    if point.kind is ResumeKind.RECOVER_TOOLS:
        run_now = tuple(c for c in point.unanswered_tool_calls if c.id in not_started)
    return RequestPlan(
        resume_kind=point.kind, to_save=tuple(_repairs(point, not_started)), run_now=run_now
    )
