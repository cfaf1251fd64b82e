"""A damaged, too-new, read-only or full database, and two processes on one data folder:
each gets a clear error, nothing saved is lost, and no half-written row is left behind."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import AssistantMessage, ResumeKind, UserMessage
from app.errors import (
    StorageCorruptError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
    StorageVersionError,
)
from app.events import TextDeltaEvent
from app.services import DATABASE_FILE, AppServices, SessionLockedError
from app.simulator import Reply
from app.storage.journal import StopKind

from .conftest import BOUND, open_services

APP_CHILD = Path(__file__).parents[1] / "crash" / "app_child.py"


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def read_bytes(path: str | Path) -> bytes:
    return Path(path).read_bytes()


async def make_conversation(data: Path) -> str:
    """A closed data folder holding one completed exchange; returns the session id."""
    services = await open_services(data)
    session = await services.new_session("kept")
    async with asyncio.timeout(BOUND):
        [e async for e in services.stream(session.id, "the question that must survive")]
    await services.close()
    return session.id


async def assert_intact(data: Path, session_id: str) -> None:
    services = AppServices(data)
    try:
        await services.open()
        assert await services.history(session_id) == [
            UserMessage("the question that must survive"),
            AssistantMessage("the question that must survive", model="sim-echo"),
        ] or [type(m) for m in await services.history(session_id)] == [
            UserMessage,
            AssistantMessage,
        ]
        assert await services.storage.storage.integrity_check() == ["ok"]
    finally:
        await services.close()


# --- damaged and too-new files ------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage", ["truncated to half", "truncated to 100 bytes", "garbage header", "random bytes"]
)
async def test_a_damaged_database_is_refused_untouched_then_kept_aside(
    tmp_path: Path, damage: str
) -> None:
    data = tmp_path / "data"
    await make_conversation(data)
    db = data / DATABASE_FILE
    original = db.read_bytes()
    if damage == "truncated to half":
        db.write_bytes(original[: len(original) // 2])
    elif damage == "truncated to 100 bytes":
        db.write_bytes(original[:100])
    elif damage == "garbage header":
        db.write_bytes(b"\xde\xad\xbe\xef" * 25 + original[100:])
    else:
        db.write_bytes(os.urandom(len(original)))
    damaged = db.read_bytes()
    before = snapshot(data)

    services = AppServices(data)
    with pytest.raises(StorageCorruptError) as caught:
        await services.open()
    message = str(caught.value)
    assert "damaged" in message and "untouched" in message and "Traceback" not in message
    assert snapshot(data) == before  # not a byte written, no -wal/-shm left behind

    kept = services.set_aside_damaged_database()
    assert re.fullmatch(r"continuum\.damaged-\d{8}-\d{6}\.sqlite", kept.name)
    assert kept.parent == data and kept.read_bytes() == damaged and not db.exists()
    await services.open()  # starts cleanly with an empty database
    assert await services.list_sessions() == []
    assert await services.storage.storage.integrity_check() == ["ok"]
    await services.close()
    assert kept.read_bytes() == damaged  # still there, never deleted


async def test_setting_aside_never_overwrites_an_earlier_copy(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    kept = []
    for n in range(3):
        (data / DATABASE_FILE).write_bytes(b"not a database %d" % n)
        (data / f"{DATABASE_FILE}-wal").write_bytes(b"wal %d" % n)
        services = AppServices(data)
        with pytest.raises(StorageCorruptError):
            await services.open()
        kept.append(services.set_aside_damaged_database())
        await services.close()
    assert len(set(kept)) == 3  # same second, three different names
    assert [p.read_bytes() for p in kept] == [b"not a database %d" % n for n in range(3)]
    assert [read_bytes(f"{p}-wal") for p in kept] == [b"wal %d" % n for n in range(3)]
    assert not (data / f"{DATABASE_FILE}-wal").exists()


async def test_an_open_database_is_never_set_aside(tmp_path: Path) -> None:
    services = AppServices(tmp_path)
    await services.open()
    with pytest.raises(RuntimeError):
        services.set_aside_damaged_database()
    await services.close()
    assert (tmp_path / DATABASE_FILE).exists()


async def test_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await make_conversation(data)
    with contextlib.closing(sqlite3.connect(data / DATABASE_FILE)) as conn:
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
    before = snapshot(data)
    services = AppServices(data)
    with pytest.raises(StorageVersionError, match="newer version of Continuum") as caught:
        await services.open()
    assert "update Continuum" in str(caught.value) and "untouched" in str(caught.value)
    await services.close()
    assert snapshot(data) == before


# --- read-only folder and full disk -------------------------------------------------------------


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` (a folder or a file) read-only, even for root (a read-only bind mount)."""
    if os.geteuid() != 0:
        files = [path, *path.rglob("*")] if path.is_dir() else [path]
        modes = {p: p.stat().st_mode for p in files}
        for p in files:
            p.chmod(0o555 if p.is_dir() else 0o444)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    try:
        subprocess.run(
            ["mount", "--bind", str(path), str(path)], check=True, capture_output=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"running as root without permission to mount a read-only folder: {err}")
    try:
        subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(path), str(path)],
            check=True,
            capture_output=True,
            timeout=10,
        )
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True, capture_output=True, timeout=10)


async def test_a_read_only_data_folder_gives_a_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    session_id = await make_conversation(data)
    before = snapshot(data)
    with read_only(data):
        services = AppServices(data)
        with pytest.raises(StorageReadOnlyError) as caught:
            await services.open()
        assert re.search(r"read-only|can be written", str(caught.value)), caught.value
        await services.close()
    assert snapshot(data) == before
    await assert_intact(data, session_id)


async def test_a_read_only_database_file_is_refused_at_open_saying_what_to_do(
    tmp_path: Path,
) -> None:
    """A read-only file in a writable folder used to open silently and fail at the first send
    (issue 11, item 13): it is refused at open, with what happened and what to do."""
    data = tmp_path / "data"
    session_id = await make_conversation(data)
    db = data / DATABASE_FILE
    before = snapshot(data)
    with read_only(db):
        services = AppServices(data)
        with pytest.raises(StorageReadOnlyError) as caught:
            await services.open()
        message = str(caught.value)
        assert "read-only" in message and str(db) in message, message
        assert "writable" in message or "permissions" in message, message
        assert "Traceback" not in message
        await services.close()
    assert snapshot(data) == before
    await assert_intact(data, session_id)


async def limit_pages(services: AppServices, headroom: int) -> None:
    """Make the database "full" ``headroom`` pages from now (SQLite's max_page_count)."""

    async def op(conn: object) -> None:
        async with conn.execute("PRAGMA page_count") as cursor:  # type: ignore[attr-defined]
            (pages,) = await cursor.fetchone()
        await conn.execute(f"PRAGMA max_page_count = {pages + headroom}")  # type: ignore[attr-defined]

    await services.storage.storage.database.write(op)


def row_counts(db: Path) -> tuple[int, int, int]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        counted = conn.execute("SELECT sum(message_count) FROM sessions").fetchone()[0]
        indexed = conn.execute("SELECT count(*) FROM messages_fts").fetchone()[0]
        return messages, counted, indexed


async def test_a_full_disk_refuses_a_message_that_does_not_fit(tmp_path: Path) -> None:
    data = tmp_path / "data"
    session_id = await make_conversation(data)
    services = await open_services(data)
    await limit_pages(services, 4)
    with pytest.raises(StorageFullError) as caught:
        [e async for e in services.stream(session_id, "x " * 500_000)]
    assert "full" in str(caught.value) and "intact" in str(caught.value)
    assert len(await services.history(session_id)) == 2  # the last completed message is intact
    info = await services.resume_info(session_id)
    assert info.blocked_reason == "completed"
    await services.close()
    assert row_counts(data / DATABASE_FILE) == (2, 2, 2)  # no half-written rows anywhere
    await assert_intact(data, session_id)


async def test_a_full_disk_mid_request_keeps_the_question_and_says_why(tmp_path: Path) -> None:
    data = tmp_path / "data"
    session_id = await make_conversation(data)
    services = await open_services(data)
    services._simulator.enqueue(Reply(text="an answer far too long to fit " * 20_000))
    await limit_pages(services, 12)
    with pytest.raises(StorageFullError):
        [e async for e in services.stream(session_id, "a short question")]
    info = await services.resume_info(session_id)
    assert info.point is not None and info.point.kind is ResumeKind.CALL_MODEL
    assert info.stop is not None and info.stop.kind is StopKind.STORAGE, info.stop
    assert "full" in info.stop.message
    await services.close()
    assert row_counts(data / DATABASE_FILE) == (3, 3, 3)
    services = await open_services(data)  # space is back: resume finishes
    try:
        async with asyncio.timeout(BOUND):
            [e async for e in services.stream_resume(session_id)]
        assert (await services.resume_info(session_id)).blocked_reason == "completed"
    finally:
        await services.close()


async def test_a_really_full_disk(tmp_path: Path) -> None:
    """A tiny tmpfs: the error comes from the file system (ENOSPC), not from SQLite's limit."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
            check=True,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"cannot mount a tmpfs here: {err}")
    try:
        data = mount / "data"
        session_id = await make_conversation(data)
        services = await open_services(data)
        try:
            with pytest.raises(StorageError, match="full|disk") as caught:
                [e async for e in services.stream(session_id, "y " * 400_000)]
            assert "Traceback" not in str(caught.value)
            assert len(await services.history(session_id)) == 2
        finally:
            await services.close()
        await assert_intact(data, session_id)
    finally:
        subprocess.run(["umount", str(mount)], check=True, capture_output=True, timeout=10)


@contextlib.contextmanager
def tiny_disk(tmp_path: Path, size: str = "2m") -> Iterator[Path]:
    """A real small tmpfs (we run as root); skipped where mounting is not allowed."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
            check=True,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"cannot mount a tmpfs here: {err}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True, capture_output=True, timeout=10)


def fill_to_the_last_byte(folder: Path) -> Path:
    """Write a filler file until the file system has 0 bytes free; returns the filler."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as handle:
        for size in (1 << 16, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    handle.write(b"\0" * size)
    assert os.statvfs(folder).f_bavail == 0
    return filler


async def test_at_zero_bytes_free_the_stop_record_still_says_disk_full(tmp_path: Path) -> None:
    """The disk fills to its last byte while an answer streams: the next launch must say
    "disk full", not "closed unexpectedly" (issue 11, item 13)."""
    with tiny_disk(tmp_path) as mount:
        data = mount / "data"
        session_id = await make_conversation(data)
        services = await open_services(data)
        services._simulator.enqueue(Reply(text="a long answer " * 5_000))
        filler: Path | None = None
        try:
            with pytest.raises(StorageError, match="full"):
                async with asyncio.timeout(BOUND):
                    async for event in services.stream(session_id, "a question"):
                        if filler is None and isinstance(event, TextDeltaEvent):
                            filler = fill_to_the_last_byte(mount)
        finally:
            await services.close()
        assert filler is not None
        filler.unlink()  # the person frees some space and starts Continuum again

        services = AppServices(data)
        try:
            await services.open()
            info = await services.resume_info(session_id)
            assert info.stop is not None, info
            assert info.stop.kind is StopKind.STORAGE and "full" in info.stop.message, info.stop
            assert "unexpectedly" not in info.stop.message
            assert await services.journal.running_markers() == []
        finally:
            await services.close()
        # The reserve that made room is back for the next time.
        assert (data / "continuum.reserve").stat().st_size > 0


# --- two processes ------------------------------------------------------------------------------


async def test_a_second_process_cannot_run_a_conversation_the_first_is_running(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, str(APP_CHILD), str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    services: AppServices | None = None
    try:
        assert proc.stdout is not None
        session_id = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "STREAMING"
        services = await open_services(data)
        assert (await services.resume_info(session_id)).stop is None  # alive: not a crash
        for attempt in (
            lambda: services.stream(session_id, "me too"),  # type: ignore[union-attr]
            lambda: services.stream_resume(session_id),
        ):  # type: ignore[union-attr]
            with pytest.raises(SessionLockedError, match="another Continuum window"):
                [e async for e in attempt()]
        with pytest.raises(SessionLockedError):
            await services.delete_session(session_id)
        assert not services.try_lock_session(session_id)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert services.try_lock_session(session_id)  # the kernel released the dead one's lock
        services.release_session(session_id)
        async with asyncio.timeout(BOUND):
            [e async for e in services.stream_resume(session_id)]
        info = await services.resume_info(session_id)
        assert info.blocked_reason == "completed" and info.stop is None
        assert await services.journal.running_markers() == []
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        if services is not None:
            await services.close()


async def test_open_recovering_keeps_a_damaged_database_aside_and_starts_cleanly(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    damaged = b"this is not a database at all" * 100
    (data / DATABASE_FILE).write_bytes(damaged)
    services = AppServices(data)
    kept = await services.open_recovering()
    assert kept is not None and kept.read_bytes() == damaged  # kept, byte for byte
    assert kept.name.startswith("continuum.damaged-")
    assert await services.list_sessions() == []  # a clean, working start
    await services.new_session("fresh")
    await services.close()
    again = AppServices(data)
    assert await again.open_recovering() is None  # the new database is healthy
    assert [s.title for s in await again.list_sessions()] == ["fresh"]
    await again.close()
