"""A row document's look: its style sheet (from the theme's tokens and the type and spacing
scales) and how a row's stacked documents are spaced.

Every block of an answer is a document of its own (:func:`.blocks.block_cuts`); Qt leaves a
document's outer margins out of its height, so the space between two stacked documents is the
larger of the two margins that meet (:func:`gaps`) — the way blocks inside one document are
spaced. Pure Qt text formatting; nothing here builds rows or paints.
"""

from __future__ import annotations

from PySide6.QtGui import (
    QFontMetricsF,
    QTextBlock,
    QTextBlockFormat,
    QTextDocument,
    QTextFrame,
)

from ..theme import SPACE, TYPE_SCALE, Tokens

__all__ = ["doc_gaps", "document_css", "gaps", "outer_margins", "trailing_leading"]


def trailing_leading(doc: QTextDocument) -> float:
    """The space a proportional line height (``line-height: 150%``) adds under the last line
    of ``doc`` (Qt adds it below each line); 0 for any other line height."""
    fmt = doc.lastBlock().blockFormat()
    if fmt.lineHeightType() != QTextBlockFormat.LineHeightTypes.ProportionalHeight.value:
        return 0.0
    extra = max(fmt.lineHeight() - 100.0, 0.0) / 100.0
    return extra * QFontMetricsF(doc.defaultFont()).lineSpacing()


_CSS_CACHE: dict[tuple[str, float], str] = {}


def document_css(tokens: Tokens, point_size: float) -> str:
    """The style sheet of every row document: the type and spacing scales, the theme's colours.

    Prose has a line height of 150 %; a paragraph or list is followed by 12 px, a heading has
    space above it (24/20/16 px) and 8 px below; sizes follow :data:`ui.theme.TYPE_SCALE` of
    ``point_size`` (the body font). Margins between documents are applied by :func:`gaps`.
    """
    key = (tokens.name, point_size)
    cached = _CSS_CACHE.get(key)
    if cached is not None:
        return cached

    def size(step: str) -> str:
        return f"{point_size * TYPE_SCALE[step]:.1f}pt"

    _xs, s, m, _l, xl = SPACE
    css = (
        f"body {{ color: {tokens.text}; }} "
        f"p {{ margin-top: 0px; margin-bottom: {m}px; line-height: 150%; }} "
        f"li {{ margin-bottom: {_xs}px; line-height: 150%; }} "
        f"ul, ol {{ margin-top: 0px; margin-bottom: {m}px; }} "
        f"h1 {{ font-size: {size('h1')}; margin-top: {xl}px; margin-bottom: {s}px; }} "
        f"h2 {{ font-size: {size('h2')}; margin-top: {xl - 4}px; margin-bottom: {s}px; }} "
        f"h3, h4, h5, h6 {{ font-size: {size('h3')}; margin-top: {m + 4}px; "
        f"margin-bottom: {s}px; }} "
        f"a {{ color: {tokens.link}; }} "
        f"th {{ font-weight: 600; }} "
        "pre { font-family: monospace; } "
        f"code {{ font-family: monospace; background-color: {tokens.code_bg}; }} "
        f"hr {{ color: {tokens.rule}; }}"
    )
    _CSS_CACHE[key] = css
    return css


def outer_margins(doc: QTextDocument) -> tuple[float, float]:
    """The top margin of ``doc``'s first block or table and the bottom one of its last.

    Qt leaves both out of a document's height (and puts an empty block on each side of a
    table at either end, which counts as none)."""
    first: QTextFrame | QTextBlock | None = None
    last: QTextFrame | QTextBlock | None = None
    it = doc.rootFrame().begin()
    while not it.atEnd():
        child, block = it.currentFrame(), it.currentBlock()
        element = child if child is not None else (block if block.text() else None)
        if element is not None:
            first = element if first is None else first
            last = element
        it += 1
    return _margin(first, top=True), _margin(last, top=False)


def _margin(element: QTextFrame | QTextBlock | None, *, top: bool) -> float:
    if element is None:
        return 0.0
    if isinstance(element, QTextFrame):
        frame = element.frameFormat()
        return float(frame.topMargin() if top else frame.bottomMargin())
    block = element.blockFormat()
    return float(block.topMargin() if top else block.bottomMargin())


def doc_gaps(docs: list[QTextDocument]) -> list[float]:
    """The space above each of ``docs`` (a render's, in order): :func:`gaps` of their margins."""
    return gaps([getattr(doc, "margins", (0.0, 0.0)) for doc in docs])


def gaps(margins: list[tuple[float, float]]) -> list[float]:
    """The space above each of a stack of documents with these ``(top, bottom)`` margins.

    Like margins inside one document, the larger of the two meeting margins wins; the first
    document's top and the last one's bottom margin are left out, as Qt leaves them out of
    one document's height — so blocks stacked as documents are spaced as in one document.
    """
    pairs = zip(margins, margins[1:], strict=False)
    return [0.0][: len(margins)] + [max(above[1], below[0]) for above, below in pairs]
