"""What the Resume bar says and offers for each state (ui.resume_text): table tests.

Two kinds of table: pinned rows (the exact words of the states people meet most), and the
complete product of *why it stopped* (every stop kind, and none) × *what was left* (a partial
answer on screen or kept, tool calls without results, nothing), checked row by row for what
issue 16 asks: the tooltip never contradicts the message (no "never answered" above a partial
answer, no connection blamed after a crash), and every row says what Resume will do.
"""

from __future__ import annotations

import asyncio

import pytest

from app import ResumeKind, ResumePoint, StopReason, ToolCall
from app.errors import StorageFullError, ToolRoundLimitError
from app.resume import BlockedReason
from app.services import ResumeInfo, describe_failure
from app.services.failures import ORDERLY_STOPS
from app.storage.journal import StopKind, StopRecord
from ui.resume_text import (
    CAUSE,
    LEFT,
    NEXT_STEP,
    PARTIAL,
    Left,
    ResumeBarText,
    ResumeLabel,
    argument_summary,
    bar_shows,
    dead_end,
    left_by,
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
CRASH = "Continuum closed unexpectedly while answering (request started at 14:03)."

#: The sentence each stop kind's record really carries (as the services write it).
STOP_MESSAGES: dict[StopKind, str] = {
    StopKind.STOPPED: describe_failure(asyncio.CancelledError())[1],
    StopKind.CRASHED: CRASH,
    StopKind.CONNECTION: describe_failure(ConnectionResetError("reset by peer"))[1],
    StopKind.PROVIDER_ERROR: "The provider reported an error: HTTP 500 (server error)",
    StopKind.OUTPUT_LIMIT: ORDERLY_STOPS[StopReason.MAX_OUTPUT][1],
    StopKind.REFUSED: ORDERLY_STOPS[StopReason.REFUSAL][1],
    StopKind.CONTEXT_FULL: ORDERLY_STOPS[StopReason.CONTEXT_FULL][1],
    StopKind.PAUSED: ORDERLY_STOPS[StopReason.PAUSED][1],
    StopKind.TOOL_LIMIT: describe_failure(ToolRoundLimitError(8))[1],
    StopKind.STORAGE: describe_failure(
        StorageFullError("The disk is full, so Continuum could not save the answer.")
    )[1],
}
#: A word of each cause that the message (the record's sentence) and the tooltip both say.
CAUSE_WORD: dict[StopKind, str] = {
    StopKind.STOPPED: "stop",
    StopKind.CRASHED: "closed",
    StopKind.CONNECTION: "connection",
    StopKind.PROVIDER_ERROR: "error",
    StopKind.OUTPUT_LIMIT: "output limit",
    StopKind.REFUSED: "refused",
    StopKind.CONTEXT_FULL: "context window",
    StopKind.PAUSED: "paused",
    StopKind.TOOL_LIMIT: "rounds",
    StopKind.STORAGE: "save",
}


def stop(kind: StopKind, message: str | None = None) -> StopRecord:
    return StopRecord("s", kind, STOP_MESSAGES[kind] if message is None else message, 0.0)


def point(kind: ResumeKind, calls: tuple[ToolCall, ...] = ()) -> ResumePoint:
    return ResumePoint(kind, f"resuming {kind.value}", calls)


def resumable(
    kind: ResumeKind,
    record: StopRecord | None = None,
    calls: tuple[ToolCall, ...] = (),
    awaiting: tuple[ToolCall, ...] = (),
    draft: str | None = None,
) -> ResumeInfo:
    return ResumeInfo(point(kind, calls), None, None, record, draft, awaiting)


def blocked(reason: BlockedReason, record: StopRecord | None = None) -> ResumeInfo:
    return ResumeInfo(None, reason, f"blocked: {reason.value}.", record, None)


def left_state(left: Left, record: StopRecord | None) -> ResumeInfo:
    """A conversation that ``record``'s request left as ``left``."""
    if left is Left.DRAFT:
        return resumable(ResumeKind.CALL_MODEL, record, draft="Once upon a")
    if left is Left.CUT:
        return resumable(ResumeKind.RETRY_RESPONSE, record)
    if left is Left.AT_LIMIT:
        return resumable(ResumeKind.CONTINUE_RESPONSE, record)
    if left is Left.TOOLS:
        return resumable(ResumeKind.RECOVER_TOOLS, record, calls=(WRITE, SHELL), awaiting=(WRITE,))
    return resumable(ResumeKind.CALL_MODEL, record)  # NOTHING, or PAUSED by a PAUSED record


def _words(left: Left) -> tuple[str, str]:
    words = LEFT[left]
    return words.message, f"{words.kept} {words.action}"


DRAFT_MSG, DRAFT_TIP = _words(Left.DRAFT)
NOTHING_MSG, NOTHING_TIP = _words(Left.NOTHING)
CUT_MSG, CUT_TIP = _words(Left.CUT)
LIMIT_MSG, LIMIT_TIP = _words(Left.AT_LIMIT)
TOOLS_MSG, TOOLS_TIP = _words(Left.TOOLS)

CASES = [
    (
        "killed while answering, the text on screen kept as a draft",
        resumable(ResumeKind.CALL_MODEL, stop(StopKind.CRASHED), draft="Once upon"),
        ResumeBarText(
            f"{CRASH} {DRAFT_MSG}",
            f"{CAUSE[StopKind.CRASHED]} {DRAFT_TIP}",
            ResumeLabel.RESUME,
            LEFT[Left.DRAFT].action,
            other_model=True,
        ),
    ),
    (
        "Stop pressed before any text",
        resumable(ResumeKind.CALL_MODEL, stop(StopKind.STOPPED)),
        ResumeBarText(
            f"You stopped this answer. {NOTHING_MSG}",
            f"{CAUSE[StopKind.STOPPED]} {NOTHING_TIP}",
            ResumeLabel.RESUME,
            LEFT[Left.NOTHING].action,
            other_model=True,
        ),
    ),
    (
        "connection dropped mid-answer: the cut part is kept (a full stop added)",
        resumable(ResumeKind.RETRY_RESPONSE, stop(StopKind.CONNECTION, "The connection dropped")),
        ResumeBarText(
            f"The connection dropped. {CUT_MSG}",
            f"{CAUSE[StopKind.CONNECTION]} {CUT_TIP}",
            ResumeLabel.RESUME,
            LEFT[Left.CUT].action,
            other_model=True,
        ),
    ),
    (
        "no stop record, nothing kept: generic words",
        resumable(ResumeKind.CALL_MODEL),
        ResumeBarText(
            f"The last request did not finish. {NOTHING_MSG}",
            NOTHING_TIP,
            ResumeLabel.RESUME,
            LEFT[Left.NOTHING].action,
            other_model=True,
        ),
    ),
    (
        "output limit: the button says Continue",
        resumable(ResumeKind.CONTINUE_RESPONSE, stop(StopKind.OUTPUT_LIMIT)),
        ResumeBarText(
            f"The answer reached the model's output limit. {LIMIT_MSG}",
            f"{CAUSE[StopKind.OUTPUT_LIMIT]} {LIMIT_TIP}",
            ResumeLabel.CONTINUE,
            LEFT[Left.AT_LIMIT].action,
            other_model=True,
        ),
    ),
    (
        "tools interrupted: one never started, one may have run",
        resumable(
            ResumeKind.RECOVER_TOOLS,
            stop(StopKind.STOPPED),
            calls=(WRITE, SHELL),
            awaiting=(WRITE,),
        ),
        ResumeBarText(
            f"You stopped this answer. {TOOLS_MSG}",
            f"{CAUSE[StopKind.STOPPED]} {TOOLS_TIP}",
            ResumeLabel.RESUME,
            LEFT[Left.TOOLS].action,
            other_model=True,
            not_run=(WRITE,),
            may_have_run=(SHELL,),
        ),
    ),
    (
        "recover_tools with nothing unanswered: no lists, nothing kept",
        resumable(ResumeKind.RECOVER_TOOLS),
        ResumeBarText(
            f"The last request did not finish. {NOTHING_MSG}",
            NOTHING_TIP,
            ResumeLabel.RESUME,
            LEFT[Left.NOTHING].action,
            other_model=True,
        ),
    ),
    (
        "call_model but the stop says context full: no Resume, another model offered",
        resumable(ResumeKind.CALL_MODEL, stop(StopKind.CONTEXT_FULL, "Too long.")),
        ResumeBarText(
            f"Too long. {CONTEXT_NEXT}",
            f"{CAUSE[StopKind.CONTEXT_FULL]} Resume is not offered: this model would fail the "
            "same way with the same conversation. A model with a larger context window may "
            "still answer: see Other model…",
            other_model=True,
        ),
    ),
    (
        "call_model but the stop says refused: no Resume, no other model",
        resumable(ResumeKind.CALL_MODEL, stop(StopKind.REFUSED, "Refused.")),
        ResumeBarText(
            f"Refused. {REFUSED_NEXT}",
            f"{CAUSE[StopKind.REFUSED]} Resume is not offered: the same request would be "
            "refused again.",
        ),
    ),
    (
        "blocked: refused, with its stop record",
        blocked(BlockedReason.REFUSED, stop(StopKind.REFUSED, "The model refused.")),
        ResumeBarText(
            f"The model refused. {REFUSED_NEXT}",
            f"{CAUSE[StopKind.REFUSED]} Resume is not offered: the same request would be "
            "refused again.",
        ),
    ),
    (
        "blocked: context full, no stop record",
        blocked(BlockedReason.CONTEXT_FULL),
        ResumeBarText(
            CONTEXT_NEXT,
            "Resume is not offered: this model would fail the same way with the same conversation.",
        ),
    ),
    (
        "blocked: malformed, no record: the blocked text",
        blocked(BlockedReason.MALFORMED),
        ResumeBarText("blocked: malformed.", "blocked: malformed."),
    ),
    (
        "blocked: unknown stop after a crash",
        blocked(BlockedReason.UNKNOWN_STOP, stop(StopKind.CRASHED)),
        ResumeBarText(
            f"{CRASH} blocked: unknown_stop.",
            f"{CAUSE[StopKind.CRASHED]} blocked: unknown_stop.",
        ),
    ),
    (
        "blocked: completed, but the stop record says refused",
        blocked(BlockedReason.COMPLETED, stop(StopKind.REFUSED, "No.")),
        ResumeBarText(
            f"No. {REFUSED_NEXT}",
            f"{CAUSE[StopKind.REFUSED]} Resume is not offered: the same request would be "
            "refused again.",
        ),
    ),
]


@pytest.mark.parametrize(("info", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_resume_bar_text(info: ResumeInfo, expected: ResumeBarText) -> None:
    assert resume_bar_text(info) == expected


#: Every (stop kind or none) × (what was left) a request can end in, where Resume can help.
RESUMABLE_KINDS = [
    None,
    *(k for k in StopKind if k not in (StopKind.REFUSED, StopKind.CONTEXT_FULL)),
]
PRODUCT = [
    (kind, left)
    for kind in RESUMABLE_KINDS
    for left in Left
    # A paused answer is known only from its stop record: with that record, a conversation
    # that kept no draft was left paused, never with nothing.
    if not (left is Left.PAUSED and kind is not StopKind.PAUSED)
    and not (left is Left.NOTHING and kind is StopKind.PAUSED)
]


@pytest.mark.parametrize(
    ("kind", "left"),
    PRODUCT,
    ids=[f"{k.value if k else 'no-record'}-{w.value}" for k, w in PRODUCT],
)
def test_every_row_is_consistent(kind: StopKind | None, left: Left) -> None:
    info = left_state(left, stop(kind) if kind else None)
    assert left_by(info) is left
    text = resume_bar_text(info)
    message, tooltip = text.message.lower(), text.tooltip.lower()
    both = f"{message} {tooltip} {text.resume_tooltip.lower()}"
    assert text.message and text.tooltip
    # What Resume will do: said in the message, the tooltip and the button's tooltip.
    assert text.resume is LEFT[left].label
    label = text.resume.value.lower()
    assert label in message and label in tooltip and label in text.resume_tooltip.lower()
    assert text.other_model and text.dismiss
    # Never the core's generic sentence, which cannot know what was on screen or why.
    assert "never answered" not in both and "resuming" not in both
    if left in PARTIAL:  # a partial answer is on screen: nothing says there is none
        assert "no partial" not in both and "did not finish" not in message
    else:
        assert "so far" not in both and "interrupted text" not in both
    if left is Left.DRAFT:  # the draft is replaced, not kept beside the new answer
        assert "replaces" in message and "replaces" in tooltip
    # The cause is the stop record's, in the message and the tooltip alike; only a dropped
    # connection blames the connection (not a crash, not Stop).
    assert ("connection" in both) is (kind is StopKind.CONNECTION)
    if kind is not None:
        assert CAUSE_WORD[kind] in message and CAUSE_WORD[kind] in tooltip
        assert text.message.startswith(STOP_MESSAGES[kind].rstrip("."))
    assert bool(text.tools_html) is (left is Left.TOOLS)


@pytest.mark.parametrize("kind", [StopKind.REFUSED, StopKind.CONTEXT_FULL])
@pytest.mark.parametrize("left", [Left.DRAFT, Left.NOTHING, Left.TOOLS])
def test_dead_ends_offer_no_resume_and_say_why(kind: StopKind, left: Left) -> None:
    text = resume_bar_text(left_state(left, stop(kind)))
    assert text.resume is None and text.resume_tooltip == ""
    reason = BlockedReason(kind.value)
    assert text.message.endswith(NEXT_STEP[reason])
    assert "resume is not offered" in text.tooltip.lower()
    assert "never answered" not in f"{text.message} {text.tooltip}".lower()
    assert text.other_model is (kind is StopKind.CONTEXT_FULL)
    assert ("other model" in text.tooltip.lower()) is text.other_model
    assert not text.tools_html


def test_every_stop_kind_has_a_cause() -> None:
    assert set(CAUSE) == {*StopKind, None}
    assert all(CAUSE[k] for k in StopKind) and CAUSE[None] == ""
    assert set(LEFT) == set(Left)
    assert [k for k in StopKind if "connection" in CAUSE[k].lower()] == [StopKind.CONNECTION]


@pytest.mark.parametrize(
    ("info", "left"),
    [
        (resumable(ResumeKind.CALL_MODEL), Left.NOTHING),
        (resumable(ResumeKind.CALL_MODEL, draft="x"), Left.DRAFT),
        (resumable(ResumeKind.CALL_MODEL, draft=""), Left.NOTHING),
        (resumable(ResumeKind.CALL_MODEL, stop(StopKind.PAUSED)), Left.PAUSED),
        (resumable(ResumeKind.RETRY_RESPONSE, draft="x"), Left.CUT),  # the saved part shows
        (resumable(ResumeKind.CONTINUE_RESPONSE), Left.AT_LIMIT),
        (resumable(ResumeKind.RECOVER_TOOLS, calls=(WRITE,)), Left.TOOLS),
        (resumable(ResumeKind.RECOVER_TOOLS, calls=(WRITE,), draft="x"), Left.TOOLS),
        (resumable(ResumeKind.RECOVER_TOOLS), Left.NOTHING),
    ],
)
def test_what_was_left(info: ResumeInfo, left: Left) -> None:
    assert left_by(info) is left


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


def _dismissed(info: ResumeInfo) -> ResumeInfo:
    import dataclasses

    return dataclasses.replace(info, dismissed=True)


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
        # Dismissed by the person for this very state: not again (issue 16).
        (_dismissed(resumable(ResumeKind.CALL_MODEL, stop(StopKind.CRASHED))), False),
        (_dismissed(blocked(BlockedReason.REFUSED)), False),
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
