"""The simulator plays each server quirk of issue 13 as a named fault (``X-Sim-Fault: <name>``).

Real HTTP on 127.0.0.1; each test asserts the bytes the simulator sends have the shape the issue
describes for that server, not what the app does with them (the parsers have their own tests).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.simulator import Fault, FaultKind, Quirk, Reply, Simulator, SpecError, parse_spec

from .conftest import BOUND

OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "k"}
TWO_TOOLS = 'tool=read_file;args={"path":"a.txt"};tool=read_file;args={"path":"b.txt"}'


@pytest.fixture
async def client(sim: Simulator) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sim.base_url, timeout=BOUND) as http:
        yield http


def body(text: str = "one two three", **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], "stream": True,
            "stream_options": {"include_usage": True}, **extra}  # fmt: skip


async def post(client: httpx.AsyncClient, spec: str, path: str = OPENAI,
               **extra: Any) -> httpx.Response:  # fmt: skip
    headers = {"X-Sim-Fault": spec, **(ANTHROPIC_HEADERS if path == ANTHROPIC else {})}
    return await client.post(path, json=body(**extra), headers=headers)


def chunks(response: httpx.Response) -> list[Any]:
    out: list[Any] = []
    for line in response.text.splitlines():
        if line.startswith("data: "):
            payload = line.removeprefix("data: ")
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def choices(response: httpx.Response) -> list[dict[str, Any]]:
    return [c["choices"][0] for c in chunks(response) if isinstance(c, dict) and c["choices"]]


def tool_entries(response: httpx.Response) -> list[dict[str, Any]]:
    return [t for c in choices(response) for t in c["delta"].get("tool_calls") or ()]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ollama_index0", Reply(quirks=frozenset({Quirk.OLLAMA_INDEX0}))),
        ("finish_empty;no_done", Reply(quirks=frozenset({Quirk.FINISH_EMPTY, Quirk.NO_DONE}))),
        ("json_body", Reply(quirks=frozenset({Quirk.JSON_BODY}))),
        ("llamacpp_ctx_400", Reply(fault=Fault.named(FaultKind.LLAMACPP_CTX))),
        ("llamacpp_error_field=2", Reply(fault=Fault.named(FaultKind.LLAMACPP_ERROR_FIELD, 2))),
        ("quota_429", Reply(fault=Fault(FaultKind.QUOTA, status=429))),
        ("reject_stream_options", Reply(fault=Fault(FaultKind.REJECT_STREAM_OPTIONS, status=400))),
        ("think=Hm", Reply(thinking="Hm")),
        ('{"quirks": ["gemini_no_index"], "thinking": "x"}',
         Reply(quirks=frozenset({Quirk.GEMINI_NO_INDEX}), thinking="x")),
    ],
)  # fmt: skip
def test_named_faults_in_the_spec_language(spec: str, expected: Reply) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize("spec", ["ollama_index0=1", '{"quirks": ["nope"]}', "reasoning_field=x"])
def test_bad_quirk_specs_are_refused(spec: str) -> None:
    with pytest.raises(SpecError):
        parse_spec(spec)


def test_each_tool_item_is_another_call() -> None:
    calls = parse_spec(TWO_TOOLS).tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})]  # fmt: skip


async def test_ollama_index0(client: httpx.AsyncClient) -> None:
    entries = tool_entries(await post(client, "ollama_index0;" + TWO_TOOLS))
    assert [e["index"] for e in entries] == [0, 0]
    assert len({e["id"] for e in entries}) == 2
    assert [json.loads(e["function"]["arguments"]) for e in entries] == [
        {"path": "a.txt"}, {"path": "b.txt"}]  # each call whole, in one delta  # fmt: skip


@pytest.mark.parametrize(("spec", "value"), [("finish_empty", ""), ("finish_null_string", "null")])
async def test_finish_reason_on_intermediate_chunks(
    client: httpx.AsyncClient, spec: str, value: str
) -> None:
    found = [c["finish_reason"] for c in choices(await post(client, f"{spec};" + TWO_TOOLS))]
    assert found[:-1] == [value] * (len(found) - 1) and len(found) > 3
    assert found[-1] == "tool_calls"


async def test_no_done(client: httpx.AsyncClient) -> None:
    response = await post(client, "no_done")
    assert b"[DONE]" not in response.content
    assert choices(response)[-1]["finish_reason"] == "stop"
    assert chunks(response)[-1]["usage"]["completion_tokens"] == 3
    anthropic = await post(client, "no_done", ANTHROPIC)
    assert b"message_delta" in anthropic.content and b"message_stop" not in anthropic.content


async def test_gemini_no_index(client: httpx.AsyncClient) -> None:
    entries = tool_entries(await post(client, "gemini_no_index;split=4;" + TWO_TOOLS))
    assert entries and not any("index" in e for e in entries)
    metadata = [e for e in entries if "extra_content" in e]
    assert len(metadata) == 2 and all(set(e) == {"extra_content"} for e in metadata)
    assert metadata[0]["extra_content"]["google"]["thought_signature"]
    calls = [e for e in entries if "function" in e]
    assert [e["function"].get("name") for e in calls if "name" in e["function"]] == [
        "read_file", "read_file"]  # fmt: skip
    by_id: dict[str, str] = {}
    for entry in calls:
        by_id[entry["id"]] = by_id.get(entry["id"], "") + entry["function"]["arguments"]
    assert [json.loads(text) for text in by_id.values()] == [{"path": "a.txt"}, {"path": "b.txt"}]
    assert len(calls) > 2  # the arguments really are split


async def test_openai_only_quirks_are_refused_on_the_anthropic_route(
    client: httpx.AsyncClient,
) -> None:
    response = await post(client, "ollama_index0", ANTHROPIC)
    assert response.status_code == 400 and response.json()["type"] == "error"
    assert "/v1/chat/completions" in response.json()["error"]["message"]


@pytest.mark.parametrize("path", [OPENAI, ANTHROPIC])
async def test_json_body_despite_stream_true(client: httpx.AsyncClient, path: str) -> None:
    response = await post(client, "json_body;text=Whole answer", path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    data = response.json()
    if path == OPENAI:
        assert data["object"] == "chat.completion"
        assert data["choices"][0]["message"]["content"] == "Whole answer"
    else:
        assert data["type"] == "message" and data["content"] == [
            {"type": "text", "text": "Whole answer"}]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "content_type"),
    [("text_plain", "text/plain; charset=utf-8"), ("no_content_type", None)],
)
async def test_sse_with_another_content_type(
    client: httpx.AsyncClient, spec: str, content_type: str | None
) -> None:
    for path in (OPENAI, ANTHROPIC):
        response = await post(client, spec, path)
        assert response.headers.get("content-type") == content_type
        assert response.content.startswith(b"data: {" if path == OPENAI else b"event: ")
        assert response.content.endswith(
            b"data: [DONE]\n\n" if path == OPENAI else b'data: {"type":"message_stop"}\n\n'
        )


async def test_llamacpp_ctx_400(client: httpx.AsyncClient) -> None:
    for path in (OPENAI, ANTHROPIC):
        response = await post(client, "llamacpp_ctx_400", path)
        assert response.status_code == 400
        assert response.json() == {
            "error": {
                "code": 400,
                "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size, try increasing it",
            }
        }


async def test_llamacpp_error_field(client: httpx.AsyncClient) -> None:
    response = await post(client, "llamacpp_error_field")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.content == (
        b'error: {"code":400,"message":"the request exceeds the available context size, try '
        b'increasing it","type":"exceed_context_size_error"}\n\ndata: [DONE]\n\n'
    )
    later = await post(client, "llamacpp_error_field=2")
    events = later.content.split(b"\n\n")
    assert events[0].startswith(b"data: {") and events[1].startswith(b"data: {")
    assert events[2].startswith(b"error: {") and events[3] == b"data: [DONE]"


async def test_quota_429(client: httpx.AsyncClient) -> None:
    response = await post(client, "quota_429")
    assert response.status_code == 429 and "retry-after" not in response.headers
    error = response.json()["error"]
    assert error["type"] == error["code"] == "insufficient_quota"
    assert "check your plan and billing details" in error["message"]
    anthropic = await post(client, "quota_429", ANTHROPIC)
    assert anthropic.status_code == 400
    assert anthropic.json()["error"]["type"] == "invalid_request_error"
    assert "credit balance is too low" in anthropic.json()["error"]["message"]


async def test_reject_stream_options(sim: Simulator, client: httpx.AsyncClient) -> None:
    refused = await post(client, "reject_stream_options")
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "Unrecognized request argument supplied: stream_options"
    )
    without = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    answered = await client.post(OPENAI, json=without,
                                 headers={"X-Sim-Fault": "reject_stream_options"})  # fmt: skip
    assert answered.status_code == 200 and answered.content.endswith(b"data: [DONE]\n\n")
    # As a simulator default it refuses every request that still sends stream_options.
    sim.default = parse_spec("reject_stream_options")
    assert (await client.post(OPENAI, json=body())).status_code == 400
    assert (await client.post(OPENAI, json=without)).status_code == 200


def test_quirk_names_are_documented_in_the_spec_module() -> None:
    import app.simulator.script as script

    doc = script.__doc__ or ""
    names = [q.value for q in Quirk] + ["llamacpp_ctx_400", "llamacpp_error_field", "quota_429",
                                        "reject_stream_options", "think"]  # fmt: skip
    assert [n for n in names if n not in doc] == []


def test_help_names_every_quirk(capsys: pytest.CaptureFixture[str]) -> None:
    from app.simulator.__main__ import main

    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    names = [q.value for q in Quirk] + ["llamacpp_ctx_400", "llamacpp_error_field", "quota_429",
                                        "reject_stream_options", "think"]  # fmt: skip
    assert [n for n in names if n not in shown] == []
