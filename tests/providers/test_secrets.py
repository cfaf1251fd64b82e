"""An API key never appears in a repr, an error message or a log line."""

from __future__ import annotations

import logging

import pytest

from app.errors import ProviderError
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.simulator import Fault, Simulator

from .conftest import PROTOCOLS, collect, request

KEY = "sk-proj-Zq8XyT3BlbkFJSECRETSECRET42"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_key_never_leaks(
    protocol: str, sim: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, httpx and httpcore included
    model: OpenAICompatibleModel | AnthropicModel
    if protocol == "openai":
        model = OpenAICompatibleModel(sim.openai_base_url, "sim-echo", KEY, timeout=0.5)
    else:
        model = AnthropicModel(sim.base_url, "sim-claude", KEY, timeout=0.5)
    assert KEY not in repr(model) and "key=set" in repr(model)
    assert KEY not in str(vars(model))

    errors: list[ProviderError] = []
    # A provider that echoes the key back in its error text, then every other failure path.
    sim.enqueue(
        Fault.http_status(401, message=f"Incorrect API key provided: {KEY}."),
        Fault.http_status(400, message=f"bad request for key {KEY[:-4]}…{KEY[-4:]}"),
        Fault.http_status(429, retry_after=1),
        Fault.html(502),
        Fault.drop_after(3),
        Fault.stall_after(2),
        Fault.error_event_after(3, "authentication_error"),
        Fault.malformed_after(3),
    )
    while sim.pending:
        result = await collect(model.stream(request()))
        assert result.error is not None
        errors.append(result.error)
    await model.list_models()
    await model.aclose()

    # The key did reach the server, so the checks below are meaningful.
    sent = sim.model_requests()[-1].headers
    assert KEY in (sent.get("authorization", "") + sent.get("x-api-key", ""))
    for err in errors:
        for text in (str(err), repr(err), str(err.args)):
            assert KEY not in text and "SECRETSECRET" not in text
    assert KEY not in caplog.text and "SECRETSECRET" not in caplog.text
    assert KEY not in repr(sim.requests)


def _longest_key_piece(text: str, key: str) -> int:
    text, key = text.lower(), key.lower()
    return max(
        (n for i in range(len(key)) for n in range(1, len(key) - i + 1) if key[i : i + n] in text),
        default=0,
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_key_echoed_at_the_clip_boundary_or_in_another_case_never_leaks(
    protocol: str,
    sim: Simulator,
) -> None:
    """Real HTTP errors from the simulator whose message echoes the key where the 300-character
    clip cuts it, upper-cased, and in pieces: no 8-character piece of it reaches the error."""
    key = "ant_live_7Hq2Wm9Xr4Tz8Lp1Vc6Nb3Kd5Fj0Gs"  # matches no known key pattern
    model: OpenAICompatibleModel | AnthropicModel
    if protocol == "openai":
        model = OpenAICompatibleModel(sim.openai_base_url, "sim-echo", key, timeout=5)
    else:
        model = AnthropicModel(sim.base_url, "sim-claude", key, timeout=5)
    pad = "The credentials sent with this request were rejected by the gateway. " * 5
    messages = [
        pad[:280] + key + " is not a valid key.",  # cut by the clip: its start would leak
        f"Incorrect API key provided: {key.upper()}.",
        f"Key {key[:14]}… (ending {key[-10:]}) was revoked.",
    ]
    sim.enqueue(*(Fault.http_status(401, message=m) for m in messages))
    errors: list[ProviderError] = []
    try:
        while sim.pending:
            result = await collect(model.stream(request()))
            assert result.error is not None
            errors.append(result.error)
    finally:
        await model.aclose()
    assert len(errors) == len(messages)
    for err in errors:
        assert "Check the API key" in str(err)  # still a message a person can act on
        for text in (str(err), repr(err)):
            assert _longest_key_piece(text, key) < 8, text
