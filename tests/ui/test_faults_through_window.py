"""Every fault the simulator injects, driven through the real window: type, click Send, read.

The real ``MainWindow`` over a real data folder and the real simulator; the provider is the
app's own OpenAI-compatible model, built by ``AppServices`` from the settings with a short read
timeout (``model_factory``, as tests/hardening/test_faults_via_services.py does) so a stall ends
in a second. For each fault the test types a message into the composer and clicks Send, waits
for the run to finish, then reads what a person sees:

* the Resume bar's visible widgets (message, tool list, buttons) say what happened and what to
  do next, and never show a traceback, a Python repr or raw HTML;
* the Resume button is shown where resuming helps and hidden where it cannot (a refusal, a
  full context window, an unknown finish reason), with guidance instead;
* the status bar and the controller's ``last_error`` carry no traceback either;
* after a resumable fault, clicking the real Resume button finishes the answer (a good reply
  is queued first) and the bar hides.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtTest import QTest

from app import AgentRunConfig, RetryPolicy
from app.model import Model
from app.providers import OpenAICompatibleModel
from app.services import AppServices
from app.settings import Settings
from app.simulator import BAD_ARGUMENTS, Fault, Reply, SimToolCall, Simulator
from app.storage.journal import StopKind
from tests.ui.helpers import close_window
from ui.transcript.model import ItemKind

PROMPT = "one two three"
LONG = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda"
GOOD = "A good answer, at last."
READ_TIMEOUT = 0.5

#: Words that tell a person what to do next.
ACTIONABLE = re.compile(
    r"try again|resume|check|wait|start a new|shorten|settings|send a new|rephrase|choose",
    re.IGNORECASE,
)
#: What must never reach a person: tracebacks, Python reprs and exception names, raw HTML.
UNFIT = re.compile(
    r"Traceback|File \"|<class|\b\w*(Error|Exception)(\(|:)|<\s*/?\s*[A-Za-z!][^>]*>"
)

BAD_CALL = SimToolCall("note", BAD_ARGUMENTS)


@dataclass(frozen=True)
class Case:
    replies: tuple[Reply | Fault | str, ...]
    says: tuple[str, ...]  # words the bar's message must contain (any case)
    button: str | None  # the Resume button's text, or None: hidden
    stop: StopKind | None  # the stop record the bar shows (None: none)
    guidance: str | None = None  # words of the next step where there is no Resume
    attempts: int = 1  # the retry policy's attempts (its max_delay is 1 s)
    cut: bool | None = False  # output came before the fault (None: an orderly end)


CASES: dict[str, Case] = {
    "drop before output": Case(
        (Fault.drop_after(0),), ("connection",), "Resume", StopKind.CONNECTION
    ),
    "drop after 4 chunks": Case(
        (Reply(text=LONG, fault=Fault.drop_after(4)),),
        ("connection",),
        "Resume",
        StopKind.CONNECTION,
        cut=True,
    ),
    "stall before output": Case(
        (Fault.stall_after(0),), ("stopped responding",), "Resume", StopKind.CONNECTION
    ),
    "stall after output": Case(
        (Reply(text=LONG, fault=Fault.stall_after(4)),),
        ("stopped responding",),
        "Resume",
        StopKind.CONNECTION,
        cut=True,
    ),
    "429 with a Retry-After longer than the policy": Case(
        (Fault.http_status(429, retry_after=30),),
        ("too many requests", "wait 30"),
        "Resume",
        StopKind.PROVIDER_ERROR,
        attempts=2,
    ),
    "500": Case((Fault.http_status(500),), ("HTTP 500",), "Resume", StopKind.PROVIDER_ERROR),
    "502": Case((Fault.http_status(502),), ("HTTP 502",), "Resume", StopKind.PROVIDER_ERROR),
    "503": Case((Fault.http_status(503),), ("HTTP 503",), "Resume", StopKind.PROVIDER_ERROR),
    "529 overloaded": Case(
        (Fault.http_status(529),), ("overloaded",), "Resume", StopKind.PROVIDER_ERROR
    ),
    "401 wrong key": Case(
        (Fault.http_status(401),), ("API key",), "Resume", StopKind.PROVIDER_ERROR
    ),
    "HTML error page": Case(
        (Fault.html(502),), ("HTML page", "502 Bad Gateway"), "Resume", StopKind.PROVIDER_ERROR
    ),
    "malformed SSE before output": Case(
        (Fault.malformed_after(0),), (), "Resume", StopKind.CONNECTION
    ),
    "malformed SSE after output": Case(
        (Reply(text=LONG, fault=Fault.malformed_after(4)),),
        (),
        "Resume",
        StopKind.CONNECTION,
        cut=True,
    ),
    "early EOF before output": Case((Fault.eof_after(0),), (), "Resume", StopKind.CONNECTION),
    "early EOF after output": Case(
        (Reply(text=LONG, fault=Fault.eof_after(4)),), (), "Resume", StopKind.CONNECTION, cut=True
    ),
    "error event after output": Case(
        (Reply(text=LONG, fault=Fault.error_event_after(4)),),
        ("overloaded",),
        "Resume",
        StopKind.PROVIDER_ERROR,
        cut=True,
    ),
    "invalid JSON tool arguments": Case(
        (Reply(text="", tool_calls=(BAD_CALL,)),),
        ("JSON", "not run"),
        "Resume",
        StopKind.CONNECTION,
    ),
    "invalid JSON tool arguments after text": Case(
        (Reply(text="Writing it now.", tool_calls=(BAD_CALL,)),),
        ("JSON", "not run"),
        "Resume",
        StopKind.CONNECTION,
        cut=True,
    ),
    "unknown finish reason": Case(
        (Reply(text="Hmm.", stop="galaxy_brain"),),
        ("galaxy_brain",),
        None,
        None,
        guidance="send a new message",
        cut=None,
    ),
    "refusal": Case(
        (Reply(text="I can't help with that.", stop="refusal"),),
        ("refused",),
        None,
        StopKind.REFUSED,
        guidance="Rephrase",
        cut=None,
    ),
    "context full": Case(
        (Fault.context_full(),),
        ("context window",),
        None,
        StopKind.CONTEXT_FULL,
        guidance="Start a new conversation",
    ),
    "length cut": Case(
        (Reply(text="The first half", stop="max_output"),),
        ("output limit",),
        "Continue",
        StopKind.OUTPUT_LIMIT,
        cut=None,
    ),
}


def _short_timeout_model(settings: Settings) -> Model:
    return OpenAICompatibleModel(
        settings.base_url, settings.model or "sim-echo", timeout=READ_TIMEOUT
    )


async def open_fault_window(data_dir: Path, sim: Simulator, *, attempts: int = 1) -> Any:
    """The real window over ``AppServices`` whose provider has a short read timeout."""
    from ui.window import MainWindow

    services = AppServices(data_dir, model_factory=_short_timeout_model)
    services.save_settings(
        Settings(provider_kind="openai", base_url=sim.openai_base_url, model="sim-echo")
    )
    services.client.defaults = AgentRunConfig(
        "default", retry=RetryPolicy(max_attempts=attempts, base_delay=0.01, max_delay=1.0)
    )

    ran: list[str] = []

    def note(tag: str) -> str:
        """Write a note (never called here: the arguments the model sends are broken)."""
        ran.append(tag)
        return f"noted {tag}"

    services.client.tools = (note,)
    services.tool_runs = ran  # type: ignore[attr-defined]
    await services.open()
    window = MainWindow(services)
    window.resize(1000, 700)
    window.show()
    await window.start()
    return window


class Watch:
    """Collects the status messages and the ends of runs, from the controller's signals."""

    def __init__(self, window: Any) -> None:
        self.statuses: list[str] = []
        self._finished: asyncio.Future[None] | None = None
        window.controller.statusMessage.connect(self.statuses.append)
        window.controller.runFinished.connect(self._done)

    def _done(self) -> None:
        if self._finished is not None and not self._finished.done():
            self._finished.set_result(None)

    def arm(self) -> asyncio.Future[None]:
        self._finished = asyncio.get_running_loop().create_future()
        return self._finished


async def type_and_send(window: Any, watch: Watch, text: str) -> None:
    """Type into the real composer, click the real Send button, wait until the run ended."""
    finished = watch.arm()
    QTest.keyClicks(window.composer.edit, text)
    QTest.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)
    assert window.controller.busy, "Send did not start a request"
    assert window.composer.edit.toPlainText() == ""
    await asyncio.wait_for(finished, 20)


async def click_and_finish(window: Any, watch: Watch, button: Any) -> None:
    finished = watch.arm()
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.controller.busy, f"{button.text()} did not start a request"
    await asyncio.wait_for(finished, 20)


def plain(rich: str) -> str:
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


def bar_words(window: Any) -> list[str]:
    """What the Resume bar shows: its message, the tool list, the visible buttons' texts."""
    bar = window.resume_bar
    words = [bar.message.text()]
    if bar.tools.isVisible():
        words.append(plain(bar.tools.text()))
    words += [
        b.text() for b in (bar.resume_button, bar.other_button, bar.dismiss_button) if b.isVisible()
    ]
    return words


def assert_fit(text: str | None, where: str) -> None:
    assert not UNFIT.search(text or ""), f"{where}: {text!r}"


def assert_nothing_unfit(window: Any, watch: Watch) -> None:
    bar = window.resume_bar
    for words in bar_words(window):
        assert_fit(words, "resume bar")
    assert_fit(bar.message.toolTip(), "resume bar tooltip")
    assert_fit(bar.resume_button.toolTip(), "resume button tooltip")
    assert_fit(window.controller.last_error, "last_error")
    assert_fit(window.statusBar().currentMessage(), "status bar")
    for status in watch.statuses:
        assert_fit(status, "status message")
    for item in window.transcript_model.items():
        assert_fit(item.detail, f"{item.kind} row detail")


@pytest.mark.parametrize("name", CASES)
def test_fault_through_the_window(run: Any, tmp_path: Path, name: str) -> None:
    case = CASES[name]

    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(*case.replies)
            window = await open_fault_window(tmp_path, sim, attempts=case.attempts)
            watch = Watch(window)
            try:
                await type_and_send(window, watch, PROMPT)
                if case.attempts > 1:  # the wait asked for is beyond the policy: no retry
                    assert len(sim.model_requests()) == 1
                bar = window.resume_bar
                assert bar.isVisible(), f"no Resume bar after {name}"
                message = bar.message.text()
                print(f"\nBAR[{name}]: {' | '.join(bar_words(window))}")
                assert_nothing_unfit(window, watch)
                for words in case.says:
                    assert words.lower() in message.lower(), message
                info = bar.info
                assert info is not None
                assert (info.stop.kind if info.stop else None) is case.stop, info.stop
                model = window.transcript_model
                assert model.item(0).kind is ItemKind.USER and model.item(0).text == PROMPT
                assert not any(i.streaming for i in model.items())
                if case.cut:  # the cut answer stays visible, marked as interrupted
                    cut = model.item(1)
                    assert cut.kind is ItemKind.ASSISTANT and cut.stop_reason == "interrupted"
                    assert cut.text and (
                        LONG.startswith(cut.text) or cut.text == "Writing it now."
                    ), cut.text
                elif case.cut is False:  # nothing came: only the question is shown
                    assert [i.kind for i in model.items()] == [ItemKind.USER]

                if case.button is None:  # resuming cannot help: guidance, no Resume
                    assert not bar.resume_button.isVisible()
                    assert case.guidance and case.guidance.lower() in message.lower(), message
                    assert ACTIONABLE.search(message), message
                    assert bar.dismiss_button.isVisible()
                    # Dismiss forgets the stop record, then says the sessions changed.
                    dismissed = asyncio.get_running_loop().create_future()
                    window.controller.sessionsChanged.connect(
                        lambda: dismissed.done() or dismissed.set_result(None)
                    )
                    QTest.mouseClick(bar.dismiss_button, Qt.MouseButton.LeftButton)
                    await asyncio.wait_for(dismissed, 10)
                    assert not bar.isVisible()
                    info = await window.services.resume_info(window.controller.session_id)
                    assert info.stop is None and info.draft is None, info
                    return

                assert bar.resume_button.isVisible()
                assert bar.resume_button.text() == case.button
                assert bar.resume_button.toolTip()  # what resuming will do
                # What to do: the words say it, or (output limit) the Continue button is it.
                assert ACTIONABLE.search(message) or case.button == "Continue", message

                sim.enqueue(Reply(text=GOOD))
                await click_and_finish(window, watch, bar.resume_button)
                assert not bar.isVisible(), bar.message.text()
                assert window.controller.last_error is None
                last = model.item(model.rowCount() - 1)
                assert last.kind is ItemKind.ASSISTANT and last.text == GOOD, last
                assert_nothing_unfit(window, watch)
                info = await window.services.resume_info(window.controller.session_id)
                assert info.point is None and info.blocked_reason == "completed", info
                assert info.stop is None and info.draft is None, info
                assert window.services.tool_runs == []  # no tool ran, before or after
            finally:
                await close_window(window)

    run(scenario())


def test_429_with_a_short_retry_after_is_retried_and_succeeds(run: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Simulator() as sim:
            sim.enqueue(Fault.http_status(429, retry_after=0.2, message="Slow down, please"))
            window = await open_fault_window(tmp_path, sim, attempts=2)
            watch = Watch(window)
            try:
                await type_and_send(window, watch, PROMPT)
                assert not window.resume_bar.isVisible(), bar_words(window)
                assert window.controller.last_error is None
                model = window.transcript_model
                last = model.item(model.rowCount() - 1)
                assert last.kind is ItemKind.ASSISTANT and last.text == PROMPT  # the echo
                retries = [s for s in watch.statuses if "trying again" in s]
                assert len(retries) == 1, watch.statuses
                print(f"\nSTATUS[429 short]: {retries[0]}")
                assert "Slow down" in retries[0] and "attempt 1" in retries[0], retries
                assert "trying again in 0.2 s" in retries[0], retries  # not "in 0 s"
                assert_nothing_unfit(window, watch)
                assert len(sim.model_requests()) == 2
            finally:
                await close_window(window)

    run(scenario())
