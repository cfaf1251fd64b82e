"""``python -m bench.mcp_start_delay [SECONDS]``: how long the first answer of a fresh app takes
when an MCP server needs SECONDS (default 5) to start, and the longest event-loop pause until
it has started, through the app's services and the
simulator (``tests/fixtures/mcp_servers/raw_server.py --start-delay``). Prints JSON; a
benchmark, not a test."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

from app.services import AppServices, McpServerConfig
from app.simulator import Reply

RAW = (
    Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mcp_servers" / "raw_server.py"
)


async def measure(delay: float) -> dict[str, object]:
    data = Path(tempfile.mkdtemp())
    services = AppServices(data / "data")
    await services.open()
    await services.start_simulator(tokens_per_second=0)
    slow = McpServerConfig(
        "slow", sys.executable, (str(RAW), str(data / "s"), "--start-delay", str(delay))
    )
    services.save_settings(dataclasses.replace(services.settings, mcp_servers=(slow,)))
    notices: list[str] = []
    services.notify = notices.append
    worst = 0.0
    ticking = True

    async def ticker() -> None:  # the longest event-loop pause while the server starts
        nonlocal worst
        last = time.perf_counter()
        while ticking:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst, last = max(worst, now - last - 0.001), now

    ticks = asyncio.ensure_future(ticker())
    started = time.perf_counter()
    await services.configure_model()
    configured = time.perf_counter() - started
    session = await services.new_session("hello")
    assert services._simulator is not None
    services._simulator.enqueue(Reply(text="Hello."))
    async for _event in services.stream(session.id, "hello"):
        pass
    first_answer = time.perf_counter() - started
    await services.mcp_ready()
    ticking = False
    await ticks
    await services.close()
    return {
        "start_delay_s": delay,
        "configured_s": round(configured, 2),
        "first_answer_s": round(first_answer, 2),
        "worst_loop_pause_ms": round(worst * 1000),
        "notices": notices,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(measure(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0))))
