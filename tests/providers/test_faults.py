"""Every fault the simulator injects, driven through the real provider classes over HTTP.

The provider classes send no special headers, so most faults are chosen with
``sim.enqueue(...)``; a few tests choose them per request with the ``X-Sim-Fault`` header.
"Before output" errors are failed requests (the runtime may retry them); errors after output
cut the step (the runtime saves it as INTERRUPTED).
"""

from __future__ import annotations

import pytest

from app.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderContextLengthError,
    ProviderNotFoundError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from app.messages import StopReason
from app.model import StepEnd, TextDelta
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.providers.coalesce import merge_deltas
from app.simulator import BAD_ARGUMENTS, Fault, Reply, SimToolCall, Simulator

from .conftest import PROTOCOLS, ModelFactory, collect, request

LONG = "one two three four five six seven eight nine ten"

pytestmark = pytest.mark.parametrize("protocol", PROTOCOLS)


async def test_echo_reply(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert result.text == LONG and result.stop is StopReason.END_TURN and result.error is None
    # Text pieces (joined when they arrived together: see app.providers.coalesce), then StepEnd.
    assert [type(e) for e in merge_deltas(result.events)] == [TextDelta, StepEnd]
    assert result.end is not None and result.end.usage is not None
    assert result.end.usage.output_tokens == 10


async def test_scripted_text_and_tools_with_split_arguments(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    args = {"path": "dir/ü.txt", "content": 'line 1\nline 2 "quoted"', "n": [1, 2]}
    sim.enqueue(
        Reply(
            text="Writing.",
            tool_calls=(SimToolCall("write_file", args), SimToolCall("list_directory", {})),
            argument_chunk=1,  # one character per event
        )
    )
    result = await collect(make_model(protocol).stream(request()))
    assert result.text == "Writing." and result.stop is StopReason.TOOL_USE
    assert [(c.name, c.arguments_dict()) for c in result.calls] == [
        ("write_file", args),
        ("list_directory", {}),
    ]
    assert len({c.id for c in result.calls}) == 2


async def test_drop_before_output(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Fault.drop_after(0))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert isinstance(result.error, ProviderConnectionError) and result.error.retryable
    assert not result.output_before_error


async def test_drop_after_output(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Fault.drop_after(5))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert isinstance(result.error, ProviderConnectionError)
    assert result.output_before_error and LONG.startswith(result.text) and result.text != LONG
    assert "closed the connection before the answer was complete" in str(result.error)


async def test_stall_before_output_times_out(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Fault.stall_after(0))
    result = await collect(make_model(protocol, timeout=0.3).stream(request(LONG)))
    assert isinstance(result.error, ProviderTimeoutError) and result.error.retryable
    assert not result.output_before_error


async def test_stall_after_output_times_out(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Fault.stall_after(5))
    result = await collect(make_model(protocol, timeout=0.3).stream(request(LONG)))
    assert isinstance(result.error, ProviderTimeoutError) and result.output_before_error


async def test_rate_limited_with_retry_after(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Fault.http_status(429, retry_after=2.5))
    result = await collect(make_model(protocol).stream(request()))
    err = result.error
    assert isinstance(err, ProviderRateLimitError)
    assert err.retryable and err.retry_after == 2.5 and err.status_code == 429
    assert not result.output_before_error


@pytest.mark.parametrize("status", [500, 502, 503, 529])
async def test_server_errors(
    protocol: str, status: int, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Fault.http_status(status))
    result = await collect(make_model(protocol).stream(request()))
    assert isinstance(result.error, ProviderServerError)
    assert result.error.retryable and result.error.status_code == status
    assert ("overloaded" in str(result.error)) is (status == 529)


async def test_html_error_page(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Fault.html(502))
    result = await collect(make_model(protocol).stream(request()))
    assert isinstance(result.error, ProviderServerError)
    assert "<" not in str(result.error) and "502 Bad Gateway" in str(result.error)


async def test_malformed_sse(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Fault.malformed_after(4))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert isinstance(result.error, ProviderStreamError) and result.output_before_error
    assert "not valid JSON" in str(result.error)


async def test_early_eof_without_end_marker(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Fault.eof_after(4))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert isinstance(result.error, ProviderStreamError) and result.output_before_error


async def test_eof_right_before_end_marker(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    # Everything but the end arrives: still a cut stream, never a quiet end. For OpenAI that
    # is everything but the finish reason (a finish reason then a clean end is complete,
    # since several servers never send [DONE]; see tests/providers/test_quirks_openai.py).
    events = 10 + 1 if protocol == "openai" else 10 + 5
    sim.enqueue(Fault.eof_after(events))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert result.text == LONG and isinstance(result.error, ProviderStreamError)


async def test_length_cut(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Reply(stop="max_output"))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert result.text == LONG and result.stop is StopReason.MAX_OUTPUT


async def test_max_output_tokens_is_honoured(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    result = await collect(make_model(protocol).stream(request(LONG, max_output_tokens=3)))
    assert result.text == "one two three" and result.stop is StopReason.MAX_OUTPUT


async def test_refusal(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Reply(text="I can't help with that.", stop="refusal"))
    result = await collect(make_model(protocol).stream(request()))
    assert result.stop is StopReason.REFUSAL


async def test_context_full_error(protocol: str, sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Fault.context_full())
    result = await collect(make_model(protocol).stream(request()))
    assert isinstance(result.error, ProviderContextLengthError)
    assert not result.error.retryable and not result.output_before_error


async def test_invalid_tool_arguments_never_become_a_call(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Reply(text="", tool_calls=(SimToolCall("write_file", BAD_ARGUMENTS),)))
    result = await collect(make_model(protocol).stream(request()))
    assert isinstance(result.error, ProviderStreamError) and result.calls == []
    assert not result.output_before_error  # a failed request: retried, tool never run
    sim.enqueue(Reply(text="Saving.", tool_calls=(SimToolCall("write_file", BAD_ARGUMENTS),)))
    result = await collect(make_model(protocol).stream(request()))
    assert isinstance(result.error, ProviderStreamError) and result.calls == []
    assert result.output_before_error  # a cut step: INTERRUPTED, its calls are not kept


async def test_unknown_finish_reason_is_kept_raw(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Reply(text="Hm.", stop="galaxy_brain"))
    result = await collect(make_model(protocol).stream(request()))
    assert result.stop == "galaxy_brain"


async def test_error_event_after_output(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Fault.error_event_after(5, "overloaded_error"))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert isinstance(result.error, ProviderServerError) and result.output_before_error
    assert "overloaded" in str(result.error)


async def test_error_event_before_output(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Fault.error_event_after(0, "overloaded_error"))
    result = await collect(make_model(protocol).stream(request(LONG)))
    assert isinstance(result.error, ProviderServerError) and result.error.retryable
    assert not result.output_before_error


async def test_fault_chosen_per_request_by_header(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Reply(text="queued"))
    model = make_model(protocol, headers={"X-Sim-Fault": "status=503"})
    result = await collect(model.stream(request()))
    assert isinstance(result.error, ProviderServerError) and result.error.status_code == 503
    assert sim.pending == 1  # the header wins and leaves the queue alone
    result = await collect(make_model(protocol).stream(request()))
    assert result.text == "queued" and sim.pending == 0


async def test_wrong_key_is_an_auth_error(protocol: str, make_model: ModelFactory) -> None:
    async with Simulator(api_key="sk-right-0000000000") as locked:
        model: OpenAICompatibleModel | AnthropicModel
        if protocol == "openai":
            model = OpenAICompatibleModel(locked.openai_base_url, "m", "sk-wrong-1111111111")
        else:
            model = AnthropicModel(locked.base_url, "m", "sk-wrong-1111111111")
        try:
            result = await collect(model.stream(request()))
            assert isinstance(result.error, ProviderAuthError) and not result.error.retryable
            assert "Check the API key" in str(result.error)
        finally:
            await model.aclose()


async def test_wrong_base_url_is_not_found(protocol: str, sim: Simulator) -> None:
    # A common mistake: the OpenAI base URL without /v1; for Anthropic (which accepts the
    # root with or without /v1, issue 13) a path the server does not have.
    model: OpenAICompatibleModel | AnthropicModel
    if protocol == "openai":
        model = OpenAICompatibleModel(sim.base_url, "sim-echo")
    else:
        model = AnthropicModel(sim.base_url + "/anthropic", "sim-claude")
    try:
        result = await collect(model.stream(request()))
        assert isinstance(result.error, ProviderNotFoundError)
        assert "base URL" in str(result.error) and not result.error.retryable
    finally:
        await model.aclose()


async def test_connection_refused(protocol: str) -> None:
    async with Simulator() as gone:
        url = gone.base_url
    model: OpenAICompatibleModel | AnthropicModel
    if protocol == "openai":
        model = OpenAICompatibleModel(url + "/v1", "m", timeout=2.0)
    else:
        model = AnthropicModel(url, "m", timeout=2.0)
    try:
        result = await collect(model.stream(request()))
        assert isinstance(result.error, ProviderConnectionError) and result.error.retryable
        assert "Could not connect" in str(result.error)
        assert isinstance(result.error.__cause__, Exception)  # converted with `from err`
    finally:
        await model.aclose()
