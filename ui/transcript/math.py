"""LaTeX math in answers: parsed by markdown-it plugins, typeset by ziamath, shown as images.

Parsing: :func:`install_math` adds mdit-py-plugins' dollarmath (``$…$`` inline, ``$$…$$``
display; no space inside the dollars and no digit outside them, so "$5 and $10" stays text) and
a small rule of our own for ``\\(…\\)`` inline and ``\\[…\\]`` display (texmath's bracket rules
match across blank lines and drop text after ``\\]``). The rules run before markdown-it's
backslash escapes and never inside code spans or blocks. Unclosed math stays text.

Rendering: :func:`formula_html` typesets a formula once (ziamath → SVG, cached by a hash of
its source, display mode and colour) and returns an ``<img src="math:<key>">`` whose ``alt`` is
the source; a formula ziamath cannot typeset, or one over the length / count caps, is shown as
its source in muted code. :func:`attach_math` then rasterises each referenced SVG at the
document's font size × the device pixel ratio (cached, LRU) and adds it as the document's image
resource; the documents themselves never load anything. Inline math is padded so that Qt's
``vertical-align: middle`` puts the formula's baseline on the text's baseline; ``max-width:
100%`` keeps a wide formula inside the column.

Bounded work: ziamath costs ~0.25 ms a character and doubles with each level of nesting, so a
formula is typeset only when its estimate (:func:`typeset_estimate_ms`) is small and its chunk
has not spent :data:`CHUNK_BUDGET_MS` typesetting already; a paragraph with more than
:data:`MAX_DOLLARS` dollars has no dollar math. Cached formulas cost ~3 µs per image.
"""

from __future__ import annotations

import hashlib
import html
import logging
import math
import re
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QRectF, Qt, QUrl
from PySide6.QtGui import (
    QFont,
    QFontInfo,
    QFontMetrics,
    QFontMetricsF,
    QGuiApplication,
    QImage,
    QPainter,
    QTextDocument,
)

from ui.theme import DARK, LIGHT

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

__all__ = [
    "CACHE_SIZE",
    "MATH_SCHEME",
    "MAX_FORMULAS",
    "MAX_FORMULA_CHARS",
    "attach_math",
    "formula_html",
    "install_math",
    "math_image",
]

log = logging.getLogger(__name__)

MATH_SCHEME = "math"
# A longer formula is shown as its source: ziamath's cost grows with it (~5 µs a character).
MAX_FORMULA_CHARS = 2_000
# Formulas typeset per rendered chunk; the rest are shown as their source.
MAX_FORMULAS = 200
# ziamath's time grows ~0.25 ms a character and doubles with each level of nesting (a \frac
# nested 11 deep took 3.5 s, 20 deep never finished): a formula estimated over this many ms is
# shown as its source, and so is every formula not yet typeset once a chunk has spent this
# much time typesetting (measured).
MAX_ESTIMATE_MS = 300.0
CHUNK_BUDGET_MS = 500.0
# An inline block with more dollars than this has no $ math (markdown-it's work per $ is ~5 µs).
MAX_DOLLARS = 1_000
# Typeset SVGs and rasterised images kept (least recently used go first), each.
CACHE_SIZE = 512
# A formula wider than this many ems is shown as its source (which wraps) instead.
MAX_EMS = 60
# ziamath typesets at this size (px); images are scaled from it (SVG is vector).
_REFERENCE_PX = 32.0
_CLOSING = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}
_GROUP = re.compile(r"\\[{}]|[{}]|\\left\b|\\right\b|\\begin\b|\\end\b")
_OPENERS = frozenset({"{", "\\left", "\\begin"})
_InlineRule = Callable[["StateInline", bool], bool]
_KEY = re.compile(r'src="math:([0-9a-f]{24})"')


@dataclass(frozen=True, slots=True)
class _Svg:
    """One typeset formula at the reference size."""

    data: bytes
    width: float
    height: float
    ascent: float  # from the top of the image to the formula's baseline
    display: bool


class _Lru(OrderedDict[Any, Any]):
    def get_fresh(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > CACHE_SIZE:
            self.popitem(last=False)


_SVGS = _Lru()  # key -> _Svg, or False: ziamath could not typeset it
_IMAGES = _Lru()  # (key, px, dpr) -> QImage


def _colour(dark: bool) -> str:
    return (DARK if dark else LIGHT).text


def formula_key(latex: str, display: bool, colour: str) -> str:
    """A content hash of what the formula's SVG depends on."""
    digest = hashlib.sha1(f"{int(display)}\0{colour}\0{latex}".encode(), usedforsecurity=False)
    return digest.hexdigest()[:24]


def _typeset(latex: str, display: bool, colour: str) -> _Svg | None:
    """ziamath's SVG of ``latex`` (None: it cannot be typeset); may take milliseconds."""
    with warnings.catch_warnings():
        # ziamath 0.13 finds its font with the deprecated importlib.resources.path.
        warnings.simplefilter("ignore", DeprecationWarning)
        from ziamath.config import config
        from ziamath.zmath import Latex  # ~150 ms to import: only when an answer has math

    config.svg2 = False  # plain paths: QtSvg does not draw SVG 2 <symbol>/<use>
    try:
        formula = Latex(latex, size=_REFERENCE_PX, color=colour, inline=not display)
        data = formula.svg().encode()
    except Exception:  # latex2mathml and ziamath raise many kinds on bad input
        log.debug("cannot typeset %r", latex[:80], exc_info=True)
        return None
    bbox = formula.node.bbox
    margin = formula.margin
    return _Svg(
        data,
        bbox.xmax - bbox.xmin + 2 * margin,
        bbox.ymax - bbox.ymin + 2 * margin,
        bbox.ymax + margin,
        display,
    )


def _svg_for(key: str, latex: str, display: bool, colour: str) -> _Svg | None:
    cached = _SVGS.get_fresh(key)
    if cached is None:
        cached = _typeset(latex, display, colour) or False
        _SVGS.put(key, cached)
    return cached or None


def _source_html(source: str, display: bool, dark: bool) -> str:
    muted = (DARK if dark else LIGHT).muted
    text = html.escape(source)
    if display:
        return f'<pre style="white-space: pre-wrap; color:{muted};">{text}</pre>\n'
    return f'<code style="color:{muted};">{text}</code>'


def nesting_depth(latex: str) -> int:
    """How deeply ``latex``'s groups nest (braces, ``\\left``…``\\right``, environments)."""
    depth = deepest = 0
    for match in _GROUP.finditer(latex):
        token = match.group()
        if token in ("\\{", "\\}"):
            continue  # a literal brace
        depth += 1 if token in _OPENERS else -1
        deepest = max(deepest, depth)
    return deepest


def typeset_estimate_ms(latex: str) -> float:
    """A generous estimate of ziamath's time for ``latex`` (it overestimates nested ones)."""
    return 0.25 * len(latex) * 2.0 ** max(0, nesting_depth(latex) - 2)


def formula_html(token: Token, *, display: bool, dark: bool, env: dict[str, Any]) -> str:
    """The HTML of one math token: an image reference, or its source when it cannot be shown."""
    latex = str(token.content).strip()
    opening = token.markup or ("$$" if display else "$")
    source = f"{opening}{token.content}{_CLOSING.get(opening, opening)}"
    count = env.get("math_formulas", 0) + 1
    env["math_formulas"] = count
    block = token.type in ("math_block", "math_block_label")
    if not latex or len(latex) > MAX_FORMULA_CHARS or count > MAX_FORMULAS:
        return _source_html(source, block, dark)
    colour = _colour(dark)
    key = formula_key(latex, display, colour)
    if key not in _SVGS:
        spent = env.get("math_ms", 0.0)
        if spent >= CHUNK_BUDGET_MS or typeset_estimate_ms(latex) > MAX_ESTIMATE_MS:
            return _source_html(source, block, dark)
        started = time.perf_counter()
        _svg_for(key, latex, display, colour)
        env["math_ms"] = spent + (time.perf_counter() - started) * 1000
    svg = _svg_for(key, latex, display, colour)
    if svg is None or svg.width > MAX_EMS * _REFERENCE_PX:
        return _source_html(source, block, dark)  # scaled into a column it could not be read
    alt = html.escape(source, quote=True)
    if not display:
        style = "vertical-align: middle; max-width: 100%;"
        return f'<img src="{MATH_SCHEME}:{key}" alt="{alt}" style="{style}">'
    label = html.escape(token.info) if token.type == "math_block_label" else ""
    number = f"&nbsp;&nbsp;({label})" if label else ""
    image = f'<img src="{MATH_SCHEME}:{key}" alt="{alt}" style="max-width: 100%;">'
    if token.type == "math_inline_double":
        return image
    return f'<p align="center" style="margin-top:6px; margin-bottom:10px;">{image}{number}</p>\n'


def _device_ratio() -> float:
    app = QGuiApplication.instance()
    return float(app.devicePixelRatio()) if isinstance(app, QGuiApplication) else 1.0


def math_pixel_size(font: QFont) -> float:
    """The math font size (px) for text in ``font``: its pixel size, raised (by at most 30 %)
    until the math font's x-height matches the text's (STIX's is smaller than most UI fonts')."""
    px = float(QFontInfo(font).pixelSize() or 16)
    matched = QFontMetricsF(font).xHeight() / _math_x_height()
    return round(min(max(px, matched), 1.3 * px), 1)


def _math_x_height() -> float:
    """The math font's x-height as a fraction of its size (measured once)."""
    if not _X_HEIGHT:
        svg = _typeset("x", False, "#000000")
        _X_HEIGHT.append(svg.ascent / _REFERENCE_PX - 1 / _REFERENCE_PX if svg else 0.45)
    return _X_HEIGHT[0]


_X_HEIGHT: list[float] = []


def math_image(key: str, font: QFont, dpr: float | None = None) -> QImage | None:
    """The image of the typeset formula ``key`` for text in ``font`` (None: not typeset)."""
    svg = _SVGS.get_fresh(key)
    if not svg:
        return None
    px = math_pixel_size(font)
    ratio = dpr if dpr is not None else _device_ratio()
    x_height = QFontMetrics(font).xHeight()
    cache_key = (key, px, ratio, x_height)
    image: QImage | None = _IMAGES.get_fresh(cache_key)
    if image is None:
        image = _rasterise(svg, px / _REFERENCE_PX, ratio, x_height)
        _IMAGES.put(cache_key, image)
    return image


def baseline_padding(height: float, ascent: float, x_height: float) -> tuple[float, float]:
    """Transparent rows (top, bottom) that put an image's baseline on the text's.

    Qt lays an inline image with ``vertical-align: middle`` out with ascent
    ``(height + x_height / 2) / 2`` above the baseline; the padded image's ascent must be the
    formula's own.
    """
    excess = ascent - (height - ascent) - x_height / 2
    return (0.0, excess) if excess > 0 else (-excess, 0.0)


def _rasterise(svg: _Svg, scale: float, dpr: float, x_height: int) -> QImage:
    from PySide6.QtSvg import QSvgRenderer

    width, height, ascent = svg.width * scale, svg.height * scale, svg.ascent * scale
    top, bottom = (0.0, 0.0) if svg.display else baseline_padding(height, ascent, x_height)
    image = QImage(
        max(1, math.ceil(width * dpr)),
        max(1, round((height + top + bottom) * dpr)),
        QImage.Format.Format_ARGB32_Premultiplied,
    )
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(QByteArray(svg.data)).render(
        painter, QRectF(0, top * dpr, width * dpr, height * dpr)
    )
    painter.end()
    image.setDevicePixelRatio(dpr)
    return image


def attach_math(doc: QTextDocument, html_text: str) -> None:
    """Add the image of each formula ``html_text`` (``doc``'s HTML) refers to as a resource.

    Call it after ``setHtml`` and before the document is laid out (before ``setTextWidth``).
    """
    if f'src="{MATH_SCHEME}:' not in html_text:
        return
    font = doc.defaultFont()
    for key in dict.fromkeys(_KEY.findall(html_text)):
        image = math_image(key, font)
        if image is not None:
            doc.addResource(
                QTextDocument.ResourceType.ImageResource, QUrl(f"{MATH_SCHEME}:{key}"), image
            )


def _counted(state: StateInline, text: str) -> int:
    """How often ``text`` occurs in the inline block (counted once per block)."""
    cache = state.env.setdefault("math_counts", {})
    cached = cache.get(text)
    if cached is None or cached[0] is not state.src:
        cached = (state.src, state.src.count(text))
        cache[text] = cached
    return int(cached[1])


def _last(state: StateInline, text: str) -> int:
    """Where ``text`` last occurs in the inline block (-1: nowhere; found once per block)."""
    cache = state.env.setdefault("math_last", {})
    cached = cache.get(text)
    if cached is None or cached[0] is not state.src:
        cached = (state.src, state.src.rfind(text))
        cache[text] = cached
    return int(cached[1])


def _bracket_inline(state: StateInline, silent: bool) -> bool:
    """``\\(…\\)``: inline math (before markdown-it's escapes, which would eat the ``\\``)."""
    src, pos = state.src, state.pos
    if not src.startswith("\\(", pos):
        return False
    if pos > _last(state, "\\)"):
        return False  # no closing delimiter after it (without this, quadratic in "\\(")
    end = src.find("\\)", pos + 2)
    if end < 0 or not src[pos + 2 : end].strip():
        return False
    if not silent:
        token = state.push("math_inline", "math", 0)
        token.content = src[pos + 2 : end]
        token.markup = "\\("
    state.pos = end + 2
    return True


def _bracket_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """``\\[…\\]`` on lines of their own (no blank line inside, nothing after ``\\]``)."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False  # indented code
    begin = state.bMarks[start] + state.tShift[start]
    if not state.src.startswith("\\[", begin):
        return False
    parts: list[str] = []
    line, first = start, begin + 2
    while line < end:
        text = state.src[first : state.eMarks[line]]
        if line > start and not text.strip():
            return False  # a blank line ends the block first
        close = text.find("\\]")
        if close >= 0:
            if text[close + 2 :].strip():
                return False
            parts.append(text[:close])
            break
        parts.append(text)
        line += 1
        if line < end:
            first = state.bMarks[line] + state.tShift[line]
    else:
        return False
    if not silent:
        token = state.push("math_block", "math", 0)
        token.block = True
        token.content = "\n".join(parts)
        token.markup = "\\["
        token.map = [start, line + 1]
    state.line = line + 1
    return True


def _no_code_inside(
    rule: Callable[[StateInline, bool], bool],
) -> Callable[[StateInline, bool], bool]:
    """``rule``, refusing math with a backtick in it: "$10 `$x$`" keeps its code span."""

    def guarded(state: StateInline, silent: bool) -> bool:
        if _counted(state, "$") > MAX_DOLLARS:
            return False
        start, count = state.pos, len(state.tokens)
        if not rule(state, True):
            return False
        if "`" in state.src[start : state.pos]:
            state.pos = start
            return False
        if silent:
            return True
        state.pos = start
        del state.tokens[count:]
        return rule(state, False)

    return guarded


def install_math(md: MarkdownIt) -> None:
    """Add the math rules to ``md`` (token types math_inline, math_inline_double, math_block,
    math_block_label; the renderer supplies their HTML through :func:`formula_html`)."""
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.dollarmath.index import math_inline_dollar

    dollarmath_plugin(
        md, allow_space=False, allow_digits=False, allow_blank_lines=False, double_inline=True
    )
    inline = math_inline_dollar(allow_space=False, allow_digits=False, allow_double=True)
    md.inline.ruler.at("math_inline", _no_code_inside(inline))
    md.inline.ruler.before("escape", "math_bracket", _bracket_inline)
    md.block.ruler.before("fence", "math_bracket_block", _bracket_block)
