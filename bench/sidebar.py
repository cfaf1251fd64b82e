"""The sidebar with 1,000 conversations: start, fill and scroll, against 10 conversations.

``python -m bench.sidebar [--conversations N]`` (offscreen Qt, its own process):

* **start**: cold starts (:mod:`bench.coldstart`'s launcher) on a data folder of N
  conversations and on one of 10, alternating; the first window shown and the main window
  working, medians.
* **fill**: ``Sidebar.set_sessions`` with the store's listing of N conversations vs 10 (the
  list is rebuilt so after every change to the list; median of several fills).
* **scroll**: the list shown at 260×700 and scrolled top to bottom a page at a time, each
  page painted at once (``repaint``); the slowest page vs the slowest page of 10.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from app import UserMessage
from app.services import AppServices
from bench.coldstart import _launch


async def _fill_folder(data_dir: Path, count: int) -> None:
    services = AppServices(data_dir)
    await services.open()
    for n in range(count):
        session = await services.new_session(f"Conversation {n:04d} about topic {n % 37}")
        await services.storage.storage.append(session.id, "r", UserMessage(f"question {n}"))
    await services.close()


async def _listing(data_dir: Path) -> list[Any]:
    services = AppServices(data_dir)
    await services.open()
    try:
        return await services.list_sessions()
    finally:
        await services.close()


def _starts(big: Path, small: Path, launches: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPYCACHEPREFIX=f"{tmp}/pyc")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        _launch(["app", str(small)], env)  # bytecode caches
        shown: dict[str, list[float]] = {"big": [], "small": []}
        ready: dict[str, list[float]] = {"big": [], "small": []}
        for _ in range(launches):
            for name, folder in (("small", small), ("big", big)):
                first, works = _launch(["app", str(folder)], env)
                shown[name].append(first * 1000)
                ready[name].append(works * 1000)
    return {
        f"{kind}_{name}_ms": statistics.median(values[name])
        for kind, values in (("shown", shown), ("ready", ready))
        for name in ("big", "small")
    }


def _fill_and_scroll(listing: list[Any], fills: int = 5) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from ui.sidebar import Sidebar

    app = QApplication.instance() or QApplication([])
    sidebar = Sidebar()
    sidebar.resize(260, 700)
    sidebar.show()
    app.processEvents()
    times = []
    for _ in range(fills):
        started = time.perf_counter()
        sidebar.set_sessions(listing, set())
        app.processEvents()
        times.append(time.perf_counter() - started)
    bar = sidebar.list.verticalScrollBar()
    pages = []
    value = 0
    while True:
        bar.setValue(value)
        started = time.perf_counter()
        sidebar.list.viewport().repaint()
        pages.append(time.perf_counter() - started)
        if value >= bar.maximum():
            break
        value = min(value + max(bar.pageStep(), 1), bar.maximum())
    sidebar.close()
    return {
        "fill_ms": statistics.median(times) * 1000,
        "slowest_page_ms": max(pages) * 1000,
        "pages": len(pages),
    }


def measure(conversations: int = 1_000, small: int = 10, launches: int = 5) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        big_dir, small_dir = Path(tmp, "big"), Path(tmp, "small")
        asyncio.run(_fill_folder(big_dir, conversations))
        asyncio.run(_fill_folder(small_dir, small))
        starts = _starts(big_dir, small_dir, launches)
        big_listing = asyncio.run(_listing(big_dir))
        small_listing = asyncio.run(_listing(small_dir))
    big, little = _fill_and_scroll(big_listing), _fill_and_scroll(small_listing)
    return {
        "conversations": conversations,
        "small": small,
        **starts,
        "fill_big_ms": big["fill_ms"],
        "fill_small_ms": little["fill_ms"],
        "scroll_big_ms": big["slowest_page_ms"],
        "scroll_small_ms": little["slowest_page_ms"],
        "pages_big": big["pages"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--launches", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(measure(args.conversations, launches=args.launches), indent=2))


if __name__ == "__main__":
    main()
