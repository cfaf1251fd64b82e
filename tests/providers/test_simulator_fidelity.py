"""The simulator answers the way the real servers do (issue 13, "simulator fidelity").

Real HTTP on 127.0.0.1 against :class:`app.simulator.Simulator`; each test reads the bytes the
simulator sends (not what the app makes of them): OpenAI refusals in ``delta.refusal``, Azure's
``content_filter``, tool-only replies with ``content: null``, Anthropic-shaped errors on
Anthropic routes, non-ASCII ``X-Sim-Fault`` values, usage that counts tool arguments, whole JSON
answers to ``"stream": false``, and reasoning / signed thinking on request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.simulator import Reply, SimToolCall, Simulator, fault_header_value

from .conftest import BOUND, collect, request

OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "k"}


@pytest.fixture
async def client(sim: Simulator) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sim.base_url, timeout=BOUND) as http:
        yield http


def body(text: str = "hello", **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], "stream": True,
            **extra}  # fmt: skip


def data_of(response: httpx.Response) -> list[Any]:
    """The JSON of each ``data:`` line (``[DONE]`` kept as the string)."""
    out: list[Any] = []
    for line in response.text.splitlines():
        if line.startswith("data: "):
            payload = line.removeprefix("data: ")
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def deltas(response: httpx.Response) -> list[dict[str, Any]]:
    return [c["choices"][0]["delta"] for c in data_of(response)
            if isinstance(c, dict) and c.get("choices")]  # fmt: skip


def finishes(response: httpx.Response) -> list[Any]:
    return [c["choices"][0]["finish_reason"] for c in data_of(response)
            if isinstance(c, dict) and c.get("choices")]  # fmt: skip


# --- OpenAI refusals and Azure's content filter ---------------------------------------------


async def test_openai_refusal_is_delta_refusal_with_finish_stop(
    sim: Simulator, client: httpx.AsyncClient
) -> None:
    sim.enqueue(Reply(text="I can't help with that.", stop="refusal"))
    response = await client.post(OPENAI, json=body())
    pieces = deltas(response)
    assert pieces[0] == {"role": "assistant", "content": None, "refusal": ""}
    assert "".join(d.get("refusal", "") for d in pieces) == "I can't help with that."
    assert not any(d.get("content") for d in pieces)
    assert finishes(response)[-1] == "stop"


async def test_refusal_still_reads_as_a_refusal(sim: Simulator, make_model: Any) -> None:
    sim.enqueue(Reply(text="No.", stop="refusal"))
    result = await collect(make_model("openai").stream(request()))
    assert result.stop == "refusal" and result.text == "No."


async def test_azure_content_filter(sim: Simulator, client: httpx.AsyncClient) -> None:
    response = await client.post(OPENAI, json=body("a b c"), headers={"X-Sim-Fault":
                                                                     "content_filter"})  # fmt: skip
    chunks = data_of(response)
    first = chunks[0]
    assert first["choices"] == [] and first["prompt_filter_results"][0]["prompt_index"] == 0
    last_choice = [c for c in chunks if isinstance(c, dict) and c.get("choices")][-1]
    assert last_choice["choices"][0]["finish_reason"] == "content_filter"
    assert last_choice["choices"][0]["content_filter_results"]["violence"]["filtered"] is True
    assert "".join(d.get("content") or "" for d in deltas(response)) == "a b c"
    assert chunks[-1] == "[DONE]"


async def test_content_filter_on_anthropic_is_a_refusal(
    sim: Simulator, client: httpx.AsyncClient
) -> None:
    response = await client.post(ANTHROPIC, json=body(), headers={"X-Sim-Fault":
                                                                  "content_filter"})  # fmt: skip
    delta = [c for c in data_of(response) if c["type"] == "message_delta"][0]
    assert delta["delta"]["stop_reason"] == "refusal"


# --- tool-only replies and usage --------------------------------------------------------------


async def test_tool_only_reply_has_content_null(sim: Simulator, client: httpx.AsyncClient) -> None:
    sim.enqueue(Reply(text="", tool_calls=(SimToolCall("read_file", {"path": "a.txt"}),)))
    response = await client.post(OPENAI, json=body())
    first = deltas(response)[0]
    assert first["role"] == "assistant" and first["content"] is None
    assert first["tool_calls"][0]["function"] == {"name": "read_file", "arguments": ""}
    assert not any(d.get("content") for d in deltas(response))


async def test_usage_counts_tool_arguments(sim: Simulator, client: httpx.AsyncClient) -> None:
    arguments = {"path": "notes.txt", "content": "x" * 80}
    text = json.dumps(arguments, separators=(",", ":"))
    sim.enqueue(Reply(text="Saving now", tool_calls=(SimToolCall("write_file", arguments),)))
    sim.enqueue(Reply(text="Saving now", tool_calls=(SimToolCall("write_file", arguments),)))
    expected = 2 + 1 + -(-len(text) // 4)  # two words, the call, its arguments by 4 chars
    response = await client.post(OPENAI, json=body(stream_options={"include_usage": True}))
    assert data_of(response)[-2]["usage"]["completion_tokens"] == expected
    response = await client.post(ANTHROPIC, json=body(), headers=ANTHROPIC_HEADERS)
    delta = [c for c in data_of(response) if c["type"] == "message_delta"][0]
    assert delta["usage"]["output_tokens"] == expected


# --- Anthropic-shaped errors on Anthropic routes --------------------------------------------


def _anthropic_error(response: httpx.Response) -> dict[str, Any]:
    data = response.json()
    assert data["type"] == "error" and set(data["error"]) == {"type", "message"}, data
    return dict(data["error"])


async def test_models_errors_are_anthropic_shaped_for_anthropic_clients() -> None:
    async with Simulator(api_key="right") as sim, httpx.AsyncClient(timeout=BOUND) as http:
        wrong = {"anthropic-version": "2023-06-01", "x-api-key": "wrong"}
        refused = await http.get(sim.base_url + "/v1/models", headers=wrong)
        assert refused.status_code == 401
        assert _anthropic_error(refused)["type"] == "authentication_error"
        openai = await http.get(sim.openai_base_url + "/models",
                                headers={"Authorization": "Bearer wrong"})  # fmt: skip
        assert openai.status_code == 401 and "code" in openai.json()["error"]


async def test_models_route_plays_a_response_fault(client: httpx.AsyncClient) -> None:
    headers = {**ANTHROPIC_HEADERS, "X-Sim-Fault": "status=529"}
    answer = await client.get("/v1/models", headers=headers)
    assert answer.status_code == 529 and _anthropic_error(answer)["type"] == "overloaded_error"
    assert (await client.get("/v1/models", headers=ANTHROPIC_HEADERS)).status_code == 200


async def test_unknown_and_wrong_method_routes_are_anthropic_shaped(
    client: httpx.AsyncClient,
) -> None:
    missing = await client.post("/v1/v1/messages", json=body(), headers=ANTHROPIC_HEADERS)
    assert missing.status_code == 404 and _anthropic_error(missing)["type"] == "not_found_error"
    wrong = await client.get(ANTHROPIC, headers=ANTHROPIC_HEADERS)
    assert wrong.status_code == 405 and _anthropic_error(wrong)


async def test_a_body_too_large_is_refused_in_the_route_format() -> None:
    async with Simulator(max_body=100) as sim, httpx.AsyncClient(timeout=BOUND) as http:
        big = body("x" * 200)
        anthropic = await http.post(sim.base_url + ANTHROPIC, json=big, headers=ANTHROPIC_HEADERS)
        assert anthropic.status_code == 413
        assert _anthropic_error(anthropic)["type"] == "request_too_large"
        openai = await http.post(sim.base_url + OPENAI, json=big)
        assert openai.status_code == 413 and "too large" in openai.json()["error"]["message"]


# --- non-ASCII fault headers -------------------------------------------------------------------


async def test_non_ascii_fault_header_is_read_as_utf8(client: httpx.AsyncClient) -> None:
    spec = "text=Grüße, 東京 ✓".encode()  # what a client sends for non-ASCII header text
    response = await client.post(OPENAI, json=body(), headers={"X-Sim-Fault": spec})
    assert "".join(d.get("content") or "" for d in deltas(response)) == "Grüße, 東京 ✓"
    error = await client.post(
        ANTHROPIC, json=body(), headers={**ANTHROPIC_HEADERS,
                                         "X-Sim-Fault": "status=503;message=Überlastet".encode()}
    )  # fmt: skip
    assert error.status_code == 503 and _anthropic_error(error)["message"] == "Überlastet"


async def test_non_ascii_fault_header_through_a_model(sim: Simulator, make_model: Any) -> None:
    model = make_model("anthropic", headers={"X-Sim-Fault": '{"text": "caf\\u00e9 \\u2615"}'})
    assert (await collect(model.stream(request()))).text == "café ☕"
    assert sim.requests[-1].headers["x-sim-fault"] == '{"text": "caf\\u00e9 \\u2615"}'


async def test_non_ascii_fault_spec_from_an_ascii_only_client(
    sim: Simulator, make_model: Any, client: httpx.AsyncClient
) -> None:
    # httpx (the app's client) refuses non-ASCII str header values: RFC 8187's form instead.
    value = fault_header_value("text=Grüße, 東京 ✓ 100%")
    assert value.isascii() and value.startswith("utf-8''")
    assert fault_header_value("drop_after=3") == "drop_after=3"
    model = make_model("openai", headers={"X-Sim-Fault": value})
    assert (await collect(model.stream(request()))).text == "Grüße, 東京 ✓ 100%"
    broken = await client.post(OPENAI, json=body(), headers={"X-Sim-Fault": "utf-8''text%3D%FF"})
    assert broken.status_code == 400 and "not valid UTF-8" in broken.json()["error"]["message"]


# --- whole answers to "stream": false ---------------------------------------------------------


async def test_stream_false_gets_a_whole_openai_completion(
    sim: Simulator, client: httpx.AsyncClient
) -> None:
    sim.enqueue(Reply(text="All done", tool_calls=(SimToolCall("read_file", {"p": 1}),),
                      thinking="Hmm ok"))  # fmt: skip
    response = await client.post(OPENAI, json=body(stream=False))
    assert response.headers["content-type"] == "application/json"
    data = response.json()
    assert data["object"] == "chat.completion"
    choice = data["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["content"] == "All done" and message["reasoning_content"] == "Hmm ok"
    assert message["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"p":1}'}
    assert data["usage"]["completion_tokens"] == 2 + 2 + 1 + 2


async def test_stream_false_tool_only_and_refusal(
    sim: Simulator, client: httpx.AsyncClient
) -> None:
    sim.enqueue(Reply(text="", tool_calls=(SimToolCall("read_file", {}),)),
                Reply(text="No.", stop="refusal"))  # fmt: skip
    tool_only = (await client.post(OPENAI, json=body(stream=False))).json()
    assert tool_only["choices"][0]["message"]["content"] is None
    refused = (await client.post(OPENAI, json=body(stream=False))).json()["choices"][0]
    assert refused["message"]["content"] is None and refused["message"]["refusal"] == "No."
    assert refused["finish_reason"] == "stop"


async def test_stream_false_gets_a_whole_anthropic_message(
    sim: Simulator, client: httpx.AsyncClient
) -> None:
    sim.enqueue(Reply(text="Sure", tool_calls=(SimToolCall("read_file", {"path": "a"}, "toolu_1"),),
                      thinking="Plan it"))  # fmt: skip
    response = await client.post(ANTHROPIC, json=body(stream=False), headers=ANTHROPIC_HEADERS)
    data = response.json()
    assert data["type"] == "message" and data["stop_reason"] == "tool_use"
    thinking, text, tool = data["content"]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "Plan it"
    assert thinking["signature"]
    assert text == {"type": "text", "text": "Sure"}
    assert tool == {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                    "input": {"path": "a"}}  # fmt: skip


async def test_stream_false_with_a_cut_is_a_cut_json_body(
    sim: Simulator, client: httpx.AsyncClient
) -> None:
    response = await client.post(OPENAI, json=body("one two three", stream=False),
                                 headers={"X-Sim-Fault": "eof_after=1"})  # fmt: skip
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content.startswith(b'{"id":"chatcmpl-sim')  # half a chat.completion
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.content)


# --- reasoning and thinking on request ----------------------------------------------------------


async def test_openai_reasoning_content_deltas(client: httpx.AsyncClient) -> None:
    response = await client.post(OPENAI, json=body("hi"), headers={"X-Sim-Fault":
                                                                   "think=First, look"})  # fmt: skip
    pieces = deltas(response)
    reasoning = [d["reasoning_content"] for d in pieces if "reasoning_content" in d]
    assert "".join(reasoning) == "First, look"
    first_text = next(i for i, d in enumerate(pieces) if d.get("content"))
    assert max(i for i, d in enumerate(pieces) if "reasoning_content" in d) < first_text


async def test_openai_reasoning_field_variant(client: httpx.AsyncClient) -> None:
    response = await client.post(OPENAI, json=body(), headers={
        "X-Sim-Fault": "think;reasoning_field=reasoning"})  # fmt: skip
    pieces = deltas(response)
    assert "".join(d.get("reasoning", "") for d in pieces).startswith("Let me think")
    assert not any("reasoning_content" in d for d in pieces)


async def test_anthropic_thinking_block_with_signature(client: httpx.AsyncClient) -> None:
    headers = {**ANTHROPIC_HEADERS, "X-Sim-Fault": "think=Weigh it"}
    events = data_of(await client.post(ANTHROPIC, json=body("hi"), headers=headers))
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert starts[0] == {"type": "thinking", "thinking": "", "signature": ""}
    assert starts[1]["type"] == "text"
    block0 = [e["delta"] for e in events if e["type"] == "content_block_delta" and e["index"] == 0]
    assert "".join(d["thinking"] for d in block0 if d["type"] == "thinking_delta") == "Weigh it"
    assert block0[-1]["type"] == "signature_delta" and block0[-1]["signature"]
    signature = block0[-1]["signature"]
    # The block sent back unchanged is accepted; a changed one is refused as Anthropic does.
    turn = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Weigh it", "signature": signature},
                {"type": "text", "text": "hi"}]},
            {"role": "user", "content": "and?"}]  # fmt: skip
    again = await client.post(ANTHROPIC, json={"messages": turn, "stream": True},
                              headers=ANTHROPIC_HEADERS)  # fmt: skip
    assert again.status_code == 200
    turn[1]["content"][0]["thinking"] = "Weigh it!"  # type: ignore[index]
    changed = await client.post(ANTHROPIC, json={"messages": turn, "stream": True},
                                headers=ANTHROPIC_HEADERS)  # fmt: skip
    assert changed.status_code == 400
    assert _anthropic_error(changed)["message"] == (
        "messages.1.content.0: Invalid `signature` in `thinking` block"
    )


async def test_anthropic_redacted_thinking_on_request(client: httpx.AsyncClient) -> None:
    headers = {**ANTHROPIC_HEADERS, "X-Sim-Fault": "redacted_thinking;think=Then this"}
    events = data_of(await client.post(ANTHROPIC, json=body("hi"), headers=headers))
    starts = [
        (e["index"], e["content_block"]) for e in events if e["type"] == "content_block_start"
    ]
    assert [(i, block["type"]) for i, block in starts] == [
        (0, "redacted_thinking"), (1, "thinking"), (2, "text")]  # fmt: skip
    data = starts[0][1]["data"]
    assert isinstance(data, str) and data
    turn = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "redacted_thinking", "data": data},
                                              {"type": "text", "text": "hi"}]},
            {"role": "user", "content": "and?"}]  # fmt: skip
    again = await client.post(ANTHROPIC, json={"messages": turn}, headers=ANTHROPIC_HEADERS)
    assert again.status_code == 200
    turn[1]["content"][0]["data"] = data[:-4] + "AAAA"  # type: ignore[index]
    changed = await client.post(ANTHROPIC, json={"messages": turn}, headers=ANTHROPIC_HEADERS)
    assert changed.status_code == 400
    assert "redacted_thinking" in _anthropic_error(changed)["message"]
    openai = await client.post(OPENAI, json=body(), headers={"X-Sim-Fault": "redacted_thinking"})
    assert b"redacted" not in openai.content  # Chat Completions has no such block


async def test_a_request_that_asks_for_reasoning_gets_it(client: httpx.AsyncClient) -> None:
    thinking = {"type": "enabled", "budget_tokens": 1024}
    events = data_of(await client.post(ANTHROPIC, json=body(thinking=thinking),
                                       headers=ANTHROPIC_HEADERS))  # fmt: skip
    starts = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
    assert starts == ["thinking", "text"]
    plain = data_of(await client.post(ANTHROPIC, json=body(), headers=ANTHROPIC_HEADERS))
    assert [e["content_block"]["type"] for e in plain if e["type"] == "content_block_start"] == [
        "text"]  # fmt: skip
    effort = deltas(await client.post(OPENAI, json=body(reasoning_effort="low")))
    assert any(d.get("reasoning_content") for d in effort)
    none = deltas(await client.post(OPENAI, json=body(reasoning_effort="none")))
    assert not any("reasoning_content" in d for d in none)
