"""Relaunch on a data folder left by a really killed app (SIGKILL mid-stream)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QStyleOptionViewItem

from app import AssistantMessage, UserMessage
from app.simulator import Reply
from app.storage.journal import StopKind
from tests.ui.helpers import until, window_on_simulator
from ui.sidebar import SESSION_ROLE
from ui.transcript.model import ItemKind

APP_CHILD = Path(__file__).parents[1] / "crash" / "app_child.py"
ANSWER = "The first words of an answer that never"


def kill_mid_stream(data_dir: Path) -> str:
    """Run the app's services in a child process; SIGKILL it while it streams."""
    env = dict(os.environ)
    root = str(Path(__file__).parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(
        [sys.executable, str(APP_CHILD), str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        session_id = proc.stdout.readline().strip()  # pytest-timeout guards a silent child
        milestone = proc.stdout.readline().strip()
        if milestone != "STREAMING":
            proc.kill()
            raise AssertionError(
                f"child said {session_id!r}, {milestone!r}; stderr: {proc.stderr.read()}"
            )
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == -signal.SIGKILL
    assert len(session_id) == 32, session_id
    return session_id


def _draft_rows(window: Any) -> list[Any]:
    return [i for i in window.transcript_model.items() if i.kind is ItemKind.DRAFT]


def _header_text(window: Any, item: Any) -> str:
    """The header the transcript really draws above ``item`` (its rendered document)."""
    option = QStyleOptionViewItem()
    window.transcript.initViewItemOption(option)
    render = window.transcript.delegate.render_for(item, 600.0, option)
    return render.header.toPlainText() if render.header is not None else ""


def _click_session(window: Any, session_id: str) -> None:
    listing = window.sidebar.list
    index = window.sidebar.index_of(session_id)
    if not index.isValid() or index.data(SESSION_ROLE) != session_id:
        raise AssertionError(f"{session_id} is not in the sidebar")
    listing.scrollTo(index)
    QTest.mouseClick(
        listing.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        listing.visualRect(index).center(),
    )


def _assert_crash_shown(window: Any, session_id: str) -> str:
    assert window.controller.session_id == session_id
    assert not window.controller.read_only  # the dead process's lock is gone
    text = window.resume_bar.message.text()
    assert "closed unexpectedly" in text, text
    assert text.startswith("Continuum closed unexpectedly")
    assert window.resume_bar.resume_button.isVisible()
    assert window.resume_bar.resume_button.text() == "Resume"
    assert window.resume_bar.message.toolTip()  # point.description
    info = window.resume_bar.info
    assert info is not None and info.stop is not None and info.stop.kind is StopKind.CRASHED
    model = window.transcript_model
    assert [i.kind for i in model.items()] == [ItemKind.USER, ItemKind.DRAFT]
    assert model.item(0).text == "Tell me a story"
    drafts = _draft_rows(window)
    assert len(drafts) == 1
    draft = drafts[0]
    # What was on screen at the last throttled save: a non-empty prefix of the answer.
    assert draft.text and ANSWER.startswith(draft.text), draft.text
    assert "Interrupted" in _header_text(window, draft)
    assert "closed unexpectedly" in draft.detail  # its tooltip says why
    assert window.sidebar.has_badge(session_id)
    return str(draft.text)


def test_relaunch_after_sigkill_shows_bar_and_draft_then_resumes(run: Any, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    session_id = kill_mid_stream(data_dir)

    async def scenario() -> None:
        async with window_on_simulator(data_dir) as (sim, window):
            # On launch: the most recent conversation is the one the dead app was answering.
            await until(lambda: window.resume_bar.isVisible(), what="resume bar at launch")
            draft_text = _assert_crash_shown(window, session_id)
            history = await window.services.history(session_id)
            assert [type(m) for m in history] == [UserMessage]  # the draft is not history

            # Away to a new conversation and back through the sidebar: the same state.
            window.new_action.trigger()
            await until(
                lambda: (
                    window.controller.session_id is None and window.transcript_model.rowCount() == 0
                ),
                what="new conversation",
            )
            assert not window.resume_bar.isVisible()
            await until(lambda: window.sidebar.session_ids() == [session_id], what="sidebar")
            _click_session(window, session_id)
            await until(
                lambda: (
                    window.controller.session_id == session_id
                    and window.resume_bar.isVisible()
                    and _draft_rows(window)
                ),
                what="crashed conversation reopened",
            )
            assert _assert_crash_shown(window, session_id) == draft_text

            sim.enqueue(Reply(text="Once upon a time, a story ended properly."))
            window.resume_bar.resume_button.click()
            assert window.controller.busy
            await until(lambda: not window.controller.busy, what="resume finishes")
            model = window.transcript_model
            last = model.item(model.rowCount() - 1)
            assert last.kind is ItemKind.ASSISTANT
            assert last.text == "Once upon a time, a story ended properly."
            assert not window.resume_bar.isVisible()
            history = await window.services.history(session_id)
            assert [type(m) for m in history] == [UserMessage, AssistantMessage]
            assert history[-1].content == "Once upon a time, a story ended properly."
            info = await window.services.resume_info(session_id)
            assert info.draft is None and info.stop is None and info.point is None
            await until(lambda: not window.sidebar.has_badge(session_id), what="badge off")
            # The model was sent the saved history only: the draft is not part of it.
            sent = sim.model_requests()[-1].json()["messages"]
            sent = [m for m in sent if m["role"] != "system"]
            assert [m["role"] for m in sent] == ["user"], sent
            assert sent[0]["content"] in (
                "Tell me a story",
                [{"type": "text", "text": "Tell me a story"}],
            )

            # Reopened, the conversation is whole and the draft is gone.
            window.new_action.trigger()
            await until(lambda: window.controller.session_id is None, what="new")
            _click_session(window, session_id)
            await until(
                lambda: (
                    window.controller.session_id == session_id
                    and window.transcript_model.rowCount() == 2
                ),
                what="reopened",
            )
            assert [i.kind for i in window.transcript_model.items()] == [
                ItemKind.USER,
                ItemKind.ASSISTANT,
            ]
            assert not _draft_rows(window)
            assert not window.resume_bar.isVisible()

    run(scenario(), timeout=60)
