"""How often a live answer is redrawn (60 Hz, 20 Hz in a burst faster than anyone reads), and
the heights rows' documents remember."""

from __future__ import annotations

import time
from typing import Any

import pytest
from PySide6.QtGui import QFont

from ui.transcript.model import (
    BURST_CHARS_PER_S,
    BURST_INTERVAL_MS,
    FLUSH_INTERVAL_MS,
    TranscriptModel,
    flush_interval_ms,
)
from ui.transcript.render import _document, doc_height


@pytest.mark.parametrize(
    ("chars", "seconds", "expected"),
    [
        (0, 0.016, FLUSH_INTERVAL_MS),
        (40, 0.016, FLUSH_INTERVAL_MS),  # ~100 tokens a second: reading pace
        (130, 0.016, FLUSH_INTERVAL_MS),  # the fastest hosted models (~8,000 characters/s)
        (960, 0.016, FLUSH_INTERVAL_MS),  # exactly 60,000 a second: not beyond
        (961, 0.016, BURST_INTERVAL_MS),
        (4_000, 0.016, BURST_INTERVAL_MS),  # a local simulator, a buffered proxy
        (2_000, 0.05, FLUSH_INTERVAL_MS),  # 40,000 a second over a longer wait: below
        (4_000, 0.05, BURST_INTERVAL_MS),
        (9_000, 0.1, BURST_INTERVAL_MS),  # at the longer interval: still a burst
        (5_000, 0.1, FLUSH_INTERVAL_MS),  # 50,000 a second: back to every frame
        (961, 0.0, BURST_INTERVAL_MS),  # gathered in no time: counted as one frame's worth
        (900, 0.0, FLUSH_INTERVAL_MS),
    ],
)
def test_flush_interval(chars: int, seconds: float, expected: int) -> None:
    assert flush_interval_ms(chars, seconds) == expected
    assert BURST_CHARS_PER_S * 0.016 == 960  # (the table's boundary)


def test_a_burst_slows_the_frames_and_reading_pace_brings_them_back(qtbot: Any) -> None:
    model = TranscriptModel()
    timer = model._flush
    assert timer.interval() == FLUSH_INTERVAL_MS
    model.append_delta("x" * 5_000)  # thousands of characters in one frame
    qtbot.waitUntil(lambda: model.streaming_item is not None and bool(model.item(0).text))
    assert model.item(0).text == "x" * 5_000
    assert timer.interval() == BURST_INTERVAL_MS
    # The next frame waits the longer interval, then shows everything gathered meanwhile.
    changes: list[float] = []
    model.dataChanged.connect(lambda *_: changes.append(time.monotonic()))
    started = time.monotonic()
    model.append_delta(" calm")
    assert timer.isActive() and timer.interval() == BURST_INTERVAL_MS
    qtbot.waitUntil(lambda: bool(changes), timeout=2000)
    assert changes[0] - started >= (BURST_INTERVAL_MS - 5) / 1000
    assert model.item(0).text.endswith(" calm")
    assert timer.interval() == FLUSH_INTERVAL_MS  # five characters: back to every frame
    model.finish_streaming()


def test_reasoning_counts_too(qtbot: Any) -> None:
    model = TranscriptModel()
    model.append_reasoning("r" * 3_000)
    model.append_delta("t" * 3_000)  # (flushes the reasoning first, keeping the order)
    model.flush()
    assert model._flush.interval() == BURST_INTERVAL_MS


def test_a_document_remembers_its_height_per_width(qapp: Any) -> None:
    doc = _document("<p>" + "words that wrap " * 200 + "</p>", 600.0, QFont(), "")
    wide = doc_height(doc)
    assert wide == doc.size().height() > 0
    doc.setTextWidth(200.0)
    narrow = doc_height(doc)
    assert narrow == doc.size().height() > wide  # a new width is measured again
    doc.setTextWidth(600.0)
    assert doc_height(doc) == wide
