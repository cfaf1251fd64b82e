"""The start window's list draws what the real sidebar draws (issue 18's light start window).

* :func:`row_metrics` against :mod:`ui.sidebar_rows`' geometry, for several widths and fonts.
* :func:`elided` against Qt's ``ElideRight``.
* :func:`listed_rows` against the sidebar model's sections.
* The pixels: the real :class:`ui.sidebar.Sidebar` list and the :class:`TitleList`, the same
  conversations at the same size, light and dark, give the same image.
* :func:`start_tokens` (the theme before the core) and the menu titles.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics, QFontMetricsF, QImage, QPalette

from ui.actions import MENUS
from ui.sidebar import Sidebar
from ui.sidebar_model import grouped_keys
from ui.sidebar_rows import header_rect, row_geometry, row_height
from ui.start_list import TitleList, elided, listed_rows, row_metrics
from ui.start_window import MENU_TITLES, start_tokens
from ui.theme import DARK, LIGHT, palette_for, small_font
from ui.window_state import WindowState

NOW = datetime(2026, 12, 5, 15, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Conv:
    id: str
    title: str | None
    created_at: float
    updated_at: float
    pinned_at: float | None = None


def _listing() -> list[Conv]:
    """In the store's listing order (pinned first, then newest first), as read_listing gives."""
    day = 86400.0
    now = NOW.timestamp()
    return [
        Conv("p", "Pinned: **project** notes", now - 40 * day, now - 40 * day, now - 1),
        Conv("a", "SQL window functions", now - 60, now - 60),
        Conv("b", "Why does my Rust borrow checker complain about this loop", now - 99, now - 99),
        Conv("f", "<div> vs <span> in React", now - 120, now - 120),
        Conv("c", None, now - 1.5 * day, now - 1.5 * day),
        Conv("d", "Recipe: lentil soup", now - 4 * day, now - 4 * day),
        Conv("e", "# Old *plans*", now - 200 * day, now - 200 * day),
    ]


def _box(rect: QRect) -> tuple[int, int, int, int]:
    return (rect.x(), rect.y(), rect.width(), rect.height())


@pytest.mark.parametrize("width", [120, 236, 400])
@pytest.mark.parametrize("points", [7.0, 9.0, 13.5])
def test_row_metrics_are_the_sidebar_rows(qapp: Any, width: int, points: float) -> None:
    font = QFont(qapp.font())
    font.setPointSizeF(points)
    small = small_font(font, bold=True)
    m = row_metrics(width, QFontMetrics(font).height(), QFontMetrics(small).height())
    rect = QRect(0, 0, width, row_height(font, snippet=False))
    g = row_geometry(rect, font, snippet=False, badge=False)
    assert m.height == rect.height()
    assert m.card == _box(g.card)
    assert m.title == _box(g.title)
    assert m.header == _box(header_rect(rect, font))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "short",
        "Why does my Rust borrow checker complain",
        "東京の天気 and more",
        "a" * 80,
        "WWWiiilll mmm ... ,,,",
        "emoji 🎉🎉 beyond the plane 𝒜𝒜𝒜 of basic characters",
        "W",
    ],
)
@pytest.mark.parametrize("points", [7.0, 9.0, 11.5])
def test_elided_as_qt_elides(qapp: Any, text: str, points: float) -> None:
    font = QFont(qapp.font())
    font.setPointSizeF(points)
    metrics = QFontMetrics(font)
    for width in range(0, 420):
        expected = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
        assert elided(QFontMetricsF(font), text, width) == expected, width


def test_rows_are_the_sidebar_models_sections() -> None:
    listing = _listing()
    rows = listed_rows(listing, NOW)
    keys = grouped_keys(listing, NOW)
    assert len(rows) == len(keys)
    for row, key in zip(rows, keys, strict=True):
        if row.label is not None:
            assert key.endswith(row.label) and row.session_id is None
        else:
            assert key == row.session_id
    assert [r.label for r in rows if r.label] == [
        "Pinned",
        "Today",
        "Yesterday",
        "Previous 7 days",
        "May 2026",
    ]
    titles = {r.session_id: r.title for r in rows if r.session_id}
    assert titles["p"] == "Pinned: project notes"  # Markdown taken off, as the sidebar does
    assert titles["c"] == "Untitled conversation"


def _image(widget: Any) -> QImage:
    return widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


@pytest.mark.parametrize("tokens", [LIGHT, DARK])
def test_the_list_looks_like_the_sidebars(qapp: Any, qtbot: Any, tokens: Any) -> None:
    listing = _listing()
    palette = palette_for(tokens)
    sidebar = Sidebar()
    sidebar.clock = lambda: NOW
    sidebar.setPalette(palette)
    qtbot.addWidget(sidebar)
    sidebar.resize(260, 420)
    sidebar.set_sessions(listing, set())
    sidebar.set_current("p")
    sidebar.show()
    qtbot.waitExposed(sidebar)
    real = sidebar.list.viewport()
    start = TitleList()
    start.setPalette(palette)
    qtbot.addWidget(start)
    start.resize(real.size())
    start.set_listing(listing, NOW)
    start.set_current("p")
    start.show()
    qtbot.waitExposed(start)
    # The list's background is the window colour there (the sidebar sets its Base to it).
    expected, drawn = _image(real), _image(start)
    assert drawn.size() == expected.size()
    differing = sum(
        expected.pixel(x, y) != drawn.pixel(x, y)
        for y in range(expected.height())
        for x in range(expected.width())
    )
    assert differing == 0
    assert start.shown_texts()[:3] == ["Pinned", "Pinned: project notes", "Today"]
    assert start.shown_texts()[5] == "<div> vs <span> in React"  # as text, not as HTML


@pytest.mark.parametrize(
    ("choice", "scheme", "desktop_dark", "expected"),
    [
        ("light", "dark", True, LIGHT),
        ("dark", "light", False, DARK),
        ("system", "dark", False, DARK),  # what the window last painted with
        ("system", "light", True, LIGHT),
        ("system", "", True, DARK),  # never saved: the desktop palette's lightness
        ("system", "", False, LIGHT),
        ("sepia", "", True, DARK),  # an unknown choice follows the system
    ],
)
def test_start_tokens(choice: str, scheme: str, desktop_dark: bool, expected: Any) -> None:
    desktop = palette_for(DARK if desktop_dark else LIGHT)
    assert start_tokens(choice, WindowState(scheme=scheme), desktop) is expected


def test_menu_titles_are_the_main_windows() -> None:
    assert MENU_TITLES == tuple(title for title, _entries in MENUS)


def test_the_roles_the_list_colours_by_are_the_tokens(qapp: Any) -> None:
    """The list colours its text by palette role (no QPen: see ui.start_list); each role it
    uses has the token the sidebar paints that text with."""
    palette = palette_for(DARK)
    assert palette.color(QPalette.ColorRole.PlaceholderText).name() == DARK.muted
    assert palette.color(QPalette.ColorRole.HighlightedText).name() == DARK.selection_text
    assert palette.color(QPalette.ColorRole.Highlight).name() == DARK.selection_bg
    assert palette.color(QPalette.ColorRole.Text).name() == DARK.text
