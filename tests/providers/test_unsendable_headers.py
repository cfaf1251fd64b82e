"""A key pasted with a character HTTP headers cannot carry (a typographic quote, an ellipsis,
a non-breaking space) is a clear, typed error before anything is sent — never a raw
``UnicodeEncodeError`` from deep inside httpx, and never quoting the key."""

from __future__ import annotations

import pytest

from app import Agent, AgentRunConfig, RetryPolicy, SQLiteSessionExtension
from app.errors import ProviderAuthError, ProviderBadRequestError
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.simulator import Simulator

KEY = "sk-test-1234567890\u2026"  # ends in an ellipsis, as a copied, truncated key does


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_a_key_with_a_character_http_cannot_send_is_a_clear_error(
    tmp_path, protocol: str
) -> None:
    async with Simulator() as sim:
        model = (
            OpenAICompatibleModel(sim.openai_base_url, "sim-echo", api_key=KEY)
            if protocol == "openai"
            else AnthropicModel(sim.base_url, "sim-echo", api_key=KEY)
        )
        storage = SQLiteSessionExtension(tmp_path / "c.sqlite")
        agent = await Agent.create(
            model,
            config=AgentRunConfig("s", retry=RetryPolicy(max_attempts=3, base_delay=0.01)),
            extensions=[storage],
        )
        try:
            with pytest.raises(ProviderAuthError) as caught:
                await agent.run("hello")
            assert "Paste it again in Settings" in str(caught.value)
            assert "sk-test" not in str(caught.value) and not caught.value.retryable
            assert sim.requests == []  # nothing was sent, and nothing retried
            history = await storage.storage.load("s")
            assert [type(m).__name__ for m in history] == ["UserMessage"]
        finally:
            await storage.storage.close()
            await model.aclose()


async def test_a_header_with_a_character_http_cannot_send_is_a_clear_error() -> None:
    async with Simulator() as sim:
        model = OpenAICompatibleModel(
            sim.openai_base_url, "sim-echo", headers={"X-Title": "Café ☕"}
        )
        try:
            with pytest.raises(ProviderBadRequestError, match="X-Title"):
                await model.list_models()
        finally:
            await model.aclose()
