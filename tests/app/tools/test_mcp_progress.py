"""Progress reports of MCP calls in words (:mod:`app.tools.mcp_progress`); the reports of a real
server moving a call's deadline are in ``tests/app/services/test_mcp_servers.py``."""

from __future__ import annotations

import pytest

from app.tools.mcp_progress import McpProgress, progress_words


@pytest.mark.parametrize(
    ("report", "words"),
    [
        (McpProgress("c", "files__copy", 40, 100), "files__copy: 40% (40 of 100)"),
        (McpProgress("c", "t", 1, 3, "step 1"), "t: 33% (1 of 3) — step 1"),
        (McpProgress("c", "t", 7), "t: 7 done"),
        (McpProgress("c", "t", 0.5, 0), "t: 0.5 done"),
        (McpProgress("c", "t", 150, 100), "t: 100% (150 of 100)"),
        (McpProgress("c", "t", 2, None, " two\nlines "), "t: 2 done — two lines"),
        (McpProgress("c", "t", 1, None, "x" * 500), "t: 1 done — " + "x" * 200),
    ],
)
def test_progress_in_words(report: McpProgress, words: str) -> None:
    assert progress_words(report) == words
