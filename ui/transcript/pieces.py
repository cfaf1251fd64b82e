"""The HTML of heavy inline pieces, kept so a streaming answer does not parse them again.

A streaming answer re-renders its unfinished block on every frame, and renders it once more
when the block is finished; a heavy piece of it (a list item, paragraph or cell estimated at
``HEAVY_PIECE`` µs or more by :func:`.markdown.inline_cost`) that did not change between those
renders was parsed each time. List items of 999 ``a*`` cost ~7 ms each to parse, two of them
per block within the budget: ~15 ms of every frame, for text parsed the frame before.

:class:`PieceCache` maps a piece's text to the HTML its inline tokens rendered to, least
recently used first, bounded in entries and characters. Only :func:`.markdown.render_markdown`
uses it (its renderer made that HTML), and only for pieces whose HTML depends on their text
alone: none while the document defines link references (they may make links of a piece's
brackets), and no piece holding a formula (its HTML follows the theme, and it counts toward
the document's formula limits as it renders). A cached piece renders to the same HTML as
parsed, and which pieces of a block are Markdown is decided by their estimated cost, cached or
not; only a streaming tail's pieces not cached are limited further, per frame
(``.markdown.TAIL_FRESH``: the rest show as text until a later frame).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = ["PIECE", "PIECE_CACHE", "PieceCache", "piece_token", "wrap_pieces"]

#: The token type of a heavy piece's HTML: its ``content`` when cached (no children), else
#: rendered from its children and then kept (``.markdown._Renderer.piece``).
PIECE = "piece_html"

# Pieces kept, and their HTML's characters in all (an item of 999 ``a*`` is ~5,500).
MAX_PIECES = 64
MAX_PIECE_CHARS = 2_000_000


class PieceCache:
    """Piece text → rendered inline HTML, least recently used dropped first."""

    def __init__(self, entries: int = MAX_PIECES, chars: int = MAX_PIECE_CHARS) -> None:
        self.entries = entries
        self.chars = chars
        self._html: OrderedDict[str, str] = OrderedDict()
        self._size = 0  # characters of the HTML held

    def __len__(self) -> int:
        return len(self._html)

    def get(self, text: str) -> str | None:
        html = self._html.get(text)
        if html is not None:
            self._html.move_to_end(text)
        return html

    def put(self, text: str, html: str) -> None:
        if len(html) > self.chars:
            return
        old = self._html.pop(text, None)
        if old is not None:
            self._size -= len(old)
        self._html[text] = html
        self._size += len(html)
        while len(self._html) > self.entries or self._size > self.chars:
            _text, dropped = self._html.popitem(last=False)
            self._size -= len(dropped)

    def clear(self) -> None:
        self._html.clear()
        self._size = 0


PIECE_CACHE = PieceCache()


def piece_token(content: str, kind: str = PIECE) -> Token:
    """An inline token of ``kind`` (a cached piece's HTML by default) holding ``content``."""
    from markdown_it.token import Token

    return Token(kind, "", 0, content=content)


def wrap_pieces(state: Any) -> None:
    """A core rule after the others (``text_join`` rewrites children): the inline tokens of
    each piece marked for the cache (``meta[PIECE]``) go under one :data:`PIECE` token."""
    for token in state.tokens:
        if token.type == "inline" and token.meta.get(PIECE):
            wrapper = piece_token(token.content)
            wrapper.children = token.children
            token.children = [wrapper]
