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
