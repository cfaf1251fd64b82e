"""Row geometry and look: the reading column, bubbles, prose without a box, the action bar.

Table tests of the pure geometry (``ui.transcript.layout``) at 480/900/1400 px, then a real
offscreen view: what a grab shows behind each kind of row, hovering and clicking Copy, and
anchors still hit where the text is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QTextDocument
from PySide6.QtWidgets import QStyleOptionViewItem

from app import AssistantMessage, ToolCall, ToolMessage, UserMessage
from ui.theme import LIGHT, SPACE
from ui.transcript.actions import keeps_actions
from ui.transcript.layout import (
    ACTION_BAR,
    BUBBLE_SHARE,
    RowGeometry,
    action_rects,
    column,
    content_width,
    doc_at,
    has_actions,
    row_geometry,
    row_height,
)
from ui.transcript.markdown import COPY_SCHEME
from ui.transcript.model import ItemKind, TranscriptItem, TranscriptModel
from ui.transcript.view import TranscriptView

LONG = "A longer message from the person, which goes on for a while " * 6


# --- the pure geometry ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "left", "col"),
    [
        (480, 16, 448),  # narrow: the column takes the width, 16 px each side
        (599, 16, 567),
        (600, 24, 552),  # room for the wider margin
        (828, 24, 780),  # exactly the cap plus margins
        (900, 60, 780),  # the cap, centred
        (1400, 310, 780),
    ],
)
def test_column_is_centred_and_capped(width: int, left: float, col: float) -> None:
    assert column(0, width) == (left, col)
    assert column(100, width) == (100 + left, col)  # follows the row's left edge


@pytest.mark.parametrize(
    ("kind", "width", "expected"),
    [
        (ItemKind.USER, 480, math.floor(448 * BUBBLE_SHARE) - 32),
        (ItemKind.USER, 900, math.floor(780 * BUBBLE_SHARE) - 32),
        (ItemKind.USER, 1400, math.floor(780 * BUBBLE_SHARE) - 32),
        (ItemKind.ASSISTANT, 480, 448),
        (ItemKind.ASSISTANT, 900, 780),
        (ItemKind.ASSISTANT, 1400, 780),
        (ItemKind.TOOL, 480, 448 - 24),
        (ItemKind.TOOL, 1400, 780 - 24),
        (ItemKind.DRAFT, 900, 780 - 24),
        (ItemKind.NOTE, 900, 780),
    ],
)
def test_content_width(kind: ItemKind, width: int, expected: float) -> None:
    assert content_width(TranscriptItem(kind, "x"), width) == expected


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (TranscriptItem(ItemKind.USER, "hi"), True),
        (TranscriptItem(ItemKind.ASSISTANT, "ok"), True),
        (TranscriptItem(ItemKind.ASSISTANT, "", streaming=True), True),  # no reflow at its end
        (TranscriptItem(ItemKind.ASSISTANT, "", reasoning="only thought"), False),
        (TranscriptItem(ItemKind.TOOL), False),
        (TranscriptItem(ItemKind.DRAFT, "partial"), False),
        (TranscriptItem(ItemKind.NOTE, "Continued"), False),
    ],
)
def test_which_rows_reserve_an_action_bar(item: TranscriptItem, expected: bool) -> None:
    assert has_actions(item) is expected


def _docs(item: TranscriptItem, width: int, *texts: str) -> list[QTextDocument]:
    docs = []
    for text in texts:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setPlainText(text)
        doc.setTextWidth(content_width(item, width))
        docs.append(doc)
    return docs


def _laid_out(
    kind: ItemKind, width: int, *texts: str
) -> tuple[TranscriptItem, RowGeometry, QRect, list[QTextDocument]]:
    item = TranscriptItem(kind, texts[-1] if texts else "")
    docs = _docs(item, width, *texts)
    body = sum(doc.size().height() for doc in docs)
    rect = QRect(0, 500, width, row_height(item, body))
    return item, row_geometry(item, docs, rect), rect, docs


def _inside(inner: Any, outer: Any) -> bool:
    return bool(
        inner.left() >= outer.left() - 0.01
        and inner.right() <= outer.right() + 0.01
        and inner.top() >= outer.top() - 0.01
        and inner.bottom() <= outer.bottom() + 0.01
    )


@pytest.mark.parametrize("width", [480, 900, 1400])
def test_a_short_user_message_is_a_small_bubble_at_the_columns_right(qapp: Any, width: int) -> None:
    _item, geometry, rect, docs = _laid_out(ItemKind.USER, width, "hi")
    left, col = column(0, width)
    card = geometry.card
    assert card is not None
    assert card.right() == pytest.approx(left + col)  # right-aligned in the column
    assert card.width() == pytest.approx(math.ceil(docs[0].idealWidth()) + 2 * SPACE[3])
    assert card.width() < 80  # shrunk to "hi", not the column's 80 %
    origin = geometry.origins[0]
    assert origin.x() == pytest.approx(card.left() + SPACE[3])  # the text is inside it
    assert _inside(card, QRectF(rect)) and geometry.frame == card
    assert geometry.actions is not None and geometry.actions_right
    assert geometry.actions.top() == pytest.approx(card.bottom())
    assert geometry.actions.bottom() == pytest.approx(rect.bottom() + 1)  # fills the row


@pytest.mark.parametrize("width", [480, 900, 1400])
def test_a_long_user_message_wraps_at_80_percent_of_the_column(qapp: Any, width: int) -> None:
    _item, geometry, _rect, docs = _laid_out(ItemKind.USER, width, LONG)
    left, col = column(0, width)
    card = geometry.card
    assert card is not None
    # As wide as its widest wrapped line: within a word of 80 % of the column.
    assert math.floor(col * BUBBLE_SHARE) - 80 < card.width() <= math.floor(col * BUBBLE_SHARE)
    assert card.right() == pytest.approx(left + col)
    assert docs[0].begin().layout().lineCount() > 2  # wrapped, inside the bubble
    assert geometry.origins[0].x() + docs[0].idealWidth() <= card.right() - SPACE[3] + 0.5


@pytest.mark.parametrize("width", [480, 900, 1400])
def test_an_answer_has_no_box_and_takes_the_column(qapp: Any, width: int) -> None:
    _item, geometry, rect, docs = _laid_out(ItemKind.ASSISTANT, width, "Assistant", LONG)
    left, col = column(0, width)
    assert geometry.card is None
    assert [origin.x() for origin in geometry.origins] == [left, left]
    assert geometry.sizes[1][0] == col
    assert geometry.origins[1].y() == geometry.origins[0].y() + docs[0].size().height()
    assert geometry.actions is not None and not geometry.actions_right
    assert geometry.frame is not None and _inside(geometry.frame, QRectF(rect))
    assert geometry.frame.left() < left  # the focus ring sits a step outside the text


@pytest.mark.parametrize(("kind", "width"), [(ItemKind.TOOL, 480), (ItemKind.DRAFT, 1400)])
def test_tool_cards_and_drafts_are_cards_the_columns_width(
    qapp: Any, kind: ItemKind, width: int
) -> None:
    _item, geometry, rect, _docs = _laid_out(kind, width, "▸ Tool read_file · done")
    left, col = column(0, width)
    assert geometry.card is not None
    assert (geometry.card.left(), geometry.card.width()) == (left, col)
    assert geometry.origins[0].x() == left + SPACE[2]
    assert geometry.actions is None
    assert _inside(geometry.card, QRectF(rect))


def test_a_short_note_is_centred(qapp: Any) -> None:
    _item, geometry, _rect, docs = _laid_out(ItemKind.NOTE, 900, "Continued")
    left, col = column(0, 900)
    centre = geometry.origins[0].x() + docs[0].idealWidth() / 2
    assert centre == pytest.approx(left + col / 2, abs=1)
    assert geometry.card is None


def test_joined_answers_sit_closer_than_a_new_turn() -> None:
    user = row_height(TranscriptItem(ItemKind.USER, "hi"), 20)
    answer = row_height(TranscriptItem(ItemKind.ASSISTANT, "ok"), 20)
    joined = row_height(TranscriptItem(ItemKind.ASSISTANT, "ok", joined=True), 20)
    assert answer - 20 - ACTION_BAR == SPACE[1]
    assert joined - 20 - ACTION_BAR == SPACE[1]
    assert user - 20 - ACTION_BAR - 2 * SPACE[1] == SPACE[3]  # the bubble's padding aside


@pytest.mark.parametrize(
    ("right", "widths", "expected_lefts"),
    [
        (True, [60.0], [840.0 - 60]),  # under a bubble: from the column's right edge
        (True, [60.0, 40.0], [780.0, 740.0 - 4]),  # more actions go leftwards, 4 px apart
        (False, [60.0], [60.0 - 8]),  # under an answer: from its left, outdented
        (False, [60.0, 40.0], [52.0, 52.0 + 60 + 4]),
    ],
)
def test_action_buttons_are_laid_from_their_side(
    right: bool, widths: list[float], expected_lefts: list[float]
) -> None:
    geometry = RowGeometry(
        None, (), (), actions=QRectF(60, 100, 780, ACTION_BAR), actions_right=right
    )
    rects = action_rects(geometry, widths, outdent=8)
    assert [rect.left() for rect in rects] == expected_lefts
    assert all(rect.height() == SPACE[4] and rect.center().y() == 114 for rect in rects)
    assert action_rects(RowGeometry(None, (), ()), widths) == ()


def test_doc_at_follows_the_bubbles_origin(qapp: Any) -> None:
    _item, geometry, _rect, _docs = _laid_out(ItemKind.USER, 900, "hi")
    origin = geometry.origins[0]
    hit = doc_at(geometry, origin.x() + 3, origin.y() + 2)
    assert hit is not None and hit[0] == 0 and hit[1] == QPointF(3, 2)
    assert doc_at(geometry, origin.x(), origin.y() - 1) is None  # above the text


# --- a real view ---------------------------------------------------------------------------


@pytest.fixture
def view(qapp: Any, qtbot: Any) -> Iterator[TranscriptView]:
    model = TranscriptModel()
    widget = TranscriptView()
    widget.setModel(model)
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget


def _load(view: TranscriptView, history: list[Any]) -> TranscriptModel:
    model = view.model()
    assert isinstance(model, TranscriptModel)
    model.load_history(history)
    view.doItemsLayout()
    return model


def _option(view: TranscriptView, row: int) -> QStyleOptionViewItem:
    option = QStyleOptionViewItem()
    option.font, option.palette = view.font(), view.palette()
    option.rect = view.visualRect(view.model().index(row, 0))
    return option


def _geometry(view: TranscriptView, row: int) -> RowGeometry:
    model = view.model()
    assert isinstance(model, TranscriptModel)
    return view.delegate.geometry(model.item(row), _option(view, row))


def _grab(view: TranscriptView) -> QImage:
    return view.viewport().grab().toImage()


def _colours_on_line(image: QImage, x: int, top: int, bottom: int) -> set[str]:
    return {image.pixelColor(x, y).name() for y in range(top, bottom)}


HISTORY = [
    UserMessage("hi"),
    AssistantMessage("Hello — **how** can I help?", (ToolCall("c1", "read_file", {"p": "a"}),)),
    ToolMessage("c1", "read_file", "data"),
    AssistantMessage("Done."),
    UserMessage("thanks"),
    AssistantMessage("ok"),
]


def test_a_grab_shows_a_bubble_behind_the_person_and_no_box_behind_answers(
    view: TranscriptView,
) -> None:
    _load(view, HISTORY)
    image = _grab(view)
    surface = image.pixelColor(2, 2).name()
    bubble = _geometry(view, 0).card
    assert bubble is not None
    y = int(bubble.center().y())
    # Inside the bubble, right of "hi": the bubble's fill; left of it in the column: surface.
    assert image.pixelColor(int(bubble.right()) - 6, y).name() == LIGHT.user_bubble
    assert image.pixelColor(int(bubble.left()) - 20, y).name() == surface
    # Down the column's right edge beside a short answer: only the surface (no box, no
    # border); beside the tool card: its border.
    answer, tool = _geometry(view, 3), _geometry(view, 2)
    left, col = column(0, view.viewport().width())
    edge = int(left + col) - 1
    top = int(answer.origins[0].y())
    assert _colours_on_line(image, edge, top, top + int(answer.sizes[-1][1])) == {surface}
    assert tool.card is not None
    card = tool.card
    assert LIGHT.border in _colours_on_line(image, edge, int(card.top()), int(card.bottom()))


def _button(view: TranscriptView, row: int) -> QPoint:
    model = view.model()
    assert isinstance(model, TranscriptModel)
    item = model.item(row)
    buttons = view.delegate.actions.buttons(item, _geometry(view, row), view.font())
    assert [action.name for action, *_ in buttons] == ["copy"]
    return buttons[0][1].center().toPoint()


def _bar_pixels(view: TranscriptView, row: int) -> set[str]:
    bar = _geometry(view, row).actions
    assert bar is not None
    image = _grab(view)
    return {
        image.pixelColor(x, y).name()
        for x in range(int(bar.left()), int(bar.right()), 2)
        for y in range(int(bar.top()), int(bar.bottom()), 2)
    }


def test_hovering_shows_the_action_bar_and_copy_puts_the_text_on_the_clipboard(
    view: TranscriptView, qtbot: Any
) -> None:
    _load(view, HISTORY)
    view.clearFocus()
    row = 4  # "thanks": neither the current row nor the latest answer
    assert len(_bar_pixels(view, row)) == 1  # nothing drawn while the pointer is elsewhere
    point = _button(view, row)
    qtbot.mouseMove(view.viewport(), point)
    qtbot.waitUntil(lambda: len(_bar_pixels(view, row)) > 1)
    # Over another row, it goes again (its height stays: hovering never reflows).
    height = view.visualRect(view.model().index(row, 0)).height()
    qtbot.mouseMove(view.viewport(), QPoint(2, 2))
    qtbot.waitUntil(lambda: len(_bar_pixels(view, row)) == 1)
    assert view.visualRect(view.model().index(row, 0)).height() == height
    qtbot.mouseMove(view.viewport(), point)
    qtbot.waitUntil(lambda: len(_bar_pixels(view, row)) > 1)
    QGuiApplication.clipboard().clear()
    view.delegate.actions.done_timer.setInterval(100)
    with qtbot.waitSignal(view.delegate.messageCopied) as copied:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert copied.args == ["thanks"]
    assert QGuiApplication.clipboard().text() == "thanks"
    model = view.model()
    assert isinstance(model, TranscriptModel)

    def faces() -> list[str]:
        buttons = view.delegate.actions.buttons(model.item(row), _geometry(view, row), view.font())
        return [words for *_, words in buttons]

    assert faces() == ["Copied"]
    qtbot.waitUntil(lambda: faces() == ["Copy"], timeout=3000)


def test_copy_under_an_answer_copies_its_markdown(view: TranscriptView, qtbot: Any) -> None:
    _load(view, [UserMessage("hi"), AssistantMessage("Some **bold** and `code`.")])
    view.clearFocus()
    assert len(_bar_pixels(view, 1)) > 1  # the latest answer keeps its actions shown
    point = _button(view, 1)
    qtbot.mouseMove(view.viewport(), point)
    with qtbot.waitSignal(view.delegate.messageCopied):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert QGuiApplication.clipboard().text() == "Some **bold** and `code`."
    anchor = view.delegate.anchor_at(view.model().item(1), _option(view, 1), point)
    assert anchor == ("continuum-action:copy", -1)  # the pointer shows a hand over it


def test_a_streaming_answer_reserves_its_bar_but_shows_no_button(view: TranscriptView) -> None:
    model = _load(view, [UserMessage("hi")])
    model.append_delta("Partial answer")
    model.flush()
    view.doItemsLayout()
    row = model.rowCount() - 1
    item = model.item(row)
    assert item.streaming
    geometry = _geometry(view, row)
    assert geometry.actions is not None
    assert view.delegate.actions.buttons(item, geometry, view.font()) == ()
    assert len(_bar_pixels(view, row)) == 1


def test_a_code_blocks_copy_link_is_hit_where_it_is_drawn(view: TranscriptView, qtbot: Any) -> None:
    model = _load(view, [UserMessage("hi"), AssistantMessage("Run:\n\n```python\nprint(1)\n```")])
    item = model.item(1)
    geometry = _geometry(view, 1)
    render = view.delegate._renders[item.uid]
    found: QPoint | None = None
    for number, doc in enumerate(render.docs()):
        origin = geometry.origins[number]
        for y in range(0, int(doc.size().height()), 2):
            for x in range(0, int(doc.textWidth()), 2):
                if doc.documentLayout().anchorAt(QPointF(x, y)).startswith(COPY_SCHEME):
                    found = QPoint(int(origin.x()) + x, int(origin.y()) + y)
                    break
            if found:
                break
        if found:
            break
    assert found is not None
    # The link is drawn there: the grab differs from the code header behind it nearby.
    image = _grab(view)
    box = {
        image.pixelColor(found.x() + dx, found.y() + dy).name()
        for dx in range(0, 30)
        for dy in range(-4, 12)
    }
    assert len(box) > 2  # the link's glyphs on the code header
    QGuiApplication.clipboard().clear()
    with qtbot.waitSignal(view.delegate.codeCopied):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=found)
    assert QGuiApplication.clipboard().text() == "print(1)"


def test_the_focus_ring_goes_around_the_current_answer(view: TranscriptView, qtbot: Any) -> None:
    _load(view, HISTORY)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    view.setCurrentIndex(view.model().index(3, 0))
    frame = _geometry(view, 3).frame
    assert frame is not None
    image = _grab(view)
    accent = QColor(LIGHT.accent)

    def near_accent(colour: QColor) -> bool:
        return all(
            abs(a - b) < 40 for a, b in zip(colour.getRgb()[:3], accent.getRgb()[:3], strict=True)
        )

    y = int(frame.center().y())
    ring = [image.pixelColor(int(frame.left()) + dx, y) for dx in range(0, 4)]
    assert any(near_accent(colour) for colour in ring)
    other = _geometry(view, 1).frame
    assert other is not None
    edge = [image.pixelColor(int(other.left()) + dx, int(other.center().y())) for dx in range(4)]
    assert not any(near_accent(colour) for colour in edge)


@pytest.mark.parametrize("width", [480, 1400])
def test_estimated_heights_are_close_to_the_measured_ones(qapp: Any, width: int) -> None:
    """Rows not yet painted are sized by estimate through the same geometry; painting
    corrects them, and the correction is small."""
    view = TranscriptView()
    view.resize(width, 600)
    model = TranscriptModel()
    view.setModel(model)
    history = [UserMessage(LONG), AssistantMessage(LONG * 3)] * 12  # beyond the exact tail
    model.load_history(history)
    option = _option(view, 0)
    for row in range(2):
        item = model.item(row)
        index = model.index(row, 0)
        estimate = view.delegate.sizeHint(option, index).height()
        view.delegate.render_for(item, view.delegate.width_for(item, option), option)
        exact = view.delegate.sizeHint(option, index).height()
        assert abs(exact - estimate) <= max(0.25 * exact, 24), (row, estimate, exact)


@pytest.mark.parametrize(
    ("kind", "later", "expected"),
    [
        (ItemKind.ASSISTANT, [], True),  # the latest answer keeps Copy shown
        (ItemKind.ASSISTANT, [ItemKind.NOTE, ItemKind.DRAFT], True),
        (ItemKind.ASSISTANT, [ItemKind.TOOL], False),  # its turn goes on
        (ItemKind.ASSISTANT, [ItemKind.USER], False),
        (ItemKind.USER, [], False),
        (ItemKind.TOOL, [], False),
    ],
)
def test_which_row_keeps_its_actions_shown(
    kind: ItemKind, later: list[ItemKind], expected: bool
) -> None:
    assert keeps_actions(kind, later) is expected
