"""Worst frame while a hostile answer streams (issue 11, item 14): 200 KB of ``![``, ``[``, ``*``,
backticks, nested ``>`` (and ``*a``, ``<a``), and short lines of ``*``, ``-``, ``1.``, ``[`` or
``>`` (one ever-growing block), and list items of 2,000 characters of ``a*``, streamed into
the real ``TranscriptModel`` and ``TranscriptView`` (offscreen, 840×640) in pieces of
``--piece`` characters with no blank line, so the whole growing block would be the re-rendered
tail on every frame (the worst case for the view).

Each frame is timed through everything the app does for a delta: ``append_delta`` + ``flush``,
the view's relayout and a synchronous repaint of the viewport. Also timed: showing the finished
message again from history (a fresh view: one full render). The figure per pattern is the worst
frame, in ms; the target is ≤ 50 ms. ``--max-seconds`` stops one pattern early (the code before
the fix needed minutes), its worst frame so far is still reported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from bench import _qt  # noqa: F401  (sets the offscreen platform)

PATTERNS = {
    "![": "![",
    "[": "[",
    "*": "*",
    "backticks": "`",
    "nested >": "> ",
    "*a": "*a",
    "<a": "<a",
    # Block-level: one short line after another, no blank line (one growing block).
    "star-lines": "*\n",
    "dash-lines": "- \n",
    "numbered-lines": "1.\n",
    "bracket-lines": "[\n",
    "quote-lines": "> \n",
    # List items each within the inline budget, together far over it (the budget is the
    # block's: before, 50 of them took 0.6 s to render at once).
    "emphasis-items": "- " + "a*" * 999 + "\n",
}


def _hostile(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


def measure(
    chars: int = 200_000,
    piece: int = 2_000,
    max_seconds: float = 60.0,
    names: list[str] | None = None,
) -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication

    from ui.transcript import TranscriptModel, TranscriptView

    app = QApplication.instance() or QApplication([sys.argv[0]])

    def fresh_view() -> tuple[Any, Any]:
        model = TranscriptModel()
        view = TranscriptView()
        view.setModel(model)
        view.resize(840, 640)
        view.show()
        return model, view

    def settle(view: Any) -> None:
        app.processEvents()
        app.processEvents()
        view.viewport().repaint()

    # Warm up (imports, fonts, the parser) so the first pattern does not pay for them.
    model, view = fresh_view()
    model.add_user("go")
    model.append_delta("Warm **up** with `code` and [a link](https://example.org).\n\n")
    model.flush()
    settle(view)
    view.close()
    from ui.collector import settle_startup_objects

    settle_startup_objects()  # as the app does once its window is ready (ui.main)
    results: dict[str, Any] = {}
    for name in names or list(PATTERNS):
        text = _hostile(PATTERNS[name], chars)
        model, view = fresh_view()
        model.add_user("go")
        settle(view)
        worst = 0.0
        worst_at = 0
        frames = 0
        began = time.perf_counter()
        for start in range(0, len(text), piece):
            started = time.perf_counter()
            model.append_delta(text[start : start + piece])
            model.flush()
            settle(view)
            took = time.perf_counter() - started
            frames += 1
            if took > worst:
                worst, worst_at = took, min(frames * piece, len(text))
            if time.perf_counter() - began > max_seconds:
                break
        complete = frames * piece >= len(text)
        model.finish_streaming()
        settle(view)
        view.close()
        # The finished message shown again (opening the conversation later).
        model2, view2 = fresh_view()
        started = time.perf_counter()
        model2.add_user("go")
        model2.append_delta(text[: frames * piece])
        model2.flush()
        model2.finish_streaming()
        settle(view2)
        reopen = time.perf_counter() - started
        view2.close()
        results[name] = {
            "worst_frame_ms": worst * 1000,
            "worst_at_chars": worst_at,
            "frames": frames,
            "streamed_chars": min(frames * piece, len(text)),
            "complete": complete,
            "reopen_ms": reopen * 1000,
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chars", type=int, default=200_000)
    parser.add_argument("--piece", type=int, default=2_000)
    parser.add_argument("--max-seconds", type=float, default=60.0)
    parser.add_argument("--only", action="append", choices=sorted(PATTERNS))
    args = parser.parse_args()
    print(json.dumps(measure(args.chars, args.piece, args.max_seconds, args.only), indent=2))


if __name__ == "__main__":
    main()
