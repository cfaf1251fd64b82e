"""Table tests of the pure runtime decisions: what a request writes first (plan_request), how a
step's reported stop reason is normalised (normalise_stop), and the resume-blocked words."""

from __future__ import annotations

import pytest

from app.errors import RESUME_ERROR_REASONS, AgentResumeError
from app.messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    StopReason,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
)
from app.plan import RequestPlan, plan_request
from app.resume import (
    CONTINUE_TEXT,
    RECOVERED_TOOL_TEXT,
    RETRY_TEXT,
    BlockedReason,
    ResumeKind,
    classify_tail,
)
from app.step import normalise_stop

A, B = ToolCall("a", "work", {}), ToolCall("b", "work", {})
NEW = UserMessage("next")
ASKED: list[Message] = [UserMessage("go"), AssistantMessage("", (A, B))]
HALF_ANSWERED: list[Message] = [*ASKED, ToolMessage("a", "work", "ok")]


def recovered(call: ToolCall) -> ToolMessage:
    return ToolMessage(call.id, call.name, RECOVERED_TOOL_TEXT, success=False)


@pytest.mark.parametrize(
    ("history", "new_input", "not_started", "expected"),
    [
        # a new message
        ([], NEW, (), RequestPlan(to_save=(NEW,))),
        ([UserMessage("q"), AssistantMessage("a")], NEW, (), RequestPlan(to_save=(NEW,))),
        # dangling calls are answered before the new message (not_started is a resume thing)
        (ASKED, NEW, {"a"}, RequestPlan(to_save=(recovered(A), recovered(B), NEW))),
        (HALF_ANSWERED, NEW, (), RequestPlan(to_save=(recovered(B), NEW))),
        # a cut response then a new message: nothing to repair
        (
            [UserMessage("q"), AssistantMessage("par", stop_reason=StopReason.INTERRUPTED)],
            NEW,
            (),
            RequestPlan(to_save=(NEW,)),
        ),
        # resume
        (ASKED, None, (), RequestPlan(ResumeKind.RECOVER_TOOLS, (recovered(A), recovered(B)))),
        (ASKED, None, {"b"}, RequestPlan(ResumeKind.RECOVER_TOOLS, (recovered(A),), (B,))),
        (ASKED, None, {"a", "b"}, RequestPlan(ResumeKind.RECOVER_TOOLS, (), (A, B))),
        (HALF_ANSWERED, None, {"a"}, RequestPlan(ResumeKind.RECOVER_TOOLS, (recovered(B),))),
        ([UserMessage("q")], None, (), RequestPlan(ResumeKind.CALL_MODEL)),
        (
            [*HALF_ANSWERED, ToolMessage("b", "work", "ok")],
            None,
            {"b"},
            RequestPlan(ResumeKind.CALL_MODEL),
        ),
        (
            [UserMessage("q"), AssistantMessage("par", stop_reason=StopReason.INTERRUPTED)],
            None,
            (),
            RequestPlan(ResumeKind.RETRY_RESPONSE, (InternalMessage(RETRY_TEXT),)),
        ),
        (
            [UserMessage("q"), AssistantMessage("par", stop_reason=StopReason.MAX_OUTPUT)],
            None,
            (),
            RequestPlan(ResumeKind.CONTINUE_RESPONSE, (InternalMessage(CONTINUE_TEXT),)),
        ),
    ],
)
def test_plan_request(
    history: list[Message],
    new_input: UserMessage | None,
    not_started: set[str],
    expected: RequestPlan,
) -> None:
    assert plan_request(history, new_input, not_started) == expected


@pytest.mark.parametrize(
    ("history", "reason"),
    [
        ([], BlockedReason.EMPTY),
        ([UserMessage("q"), AssistantMessage("a")], BlockedReason.COMPLETED),
        ([UserMessage("q"), AssistantMessage("", stop_reason="refusal")], BlockedReason.REFUSED),
        (
            [UserMessage("q"), AssistantMessage("", stop_reason="context_full")],
            BlockedReason.CONTEXT_FULL,
        ),
        ([UserMessage("q"), AssistantMessage("", stop_reason="weird")], BlockedReason.UNKNOWN_STOP),
        ([ToolMessage("x", "t", "r")], BlockedReason.MALFORMED),
    ],
)
def test_a_blocked_resume_plans_nothing_and_names_its_reason(
    history: list[Message], reason: BlockedReason
) -> None:
    plan = plan_request(history, None)
    assert plan.blocked is not None and plan.blocked.reason is reason
    assert plan.to_save == () and plan.run_now == () and plan.resume_kind is None
    error = plan.blocked.error()
    assert error.reason is reason and error.reason == reason.value


def test_recovered_answers_say_may_have_run() -> None:
    plan = plan_request(ASKED, NEW)
    assert [m.outcome for m in plan.to_save if isinstance(m, ToolMessage)] == [
        ToolOutcome.MAY_HAVE_RUN,
        ToolOutcome.MAY_HAVE_RUN,
    ]


def test_blocked_reasons_are_the_resume_error_words() -> None:
    assert {r.value for r in BlockedReason} == RESUME_ERROR_REASONS
    assert AgentResumeError("completed").reason is BlockedReason.COMPLETED
    blocked = classify_tail([])
    assert blocked.reason is BlockedReason.EMPTY and blocked.reason == "empty"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("reported", "has_calls", "expected"),
    [
        (None, False, StopReason.END_TURN),
        (None, True, StopReason.TOOL_USE),
        (StopReason.TOOL_USE, True, StopReason.TOOL_USE),
        (StopReason.TOOL_USE, False, StopReason.END_TURN),  # nothing to run
        (StopReason.END_TURN, True, StopReason.TOOL_USE),  # Ollama says "stop" with calls
        (StopReason.END_TURN, False, StopReason.END_TURN),
        (StopReason.MAX_OUTPUT, True, StopReason.MAX_OUTPUT),
        (StopReason.MAX_OUTPUT, False, StopReason.MAX_OUTPUT),
        (StopReason.PAUSED, False, StopReason.PAUSED),
        (StopReason.REFUSAL, False, StopReason.REFUSAL),
        (StopReason.CONTEXT_FULL, True, StopReason.CONTEXT_FULL),
        ("something_new", False, "something_new"),
    ],
)
def test_normalise_stop(
    reported: StopReason | str | None, has_calls: bool, expected: StopReason | str
) -> None:
    assert normalise_stop(reported, has_tool_calls=has_calls) == expected
