"""A long prose line (an answer written as one paragraph without a line break) is cut inside,
at a space before a letter where no inline markup is open, so a frame relays out only its tail;
the pieces join on screen without a gap and copy back as the line that was written."""

from __future__ import annotations

import random
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from ui.theme import LIGHT, palette_for
from ui.transcript.blocks import LONG_LINE, WHOLE_LINE, block_cuts, plain_line
from ui.transcript.model import TranscriptModel
from ui.transcript.render import MessageRender, update_render
from ui.transcript.rows import ItemKind, TranscriptItem
from ui.transcript.selection import END, Point, join_continued
from ui.transcript.view import TranscriptView

LIGHT_P = palette_for(LIGHT)
WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()


def prose(words: int, seed: int = 1, vocabulary: list[str] = WORDS) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(vocabulary) for _ in range(words))


@pytest.mark.parametrize(
    ("line", "prose_line"),
    [
        ("Plain words", True),
        ("   three spaces first", True),  # Markdown ignores up to three
        ("    four spaces: indented code", False),
        ('"Quoted" words', True),
        ("**Bold** start", True),
        ("_emphasis_ start", True),
        ("`code` start", True),
        ("```fence", False),
        ("* a bullet", False),
        ("- a bullet", False),
        ("1. a numbered item", False),
        ("# a heading", False),
        ("> a quote", False),
        ("| a | table |", False),
        ("<div>html</div>", False),
        ("***", False),
        ("_ _ _", False),
        ("", False),
    ],
)
def test_which_lines_read_as_prose(line: str, prose_line: bool) -> None:
    assert plain_line(line) is prose_line


def test_a_long_line_is_cut_after_a_space_before_a_letter() -> None:
    text = prose(6_000)
    cuts = block_cuts(text)
    assert len(cuts) >= len(text) // (LONG_LINE + 20) - 1 >= 10
    previous = 0
    for cut in cuts:
        assert text[cut - 1] == " " and text[cut].isalpha()
        assert LONG_LINE < cut - previous < LONG_LINE + 20  # the first fitting space
        previous = cut


@pytest.mark.parametrize(
    "text",
    [
        "- " + prose(2_000),  # a list item: its second half would leave the list
        "> " + prose(2_000),  # a quote
        "# " + prose(2_000),  # a heading
        "    " + prose(2_000),  # indented code
        "```\n" + prose(2_000) + "\n```\n",  # a fenced block
        "Intro line\n- item\n" + prose(2_000),  # a lazy line of a list item
        "see (this " + prose(2_000),  # a bracket that never closes
        "- item " + "x" * 10_000,  # a run, but not from where the list item's line starts
        "an *open emphasis " + prose(2_000),
        "an `open code span " + prose(2_000),
    ],
)
def test_lines_that_are_not_plain_prose_are_never_cut_inside(text: str) -> None:
    assert len(text) > 3 * LONG_LINE
    assert all(text[cut - 1] == "\n" for cut in block_cuts(text))


@pytest.mark.parametrize("unit", ["![", "[", "`", "*a", "x"])
def test_a_run_without_whitespace_is_cut_at_its_length(unit: str) -> None:
    text = unit * (5 * LONG_LINE // len(unit))
    cuts = block_cuts(text)
    assert cuts == list(range(LONG_LINE, len(text), LONG_LINE))
    assert block_cuts(text[: 2 * LONG_LINE + 1]) == cuts[:2]  # decided as soon as it is seen
    for start in cuts:
        assert block_cuts(text, start) == [cut for cut in cuts if cut > start]


def test_markup_closes_before_a_cut() -> None:
    vocabulary = [*WORDS, "**bold words**", "`x = 1`", "[a link](https://example.org)", "$x^2$"]
    text = prose(4_000, seed=3, vocabulary=vocabulary)
    cuts = block_cuts(text)
    assert len(cuts) >= 3
    for start, end in zip([0, *cuts], cuts, strict=False):
        piece = text[start:end]
        for mark in "*`$":
            assert piece.count(mark) % 2 == 0
        assert piece.count("[") == piece.count("]") and piece.count("(") == piece.count(")")


@pytest.mark.parametrize("seed", [1, 2])
def test_cuts_do_not_depend_on_how_much_has_arrived(seed: int) -> None:
    """Streamed (every prefix), finished, or read again from any cut: the same cuts."""
    vocabulary = [*WORDS, "(aside)", "*it*", "snake_case", "<b>"]
    text = prose(5_000, seed=seed, vocabulary=vocabulary) + "\n\nNext paragraph.\n"
    cuts = block_cuts(text)
    assert len(cuts) >= 4
    for end in range(0, len(text), 97):
        assert block_cuts(text[:end]) == [cut for cut in cuts if cut < end]
    for start in cuts:
        assert block_cuts(text, start) == [cut for cut in cuts if cut > start]


def test_a_finished_message_keeps_its_paragraphs_whole() -> None:
    """A finished prose line up to WHOLE_LINE characters is not cut; a longer one, or one with
    a run of LONG_LINE characters without whitespace, is cut as while streaming; a scan
    restarted at any cut finds the same next cuts."""
    short, long_ = prose(1_700, seed=2), prose(4_000, seed=4)
    assert len(short) <= WHOLE_LINE < len(long_)
    run = prose(300, seed=6) + " " + "x" * (LONG_LINE + 10) + " " + prose(300, seed=7)
    text = f"{short}\n\n{long_}\n\n{run}\n\nThe end."
    streamed, whole = block_cuts(text), block_cuts(text, whole=True)
    first = len(short) + 2
    assert [c for c in streamed if c < first] and not [c for c in whole if c < first - 2]
    assert [c for c in whole if c > first] == [c for c in streamed if c > first]
    for start in whole:
        assert block_cuts(text, start, whole=True) == [c for c in whole if c > start]


def _chunks(render: MessageRender) -> list[tuple[str, float, bool]]:
    return [
        (doc.toPlainText(), doc.size().height(), getattr(doc, "joiner", None) is not None)
        for doc in render.chunks
    ]


@pytest.mark.parametrize("words", [1_700, 6_000])  # ~11,000 / ~38,000 characters
def test_a_long_paragraph_streamed_renders_as_when_reopened(words: int, qapp: Any) -> None:
    paragraph = prose(words, seed=5)
    text = paragraph + "\n\nThe end.\n"
    palette, font = palette_for(LIGHT), QApplication.font()
    item = TranscriptItem(ItemKind.ASSISTANT, "", streaming=True)
    streamed = MessageRender(600.0, False)
    rng = random.Random(7)
    costs = []
    cut = 0  # pieces of the paragraph joined without a gap, while it streamed
    pos = 0
    while pos < len(text):
        pos = min(len(text), pos + rng.randint(50, 400))
        item.text = text[:pos]
        update_render(streamed, item, font, palette)
        costs.append(streamed.last_rendered_chars)
        pieces = [doc for doc in streamed.chunks if getattr(doc, "joiner", None) is not None]
        # Nothing separates the pieces of one paragraph (a paragraph's 12 px would).
        assert all(doc.margins[1] == 0.0 for doc in pieces)  # type: ignore[attr-defined]
        cut = max(cut, len(pieces))
    item.streaming = False
    update_render(streamed, item, font, palette)
    reopened = MessageRender(600.0, False)
    update_render(reopened, TranscriptItem(ItemKind.ASSISTANT, text), font, palette)
    assert _chunks(streamed) == _chunks(reopened)
    # Each frame laid out only the tail of the line, never the whole paragraph.
    assert max(costs) < LONG_LINE + 500 < len(text) // 3
    assert cut >= len(paragraph) // (LONG_LINE + 500) >= 3
    shown = [doc.toPlainText() for doc in reopened.chunks]
    if len(paragraph) <= WHOLE_LINE:
        # Finished, the paragraph is one document again: no short line where it was cut.
        assert [part.strip() for part in shown] == [paragraph, "The end."]
    else:  # longer than any paragraph: still in pieces (each laid out on its own)
        assert len(shown) >= 5 and " ".join(shown[:-1]).split() == paragraph.split()


@pytest.mark.parametrize("text", [prose(6_000, seed=9), "![" * 5_000])
def test_a_cut_line_copies_as_it_was_written(text: str, qapp: Any) -> None:
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    view.resize(700, 500)
    model.append_delta(text)
    model.finish_streaming()
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.viewport().rect()
    item = model.item(0)
    render = view.delegate.render_for(item, view.delegate.width_for(item, option), option)
    assert len(render.chunks) >= 3
    view.selection.select_row(0)
    # The header line, then the paragraph with spaces (not line breaks) where it was cut.
    assert view.selection.selected_text() == f"Assistant\n{text}"


@pytest.mark.parametrize(
    ("parts", "joined"),
    [
        ([], []),
        ([("a", None), ("b", None)], ["a", "b"]),
        (
            [("one", " "), ("two", " "), ("three", None), ("four", None)],
            ["one two three", "four"],
        ),
        ([("![![", ""), ("![", None)], ["![![!["]),  # a run cut without a space
        ([("one", " "), ("", None)], ["one", ""]),  # nothing selected in the next piece
        ([("", " "), ("two", None)], ["two"]),  # nothing selected in the first
    ],
)
def test_pieces_of_one_line_are_joined_as_written(
    parts: list[tuple[str, str | None]], joined: list[str]
) -> None:
    assert join_continued(parts) == joined


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("*a" * 600, True),  # a 1,200-character run: shown as written, not 600 emphases
        ("*a" * 400, False),  # short enough for Markdown
        ("**bold**", False),
        ("*a* " * 300, False),  # has spaces: Markdown (emphasis)
    ],
)
def test_a_long_run_without_whitespace_is_shown_as_written(text: str, literal: bool) -> None:
    render = MessageRender(600.0, False)
    update_render(render, TranscriptItem(ItemKind.ASSISTANT, text), QApplication.font(), LIGHT_P)
    shown = "".join(doc.toPlainText() for doc in render.chunks)
    assert (shown == text) is literal
    assert (render.plain_blocks == 1) is literal


def test_crossing_the_shown_limit_mid_stream_re_renders_nothing(qapp: Any) -> None:
    """Past MAX_RENDERED_CHARS the row keeps the pieces it streamed and adds a note; the
    finished message, shown again, has the same pieces and note."""
    from ui.transcript.render import MAX_RENDERED_CHARS

    text = prose(20_000, seed=11)
    assert len(text) > MAX_RENDERED_CHARS * 1.1
    font = QApplication.font()
    item = TranscriptItem(ItemKind.ASSISTANT, "", streaming=True)
    render = MessageRender(600.0, False)
    first_piece = None
    costs: list[int] = []
    for end in range(2_000, len(text) + 2_000, 2_000):
        item.text = text[:end]
        update_render(render, item, font, LIGHT_P)
        costs.append(render.last_rendered_chars)
        if first_piece is None and len(render.chunks) > 2:
            first_piece = render.chunks[0]
    assert render.cut and render.chunks[0] is first_piece  # never rebuilt
    assert max(costs) < LONG_LINE + 2_500  # no frame rendered the whole shown part
    assert "more characters" in render.chunks[-1].toPlainText()
    reopened = MessageRender(600.0, False)
    update_render(reopened, TranscriptItem(ItemKind.ASSISTANT, text), font, LIGHT_P)
    assert _chunks(reopened) == _chunks(render)
    shown = " ".join(doc.toPlainText() for doc in render.chunks[:-1])
    assert render.shown_chars == MAX_RENDERED_CHARS
    assert shown.split() == text[:MAX_RENDERED_CHARS].split()


def _stream(render: MessageRender, text: str, step: int = 700) -> TranscriptItem:
    item = TranscriptItem(ItemKind.ASSISTANT, "", streaming=True)
    for end in range(step, len(text) + step, step):
        item.text = text[:end]
        update_render(render, item, QApplication.font(), LIGHT_P)
    item.streaming = False
    return item


def test_finishing_renders_again_only_from_the_paragraph_that_becomes_whole(qapp: Any) -> None:
    """Blocks before the first paragraph that streamed in pieces keep their documents (the
    finishing frame renders only from there); the result is what a reopened message shows."""
    head = "\n\n".join(f"Paragraph {i}: " + prose(40, seed=i) for i in range(30))
    text = f"{head}\n\n```python\nprint('x')\n```\n\n{prose(1_200, seed=8)}\n\nThe end."
    render = MessageRender(600.0, False)
    item = _stream(render, text)
    before = list(render.chunks)
    assert any(getattr(doc, "joiner", None) is not None for doc in before)
    update_render(render, item, QApplication.font(), LIGHT_P)
    assert render.chunks[:30] == before[:30]  # the same documents, not rendered again
    assert not any(getattr(doc, "joiner", None) is not None for doc in render.chunks)
    reopened = MessageRender(600.0, False)
    update_render(reopened, TranscriptItem(ItemKind.ASSISTANT, text), QApplication.font(), LIGHT_P)
    assert _chunks(render) == _chunks(reopened)
    assert render.code_blocks == reopened.code_blocks == ["print('x')"]


def test_a_selection_in_a_finishing_answer_keeps_its_documents(qapp: Any) -> None:
    """A selection points at documents by number: text selected while the answer streams
    stays selected when it finishes (its paragraph stays in the pieces it streamed in)."""
    model = TranscriptModel()
    view = TranscriptView()
    view.setModel(model)
    view.resize(700, 500)
    text = prose(1_500, seed=12) + "\n\nAfter."
    model.append_delta(text)
    model.flush()
    uid = model.item(0).uid
    docs = view.selection.docs(0)
    assert len(docs) >= 4  # the header, three pieces of the paragraph, "After."
    # From inside the paragraph's second piece to the end of the answer.
    view.selection.set(Point(uid, 2, 10), Point(uid, len(docs) - 1, END))
    selected = view.selection.selected_text()
    assert selected.endswith("After.") and len(selected) > 3_000
    model.finish_streaming()
    assert view.selection.selected_text() == selected
    view.selection.clear()
    # Nothing selected: the next render of the finished answer makes the paragraph whole.
    fresh = TranscriptView()
    fresh.setModel(model)
    fresh.resize(700, 500)
    option = QStyleOptionViewItem()
    fresh.initViewItemOption(option)
    option.rect = fresh.viewport().rect()
    item = model.item(0)
    render = fresh.delegate.render_for(item, fresh.delegate.width_for(item, option), option)
    assert [doc.toPlainText().strip() for doc in render.chunks] == [
        text[: -len("\n\nAfter.")],
        "After.",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "x" * LONG_LINE,
        "a " + "x" * LONG_LINE + " b",
        " ".join(["y" * (LONG_LINE - 1)] * 4),  # long words, none of LONG_LINE: no run
        "z" * (LONG_LINE - 1),
        prose(500),
    ],
)
def test_a_run_is_found_only_where_one_is(line: str) -> None:
    from ui.transcript.blocks import _RUN_RE

    longest = max((len(word) for word in line.split()), default=0)
    assert (_RUN_RE.search(line) is not None) is (longest >= LONG_LINE)
