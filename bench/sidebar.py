"""The sidebar with 1,000 conversations: start, fill, update and scroll, against 10 conversations.

``python -m bench.sidebar [--conversations N] [--many M]`` (offscreen Qt, its own process):

* **start**: cold starts (:mod:`bench.coldstart`'s launcher) on a data folder of N
  conversations and on one of 10, alternating; the first window shown and the main window
  working, medians.
* **fill**: ``Sidebar.set_sessions`` with the store's listing of N conversations (vs 10) into
  an empty list, and the events that follow (layout, the first paint); median of several.
* **update**: what every sent message does to the list: one conversation (from the middle)
  changed just now, so it moves to the top; ``set_sessions`` with the new listing and the
  events that follow; median of several.
* **scroll**: the list shown at 260×700 and scrolled top to bottom a page at a time, each
  page painted at once (``repaint``); the slowest page vs the slowest page of 10, and the
  median page.
* **many**: fill, update and slowest page again with M (10,000) conversations: the store's
  listing of N repeated under other ids, a day older each round (no store of M is written).

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
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


def _fill_and_scroll(listing: list[Any], rounds: int = 5) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from ui.sidebar import Sidebar

    app = QApplication.instance() or QApplication([])
    sidebar = Sidebar()
    sidebar.resize(260, 700)
    sidebar.show()
    app.processEvents()

    def timed(sessions: list[Any]) -> float:
        started = time.perf_counter()
        sidebar.set_sessions(sessions, set())
        app.processEvents()
        return time.perf_counter() - started

    fills = []
    for _ in range(rounds):
        sidebar.set_sessions([], set())
        app.processEvents()
        fills.append(timed(listing))
    sidebar.set_current(listing[0].id)
    updates = []
    for n in range(rounds):
        moved = listing[len(listing) // 2 + n]
        now = time.time() + n
        listing = [dataclasses.replace(moved, updated_at=now)] + [
            info for info in listing if info.id != moved.id
        ]
        updates.append(timed(listing))
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
        "fill_ms": statistics.median(fills) * 1000,
        "update_ms": statistics.median(updates) * 1000,
        "slowest_page_ms": max(pages) * 1000,
        "median_page_ms": statistics.median(pages) * 1000,
        "pages": len(pages),
    }


def _repeated(listing: list[Any], count: int) -> list[Any]:
    """``count`` conversations: ``listing`` again and again under other ids, older each time."""
    many: list[Any] = []
    round_ = 0
    while len(many) < count:
        for info in listing[: count - len(many)]:
            many.append(
                dataclasses.replace(
                    info,
                    id=f"{info.id}-{round_}",
                    created_at=info.created_at - round_ * 86_400,
                    updated_at=info.updated_at - round_ * 86_400,
                )
            )
        round_ += 1
    return many


def measure(
    conversations: int = 1_000, small: int = 10, launches: int = 5, many: int = 10_000
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        big_dir, small_dir = Path(tmp, "big"), Path(tmp, "small")
        asyncio.run(_fill_folder(big_dir, conversations))
        asyncio.run(_fill_folder(small_dir, small))
        starts = _starts(big_dir, small_dir, launches) if launches else {}
        big_listing = asyncio.run(_listing(big_dir))
        small_listing = asyncio.run(_listing(small_dir))
    big, little = _fill_and_scroll(big_listing), _fill_and_scroll(small_listing)
    result = {
        "conversations": conversations,
        "small": small,
        **starts,
        "fill_big_ms": big["fill_ms"],
        "fill_small_ms": little["fill_ms"],
        "update_big_ms": big["update_ms"],
        "update_small_ms": little["update_ms"],
        "scroll_big_ms": big["slowest_page_ms"],
        "scroll_small_ms": little["slowest_page_ms"],
        "scroll_median_big_ms": big["median_page_ms"],
        "pages_big": big["pages"],
    }
    if many:
        lots = _fill_and_scroll(_repeated(big_listing, many))
        result.update(
            many=many,
            fill_many_ms=lots["fill_ms"],
            update_many_ms=lots["update_ms"],
            scroll_many_ms=lots["slowest_page_ms"],
            pages_many=lots["pages"],
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--launches", type=int, default=5, help="cold starts (0: none)")
    parser.add_argument("--many", type=int, default=10_000, help="the large case (0: none)")
    args = parser.parse_args()
    result = measure(args.conversations, launches=args.launches, many=args.many)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
