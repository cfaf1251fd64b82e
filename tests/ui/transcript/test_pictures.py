"""Finished documents are blitted from pictures (ui/transcript/pictures.py): the view looks the
same as when every glyph is drawn, a repaint makes no new pictures, and a document that changed
in place (a Copy link relabelled), a selection or another theme is drawn anew."""

from __future__ import annotations

import random
from typing import Any

from PySide6.QtGui import QImage

from ui.transcript.actions import relabel_anchor
from ui.transcript.markdown import COPY_SCHEME
from ui.transcript.model import TranscriptModel
from ui.transcript.pictures import DocPictures
from ui.transcript.view import TranscriptView

WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()


def _view(qtbot: Any, text: str) -> tuple[TranscriptModel, TranscriptView]:
    model = TranscriptModel()
    view = TranscriptView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(700, 500)
    view.show()
    model.add_user("Write a lot, please.")
    model.append_delta(text)
    model.finish_streaming()
    qtbot.waitExposed(view)
    # Laid out and painted until the viewport keeps its width (a scroll bar may appear).
    widths = [view.viewport().width()]

    def settled() -> bool:
        _grab(view)
        widths.append(view.viewport().width())
        return widths[-1] == widths[-2]

    qtbot.waitUntil(settled)
    return model, view


def _grab(view: TranscriptView) -> QImage:
    view.viewport().repaint()
    return view.viewport().grab().toImage()


def _answer() -> str:
    rng = random.Random(3)
    prose = " ".join(rng.choice(WORDS) for _ in range(900))
    return f"{prose}\n\n```python\nx = 1\n```\n\nAnd **bold** words with `code` at the end.\n"


def test_pictures_look_like_drawn_text_and_are_reused(qtbot: Any) -> None:
    _model, view = _view(qtbot, _answer())
    pictures = view.delegate.pictures
    with_pictures = _grab(view)
    made = pictures.drawn
    assert made >= 2 and len(pictures) >= 2  # the pieces on screen
    again = _grab(view)
    assert pictures.drawn == made  # a repaint blits what it has
    assert again == with_pictures
    view.delegate.pictures = DocPictures()
    view.delegate.pictures.draw = lambda *args: False  # type: ignore[method-assign]
    drawn = _grab(view)  # every glyph drawn, as before pictures
    # The same picture, but for the edges of a few glyphs blended once more (measured: 50 of
    # 343,000 pixels, by at most 28 in a channel).
    count, worst = _differences(drawn, with_pictures)
    assert count < drawn.width() * drawn.height() // 1000 and worst <= 64


def _differences(a: QImage, b: QImage) -> tuple[int, int]:
    """How many pixels of two same-sized images differ, and the largest channel difference."""
    assert a.size() == b.size()
    first, second = bytes(a.constBits()), bytes(b.constBits())
    count = worst = 0
    for pixel in range(0, len(first), 4):
        if first[pixel : pixel + 4] != second[pixel : pixel + 4]:
            count += 1
            worst = max(
                worst,
                *(
                    abs(x - y)
                    for x, y in zip(
                        first[pixel : pixel + 3], second[pixel : pixel + 3], strict=True
                    )
                ),
            )
    return count, worst


def test_a_document_changed_in_place_is_pictured_anew(qtbot: Any) -> None:
    model, view = _view(qtbot, "Short.\n\n```python\nx = 1\n```\n")
    pictures = view.delegate.pictures
    before = _grab(view)
    made = pictures.drawn
    item = model.item(1)
    render = view.delegate._renders[item.uid]
    changed = [relabel_anchor(doc, f"{COPY_SCHEME}:0", "✓ Copied") for doc in render.chunks]
    assert any(old is not None for old in changed)  # the code block's Copy link
    after = _grab(view)
    assert pictures.drawn == made and after != before  # drawn directly as it is now
    pictured = _grab(view)
    assert pictures.drawn > made  # then its picture is made again, looking the same
    count, worst = _differences(pictured, after)  # (glyph edges blended once more, as above)
    assert count < after.width() * after.height() // 1000 and worst <= 64


def test_a_picture_is_made_at_the_second_paint(qtbot: Any) -> None:
    """The first paint of a document draws it; a picture pays from the second on."""
    from PySide6.QtCore import QPointF, QRectF
    from PySide6.QtGui import QPainter, QPalette, QPixmap, QTextDocument

    doc = QTextDocument()
    doc.setPlainText("Some finished text of an answer.")
    doc.setTextWidth(300)
    pictures = DocPictures()
    target = QPixmap(400, 100)
    painter = QPainter(target)
    try:
        clip = QRectF(0, 0, 300, doc.size().height())
        draw = lambda: pictures.draw(painter, doc, QPointF(0, 0), clip, QPalette())  # noqa: E731
        assert draw() is False and pictures.drawn == 0  # drawn directly by the caller
        assert draw() is True and pictures.drawn == 1 and len(pictures) == 1
        assert draw() is True and pictures.drawn == 1  # blitted
        doc.setPlainText("Changed in place.")
        assert draw() is False and pictures.drawn == 1  # a new look: drawn once more
        assert draw() is True and pictures.drawn == 2
    finally:
        painter.end()


def test_selected_text_and_another_theme_are_drawn_anew(qtbot: Any) -> None:
    from ui.theme import DARK, palette_for

    _model, view = _view(qtbot, _answer())
    pictures = view.delegate.pictures
    light = _grab(view)
    view.selection.select_row(1)
    selected = _grab(view)
    assert selected != light  # the highlight is drawn, not an old picture
    view.selection.clear()
    assert _grab(view) == light
    made = pictures.drawn
    view.setPalette(palette_for(DARK))
    dark = _grab(view)
    assert dark != light and pictures.drawn > made


def test_the_cache_is_bounded(qtbot: Any) -> None:
    _model, view = _view(qtbot, _answer())
    view.delegate.pictures = small = DocPictures(max_pixels=1)
    _grab(view)
    assert len(small) == 1  # the newest only (one picture is always kept while drawn)


def test_a_repaint_visits_only_the_documents_on_screen(qtbot: Any) -> None:
    """An answer of ~100,000 characters is hundreds of documents; a repaint blits or draws
    only the few the viewport shows, and the row's layout is not redone while it is unchanged."""
    from bench._text import markdown_text

    model, view = _view(qtbot, markdown_text(90_000, seed=5))
    item = model.item(1)
    render = view.delegate._renders[item.uid]
    assert len(render.docs()) > 300
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum() // 2)
    _grab(view)
    visited: list[object] = []
    pictures = view.delegate.pictures
    original = pictures.draw

    def counting(painter: Any, doc: Any, *args: Any) -> bool:
        visited.append(doc)
        return original(painter, doc, *args)

    pictures.draw = counting  # type: ignore[method-assign]
    laid_out = view.delegate._geometries[item.uid][1]
    _grab(view)
    assert 0 < len(visited) < 20
    assert view.delegate._geometries[item.uid][1] is laid_out  # not laid out again
