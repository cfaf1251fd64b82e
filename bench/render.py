"""Render cost of one streamed delta against the length of the message it extends.

The real ``TranscriptModel`` and ``TranscriptView`` (shown, offscreen, 840×640). For each length
L (1k, 10k, 100k characters of realistic Markdown) a streaming answer of L characters is on
screen, streamed in 400-character pieces (so finished blocks became chunks as in a real
stream); then each delta (one word, as a provider sends it) is timed through everything the app
does for it: ``append_delta`` + ``flush`` (what the 16 ms coalescing timer calls), the view's
relayout and a synchronous repaint of the viewport. The figure is the median per delta; it must
not grow with L (ratio against the 1k case).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from bench import _qt  # noqa: F401  (sets the offscreen platform)
from bench._text import markdown_text

LENGTHS = (1_000, 10_000, 100_000)


def measure(deltas: int = 60) -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication

    from ui.transcript import TranscriptModel, TranscriptView

    app = QApplication.instance() or QApplication([sys.argv[0]])
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    view.resize(840, 640)
    view.show()

    def settle() -> None:
        app.processEvents()
        app.processEvents()
        view.viewport().repaint()

    results: dict[str, Any] = {}
    for length in LENGTHS:
        model.clear()
        model.add_user("go")
        # Built block by block, as a stream delivers it (finished blocks become chunks).
        text = markdown_text(length, seed=length)
        for start in range(0, len(text), 400):
            model.append_delta(text[start : start + 400])
            model.flush()
            settle()
        samples = []
        for k in range(deltas + 5):
            started = time.perf_counter()
            model.append_delta(" word" if k % 7 else " words.")
            model.flush()
            settle()
            samples.append(time.perf_counter() - started)
        samples = samples[5:]  # the first few deltas warm caches
        item = model.streaming_item
        assert item is not None
        render = view.delegate._renders[item.uid]
        results[str(length)] = {
            "median_ms": statistics.median(samples) * 1000,
            "p95_ms": sorted(samples)[int(len(samples) * 0.95)] * 1000,
            "chars": len(item.text),
            "rendered_chars_per_delta": render.last_rendered_chars,
        }
    base = results[str(LENGTHS[0])]["median_ms"]
    for length in LENGTHS:
        results[str(length)]["ratio_vs_1k"] = results[str(length)]["median_ms"] / base
    view.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deltas", type=int, default=60)
    args = parser.parse_args()
    print(json.dumps(measure(args.deltas), indent=2))


if __name__ == "__main__":
    main()
