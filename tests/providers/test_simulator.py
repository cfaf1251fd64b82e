"""The simulator itself: spec language, scenarios, robustness, threads and the command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from app.messages import StopReason
from app.model import StepEnd
from app.simulator import (
    BAD_ARGUMENTS,
    Fault,
    FaultKind,
    Reply,
    SimToolCall,
    Simulator,
    SimulatorThread,
    SpecError,
    load_scenario,
    parse_spec,
)

from .conftest import BOUND, ModelFactory, collect, request


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("drop_after=3", Reply(fault=Fault(FaultKind.DROP, after=3))),
        ("stall_after=2", Reply(fault=Fault(FaultKind.STALL, after=2))),
        ("status=429; retry_after=2", Reply(fault=Fault(FaultKind.STATUS, status=429,
                                                        retry_after=2.0))),
        ("html", Reply(fault=Fault(FaultKind.HTML, status=502))),
        ("html=503", Reply(fault=Fault(FaultKind.HTML, status=503))),
        ("context_full", Reply(fault=Fault(FaultKind.CONTEXT_FULL, status=400))),
        ("malformed_after=1", Reply(fault=Fault(FaultKind.MALFORMED, after=1))),
        ("eof_after=4", Reply(fault=Fault(FaultKind.EOF, after=4))),
        ("error_after=2;error_type=api_error",
         Reply(fault=Fault(FaultKind.ERROR_EVENT, after=2, error_type="api_error"))),
        ("length", Reply(stop="max_output")),
        ("refusal", Reply(stop="refusal")),
        ("pause_turn", Reply(stop="paused")),
        ("stop=weird", Reply(stop="weird")),
        ("text=Hi there;rate=50", Reply(text="Hi there", tokens_per_second=50.0)),
        ("tokens=20", Reply(tokens=20)),
        ('tool=read_file;args={"path":"a"};split=2',
         Reply(tool_calls=(SimToolCall("read_file", {"path": "a"}),), argument_chunk=2)),
        ("bad_args", Reply(tool_calls=(SimToolCall("write_file", BAD_ARGUMENTS),))),
        ('{"text": "json form", "fault": "drop_after=1"}',
         Reply(text="json form", fault=Fault(FaultKind.DROP, after=1))),
    ],
)  # fmt: skip
def test_spec_language(spec: str, expected: Reply) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(
    "spec", ["explode", "drop_after=x", "retry_after=3", "args={bad", '{"colour": 1}', "{oops"]
)
def test_bad_specs_are_refused_clearly(spec: str) -> None:
    with pytest.raises(SpecError):
        parse_spec(spec)


async def test_bad_header_spec_is_a_400(sim: Simulator, make_model: ModelFactory) -> None:
    result = await collect(make_model("openai", headers={"X-Sim-Fault": "explode"}).stream(
        request()))  # fmt: skip
    assert result.error is not None and result.error.status_code == 400
    assert "unknown fault spec item" in str(result.error)


def test_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"replies": [
        "status=503",
        {"text": "Hello", "stop": "max_output"},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}],
         "fault": {"kind": "drop", "after": 2}},
    ]}))  # fmt: skip
    assert load_scenario(path) == [
        Reply(fault=Fault(FaultKind.STATUS, status=503)),
        Reply(text="Hello", stop="max_output"),
        Reply(tool_calls=(SimToolCall("read_file", {"path": "x"}),),
              fault=Fault(FaultKind.DROP, after=2)),
    ]  # fmt: skip
    path.write_text("[1, 2")
    with pytest.raises(SpecError, match="not valid JSON"):
        load_scenario(path)
    with pytest.raises(SpecError, match="cannot read"):
        load_scenario(tmp_path / "missing.json")


async def test_queue_then_default(sim: Simulator, make_model: ModelFactory) -> None:
    sim.default = Reply(text="default answer")
    sim.enqueue("refusal", Reply(text="first"))
    model = make_model("openai")
    assert (await collect(model.stream(request()))).stop is StopReason.REFUSAL
    assert (await collect(model.stream(request()))).text == "first"
    assert (await collect(model.stream(request()))).text == "default answer"


async def test_many_sequential_requests(sim: Simulator, make_model: ModelFactory) -> None:
    model = make_model("openai")
    for i in range(200):
        result = await collect(model.stream(request(f"message {i}")))
        assert result.text == f"message {i}"
    assert len(sim.model_requests()) == 200
    assert sim.open_connections <= 1  # one keep-alive connection served them all


async def test_concurrent_streams(sim: Simulator, make_model: ModelFactory) -> None:
    models = [make_model("openai"), make_model("anthropic")]
    results = await asyncio.gather(
        *(collect(models[i % 2].stream(request(f"n{i} " * 50))) for i in range(20))
    )
    assert [r.text for r in results] == [f"n{i} " * 50 for i in range(20)]


async def test_client_disconnects_mid_stream(sim: Simulator, make_model: ModelFactory) -> None:
    for protocol in ("openai", "anthropic"):
        sim.enqueue(Reply(tokens=1_000_000))  # far more than the client will read
        model = make_model(protocol)
        stream = model.stream(request())
        async with asyncio.timeout(BOUND):
            async for _ in stream:
                break
            await stream.aclose()
            await model.aclose()
            await sim.wait_idle()
    assert sim.open_connections == 0
    assert (await collect(make_model("openai").stream(request("still fine")))).text == (
        "still fine"
    )


async def test_stall_ends_when_client_gives_up(sim: Simulator, make_model: ModelFactory) -> None:
    sim.stall_seconds = 60.0
    sim.enqueue(Fault.stall_after(1))
    model = make_model("openai", timeout=0.2)
    assert (await collect(model.stream(request()))).error is not None
    await model.aclose()
    async with asyncio.timeout(BOUND):  # far sooner than the 60 s stall limit
        await sim.wait_idle()


async def test_stop_ends_open_streams(make_model: ModelFactory) -> None:
    async with Simulator() as local:
        local.enqueue(Fault.stall_after(1))
        async with httpx.AsyncClient(timeout=BOUND) as client:
            async with client.stream(
                "POST", local.openai_base_url + "/chat/completions", json={"messages": []}
            ) as response:
                assert response.status_code == 200
                async with asyncio.timeout(BOUND):
                    await local.stop()  # must not wait for the 60 s stall
                with pytest.raises(httpx.HTTPError):
                    await response.aread()


async def _raw_exchange(sim: Simulator, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(sim.host, sim.port)
    try:
        writer.write(data)
        await writer.drain()
        return await reader.read(4096)
    finally:
        writer.close()
        await writer.wait_closed()


async def test_bounded_against_bad_clients(sim: Simulator) -> None:
    async with asyncio.timeout(BOUND):
        huge = b"GET /v1/models HTTP/1.1\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"
        assert (await _raw_exchange(sim, huge)).startswith(b"HTTP/1.1 431")
        assert (await _raw_exchange(sim, b"HELLO\r\n\r\n")).startswith(b"HTTP/1.1 400")
        too_long = b"POST /v1/messages HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n"
        assert (await _raw_exchange(sim, too_long)).startswith(b"HTTP/1.1 413")
        answer = await _raw_exchange(sim, b"GET /v1/messages HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 405")
    # and it still serves normal requests afterwards
    async with httpx.AsyncClient(timeout=BOUND) as client:
        assert (await client.get(sim.openai_base_url + "/models")).status_code == 200


async def test_chunked_request_body(sim: Simulator) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b'{"messages": [{"role": "user", '
        yield b'"content": "chunked hello"}]}'

    async with httpx.AsyncClient(timeout=BOUND) as client:
        response = await client.post(sim.openai_base_url + "/chat/completions", content=body())
    assert b"chunked" in response.content and b"[DONE]" in response.content


async def test_token_rate_paces_the_stream(sim: Simulator, make_model: ModelFactory) -> None:
    sim.enqueue(Reply(tokens=20, tokens_per_second=200.0))
    started = time.monotonic()
    result = await collect(make_model("openai").stream(request()))
    assert len(result.text.split()) == 20  # (pieces that arrive together may be joined)
    assert isinstance(result.events[-1], StepEnd)
    assert time.monotonic() - started >= 20 / 200.0 * 0.9  # pacing is never faster


def test_threaded_simulator_for_blocking_callers() -> None:
    with SimulatorThread() as sim:
        sim.enqueue(Fault.http_status(503))
        with httpx.Client(timeout=BOUND) as client:
            models = client.get(sim.openai_base_url + "/models").json()
            failed = client.post(sim.openai_base_url + "/chat/completions", json={})
        assert [m["id"] for m in models["data"]] == ["sim-echo", "sim-claude"]
        assert failed.status_code == 503
        assert len(sim.requests) == 2


def test_command_line(tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text('["status=529"]')
    process = subprocess.Popen(
        [sys.executable, "-m", "app.simulator", "--port", "0", "--scenario", str(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # bounded by the pytest timeout
        assert first.startswith("Continuum simulator on http://127.0.0.1:")
        base = first.split(" on ", 1)[1].strip()
        with httpx.Client(timeout=BOUND) as client:
            assert client.get(base + "/health").status_code == 200
            assert client.post(base + "/v1/messages", json={}).status_code == 529
            streamed = client.post(
                base + "/v1/messages", json={"messages": [{"role": "user", "content": "hey"}]}
            )
        assert b"message_stop" in streamed.content and b'"text":"hey"' in streamed.content
    finally:
        process.terminate()
        process.communicate(timeout=BOUND)


def test_command_line_rejects_bad_default_spec() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.simulator", "--port", "0", "--default", "explode"],
        capture_output=True,
        text=True,
        timeout=BOUND,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 2 and "unknown fault spec item" in done.stderr
