"""Recorded SSE transcripts fed through the parsers, then replayed by the live simulator.

Each transcript has one expected outcome: the text, tool calls and stop reason of a step that
ended normally, or the error type and whether output had started before it (which decides
between a failed request and a cut, ``INTERRUPTED`` step in the runtime).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from app.errors import (
    ProviderContextLengthError,
    ProviderError,
    ProviderServerError,
    ProviderStreamError,
)
from app.messages import StopReason, Usage
from app.providers.coalesce import merge_deltas
from app.simulator import Reply, Simulator

from .conftest import FIXTURES, ModelFactory, collect, parse_fixture, request


@dataclass(frozen=True)
class Expect:
    text: str = ""
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    stop: StopReason | str | None = None
    error: type[ProviderError] | None = None
    usage: Usage | None = None


CASES: dict[str, Expect] = {
    "openai_text.sse": Expect(
        "Hello! How can I help — ünïcödé 🙂?", stop=StopReason.END_TURN, usage=Usage(19, 10)
    ),
    "openai_tool_calls_split.sse": Expect(
        calls=(("read_file", {"path": "notes.txt"}), ("list_directory", {"path": "."})),
        stop=StopReason.TOOL_USE,
    ),
    # Ollama: a tool call with finish_reason "stop"; the runtime treats calls + END_TURN as use
    "openai_ollama_tool_stop.sse": Expect(
        calls=(("get_weather", {"city": "Paris"}),), stop=StopReason.END_TURN
    ),
    "openai_truncated_no_done.sse": Expect("The answer is forty", error=ProviderStreamError),
    # a finish reason and a clean end without [DONE] is complete (TGI < 2.2 and others)
    "openai_finish_without_done.sse": Expect("Done", stop=StopReason.END_TURN),
    "openai_partial_json_eof.sse": Expect("Partial", error=ProviderStreamError),
    "openai_partial_json_midstream.sse": Expect("Partial", error=ProviderStreamError),
    "openai_error_midstream.sse": Expect("Let me", error=ProviderServerError),
    "openai_error_first.sse": Expect(error=ProviderContextLengthError),
    "openai_bad_tool_args.sse": Expect(error=ProviderStreamError),  # before output: retryable
    "openai_length_cuts_tool.sse": Expect("Writing the file now.", stop=StopReason.MAX_OUTPUT),
    "openai_unknown_finish.sse": Expect("Hm", stop="abort"),
    "openai_refusal.sse": Expect("I'm sorry, I can't help with that.", stop=StopReason.REFUSAL),
    "openai_content_filter.sse": Expect("Here is", stop=StopReason.REFUSAL),
    "anthropic_text.sse": Expect(
        "Hello! Ünïcödé 🙂", stop=StopReason.END_TURN, usage=Usage(35, 15)
    ),
    "anthropic_tool_use.sse": Expect(
        "Let me check.",
        calls=(
            ("get_weather", {"location": "San Francisco, CA", "unit": "fahrenheit"}),
            ("get_time", {}),
        ),
        stop=StopReason.TOOL_USE,
    ),
    "anthropic_thinking.sse": Expect("27 * 453 = 12,231", stop=StopReason.END_TURN),
    "anthropic_stop_pause_turn.sse": Expect("Some text", stop=StopReason.PAUSED),
    "anthropic_stop_refusal.sse": Expect("Some text", stop=StopReason.REFUSAL),
    "anthropic_stop_model_context_window_exceeded.sse": Expect(
        "Some text", stop=StopReason.CONTEXT_FULL
    ),
    "anthropic_stop_max_tokens.sse": Expect("Some text", stop=StopReason.MAX_OUTPUT),
    "anthropic_stop_stop_sequence.sse": Expect("Some text", stop=StopReason.END_TURN),
    "anthropic_stop_brand_new_reason.sse": Expect("Some text", stop="brand_new_reason"),
    "anthropic_max_tokens_open_tool.sse": Expect(stop=StopReason.MAX_OUTPUT),
    "anthropic_overloaded_midstream.sse": Expect("Part of an", error=ProviderServerError),
    "anthropic_overloaded_first.sse": Expect(error=ProviderServerError),
    "anthropic_truncated.sse": Expect("Cut off in the", error=ProviderStreamError),
    "anthropic_partial_json_eof.sse": Expect("Half", error=ProviderStreamError),
    "anthropic_bad_tool_json.sse": Expect(error=ProviderStreamError),
}


def test_every_fixture_has_a_case() -> None:
    assert {p.name for p in FIXTURES.glob("*.sse")} == set(CASES)


def _check(result: Any, expect: Expect) -> None:
    assert result.text == expect.text
    assert [(c.name, c.arguments_dict()) for c in result.calls] == list(expect.calls)
    if expect.error is not None:
        assert type(result.error) is expect.error, result.error
        # output before the error <=> the runtime saves the partial as INTERRUPTED
        assert result.output_before_error == bool(expect.text or expect.calls)
        assert result.end is None
    else:
        assert result.error is None
        assert result.stop == expect.stop
        if expect.usage is not None:
            assert result.end.usage == expect.usage


@pytest.mark.parametrize("name", sorted(CASES))
async def test_fixture_through_parser(name: str) -> None:
    _check(await parse_fixture(name), CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
async def test_fixture_replayed_over_http(
    name: str, sim: Simulator, make_model: ModelFactory
) -> None:
    """The same bytes through a real socket give the same step as the parser alone (the live
    stream may join text pieces that arrived together: the same text, in fewer pieces)."""
    protocol = "openai" if name.startswith("openai") else "anthropic"
    sim.enqueue(Reply(raw=(FIXTURES / name).read_text(encoding="utf-8")))
    live = await collect(make_model(protocol).stream(request()))
    offline = await parse_fixture(name)
    _check(live, CASES[name])
    assert merge_deltas(live.events) == merge_deltas(offline.events)
    assert type(live.error) is type(offline.error)


def test_stream_errors_before_output_are_retryable() -> None:
    # Failed requests the runtime should try again: a cut or garbled stream, overload.
    assert ProviderStreamError("x").retryable and ProviderServerError("x").retryable
    assert not ProviderContextLengthError("x").retryable
