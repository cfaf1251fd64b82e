"""What the providers send (bodies, headers), model listing, and cross-provider resume."""

from __future__ import annotations

import asyncio
import re

import pytest

from app.errors import ProviderAuthError, ProviderConnectionError
from app.messages import AssistantMessage, InternalMessage, Message, ToolMessage, UserMessage
from app.model import ModelRequest, ToolSpec
from app.providers import AnthropicModel, OpenAICompatibleModel
from app.simulator import Reply, SimToolCall, Simulator

from .conftest import BOUND, ModelFactory, collect, request

SPEC = ToolSpec(
    "read_file",
    "Read a text file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


async def test_openai_request(sim: Simulator, make_model: ModelFactory) -> None:
    model = make_model("openai", api_key="sk-test-0123456789", headers={"X-Client": "continuum"})
    await collect(
        model.stream(request("hi", tools=[SPEC], system_prompt="Be brief.", max_output_tokens=50))
    )
    sent = sim.model_requests()[-1]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test-0123456789"
    assert sent.headers["x-client"] == "continuum"
    assert sent.headers["accept"] == "text/event-stream"
    body = sent.json()
    assert body["model"] == "sim-echo" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 50
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["tools"][0]["function"]["name"] == "read_file"


async def test_openai_options_for_picky_servers(sim: Simulator, make_model: ModelFactory) -> None:
    model = make_model("openai", max_tokens_field="max_completion_tokens", include_usage=False)
    result = await collect(model.stream(request("hi there", max_output_tokens=1)))
    assert result.text == "hi" and result.end is not None and result.end.usage is None
    body = sim.model_requests()[-1].json()
    assert body["max_completion_tokens"] == 1 and "stream_options" not in body


async def test_anthropic_request(sim: Simulator, make_model: ModelFactory) -> None:
    model = make_model("anthropic", api_key="sk-ant-0123456789", max_tokens=1234)
    await collect(model.stream(request("hi", tools=[SPEC], system_prompt="Be brief.")))
    sent = sim.model_requests()[-1]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-0123456789"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    body = sent.json()
    assert body["max_tokens"] == 1234 and body["system"] == "Be brief." and body["stream"]
    assert body["tools"][0]["input_schema"]["required"] == ["path"]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


@pytest.mark.parametrize(("first", "second"), [("openai", "anthropic"), ("anthropic", "openai")])
async def test_conversation_moves_between_providers(
    first: str, second: str, sim: Simulator, make_model: ModelFactory
) -> None:
    """A tool step taken on one provider is accepted by the other when the session resumes."""
    odd_id = "functions.read_file:0"  # what some OpenAI-compatible servers send
    sim.enqueue(Reply(text="Reading.", tool_calls=(SimToolCall("read_file", {"path": "a"},
                                                                id=odd_id),)))  # fmt: skip
    step = await collect(make_model(first).stream(request("read a", tools=[SPEC])))
    (call,) = step.calls
    assert call.id == odd_id  # kept as received; made portable only when sent
    history: list[Message] = [
        UserMessage("read a"),
        AssistantMessage(step.text, (call,), step.stop),
        ToolMessage(call.id, call.name, "contents of a"),
        InternalMessage("Continue."),
    ]
    result = await collect(make_model(second).stream(ModelRequest(history, tools=[SPEC])))
    assert result.error is None and result.text == "Continue."
    body = sim.model_requests()[-1].json()
    if second == "anthropic":
        use = body["messages"][1]["content"][1]
        answer = body["messages"][2]["content"][0]
        assert use["type"] == "tool_use" and answer["type"] == "tool_result"
        assert use["id"] == answer["tool_use_id"]
        assert re.fullmatch(r"[a-zA-Z0-9_-]+", use["id"])
        assert body["messages"][2]["content"][1] == {"type": "text", "text": "Continue."}
    else:
        use = body["messages"][1]["tool_calls"][0]
        answer = body["messages"][2]
        assert use["id"] == answer["tool_call_id"] and len(use["id"]) <= 40
        assert answer["content"] == "contents of a"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_list_models_and_check_connection(
    protocol: str, sim: Simulator, make_model: ModelFactory
) -> None:
    model = make_model(protocol)
    assert await model.list_models() == ["sim-echo", "sim-claude"]
    await model.check_connection()
    assert sim.requests[-1].path == "/v1/models" and sim.requests[-1].method == "GET"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_check_connection_raises_typed_errors(protocol: str) -> None:
    async with Simulator(api_key="sk-right-0000000000") as locked:
        model: OpenAICompatibleModel | AnthropicModel
        if protocol == "openai":
            model = OpenAICompatibleModel(locked.openai_base_url, "m", "sk-wrong-000000000")
        else:
            model = AnthropicModel(locked.base_url, "m", "sk-wrong-000000000")
        with pytest.raises(ProviderAuthError, match="Check the API key"):
            await model.check_connection()
        await model.aclose()
    with pytest.raises(ProviderConnectionError, match="Could not connect"):
        await model.check_connection()  # the simulator is gone now
    await model.aclose()


async def test_one_client_per_instance_reused(sim: Simulator, make_model: ModelFactory) -> None:
    model = make_model("openai")
    for _ in range(3):
        await collect(model.stream(request()))
    client = model._client
    await collect(model.stream(request()))
    assert model._client is client and client is not None
    await model.aclose()
    await model.aclose()  # idempotent
    result = await collect(model.stream(request("again")))  # usable after aclose
    assert result.text == "again"


async def test_stopping_early_releases_the_connection(
    sim: Simulator, make_model: ModelFactory
) -> None:
    sim.enqueue(Reply(tokens=100_000))
    model = make_model("anthropic")
    stream = model.stream(request())
    seen = 0
    async for _ in stream:  # the consumer walks away after a few deltas (e.g. Stop pressed)
        seen += 1
        if seen == 3:
            break
    await stream.aclose()
    result = await collect(model.stream(request("next")))
    assert result.text == "next"
    await model.aclose()
    async with asyncio.timeout(BOUND):
        await sim.wait_idle()
    assert sim.open_connections == 0


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="http"):
        OpenAICompatibleModel("localhost:11434/v1", "llama3")
    with pytest.raises(ValueError, match="model"):
        AnthropicModel("https://api.anthropic.com", "")
    with pytest.raises(ValueError, match="max_tokens"):
        AnthropicModel("https://api.anthropic.com", "claude", max_tokens=0)
    model = OpenAICompatibleModel("http://localhost:11434/v1/", "llama3")
    assert model.base_url == "http://localhost:11434/v1" and model.name == "llama3"
