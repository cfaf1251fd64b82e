"""The plain-prose shortcut (ui.transcript.prose) gives markdown-it's own HTML, and is taken for
the paragraphs most answers are made of."""

from __future__ import annotations

import random

import pytest

from ui.transcript.markdown import render_markdown
from ui.transcript.prose import prose_html

# Pieces of text, plain and not: words in several scripts, the punctuation prose allows, and
# what opens Markdown (at a line's start or anywhere), spaces and line breaks in odd places.
_PIECES = [
    "word", "Lorem", "ipsum", "café", "中文", "Ωmega", "x2", "42", "½", " ", "  ", "\n", "\n\n",
    ",", ".", ";", ":", "!", "?", "'", '"', "(", ")", "%", "/", "+", "-", "=", "1.", "2)",
    "*", "_", "`", "~", "[", "]", "<", ">", "&", "#", "|", "$", "\\", "\t", "- ", "> ", "# ",
    "---", "===", "    code", "http://x.y", "&amp;", "<b>", "\r\n", "\u00a0", "😀",
]  # fmt: skip


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        # Mostly plain words, so that many texts are prose and the comparison means something.
        parts = [
            rng.choice(_PIECES) if rng.random() < 0.3 else rng.choice(("word", "Lorem", " "))
            for _ in range(rng.randint(1, 30))
        ]
        texts.append("".join(parts))
    return texts


@pytest.mark.parametrize("seed", range(8))
def test_the_shortcut_gives_what_markdown_it_gives(seed: int) -> None:
    taken = 0
    for text in _texts(1_500, seed):
        html = prose_html(text)
        if html is None:
            continue
        taken += 1
        assert html == render_markdown(text, shortcut=False).html, repr(text)
    assert taken > 100  # (the comparison was made often)


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog. It was 3 o'clock (or so), 50% done!",
        'Line one of a paragraph\nand its second line, "quoted" words; a/b = c + d - e?',
        "lorem ipsum dolor sit amet " * 120,  # a piece of a long streamed line (ends in a space)
        "Ελληνικά и русский, 中文 and العربية words",
    ],
)
def test_prose_takes_the_shortcut(qapp: object, text: str) -> None:
    assert prose_html(text) is not None
    assert render_markdown(text).html == render_markdown(text, shortcut=False).html


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n ",
        "a  \nb",  # a hard break
        "a \nb",  # a space before a break: markdown-it drops it; left to it
        "1. a list",
        "- a list",
        "+ a list",
        "Title\n=====",
        "Title\n---",
        "    indented code",
        " a leading space",
        "a\n\nb",  # two paragraphs
        "**bold**",
        "a `code` span",
        "a [link](http://x.y)",
        "a & b",
        "a < b",
        "a > b",
        "x_y",
        "$x$",
        "a | b",
        "tab\there",
        "smile 😀",
        "a\u00a0b",
        "crlf\r\nline",
    ],
)
def test_anything_else_goes_to_markdown_it(text: str) -> None:
    assert prose_html(text) is None
