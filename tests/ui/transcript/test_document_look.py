"""How an answer reads: spacing, tables, quotes, code and state colours from the theme, and the
same layout while it streams, once it finished and when the conversation is reopened."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QTextDocument
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from app import AssistantMessage, UserMessage
from app.simulator import Reply
from tests.ui.helpers import until, window_on_simulator
from ui.theme import DARK, LIGHT, TEXT_PAIRS, Tokens, contrast, palette_for
from ui.transcript.blocks import block_cuts
from ui.transcript.document import document_css, gaps
from ui.transcript.layout import row_geometry
from ui.transcript.markdown import code_style, render_markdown
from ui.transcript.model import TranscriptModel
from ui.transcript.render import (
    MessageRender,
    _document,
    header_html,
    tool_state_token,
    update_render,
)
from ui.transcript.rows import ItemKind, ToolState, TranscriptItem
from ui.transcript.view import TranscriptView

ANSWER = (
    "## Plan\n\n"
    "First a paragraph with **bold**, `code` and a [link](https://example.org).\n\n"
    "- one item\n- two items\n\n"
    "1. first\n\n"
    "   a paragraph that continues the first item\n\n"
    "2. second\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "> quoted words\n\n"
    "```python\nx = 1\n\ny = 2\n```\n\n"
    "### Smaller heading\n\n"
    "The roots are $x = \\frac{-b}{2a}$ here.\n\n"
    "$$a^2 + b^2 = c^2$$\n\n"
    "Last words.\n"
)


def _render(text: str, *, streaming: bool = False, tokens: Tokens = LIGHT) -> MessageRender:
    item = TranscriptItem(ItemKind.ASSISTANT, text, streaming=streaming)
    render = MessageRender(600.0, tokens.dark)
    update_render(render, item, QApplication.font(), palette_for(tokens))
    return render


def _shape(render: MessageRender) -> list[tuple[str, float]]:
    return [(doc.toPlainText(), doc.size().height()) for doc in render.chunks]


# --- the spacing rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("margins", "expected"),
    [
        ([], []),
        ([(20.0, 8.0)], [0.0]),  # one document: its own margins are left out
        ([(0.0, 12.0), (0.0, 12.0)], [0.0, 12.0]),  # paragraph, paragraph
        ([(0.0, 12.0), (24.0, 8.0)], [0.0, 24.0]),  # paragraph, heading: the larger wins
        ([(24.0, 8.0), (0.0, 12.0)], [0.0, 8.0]),  # heading, paragraph
        ([(0.0, 12.0), (4.0, 12.0), (0.0, 0.0)], [0.0, 12.0, 12.0]),
    ],
)
def test_gaps_between_documents_collapse_like_margins(
    margins: list[tuple[float, float]], expected: list[float]
) -> None:
    assert gaps(margins) == expected


@pytest.mark.parametrize(
    "text",
    [
        "One para.\n\nTwo para.\n\nThree.\n",
        "Intro.\n\n## Heading\n\nBody after.\n",
        "Intro.\n\n# Title\n\n### Small\n\nBody.\n",
        "Text.\n\n- a\n- b\n\nAfter.\n",
        # Not tables, code or quotes (drawn as tables): inside one document Qt sets a table
        # flush against the paragraph above it; as documents they keep the margins.
    ],
)
def test_blocks_as_documents_are_spaced_as_one_document(text: str, qapp: Any) -> None:
    css = document_css(LIGHT, QApplication.font().pointSizeF())
    whole = _document(render_markdown(text).html, 600, QApplication.font(), css)
    cuts = [0, *block_cuts(text), len(text)]
    pieces = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if text[a:b].strip()]
    docs = [_document(render_markdown(p).html, 600, QApplication.font(), css) for p in pieces]
    stacked = sum(d.size().height() for d in docs) + sum(gaps([d.margins for d in docs]))  # type: ignore[attr-defined]
    assert len(docs) >= 3
    assert stacked == pytest.approx(whole.size().height(), abs=1.0)


def test_prose_has_a_line_height_and_paragraph_spacing(qapp: Any) -> None:
    font = QApplication.font()
    css = document_css(LIGHT, font.pointSizeF())
    plain = QTextDocument()
    plain.setDocumentMargin(0)
    plain.setDefaultFont(font)
    plain.setHtml("<p>one line</p>")
    styled = _document("<p>one line</p>", 600, font, css)
    assert styled.size().height() >= plain.size().height() * 1.45  # line-height: 150 %
    assert styled.margins == (0.0, 12.0)  # type: ignore[attr-defined]
    heading = _document("<h2>Title</h2>", 600, font, css)
    assert heading.margins[0] > heading.margins[1] > 0  # type: ignore[attr-defined]


# --- the same layout streamed, finished and reopened ---------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_answer_looks_the_same_streamed_finished_and_reopened(seed: int, qapp: Any) -> None:
    rng = random.Random(seed)
    item = TranscriptItem(ItemKind.ASSISTANT, "", streaming=True)
    streamed = MessageRender(600.0, False)
    pos = 0
    while pos < len(ANSWER):
        pos = min(len(ANSWER), pos + rng.randint(1, 40))
        item.text = ANSWER[:pos]
        update_render(streamed, item, QApplication.font(), palette_for(LIGHT))
    item.streaming = False
    update_render(streamed, item, QApplication.font(), palette_for(LIGHT))
    reopened = _render(ANSWER)
    assert _shape(streamed) == _shape(reopened)
    assert streamed.height() == pytest.approx(reopened.height())
    assert len(reopened.chunks) >= 12  # every block its own document


def test_a_continued_list_item_stays_one_block() -> None:
    text = "1. first\n\n   continues the first item\n\n2. second\n\nAfter.\n"
    pieces = [text[:cut] for cut in block_cuts(text)]
    assert "1. first\n\n   continues the first item\n\n" in pieces  # not cut after "first"
    assert "1. first\n\n" not in pieces
    # While the line after a blank one is unknown, nothing is decided.
    assert block_cuts("para\n\n") == [] and block_cuts("para\n\n  ") == []
    assert block_cuts("para\n\nn") == [len("para\n\n")]


def test_the_reopened_window_shows_a_streamed_answer_at_the_same_height(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        async with window_on_simulator(tmp_path / "data") as (sim, window):
            sim.enqueue(Reply(text=ANSWER, tokens_per_second=400))
            window.controller.send("Plan it")
            await until(lambda: not window.controller.busy, what="the answer finished")
            view = window.transcript
            row = window.transcript_model.rowCount() - 1
            streamed = view.visualRect(view.model().index(row, 0)).height()
            # The same messages loaded from disk into a fresh model and view of that width
            # (as saved: with the tokens the provider reported, shown under the answer).
            model = TranscriptModel()
            saved = await window.services.history(window.controller.session_id)
            assert isinstance(saved[-1], AssistantMessage) and saved[-1].content == ANSWER
            model.load_history(saved)
            fresh = TranscriptView()
            fresh.resize(view.size())
            fresh.setModel(model)
            option = QStyleOptionViewItem()
            fresh.initViewItemOption(option)
            option.rect = QRect(0, 0, view.viewport().width(), 100)
            assert fresh.delegate.sizeHint(option, model.index(1, 0)).height() == streamed

    run(scenario())


# --- colours from the theme -------------------------------------------------------------------


@pytest.mark.parametrize("tokens", [LIGHT, DARK], ids=["light", "dark"])
def test_every_code_colour_reads_on_the_code_background(tokens: Tokens) -> None:
    from pygments.styles import get_style_by_name  # type: ignore[import-untyped]

    style = get_style_by_name(code_style(tokens.dark))
    colours = {f"#{spec['color']}" for _token, spec in style if spec["color"]}
    assert colours
    worst = min(contrast(colour, tokens.code_bg) for colour in colours)
    assert worst >= 4.5, f"{code_style(tokens.dark)}: {worst:.2f}:1 on {tokens.code_bg}"


@pytest.mark.parametrize("state", list(ToolState))
def test_tool_states_are_drawn_in_readable_theme_colours(state: ToolState) -> None:
    token = tool_state_token(state)
    assert (token, "tool_bg") in TEXT_PAIRS  # so the contrast test covers it in each theme


@pytest.mark.parametrize("tokens", [LIGHT, DARK], ids=["light", "dark"])
def test_links_code_tables_and_quotes_use_the_theme(tokens: Tokens, qapp: Any) -> None:
    text = "A [link](https://example.org).\n\n| a |\n|---|\n| 1 |\n\n> said\n\n```\nx\n```\n"
    html = render_markdown(text, dark=tokens.dark).html
    for colour in (tokens.rule, tokens.code_bg, tokens.code_header):
        assert colour in html
    render = _render(text, tokens=tokens)
    link_doc = render.chunks[0]
    cursor = link_doc.find("link")
    assert cursor.charFormat().foreground().color() == QColor(tokens.link)
    for hard_coded in ("#272822", "#3a3b35", "#f5f5f5", "#e8e8e8"):
        assert hard_coded not in html


def test_the_persons_messages_have_no_header_and_even_padding(qapp: Any) -> None:
    user = TranscriptItem(ItemKind.USER, "What is in notes.md?")
    assert header_html(user) == ""
    render = MessageRender(400.0, False)
    update_render(render, user, QApplication.font(), palette_for(LIGHT))
    docs = render.docs()
    geometry = row_geometry(user, docs, QRect(0, 0, 800, 200))
    assert geometry.card is not None
    text_top = geometry.origins[0].y() - geometry.card.top()
    ink_bottom = docs[-1].size().height() - docs[-1].leading  # type: ignore[attr-defined]
    text_bottom = geometry.card.bottom() - (geometry.origins[-1].y() + ink_bottom)
    assert text_top == pytest.approx(text_bottom, abs=1.0)


def test_deeply_nested_quotes_get_at_most_two_bars() -> None:
    from ui.transcript.markdown import QUOTE_BARS

    html = render_markdown("> " * 12 + "deep words\n\n> shallow\n").html
    assert html.count("<table") == QUOTE_BARS + 1  # Qt lays out nested tables in 2^depth
    assert html.count("<table") == html.count("</table>")
    assert html.count("<blockquote>") == html.count("</blockquote>") > 0
    assert "deep words" in html and "shallow" in html


def test_a_code_blocks_copy_link_says_copied_for_a_moment(qapp: Any, qtbot: Any) -> None:
    model = TranscriptModel()
    model.load_history([UserMessage("code?"), AssistantMessage("Here:\n\n```python\nx = 1\n```\n")])
    view = TranscriptView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    assert "continuum-copy:0" in view.anchors(1)

    def strip() -> str:
        option = view._option(model.index(1, 0))
        render = view.delegate.render_for(
            model.item(1), view.delegate.width_for(model.item(1), option), option
        )
        return next(doc.toPlainText() for doc in render.chunks if "x = 1" in doc.toPlainText())

    height = view.visualRect(model.index(1, 0)).height()
    view.activate_anchor(1, "continuum-copy:0")
    assert QApplication.clipboard().text() == "x = 1"
    assert "✓ Copied" in strip()
    assert view.visualRect(model.index(1, 0)).height() == height  # nothing reflows
    qtbot.waitUntil(lambda: "✓ Copied" not in strip(), timeout=5000)
    assert "Copy" in strip()
