# ruff: noqa: E402 - a script: sys.path must be set before the project imports
"""Screenshots of the real window on Xvfb (QT_QPA_PLATFORM=xcb), at two sizes and two themes.

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1600x1000x24" \\
        .venv/bin/python tests/ui/screens/take_screenshots.py [OUT_DIR]

Without options it runs itself once per (size, theme): 1400×900 and 480×800, light and dark,
each in a fresh process (a fresh QApplication), and writes ``<scene>-<W>x<H>-<theme>.png`` into
OUT_DIR (default: this script's folder). ``--size WxH --theme light|dark`` runs one of them.
The theme is chosen through the window's own View → Theme menu.
"""

import argparse
import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
SIZES = ((1400, 900), (480, 800))
THEMES = ("light", "dark")

parser = argparse.ArgumentParser()
parser.add_argument("out", nargs="?", default=str(Path(__file__).resolve().parent))
parser.add_argument("--size", default="")
parser.add_argument("--theme", default="")
ARGS = parser.parse_args()
OUT = Path(ARGS.out)
OUT.mkdir(parents=True, exist_ok=True)

if not ARGS.size:
    for width, height in SIZES:
        for theme in THEMES:
            print(f"== {width}x{height} {theme}", flush=True)
            subprocess.run(
                [sys.executable, __file__, str(OUT), "--size", f"{width}x{height}"]
                + ["--theme", theme],
                check=True,
            )
    sys.exit(0)

WIDTH, HEIGHT = (int(part) for part in ARGS.size.split("x"))
THEME = ARGS.theme or "light"

import keyring

from tests.ui.helpers import MemoryKeyring, close_window, open_window, until

keyring.set_keyring(MemoryKeyring())
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog

from app import as_tool
from app.simulator import Reply, SimToolCall, Simulator
from ui.eventloop import ContinuumEventLoop

app = QApplication([])
loop = ContinuumEventLoop(app)
asyncio.set_event_loop(loop)

RICH_ANSWER = (
    "## Solving a quadratic\n\n"
    "A quadratic $ax^2 + bx + c = 0$ with $a \\neq 0$ has the roots\n\n"
    "$$x = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a}$$\n\n"
    "The sign of the **discriminant** $\\Delta = b^2 - 4ac$ tells how many real roots:\n\n"
    "| Discriminant | Real roots | Example |\n"
    "|---|---|---|\n"
    "| $\\Delta > 0$ | two | $x^2 - 1 = 0$ |\n"
    "| $\\Delta = 0$ | one (double) | $x^2 = 0$ |\n"
    "| $\\Delta < 0$ | none | $x^2 + 1 = 0$ |\n\n"
    "In Python:\n\n"
    "```python\nimport cmath\n\n"
    "def roots(a: float, b: float, c: float) -> tuple[complex, complex]:\n"
    '    """Both roots of a*x**2 + b*x + c, complex when the discriminant is negative."""\n'
    "    d = cmath.sqrt(b * b - 4 * a * c)\n"
    "    return (-b + d) / (2 * a), (-b - d) / (2 * a)  # a long line stays visible: it wraps\n"
    "```\n\n"
    "> Numerically, for $|b| \\gg |4ac|$ use the *citardauq* form to avoid cancellation.\n\n"
    "- Vieta: $x_1 + x_2 = -b/a$ and $x_1 x_2 = c/a$\n"
    "- See [the derivation](https://en.wikipedia.org/wiki/Quadratic_formula).\n"
)


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


def choose_theme(window) -> None:
    """Pick THEME through the window's View → Theme menu (the action a person would click)."""
    wanted = THEME.capitalize()
    for action in window.findChildren(QAction):
        if action.text().replace("&", "") == wanted and action.isCheckable():
            action.trigger()
            return
    raise RuntimeError(f"no View → Theme → {wanted} action")


async def opened(data: Path, base_url):
    window = await open_window(data, base_url)
    choose_theme(window)
    window.resize(WIDTH, HEIGHT)
    await asyncio.sleep(0.3)
    return window


async def shot(window, name):
    await asyncio.sleep(0.4)
    window.statusBar().clearMessage()  # the script's own steps leave messages there
    window.grab().save(str(OUT / f"{name}-{WIDTH}x{HEIGHT}-{THEME}.png"))


def wheel(view, notches: int) -> None:
    """Real wheel events on the transcript (a notch is 120 units; up is positive)."""
    viewport = view.viewport()
    centre = QPointF(viewport.width() / 2, viewport.height() / 2)
    for _ in range(abs(notches)):
        event = QWheelEvent(
            centre,
            QPointF(viewport.mapToGlobal(centre.toPoint())),
            QPoint(0, 0),
            QPoint(0, 120 if notches > 0 else -120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(viewport, event)


def _blocks(doc):
    block = doc.begin()
    while block.isValid():
        yield block
        block = block.next()


def drag_select(view, row: int, words: int) -> None:
    """Press at the start of the row's first body paragraph and drag across ``words`` words."""
    from ui.transcript.model import Roles

    index = view.model().index(row, 0)
    item = index.data(Roles.ITEM)
    option = view._option(index)
    render = view.delegate.render_for(item, view.delegate.width_for(item, option), option)
    docs = render.docs()
    number, block = next(
        (docs.index(chunk), block)
        for chunk in render.chunks
        for block in _blocks(chunk)
        if len(block.text().split()) >= words  # the first paragraph long enough
    )
    origin = view.delegate.geometry(item, option).origins[number]
    top = docs[number].documentLayout().blockBoundingRect(block).top()
    line = block.layout().lineAt(0)
    cut = len(" ".join(block.text().split(" ")[:words]))
    end_x = line.cursorToX(cut)
    end_x = end_x[0] if isinstance(end_x, tuple) else end_x
    y = int(origin.y() + top + line.y() + line.height() / 2)
    start, end = QPoint(int(origin.x() + 1), y), QPoint(int(origin.x() + end_x), y)
    viewport = view.viewport()
    QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for step in range(1, 6):
        QTest.mouseMove(viewport, start + (end - start) * (step / 5))
    QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)


def _attachment_files(tmp):
    """A painted landscape (PNG) and a text file to attach."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter, QPolygonF

    image = QImage(640, 420, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    sky = QLinearGradient(0, 0, 0, 420)
    sky.setColorAt(0, QColor("#f6a85a"))
    sky.setColorAt(0.55, QColor("#e36f6f"))
    sky.setColorAt(1, QColor("#2b3d6b"))
    painter.fillRect(image.rect(), sky)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#fff1c1"))
    painter.drawEllipse(QPointF(430, 190), 46, 46)
    painter.setBrush(QColor("#3b3457"))
    painter.drawPolygon(
        QPolygonF(
            [
                QPointF(x, y)
                for x, y in (
                    (0, 300),
                    (140, 150),
                    (260, 280),
                    (380, 120),
                    (520, 270),
                    (640, 180),
                    (640, 320),
                    (0, 320),
                )
            ]
        )
    )
    painter.setBrush(QColor("#22476b"))
    painter.drawRect(0, 300, 640, 120)
    painter.end()
    picture = tmp / "lake.png"
    image.save(str(picture))
    notes = tmp / "trip-notes.md"
    notes.write_text("# Trip\n\nDay 3: Lake Louise at sunset.\n", encoding="utf-8")
    return picture, notes


async def main():
    import tempfile

    tmp = Path(tempfile.mkdtemp())
    w = await opened(tmp / "welcome", None)
    await asyncio.sleep(0.6)
    await shot(w, "welcome")
    await close_window(w)
    async with Simulator() as sim:
        sim.enqueue(Reply(text=RICH_ANSWER, tokens_per_second=60))
        w = await opened(tmp / "chat", sim.openai_base_url)
        w.controller.send("How do I solve a quadratic equation? Show the formula and some code.")
        await until(
            lambda: (
                w.transcript_model.streaming_item is not None
                and len(w.transcript_model.streaming_item.text) > 400
            ),
            within=30,
        )
        await shot(w, "streaming")
        await until(lambda: not w.controller.busy, within=60)
        w.transcript.follow()
        await shot(w, "answer_rich")
        # Hover the person's message (the latest answer shows its actions anyway): its Copy shows.
        answer_row = len(w.transcript_model.items()) - 1
        w.transcript.scrollToTop()
        rect = w.transcript.visualRect(w.transcript.model().index(answer_row - 1, 0))
        QTest.mouseMove(w.transcript.viewport(), rect.center())
        await shot(w, "hover_actions")
        w.transcript.follow()
        drag_select(w.transcript, answer_row, 6)
        await shot(w, "selection")

        sim.enqueue(Reply(tokens=3000, tokens_per_second=120))
        w.controller.send("Now tell me a long story")
        await until(
            lambda: (
                w.transcript_model.streaming_item is not None
                and len(w.transcript_model.streaming_item.text) > 2500
            ),
            within=30,
        )
        wheel(w.transcript, 6)  # scrolled up while it streams: it stops following
        await until(lambda: not w.transcript.following, within=5)
        await shot(w, "jump_to_latest")
        w.controller.stop()
        await until(lambda: w.resume_bar.isVisible(), within=10)
        w.transcript.follow()
        await shot(w, "resume_bar_after_stop")
        await close_window(w)
        # Versions: an edited question and a regenerated answer show their arrows.
        w = await opened(tmp / "versions", sim.openai_base_url)
        sim.enqueue(Reply(text="**Paris** is the capital of France."))
        w.controller.send("What is the capital of France?")
        await until(lambda: not w.controller.busy, within=20)
        await asyncio.sleep(0.3)
        first = next(it for it in w.transcript_model.items() if it.kind.value == "user")
        w.versions.begin_edit(first.seq, first.text)
        w.composer.edit.setPlainText("And the capital of Italy?")
        sim.enqueue(Reply(text="**Rome** is the capital of Italy."))
        w.composer.send_button.click()
        await until(lambda: not w.controller.busy, within=20)
        await asyncio.sleep(0.5)
        answer = [it for it in w.transcript_model.items() if it.kind.value == "assistant"][-1]
        sim.enqueue(Reply(text="Rome, on the Tiber, has been the capital of Italy since 1871."))
        w.versions.regenerate(answer.seq)
        await until(lambda: not w.controller.busy, within=20)
        await asyncio.sleep(0.5)
        user_row = next(
            i for i, it in enumerate(w.transcript_model.items()) if it.kind.value == "user"
        )
        rect = w.transcript.visualRect(w.transcript.model().index(user_row, 0))
        QTest.mouseMove(w.transcript.viewport(), rect.center())
        await shot(w, "versions")
        w.versions.edit_last()
        await shot(w, "editing")
        w.versions.cancel()
        await close_window(w)
        # Attachments: a sent picture and file in the bubble, then new chips in the composer.
        picture, notes = _attachment_files(tmp)
        w = await opened(tmp / "attachments", sim.openai_base_url)
        w.composer.choose_files = lambda: [str(picture), str(notes)]
        w.composer.attach_button.click()
        w.composer.edit.setPlainText("Where was this taken? My notes are attached.")
        sim.enqueue(
            Reply(text="A **mountain lake** at sunset — your notes say it is *Lake Louise*.")
        )
        w.composer.send_button.click()
        await until(lambda: not w.controller.busy, within=20)
        await asyncio.sleep(0.5)
        w.composer.choose_files = lambda: [str(picture)]
        w.composer.attach_button.click()
        w.composer.edit.setPlainText("And this one?")
        await shot(w, "attachments")
        await close_window(w)
        sim.enqueue(
            Reply(
                text="Let me read it.", tool_calls=(SimToolCall("read_note", {"path": "notes.md"}),)
            ),
            Reply(text="Your notes say to **buy milk** and **call Ada**."),
        )
        w = await opened(tmp / "tools", sim.openai_base_url)
        w.services.client.tools = (as_tool(read_note),)
        w.controller.send("What is in notes.md?")
        await until(lambda: not w.controller.busy, within=20)
        row = next(i for i, it in enumerate(w.transcript_model.items()) if it.kind.value == "tool")
        w.transcript.activate_anchor(row, "continuum-toggle:")
        await shot(w, "tool_card")
        await close_window(w)

        # An approval card: write_file in the conversation's workspace folder, not yet answered.
        folder = tmp / "my-project"
        folder.mkdir()
        w = await opened(tmp / "approval", sim.openai_base_url)
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
        await shot(w, "approval_card")
        w.approval_card.deny_button.click()
        await until(lambda: not w.controller.busy, within=20)
        await close_window(w)

        # The window around the conversation: a sidebar of several conversations (one titled
        # in Markdown), a search, the sidebar hidden, a new empty conversation, the dialogs.
        w = await opened(tmp / "many", sim.openai_base_url)
        for question in (
            "# Release checklist Here is what **must** happen before we ship",
            "Summarise the meeting notes from Monday",
            "Which checklist items are still open?",
        ):
            sim.enqueue(Reply(text="Here is a short answer to that."))
            w.new_conversation()
            await until(lambda: w.controller.session_id is None, within=10)
            w.controller.send(question)
            await until(lambda: not w.controller.busy, within=20)
        await w.refresh_sessions()
        await shot(w, "sidebar")
        w.sidebar.search.setText("checklist")
        await asyncio.sleep(0.8)  # the search waits for a pause in typing
        await shot(w, "sidebar_search")
        w.sidebar.search.clear()
        w.findChild(QAction, "sidebarAction").trigger()
        await shot(w, "sidebar_toggled")  # View → Sidebar: hidden when wide, shown when narrow
        w.findChild(QAction, "sidebarAction").trigger()
        w.new_conversation()
        await until(lambda: w.controller.session_id is None, within=10)
        await shot(w, "empty_conversation")
        w.findChild(QAction, "shortcutsAction").trigger()
        dialog = w.findChild(QDialog, "shortcutsDialog")
        await asyncio.sleep(0.4)
        dialog.grab().save(str(OUT / f"shortcuts_dialog-{WIDTH}x{HEIGHT}-{THEME}.png"))
        dialog.close()
        w.findChild(QAction, "settingsAction").trigger()
        await asyncio.sleep(0.6)
        settings = w.models._settings_dialog
        settings.grab().save(str(OUT / f"settings_dialog-{WIDTH}x{HEIGHT}-{THEME}.png"))
        settings.reject()
        await close_window(w)

    # A relaunch after the app was killed while a tool ran: the Resume bar and the card.
    data = tmp / "killed"
    await asyncio.to_thread(kill_mid_tool, data, tmp / "side_effects.log")
    w = await opened(data, None)  # its settings: the built-in simulator
    await until(w.resume_bar.isVisible, within=20)
    await shot(w, "interrupted_tool_card")
    await close_window(w)


loop.run_until_complete(main())
loop.close()
