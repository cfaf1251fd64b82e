"""``resume_point()`` cost against history length: it must stay flat (it reads only the tail).

Builds sessions of 100, 1,000 and 100,000 messages in one SQLite file (batched inserts through
the store), then times ``Agent.resume_point()`` on each: the median of many calls, and the
ratio against the 100-message session measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from app import (
    Agent,
    AgentRunConfig,
    AssistantMessage,
    SQLiteSessionExtension,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from app.testing import ScriptedModel

SIZES = (100, 1_000, 100_000)


def _conversation(n: int) -> list[Any]:
    messages: list[Any] = []
    i = 0
    while len(messages) < n - 2:
        messages.append(UserMessage(f"question {i} " + "lorem ipsum " * 20))
        messages.append(AssistantMessage(f"answer {i} " + "dolor sit amet " * 40))
        i += 1
    # End mid-tool so the decision has to read back past a result (RECOVER_TOOLS).
    calls = (ToolCall("a", "lookup", {"q": 1}), ToolCall("b", "lookup", {"q": 2}))
    messages.append(AssistantMessage(tool_calls=calls))
    messages.append(ToolMessage("a", "lookup", "ok"))
    return messages[:n] if len(messages) > n else messages


async def measure(repeats: int = 200) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        ext = SQLiteSessionExtension(Path(tmp) / "bench.sqlite", synchronous="normal")
        store = ext.storage
        for size in SIZES:
            messages = _conversation(size)
            for start in range(0, len(messages), 5_000):
                await store.append_many(f"s{size}", "bench", messages[start : start + 5_000])
        results: dict[str, Any] = {}
        for size in SIZES:
            agent = await Agent.create(
                ScriptedModel(), AgentRunConfig(f"s{size}"), extensions=[ext]
            )
            await agent.resume_point()  # warm the page cache like a user reopening the app
            samples = []
            for _ in range(repeats):
                started = time.perf_counter()
                point = await agent.resume_point()
                samples.append(time.perf_counter() - started)
            assert point is not None and point.kind.value == "recover_tools"
            results[str(size)] = {
                "median_ms": statistics.median(samples) * 1000,
                "p95_ms": sorted(samples)[int(len(samples) * 0.95)] * 1000,
            }
        base = results[str(SIZES[0])]["median_ms"]
        for size in SIZES:
            results[str(size)]["ratio_vs_100"] = results[str(size)]["median_ms"] / base
        await store.close()
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    results = asyncio.run(measure(args.repeats))
    print(f"{'messages':>10} {'median ms':>10} {'p95 ms':>8} {'ratio':>6}")
    for size, row in results.items():
        print(
            f"{size:>10} {row['median_ms']:>10.3f} {row['p95_ms']:>8.3f} "
            f"{row['ratio_vs_100']:>6.2f}"
        )


if __name__ == "__main__":
    main()
