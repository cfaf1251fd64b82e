"""Dismissing the Resume bar is remembered (issue 16): reopening does not bring it back while
nothing changed, and a new interruption (a new message, a new stop record) shows it again.

Real data folders, the real journal and store; states are written the way requests write them
(history appends, stop records, drafts), and reopened by closing and opening the services.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import AssistantMessage, ResumeKind, StopReason, UserMessage
from app.services import AppServices
from app.storage.journal import Dismissal, StopKind, StopRecord


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    yield svc
    await svc.close()


async def reopened(services: AppServices) -> AppServices:
    """The same data folder after a restart of the app."""
    await services.close()
    again = AppServices(services.data_dir)
    await again.open()
    return again


async def interrupted(services: AppServices, text: str = "Tell me a story") -> str:
    """A conversation whose request was cut after some text was on screen (Stop, say)."""
    session = await services.new_session()
    await services.storage.storage.append(session.id, "r1", UserMessage(text))
    await services.journal.record_stop(session.id, StopKind.STOPPED, "You stopped this answer.")
    await services.journal.save_draft(session.id, "Once upon")
    return session.id


async def test_dismiss_sticks_across_reopening(services: AppServices) -> None:
    session_id = await interrupted(services)
    before = await services.resume_info(session_id)
    assert before.point is not None and not before.dismissed
    assert session_id in await services.resumable_sessions()

    await services.dismiss_resume(session_id)
    info = await services.resume_info(session_id)
    # What Resume would do is unchanged (the history is untouched); the bar stays away.
    assert info.point == before.point and info.dismissed
    assert info.stop is None and info.draft is None  # the draft's fate: discarded
    assert session_id not in await services.resumable_sessions()

    services = await reopened(services)
    try:
        info = await services.resume_info(session_id)
        assert info.point == before.point and info.dismissed
        assert info.stop is None and info.draft is None
        assert session_id not in await services.resumable_sessions()
    finally:
        await services.close()


async def test_a_new_stop_record_is_a_new_interruption(services: AppServices) -> None:
    session_id = await interrupted(services)
    await services.dismiss_resume(session_id)
    # Resume pressed again (the history is the same) and cut again: a new stop record.
    await services.journal.record_stop(
        session_id, StopKind.CONNECTION, "The connection to the provider dropped: reset"
    )
    info = await services.resume_info(session_id)
    assert not info.dismissed and info.stop is not None
    assert session_id in await services.resumable_sessions()


async def test_a_new_message_is_a_new_interruption(services: AppServices) -> None:
    session_id = await interrupted(services)
    await services.dismiss_resume(session_id)
    # A new question that the app died answering: same resume kind, newer message, and the
    # crash's stop record is written only at the next launch.
    await services.storage.storage.append(session_id, "r2", UserMessage("And another"))
    info = await services.resume_info(session_id)
    assert info.point is not None and info.point.kind is ResumeKind.CALL_MODEL
    assert info.stop is None and not info.dismissed
    assert session_id in await services.resumable_sessions()


async def test_a_different_resume_state_is_not_covered(services: AppServices) -> None:
    """A dismissal remembers the resume word too (a history another process completed, say)."""
    session_id = await interrupted(services)
    await services.dismiss_resume(session_id)
    dismissal = await services.journal.dismissal(session_id)
    assert dismissal is not None and dismissal.point == ResumeKind.CALL_MODEL.value
    assert dismissal.last_seq == dismissal.current_seq
    await services.storage.storage.append(
        session_id, "r3", AssistantMessage("The end.", stop_reason=StopReason.MAX_OUTPUT)
    )
    info = await services.resume_info(session_id)
    assert info.point is not None and info.point.kind is ResumeKind.CONTINUE_RESPONSE
    assert not info.dismissed


async def test_dismissing_a_conversation_that_cannot_resume(services: AppServices) -> None:
    session = await services.new_session()
    await services.storage.storage.append(session.id, "r1", UserMessage("hi"))
    await services.storage.storage.append(
        session.id, "r1", AssistantMessage("No.", stop_reason=StopReason.REFUSAL)
    )
    await services.journal.record_stop(session.id, StopKind.REFUSED, "The model refused.")
    await services.dismiss_resume(session.id)
    info = await services.resume_info(session.id)
    assert info.point is None and info.blocked_reason == "refused" and info.dismissed
    assert info.stop is None


async def test_an_empty_conversation_can_be_dismissed(services: AppServices) -> None:
    session = await services.new_session()
    await services.dismiss_resume(session.id)
    dismissal = await services.journal.dismissal(session.id)
    assert dismissal is not None and dismissal.last_seq == -1 == dismissal.current_seq
    assert (await services.resume_info(session.id)).dismissed
    assert await services.journal.dismissals() == {session.id: dismissal}


async def test_deleting_a_conversation_deletes_its_dismissal(services: AppServices) -> None:
    session_id = await interrupted(services)
    await services.dismiss_resume(session_id)
    assert await services.delete_session(session_id)
    assert await services.journal.dismissal(session_id) is None


def _dismissal(last: int, now: int, point: str = "call_model", at: float = 100.0) -> Dismissal:
    return Dismissal("s", last, point, at, now)


def _stop(at: float) -> StopRecord:
    return StopRecord("s", StopKind.STOPPED, "x", at)


@pytest.mark.parametrize(
    ("dismissal", "point", "stop", "covers"),
    [
        (_dismissal(3, 3), "call_model", None, True),
        (_dismissal(3, 3), "call_model", _stop(99.0), True),  # the stop that was dismissed
        (_dismissal(3, 3), "call_model", _stop(100.0), True),
        (_dismissal(3, 3), "call_model", _stop(101.0), False),  # stopped again since
        (_dismissal(3, 4), "call_model", None, False),  # a message was added since
        (_dismissal(3, 3), "retry_response", None, False),  # another resume state
        (_dismissal(-1, -1, "empty"), "empty", None, True),
    ],
)
def test_what_a_dismissal_covers(
    dismissal: Dismissal, point: str, stop: StopRecord | None, covers: bool
) -> None:
    assert dismissal.covers(point, stop) is covers
