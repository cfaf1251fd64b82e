"""How the sidebar looks, through the real widget: plain elided titles, date-group headers,
the Resume badge inside the visible width, search highlights and "No conversations match",
theme colours and accessible names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app import SessionInfo
from ui.sidebar import Sidebar
from ui.sidebar_rows import (
    GROUP_ROLE,
    SESSION_ROLE,
    RowDelegate,
    fit_spans,
    geometry_of,
    header_rect,
)
from ui.sidebar_text import NO_CONVERSATIONS
from ui.theme import DARK, LIGHT, Tokens, contrast, palette_for

NOW = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
LONG = "A very long conversation title that goes on and on well past the edge of the list"


def _ago(**delta: float) -> float:
    return (NOW - timedelta(**delta)).timestamp()


SESSIONS = [
    SessionInfo("md", "# Release checklist Here is what **must*", _ago(hours=1), _ago(hours=1), 2),
    SessionInfo("long", LONG, _ago(hours=2), _ago(hours=2), 2),
    SessionInfo("yday", "`pytest` flakes", _ago(days=1), _ago(days=1), 2),
    SessionInfo("week", "Penguins of the south", _ago(days=3), _ago(days=3), 2),
    SessionInfo("month", "Budget", _ago(days=12), _ago(days=12), 2),
    SessionInfo("old", None, _ago(days=45), _ago(days=45), 2),
]


def _sidebar(qtbot: Any, width: int = 260, badges: frozenset[str] = frozenset({"long"})) -> Sidebar:
    side = Sidebar()
    qtbot.addWidget(side)
    side.clock = lambda: NOW
    side.set_sessions(SESSIONS, set(badges))
    side.resize(width, 600)
    side.show()
    qtbot.waitExposed(side)
    return side


def _row(side: Sidebar, session_id: str) -> int:
    """The list's row of a conversation (section headers are rows too)."""
    return side.index_of(session_id).row()


def _geometry(side: Sidebar, row: int) -> Any:
    index = side.list.model().index(row, 0)
    return geometry_of(side.list.visualRect(index), side.list.font(), index)


def _runs(side: Sidebar, row: int) -> tuple[list[Any], list[Any]]:
    index = side.list.model().index(row, 0)
    delegate = side.list.itemDelegate()
    assert isinstance(delegate, RowDelegate)
    return delegate.runs(index, _geometry(side, row), side.list.font())


def _drawn(runs: list[Any]) -> str:
    return "".join(text for text, _strong, _x in runs)


def test_titles_are_plain_text_with_the_full_title_in_the_tooltip(qtbot: Any) -> None:
    side = _sidebar(qtbot)
    index = side.index_of("md")
    assert index.data() == "Release checklist Here is what must"
    assert index.data(Qt.ItemDataRole.ToolTipRole) == "Release checklist Here is what must"
    assert side.index_of("old").data() == "Untitled conversation"
    assert side.title_of("md") == "# Release checklist Here is what **must*"  # stored as is
    title, _snippet = _runs(side, _row(side, "yday"))
    assert _drawn(title) == "pytest flakes"


@pytest.mark.parametrize("width", [200, 260, 420])
def test_long_titles_are_elided_and_the_badge_stays_inside_the_list(qtbot: Any, width: int) -> None:
    side = _sidebar(qtbot, width)
    viewport = side.list.viewport().rect()
    assert side.list.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert side.list.horizontalScrollBar().maximum() == 0
    row = _row(side, "long")
    g = _geometry(side, row)
    assert g.badge is not None and viewport.contains(g.badge)
    assert g.title.right() < g.badge.left()
    title, _ = _runs(side, row)
    shown = _drawn(title)
    assert shown.endswith("…") and LONG.startswith(shown[:-1].rstrip())
    assert QFontMetrics(side.list.font()).horizontalAdvance(shown) <= g.title.width()
    # The badge is painted where the geometry says: its outline colour is in that rectangle.
    image = side.list.viewport().grab().toImage()
    ratio = image.devicePixelRatio()
    colours = {
        image.pixelColor(int(x * ratio), int(g.badge.center().y() * ratio)).name()
        for x in range(g.badge.left(), g.badge.right() + 1)
    }
    assert LIGHT.draft_border in colours or LIGHT.warning in colours
    # Rows without a badge use the whole width for their title.
    plain = _geometry(side, _row(side, "md"))
    assert plain.badge is None and plain.title.right() > g.title.right()


def test_fit_spans_elides_the_run_that_does_not_fit(qapp: Any) -> None:
    font = QFont()
    bold = QFont(font)
    bold.setWeight(QFont.Weight.Bold)
    metrics = QFontMetrics(font)
    words = [("Penguins", True), (" of the far south and beyond", False)]
    whole = sum(QFontMetrics((font, bold)[s]).horizontalAdvance(t) for t, s in words)
    assert fit_spans(words, (font, bold), whole) == [
        ("Penguins", True, 0),
        (" of the far south and beyond", False, QFontMetrics(bold).horizontalAdvance("Penguins")),
    ]
    cut = fit_spans(words, (font, bold), whole // 2)
    assert cut[0] == ("Penguins", True, 0) and cut[-1][0].endswith("…")
    assert cut[-1][2] + metrics.horizontalAdvance(cut[-1][0]) <= whole // 2
    # No room for "…" after the first run: that run is elided instead.
    first = QFontMetrics(bold).horizontalAdvance("Penguins")
    tight = fit_spans(words, (font, bold), first + 1)
    assert len(tight) == 1 and tight[0][0].endswith("…") and tight[0][1]
    assert fit_spans([], (font, bold), 100) == []


def test_date_groups_are_headers_that_keys_skip_and_clicks_do_not_open(qtbot: Any) -> None:
    side = _sidebar(qtbot)
    assert side.group_headers() == [
        (0, "Today"),
        (2, "Yesterday"),
        (3, "Previous 7 days"),
        (4, "Previous 30 days"),
        (5, "October 2026"),
    ]
    assert side.session_ids() == ["md", "long", "yday", "week", "month", "old"]
    opened: list[str] = []
    side.sessionActivated.connect(opened.append)
    side.set_current("long")
    # Down from "long" lands on the next conversation, not on the "Yesterday" header.
    side.list.setFocus()
    QTest.keyClick(side.list, Qt.Key.Key_Down)
    assert opened == ["yday"] and side.current_id() == "yday"
    # Up and down again: the header between is skipped both ways.
    side.set_current("yday")
    QTest.keyClick(side.list, Qt.Key.Key_Up)
    assert opened == ["yday", "long"] and side.current_id() == "long"
    side.set_current("yday")
    side.list.setCurrentIndex(side.index_of("yday"))
    # A click on a header opens nothing and moves nothing; a click on the card opens it.
    header = side.list.model().index(_row(side, "week") - 1, 0)
    assert header.data(GROUP_ROLE) == "Previous 7 days" and header.data(SESSION_ROLE) is None
    label = header_rect(side.list.visualRect(header), side.list.font())
    g = _geometry(side, _row(side, "week"))
    assert label.bottom() < g.card.top()
    viewport = side.list.viewport()
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=label.center())
    QTest.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=label.center())
    assert opened == ["yday", "long"] and side.current_id() == "yday"
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=g.card.center())
    assert opened == ["yday", "long", "week"]
    # Screen readers hear each row's group with it, and a header as its label.
    index = side.index_of("week")
    assert index.data(Qt.ItemDataRole.AccessibleDescriptionRole) == "Previous 7 days"
    assert header.data(Qt.ItemDataRole.AccessibleTextRole) == "Previous 7 days"
    # Home and End land on conversations, never on a header.
    side.set_current("week")
    side.list.setFocus()
    QTest.keyClick(side.list, Qt.Key.Key_Home)
    assert side.current_id() == "md" and opened[-1] == "md"
    side.set_current("md")
    QTest.keyClick(side.list, Qt.Key.Key_Up)  # above the first one is its header: no move
    assert side.current_id() == "md" and opened[-1] == "md"
    QTest.keyClick(side.list, Qt.Key.Key_End)
    assert side.current_id() == "old" and opened[-1] == "old"


def test_search_highlights_the_match_or_says_nothing_matches(qtbot: Any) -> None:
    side = _sidebar(qtbot)
    assert side.empty.isHidden()
    side.search.setText("penguins south")
    side.set_search_results([("week", "…where [penguins] live, far [south]…"), ("gone", "x")])
    assert side.session_ids() == ["week"]  # a hit for a conversation not listed is dropped
    assert side.group_headers() == []  # results in rank order, not grouped by date
    assert side.empty.isHidden()
    title, snippet = _runs(side, _row(side, "week"))
    assert [(t, s) for t, s, _x in title] == [
        ("Penguins", True),
        (" of the ", False),
        ("south", True),
    ]
    assert [(t, s) for t, s, _x in snippet][:2] == [("…where ", False), ("penguins", True)]
    side.search.setText("  zebra   crossing")
    side.set_search_results([])
    assert side.session_ids() == []
    assert side.empty.isVisible()
    assert side.empty.text() == "No conversations match “zebra crossing”"
    assert side.empty.textFormat() == Qt.TextFormat.PlainText
    side.search.clear()
    side.show_all()
    assert side.empty.isHidden() and len(side.session_ids()) == len(SESSIONS)
    title, _ = _runs(side, _row(side, "week"))
    assert all(not strong for _t, strong, _x in title)


def test_accessible_names_are_phrases(qtbot: Any) -> None:
    side = _sidebar(qtbot)
    assert side.list.accessibleName() == "Conversations"
    assert side.search.accessibleName() == "Search conversations"
    assert side.new_button.accessibleName() == "New conversation"
    model = side.list.model()
    texts = [
        model.index(r, 0).data(Qt.ItemDataRole.AccessibleTextRole) for r in range(model.rowCount())
    ]
    assert texts[:3] == [
        "Today",
        "Release checklist Here is what must",
        f"{LONG} — can be resumed",
    ]
    long_row = side.index_of("long")
    assert long_row.data(Qt.ItemDataRole.ToolTipRole) == f"{LONG} — can be resumed"


@pytest.mark.parametrize("tokens", [LIGHT, DARK], ids=["light", "dark"])
def test_colours_follow_the_theme(qtbot: Any, tokens: Tokens) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.palette()
    side = _sidebar(qtbot)
    try:
        app.setPalette(palette_for(tokens))
        qtbot.waitUntil(
            lambda: side.list.palette().color(QPalette.ColorRole.Base).name() == tokens.window
        )
        assert side.empty.palette().color(QPalette.ColorRole.WindowText).name() == tokens.muted
        # The selected row is drawn with the theme's selection colour.
        side.set_current("md")
        g = _geometry(side, _row(side, "md"))
        image: QImage = side.list.viewport().grab().toImage()
        ratio = image.devicePixelRatio()
        point = QPoint(g.card.left() + 4, g.card.bottom() - 2)
        assert image.pixelColor(point * ratio).name() == tokens.selection_bg
    finally:
        app.setPalette(before)
    # The badge's words stay readable on the badge in both themes.
    assert contrast(tokens.warning, tokens.draft_bg) >= 4.5
    # The keyboard focus ring stands out from the selected card (3:1, as for any UI outline).
    assert contrast(tokens.link, tokens.selection_bg) >= 3.0
    # A hovered card keeps its title and snippet readable.
    assert (
        min(contrast(tokens.text, tokens.code_header), contrast(tokens.muted, tokens.code_header))
        >= 4.5
    )
    # Every part of a row is inside the row (hover and selection cover what a click opens).
    g = _geometry(side, _row(side, "long"))
    row = side.list.visualRect(side.index_of("long"))
    assert row.contains(g.card) and g.card.contains(g.title)
    # Every row has one height: a header's row is as tall as a conversation's.
    heights = {side.list.visualRect(side.list.model().index(r, 0)).height() for r in range(8)}
    assert len(heights) == 1


def test_the_groups_are_redrawn_at_midnight(qtbot: Any) -> None:
    side = Sidebar()
    qtbot.addWidget(side)
    evening = datetime(2026, 12, 3, 23, 59, 59, 500000, tzinfo=UTC)
    side.clock = lambda: evening
    side.set_sessions([SessionInfo("x", "Late", _ago(hours=1), _ago(hours=1), 1)], set())
    assert side.group_headers() == [(0, "Today")]
    side.clock = lambda: evening + timedelta(seconds=2)
    with qtbot.waitSignal(side._midnight.timeout, timeout=5000):
        pass
    assert side.group_headers() == [(0, "Yesterday")]


def test_hovering_a_header_does_not_light_up_the_card_below(qtbot: Any) -> None:
    side = _sidebar(qtbot)
    g = _geometry(side, _row(side, "week"))  # "Previous 7 days" heads "week"
    header = side.list.model().index(_row(side, "week") - 1, 0)
    label = header_rect(side.list.visualRect(header), side.list.font())
    viewport = side.list.viewport()
    probe = QPoint(g.card.left() + 4, g.card.bottom() - 2)

    def colour_at_card() -> str:
        image = viewport.grab().toImage()
        return image.pixelColor(probe * image.devicePixelRatio()).name()

    QTest.mouseMove(viewport, g.card.center())
    qtbot.waitUntil(lambda: colour_at_card() == LIGHT.code_header)
    QTest.mouseMove(viewport, label.center())
    qtbot.waitUntil(lambda: side.list.on_header(label.center()))
    qtbot.waitUntil(lambda: colour_at_card() == LIGHT.window)


def test_an_empty_list_says_so(qtbot: Any) -> None:
    side = Sidebar()
    qtbot.addWidget(side)
    side.show()
    side.set_sessions([], set())
    assert side.empty.isVisible() and side.empty.text() == NO_CONVERSATIONS
    side.set_sessions(SESSIONS[:1], set())
    assert side.empty.isHidden() and side.session_ids() == ["md"]
