"""How often a live answer is redrawn (60 Hz, 20 Hz in a burst faster than anyone reads), and
the heights rows' documents remember."""

from __future__ import annotations

import time
from typing import Any

import pytest
from PySide6.QtGui import QFont

from ui.transcript.actions import relabel_anchor
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
        (9_000, 0.1, BURST_INTERVAL_MS),  # over a longer wait: still a burst
        (5_000, 0.1, FLUSH_INTERVAL_MS),  # 50,000 a second: back to every frame
        (961, 0.0, BURST_INTERVAL_MS),  # no time since the last frame: counted as one frame
        (900, 0.0, FLUSH_INTERVAL_MS),
    ],
)
def test_flush_interval(chars: int, seconds: float, expected: int) -> None:
    assert flush_interval_ms(chars, seconds) == expected
    assert BURST_CHARS_PER_S * 0.016 == 960  # (the table's boundary)


def _burst(model: TranscriptModel, qtbot: Any) -> None:
    """Thousands of characters in an answer's first frame (its rate counted from the first
    piece), then thousands more."""
    model.append_delta("x" * 5_000)
    qtbot.waitUntil(lambda: model.streaming_item is not None and bool(model.item(0).text))
    assert model._flush.interval() == BURST_INTERVAL_MS
    model.append_delta("y" * 5_000)
    qtbot.waitUntil(lambda: model.item(0).text.endswith("y"), timeout=2000)


def test_a_burst_slows_the_frames_and_reading_pace_brings_them_back(qtbot: Any) -> None:
    model = TranscriptModel()
    timer = model._flush
    assert timer.interval() == FLUSH_INTERVAL_MS
    _burst(model, qtbot)
    assert model.item(0).text == "x" * 5_000 + "y" * 5_000
    assert timer.interval() == BURST_INTERVAL_MS
    # The next frame waits the longer interval, then shows everything gathered meanwhile.
    changes: list[float] = []
    model.dataChanged.connect(lambda *_: changes.append(time.monotonic()))
    started = time.monotonic()
    model.append_delta(" calm")
    assert timer.isActive() and timer.interval() == BURST_INTERVAL_MS
    qtbot.waitUntil(lambda: bool(changes), timeout=2000)
    # (Qt may fire a coarse timer up to 5% early; 80 ms is still far from a 16 ms frame.)
    assert changes[0] - started >= 0.8 * BURST_INTERVAL_MS / 1000, changes[0] - started
    assert model.item(0).text.endswith(" calm")
    assert timer.interval() == FLUSH_INTERVAL_MS  # five characters: back to every frame
    model.finish_streaming()


def test_the_next_answer_starts_at_the_frame_rate(qtbot: Any) -> None:
    model = TranscriptModel()
    _burst(model, qtbot)
    assert model._flush.interval() == BURST_INTERVAL_MS
    model.finish_streaming()
    model.append_delta("Next answer")
    assert model._flush.isActive() and model._flush.interval() == FLUSH_INTERVAL_MS


class _Clock:
    """A monotonic clock the test moves by hand (the model reads ``time.monotonic``)."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_a_large_chunk_of_a_slow_stream_is_no_burst(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,500 characters every 150 ms (10,000 a second): the rate counts the time since the
    last frame, not just the frame's own wait. (Only the first frame, which knows no earlier
    one, takes the chunk for the start of a burst: the next waits 50 ms once.)"""
    clock = _Clock()
    monkeypatch.setattr("ui.transcript.model.time.monotonic", clock)
    model = TranscriptModel()
    for chunk in range(4):
        model.append_delta("z" * 1_500)
        clock.now += 0.016  # the timer's wait
        model.flush()
        expected = BURST_INTERVAL_MS if chunk == 0 else FLUSH_INTERVAL_MS
        assert model._flush.interval() == expected
        clock.now += 0.134  # the server's next chunk, 150 ms after this one
    # The same chunks 16 ms apart are a burst (94,000 characters a second).
    for expected in (FLUSH_INTERVAL_MS, BURST_INTERVAL_MS):
        model.append_delta("z" * 1_500)
        clock.now += 0.016
        model.flush()
        assert model._flush.interval() == expected


def test_reasoning_counts_too(qtbot: Any) -> None:
    model = TranscriptModel()
    model.append_reasoning("r" * 500)
    model.append_delta("t" * 500)  # (flushes the reasoning first, keeping the order)
    model.flush()
    assert model._flush.interval() == BURST_INTERVAL_MS  # 1,000 characters at once


def test_an_answer_at_reading_pace_keeps_every_frame(qtbot: Any) -> None:
    model = TranscriptModel()
    for word in ("Rivers ", "run ", "to ", "the ", "sea."):
        model.append_delta(word)
        model.flush()
        assert model._flush.interval() == FLUSH_INTERVAL_MS


def test_a_document_remembers_its_height_per_width(qapp: Any) -> None:
    doc = _document("<p>" + "words that wrap " * 200 + "</p>", 600.0, QFont(), "")
    wide = doc_height(doc)
    assert wide == doc.size().height() > 0
    doc.setTextWidth(200.0)
    narrow = doc_height(doc)
    assert narrow == doc.size().height() > wide  # a new width is measured again
    doc.setTextWidth(600.0)
    assert doc_height(doc) == wide


def test_a_document_edited_in_place_is_measured_again(qapp: Any) -> None:
    """A code block's Copy link says "✓ Copied" for a moment, edited in its document: a longer
    label can wrap the line, and the height follows."""
    doc = _document('<p><a href="continuum-copy:0">Copy</a> ' + "word " * 10 + "</p>", 120.0,
                    QFont(), "")  # fmt: skip
    before = doc_height(doc)
    assert relabel_anchor(doc, "continuum-copy:0", "✓ Copied, with a label long enough") == "Copy"
    assert doc_height(doc) == doc.size().height() > before
