""":func:`app.providers.sse.event_json`, the one JSON reader both stream parsers use."""

from __future__ import annotations

from typing import Any

import pytest
from httpx_sse import ServerSentEvent

from app.errors import ProviderStreamError
from app.providers.anthropic import AnthropicStreamParser
from app.providers.openai import OpenAIStreamParser
from app.providers.sse import event_json


@pytest.mark.parametrize(
    ("data", "expected"),
    [('{"a": 1}', {"a": 1}), ("[1, 2]", [1, 2]), ('"s"', "s"), ("null", None), ("3", 3)],
)
def test_event_json_reads_json(data: str, expected: Any) -> None:
    assert event_json(data, "a chunk") == expected


@pytest.mark.parametrize(
    ("data", "sender", "start"),
    [
        ("{", "The provider", "The provider sent a chunk that is not valid JSON"),
        ("[" * 100_000, "Anthropic", "Anthropic sent a chunk that is not valid JSON"),
        ("", "X", "X sent a chunk"),
    ],
)
def test_event_json_names_what_and_who(data: str, sender: str, start: str) -> None:
    with pytest.raises(ProviderStreamError) as caught:
        event_json(data, "a chunk", sender=sender)
    assert str(caught.value).startswith(start)
    assert "Try again" in str(caught.value)


@pytest.mark.parametrize(
    ("parser", "event", "start"),
    [
        (
            OpenAIStreamParser(),
            ServerSentEvent(data="{oops"),
            "The provider sent a stream chunk that is not valid JSON",
        ),
        (
            OpenAIStreamParser(),
            ServerSentEvent(event="error", data="{oops"),
            "The provider sent an error event that is not valid JSON",
        ),
        (
            AnthropicStreamParser(),
            ServerSentEvent(event="message_start", data="{oops"),
            "Anthropic sent a 'message_start' event that is not valid JSON",
        ),
    ],
)
def test_both_parsers_report_bad_json_through_it(
    parser: Any, event: ServerSentEvent, start: str
) -> None:
    with pytest.raises(ProviderStreamError, match="^" + start):
        parser.feed(event)
