"""The window starts on a settings file of the wrong shape and says so (issue 11, item 11)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.ui.helpers import close_window, open_window


@pytest.mark.parametrize(
    "content",
    [
        '{"provider_kind": "simulator", "recent_models": 5}',
        '{"model": ' + "9" * 400 + "}",
        '{"recent_models": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["recent_models is 5", "400-digit model", "100k-deep nesting"],
)
def test_the_window_starts_with_defaults_and_says_why(
    run: Callable[..., Any], tmp_path: Path, content: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(content)

    async def scenario() -> None:
        window = await open_window(data, None)
        try:
            message = window.statusBar().currentMessage()
            assert "defaults are used" in message and "settings.unreadable-" in message
            assert window.stack.currentWidget() is window.welcome  # defaults: not configured
        finally:
            await close_window(window)

    run(scenario())
    assert [p.read_text() for p in data.glob("settings.unreadable-*.json")] == [content]
