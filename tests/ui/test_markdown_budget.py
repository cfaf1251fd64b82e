"""Pathological Markdown is shown as plain text instead of freezing the window (issue 11, item 14).

markdown-it's inline parser is superlinear on some inputs (200 KB of ``![`` cost 6.6 s in one
frame). A block whose estimated inline work exceeds a budget is shown as its literal text; other
blocks of the same message still render as Markdown. (Timings are in ``bench/markdown_worst``.)
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QTextDocument, QTextOption

from ui.transcript.markdown import INLINE_BUDGET, inline_cost, render_markdown

PATHOLOGICAL = ["![", "[", "*a", "**a*", "_a ", "~~a", "`a", "<a", "[![", "\\["]


def shown(html_text: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html_text)
    return doc.toPlainText()


def repeat(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


def test_inline_cost_table() -> None:
    normal = ("The model reads **every** message, see [the docs](https://example.org) and "
              "`resume_point()` for *details*. ") * 30  # ~3 KB, an ordinary long paragraph
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
    text = ("Intro with **bold** and [a link](https://example.org).\n\n"
            + repeat("![", 50_000) + "\n\n"
            + "- item *one*\n- item `two`\n\n```python\nx = 1\n```\n")
    result = render_markdown(text)
    assert result.plain_blocks == 1
    assert "<strong>bold</strong>" in result.html
    assert '<a href="https://example.org">a link</a>' in result.html
    assert "<em>one</em>" in result.html and "<code>two</code>" in result.html
    assert result.code_blocks == ["x = 1"]
    assert repeat("![", 50_000) in shown(result.html)


def test_normal_markdown_is_unchanged() -> None:
    text = ("# Title\n\nSome *emphasis*, **strong**, `code`, ~~gone~~ and "
            "[link](https://example.org) ![pic](https://example.org/p.png).\n\n"
            "| a | b |\n|---|---|\n| *1* | 2 |\n\n> quoted **text**\n")
    result = render_markdown(text)
    assert result.plain_blocks == 0
    for piece in ("<h1>Title</h1>", "<em>emphasis</em>", "<strong>strong</strong>",
                  "<code>code</code>", "<s>gone</s>", '<a href="https://example.org">link</a>',
                  "[image: pic]", "<td><em>1</em></td>", "<blockquote>"):
        assert piece in result.html, piece


def test_a_streamed_pathological_answer_is_shown_as_text(qtbot: Any) -> None:
    from ui.transcript import TranscriptModel, TranscriptView

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
        model.append_delta(text[start:start + 20_000])
        model.flush()
        item = model.streaming_item
        assert item is not None
        qtbot.waitUntil(lambda it=item: it.uid in renders
                        and renders[it.uid].version == it.version, timeout=10_000)
    render = renders[item.uid]
    assert render.plain_blocks == 1
    assert text in "".join(chunk.toPlainText() for chunk in render.chunks)
    # One 60 KB "word": Qt's word-boundary wrapping is quadratic in it, wrapping anywhere not.
    assert render.chunks[-1].defaultTextOption().wrapMode() == QTextOption.WrapMode.WrapAnywhere


def test_has_long_run_table() -> None:
    from ui.transcript.render import LONG_RUN, has_long_run

    assert not has_long_run("")
    assert not has_long_run("word " * 10_000)
    assert not has_long_run("x" * LONG_RUN)
    assert has_long_run("x" * (LONG_RUN + 1))
    assert has_long_run("a few words then " + "[" * (LONG_RUN + 1) + " and more")
