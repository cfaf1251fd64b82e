"""Pathological Markdown is shown as plain text instead of freezing the window (issue 11, item 14).

markdown-it's inline parser is superlinear on some inputs (200 KB of ``![`` cost 6.6 s in one
frame). A block whose estimated inline work exceeds a budget is shown as its literal text; other
blocks of the same message still render as Markdown. (Timings are in ``bench/markdown_worst``.)
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QTextDocument

from ui.transcript.markdown import INLINE_BUDGET, inline_cost, render_markdown

PATHOLOGICAL = ["![", "[", "*a", "**a*", "_a ", "~~a", "`a", "<a", "[![", "\\["]


def shown(html_text: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html_text)
    return doc.toPlainText()


def repeat(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


def test_inline_cost_table() -> None:
    normal = (
        "The model reads **every** message, see [the docs](https://example.org) and "
        "`resume_point()` for *details*. "
    ) * 30  # ~3 KB, an ordinary long paragraph
    cases = [
        ("", False),
        ("plain words " * 5000, False),  # 60 KB without markup: linear, always fine
        (normal, False),
        (repeat("![", 200_000), True),
        (repeat("[", 20_000), True),
        (repeat("*a", 20_000), True),
        (repeat("<a", 20_000), True),
        (repeat("`a", 20_000), True),
    ]
    for text, over in cases:
        assert (inline_cost(text) > INLINE_BUDGET) is over, text[:40]


@pytest.mark.parametrize("unit", PATHOLOGICAL)
def test_pathological_inline_falls_back_to_its_text(unit: str, qapp: Any) -> None:
    text = repeat(unit, 100_000)  # what the view renders at most of one message
    result = render_markdown(text)
    assert result.plain_blocks == 1
    assert shown(result.html).strip() == text.strip()


def test_other_blocks_keep_their_markdown(qapp: Any) -> None:
    text = (
        "Intro with **bold** and [a link](https://example.org).\n\n"
        + repeat("![", 50_000)
        + "\n\n"
        + "- item *one*\n- item `two`\n\n```python\nx = 1\n```\n"
    )
    result = render_markdown(text)
    assert result.plain_blocks == 1
    assert "<strong>bold</strong>" in result.html
    assert '<a href="https://example.org">a link</a>' in result.html
    assert "<em>one</em>" in result.html and "<code>two</code>" in result.html
    assert result.code_blocks == ["x = 1"]
    assert repeat("![", 50_000) in shown(result.html)


def test_normal_markdown_is_unchanged() -> None:
    text = (
        "# Title\n\nSome *emphasis*, **strong**, `code`, ~~gone~~ and "
        "[link](https://example.org) ![pic](https://example.org/p.png).\n\n"
        "| a | b |\n|---|---|\n| *1* | 2 |\n\n> quoted **text**\n"
    )
    result = render_markdown(text)
    assert result.plain_blocks == 0
    for piece in (
        "<h1>Title</h1>",
        "<em>emphasis</em>",
        "<strong>strong</strong>",
        "<code>code</code>",
        "<s>gone</s>",
        '<a href="https://example.org">link</a>',
        "[image: pic]",
        "<td><em>1</em></td>",
        "<p>quoted <strong>text</strong></p>",  # in a quote: a two-cell table with a bar
    ):
        assert piece in result.html, piece


def test_a_streamed_pathological_answer_is_shown_as_text(qtbot: Any) -> None:
    from ui.transcript import TranscriptModel, TranscriptView
    from ui.transcript.blocks import LONG_LINE

    model = TranscriptModel()
    view = TranscriptView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(840, 640)
    view.show()
    model.add_user("go")
    text = repeat("![", 60_000)
    renders = view.delegate._renders
    for start in range(0, len(text), 20_000):
        model.append_delta(text[start : start + 20_000])
        model.flush()
        item = model.streaming_item
        assert item is not None
        qtbot.waitUntil(
            lambda it=item: it.uid in renders and renders[it.uid].version == it.version,
            timeout=10_000,
        )
    render = renders[item.uid]
    assert render.plain_blocks == len(render.chunks) == len(text) // LONG_LINE
    assert text in "".join(chunk.toPlainText() for chunk in render.chunks)
    # One 60 KB "word" is cut in pieces of LONG_LINE characters (blocks.py): a frame lays out
    # at most one piece (Qt's word-boundary wrapping was quadratic in the whole run).
    assert max(len(chunk.toPlainText()) for chunk in render.chunks) <= LONG_LINE


def test_has_long_run_table() -> None:
    from ui.transcript.render import LONG_RUN, has_long_run

    assert not has_long_run("")
    assert not has_long_run("word " * 10_000)
    assert not has_long_run("x" * LONG_RUN)
    assert has_long_run("x" * (LONG_RUN + 1))
    assert has_long_run("a few words then " + "[" * (LONG_RUN + 1) + " and more")


# --- Block-level work: long blocks without a blank line are cut (stable_boundary) -------------

BLOCK_PATTERNS = {
    "star-lines": "*\n",
    "dash-lines": "- \n",
    "numbered-lines": "1.\n",
    "bracket-lines": "[\n",
    "quote-lines": "> \n",
}


@pytest.mark.parametrize("unit", list(BLOCK_PATTERNS.values()), ids=list(BLOCK_PATTERNS))
def test_stable_boundary_cuts_long_blocks(unit: str) -> None:
    from ui.transcript.blocks import MAX_BLOCK_LINES, stable_boundary

    text = unit * (MAX_BLOCK_LINES * 10) + unit[0]  # unfinished last line
    boundary = stable_boundary(text)
    assert 0 < boundary < len(text) and text[boundary - 1] == "\n"
    assert text[boundary:].count("\n") <= 2 * MAX_BLOCK_LINES  # the tail stays short


def test_stable_boundary_cut_table() -> None:
    from ui.transcript.blocks import MAX_BLOCK_LINES, long_block_cuts, stable_boundary

    n = MAX_BLOCK_LINES
    short_list = "- item\n" * (n - 2) + "\nafter\n"
    assert long_block_cuts(short_list) == []  # a blank line comes first: nothing forced
    assert stable_boundary(short_list) == short_list.index("after")
    fenced = "```\n" + "*\n" * (3 * n) + "```\nx"
    assert long_block_cuts(fenced) == [] and stable_boundary(fenced) == len(fenced) - 1
    # Never above a deeper (continuation) line, a setext underline or a table row ...
    nested = "- a\n" * (n - 1) + "- b\n" + "  - deeper\n" * 3 + "- c\n" + "- d\n"
    cut = long_block_cuts(nested)
    assert [nested[:c].splitlines()[-1] for c in cut] == ["  - deeper"]
    heading = "word\n" * (n - 1) + "Title\n---\nnext\nmore\n"
    assert [heading[:c].splitlines()[-1] for c in long_block_cuts(heading)] == ["---"]
    table = "| h | i |\n|---|---|\n" + "| a | b |\n" * (3 * n)
    cuts = long_block_cuts(table)
    assert cuts == [len("| h | i |\n|---|---|\n") + len("| a | b |\n") * (2 * n - 2)]
    # ... and the next line must be complete before deciding (every stream prefix cuts alike).
    lines = "x\n" * n
    assert long_block_cuts(lines) == [] and long_block_cuts(lines + "y") == []
    assert long_block_cuts(lines + "y\n") == [len(lines)]


def test_stable_boundary_cuts_a_block_of_long_lines() -> None:
    """A list of 2,000-character items is cut by its characters, long before 200 lines."""
    from ui.transcript.blocks import MAX_BLOCK_CHARS, long_block_cuts, stable_boundary

    item = "- " + "a*" * 999 + "\n"  # 2,001 characters
    items = item * 50
    cuts = long_block_cuts(items)
    per_block = -(-MAX_BLOCK_CHARS // len(item))  # items until the block reaches the cap
    assert cuts == [len(item) * per_block * k for k in range(1, 50 // per_block + 1)][: len(cuts)]
    assert len(cuts) == (50 - 1) // per_block  # the last cut needs a complete next line
    assert len(items) - stable_boundary(items) <= MAX_BLOCK_CHARS + len(item)
    # A table is never cut by characters (its rows cannot start a block): only by lines.
    table = "| h | i |\n|---|---|\n" + ("| " + "x" * 200 + " | y |\n") * 100
    assert long_block_cuts(table) == []
    # Prose lines of a paragraph are kept together until a line that may start a block.
    prose = ("word " * 100 + "\n") * 50
    assert all(prose[c - 1] == "\n" for c in long_block_cuts(prose))


def _streamed(qtbot: Any, text: str, piece: int) -> tuple[Any, Any]:
    from ui.transcript import TranscriptModel, TranscriptView

    model = TranscriptModel()
    view = TranscriptView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(840, 640)
    view.show()
    model.add_user("go")
    renders = view.delegate._renders
    for start in range(0, len(text), piece):
        model.append_delta(text[start : start + piece])
        model.flush()
        item = model.streaming_item
        assert item is not None
        qtbot.waitUntil(
            lambda it=item: it.uid in renders and renders[it.uid].version == it.version,
            timeout=10_000,
        )
    return model, renders[item.uid]


def _list_items(chunks: list[QTextDocument]) -> list[str]:
    items = []
    for doc in chunks:
        block = doc.begin()
        while block.isValid():
            if block.textList() is not None:
                items.append(block.textList().itemText(block) + block.text().strip())
            block = block.next()
    return items


@pytest.mark.parametrize("unit", list(BLOCK_PATTERNS.values()), ids=list(BLOCK_PATTERNS))
def test_hostile_block_patterns_show_everything_in_bounded_pieces(unit: str, qtbot: Any) -> None:
    from PySide6.QtWidgets import QApplication

    from ui.transcript.blocks import MAX_BLOCK_LINES
    from ui.transcript.render import MAX_RENDERED_LINES, MessageRender, update_render

    text = unit * (MAX_RENDERED_LINES - 10)
    whole = QTextDocument()
    whole.setHtml(render_markdown(text).html)
    model, render = _streamed(qtbot, text, 997)
    assert len(render.chunks) >= text.count("\n") // (2 * MAX_BLOCK_LINES)  # cut ...
    assert render.chunks[-1].toPlainText().count("\n") <= 2 * MAX_BLOCK_LINES  # short tail
    # ... and nothing is lost: the same text and list items as one render of the whole.
    plain = "".join(doc.toPlainText() for doc in render.chunks)
    assert plain.replace("\n", "") == whole.toPlainText().replace("\n", "")
    items = _list_items(render.chunks)
    assert len(items) == len(_list_items([whole]))
    # Shown again from history: the same pieces as when streamed.
    item = model.streaming_item
    model.finish_streaming()
    again = MessageRender(800.0, False)
    update_render(again, item, QApplication.font(), QApplication.palette())
    assert [d.toPlainText() for d in again.chunks] == [d.toPlainText() for d in render.chunks]


def test_heavy_list_items_stream_in_bounded_blocks_and_reopen_alike(qtbot: Any) -> None:
    """List items each within the budget, together far over it: streamed in blocks of about
    ``MAX_BLOCK_CHARS``, every item shown, and shown again from history the same way."""
    from PySide6.QtWidgets import QApplication

    from ui.transcript.blocks import MAX_BLOCK_CHARS
    from ui.transcript.render import MessageRender, update_render

    item_text = "- " + "a*" * 999 + "\n"
    text = item_text * 20
    model, render = _streamed(qtbot, text, 2000)
    sources = [doc.toPlainText() for doc in render.chunks]
    assert len(render.chunks) >= 20 * len(item_text) // (MAX_BLOCK_CHARS + len(item_text))
    assert all(len(source) <= MAX_BLOCK_CHARS + len(item_text) for source in sources)
    model.finish_streaming()
    finished = model.item(model.rowCount() - 1)
    assert finished is not None and not finished.streaming and finished.text == text
    update_render(render, finished, QApplication.font(), QApplication.palette())  # as the view
    again = MessageRender(800.0, False)  # shown again from history
    update_render(again, finished, QApplication.font(), QApplication.palette())
    assert [d.toPlainText() for d in again.chunks] == [d.toPlainText() for d in render.chunks]
    assert again.plain_blocks == render.plain_blocks


def test_ordered_list_numbering_survives_a_cut(qtbot: Any) -> None:
    from ui.transcript.blocks import MAX_BLOCK_LINES

    count = 3 * MAX_BLOCK_LINES
    text = "".join(f"{i}. item {i}\n" for i in range(1, count + 1))
    _model, render = _streamed(qtbot, text, 1000)
    assert len(render.chunks) >= 2
    assert _list_items(render.chunks) == [f"{i}.item {i}" for i in range(1, count + 1)]


def test_a_message_over_the_line_limit_is_cut_with_a_note(qtbot: Any) -> None:
    from PySide6.QtWidgets import QApplication

    from ui.transcript.render import MAX_RENDERED_LINES, MessageRender, shown_end, update_render
    from ui.transcript.rows import ItemKind, TranscriptItem

    text = "word\n" * (MAX_RENDERED_LINES + 500)
    assert shown_end(text) == 5 * MAX_RENDERED_LINES
    assert shown_end("word " * 1000) == 5000
    _model, render = _streamed(qtbot, text, 5000)
    assert render.cut and render.shown_chars == 5 * MAX_RENDERED_LINES
    shown = "\n".join(doc.toPlainText() for doc in render.chunks[:-1])
    assert shown.split() == ["word"] * MAX_RENDERED_LINES  # the first 2,000 lines, no more
    assert "2,500 more characters" in render.chunks[-1].toPlainText()
    # The same as when the finished message is shown again.
    reopened = MessageRender(render.width, False)
    update_render(reopened, TranscriptItem(ItemKind.ASSISTANT, text), QApplication.font(),
                  QApplication.palette())  # fmt: skip
    assert [d.toPlainText() for d in reopened.chunks] == [d.toPlainText() for d in render.chunks]


def test_a_normal_long_document_renders_as_before(qapp: Any) -> None:
    from PySide6.QtWidgets import QApplication

    from ui.transcript.blocks import long_block_cuts
    from ui.transcript.render import MessageRender, update_render
    from ui.transcript.rows import ItemKind, TranscriptItem

    section = (
        "## Step\n\nSome *emphasis*, **strong**, `code` and [link](https://example.org)."
        "\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n| a | b |\n|---|---|\n"
        "| 1 | 2 |\n\n> quoted\n\n```python\nx = 1\n```\n\n"
    )
    text = section * 60  # ~1,500 lines, every block short
    assert long_block_cuts(text) == []
    item = TranscriptItem(ItemKind.ASSISTANT, text)
    render = MessageRender(800.0, False)
    update_render(render, item, QApplication.font(), QApplication.palette())
    # One document per block (as it streamed), showing what one render of the whole text shows.
    assert len(render.chunks) == 7 * 60
    expected = QTextDocument()
    expected.setHtml(render_markdown(text).html)
    shown = " ".join(chunk.toPlainText() for chunk in render.chunks)
    assert shown.split() == expected.toPlainText().split()
    assert len(render.code_blocks) == 60


UNCLOSED = [
    "[\n" * 200,
    "![" * 300,
    "[not a link (https://example.org) and ![no image(x.png)",
    "- [ a task without its box\n- [ another\n\n> [quoted *em* `code`",
    "<https://example.org/autolink> [ $x^2$ \\[ escaped **bold [**",
    "| a | [b |\n|---|---|\n| [1 | 2 |",
]


@pytest.mark.parametrize("text", UNCLOSED)
def test_text_without_a_closing_bracket_renders_as_with_every_rule(text: str) -> None:
    """Such text is parsed without the link rules (cheaper): the HTML must not change."""
    from ui.transcript import markdown

    with_links = markdown._parser()
    assert "]" not in text
    assert markdown._md(text) is not markdown._md("[a](https://example.org)")
    expected = with_links.render(text)
    assert markdown._md(text).render(text) == expected
    assert render_markdown(text).plain_blocks == 0


@pytest.mark.parametrize(
    "text",
    [
        "- a [link](https://example.org)\n- " + "[" * 2900,
        "# a heading ]\n\n" + "[" * 2900,
        "| a | b] |\n|---|---|\n| " + "[" * 2900 + " | c |",
    ],
)
def test_a_bracket_elsewhere_does_not_bring_the_link_rules_to_a_piece(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser is chosen per inline piece: a piece of 2,900 unclosed ``[`` (estimated at the
    cheap rate, so within the budget) must not be parsed with the link rules (35 µs each)."""
    from ui.transcript import markdown
    from ui.transcript.pieces import PIECE_CACHE

    markdown.warm_up()
    PIECE_CACHE.clear()  # a piece rendered before (another case) is not parsed again
    with_links, without = markdown._PARSERS
    pieces: dict[str, list[int]] = {"with": [], "without": []}
    for name, md in (("with", with_links), ("without", without)):
        original = md.inline.parse

        def spy(src: str, *args: Any, _name: str = name, _original: Any = original) -> Any:
            pieces[_name].append(src.count("["))
            return _original(src, *args)

        monkeypatch.setattr(md.inline, "parse", spy)
    result = render_markdown(text)
    assert result.plain_blocks == 0
    assert 2900 in pieces["without"] and all(n < 10 for n in pieces["with"])
    assert "[" * 2900 in shown(result.html)


def test_the_budget_is_the_whole_blocks(qapp: Any) -> None:
    """Fifty list items each under the budget, together far over it (they took 0.6 s)."""
    heavy = "\n".join("- " + "a*" * 1000 for _ in range(50))
    assert inline_cost("a*" * 1000) < INLINE_BUDGET < 50 * inline_cost("a*" * 1000)
    result = render_markdown(heavy)
    assert 45 <= result.plain_blocks < 50  # the first items keep their Markdown
    assert shown(result.html).count("a*" * 1000) >= 45
    normal = "\n".join(f"- item **{n}** with `code` and *stress*" for n in range(200))
    result = render_markdown(normal)
    assert result.plain_blocks == 0 and result.html.count("<strong>") == 200
    # Many light pieces never count: a dense 400-row table keeps all its Markdown.
    row = "| `a_b` | **x** | *y* | [l](https://e.org) |\n"
    table = "| h1 | h2 | h3 | h4 |\n|---|---|---|---|\n" + row * 400
    result = render_markdown(table)
    assert result.plain_blocks == 0 and result.html.count("<strong>") == 400


def test_a_smaller_budget_leaves_only_the_heavy_pieces_plain(qapp: Any) -> None:
    """A budget used up (by other pieces, or ``budget=0``) leaves only the heavy pieces plain."""
    heavy = "- " + "a*" * 400 + "\n- item **bold** and `code`\n"
    full = render_markdown(heavy)
    assert full.plain_blocks == 0 and full.inline_spent >= 1000
    starved = render_markdown(heavy, budget=0)
    assert starved.plain_blocks == 1 and starved.inline_spent == 0
    assert "<strong>bold</strong>" in starved.html  # light pieces are parsed all the same
    assert "a*" * 400 in shown(starved.html)


def test_unclosed_brackets_cost_little() -> None:
    lines = "[\n" * 1000  # a block of them once was over budget (35 µs each)
    assert inline_cost(lines) < INLINE_BUDGET < inline_cost(lines + "]")
