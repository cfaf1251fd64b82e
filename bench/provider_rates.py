"""Measure (not assert) streaming rates: ``python -m bench.provider_rates [--tokens N]``.

Three figures per protocol, in tokens per second:

- ``simulator``: the simulator's top speed, read by a bare socket client (no parsing);
- ``provider``: the real provider class over loopback HTTP (httpx + SSE + parsing);
- ``parser``: the provider's parsing alone, over a body already in memory.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence

import httpx

from app.messages import UserMessage
from app.model import ModelRequest, TextDelta
from app.providers import AnthropicModel, OpenAICompatibleModel, events_from_response
from app.providers.anthropic import AnthropicStreamParser
from app.providers.openai import OpenAIStreamParser
from app.providers.sse import StreamParser
from app.simulator.script import Reply
from app.simulator.server import Simulator


async def _raw_rate(sim: Simulator, protocol: str, tokens: int) -> float:
    path = "/v1/chat/completions" if protocol == "openai" else "/v1/messages"
    body = b'{"messages":[],"max_tokens":100000000}'
    reader, writer = await asyncio.open_connection(sim.host, sim.port)
    sim.enqueue(Reply(tokens=tokens))
    started = time.perf_counter()
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: sim\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    while await reader.read(1 << 16):
        pass
    elapsed = time.perf_counter() - started
    writer.close()
    await writer.wait_closed()
    return tokens / elapsed


async def _provider_rate(sim: Simulator, protocol: str, tokens: int) -> float:
    model = (
        OpenAICompatibleModel(sim.openai_base_url, "sim-echo")
        if protocol == "openai"
        else AnthropicModel(sim.base_url, "sim-claude", max_tokens=tokens + 1)
    )
    sim.enqueue(Reply(tokens=tokens))
    request = ModelRequest([UserMessage("go")])
    started = time.perf_counter()
    words = 0  # (pieces that arrive together come as one TextDelta: count the words)
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            words += len(event.text.split())
    elapsed = time.perf_counter() - started
    await model.aclose()
    assert words == tokens, (words, tokens)
    return tokens / elapsed


async def _parser_rate(sim: Simulator, protocol: str, tokens: int) -> float:
    path = "/v1/chat/completions" if protocol == "openai" else "/v1/messages"
    sim.enqueue(Reply(tokens=tokens))
    async with httpx.AsyncClient() as client:
        body = (
            await client.post(
                sim.base_url + path,
                json={"messages": [], "stream_options": {"include_usage": True}},
            )
        ).content
    parser: StreamParser = OpenAIStreamParser() if protocol == "openai" else AnthropicStreamParser()
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    started = time.perf_counter()
    count = 0
    async for event in events_from_response(response, parser):
        count += isinstance(event, TextDelta)
    elapsed = time.perf_counter() - started
    assert count == tokens, (count, tokens)
    return tokens / elapsed


async def measure(tokens: int, repeats: int) -> dict[tuple[str, str], float]:
    """Best of ``repeats`` runs for each (protocol, figure), in tokens per second."""
    results: dict[tuple[str, str], float] = {}
    async with Simulator() as sim:
        for protocol in ("openai", "anthropic"):
            for name, probe in (
                ("simulator", _raw_rate),
                ("provider", _provider_rate),
                ("parser", _parser_rate),
            ):
                best = max([await probe(sim, protocol, tokens) for _ in range(repeats)])
                results[(protocol, name)] = best
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.provider_rates")
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.tokens, args.repeats))
    print(f"{args.tokens} tokens, best of {args.repeats}, tokens/s:")
    for (protocol, name), rate in results.items():
        print(f"  {protocol:<10} {name:<10} {rate:>12,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
