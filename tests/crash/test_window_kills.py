"""``kill -9`` the real app (offscreen window, real composer, real database), then relaunch it.

Each test starts :mod:`tests.crash.window_child` — a QApplication on the app's event loop with
the real ``MainWindow(AppServices(...))`` and its in-process simulator — which types a message
into the composer and sends it. At the milestone (the streamed text on screen, or a tool that
has made its durable side effect and is still running) this process sends SIGKILL. Then, in
this process (a fresh one for the database):

* ``PRAGMA integrity_check`` is ``ok`` and sequence numbers are contiguous;
* the real window opens on the data folder (with a fresh simulator) and shows the Resume bar
  saying that Continuum closed unexpectedly, with the interrupted draft (a prefix of what the
  child had on screen) or the tool that may or may not have run;
* clicking Resume finishes the answer and hides the bar; the tool's side effect happened
  exactly once; the journal is clean and the file is still intact.

Three rounds per kill point (the streaming rounds stop at different lengths).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import keyring
import pytest

from app import AssistantMessage, ToolMessage, UserMessage
from app.resume import RECOVERED_TOOL_TEXT
from app.services import DATABASE_FILE
from app.simulator import Reply, Simulator
from app.storage.journal import StopKind
from tests.crash import window_child
from tests.crash.childproc import run_and_kill
from tests.ui.helpers import (
    MemoryKeyring,
    close_window,
    open_window,
    qasync_runner,
    until,
    window_on_simulator,
)
from ui.transcript.model import ItemKind, ToolState

T = TypeVar("T")
CHILD = Path(window_child.__file__)
ROOT = Path(__file__).resolve().parents[2]
MILESTONE_TIMEOUT = 40.0
RESUMED = "Here is the whole answer, after the crash."
#: Words on screen when the stream stalls, per streaming round (None: the whole answer).
STREAM_WORDS = (6, 17, None)


# --- fixtures (tests/ui's conftest is not in scope here; conftests must not import each other)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def run(qapp: Any) -> Iterator[Callable[..., Any]]:
    with qasync_runner(qapp) as runner:
        yield runner


# --- the child ---------------------------------------------------------------------------------


def kill_at(data_dir: Path, scenario: str, log: Path, milestone: str) -> dict[str, Any]:
    """Run the real app in a child, SIGKILL it when it prints ``milestone``; what it said."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["QT_QPA_PLATFORM"] = "offscreen"
    result = run_and_kill(
        [sys.executable, str(CHILD), str(data_dir), scenario, str(log)],
        stderr_path=data_dir.parent / "child.stderr",
        is_milestone=lambda line: line.split(" ", 1)[0] == milestone,
        timeout=MILESTONE_TIMEOUT,
        env=env,
        cwd=ROOT,
    )
    seen, tail = result.lines, result.stderr_tail
    assert result.reached, f"milestone {milestone} not reached; child said {seen}; stderr: {tail}"
    assert result.by_sigkill, f"exit {result.returncode}: {tail}"
    said: dict[str, Any] = {"lines": seen, "session": None, "screen": None}
    for line in seen:
        word, _, rest = line.partition(" ")
        if word == "SESSION":
            said["session"] = rest
        elif word == "SCREEN":
            said["screen"] = json.loads(rest)
    assert said["session"], seen
    return said


# --- checks on the file, before and after the relaunch -------------------------------------


def integrity(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def seqs_of(db: Path, session_id: str) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT seq FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            )
        ]


def side_effects(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def assert_crash_bar(window: Any, session_id: str) -> None:
    bar = window.resume_bar
    assert window.controller.session_id == session_id
    assert not window.controller.read_only  # the dead child's lock went with it
    text = bar.message.text()
    assert text.startswith("Continuum closed unexpectedly"), text
    assert bar.resume_button.isVisible() and bar.resume_button.text() == "Resume"
    assert bar.info is not None and bar.info.stop is not None
    assert bar.info.stop.kind is StopKind.CRASHED


async def resume_and_finish(window: Any, session_id: str, *, click: bool = True) -> list[Any]:
    """Click the real Resume button; wait for the answer; the bar hides. The history after."""
    model = window.transcript_model
    if click:
        window.resume_bar.resume_button.click()
        assert window.controller.busy
    await until(lambda: not window.controller.busy, 20, "the resumed answer")
    await until(lambda: not window.resume_bar.isVisible(), 10, "the bar hides")
    last = model.item(model.rowCount() - 1)
    assert last.kind is ItemKind.ASSISTANT and last.text == RESUMED, last
    assert window.controller.last_error is None
    info = await window.services.resume_info(session_id)
    assert info.point is None and info.blocked_reason == "completed", info
    assert info.stop is None and info.draft is None, info
    history: list[Any] = await window.services.history(session_id)
    return history


# --- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("round_", range(3))
def test_kill_real_app_while_streaming(run: Any, tmp_path: Path, round_: int) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "side_effects.log"
    words = STREAM_WORDS[round_]
    said = kill_at(data_dir, "streaming" + (f":{words}" if words else ""), log, "STREAMING")
    session_id, screen = said["session"], said["screen"]
    answer_words = window_child.answer_words(f"streaming:{words}" if words else "streaming")
    assert screen == "".join(answer_words)  # the child showed exactly what was streamed
    db = data_dir / DATABASE_FILE
    assert integrity(db) == "ok"
    assert seqs_of(db, session_id) == [1]  # the question; the unfinished answer is a draft

    async def relaunch() -> None:
        async with window_on_simulator(data_dir) as (sim, window):
            await until(window.resume_bar.isVisible, 10, "the Resume bar at launch")
            assert_crash_bar(window, session_id)
            model = window.transcript_model
            assert [i.kind for i in model.items()] == [ItemKind.USER, ItemKind.DRAFT]
            assert model.item(0).text == window_child.USER_TEXT
            draft = model.item(1).text
            # What was on screen at the last throttled save: a prefix of the child's screen.
            assert draft and screen.startswith(draft), (draft, screen)
            assert "closed unexpectedly" in model.item(1).detail

            sim.enqueue(Reply(text=RESUMED))
            history = await resume_and_finish(window, session_id)
            assert [type(m) for m in history] == [UserMessage, AssistantMessage]
            assert history[0] == UserMessage(window_child.USER_TEXT)
            assert history[1].content == RESUMED
            # The draft was never sent to the model: only the saved question was.
            sent = [m for m in sim.model_requests()[-1].json()["messages"] if m["role"] != "system"]
            assert [m["role"] for m in sent] == ["user"], sent
            seqs = [r.seq for r in await window.services.storage.storage.load_records(session_id)]
            assert seqs == [1, 2]

    run(relaunch(), timeout=45)
    assert side_effects(log) == []
    assert integrity(db) == "ok"


@pytest.mark.parametrize("round_", range(3))
def test_kill_real_app_mid_tool(run: Any, tmp_path: Path, round_: int) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "side_effects.log"
    tag = window_child.TOOL_TAG
    said = kill_at(data_dir, "mid_tool", log, "IN_TOOL")
    session_id = said["session"]
    assert side_effects(log) == [tag]  # the tool ran once before the kill
    db = data_dir / DATABASE_FILE
    assert integrity(db) == "ok"
    assert seqs_of(db, session_id) == [1, 2]  # the question and the call; no result

    async def relaunch() -> None:
        async with Simulator() as sim:
            window = await open_window(data_dir, sim.openai_base_url)

            def note(tag: str) -> str:
                """Write a note (the same side-effect log: a rerun would show twice)."""
                window_child.durable_append(str(log), tag)
                return f"noted {tag}"

            window.services.client.tools = (note,)
            try:
                await until(window.resume_bar.isVisible, 10, "the Resume bar at launch")
                assert_crash_bar(window, session_id)
                tools = window.resume_bar.tools
                assert tools.isVisible()
                assert "may or may not have run" in tools.text(), tools.text()
                assert "<b>note</b>" in tools.text() and tag in tools.text(), tools.text()
                cards = [i for i in window.transcript_model.items() if i.kind is ItemKind.TOOL]
                assert [(c.call.name, c.state) for c in cards] == [("note", ToolState.UNKNOWN)]

                sim.enqueue(Reply(text=RESUMED))
                history = await resume_and_finish(window, session_id)
                assert [type(m) for m in history] == [
                    UserMessage,
                    AssistantMessage,
                    ToolMessage,
                    AssistantMessage,
                ]
                assert history[1].tool_calls[0].id == f"call_{tag}"
                recovered = history[2]
                assert isinstance(recovered, ToolMessage)
                assert recovered.content == RECOVERED_TOOL_TEXT and not recovered.success
                seqs = [
                    r.seq for r in await window.services.storage.storage.load_records(session_id)
                ]
                assert seqs == [1, 2, 3, 4]
            finally:
                await close_window(window)

    run(relaunch(), timeout=45)
    assert side_effects(log) == [tag]  # exactly once: the resume did not run it again
    assert integrity(db) == "ok"


def test_kill_real_app_while_awaiting_approval(run: Any, tmp_path: Path) -> None:
    """Killed while the approval card asks: on relaunch the tool is shown as never run (not
    "may or may not have run"); Resume asks again; Allow writes the file exactly once."""
    from app.storage.journal import TOOL_STARTED
    from app.tools.workspace import Workspace

    data_dir, log = tmp_path / "data", tmp_path / "side_effects.log"
    call_id, name = window_child.APPROVAL_CALL_ID, window_child.APPROVAL_FILE
    said = kill_at(data_dir, "awaiting_approval", log, "AWAITING_APPROVAL")
    session_id = said["session"]
    ws = tmp_path / "ws"
    assert not (ws / name).exists()  # it never ran
    db = data_dir / DATABASE_FILE
    assert integrity(db) == "ok"
    assert seqs_of(db, session_id) == [1, 2]  # the question and the call; no result

    async def relaunch() -> None:
        async with Simulator() as sim:
            window = await open_window(data_dir, sim.openai_base_url)
            window.services.client.tools = tuple(Workspace(ws).tools())
            try:
                await until(window.resume_bar.isVisible, 10, "the Resume bar at launch")
                assert_crash_bar(window, session_id)
                info = window.resume_bar.info
                assert [c.id for c in info.awaiting_approval] == [call_id]
                assert info.may_have_run == ()
                tools = window.resume_bar.tools
                assert tools.isVisible()
                assert "did NOT run" in tools.text() and "never started" in tools.text()
                assert "may or may not have run" not in tools.text(), tools.text()
                assert "<b>write_file</b>" in tools.text()
                card = window.transcript_model.tool_item(call_id)
                assert card is not None and card.state is ToolState.REQUESTED
                assert not window.approval_card.isVisible()

                sim.enqueue(Reply(text=RESUMED))
                window.resume_bar.resume_button.click()
                await until(window.approval_card.isVisible, 10, "asked again")
                assert window.approval_card.current_call.id == call_id
                assert card.state is ToolState.AWAITING_APPROVAL
                assert not (ws / name).exists()
                window.approval_card.allow_once_button.click()
                history = await resume_and_finish(window, session_id, click=False)
                assert [type(m) for m in history] == [
                    UserMessage,
                    AssistantMessage,
                    ToolMessage,
                    AssistantMessage,
                ]
                result = history[2]
                assert isinstance(result, ToolMessage) and result.success
                assert result.tool_call_id == call_id and result.content != RECOVERED_TOOL_TEXT
                assert card.state is ToolState.DONE
                assert await window.services.journal.tool_states(session_id) == {
                    call_id: TOOL_STARTED
                }
            finally:
                await close_window(window)

    run(relaunch(), timeout=45)
    # Absent after the kill, then one successful result after Resume: written exactly once.
    assert (ws / name).read_text() == window_child.APPROVAL_CONTENT
    assert integrity(db) == "ok"
