"""Open a long conversation in the real window: time to first paint and RSS growth, N messages
(default 10,000) against a 100-message one.

``prepare`` writes a conversation into a fresh data folder (batched, through the store);
``open`` is a fresh process per size (so RSS is its own): ``AppServices`` opened, ``MainWindow``
shown and settled, then the RSS is read, the clock started, and the conversation opened the way
the sidebar does (``ConversationController.open_session``: load from the store, build the rows,
the view lays them out and follows the end). The clock stops on the event-loop turn after the
transcript's viewport first paints rows; the RSS is read again then, and once more after the
loop has been idle for a moment (lazy work included).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._qt import rss_mb, run_qt
from bench._text import markdown_text

SESSION = "bench-long"


def conversation(n: int) -> list[Any]:
    from app import AssistantMessage, ToolCall, ToolMessage, UserMessage

    messages: list[Any] = []
    i = 0
    while len(messages) < n:
        messages.append(UserMessage(f"Question {i}: " + markdown_text(160, seed=i)))
        if i % 10 == 5:
            call = ToolCall(f"c{i}", "read_file", {"path": f"src/module_{i}.py"})
            messages.append(AssistantMessage("Let me look at the file.", tool_calls=(call,)))
            messages.append(ToolMessage(call.id, call.name, markdown_text(300, seed=i)))
        messages.append(AssistantMessage(markdown_text(900, seed=i + 7)))
        i += 1
    return messages[:n]


async def prepare(folder: Path, n: int) -> None:
    from app.services import AppServices

    services = AppServices(folder)
    await services.open()
    store = services.storage.storage
    messages = conversation(n)
    for start in range(0, n, 2_000):
        await store.append_many(SESSION, "bench", messages[start : start + 2_000])
    await services.close()


async def open_once(folder: Path) -> dict[str, float]:
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from app.services import AppServices
    from ui.window import MainWindow

    services = AppServices(folder)
    await services.open()
    window = MainWindow(services)
    window.show()
    await asyncio.sleep(0.3)
    QApplication.processEvents()
    gc.collect()
    loop = asyncio.get_running_loop()
    painted: asyncio.Future[float] = loop.create_future()
    model = window.transcript_model

    class PaintWatch(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and model.rowCount() and not painted.done():
                # Fires on the loop turn after this paint has been drawn.
                QTimer.singleShot(
                    0, lambda: painted.done() or painted.set_result(time.perf_counter())
                )
            return False

    watch = PaintWatch()
    window.transcript.viewport().installEventFilter(watch)
    rss_before = rss_mb()
    started = time.perf_counter()
    window.controller.spawn(window.controller.open_session(SESSION))
    first_paint = await asyncio.wait_for(painted, 120) - started
    rss_painted = rss_mb()
    await asyncio.sleep(1.0)
    rss_settled = rss_mb()
    rows = model.rowCount()
    window.close()
    if window._closed is not None:
        await asyncio.wait_for(window._closed, 15)
    return {
        "first_paint_ms": first_paint * 1000,
        "rss_growth_mb": rss_painted - rss_before,
        "rss_growth_settled_mb": rss_settled - rss_before,
        "rows": rows,
    }


def _child(mode: str, folder: Path, n: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.open_conversation", mode, str(folder), str(n)],
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode:
        raise RuntimeError(f"{mode} {n} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure(messages: int = 10_000, small: int = 100, repeats: int = 3) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (small, messages):
            folder = Path(tmp) / str(n)
            _child("prepare", folder, n)
            runs = [_child("open", folder, n) for _ in range(repeats)]
            best = min(runs, key=lambda r: r["first_paint_ms"])
            runs.sort(key=lambda r: r["first_paint_ms"])
            results[str(n)] = {
                "first_paint_ms": runs[len(runs) // 2]["first_paint_ms"],
                "rss_growth_mb": sorted(r["rss_growth_mb"] for r in runs)[len(runs) // 2],
                "rss_growth_settled_mb": sorted(r["rss_growth_settled_mb"] for r in runs)[
                    len(runs) // 2
                ],
                "rows": best["rows"],
                "runs": runs,
            }
    big, base = results[str(messages)], results[str(small)]
    results["paint_ratio"] = big["first_paint_ms"] / base["first_paint_ms"]
    results["rss_ratio"] = big["rss_growth_mb"] / max(base["rss_growth_mb"], 0.1)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", nargs="?", choices=("prepare", "open"))
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("n", nargs="?", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.mode == "prepare":
        asyncio.run(prepare(args.folder, args.n))
        print(json.dumps({"prepared": args.n}))
    elif args.mode == "open":
        print(json.dumps(run_qt(lambda: open_once(args.folder))))
    else:
        print(json.dumps(measure(args.n, repeats=args.repeats), indent=2))


if __name__ == "__main__":
    main()
