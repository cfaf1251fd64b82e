"""The app's services over a real data folder, a real simulator and real child processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app import (
    AgentEvent,
    EventType,
    ProviderServerError,
    ResumeKind,
    SessionBusyError,
    UserMessage,
)
from app.discovery import discover_local_servers
from app.locks import SessionLocks
from app.services import AppServices, SessionLockedError
from app.settings import Settings, load_settings, save_settings
from app.simulator import Fault, FaultKind, Reply
from app.storage.journal import StopKind

APP_CHILD = Path(__file__).parents[2] / "crash" / "app_child.py"


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    await svc.start_simulator(tokens_per_second=0)
    await svc.configure_model()
    yield svc
    await svc.close()


async def drain(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [e async for e in events]


async def start_stalled_request(
    services: AppServices, session_id: str, words: str, after: int
) -> asyncio.Future[None]:
    """A request whose answer stalls after ``after`` chunks; returns once text is on screen."""
    services._simulator.enqueue(Reply(text=words, fault=Fault(FaultKind.STALL, after=after)))
    seen = asyncio.Event()

    async def consume() -> None:
        async for event in services.stream(session_id, "talk"):
            if event.type is EventType.TEXT_DELTA:
                seen.set()

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(seen.wait(), 10)
    return task


async def test_a_request_through_the_simulator(services: AppServices) -> None:
    session = await services.new_session("first")
    events = await drain(services.stream(session.id, "hello simulator"))
    assert events[-1].type is EventType.RUN_COMPLETED
    assert events[-1].reply.content == "hello simulator"  # type: ignore[union-attr]
    info = await services.resume_info(session.id)
    assert info.point is None and info.blocked_reason == "completed"
    assert info.stop is None and info.draft is None
    assert services.settings.provider_kind == "simulator"
    assert "sim-echo" in await services.list_models()


async def test_stop_records_why_keeps_the_draft_and_resume_clears_them(
    services: AppServices,
) -> None:
    session = await services.new_session()
    task = await start_stalled_request(services, session.id, "one two three four five six", 3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    info = await services.resume_info(session.id)
    assert info.stop is not None and info.stop.kind is StopKind.STOPPED
    assert info.stop.message == "You stopped this answer."
    assert info.draft and info.draft.startswith("one")  # what was on screen
    assert info.point is not None and info.point.kind is ResumeKind.CALL_MODEL
    assert await services.history(session.id) == [UserMessage("talk")]  # the draft is not history
    assert session.id in await services.resumable_sessions()
    events = await drain(services.stream_resume(session.id))
    assert events[-1].type is EventType.RUN_COMPLETED
    info = await services.resume_info(session.id)
    assert info.stop is None and info.draft is None and info.point is None


async def test_connection_drop_after_output_is_explained(services: AppServices) -> None:
    services._simulator.enqueue(
        Reply(text="alpha beta gamma delta epsilon", fault=Fault(FaultKind.DROP, after=3))
    )
    session = await services.new_session()
    with pytest.raises(Exception) as caught:
        await drain(services.stream(session.id, "go"))
    info = await services.resume_info(session.id)
    assert info.stop is not None and info.stop.kind is StopKind.CONNECTION
    assert info.stop.message.startswith("The connection to the provider dropped")
    assert "Traceback" not in info.stop.message and str(caught.value) in info.stop.message
    assert info.point is not None and info.point.kind is ResumeKind.RETRY_RESPONSE


async def test_provider_error_message_is_kept(services: AppServices) -> None:
    services._simulator.enqueue(*[Fault(FaultKind.STATUS, status=503)] * 3)
    session = await services.new_session()
    services.client.defaults = services.client.defaults.__class__(
        "default", retry=services.client.defaults.retry.__class__(base_delay=0.001)
    )
    with pytest.raises(ProviderServerError):
        await drain(services.stream(session.id, "go"))
    info = await services.resume_info(session.id)
    assert info.stop is not None and info.stop.kind is StopKind.PROVIDER_ERROR
    assert info.stop.message.startswith("The provider reported an error:")
    assert info.point is not None and info.point.kind is ResumeKind.CALL_MODEL


async def test_output_limit_is_recorded(services: AppServices) -> None:
    services._simulator.enqueue("length;text=cut here")
    session = await services.new_session()
    await drain(services.stream(session.id, "go"))
    info = await services.resume_info(session.id)
    assert info.stop is not None and info.stop.kind is StopKind.OUTPUT_LIMIT
    assert info.point is not None and info.point.kind is ResumeKind.CONTINUE_RESPONSE


async def test_search_and_export(services: AppServices) -> None:
    session = await services.new_session("Bread")
    await drain(services.stream(session.id, "sourdough starter feeding schedule"))
    other = await services.new_session("Other")
    await drain(services.stream(other.id, "unrelated words"))
    hits = await services.search("sourd")
    assert {h.session_id for h in hits} == {session.id}
    assert all("[sourdough]" in h.snippet for h in hits)
    assert await services.search('"; DROP TABLE messages; --') == []
    markdown = await services.export_markdown(session.id)
    assert markdown.startswith("# Bread") and "## You" in markdown and "sourdough" in markdown
    document = json.loads(await services.export_json(session.id))
    assert document["format"] == "continuum-conversation"
    assert [m["seq"] for m in document["messages"]] == [1, 2]
    assert await services.delete_session(session.id)
    assert await services.search("sourdough") == []


async def test_crash_leaves_a_marker_that_becomes_crashed_with_the_draft(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, str(APP_CHILD), str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        session_id = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "STREAMING", proc.stderr.read()  # type: ignore[union-attr]
        other = AppServices(data)
        await other.open()  # while the child lives: its request is not mistaken for a crash
        assert (await other.resume_info(session_id)).stop is None
        with pytest.raises(SessionLockedError):  # and it cannot be run from here
            await drain(other.stream(session_id, "me too"))
        await other.close()
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    services = AppServices(data)
    await services.open()
    info = await services.resume_info(session_id)
    assert info.stop is not None and info.stop.kind is StopKind.CRASHED
    assert "closed unexpectedly" in info.stop.message
    # The draft is what was on screen at the last throttled save: a prefix of the answer.
    assert info.draft and "The first words of an answer that never".startswith(info.draft)
    assert info.point is not None and info.point.kind is ResumeKind.CALL_MODEL
    assert services.try_lock_session(session_id)  # the dead holder's lock is gone
    services.release_session(session_id)
    assert await services.storage.storage.integrity_check() == ["ok"]
    await services.close()


def test_session_locks_exclude_each_other(tmp_path: Path) -> None:
    first, second = SessionLocks(tmp_path), SessionLocks(tmp_path)
    assert first.acquire("s") and first.acquire("s")
    assert not second.acquire("s") and second.is_locked_elsewhere("s")
    first.release("s")
    assert second.acquire("s") and not first.acquire("s")
    second.release_all()


def test_settings_round_trip_and_unreadable_file(tmp_path: Path) -> None:
    settings = Settings(
        provider_kind="openai",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        system_prompt="Be kind.",
        api_key_env="MY_KEY",
    )
    save_settings(tmp_path, settings)
    assert load_settings(tmp_path).settings == settings
    stored = json.loads((tmp_path / "settings.json").read_text())
    assert not {k for k in stored if "key" in k} - {"api_key_env"}  # a variable's name, no key
    (tmp_path / "settings.json").write_text("{not json")
    loaded = load_settings(tmp_path)
    assert loaded.settings == Settings() and loaded.problem and "defaults" in loaded.problem
    assert list(tmp_path.glob("settings.unreadable-*.json"))


async def test_discovery_finds_a_server_on_a_given_port(services: AppServices) -> None:
    port = int(services._simulator.base_url.rsplit(":", 1)[1])
    found = await discover_local_servers((("Test server", port), ("Nothing here", 9)))
    assert [s.name for s in found] == ["Test server"]
    assert "sim-echo" in found[0].models


async def test_no_provider_gives_a_clear_error(tmp_path: Path) -> None:
    svc = AppServices(tmp_path / "fresh")
    await svc.open()
    session = await svc.new_session()
    with pytest.raises(Exception, match="No model provider is set up yet"):
        await drain(svc.stream(session.id, "hi"))
    await svc.close()


async def test_a_request_keeps_a_lock_the_window_already_held(
    services: AppServices, tmp_path: Path
) -> None:
    session = await services.new_session()
    assert services.try_lock_session(session.id)  # the window opened the conversation
    await drain(services.stream(session.id, "hello"))
    other = SessionLocks(services.data_dir / "locks")
    assert other.is_locked_elsewhere(session.id)  # still ours after the request
    services.release_session(session.id)
    assert not other.is_locked_elsewhere(session.id)
    # Without a lock held before, the request releases the one it took.
    await drain(services.stream(session.id, "again"))
    assert not other.is_locked_elsewhere(session.id)


async def test_a_second_request_in_the_same_process_leaves_the_first_alone(
    services: AppServices,
) -> None:
    session = await services.new_session()
    task = await start_stalled_request(services, session.id, "one two three four five", 2)
    with pytest.raises(SessionBusyError):  # a double click, or Resume while it runs
        await drain(services.stream_resume(session.id))
    # The live request's marker and state are untouched, and it cannot be deleted under it.
    assert [m.session_id for m in await services.journal.running_markers()] == [session.id]
    assert (await services.resume_info(session.id)).stop is None
    with pytest.raises(SessionLockedError):
        await services.delete_session(session.id)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    info = await services.resume_info(session.id)
    assert info.stop is not None and info.stop.kind is StopKind.STOPPED


async def test_leaving_after_the_answer_is_not_recorded_as_a_stop(services: AppServices) -> None:
    session = await services.new_session()
    stream = services.stream(session.id, "hello")
    async for event in stream:
        if event.type is EventType.RUN_COMPLETED:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    info = await services.resume_info(session.id)
    assert info.stop is None and info.blocked_reason == "completed"
    assert await services.journal.running_markers() == []
