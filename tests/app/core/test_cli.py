"""``continuum-chat`` as a person uses it: a real process on a pipe, Ctrl+C sent as SIGINT.

The model is the simulator on loopback HTTP (in this process, on its own thread); the database
is a real file, shared with other ``continuum-chat`` processes and the desktop services.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.messages import UserMessage
from app.services import DATABASE_FILE, AppServices
from app.simulator import Fault, Reply, SimulatorThread
from app.storage.sqlite import SQLiteSessionExtension

ROOT = Path(__file__).resolve().parents[3]
WAIT = 30.0  # a guard against hanging, never a measured time
READ_SYSCALL = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine)


class Console:
    """A ``continuum-chat`` process, its output collected as it comes."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        self._out = b""
        self._changed = threading.Condition()
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while chunk := os.read(fd, 4096):
            with self._changed:
                self._out += chunk
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def out(self) -> str:
        with self._changed:
            return self._out.decode(errors="replace")

    def wait_for(self, text: str, count: int = 1) -> None:
        with self._changed:
            found = self._changed.wait_for(
                lambda: (
                    self._out.decode(errors="replace").count(text) >= count
                    or not self._pump.is_alive()
                ),
                WAIT,
            )
        assert found and self.out.count(text) >= count, f"no {text!r} in:\n{self.out}"

    def wait_reading_stdin(self) -> None:
        """Until the process is blocked reading its stdin (a signal sent earlier could land
        between the prompt and the read, which no REPL can tell from typing)."""
        if READ_SYSCALL is None:
            return
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            for task in Path(f"/proc/{self.proc.pid}/task").iterdir():  # any thread
                with contextlib.suppress(OSError):
                    fields = (task / "syscall").read_text().split()
                    if fields[:1] == [str(READ_SYSCALL)] and int(fields[1], 16) == 0:
                        return
            time.sleep(0.01)  # no event tells us a process entered read(2)
        pytest.fail("continuum-chat never waited for input")

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def finish(self, *lines: str) -> tuple[int, str, str]:
        for line in lines:
            self.type(line)
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(WAIT)
        self._pump.join(WAIT)
        assert self.proc.stderr is not None
        err = self.proc.stderr.read().decode(errors="replace")
        self.proc.stderr.close()
        self.proc.stdout.close()  # type: ignore[union-attr]
        return code, self.out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def sim() -> Iterator[SimulatorThread]:
    with SimulatorThread(tokens_per_second=0) as running:
        yield running


def _waiting_conversation(data: Path, session_id: str) -> None:
    data.mkdir(parents=True, exist_ok=True)

    async def make() -> None:
        ext = SQLiteSessionExtension(data / DATABASE_FILE)
        try:
            await ext.storage.create_session(session_id)
            await ext.storage.append(session_id, "r0", UserMessage("are you there"))
        finally:
            await ext.storage.close()

    asyncio.run(make())


def _history_length(data: Path, session_id: str) -> int:
    async def count() -> int:
        ext = SQLiteSessionExtension(data / DATABASE_FILE)
        try:
            return len(await ext.storage.load(session_id))
        finally:
            await ext.storage.close()

    return asyncio.run(count())


def _chat(data: Path, sim: SimulatorThread, session_id: str = "cli") -> Console:
    return Console(
        "--data-dir", str(data), "--openai", sim.openai_base_url, "--session", session_id
    )


# --- Ctrl+C at the prompt ---------------------------------------------------------------------


def test_ctrl_c_at_the_idle_prompt_clears_the_line_and_prompts_again(
    tmp_path: Path,
    sim: SimulatorThread,
) -> None:
    chat = _chat(tmp_path / "data", sim)
    try:
        chat.wait_for("> ")
        chat.wait_reading_stdin()
        chat.proc.send_signal(signal.SIGINT)  # Ctrl+C
        chat.wait_for("> ", count=2)  # a fresh prompt, the process still answering
        chat.type("hello after ctrl c")  # the next line is read, not swallowed
        chat.wait_for("hello after ctrl c")
        code, out, err = chat.finish("/quit")
    finally:
        chat.kill()
    assert code == 0, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert len(sim.requests) == 1


def test_ctrl_d_at_the_prompt_exits_cleanly(tmp_path: Path, sim: SimulatorThread) -> None:
    chat = _chat(tmp_path / "data", sim)
    try:
        chat.wait_for("> ")
        code, out, err = chat.finish()  # end of input: what Ctrl+D sends
    finally:
        chat.kill()
    assert code == 0 and not err, out + err


def test_ctrl_c_during_an_answer_stops_it_and_the_chat_goes_on(
    tmp_path: Path,
    sim: SimulatorThread,
) -> None:
    sim.enqueue(Reply(text="alpha beta gamma delta", fault=Fault.stall_after(3)))
    chat = _chat(tmp_path / "data", sim)
    try:
        chat.wait_for("> ")
        chat.type("talk to me")
        chat.wait_for("alpha")  # the answer is streaming, then the server goes silent
        chat.proc.send_signal(signal.SIGINT)
        chat.wait_for("stopped")
        chat.wait_for("> ", count=2)
        chat.type("/resume")
        chat.wait_for("talk to me", count=1)
        code, out, err = chat.finish("/quit")
    finally:
        chat.kill()
    assert code == 0, out + err
    assert len(sim.requests) == 2 and "Traceback" not in err


# --- the conversation claim -------------------------------------------------------------------


def test_two_chats_cannot_answer_one_conversation_at_once(
    tmp_path: Path,
    sim: SimulatorThread,
) -> None:
    data = tmp_path / "data"
    _waiting_conversation(data, "shared")
    sim.enqueue(Reply(text="first answer coming", fault=Fault.stall_after(3)))
    first = _chat(data, sim, "shared")
    try:
        first.wait_for("> ")
        first.type("/resume")
        first.wait_for("first")  # the first chat is answering (and stays in the request)
        second = _chat(data, sim, "shared")
        try:
            code, out, err = second.finish("/resume", "/quit")
        finally:
            second.kill()
        assert code == 0 and "Traceback" not in err, out + err
        assert "another Continuum process" in out, out
        assert len(sim.requests) == 1  # the second chat never asked the model
    finally:
        first.kill()  # SIGKILL: its claim dies with it
    after = _chat(data, sim, "shared")
    try:
        code, out, err = after.finish("/resume", "/quit")
    finally:
        after.kill()
    assert code == 0 and "another Continuum process" not in out, out + err
    assert len(sim.requests) == 2


def test_a_chat_is_refused_a_conversation_the_app_has_open(
    tmp_path: Path,
    sim: SimulatorThread,
) -> None:
    data = tmp_path / "data"
    _waiting_conversation(data, "in-app")
    services = AppServices(data)
    assert services.try_lock_session("in-app")  # the window opened it (or awaits an approval)
    try:
        chat = _chat(data, sim, "in-app")
        try:
            code, out, err = chat.finish("/resume", "hello", "/quit")
        finally:
            chat.kill()
        assert code == 0 and "Traceback" not in err, out + err
        assert out.count("another Continuum process") == 2, out
        assert sim.requests == [] and _history_length(data, "in-app") == 1  # nothing written
    finally:
        services.release_session("in-app")
    chat = _chat(data, sim, "in-app")
    try:
        code, out, err = chat.finish("/resume", "/quit")
    finally:
        chat.kill()
    assert code == 0 and "are you there" in out, out + err  # the simulator echoes it
    assert _history_length(data, "in-app") == 2


# --- an unusable data folder ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_an_unusable_data_dir_is_a_clear_error_without_traceback(
    tmp_path: Path,
    where: str,
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    data = blocker if where == "a file" else blocker / "data"
    chat = Console("--data-dir", str(data))
    try:
        code, out, err = chat.finish("/quit")
    finally:
        chat.kill()
    assert code == 1, out + err
    assert "Traceback" not in err and str(data) in err and "--data-dir" in err, err
    assert blocker.read_text() == "x"


# --- a full context is a dead end, not "type /resume" -----------------------------------------


def test_a_full_context_says_what_to_do_instead_of_resume(
    tmp_path: Path, sim: SimulatorThread
) -> None:
    """Resending a conversation that no longer fits fails the same way: the chat says to start
    a new one (or use a bigger model), and /resume does not send the same request again."""
    sim.enqueue(Reply(text="unused", fault=Fault.context_full()))
    chat = _chat(tmp_path / "data", sim)
    try:
        chat.wait_for("> ")
        chat.type("a very long question")
        chat.wait_for("no longer fits")
        chat.wait_for("> ", count=2)
        chat.type("/resume")
        chat.wait_for("nothing to resume")  # the core's own context_full answer
        chat.wait_for("> ", count=3)
        chat.type("/new")
        chat.wait_for("new conversation")
        code, out, err = chat.finish("/quit")
    finally:
        chat.kill()
    assert code == 0, out + err
    assert "type /resume to continue" not in out.split("no longer fits")[0].splitlines()[-1]
    assert len(sim.requests) == 1 and "Traceback" not in err
