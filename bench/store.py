"""Store: append N messages one by one (each awaited and committed), then load them all.

Ours (``SQLiteSessionStore``, power-loss safe ``synchronous=full`` by default) against the
OpenAI Agents SDK's ``SQLiteSession`` (WAL, SQLite's default ``synchronous=FULL``) doing the same
in the same run, on the same disk, each in a fresh file; best of two rounds in alternating
order. Requires the ``bench`` extra (``openai-agents``).

Each figure has its CPU time beside it (``*_cpu_s``, ``time.process_time()``: every thread of
the process, the SQLite worker's included): on a shared, busy host the wall time swings with
the other load and the disk, while the CPU an append costs does not.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from app import AssistantMessage, SQLiteSessionStore, UserMessage


def _text(i: int) -> str:
    return f"message {i} " + "lorem ipsum dolor sit amet " * 8


async def _ours(folder: Path, n: int, synchronous: str) -> dict[str, float]:
    store = SQLiteSessionStore(folder / f"ours-{synchronous}.sqlite", synchronous=synchronous)  # type: ignore[arg-type]
    await store.open()
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        message = UserMessage(_text(i)) if i % 2 == 0 else AssistantMessage(_text(i))
        await store.append("bench", "r", message)
    appended, appended_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    loaded = await store.load("bench")
    load, load_cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(loaded) == n
    await store.close()
    return {
        "append_s": appended,
        "load_s": load,
        "append_cpu_s": appended_cpu,
        "load_cpu_s": load_cpu,
    }


async def _sdk(folder: Path, n: int) -> dict[str, float]:
    from agents.memory import SQLiteSession

    session = SQLiteSession("bench", folder / "sdk.sqlite")
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        item: Any = {"role": role, "content": _text(i)}
        await session.add_items([item])
    appended, appended_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    loaded = await session.get_items()
    load, load_cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(loaded) == n
    session.close()
    return {
        "append_s": appended,
        "load_s": load,
        "append_cpu_s": appended_cpu,
        "load_cpu_s": load_cpu,
    }


async def measure(n: int = 10_000, rounds: int = 2) -> dict[str, Any]:
    """Best of ``rounds`` for each contender; the order alternates between rounds so neither
    side always runs on a fresh (or a busier) disk."""
    order = ["openai_agents_sqlite_session", "continuum_full", "continuum_normal"]
    runs: dict[str, list[dict[str, float]]] = {key: [] for key in order}
    sdk_missing = False
    for number in range(rounds):
        for key in order if number % 2 == 0 else list(reversed(order)):
            with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
                folder = Path(tmp)
                if key == "openai_agents_sqlite_session":
                    try:
                        runs[key].append(await _sdk(folder, n))
                    except ImportError:
                        sdk_missing = True
                else:
                    runs[key].append(await _ours(folder, n, key.rsplit("_", 1)[1]))
    results: dict[str, Any] = {"messages": n, "rounds": rounds}
    for key, samples in runs.items():
        results[key] = (
            {
                "append_s": min(s["append_s"] for s in samples),
                "load_s": min(s["load_s"] for s in samples),
                "append_cpu_s": min(s["append_cpu_s"] for s in samples),
                "load_cpu_s": min(s["load_cpu_s"] for s in samples),
                "append_runs_s": [s["append_s"] for s in samples],
                "load_runs_s": [s["load_s"] for s in samples],
            }
            if samples
            else None
        )
    reference = None if sdk_missing else results["openai_agents_sqlite_session"]
    if reference:
        for key in ("continuum_full", "continuum_normal"):
            row = results[key]
            row["append_ratio"] = row["append_s"] / reference["append_s"]
            row["load_ratio"] = row["load_s"] / reference["load_s"]
            row["append_cpu_ratio"] = row["append_cpu_s"] / reference["append_cpu_s"]
            row["load_cpu_ratio"] = row["load_cpu_s"] / reference["load_cpu_s"]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args()
    results = asyncio.run(measure(args.messages))
    print(results)


if __name__ == "__main__":
    main()
