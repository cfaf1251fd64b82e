"""LaTeX math in answers: each delimiter becomes an image attached to the row's document, in the
theme's text colour, crisp at the device pixel ratio; money, code and unfinished math stay text;
a formula that cannot be typeset (or is too long, or too wide) shows its source."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontInfo,
    QFontMetrics,
    QImage,
    QTextDocument,
    QTextFormat,
    QTextImageFormat,
)
from PySide6.QtWidgets import QStyleOptionViewItem

from ui.theme import DARK, LIGHT, Tokens, palette_for
from ui.transcript.delegate import TranscriptDelegate
from ui.transcript.math import (
    MAX_DOLLARS,
    MAX_ESTIMATE_MS,
    MAX_FORMULA_CHARS,
    MAX_FORMULAS,
    baseline_padding,
    math_image,
    math_pixel_size,
    nesting_depth,
    typeset_estimate_ms,
)
from ui.transcript.model import TranscriptModel
from ui.transcript.render import MessageRender, update_render
from ui.transcript.rows import TranscriptItem, copy_text


def answer(text: str) -> TranscriptItem:
    model = TranscriptModel()
    model.append_delta(text)
    item = model.finish_streaming()
    assert item is not None and not item.streaming
    return item


def docs_of(item: TranscriptItem, tokens: Tokens = LIGHT, width: float = 560) -> list[Any]:
    option = QStyleOptionViewItem()
    option.font = QFont("DejaVu Sans", 10)
    option.palette = palette_for(tokens)
    return list(TranscriptDelegate().render_for(item, width, option).chunks)


def images(doc: QTextDocument) -> list[QTextImageFormat]:
    """The math image formats in ``doc``, in order."""
    found = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat() and fmt.toImageFormat().name().startswith("math:"):
                found.append(fmt.toImageFormat())
            it += 1
        block = block.next()
    return found


def resource(doc: QTextDocument, fmt: QTextImageFormat) -> QImage:
    image = doc.resource(QTextDocument.ResourceType.ImageResource, QUrl(fmt.name()))
    assert isinstance(image, QImage), fmt.name()
    return image


def all_images(item: TranscriptItem, tokens: Tokens = LIGHT) -> list[QImage]:
    return [resource(doc, fmt) for doc in docs_of(item, tokens) for fmt in images(doc)]


def text_of(item: TranscriptItem) -> str:
    return "\n".join(doc.toPlainText() for doc in docs_of(item))


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("The area is $\\pi r^2$ here.", "$\\pi r^2$"),
        ("Display:\n\n$$\\int_0^1 x^2\\,dx$$\n\nafter", "$$\\int_0^1 x^2\\,dx$$"),
        ("Also \\(\\frac{a}{b}\\) inline.", "\\(\\frac{a}{b}\\)"),
        ("Display:\n\n\\[\nx = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}\n\\]\n\nafter", "\\[\n"),
        ("Inside text $$\\sum_{i=1}^n i$$ too.", "$$\\sum_{i=1}^n i$$"),
    ],
)
def test_each_delimiter_becomes_an_image(text: str, source: str, qapp: Any) -> None:
    item = answer(text)
    found = [(doc, fmt) for doc in docs_of(item) for fmt in images(doc)]
    assert len(found) == 1
    doc, fmt = found[0]
    image = resource(doc, fmt)
    assert not image.isNull() and image.width() > 4 and image.height() > 4
    # The image stands for its source: nothing of the LaTeX is left as text around it.
    assert "$" not in doc.toPlainText() and "\\" not in doc.toPlainText()
    assert str(fmt.property(QTextFormat.Property.ImageAltText)).startswith(source)
    assert source.strip() in copy_text(item)  # Copy copies the message's source


def test_every_formula_of_an_answer_is_attached(qapp: Any) -> None:
    text = (
        "Inline $a$, $\\frac{a}{b}$ and \\(\\sqrt{2}\\).\n\n"
        "$$\\begin{pmatrix}1&2&3\\\\4&5&6\\\\7&8&9\\end{pmatrix}$$\n\n"
        "\\[\\int_0^1 x^2\\,dx\\]\n"
    )
    assert len(all_images(answer(text))) == 5


@pytest.mark.parametrize(
    "text",
    [
        "It costs $5 and $10 at most.",
        "From $5-$10, or $20.",
        "A lone $ sign, and $ spaced $ dollars.",
        "Escaped \\$x\\$ dollars.",
        "Code `$x^2$` and `\\(y\\)` spans.",
        "```\n$$\\frac{a}{b}$$\n\\[x\\]\n```",
        "    $$\\frac{a}{b}$$\n    indented code",
        "Price $10 `$y$` with code after it.",
    ],
)
def test_money_and_code_stay_text(text: str, qapp: Any) -> None:
    item = answer(text)
    assert all_images(item) == []
    shown = text_of(item)
    for part in ("$5", "$10", "$x^2$", "\\(y\\)", "$$\\frac{a}{b}$$", "$y$", "$ spaced $"):
        if part in text and "\\$" not in text:
            assert part in shown


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("Bad $\\frac{a$ formula.", "$\\frac{a$"),
        ("Bad:\n\n$$\\frac{$$\n\nafter", "$$\\frac{$$"),
        ("Bad \\(\\begin{matrix}\\) one.", "\\(\\begin{matrix}\\)"),
        ("Long $" + "x+" * (MAX_FORMULA_CHARS // 2) + "x$ one.", "$x+x+"),
        ("Wide $" + "x+" * 400 + "x$ one.", "$x+x+"),  # wider than MAX_EMS: unreadable scaled
    ],
)
def test_a_formula_that_cannot_be_shown_shows_its_source(text: str, source: str, qapp: Any) -> None:
    item = answer(text)
    assert all_images(item) == []
    docs = docs_of(item)
    shown = "\n".join(doc.toPlainText() for doc in docs)
    assert source in shown
    # ... in the theme's muted colour, as code.
    (doc,) = [doc for doc in docs if source in doc.toPlainText()]
    cursor = doc.find(source)
    assert not cursor.isNull()
    assert cursor.charFormat().foreground().color().name() == LIGHT.muted


def test_formulas_past_the_cap_show_their_source(qapp: Any) -> None:
    text = " ".join(f"$x_{{{n % 5}}}$" for n in range(MAX_FORMULAS + 10))
    item = answer(text)
    (doc,) = docs_of(item)
    assert len(images(doc)) == MAX_FORMULAS
    assert doc.toPlainText().count("$x_{") == 10


@pytest.mark.parametrize(("tokens", "light"), [(DARK, True), (LIGHT, False)])
def test_math_is_drawn_in_the_theme_text_colour(tokens: Tokens, light: bool, qapp: Any) -> None:
    (image,) = all_images(answer("Energy $E = mc^2$ here."), tokens)
    inked = [
        image.pixelColor(x, y)
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).alpha() > 200
    ]
    assert len(inked) > 20
    lightness = sum(colour.lightness() for colour in inked) / len(inked)
    assert (lightness > 170) is light
    assert abs(lightness - QColor(tokens.text).lightness()) < 40


def test_images_are_rendered_at_the_device_pixel_ratio(qapp: Any) -> None:
    item = answer("Crisp $\\frac{1}{2}$ math.")
    (doc,) = docs_of(item)
    (fmt,) = images(doc)
    key = fmt.name().removeprefix("math:")
    font = doc.defaultFont()
    single, double = math_image(key, font, 1.0), math_image(key, font, 2.0)
    assert single is not None and double is not None
    assert double.devicePixelRatio() == 2.0
    assert abs(double.width() - 2 * single.width()) <= 2
    # Same logical size in a document: the layout does not change with the screen.
    sizes = []
    for image in (single, double):
        probe = QTextDocument()
        probe.setDefaultFont(font)
        probe.setHtml(f'<img src="{fmt.name()}">')
        probe.addResource(QTextDocument.ResourceType.ImageResource, QUrl(fmt.name()), image)
        sizes.append(probe.size())
    assert abs(sizes[0].width() - sizes[1].width()) <= 1
    assert abs(sizes[0].height() - sizes[1].height()) <= 1
    # Cached: the second request is the same image, not a new typesetting.
    again = math_image(key, font, 2.0)
    assert again is not None and again.cacheKey() == double.cacheKey()


@pytest.mark.parametrize(
    ("height", "ascent", "x_height", "padding"),
    [
        (20.0, 15.0, 8.0, (0.0, 6.0)),  # mostly above the baseline: pad below
        (20.0, 10.0, 8.0, (4.0, 0.0)),  # centred on the baseline: pad above
        (20.0, 12.0, 8.0, (0.0, 0.0)),  # already where Qt's middle puts it
        (10.0, 10.0, 0.0, (0.0, 10.0)),  # nothing below the baseline
    ],
)
def test_baseline_padding(
    height: float, ascent: float, x_height: float, padding: tuple[float, float]
) -> None:
    assert baseline_padding(height, ascent, x_height) == pytest.approx(padding)


def test_padded_inline_image_sits_on_the_text_baseline(qapp: Any) -> None:
    """Qt's ``vertical-align: middle`` with the padding puts the formula's baseline on the
    line's: an image 60 px tall with its baseline 50 px down gives the line an ascent of 50."""
    font = QFont("DejaVu Sans", 10)
    doc = QTextDocument()
    doc.setDefaultFont(font)
    top, bottom = baseline_padding(60.0, 50.0, QFontMetrics(font).xHeight())
    image = QImage(10, round(60 + top + bottom), QImage.Format.Format_ARGB32)
    doc.setHtml('x <img src="math:probe" style="vertical-align: middle;"> x')
    doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl("math:probe"), image)
    doc.setTextWidth(400)
    assert doc.size().height() > 50  # laid out
    block = doc.begin()
    layout = block.layout()
    assert layout.lineCount() == 1
    line = layout.lineAt(0)
    assert line.ascent() == pytest.approx(50.0 + top, abs=1.0)


def test_math_size_follows_the_text(qapp: Any) -> None:
    small, large = QFont("DejaVu Sans", 8), QFont("DejaVu Sans", 16)
    assert math_pixel_size(large) > 1.8 * math_pixel_size(small)
    for font in (small, large):
        assert 1.0 <= math_pixel_size(font) / QFontInfo(font).pixelSize() <= 1.31


def test_a_wide_display_formula_fits_the_column(qapp: Any) -> None:
    terms = "+".join(f"a_{{{n}}}" for n in range(12))
    item = answer(f"Sum:\n\n\\[{terms}\\]\n")
    option = QStyleOptionViewItem()
    option.palette = palette_for(LIGHT)
    render = TranscriptDelegate().render_for(item, 200, option)
    (doc,) = [doc for doc in render.chunks if images(doc)]
    (fmt,) = images(doc)
    image = resource(doc, fmt)
    assert image.width() / image.devicePixelRatio() > 250  # wider than the column ...
    assert doc.size().width() <= 201  # ... yet drawn inside it (max-width: 100%)
    render.set_width(120)  # narrower later (a resized window): still inside
    assert doc.size().width() <= 121


def test_unfinished_math_stays_text_while_streaming(qapp: Any) -> None:
    model = TranscriptModel()
    palette, font = palette_for(LIGHT), QFont("DejaVu Sans", 10)
    render = MessageRender(560, False)
    pieces = ["Before\n\n", "$$\n\\frac{a", "}{b}\n", "$$\n\n", "and $x", "^2$ done"]
    seen = []
    for piece in pieces:
        model.append_delta(piece)
        model.flush()
        item = model.streaming_item
        assert item is not None and item.streaming
        update_render(render, item, font, palette)
        shown = "".join(doc.toPlainText() for doc in render.chunks)
        seen.append((sum(len(images(doc)) for doc in render.chunks), shown))
    # Unclosed, the display block is its text (a paragraph: the line break shows as a space).
    assert seen[1][0] == 0 and "$$ \\frac{a" in seen[1][1]
    assert seen[2][0] == 0 and "\\frac{a}{b}" in seen[2][1]
    assert seen[3][0] == 1 and "$$" not in seen[3][1]
    assert seen[4][0] == 1 and "$x" in seen[4][1]
    assert seen[5][0] == 2 and "$" not in seen[5][1]
    # Finished, it renders as it streamed.
    item = model.finish_streaming()
    assert item is not None
    assert sum(len(images(doc)) for doc in docs_of(item)) == 2


@pytest.mark.parametrize(
    ("latex", "depth"),
    [
        ("x", 0),
        ("x^{2}", 1),
        ("\\frac{\\sqrt{a_{i}}}{b}", 3),
        ("\\left( \\frac{a}{b} \\right)", 2),
        ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", 2),
        ("\\{x\\} \\left\\{ y \\right\\}", 1),  # literal braces do not nest
        ("\\frac{" * 20 + "x" + "}{y}" * 20, 20),
    ],
)
def test_nesting_depth(latex: str, depth: int) -> None:
    assert nesting_depth(latex) == depth


def test_deeply_nested_math_shows_its_source_without_typesetting(qapp: Any) -> None:
    """ziamath doubles its time per nesting level (20 nested \\frac never finished): such a
    formula is refused before it is typeset, so this answer renders at once."""
    nested = "\\frac{" * 20 + "x" + "}{y}" * 20
    assert typeset_estimate_ms(nested) > MAX_ESTIMATE_MS
    assert typeset_estimate_ms("x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}") < MAX_ESTIMATE_MS
    item = answer(f"Deep ${nested}$ and fine $\\frac{{a}}{{b}}$.")
    assert len(all_images(item)) == 1
    assert nested[:30] in text_of(item)


def test_too_many_dollars_in_a_paragraph_are_text(qapp: Any) -> None:
    item = answer(" ".join(["$a$"] * (MAX_DOLLARS // 2 + 1)))
    assert all_images(item) == []
    assert text_of(item).count("$a$") == MAX_DOLLARS // 2 + 1


def test_unclosed_brackets_stay_text(qapp: Any) -> None:
    item = answer("open \\(x " * 500 + "and $y$ after")
    assert len(all_images(item)) == 1  # only $y$
    assert text_of(item).count("(x") == 500  # CommonMark: an unclosed \( is an escaped (
