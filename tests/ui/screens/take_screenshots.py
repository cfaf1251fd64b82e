# ruff: noqa: E402 - a script: sys.path must be set before the project imports
"""Screenshots of the real window on Xvfb (QT_QPA_PLATFORM=xcb).

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x800x24" \
        .venv/bin/python tests/ui/screens/take_screenshots.py [OUT_DIR]

OUT_DIR defaults to this script's folder.
"""

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, "/work/main")
import keyring

from tests.ui.helpers import MemoryKeyring, close_window, open_window, until

keyring.set_keyring(MemoryKeyring())
from PySide6.QtWidgets import QApplication

from app import as_tool
from app.simulator import Reply, SimToolCall, Simulator
from ui.eventloop import ContinuumEventLoop

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
OUT.mkdir(parents=True, exist_ok=True)
app = QApplication([])
loop = ContinuumEventLoop(app)
asyncio.set_event_loop(loop)


def read_note(path: str) -> str:
    """Read a note from the workspace."""
    return f"# Notes\n- buy milk\n- call Ada ({path})"


def kill_mid_tool(data: Path, log: Path) -> None:
    """Run the real app (tests/crash/window_child.py) until its tool is running; SIGKILL it."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests" / "crash" / "window_child.py"),
            str(data),
            "mid_tool",
            str(log),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("IN_TOOL"):
            break
        if line.startswith("FAILED"):
            raise RuntimeError(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


async def shot(window, name):
    await asyncio.sleep(0.3)
    window.grab().save(str(OUT / name))


async def main():
    import tempfile

    tmp = Path(tempfile.mkdtemp())
    w = await open_window(tmp / "welcome", None)
    await asyncio.sleep(1.0)
    await shot(w, "welcome.png")
    await close_window(w)
    async with Simulator() as sim:
        answer = (
            "Sure — here is a **small** example:\n\n```python\ndef greet(name: str) -> str:\n"
            '    return f"Hello, {name}!"\n\nprint(greet("Ada"))\n```\n\n'
            "It defines a function and calls it. See [the docs](https://docs.python.org).\n"
        )
        sim.enqueue(Reply(text=answer, tokens_per_second=25))
        w = await open_window(tmp / "chat", sim.openai_base_url)
        w.controller.send("Show me a Python function")
        await until(
            lambda: (
                w.transcript_model.streaming_item is not None
                and len(w.transcript_model.streaming_item.text) > 90
            ),
            within=20,
        )
        await shot(w, "streaming.png")
        await until(lambda: not w.controller.busy, within=30)
        await shot(w, "answer_code.png")
        sim.enqueue(Reply(tokens=2000, tokens_per_second=150))
        w.controller.send("Now tell me a long story")
        await until(
            lambda: (
                w.transcript_model.streaming_item is not None
                and len(w.transcript_model.streaming_item.text) > 200
            ),
            within=20,
        )
        w.controller.stop()
        await until(lambda: w.resume_bar.isVisible(), within=10)
        await shot(w, "resume_bar_after_stop.png")
        await close_window(w)
        sim.enqueue(
            Reply(
                text="Let me read it.", tool_calls=(SimToolCall("read_note", {"path": "notes.md"}),)
            ),
            Reply(text="Your notes say to **buy milk** and **call Ada**."),
        )
        w = await open_window(tmp / "tools", sim.openai_base_url)
        w.services.client.tools = (as_tool(read_note),)
        w.controller.send("What is in notes.md?")
        await until(lambda: not w.controller.busy, within=20)
        row = next(i for i, it in enumerate(w.transcript_model.items()) if it.kind.value == "tool")
        w.transcript.activate_anchor(row, "continuum-toggle:")
        await shot(w, "tool_card.png")
        await close_window(w)

        # An approval card: write_file in the conversation's workspace folder, not yet answered.
        folder = tmp / "my-project"
        folder.mkdir()
        w = await open_window(tmp / "approval", sim.openai_base_url)
        await w.set_workspace(str(folder))
        sim.enqueue(
            Reply(
                text="I will save the plan in your project folder.",
                tool_calls=(
                    SimToolCall(
                        "write_file",
                        {
                            "path": "docs/plan.md",
                            "content": "# Launch plan\n\n1. Freeze the API\n2. Write the release notes\n"
                            "3. Tag v1.0\n",
                        },
                    ),
                ),
            )
        )
        w.controller.send("Save our launch plan as docs/plan.md")
        await until(w.approval_card.isVisible, within=20)
        await shot(w, "approval_card.png")
        w.approval_card.deny_button.click()
        await until(lambda: not w.controller.busy, within=20)
        await close_window(w)

    # A relaunch after the app was killed while a tool ran: the Resume bar and the card.
    data = tmp / "killed"
    await asyncio.to_thread(kill_mid_tool, data, tmp / "side_effects.log")
    w = await open_window(data, None)  # its settings: the built-in simulator
    await until(w.resume_bar.isVisible, within=20)
    await shot(w, "interrupted_tool_card.png")
    await close_window(w)


loop.run_until_complete(main())
loop.close()
