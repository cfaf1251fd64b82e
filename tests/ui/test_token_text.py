"""The words about tokens (ui/token_text.py) and the answer footer that shows them: tables."""

from __future__ import annotations

import pytest

from app import AssistantMessage, StopReason, Usage
from ui.token_text import WARN_AT, answer_tokens, compact_tokens, context_reading, percent
from ui.transcript.render import footer_html
from ui.transcript.rows import rows_from_history


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1k"),
        (1204, "1.2k"),
        (12_345, "12.3k"),
        (128_000, "128k"),
        (999_949, "999.9k"),
        (999_950, "1M"),
        (1_047_576, "1M"),
        (1_500_000, "1.5M"),
    ],
)
def test_compact_tokens(count: int, text: str) -> None:
    assert compact_tokens(count) == text


@pytest.mark.parametrize(
    ("usage", "text", "tooltip"),
    [
        ((1204, 312), "312 tokens", "1,204 in · 312 out"),
        ((5, 1), "1 token", "5 in · 1 out"),
        ((0, 0), "0 tokens", "0 in · 0 out"),
        ((12_000, 1_500), "1,500 tokens", "12,000 in · 1,500 out"),
        ((None, 312), "312 tokens", "input not reported by the provider · 312 out"),
        ((1204, None), "1,204 in", "1,204 in · output not reported by the provider"),
        ((None, None), "", ""),
    ],
)
def test_answer_tokens(usage: tuple[int | None, int | None], text: str, tooltip: str) -> None:
    shown = answer_tokens(*usage)
    assert (shown.text, shown.tooltip) == (text, tooltip)


@pytest.mark.parametrize(
    ("fraction", "text"),
    [(0.0, "0 %"), (0.001, "<1 %"), (0.1, "10 %"), (0.849, "85 %"), (1.04, "104 %")],
)
def test_percent(fraction: float, text: str) -> None:
    assert percent(fraction) == text


@pytest.mark.parametrize(
    ("used", "limit", "text", "fraction", "warning"),
    [
        (None, 128_000, None, None, False),  # no usage reported: nothing shown, never a guess
        (None, None, None, None, False),
        (12_345, None, "12.3k tokens", None, False),  # limit unknown: no bar
        (12_345, 0, "12.3k tokens", None, False),  # a server that says 0 means "unknown"
        (12_800, 128_000, "12.8k / 128k", 0.1, False),
        (102_399, 128_000, "102.4k / 128k", 102_399 / 128_000, False),
        (102_400, 128_000, "102.4k / 128k", WARN_AT, True),  # exactly 80 %: warns
        (4_200, 4_096, "4.2k / 4.1k", 4_200 / 4_096, True),  # over the limit
    ],
)
def test_context_reading(
    used: int | None, limit: int | None, text: str | None, fraction: float | None, warning: bool
) -> None:
    reading = context_reading(used, limit, "reported by the server")
    if text is None:
        assert reading is None
        return
    assert reading is not None
    assert (reading.text, reading.fraction, reading.warning) == (text, fraction, warning)
    assert f"{used:,} tokens" in reading.tooltip  # the exact count is in the tooltip
    if fraction is None:
        assert "not known" in reading.tooltip and reading.hint == ""
    else:
        assert f"{limit:,} tokens (reported by the server)" in reading.tooltip
    if warning:
        assert reading.hint == (
            f"The context is {percent(used / (limit or 1))} full: start a new conversation "
            "or remove attachments"
        )
    else:
        assert reading.hint == ""


def test_hint_at_85_percent() -> None:
    reading = context_reading(85_000, 100_000)
    assert reading is not None
    assert reading.hint == (
        "The context is 85 % full: start a new conversation or remove attachments"
    )


def _answer_row(message: AssistantMessage) -> str:
    (item,) = rows_from_history([message]).items
    return footer_html(item, "#777")


@pytest.mark.parametrize(
    ("message", "footer"),
    [
        (
            AssistantMessage("Hi", usage=Usage(1204, 312)),
            '<span style="color:#777;">312 tokens</span>',
        ),
        (AssistantMessage("Hi"), ""),  # no usage reported: nothing, never an estimate
        (AssistantMessage("Hi", usage=Usage(None, None)), ""),
        (
            AssistantMessage("Hi", stop_reason=StopReason.MAX_OUTPUT, usage=Usage(10, 4096)),
            "⚠",  # the stop reason first, then the tokens
        ),
    ],
)
def test_answer_footer(message: AssistantMessage, footer: str) -> None:
    html = _answer_row(message)
    if footer == "⚠":
        assert html.startswith("<i>⚠") and html.endswith("4,096 tokens</span>")
        assert " · " in html
    else:
        assert html == footer
