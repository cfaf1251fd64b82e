"""Measure (not assert): ``python -m tests.llama.bench [--tokens N] [--repeats R]``.

Tokens per second from llama.cpp's own server on the tiny model (the LOOP prompt, one token
per word, cut at ``--tokens``), in one run against one server:

- ``server``: the server's own generation rate (``timings.predicted_per_second``);
- ``bare``: a bare httpx client reading the SSE stream (first to last content piece);
- ``agent``: Agent + OpenAICompatibleModel + SQLite, TEXT_DELTA events (first to last);
- ``window``: the real main window (offscreen), until the transcript shows the whole answer.

Each figure is the median of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app import Agent, AgentRunConfig, EventType, SQLiteSessionExtension
from app.providers import OpenAICompatibleModel

from .server import LlamaServer

PROMPT = "LOOP for the benchmark"


async def bare(server: LlamaServer, tokens: int) -> tuple[float, float]:
    """(client rate, server's own rate)."""
    body = {"messages": [{"role": "user", "content": PROMPT}], "max_tokens": tokens,
            "stream": True}  # fmt: skip
    pieces = 0
    first = last = 0.0
    own = 0.0
    async with (
        httpx.AsyncClient(timeout=60, trust_env=False) as client,
        client.stream("POST", f"{server.base_url}/chat/completions", json=body) as response,
    ):
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if "timings" in chunk:
                own = float(chunk["timings"]["predicted_per_second"])
            for choice in chunk.get("choices", []):
                if content := choice.get("delta", {}).get("content"):
                    now = time.perf_counter()
                    first = first or now
                    last = now
                    pieces += len(content.split())  # words: one token each
    return (pieces - 1) / (last - first), own


async def agent_rate(server: LlamaServer, tokens: int, db: Path) -> float:
    model = OpenAICompatibleModel(server.base_url, "tiny-llama")
    ext = SQLiteSessionExtension(db)
    try:
        agent = await Agent.create(
            model, config=AgentRunConfig("bench", max_output_tokens=tokens), extensions=[ext]
        )
        first = last = 0.0
        pieces = 0
        async for event in agent.stream(PROMPT):
            if event.type is EventType.TEXT_DELTA:
                now = time.perf_counter()
                first = first or now
                last = now
                # words, not events: pieces that arrive together come as one TEXT_DELTA
                pieces += len(event.text.split())
        return (pieces - 1) / (last - first)
    finally:
        await model.aclose()
        await ext.storage.close()


def window_rates(server: LlamaServer, tokens: int, repeats: int, root: Path) -> list[float]:
    from PySide6.QtWidgets import QApplication

    from app.services import AppServices
    from app.settings import Settings
    from tests.ui.helpers import close_window, qasync_runner, until
    from ui.window import MainWindow

    app = QApplication.instance() or QApplication([])
    rates: list[float] = []
    with qasync_runner(app) as run:
        for i in range(repeats):

            async def once(i: int = i) -> float:
                services = AppServices(root / f"window{i}")
                services.save_settings(
                    Settings(provider_kind="openai", base_url=server.base_url, model="tiny")
                )
                services.client.defaults = AgentRunConfig("default", max_output_tokens=tokens)
                await services.open()
                window = MainWindow(services)
                window.resize(1000, 700)
                window.show()
                await window.start()
                try:
                    model = window.transcript_model
                    started = time.perf_counter()
                    window.controller.send(PROMPT)
                    await until(lambda: not window.controller.busy, within=120)
                    elapsed = time.perf_counter() - started
                    words = len(model.item(1).text.split())
                    return words / elapsed
                finally:
                    await close_window(window)

            rates.append(run(once(), timeout=120))
    return rates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = LlamaServer(root, n_ctx=max(4096, args.tokens + 256))
        server.start()
        try:
            pairs = [asyncio.run(bare(server, args.tokens)) for _ in range(args.repeats)]
            agents = [
                asyncio.run(agent_rate(server, args.tokens, root / f"a{i}.sqlite"))
                for i in range(args.repeats)
            ]
            windows = window_rates(server, args.tokens, args.repeats, root)
        finally:
            server.stop()
    figures = {
        "server": statistics.median(p[1] for p in pairs),
        "bare": statistics.median(p[0] for p in pairs),
        "agent": statistics.median(agents),
        "window": statistics.median(windows),
    }
    for name, rate in figures.items():
        print(f"{name:>7}: {rate:9.0f} tokens/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
