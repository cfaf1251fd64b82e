"""``python -m bench.mcp_big_line [MB ...]``: the longest event-loop pause while an MCP server's
answer of N MB (one JSON line) is read, through :class:`app.tools.mcp.McpToolSource` and the
hand-written test server (``tests/fixtures/mcp_servers/raw_server.py``).

A ticker task sleeps 1 ms in a loop and records the longest gap between its wake-ups; the
figure is that gap minus the 1 ms, while one ``big`` call runs. Also prints how long the call
took and what it answered (its first 120 characters). A benchmark, not a test: it never fails.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from app.messages import ToolCall
from app.tools.mcp import McpServerConfig, McpToolSource

RAW = (
    Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mcp_servers" / "raw_server.py"
)


async def measure(megabytes: float) -> dict[str, object]:
    state = Path(tempfile.mkdtemp())
    config = McpServerConfig("raw", sys.executable, (str(RAW), str(state)), call_timeout=120)
    async with McpToolSource(config) as source:
        tool = next(t for t in source.tools if t.name == "raw__big")
        worst = 0.0
        running = True

        async def ticker() -> None:
            nonlocal worst
            last = time.perf_counter()
            while running:
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                worst = max(worst, now - last - 0.001)
                last = now

        ticking = asyncio.ensure_future(ticker())
        started = time.perf_counter()
        result = await tool.invoke(ToolCall("c", "raw__big", {"chars": int(megabytes * 1e6)}))
        took = time.perf_counter() - started
        running = False
        await ticking
    return {
        "MB": megabytes,
        "worst_pause_ms": round(worst * 1000, 1),
        "call_s": round(took, 2),
        "success": result.success,
        "answer": result.content[:120] if not result.success else f"{len(result.content)} chars",
    }


def main() -> None:
    sizes = [float(a) for a in sys.argv[1:]] or [1, 5, 20, 50]
    for size in sizes:
        print(json.dumps(asyncio.run(measure(size))))


if __name__ == "__main__":
    main()
