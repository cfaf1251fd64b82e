"""Store: append N messages one by one (each awaited and committed), then load them all.

Ours (``SQLiteSessionStore``, power-loss safe ``synchronous=full`` by default) against the
OpenAI Agents SDK's ``SQLiteSession`` (WAL, SQLite's default ``synchronous=FULL``) doing the same
in the same run, on the same disk, each in a fresh file, taking turns a block of appends at a
time (:func:`measure`). Requires the ``bench`` extra (``openai-agents``).

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


BLOCK = 100  # appends of one contender before the next takes its turn


class _Contender:
    """One store under test: its appends and its load, timed (wall and CPU) as they run."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.append_s = self.append_cpu_s = 0.0
        self.loads: list[tuple[float, float]] = []

    async def open(self, folder: Path) -> None:
        raise NotImplementedError

    async def add(self, i: int) -> None:
        raise NotImplementedError

    async def count(self) -> int:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def append_block(self, first: int, n: int) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(first, first + n):
            await self.add(i)
        self.append_s += time.perf_counter() - started
        self.append_cpu_s += time.process_time() - cpu

    async def timed_load(self, n: int) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        loaded = await self.count()
        self.loads.append((time.perf_counter() - started, time.process_time() - cpu))
        assert loaded == n, (self.name, loaded, n)


class _Ours(_Contender):
    def __init__(self, synchronous: str) -> None:
        super().__init__(f"continuum_{synchronous}")
        self.synchronous = synchronous

    async def open(self, folder: Path) -> None:
        path = folder / f"{self.name}.sqlite"
        self.store = SQLiteSessionStore(path, synchronous=self.synchronous)  # type: ignore[arg-type]
        await self.store.open()

    async def add(self, i: int) -> None:
        message = UserMessage(_text(i)) if i % 2 == 0 else AssistantMessage(_text(i))
        await self.store.append("bench", "r", message)

    async def count(self) -> int:
        return len(await self.store.load("bench"))

    async def close(self) -> None:
        await self.store.close()


class _Sdk(_Contender):
    def __init__(self) -> None:
        super().__init__("openai_agents_sqlite_session")

    async def open(self, folder: Path) -> None:
        from agents.memory import SQLiteSession

        self.session = SQLiteSession("bench", folder / "sdk.sqlite")

    async def add(self, i: int) -> None:
        item: Any = {"role": "user" if i % 2 == 0 else "assistant", "content": _text(i)}
        await self.session.add_items([item])

    async def count(self) -> int:
        return len(await self.session.get_items())

    async def close(self) -> None:
        self.session.close()


async def measure(n: int = 10_000, loads: int = 3) -> dict[str, Any]:
    """Interleaved: the contenders take turns appending ``BLOCK`` messages each (the order
    rotating), so a slow spell of the shared disk (fsync times here vary 3× between runs)
    falls on all of them alike; their appends are summed. Then each loads its ``n`` messages
    ``loads`` times, in turn; the best counts."""
    contenders: list[_Contender] = [_Ours("full"), _Ours("normal")]
    sdk: _Sdk | None = _Sdk()
    try:
        import agents.memory  # noqa: F401
    except ImportError:
        sdk = None
    if sdk is not None:
        contenders.insert(0, sdk)
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        for contender in contenders:
            await contender.open(Path(tmp))
        for block, first in enumerate(range(0, n, BLOCK)):
            shift = block % len(contenders)
            for contender in contenders[shift:] + contenders[:shift]:
                await contender.append_block(first, min(BLOCK, n - first))
        for _round in range(loads):
            for contender in contenders:
                await contender.timed_load(n)
        for contender in contenders:
            await contender.close()
    results: dict[str, Any] = {"messages": n, "block": BLOCK, "interleaved": True}
    for contender in contenders:
        best = min(contender.loads)
        results[contender.name] = {
            "append_s": contender.append_s,
            "append_cpu_s": contender.append_cpu_s,
            "load_s": best[0],
            "load_cpu_s": best[1],
            "load_runs_s": [wall for wall, _cpu in contender.loads],
        }
    results.setdefault("openai_agents_sqlite_session", None)
    reference = results["openai_agents_sqlite_session"]
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
