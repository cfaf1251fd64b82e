"""What the Resume bar says and offers for each state (ui.resume_text): plain table tests.

The words are today's words (other tests match them through the real window); these tables pin
every state's message, tooltip, buttons and tool lists.
"""

from __future__ import annotations

import pytest

from app import ResumeKind, ResumePoint, ToolCall
from app.resume import BlockedReason
from app.services import ResumeInfo
from app.storage.journal import StopKind, StopRecord
from ui.resume_text import (
    NEXT_STEP,
    ResumeBarText,
    ResumeLabel,
    argument_summary,
    bar_shows,
    dead_end,
    notice_text,
    resume_bar_text,
)

REFUSED_NEXT = (
    "The model refused this request, and sending it again would be refused again. "
    "Rephrase your request in a new message instead."
)
CONTEXT_NEXT = (
    "This conversation no longer fits in the model's context window, so resending "
    "it would fail again. Start a new conversation (Ctrl+N), perhaps with a summary "
    "of this one, or choose a model with a larger context."
)
WRITE = ToolCall("w1", "write_file", {"path": "a.txt", "content": "x"})
SHELL = ToolCall("s1", "<b>run</b>", {"cmd": "rm <x>"})


def stop(kind: StopKind, message: str) -> StopRecord:
    return StopRecord("s", kind, message, 0.0)


def point(kind: ResumeKind, calls: tuple[ToolCall, ...] = ()) -> ResumePoint:
    return ResumePoint(kind, f"resuming {kind.value}", calls)


def resumable(
    kind: ResumeKind,
    record: StopRecord | None = None,
    calls: tuple[ToolCall, ...] = (),
    awaiting: tuple[ToolCall, ...] = (),
) -> ResumeInfo:
    return ResumeInfo(point(kind, calls), None, None, record, None, awaiting)


def blocked(reason: BlockedReason, record: StopRecord | None = None) -> ResumeInfo:
    return ResumeInfo(None, reason, f"blocked: {reason.value}", record, None)


CASES = [
    (
        "call_model, no stop record: generic words",
        resumable(ResumeKind.CALL_MODEL),
        ResumeBarText(
            "The last request did not get its answer.",
            "resuming call_model",
            ResumeLabel.RESUME,
            "resuming call_model",
            other_model=True,
        ),
    ),
    (
        "retry_response: the stop record's words",
        resumable(ResumeKind.RETRY_RESPONSE, stop(StopKind.CONNECTION, "The connection dropped.")),
        ResumeBarText(
            "The connection dropped.",
            "resuming retry_response",
            ResumeLabel.RESUME,
            "resuming retry_response",
            other_model=True,
        ),
    ),
    (
        "retry_response, no record",
        resumable(ResumeKind.RETRY_RESPONSE),
        ResumeBarText(
            "The last answer was cut off before it finished.",
            "resuming retry_response",
            ResumeLabel.RESUME,
            "resuming retry_response",
            other_model=True,
        ),
    ),
    (
        "continue_response: the button says Continue",
        resumable(ResumeKind.CONTINUE_RESPONSE),
        ResumeBarText(
            "The last answer stopped at the model's output limit.",
            "resuming continue_response",
            ResumeLabel.CONTINUE,
            "resuming continue_response",
            other_model=True,
        ),
    ),
    (
        "recover_tools: one never started, one may have run",
        resumable(
            ResumeKind.RECOVER_TOOLS,
            stop(StopKind.STOPPED, "You stopped this answer."),
            calls=(WRITE, SHELL),
            awaiting=(WRITE,),
        ),
        ResumeBarText(
            "You stopped this answer.",
            "resuming recover_tools",
            ResumeLabel.RESUME,
            "resuming recover_tools",
            other_model=True,
            not_run=(WRITE,),
            may_have_run=(SHELL,),
        ),
    ),
    (
        "recover_tools, no record, nothing unanswered: no lists",
        resumable(ResumeKind.RECOVER_TOOLS),
        ResumeBarText(
            "The app stopped while tools were running.",
            "resuming recover_tools",
            ResumeLabel.RESUME,
            "resuming recover_tools",
            other_model=True,
        ),
    ),
    (
        "call_model but the stop says context full: no Resume, another model offered",
        resumable(ResumeKind.CALL_MODEL, stop(StopKind.CONTEXT_FULL, "Too long.")),
        ResumeBarText(f"Too long. {CONTEXT_NEXT}", "resuming call_model", other_model=True),
    ),
    (
        "call_model but the stop says refused: no Resume, no other model",
        resumable(ResumeKind.CALL_MODEL, stop(StopKind.REFUSED, "Refused.")),
        ResumeBarText(f"Refused. {REFUSED_NEXT}", "resuming call_model"),
    ),
    (
        "blocked: refused, with its stop record",
        blocked(BlockedReason.REFUSED, stop(StopKind.REFUSED, "The model refused.")),
        ResumeBarText(f"The model refused. {REFUSED_NEXT}", "blocked: refused"),
    ),
    (
        "blocked: context full, no stop record",
        blocked(BlockedReason.CONTEXT_FULL),
        ResumeBarText(CONTEXT_NEXT, "blocked: context_full"),
    ),
    (
        "blocked: malformed, no record: the blocked text",
        blocked(BlockedReason.MALFORMED),
        ResumeBarText("blocked: malformed", "blocked: malformed"),
    ),
    (
        "blocked: unknown stop after a crash",
        blocked(BlockedReason.UNKNOWN_STOP, stop(StopKind.CRASHED, "The app closed unexpectedly.")),
        ResumeBarText(
            "The app closed unexpectedly. blocked: unknown_stop", "blocked: unknown_stop"
        ),
    ),
    (
        "blocked: completed, but the stop record says refused",
        blocked(BlockedReason.COMPLETED, stop(StopKind.REFUSED, "No.")),
        ResumeBarText(f"No. {REFUSED_NEXT}", "blocked: completed"),
    ),
]


@pytest.mark.parametrize(("info", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_resume_bar_text(info: ResumeInfo, expected: ResumeBarText) -> None:
    assert resume_bar_text(info) == expected


def test_the_next_steps_are_todays_words() -> None:
    assert NEXT_STEP == {
        BlockedReason.REFUSED: REFUSED_NEXT,
        BlockedReason.CONTEXT_FULL: CONTEXT_NEXT,
    }


@pytest.mark.parametrize(
    ("info", "reason"),
    [
        (resumable(ResumeKind.CALL_MODEL), None),
        (
            resumable(ResumeKind.CALL_MODEL, stop(StopKind.CONTEXT_FULL, "x")),
            BlockedReason.CONTEXT_FULL,
        ),
        (resumable(ResumeKind.CALL_MODEL, stop(StopKind.OUTPUT_LIMIT, "x")), None),
        (blocked(BlockedReason.REFUSED), BlockedReason.REFUSED),
        # The history's reason comes before the stop record's.
        (
            blocked(BlockedReason.CONTEXT_FULL, stop(StopKind.REFUSED, "x")),
            BlockedReason.CONTEXT_FULL,
        ),
        (blocked(BlockedReason.MALFORMED, stop(StopKind.REFUSED, "x")), BlockedReason.REFUSED),
        (blocked(BlockedReason.MALFORMED), None),
        # The services may still hand over the plain word: it means the same.
        (ResumeInfo(None, "refused", "t", None, None), BlockedReason.REFUSED),  # type: ignore[arg-type]
    ],
)
def test_dead_end(info: ResumeInfo, reason: BlockedReason | None) -> None:
    assert dead_end(info) is reason


@pytest.mark.parametrize(
    ("info", "shows"),
    [
        (resumable(ResumeKind.CALL_MODEL), True),
        (blocked(BlockedReason.REFUSED), True),
        (blocked(BlockedReason.CONTEXT_FULL), True),
        (blocked(BlockedReason.UNKNOWN_STOP), True),
        (blocked(BlockedReason.MALFORMED), True),
        (blocked(BlockedReason.COMPLETED), False),
        (blocked(BlockedReason.EMPTY), False),
        (blocked(BlockedReason.COMPLETED, stop(StopKind.STOPPED, "x")), False),
        (blocked(BlockedReason.EMPTY, stop(StopKind.CRASHED, "x")), False),
        (ResumeInfo(None, None, None, stop(StopKind.CRASHED, "x"), None), True),
        (ResumeInfo(None, None, None, None, None), False),
    ],
)
def test_bar_shows(info: ResumeInfo, shows: bool) -> None:
    assert bar_shows(info) is shows


def test_tool_lists_escape_names_and_arguments() -> None:
    text = resume_bar_text(
        resumable(ResumeKind.RECOVER_TOOLS, calls=(WRITE, SHELL), awaiting=(WRITE,))
    )
    assert text.tools_html == (
        "These tools did NOT run — they were waiting for your approval and never started; "
        "Resume asks you again:<ul style='margin:0'><li><b>write_file</b>"
        "(path=&#x27;a.txt&#x27;, content=&#x27;x&#x27;)</li></ul>"
        "These tools may or may not have run — resuming will not run them again; check their "
        "effects yourself:<ul style='margin:0'><li><b>&lt;b&gt;run&lt;/b&gt;</b>"
        "(cmd=&#x27;rm &lt;x&gt;&#x27;)</li></ul>"
    )
    assert resume_bar_text(resumable(ResumeKind.CALL_MODEL)).tools_html == ""


@pytest.mark.parametrize(
    ("arguments", "summary"),
    [
        ({}, ""),
        ({"path": "a.txt"}, "path='a.txt'"),
        ({"n": 3, "ok": True}, "n=3, ok=True"),
        ({"x": "y" * 100}, "x='" + "y" * 74 + "…"),
        ({"x": "y" * 75}, "x='" + "y" * 75 + "'"),  # exactly 80 characters: kept whole
    ],
)
def test_argument_summary(arguments: dict[str, object], summary: str) -> None:
    assert argument_summary(arguments) == summary
    assert len(summary) <= 80


def test_a_notice_offers_only_dismiss() -> None:
    assert notice_text("Locked elsewhere.") == ResumeBarText("Locked elsewhere.")
    text = notice_text("x")
    assert text.resume is None and not text.other_model and text.dismiss and not text.tools_html
