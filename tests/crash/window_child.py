"""The real app, offscreen, to be killed with SIGKILL: ``window_child.py DATA_DIR SCENARIO [LOG]``.

A QApplication (``QT_QPA_PLATFORM=offscreen``) on the app's event loop
(:class:`ui.eventloop.ContinuumEventLoop`) runs the real ``MainWindow(AppServices(DATA_DIR))``
with the app's own in-process simulator ("Try it offline"). The child types a message into the
real composer and sends it the way a person does, then reports what the real transcript shows.
One flushed line per milestone, always printed *after* the thing it reports happened::

    SESSION <id>        the conversation the window created for the message
    SCREEN <json>       the streamed text the transcript model shows (streaming scenario)
    STREAMING           that text is on screen; the stream is stalled there (kill now)
    IN_TOOL <tag>       the tool's side effect is durable (fsynced); the tool never returns
    AWAITING_APPROVAL   the approval card for the ``write_file`` call is on screen

Scenarios:

``streaming`` / ``streaming:N``
    the message is sent with the Send button; the simulator streams the first ``N`` words of
    :data:`ANSWER` (all of them without ``:N``) and then holds the connection silently, so the
    text on screen is final when ``STREAMING`` is printed.
``mid_tool``
    the message is sent with Enter; the simulator answers with a call of the ``note`` tool,
    an async tool that appends its tag to ``LOG`` (fsynced), prints ``IN_TOOL`` and waits
    forever.
``awaiting_approval``
    the workspace tools of ``DATA_DIR/../ws`` are registered; the simulator answers with a
    ``write_file`` call (id :data:`APPROVAL_CALL_ID`); the approval card asks and nobody answers.

Then the child waits to be killed. Any failure prints ``FAILED <reason>`` and exits 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before any QApplication exists
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

USER_TEXT = "Tell me about write-ahead logging"
TOOL_USER_TEXT = "Please write the note"
ANSWER = (
    "Write-ahead logging keeps every change in a separate log file first, so a crash in the "
    "middle of a write never leaves the main database half updated; readers keep using the "
    "old pages until a checkpoint moves the new ones into place."
)
TOOL_TAG = "t1"
TOOL_TEXT = "I will write the note now."
RATE = 60.0  # words per second: a few draft saves happen before the stall
MILESTONE_TIMEOUT = 30.0
APPROVAL_USER_TEXT = "Please write the file"
APPROVAL_CALL_ID = "call_write"
APPROVAL_FILE = "approved.txt"
APPROVAL_CONTENT = "written after approval\n"


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def durable_append(path: str, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def make_note_tool(log_path: str) -> Any:
    async def note(tag: str) -> str:
        """Write a note: append the tag to the side-effect log (durably)."""
        durable_append(log_path, tag)
        say("IN_TOOL", tag)
        await asyncio.Event().wait()  # the parent kills us here
        return f"noted {tag}"

    return note


def answer_words(scenario: str) -> list[str]:
    """The words the simulator streams before it stalls, for ``streaming[:N]``."""
    from app.simulator.wire import tokenize

    tokens = tokenize(ANSWER)
    _, _, count = scenario.partition(":")
    return tokens[: int(count)] if count else tokens


async def wait_for(condition: Any, signals: list[Any], what: str) -> Any:
    """Resolve when ``condition()`` is truthy, re-checked on each of ``signals`` (no polling)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def check(*_args: object) -> None:
        if not done.done():
            value = condition()
            if value:
                done.set_result(value)

    for signal in signals:
        signal.connect(check)
    try:
        check()
        return await asyncio.wait_for(done, MILESTONE_TIMEOUT)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None
    finally:
        for signal in signals:
            signal.disconnect(check)


async def drive(window: Any, scenario: str, log_path: str) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from app.simulator import Fault, Reply, SimToolCall
    from app.tools import as_tool

    services = window.services
    simulator = services._simulator
    model = window.transcript_model
    window.controller.sessionChanged.connect(lambda sid: say("SESSION", sid) if sid else None)
    edit = window.composer.edit

    if scenario.startswith("streaming"):
        words = answer_words(scenario)
        expected = "".join(words)
        # The role chunk, then the words, then silence: the screen ends at ``expected``.
        simulator.enqueue(
            Reply(text=ANSWER, fault=Fault.stall_after(1 + len(words)), tokens_per_second=RATE)
        )
        QTest.keyClicks(edit, USER_TEXT)
        QTest.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)
        await wait_for(
            lambda: model.streaming_item is not None and model.streaming_item.text == expected,
            [model.dataChanged, model.rowsInserted],
            "the streamed text on screen",
        )
        item = model.streaming_item
        assert item is not None
        say("SCREEN", json.dumps(item.text))
        say("STREAMING")
    elif scenario == "mid_tool":
        services.client.tools = (as_tool(make_note_tool(log_path)),)
        simulator.enqueue(
            Reply(
                text=TOOL_TEXT,
                tool_calls=(SimToolCall("note", {"tag": TOOL_TAG}, id=f"call_{TOOL_TAG}"),),
            )
        )
        QTest.keyClicks(edit, TOOL_USER_TEXT)
        QTest.keyClick(edit, Qt.Key.Key_Return)
    elif scenario == "awaiting_approval":
        from app.tools.workspace import Workspace

        ws = Path(services.data_dir).parent / "ws"
        ws.mkdir(exist_ok=True)
        services.client.tools = tuple(Workspace(ws).tools())
        simulator.enqueue(
            Reply(
                text=TOOL_TEXT,
                tool_calls=(
                    SimToolCall(
                        "write_file",
                        {"path": APPROVAL_FILE, "content": APPROVAL_CONTENT},
                        id=APPROVAL_CALL_ID,
                    ),
                ),
            )
        )
        QTest.keyClicks(edit, APPROVAL_USER_TEXT)
        QTest.keyClick(edit, Qt.Key.Key_Return)
        card = window.approval_card
        await wait_for(
            lambda: card.isVisible() and card.current_call is not None,
            [window.controller.approvalRequested, model.dataChanged],
            "the approval card",
        )
        say("AWAITING_APPROVAL")
    else:
        raise AssertionError(f"unknown scenario {scenario!r}")
    await asyncio.Event().wait()  # the parent kills us


def main(data_dir: str, scenario: str, log_path: str) -> int:
    from PySide6.QtWidgets import QApplication

    from app.services import AppServices
    from ui.eventloop import ContinuumEventLoop
    from ui.window import MainWindow

    app = QApplication([sys.argv[0]])
    loop = ContinuumEventLoop(app)
    asyncio.set_event_loop(loop)
    errors: list[str] = []

    def loop_error(_loop: Any, context: dict[str, Any]) -> None:
        errors.append(str(context.get("exception") or context.get("message")))
        say("FAILED", json.dumps(f"event loop: {errors[-1]}"))

    loop.set_exception_handler(loop_error)

    async def run() -> int:
        services = AppServices(Path(data_dir))
        await services.open()
        await services.start_simulator()  # what "Try it offline" does
        window = MainWindow(services)
        window.resize(1000, 700)
        window.show()
        await window.start()
        try:
            await drive(window, scenario, log_path)
        except Exception as err:
            say("FAILED", json.dumps(f"{type(err).__name__}: {err}"))
            return 1
        return 0

    return int(loop.run_until_complete(run()))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    data = sys.argv[1]
    log = sys.argv[3] if len(sys.argv) == 4 else str(Path(data).parent / "side_effects.log")
    sys.exit(main(data, sys.argv[2], log))
