"""Bugs reach the crash path: an unexpected exception in a request is logged with its traceback
and shown as an internal error; the services' clean-up failures leave a log line; cancellation
is never swallowed. Real data folder and database; the failing parts are real models/tasks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from app import EventType, ModelRequest, TextDelta
from app.model import ModelEvent
from app.services import AppServices
from app.storage.journal import StopKind


class BuggyModel:
    """Streams a little text, then hits a programming error (a bug, not a provider error)."""

    name = "buggy"

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.closed = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield TextDelta("partial answer ")
        raise self.error

    async def aclose(self) -> None:
        raise RuntimeError("the connection pool is in a bad state")


@pytest.fixture
async def services(tmp_path: Path) -> AsyncIterator[AppServices]:
    svc = AppServices(tmp_path / "data")
    await svc.open()
    yield svc
    await svc.close()


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """A file handler on the root logger, as the app installs (the text names its path)."""
    path = tmp_path / "logs" / "continuum.log"
    path.parent.mkdir()
    handler = logging.FileHandler(path, encoding="utf-8")
    root = logging.getLogger()
    root.addHandler(handler)
    yield path
    root.removeHandler(handler)
    handler.close()


@pytest.mark.parametrize(
    "error",
    [RuntimeError("step state lost"), KeyError("tool_call_id")],
    ids=["RuntimeError", "KeyError"],
)
async def test_a_bug_in_a_request_is_an_internal_error_with_a_traceback_in_the_log(
    services: AppServices,
    log_file: Path,
    caplog: pytest.LogCaptureFixture,
    error: BaseException,
) -> None:
    services.client.model = BuggyModel(error)
    session = await services.new_session()
    seen: list[EventType] = []
    with pytest.raises(type(error)):
        async for event in services.stream(session.id, "hello"):
            seen.append(event.type)
    assert EventType.TEXT_DELTA in seen

    info = await services.resume_info(session.id)
    assert info.stop is not None and info.stop.kind is StopKind.PROVIDER_ERROR
    assert info.stop.message.startswith(
        f"Continuum hit an internal error ({type(error).__name__}: "
    )
    assert f"the details are in the log at {log_file};" in info.stop.message
    assert "your conversation is saved" in info.stop.message
    assert info.resumable  # the partial answer was kept; Resume retries it

    bugs = [r for r in caplog.records if r.exc_info and r.exc_info[1] is error]
    assert bugs and bugs[0].levelno == logging.ERROR
    assert "in stream" in caplog.text and "raise self.error" in caplog.text  # the traceback
    assert "raise self.error" in await asyncio.to_thread(log_file.read_text, encoding="utf-8")


async def test_an_expected_provider_failure_stays_friendly_without_a_traceback(
    services: AppServices,
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = await services.new_session()  # no provider set up: NoModel explains
    with pytest.raises(Exception, match="No model provider is set up"):
        async for _event in services.stream(session.id, "hello"):
            pass
    info = await services.resume_info(session.id)
    assert info.stop is not None and "No model provider is set up" in info.stop.message
    assert not [r for r in caplog.records if r.exc_info]


async def test_a_model_that_fails_to_close_leaves_a_log_line(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    services = AppServices(tmp_path / "data")
    await services.open()
    services.client.model = BuggyModel(RuntimeError("unused"))
    await services.close()  # closing still finishes
    failures = [
        r
        for r in caplog.records
        if r.exc_info is not None and "connection pool is in a bad state" in str(r.exc_info[1])
    ]
    assert failures, caplog.text


async def test_a_notice_that_cannot_be_shown_leaves_a_log_line(
    services: AppServices,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken_status_bar(_text: str) -> None:
        raise RuntimeError("the status bar was deleted")

    services.notify = broken_status_bar
    session = await services.new_session()
    await services.set_workspace(session.id, str(tmp_path / "gone"))
    assert await services.workspace_tools(session.id) == []  # no file tools, no raise
    assert any(
        r.exc_info and "status bar was deleted" in str(r.exc_info[1]) for r in caplog.records
    ), caplog.text
