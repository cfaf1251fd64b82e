# ruff: noqa: E402 - a script: sys.path must be set before the project imports
"""Screenshots of the real window on Xvfb (QT_QPA_PLATFORM=xcb)."""
import asyncio
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

OUT = Path(sys.argv[1])
OUT.mkdir(parents=True, exist_ok=True)
app = QApplication([])
loop = ContinuumEventLoop(app)
asyncio.set_event_loop(loop)

def read_note(path: str) -> str:
    """Read a note from the workspace."""
    return f"# Notes\n- buy milk\n- call Ada ({path})"

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
        answer = ("Sure — here is a **small** example:\n\n```python\ndef greet(name: str) -> str:\n"
                  "    return f\"Hello, {name}!\"\n\nprint(greet(\"Ada\"))\n```\n\n"
                  "It defines a function and calls it. See [the docs](https://docs.python.org).\n")
        sim.enqueue(Reply(text=answer, tokens_per_second=25))
        w = await open_window(tmp / "chat", sim.openai_base_url)
        w.controller.send("Show me a Python function")
        await until(lambda: w.transcript_model.streaming_item is not None and len(w.transcript_model.streaming_item.text) > 90, within=20)
        await shot(w, "streaming.png")
        await until(lambda: not w.controller.busy, within=30)
        await shot(w, "answer_code.png")
        sim.enqueue(Reply(tokens=2000, tokens_per_second=150))
        w.controller.send("Now tell me a long story")
        await until(lambda: w.transcript_model.streaming_item is not None and len(w.transcript_model.streaming_item.text) > 200, within=20)
        w.controller.stop()
        await until(lambda: w.resume_bar.isVisible(), within=10)
        await shot(w, "resume_bar_after_stop.png")
        await close_window(w)
        sim.enqueue(Reply(text="Let me read it.", tool_calls=(SimToolCall("read_note", {"path": "notes.md"}),)),
                    Reply(text="Your notes say to **buy milk** and **call Ada**."))
        w = await open_window(tmp / "tools", sim.openai_base_url)
        w.services.client.tools = (as_tool(read_note),)
        w.controller.send("What is in notes.md?")
        await until(lambda: not w.controller.busy, within=20)
        row = next(i for i, it in enumerate(w.transcript_model.items()) if it.kind.value == "tool")
        w.transcript.activate_anchor(row, "continuum-toggle:")
        await shot(w, "tool_card.png")
        await close_window(w)

loop.run_until_complete(main())
loop.close()
