"""Safe Markdown → Qt rich-text HTML, and the split that keeps streaming cheap.

Safety is structural, not a filter over finished HTML: markdown-it runs with raw HTML disabled
(so ``<script>`` arrives as text), images are never emitted as ``<img>`` (a remote image would be
a request the user did not make), and a link becomes an anchor only when its scheme is http or
https — anything else is rendered as its plain text. The view opens anchors only on click.

Bounded work (issue 11, item 14): markdown-it's inline parser is superlinear on some inputs (an
unmatched ``[`` rescans the rest of its paragraph, nested up to ``maxNesting`` deep, so 100 KB
of ``![`` took 6.6 s in one frame; emphasis, backticks and ``<`` behave alike, more mildly). Its
work is a cost per opening character (measured: ~35 µs per ``[``, ~8 per emphasis mark, ~3 per
backtick, ~2 per ``<``) plus about 1 ns × length × openers; :func:`inline_cost` estimates that
in µs, linearly, and a piece of a block (paragraph, list item, table cell) over
``INLINE_BUDGET`` µs is shown as its literal text instead, as are the heavy pieces of a block
beyond that budget in all; every other block of the message still renders as Markdown.
Block-level nesting is capped by markdown-it's ``maxNesting``. The HTML of a heavy piece is
kept (:mod:`.pieces`), so a streaming block does not parse it again on every frame.

Where an answer is cut into blocks (one document each) is :mod:`.blocks`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..theme import DARK, LIGHT
from .pieces import PIECE, PIECE_CACHE, piece_token, wrap_pieces
from .prose import prose_html

# markdown-it and Pygments are imported on first use, not at startup: together they cost
# ~20 ms of import before the window could show, for text that is rendered later.
if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

__all__ = [
    "COPY_LABEL",
    "COPY_SCHEME",
    "INLINE_BUDGET",
    "RenderedHtml",
    "TAIL_FRESH",
    "code_style",
    "inline_cost",
    "QUOTE_BARS",
    "is_safe_link",
    "render_markdown",
    "warm_up",
]

COPY_SCHEME = "continuum-copy"
#: The words of a code block's copy link.
COPY_LABEL = "Copy"
SAFE_SCHEMES = frozenset({"http", "https"})
# Pygments on a long unfenced block is the slowest part; beyond this a block stays plain.
_MAX_HIGHLIGHT = 200_000
# Estimated inline parsing time of one block (µs) beyond which it is shown as plain text.
INLINE_BUDGET = 20_000
# Of the heavy pieces of a streaming tail not parsed before (:mod:`.pieces`), what a frame parses
# (estimated µs; the rest show as text until a later frame): about one list item of 999 ``a*``
# (~7 ms). Two new ones in one frame (~15 ms) made its worst frames.
TAIL_FRESH = INLINE_BUDGET // 2
# A piece estimated at this (µs) or more counts toward its block's budget; lighter ones (table
# cells, short items: a dense 400-row table is 1,600 of them) never make a block plain. Fifty
# list items of 2,000 characters of ``a*`` (10 ms each) took 0.6 s per render before.
HEAVY_PIECE = 1_000
# Characters that open an inline construct markdown-it scans ahead for, with their cost in µs.
_OPENER_US = {"[": 35, "*": 8, "_": 8, "~": 8, "`": 3, "<": 2, "&": 1, "\\": 1}
# A ``[`` in text without any ``]``: no link can close, and the parser without the link rules
# (:func:`_md`) passes it as text, like any other character that is not an opener.
_UNCLOSED_BRACKET_US = 2


def inline_cost(text: str) -> int:
    """Estimated µs markdown-it needs for the inline parse of ``text`` (linear to compute)."""
    if not text:
        return 0
    counts = {opener: text.count(opener) for opener in _OPENER_US}
    openers = sum(counts.values())
    per_opener = sum(_OPENER_US[opener] * count for opener, count in counts.items())
    if "]" not in text:
        per_opener -= (_OPENER_US["["] - _UNCLOSED_BRACKET_US) * counts["["]
    return per_opener + len(text) * openers // 1000


def is_safe_link(url: str) -> bool:
    """Only absolute http(s) URLs become clickable (no javascript:, file:, data:, relative)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in SAFE_SCHEMES and bool(parts.netloc)


@dataclass(slots=True)
class RenderedHtml:
    """HTML for Qt's rich-text engine plus the source of each code block (for Copy)."""

    html: str
    code_blocks: list[str] = field(default_factory=list)
    plain_blocks: int = 0  # pieces shown as their literal text (budget, or fresh: not yet)
    inline_spent: int = 0  # estimated µs of the heavy pieces shown as Markdown (_bounded_inline)
    inline_fresh: int = 0  # ... of those parsed now, not cached (:mod:`.pieces`)


def code_style(dark: bool) -> str:
    """The Pygments style of code blocks: every colour of it reaches 4.5:1 on ``code_bg``
    (xcode 4.8:1 light, one-dark 4.7:1 dark; friendly and monokai fell to ~3:1)."""
    return "one-dark" if dark else "xcode"


def _parser(*, links: bool = True) -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    if not links:
        md.disable(["link", "image", "reference"])
    md.core.ruler.at("inline", _bounded_inline)
    md.core.ruler.push("piece_wrap", wrap_pieces)
    from .math import install_math

    install_math(md)  # LaTeX math (ui/transcript/math.py)
    return md


def _bounded_inline(state: Any) -> None:
    """markdown-it's core "inline" rule, with a work budget per block (module docstring): a
    piece (paragraph, list item, cell) over ``INLINE_BUDGET`` is shown as its literal text, and
    so are the heavy ones (``HEAVY_PIECE``) once those within the budget add up to it. A heavy
    piece rendered before is its cached HTML (:mod:`.pieces`); one that is not is parsed only
    while those parsed now stay within ``env["fresh_limit"]`` (when given), else shown as its
    text this time (it still counts toward the block's budget)."""
    env = state.env
    budget = env.get("inline_budget", INLINE_BUDGET)
    fresh_limit = env.get("fresh_limit")
    # A piece's HTML depends on its text alone unless the document defines link references.
    cache = bool(env.get("piece_cache")) and not env.get("references")
    spent = 0  # what the heavy pieces within the budget cost (estimated)
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        cost = inline_cost(token.content)
        heavy = cost >= HEAVY_PIECE
        if cost > INLINE_BUDGET or (heavy and spent + cost > budget):
            _as_text(token, env)
            continue
        if heavy:
            spent += cost
            cached = PIECE_CACHE.get(token.content) if cache else None
            if cached is None and fresh_limit is not None:
                if env.get("inline_fresh", 0) + cost > fresh_limit:
                    _as_text(token, env)
                    continue
            env["inline_spent"] = env.get("inline_spent", 0) + cost
            if cached is not None:
                token.children.append(piece_token(cached))
                continue
            env["inline_fresh"] = env.get("inline_fresh", 0) + cost
            if cache:
                token.meta[PIECE] = True  # its HTML is kept once rendered (wrap_pieces)
        # The parser for this piece (a list item, a cell, a paragraph): a ``]`` elsewhere in
        # the block must not bring the link rules to a piece of unclosed ``[``, which
        # ``inline_cost`` estimated at their cheap rate.
        md = _md(token.content)
        md.inline.parse(token.content, md, env, token.children)


def _as_text(token: Token, env: dict[str, Any]) -> None:
    """Show an inline piece as its literal text (counted in ``env["plain_blocks"]``)."""
    assert token.children is not None
    token.children.append(piece_token(token.content, "text"))
    env["plain_blocks"] = env.get("plain_blocks", 0) + 1


_PARSERS: list[MarkdownIt] = []


def _md(text: str = "]") -> MarkdownIt:
    """The parser for ``text``: without the link, image and reference-definition rules when
    it has no ``]`` (none of them can close then, and each ``[`` they try scans ahead for one:
    200 lines of ``[`` took 5.5 ms instead of 2.4). The output is the same either way. Chosen
    for the whole text (block rules: references) and again for each inline piece."""
    if not _PARSERS:
        _PARSERS.extend((_parser(), _parser(links=False)))
    return _PARSERS[0] if "]" in text else _PARSERS[1]


def warm_up() -> None:
    """Import and build the Markdown parsers now (they are otherwise made on first use)."""
    _md()


_FORMATTERS: dict[bool, HtmlFormatter[str]] = {}


def _formatter(dark: bool) -> HtmlFormatter[str]:
    formatter = _FORMATTERS.get(dark)
    if formatter is None:
        from pygments.formatters import HtmlFormatter

        formatter = HtmlFormatter(style=code_style(dark), noclasses=True, nowrap=True)
        _FORMATTERS[dark] = formatter
    return formatter


# Quotes nested this deep get a bar; deeper ones are only indented. A bar is a table, and Qt
# lays out nested tables in time doubling per level: 20 nested quotes (markdown-it's nesting
# limit; a line of "> > > …") took 18.5 s per frame.
QUOTE_BARS = 2
# Tables and quotes, drawn with the theme's rules (Qt's rich text has no left border).
_BOX_RULES = (
    "table_open",
    "th_open",
    "blockquote_open",
    "blockquote_close",
)
# Token types of the math rules (ui/transcript/math.py), all rendered by _Renderer.math.
_MATH_RULES = ("math_inline", "math_inline_double", "math_block", "math_block_label")


class _Renderer:
    """Per-call render state: the link stack and collected code blocks."""

    def __init__(self, *, dark: bool, code_offset: int) -> None:
        self.dark = dark
        self.code_offset = code_offset
        self.code_blocks: list[str] = []
        self.link_stack: list[bool] = []
        self.quotes: list[bool] = []  # per open quote: drawn with a bar (a table)
        self.render_inline: Callable[..., str] | None = None  # the parser's (install)

    def install(self, md: MarkdownIt) -> dict[str, Any]:
        renderer = _html_renderer(md)
        rules: dict[str, Any] = renderer.rules
        saved = {
            name: rules.get(name)
            for name in (
                "fence",
                "code_block",
                "link_open",
                "link_close",
                "image",
                "html_block",
                "html_inline",
                PIECE,
                *_BOX_RULES,
                *_MATH_RULES,
            )
        }
        for name in _MATH_RULES:
            rules[name] = self.math
        rules["fence"] = self.fence
        rules["code_block"] = self.fence
        rules["link_open"] = self.link_open
        rules["link_close"] = self.link_close
        rules["image"] = self.image
        for name in _BOX_RULES:
            rules[name] = self.box
        # Belt and braces: html is disabled, but never let raw HTML through even if enabled.
        rules["html_block"] = self.raw_html
        rules["html_inline"] = self.raw_html
        rules[PIECE] = self.piece
        self.render_inline = renderer.renderInline
        return saved

    def piece(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        """A heavy piece: its cached HTML, or its tokens rendered (and the HTML kept unless
        it holds a formula: those count toward the document's limits as they render)."""
        token = tokens[idx]
        if token.children is None:
            return token.content
        assert self.render_inline is not None
        body = self.render_inline(token.children, options, env)
        if not any(child.type in _MATH_RULES for child in token.children):
            PIECE_CACHE.put(token.content, body)
        return body

    def math(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        from .math import formula_html

        token = tokens[idx]
        display = token.type != "math_inline"
        return formula_html(token, display=display, dark=self.dark, env=env)

    def raw_html(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return html.escape(tokens[idx].content)

    def fence(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        source = token.content
        language = (token.info or "").strip().split(" ")[0]
        number = self.code_offset + len(self.code_blocks)
        self.code_blocks.append(source.rstrip("\n"))
        body = self._highlight(source.rstrip("\n"), language)
        theme = DARK if self.dark else LIGHT
        label = html.escape(language or "code")
        return (
            f'<table width="100%" cellspacing="0" cellpadding="8" bgcolor="{theme.code_bg}" '
            f'style="margin-top:4px; margin-bottom:12px; border-color:{theme.border};">'
            f'<tr><td bgcolor="{theme.code_header}" style="padding-top:4px; padding-bottom:4px;">'
            f'<span style="font-size:small; color:{theme.muted};">{label}</span>'
            f'&nbsp;&nbsp;<a href="{COPY_SCHEME}:{number}" style="font-size:small;">'
            f"{COPY_LABEL}</a>"
            f"</td></tr>"
            f'<tr><td><pre style="margin:0; white-space:pre-wrap; color:{theme.code_text};">'
            f"{body}</pre></td></tr></table>\n"
        )

    def box(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        """Tables with rules and padding; a quote as a bar at its left (a two-cell table)."""
        kind = tokens[idx].type
        theme = DARK if self.dark else LIGHT
        if kind == "table_open":
            return (
                '<table border="1" cellspacing="0" cellpadding="6" style="border-collapse:'
                f"collapse; border-color:{theme.rule}; border-style:solid; border-width:1px; "
                'margin-top:4px; margin-bottom:12px;">\n'
            )
        if kind == "th_open":
            style = tokens[idx].attrGet("style")
            align = f' style="{html.escape(str(style), quote=True)}"' if style else ""
            return f'<th bgcolor="{theme.code_header}"{align}>'
        if kind == "blockquote_open":
            self.quotes.append(len(self.quotes) < QUOTE_BARS)
            if not self.quotes[-1]:
                return "<blockquote>\n"  # deeper: indented only (nested tables cost 2^depth)
            return (
                '<table cellspacing="0" cellpadding="0" style="margin-top:0px; '
                f'margin-bottom:12px;"><tr><td width="3" bgcolor="{theme.rule}"></td>'
                f'<td style="padding-left:12px; color:{theme.muted};">\n'
            )
        barred = self.quotes.pop() if self.quotes else False  # blockquote_close
        return "</td></tr></table>\n" if barred else "</blockquote>\n"

    def _highlight(self, source: str, language: str) -> str:
        if not language or len(source) > _MAX_HIGHLIGHT:
            return html.escape(source)
        from pygments import highlight  # type: ignore[import-untyped]
        from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
        from pygments.lexers.special import TextLexer  # type: ignore[import-untyped]
        from pygments.util import ClassNotFound  # type: ignore[import-untyped]

        try:
            lexer = get_lexer_by_name(language, stripnl=False)
        except ClassNotFound:
            lexer = TextLexer(stripnl=False)
        return str(highlight(source, lexer, _formatter(self.dark))).rstrip("\n")

    def link_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        href = str(tokens[idx].attrGet("href") or "")
        safe = is_safe_link(href)
        self.link_stack.append(safe)
        if not safe:
            return ""
        return f'<a href="{html.escape(href, quote=True)}">'

    def link_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        safe = self.link_stack.pop() if self.link_stack else False
        return "</a>" if safe else ""

    def image(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = "".join(child.content for child in token.children or ()) or "image"
        src = str(token.attrGet("src") or "")
        # Never an <img>: loading it would contact a server the user did not choose to visit.
        text = f"[image: {alt}]"
        if is_safe_link(src):
            return f'<a href="{html.escape(src, quote=True)}">{html.escape(text)}</a>'
        return html.escape(text)


def _html_renderer(md: MarkdownIt) -> RendererHTML:
    """The parser's renderer (it is built with the HTML renderer)."""
    from markdown_it.renderer import RendererHTML

    renderer = md.renderer
    assert isinstance(renderer, RendererHTML)
    return renderer


def render_markdown(
    text: str,
    *,
    dark: bool = False,
    code_offset: int = 0,
    budget: int = INLINE_BUDGET,
    fresh: int | None = None,
    shortcut: bool = True,
) -> RenderedHtml:
    """Render ``text`` to inert HTML. ``code_offset`` numbers Copy links across chunks;
    ``budget`` (µs, estimated) is what its heavy pieces may cost in all (``INLINE_BUDGET``);
    ``fresh``, what those not cached may cost now (None: the budget; the rest: as text).
    A paragraph of plain prose skips the parser (:func:`.prose.prose_html`: the same HTML);
    ``shortcut=False`` runs markdown-it whatever the text (the tests compare the two)."""
    if shortcut:
        prose = prose_html(text)
        if prose is not None:
            return RenderedHtml(prose)
    renderer = _Renderer(dark=dark, code_offset=code_offset)
    md = _md(text)
    saved = renderer.install(md)
    env: dict[str, Any] = {"inline_budget": budget, "piece_cache": True, "fresh_limit": fresh}
    try:
        body = md.render(text, env)
    finally:
        rules: dict[str, Any] = _html_renderer(md).rules
        rules.update({k: v for k, v in saved.items() if v is not None})
        for name, rule in saved.items():
            if rule is None:
                rules.pop(name, None)
    return RenderedHtml(
        body,
        renderer.code_blocks,
        env.get("plain_blocks", 0),
        env.get("inline_spent", 0),
        env.get("inline_fresh", 0),
    )
