"""The two-phase start (issue 18): the start window before the core, then the main window.

* ``read_listing``/``read_theme`` on real data folders: the same order as the store's listing,
  pins first; read-only (nothing in the folder changes); an empty list — never an error — for
  no database, a damaged file or an older schema.
* The start window itself: the saved theme, place and titles; closing it while starting.
* The hand-over to a real :class:`ui.window.MainWindow` on the same folder: the place and what
  was typed carry over, the start window goes.
* The real entry point in a subprocess: at "shown" none of the core's heavy modules is loaded
  and the titles are listed; at "ready" the main window lists the same conversations.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect
from PySide6.QtGui import QPalette

from app import UserMessage
from app.services import DATABASE_FILE
from app.settings import SETTINGS_FILE
from tests.ui.helpers import make_services, until
from ui.start_window import DATABASE_FILE as START_DATABASE_FILE
from ui.start_window import SETTINGS_FILE as START_SETTINGS_FILE
from ui.start_window import StartWindow, read_listing, read_theme

ROOT = Path(__file__).resolve().parents[2]
#: What phase one must not load: the core, the network stack, Markdown, the loop.
HEAVY = ("app", "httpx", "aiosqlite", "markdown_it", "pygments", "asyncio", "qasync", "mcp")


def _folder(path: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in path.iterdir()}


async def _three_conversations(data_dir: Path) -> list[str]:
    """Oldest, Middle, Newest; Oldest pinned. Returns the store's listing order of ids."""
    services = await make_services(data_dir, "http://127.0.0.1:9/v1")
    ids = []
    for title in ("Oldest", "Middle", "Newest"):
        session = await services.new_session(title)
        await services.storage.storage.append(session.id, "r", UserMessage(f"about {title}"))
        ids.append(session.id)
    await services.pin_session(ids[0], True)
    listed = [info.id for info in await services.list_sessions()]
    await services.close()
    return listed


def test_file_names_agree_with_the_core() -> None:
    assert START_DATABASE_FILE == DATABASE_FILE
    assert START_SETTINGS_FILE == SETTINGS_FILE


def test_listing_matches_the_store_and_writes_nothing(run: Any, tmp_path: Path) -> None:
    expected = run(_three_conversations(tmp_path))
    before = _folder(tmp_path)
    listed = read_listing(tmp_path)
    assert [item.id for item in listed] == expected
    assert [item.title for item in listed] == ["Oldest", "Newest", "Middle"]  # pinned first
    assert listed[0].pinned_at is not None and listed[1].pinned_at is None
    assert _folder(tmp_path) == before
    assert len(read_listing(tmp_path, limit=2)) == 2


def test_listing_reads_a_log_left_by_a_killed_app(run: Any, tmp_path: Path) -> None:
    run(_three_conversations(tmp_path))
    writer = sqlite3.connect(tmp_path / DATABASE_FILE)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE sessions SET title = 'Renamed' WHERE title = 'Middle'")
        writer.commit()
        killed = tmp_path / "killed"  # the files as a kill -9 leaves them: the log not merged
        killed.mkdir()
        for name in (DATABASE_FILE, DATABASE_FILE + "-wal"):
            (killed / name).write_bytes((tmp_path / name).read_bytes())
    finally:
        writer.close()
    assert [item.title for item in read_listing(killed)] == ["Oldest", "Newest", "Renamed"]


def test_listing_is_empty_on_every_problem(tmp_path: Path) -> None:
    assert read_listing(tmp_path) == []  # no database yet
    assert not (tmp_path / DATABASE_FILE).exists()  # and none was made
    (tmp_path / DATABASE_FILE).write_bytes(b"this is not a database" * 100)
    assert read_listing(tmp_path) == []
    older = tmp_path / "older"
    older.mkdir()
    with sqlite3.connect(older / DATABASE_FILE) as connection:  # a schema before pins
        connection.execute("CREATE TABLE sessions (id TEXT, title TEXT, created_at REAL)")
        connection.execute("INSERT INTO sessions VALUES ('a', 'x', 1.0)")
    connection.close()
    assert read_listing(older) == []


def test_theme_choice(tmp_path: Path) -> None:
    assert read_theme(tmp_path) == "system"
    (tmp_path / SETTINGS_FILE).write_text(json.dumps({"theme": "dark"}), encoding="utf-8")
    assert read_theme(tmp_path) == "dark"
    (tmp_path / SETTINGS_FILE).write_text("{not json", encoding="utf-8")
    assert read_theme(tmp_path) == "system"
    (tmp_path / SETTINGS_FILE).write_text(json.dumps(["dark"]), encoding="utf-8")
    assert read_theme(tmp_path) == "system"


def test_start_window_shows_theme_place_and_titles(qtbot: Any, run: Any, tmp_path: Path) -> None:
    expected = run(_three_conversations(tmp_path))
    (tmp_path / SETTINGS_FILE).write_text(json.dumps({"theme": "dark"}), encoding="utf-8")
    start = StartWindow(tmp_path)
    qtbot.addWidget(start)
    start.show()
    qtbot.waitExposed(start)
    qtbot.waitUntil(lambda: start.palette().color(QPalette.ColorRole.Window).lightness() < 128)
    assert start.titles.session_ids() == expected
    assert start.titles.title_of(expected[0]) == "Oldest"
    assert [title for title, _ in start.titles.group_headers()] == ["Pinned", "Today"]
    assert start.titles.shown_texts() == ["Pinned", "Oldest", "Today", "Newest", "Middle"]
    assert start.statusBar().currentMessage() == "Opening your conversations…"
    start.close()  # closed by the person while starting: hidden, and the start ends
    assert start.dismissed and not start.isVisible()


def test_hand_over_to_the_main_window(qtbot: Any, run: Any, tmp_path: Path) -> None:
    from ui.window import MainWindow

    run(_three_conversations(tmp_path))
    start = StartWindow(tmp_path)
    qtbot.addWidget(start)
    start.setGeometry(QRect(40, 50, 900, 640))
    start.show()
    qtbot.waitExposed(start)
    run(start.painted(), timeout=5)
    assert start.was_painted
    start.edit.setFocus()
    qtbot.keyClicks(start.edit, "typed while starting")
    start.edit.insertPlainText(" 🎉🎉")  # two UTF-16 units each: the cursor must not shift

    async def take_over() -> Any:
        services = await make_services(tmp_path, "http://127.0.0.1:9/v1")
        window = MainWindow(services)
        start.hand_over(window)
        await window.start()
        return window

    window = run(take_over())
    qtbot.addWidget(window)
    try:
        assert window.isVisible() and not start.isVisible() and not start.dismissed
        assert window.composer.edit.toPlainText() == "typed while starting 🎉🎉"
        cursor = window.composer.edit.textCursor()
        assert cursor.atEnd() and cursor.position() == start.edit.textCursor().position()
        assert window.size() == start.size()
        run(until(lambda: len(window.sidebar.session_ids()) == 3, what="listed"))
    finally:
        window.close()
        run(until(lambda: window._shutdown_task is None or window._shutdown_task.done()))


_DRIVER = """
import enum, gc, json, linecache, sys
from PySide6.QtCore import QTimer
import ui.main

HEAVY = {heavy!r}
seen = {{}}

def enum_classes():
    found, stack = [], [enum.Enum]
    while stack:
        for sub in stack.pop().__subclasses__():
            found.append(sub.__qualname__)
            stack.append(sub)
    return found

def on_stage(stage, window):
    if stage == "shown":
        seen["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
        seen["qt_network"] = "PySide6.QtNetwork" in sys.modules
        seen["socket"] = "socket" in sys.modules
        seen["qt_enums"] = sorted(n for n in enum_classes() if n.startswith("Qt."))
        seen["sources_read"] = sorted(f for f in linecache.cache if "/ui/start" in f)
        seen["start_titles"] = [window.titles.title_of(i) for i in window.titles.session_ids()]
    else:
        seen["titles"] = [window.sidebar.title_of(i) for i in window.sidebar.session_ids()]
        seen["kind"] = type(window).__name__
        seen["core_sources_read"] = sorted(f for f in linecache.cache if "/app/" in f)
        QTimer.singleShot(0, window.close)

code = ui.main.main(["--data-dir", sys.argv[1]], on_stage=on_stage)
print(json.dumps(dict(seen, code=code, frozen=gc.get_freeze_count())))
"""


def test_entry_point_shows_the_start_window_before_the_core(run: Any, tmp_path: Path) -> None:
    run(_three_conversations(tmp_path))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER.format(heavy=HEAVY), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["loaded"] == [], f"phase one loaded {seen['loaded']}"
    # The single-instance check is a lock here (its socket comes after): Qt's network module
    # and Python's socket stay out.
    assert seen["qt_network"] is (sys.platform == "win32")
    assert seen["socket"] is False
    # No enum class of the Qt namespace was made (importing it makes 97, ~15-25 ms).
    assert seen["qt_enums"] == []
    # PySide6 read no module's source to look for __feature__ (ui.main.skip_pyside_source_scan)
    assert seen["sources_read"] == [] and seen["core_sources_read"] == []
    assert seen["start_titles"] == ["Oldest", "Newest", "Middle"]
    assert seen["kind"] == "MainWindow"
    # The main window lists them from its first frame (no empty list while it loads).
    assert seen["titles"] == seen["start_titles"]
    assert seen["code"] == 0
    # Once ready, the start-up objects are left out of garbage collection (ui.collector).
    assert seen["frozen"] > 10_000
