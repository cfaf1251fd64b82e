"""Heavy inline pieces are parsed once, not on every frame (ui/transcript/pieces.py), and a
streaming tail parses a bounded amount of new ones per frame (``TAIL_FRESH``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ui.transcript import markdown
from ui.transcript.markdown import (
    HEAVY_PIECE,
    INLINE_BUDGET,
    TAIL_FRESH,
    inline_cost,
    render_markdown,
)
from ui.transcript.pieces import PIECE_CACHE, PieceCache

HEAVY = "*a* " * 150  # one heavy piece: 300 emphasis marks
assert inline_cost(HEAVY.strip()) >= HEAVY_PIECE


@pytest.fixture
def parsed() -> Iterator[list[str]]:
    """The inline pieces markdown-it parses (both parsers), in order, from an empty cache."""
    markdown.warm_up()
    PIECE_CACHE.clear()
    sources: list[str] = []
    patch = pytest.MonkeyPatch()
    for md in markdown._PARSERS:
        original = md.inline.parse

        def spy(src: str, *args: Any, _original: Any = original) -> Any:
            sources.append(src)
            return _original(src, *args)

        patch.setattr(md.inline, "parse", spy)
    yield sources
    patch.undo()
    PIECE_CACHE.clear()


def _heavy(sources: list[str]) -> list[str]:
    return [src for src in sources if inline_cost(src) >= HEAVY_PIECE]


def test_piece_cache_table() -> None:
    cache = PieceCache(entries=2, chars=10)
    cache.put("a", "12345")
    cache.put("b", "123")
    assert cache.get("a") == "12345"  # now the most recently used
    cache.put("c", "1")  # three entries: "b" goes
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == ("12345", None, "1", 2)
    cache.put("d", "123456789")  # three entries, 15 characters: "a" goes (then 10)
    assert (cache.get("a"), cache.get("c"), cache.get("d")) == (None, "1", "123456789")
    cache.put("e", "x" * 11)  # larger than the whole cache: not kept, nothing dropped
    assert cache.get("e") is None and cache.get("d") == "123456789"
    cache.put("d", "1")  # replaced: its old size is no longer counted
    cache.put("f", "123456789")  # three entries: "c" goes (then 10 characters)
    assert (cache.get("c"), cache.get("d"), cache.get("f")) == (None, "1", "123456789")
    cache.clear()
    assert len(cache) == 0


CASES = [
    "- " + HEAVY + "\n- " + HEAVY + "x\n- light *one*\n",
    "A paragraph " + HEAVY + "with [a link](https://example.org), ![pic](https://e.org/p.png), "
    "[bad](javascript:alert(1)), `code`, ~~gone~~, \\*escaped\\*, &amp; and <b>raw</b>.\n",
    "| a | b |\n|---|---|\n| " + HEAVY + " | `c` |\n",
    "# " + HEAVY + "\n\n> quoted " + HEAVY + "\n",
]


@pytest.mark.parametrize("text", CASES)
def test_a_cached_piece_renders_as_it_did_and_is_not_parsed_again(
    text: str, parsed: list[str], qapp: Any
) -> None:
    first = render_markdown(text)
    heavy = _heavy(parsed)
    assert heavy  # the case has heavy pieces, parsed the first time
    parsed.clear()
    again = render_markdown(text)
    assert _heavy(parsed) == []  # ... and not the second
    assert again.html == first.html
    assert (again.plain_blocks, again.inline_spent) == (first.plain_blocks, first.inline_spent)
    assert (first.inline_fresh, again.inline_fresh) == (first.inline_spent, 0)
    PIECE_CACHE.clear()
    assert render_markdown(text).html == first.html  # nothing cached: the same HTML


def test_pieces_that_depend_on_more_than_their_text_are_not_cached(
    parsed: list[str], qapp: Any
) -> None:
    # A reference defined in the document makes a link of "[ref]": not the cached piece.
    piece = "[ref] " + HEAVY
    render_markdown(piece + "\n")
    with_reference = render_markdown("[ref]: https://example.org\n\n" + piece + "\n")
    assert '<a href="https://example.org">ref</a>' in with_reference.html
    # A formula counts toward the document's formula limits as it renders: never cached.
    parsed.clear()
    formula = "$x^2$ " + HEAVY + "\n"
    render_markdown(formula)
    render_markdown(formula)
    assert len(_heavy(parsed)) == 2


def _items(count: int, marks: int = 300) -> list[str]:
    """Distinct heavy list items (each its own number, ``marks`` emphasis marks)."""
    return [f"- {n} " + "a*" * marks for n in range(count)]


def test_fresh_bounds_what_is_parsed_now_not_what_was_before(parsed: list[str], qapp: Any) -> None:
    items = _items(3)
    cost = inline_cost(items[0][2:])
    assert 3 * cost <= INLINE_BUDGET  # all three are within the block's budget
    text = "\n".join(items) + "\n"
    # Room for one new piece: the first is parsed, the others are shown as text this time.
    one = render_markdown(text, fresh=cost)
    assert (one.plain_blocks, one.inline_fresh) == (2, cost)
    assert "a*a*" not in one.html.split("</li>")[0] and items[1][2:] in one.html
    # Next time the first is cached (free): the second is parsed.
    two = render_markdown(text, fresh=cost)
    assert (two.plain_blocks, two.inline_fresh) == (1, cost)
    # No limit: the last one too; none at all: only what is cached is Markdown.
    assert render_markdown(text).plain_blocks == 0
    PIECE_CACHE.clear()
    none = render_markdown(text, fresh=0)
    assert (none.plain_blocks, none.inline_fresh, none.inline_spent) == (3, 0, 0)
    assert len(_heavy(parsed)) == 3  # each piece was parsed once in all


def test_a_streaming_tail_parses_each_heavy_piece_about_once(parsed: list[str], qtbot: Any) -> None:
    """Distinct items of 999 ``a*``, streamed 2,000 characters a frame (as bench.markdown_worst):
    each frame parses at most TAIL_FRESH of heavy pieces it had not parsed before (it was all of
    the tail's every frame, ~15 ms), and the message shows as it does when reopened."""
    from PySide6.QtWidgets import QApplication

    from ui.transcript import TranscriptModel, TranscriptView
    from ui.transcript.render import MessageRender, update_render

    text = "\n".join(_items(24, 996)) + "\n"
    model = TranscriptModel()
    view = TranscriptView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(840, 640)
    view.show()
    model.add_user("go")
    renders = view.delegate._renders
    for start in range(0, len(text), 2000):
        parsed.clear()
        model.append_delta(text[start : start + 2000])
        model.flush()
        item = model.streaming_item
        assert item is not None
        qtbot.waitUntil(
            lambda it=item: it.uid in renders and renders[it.uid].version == it.version,
            timeout=10_000,
        )
        heavy = _heavy(parsed)
        assert sum(inline_cost(src) for src in heavy) <= TAIL_FRESH, start
    model.finish_streaming()
    finished = model.item(model.rowCount() - 1)
    assert finished is not None and finished.text == text
    render = renders[finished.uid]
    update_render(render, finished, QApplication.font(), QApplication.palette())  # as the view
    PIECE_CACHE.clear()
    again = MessageRender(800.0, False)  # shown again from history, nothing cached
    update_render(again, finished, QApplication.font(), QApplication.palette())
    assert [d.toHtml() for d in again.chunks] == [d.toHtml() for d in render.chunks]
    assert again.plain_blocks == render.plain_blocks
