"""A narrow window (half a laptop screen, a phone-width 480 px): the conversation gets the
whole width — the sidebar folds away and comes back when the window is wide again, and no
label (the provider's URL) holds the window wider than the person asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ui.helpers import close_window, open_window, until


def test_a_480_px_window_folds_the_sidebar_and_a_wide_one_brings_it_back(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> None:
        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            window.provider_label.setText("OpenAI-compatible · https://" + "x" * 200 + "/v1")
            window.resize(480, 800)
            await until(lambda: window.splitter.sizes()[0] == 0, what="the sidebar folded")
            assert window.width() <= 500, window.width()  # was held at 886 px
            assert window.splitter.sizes()[1] >= window.width() - 10
            window.resize(1400, 900)
            await until(lambda: window.splitter.sizes()[0] > 0, what="the sidebar back")
            assert window.splitter.sizes()[0] == 260
        finally:
            await close_window(window)

    run(scenario())


def test_find_in_a_narrow_window_shows_the_folded_sidebar(run: Any, tmp_path: Path) -> None:
    """Ctrl+F at 480 px: the folded sidebar comes back with its search field focused (the
    keystrokes went into the hidden field before)."""

    async def scenario() -> None:
        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            window.resize(480, 800)
            await until(lambda: window.splitter.sizes()[0] == 0, what="the sidebar folded")
            window.activateWindow()
            window.focus_search()
            await until(lambda: window.splitter.sizes()[0] > 0, what="the sidebar shown")
            assert window.sidebar.isVisible() and window.sidebar_action.isChecked()
            await until(lambda: window.sidebar.search.hasFocus(), what="the search focused")
        finally:
            await close_window(window)

    run(scenario())


def test_the_sidebar_shown_for_a_search_folds_again_when_the_focus_moves_on(
    run: Any, tmp_path: Path
) -> None:
    """At 480 px the sidebar Ctrl+F brought back is for the search: Esc in the empty field
    (focus to the composer) or moving on in the window folds it again; in a wide window, and
    when the person showed it with ☰, it stays."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    async def scenario() -> None:
        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            window.resize(480, 800)
            await until(lambda: window.splitter.sizes()[0] == 0, what="the sidebar folded")
            window.activateWindow()
            window.focus_search()
            await until(lambda: window.sidebar.search.hasFocus(), what="the search focused")
            QTest.keyClick(window.sidebar.search, Qt.Key.Key_Escape)  # empty field: done
            await until(lambda: window.composer.edit.hasFocus(), what="the composer focused")
            await until(lambda: not window.sidebar.isVisible(), what="folded again")
            assert not window.sidebar_action.isChecked()
            # Moving on by other means (a click into the composer) folds it too.
            window.focus_search()
            await until(lambda: window.sidebar.search.hasFocus(), what="the search focused")
            QTest.keyClicks(window.sidebar.search, "word")
            QTest.keyClick(window.sidebar.search, Qt.Key.Key_Escape)  # clears; stays shown
            assert window.sidebar.search.text() == "" and window.sidebar.isVisible()
            window.composer.edit.setFocus()
            await until(lambda: not window.sidebar.isVisible(), what="folded on moving on")
            # Shown by the person (☰): moving on leaves it.
            window.show_sidebar(True)
            window.sidebar.search.setFocus()
            window.composer.edit.setFocus()
            await until(lambda: window.composer.edit.hasFocus(), what="the composer focused")
            assert window.sidebar.isVisible()
            # Wide: Find shows nothing new, and moving on folds nothing.
            window.resize(1400, 900)
            window.focus_search()
            window.composer.edit.setFocus()
            await until(lambda: window.composer.edit.hasFocus(), what="the composer focused")
            assert window.sidebar.isVisible()
        finally:
            await close_window(window)

    run(scenario())


def test_a_window_closed_narrow_starts_with_the_sidebar_folded(run: Any, tmp_path: Path) -> None:
    """Seen under Xvfb: reopened at its saved 480 px, the window showed the sidebar (the fold
    only ran on a resize, and asked whether the sidebar was visible before the window was)."""

    async def scenario() -> None:
        window = await open_window(tmp_path, "http://127.0.0.1:9/v1")
        try:
            window.resize(480, 800)
            await until(lambda: window.splitter.sizes()[0] == 0, what="the sidebar folded")
        finally:
            await close_window(window)  # saves the place: 480 px, the sidebar the person's
        from tests.ui.helpers import make_services
        from ui.window import MainWindow

        window = MainWindow(await make_services(tmp_path, "http://127.0.0.1:9/v1"))
        window.show()  # (open_window would resize it to 1000 px)
        await window.start()
        try:
            assert window.width() <= 500
            assert window.sidebar.isHidden() and not window.sidebar_action.isChecked()
            window.resize(1400, 900)  # wide again: the person's sidebar comes back
            await until(lambda: window.sidebar.isVisible(), what="the sidebar back")
        finally:
            await close_window(window)

    run(scenario())
