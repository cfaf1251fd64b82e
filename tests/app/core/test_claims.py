"""At most one process works on a conversation: the SQLite extension's cross-process claim.

Real processes resume one conversation of one database file through
``SQLiteSessionExtension`` against the simulator over loopback HTTP; the tool appends to a
side-effect log, so "ran twice" is a line too many.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import SessionBusyError
from app.locks import CLAIMS, SessionLocks, claim_file
from app.messages import UserMessage
from app.simulator import Reply, SimToolCall, SimulatorThread
from app.storage.sqlite import SQLiteSessionExtension

CHILD = Path(__file__).with_name("claim_child.py")
ROOT = Path(__file__).resolve().parents[3]
SESSION = "shared"


@pytest.fixture
def sim() -> Iterator[SimulatorThread]:
    with SimulatorThread(tokens_per_second=0) as running:
        yield running


def _waiting_conversation(db: Path) -> None:
    """A conversation whose last message is the person's: resuming it calls the model."""

    async def make() -> None:
        ext = SQLiteSessionExtension(db)
        try:
            await ext.storage.create_session(SESSION)
            await ext.storage.append(SESSION, "r0", UserMessage("please run the tool"))
        finally:
            await ext.storage.close()

    asyncio.run(make())


def _child(db: Path, base_url: str, log: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(db), SESSION, base_url, str(log), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def _wait_in_tool(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "IN_TOOL":
        proc.kill()
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"the holder did not reach its tool: {line!r}\n{err[-3000:]}")


def _log_lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_two_processes_resuming_at_once_run_the_tool_once(
    tmp_path: Path,
    sim: SimulatorThread,
) -> None:
    db, log = tmp_path / "c.sqlite", tmp_path / "side-effects.log"
    _waiting_conversation(db)
    # Two tool calls queued: on the old code the second process took the second one and ran
    # the tool as well; now the holder gets both and the second process never calls the model.
    sim.enqueue(
        Reply(tool_calls=(SimToolCall("side_effect", {}),)),
        Reply(tool_calls=(SimToolCall("side_effect", {}),)),
    )
    holder = _child(db, sim.openai_base_url, log, "hold")
    try:
        _wait_in_tool(holder)  # the first process is inside the tool, mid-request
        second = _child(db, sim.openai_base_url, log, "plain")
        out, err = second.communicate(timeout=60)  # refused at once: it never waits on `holder`
        assert second.returncode == 0, err[-3000:]
        assert out.startswith("BUSY "), out + err[-3000:]
        assert "another Continuum process" in out and "try again" in out
        out, err = holder.communicate("go\n", timeout=60)
        assert holder.returncode == 0 and "COMPLETED" in out, out + err[-3000:]
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate(timeout=30)
    ran = _log_lines(log)
    assert ran and set(ran) == {str(holder.pid)}  # only the holder ever ran the tool
    assert len(sim.requests) == len(ran) + 1  # and only its requests reached the model


def test_a_claim_dies_with_its_holder_killed_by_sigkill(
    tmp_path: Path,
    sim: SimulatorThread,
) -> None:
    db, log = tmp_path / "c.sqlite", tmp_path / "side-effects.log"
    _waiting_conversation(db)
    sim.enqueue(Reply(tool_calls=(SimToolCall("side_effect", {}),)))
    holder = _child(db, sim.openai_base_url, log, "hold")
    try:
        _wait_in_tool(holder)
        lock = claim_file(db, SESSION)
        assert SessionLocks.for_database(db).is_locked_elsewhere(SESSION)
        os.kill(holder.pid, signal.SIGKILL)
        holder.communicate(timeout=30)
        assert holder.returncode == -signal.SIGKILL
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate(timeout=30)
    assert lock.exists()  # the file stays; its lock died with the process
    assert not SessionLocks.for_database(db).is_locked_elsewhere(SESSION)
    after = _child(db, sim.openai_base_url, log, "plain")
    out, err = after.communicate(timeout=60)
    assert after.returncode == 0 and out.strip() == "COMPLETED", out + err[-3000:]
    # The killed call is answered as "may have run", not run again.
    assert _log_lines(log) == [str(holder.pid)]


def test_two_spellings_of_one_database_share_one_claim(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    assert claim_file(real / "c.sqlite", "s") == claim_file(tmp_path / "link" / "c.sqlite", "s")
    assert claim_file(real / "c.sqlite", "s") != claim_file(real / "d.sqlite", "s")
    assert claim_file(real / "c.sqlite", "s") != claim_file(real / "c.sqlite", "t")
    assert claim_file(real / "c.sqlite", "s").parent == real / "locks"


async def test_in_process_a_window_hold_and_a_request_claim_share_the_lock(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.sqlite"
    ext = SQLiteSessionExtension(db)
    window = SessionLocks.for_database(db)
    assert window.acquire("s")
    release = ext.claim_session("s")  # the same process: the hold does not refuse the claim
    window.release("s")
    assert CLAIMS.users_here(claim_file(db, "s")) == (frozenset(), 1)  # the claim still holds
    other_window = SessionLocks.for_database(db)
    assert other_window.is_locked_elsewhere("s")
    release()
    release()  # ending a claim twice is harmless
    assert CLAIMS.users_here(claim_file(db, "s")) == (frozenset(), 0)
    assert not other_window.is_locked_elsewhere("s")


async def test_a_lock_folder_that_cannot_be_created_is_a_clear_storage_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "locks").write_text("a file where the lock folder should be")
    ext = SQLiteSessionExtension(tmp_path / "c.sqlite")
    with pytest.raises(Exception, match="conversation lock file") as caught:
        ext.claim_session("s")
    assert not isinstance(caught.value, (OSError, SessionBusyError))
